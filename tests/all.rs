//! Every top-level test in one binary (one link instead of thirty-odd: linking each test
//! binary against the whole workspace dominated a CI run on two cores). Each module is
//! the file of the same name beside this one, with its own folder of submodules; the
//! shared helpers are `support` (the scripted model server, the CLI runner, the in-process
//! agent). The workbench's own tests (its `App` under keys and events, and its snapshots)
//! are in `crates/tui/src/tests/`.
//!
//! Run one file's tests with a filter: `cargo test --test all sessions::`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

mod support;

#[path = "mcp/harness.rs"]
mod mcp_harness;

mod acp;
mod agent_ops;
#[path = "bad_input/main.rs"]
mod bad_input;
mod caching;
mod checkpoints;
mod cli_words;
mod compaction;
mod delegate;
mod demo;
mod exec_cli;
mod faces_api;
mod faults;
mod file_confinement;
#[path = "fuzz/main.rs"]
mod fuzz;
mod git_config;
mod git_reach;
mod git_writes;
mod history_integrity;
mod hooks;
mod hostile_provider;
mod interrupt;
mod large_results;
mod layers;
mod mcp;
mod mcp_agent;
mod mcp_config;
mod mcp_faults;
mod mcp_interop;
mod mcp_limits;
mod mentions;
mod model_switch;
mod own_folders;
mod permissions;
mod project_context;
mod provider_keys;
mod providers;
mod rewind;
mod sandbox;
mod sandbox_escapes;
mod sandbox_kernel;
mod scripted_server;
mod serve;
mod sessions;
mod sessions_cli;
mod skills;
mod skills_agent;
mod soak;
mod terminal_output;
mod tmux_workbench;
mod tool_faults;
mod tools;
mod trust_and_resume;
mod web_fetch;
