//! The Agent Client Protocol face (`miniagent acp`): editors such as Zed launch the agent
//! and speak ACP's JSON-RPC with it over stdio. Like the workbench and `exec`, it only
//! translates between ACP messages and the `Op`s and `Event`s of `miniagent-protocol`,
//! reaching the core through `miniagent-api` alone.
//!
//! Standard output carries the protocol and nothing else: it is claimed at start
//! ([`miniagent_api::claim_stdout`]), so a stray print lands on standard error; the log
//! goes to `miniagent.log`.

mod connection;
mod files;
mod permission;
mod prompt;
mod session;
mod translate;
mod transport;

use agent_client_protocol::schema::ProtocolVersion;
use miniagent_api::{self as api, Env, StartOptions};

/// The ACP version this face speaks: the current stable one, which an `initialize`
/// answer names whatever the client asked for (a client that cannot speak it hangs up).
pub fn protocol_version() -> ProtocolVersion {
    ProtocolVersion::V1
}

/// Serves ACP on standard input and output until the client hangs up; sessions start
/// with `options` (the client's `cwd` as their workspace). Returns the exit code.
pub fn run(options: StartOptions, env: &Env) -> i32 {
    api::start_logging(env);
    let out = match api::claim_stdout() {
        Ok(out) => out,
        Err(err) => {
            eprintln!("miniagent acp: cannot keep standard output for the protocol: {err}");
            return 1;
        }
    };
    let env = env.clone();
    let served = api::block_on(async move {
        let (outgoing, incoming) =
            transport::stdio(out).map_err(agent_client_protocol::Error::into_internal_error)?;
        connection::serve(options, env, outgoing, incoming).await
    });
    match served {
        Ok(Ok(())) => 0,
        Ok(Err(err)) => {
            tracing::error!("the ACP connection failed: {err:?}");
            eprintln!("miniagent acp: the connection failed: {err}");
            1
        }
        Err(err) => {
            eprintln!("miniagent acp: {err}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // A test fails by panicking.
    use super::*;

    #[test]
    fn speaks_the_stable_protocol_version_one() {
        assert_eq!(protocol_version(), ProtocolVersion::LATEST);
        // On the wire, `initialize` carries it as the bare number.
        assert_eq!(serde_json::to_string(&protocol_version()).unwrap(), "1");
    }
}
