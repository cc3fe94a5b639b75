//! miniagent: a terminal workbench for an LLM agent that reads and edits files, runs
//! commands and keeps going on long tasks.
//!
//! The binary's library: the command-line faces (`exec`, `sessions`). Like every face it
//! reaches the core only through `miniagent_api` (start a session, open a recording or a
//! session log) and speaks `miniagent_protocol`: `Op`s in, `Event`s out.

pub mod exec;
pub mod session_cli;
