//! What the person does to the workbench: keys, pastes, the mouse and slash commands
//! routed to the approval, the overlay stack, the key tables and the panes (`keys.rs`);
//! opening overlays (`overlays.rs`); resuming another session (`resume.rs`); and building
//! the app (`new.rs`). These are `impl App` blocks kept out of `app/`, which holds the
//! state and applies the agent's events: the app's module imports none of the tables or
//! layers that act on it, so the layering has no cycle (`tests/layers.rs`).

mod keys;
mod new;
mod overlays;
mod resume;

pub use keys::DENY_REASON_HINTS;
