//! miniagent's agent: configuration, model clients, tools, the agent loop, context and
//! compaction, the session log, trust and secrets.
//!
//! Front ends talk to the agent only through `miniagent_protocol`: `Op`s in, `Event`s out.

pub mod agent;
pub mod api;
pub mod checkpoint;
pub mod commands;
pub mod config;
pub mod export;
pub mod hardening;
pub mod hooks;
pub mod instructions;
pub mod llm;
mod local_server;
pub mod playback;
pub mod secrets;
pub mod session;
pub mod startup;
pub mod tokens;
pub mod tools;
pub mod trust;
