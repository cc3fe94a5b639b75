//! The workbench: a full-screen terminal front end on the agent's event stream.
//!
//! One [`app::App`] holds the state; agent events and keys change it; [`render::draw`]
//! draws it. Nothing here reaches into the agent: it sends `Op`s and reads `Event`s.

pub mod app;
pub(crate) mod bindings;
pub(crate) mod clipboard;
pub(crate) mod command;
pub(crate) mod commands;
pub(crate) mod control;
pub(crate) mod conversation;
pub(crate) mod editor;
pub(crate) mod extensions;
pub(crate) mod help;
pub(crate) mod input;
pub(crate) mod key_burst;
pub(crate) mod keys;
pub(crate) mod layer;
pub(crate) mod layers;
pub(crate) mod layout;
pub(crate) mod mention;
pub(crate) mod notify;
mod output_buffer;
pub(crate) mod overlay_view;
mod pacing;
pub(crate) mod palette;
pub(crate) mod panes;
pub(crate) mod plan;
pub(crate) mod popup;
pub(crate) mod question;
pub mod render;
pub(crate) mod replay;
pub mod run;
pub(crate) mod scroll;
pub(crate) mod search;
mod term_input;
pub(crate) mod terminal;
pub mod text;
pub mod theme;
pub(crate) mod thinking;
pub(crate) mod timeline;
pub(crate) mod tree;

#[cfg(test)]
mod tests;
pub use run::{WorkbenchOptions, replay, run};
pub use terminal::{NoTerminal, check as check_terminal};
