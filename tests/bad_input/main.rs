//! Bad input is refused with a clear message and the state stays intact: one test per
//! kind of input.
//!
//! - Tool arguments go through the agent against the scripted model server; each
//!   assertion is on the result the model received in the next recorded request, a call
//!   made after the bad ones must still work, and nothing outside the workspace may change
//!   ([`tool_arguments`]).
//! - Configuration goes through the binary (`miniagent exec -c FILE`): exit code 1 and one
//!   line naming the file and the key ([`config`]).
//! - The terminal (keys, pastes, the mouse, sizes) goes through the workbench's `App`,
//!   in the workbench's own tests (`crates/tui/src/tests/bad_input.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

mod config;
mod tool_arguments;
