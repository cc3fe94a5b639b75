//! The workbench: a full-screen terminal front end on the agent's event stream.
//!
//! One [`app::App`] holds the state; agent events and keys change it; [`render::draw`]
//! draws it. Nothing here reaches into the agent: it sends `Op`s and reads `Event`s.

pub mod app;
pub mod bindings;
pub mod commands;
pub mod conversation;
pub mod extensions;
pub mod input;
pub mod keys;
pub mod layers;
pub mod layout;
mod output_buffer;
pub mod overlay;
pub mod overlay_view;
mod pacing;
pub mod palette;
pub mod popup;
pub mod render;
pub mod replay;
pub mod run;
pub mod scroll;
pub mod terminal;
pub mod text;
pub mod theme;
pub mod thinking;
pub mod timeline;
pub mod tree;

pub use layers::{first_run, history as inspector, sessions};
pub use run::{WorkbenchOptions, replay, run};

// The workbench was a module of one crate before the split; these keep the paths it
// used (`crate::tui::...`, `crate::protocol::...`) naming the same things. The core is
// reached only through `miniagent-api` (this crate does not depend on `miniagent-core`).
use crate as tui;
use miniagent_api as api;
use miniagent_protocol as protocol;
use miniagent_text as terminal_text;
