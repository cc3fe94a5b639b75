//! The Agent Client Protocol face (`miniagent acp`, to be written): editors such as Zed
//! launch the agent and speak ACP's JSON-RPC with it over stdio. Like the workbench and
//! `exec`, it will only translate between ACP messages and the `Op`s and `Event`s of
//! `miniagent-protocol`, reaching the core through `miniagent-api` alone.

use agent_client_protocol::schema::ProtocolVersion;

/// The ACP version this face speaks: the current stable one, which an `initialize`
/// answer names whatever the client asked for (a client that cannot speak it hangs up).
pub fn protocol_version() -> ProtocolVersion {
    ProtocolVersion::V1
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
