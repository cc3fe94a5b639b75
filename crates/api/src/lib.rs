//! The only door from a front end into the core. Front ends depend on this crate and on
//! `miniagent-protocol`, never on `miniagent-core`: Rust does not let a crate name a
//! dependency's dependency, so a front end that reaches for an agent, a tool or a
//! session file directly fails to compile. What a front end may do is what
//! `miniagent_core::api` exports: start a session from options (or open a recording)
//! and get a handle that takes `Op`s and gives `Event`s (`start_with` adds a client's
//! MCP servers, a recorded session to continue, or the client's files, `ClientFiles`); find the session to resume;
//! list, show, export and remove recorded sessions (`SessionStore`, `SessionLog`); keep
//! standard output for a protocol (`claim_stdout`); admit a remote client's session and
//! check its token (`ServeSettings`, `serve_token`); find
//! a model server on this machine; and start the process the way miniagent must
//! (`harden_process`, `supervise_if_asked`). The binary (`src/`) is a face like the
//! workbench and uses this door too.

pub use miniagent_core::api::*;
