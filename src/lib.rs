//! miniagent: a terminal workbench for an LLM agent that reads and edits files, runs
//! commands and keeps going on long tasks.
//!
//! The agent ([`agent`]) and its front ends ([`exec`], the workbench) speak only through
//! [`protocol`]: `Op`s in, `Event`s out.

pub mod agent;
pub mod api;
pub mod config;
pub mod exec;
pub mod hardening;
pub mod llm;
pub mod protocol;
pub mod secrets;
pub mod session;
pub mod startup;
pub mod terminal_text;
pub mod tools;
pub mod trust;
pub mod tui;
