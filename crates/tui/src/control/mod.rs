//! What the person does to the workbench: keys, pastes, the mouse and slash commands
//! routed to the layer stack (`layer_keys.rs`: the questions' arming, the top layer and
//! what it answers), then the key tables and the panes (`keys.rs`); the stack's door on
//! the app (`overlays.rs`); resuming another session (`resume.rs`); and building
//! the app (`new.rs`). These are `impl App` blocks kept out of `app/`, which holds the
//! state and applies the agent's events: the app's module imports none of the tables or
//! layers that act on it, so the layering has no cycle (`tests/layers.rs`).

mod keys;
mod layer_keys;
mod new;
mod overlays;
mod reading;
mod resume;

#[cfg(test)]
pub(crate) use keys::ESCAPE_AGAIN;
