//! What a slash command is: its names, how the help writes it, and what it runs. The
//! table of them is `commands::COMMANDS`; an overlay's own command is defined in its file
//! under `layers/` with this type and registered there with one line.

use super::app::App;

/// A command typed as `/name args`.
#[derive(Clone, Copy, Debug)]
pub struct Command {
    /// With its slash, e.g. `/help`.
    pub name: &'static str,
    /// Other names it answers to (not completed or listed).
    pub aliases: &'static [&'static str],
    /// How its argument is written in the help, e.g. `MODE`; empty when it takes none.
    pub args: &'static str,
    pub help: &'static str,
    /// Runs it with its first argument, if one was typed.
    pub run: fn(&mut App, Option<&str>),
}
