//! Test support shared by the integration tests (`mod support;`).
//!
//! [`ScriptedServer`] is a real HTTP/1.1 server on 127.0.0.1 that speaks the
//! streaming formats of the Anthropic Messages API (`POST /v1/messages`) and
//! the OpenAI Chat Completions API (`POST /v1/chat/completions`), answers each
//! model request with the next [`Reply`] of its script, can inject faults,
//! and records every request. It depends on nothing from `src/`.
//!
//! ```ignore
//! mod support;
//! use support::*;
//!
//! let server = ScriptedServer::start(vec![
//!     Reply::Stream(Turn::tool("call_1", "bash", r#"{"command":"ls"}"#)),
//!     Reply::Stream(Turn::new().thinking("hmm", "sig").text("done").usage(10, 3)),
//! ]).await;
//! // ... point the client at server.anthropic_base_url() ...
//! assert_eq!(server.requests()[0].body["model"], "claude-x");
//! ```
#![allow(dead_code, unused_imports)]

pub mod http;
pub mod script;
pub mod server;
pub mod skip;
pub mod tempdir;
pub mod wire;

pub use script::{Block, ReasoningStyle, Reply, Stop, Turn, TurnExt, counting_turn};
pub use server::{RecordedRequest, ScriptedServer};
pub use tempdir::TempDir;
pub use wire::Format;

pub mod billing;
pub mod cli;
pub mod harness;
pub mod validate;

/// A local port nothing listens on (one just bound and let go): a provider or server
/// that cannot be reached.
pub fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("a local port")
        .local_addr()
        .expect("its address")
        .port()
}
