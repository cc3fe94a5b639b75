//! What the faces that speak to another program (an editor over ACP, a client of the HTTP
//! API) need beyond the workbench's and `exec`'s start: the client's own MCP servers, a
//! recorded session to continue, and a standard output kept for the protocol alone.

use std::fs::File;
use std::os::fd::{FromRawFd, RawFd};
use std::sync::Arc;

use miniagent_protocol::Op;
use serde_json::{Map, Value, json};

use super::{Env, Handle, RecordedSession, StartOptions};
use crate::tools::client_files::ClientFiles;
use crate::tools::mcp;
use crate::{agent, startup};

/// An MCP server the client asks the session to use (ACP's `mcpServers`). It is started
/// as one of the user's own servers: outside the workspace, with approval `ask`, the
/// default time limits, and its environment and header values kept out of logs like
/// configured credentials.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum McpServerSpec {
    /// A program speaking MCP on its standard input and output.
    Stdio {
        name: String,
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
    },
    /// A server reached over streamable HTTP.
    Http {
        name: String,
        url: String,
        headers: Vec<(String, String)>,
    },
    /// A server reached over the older HTTP+SSE transport.
    Sse {
        name: String,
        url: String,
        headers: Vec<(String, String)>,
    },
}

impl McpServerSpec {
    /// The name the client gave it (its tools are `mcp__NAME__…`).
    pub fn name(&self) -> &str {
        match self {
            McpServerSpec::Stdio { name, .. }
            | McpServerSpec::Http { name, .. }
            | McpServerSpec::Sse { name, .. } => name,
        }
    }

    /// The entry an `mcp.json` would hold for it, read by the same parser, so a client's
    /// server passes the checks a configured one does (a header HTTP refuses, an empty
    /// command).
    fn to_config(&self) -> Result<mcp::McpServerConfig, mcp::McpConfigError> {
        let pairs = |pairs: &[(String, String)]| {
            Value::Object(
                pairs
                    .iter()
                    .map(|(name, value)| (name.clone(), Value::String(value.clone())))
                    .collect::<Map<String, Value>>(),
            )
        };
        let entry = match self {
            McpServerSpec::Stdio {
                command, args, env, ..
            } => json!({"type": "stdio", "command": command, "args": args, "env": pairs(env)}),
            McpServerSpec::Http { url, headers, .. } => {
                json!({"type": "streamable_http", "url": url, "headers": pairs(headers)})
            }
            McpServerSpec::Sse { url, headers, .. } => {
                json!({"type": "sse", "url": url, "headers": pairs(headers)})
            }
        };
        let mut servers = Map::new();
        servers.insert(self.name().to_string(), entry);
        let text = json!({ "mcpServers": servers }).to_string();
        let parsed = mcp::parse_config(&text, "the client's MCP servers")?;
        parsed
            .servers
            .into_iter()
            .next()
            .ok_or_else(|| mcp::McpConfigError::Shape {
                source_name: "the client's MCP servers".to_string(),
                problem: format!("server `{}` could not be read", self.name()),
            })
    }
}

/// What a face adds to a session beyond [`StartOptions`]. More may come, so it is built
/// from [`FaceExtras::default`].
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct FaceExtras {
    /// The client's MCP servers, started beside the configured ones.
    pub mcp_servers: Vec<McpServerSpec>,
    /// A recorded session the new one continues from its start.
    pub resume: Option<RecordedSession>,
    /// The client's view of files (an editor's buffers): the file tools read and write
    /// the workspace's files through it, after their own checks; `None`: the disk.
    pub client_files: Option<Arc<dyn ClientFiles>>,
}

impl FaceExtras {
    /// With the client's MCP servers.
    pub fn with_mcp_servers(mut self, servers: Vec<McpServerSpec>) -> Self {
        self.mcp_servers = servers;
        self
    }

    /// Continuing `session`.
    pub fn resuming(mut self, session: RecordedSession) -> Self {
        self.resume = Some(session);
        self
    }

    /// With the file tools reading and writing the workspace's files through `files`
    /// (ACP's `fs/read_text_file` and `fs/write_text_file`): unsaved buffers are read and
    /// edits land in the editor. Paths are still confined to the workspace, and
    /// miniagent's own folders, `bash` and the notes file stay on the disk.
    pub fn with_client_files(mut self, files: Arc<dyn ClientFiles>) -> Self {
        self.client_files = Some(files);
        self
    }
}

/// Starts a session for a face with nobody to answer the trust question (as `exec`): the
/// workspace's `.miniagent/` is used only if it is trusted already or `options` says to
/// trust it, and a start-up notice says when it was left out. The client's MCP servers
/// join the user's (a client server named like a configured one, or that the
/// configuration's rules refuse, is left out with a notice). With `extras.resume`, the
/// session first takes up that recorded session (as `--resume` does: its history comes
/// back as `HistoryRestored`, then `SessionResumed`), in the workspace `options` names;
/// one that cannot be continued is an `Event::Error` saying why, and the session stays
/// a new one. Ops sent meanwhile wait for the resume. Call it inside the runtime
/// ([`super::block_on`]).
pub fn start_with(options: &StartOptions, extras: FaceExtras, env: &Env) -> anyhow::Result<Handle> {
    let mut servers = Vec::new();
    let mut notices = Vec::new();
    for spec in &extras.mcp_servers {
        if servers
            .iter()
            .any(|server: &mcp::McpServerConfig| server.name == spec.name())
        {
            notices.push(format!(
                "the client's MCP server `{}` is named twice; the first is used",
                spec.name()
            ));
            continue;
        }
        match spec.to_config() {
            Ok(server) => servers.push(server),
            Err(why) => notices.push(format!("an MCP server the client named is not used: {why}")),
        }
    }
    let mut prepared = startup::prepare_with(options, &servers, env)?;
    prepared.startup_notices.extend(notices);
    prepared.client_files = extras.client_files;
    let handle = agent::spawn(prepared);
    if let Some(session) = extras.resume {
        // The agent takes ops in order: anything the face sends next waits for this.
        let _ = handle.ops.send(Op::Resume {
            path: session.log().to_path_buf(),
        });
    }
    Ok(handle)
}

/// Keeps standard output for the protocol: returns a duplicate of it (closed in every
/// program started later) for the face's own messages, and points descriptor 1 at
/// standard error, so that nothing else in the process (a stray print, a library's
/// warning, a child that inherits it) can put a byte into the JSON-RPC stream.
pub fn claim_stdout() -> std::io::Result<File> {
    use std::io::Write;
    // What was buffered before the claim goes out now, not into the protocol later.
    let _ = std::io::stdout().flush();
    claim(libc::STDOUT_FILENO, libc::STDERR_FILENO)
}

/// Duplicates `out` (close-on-exec) and makes `out` a copy of `err`.
fn claim(out: RawFd, err: RawFd) -> std::io::Result<File> {
    // SAFETY: fcntl reads the descriptor number only; it fails cleanly on a closed one.
    let kept = unsafe { libc::fcntl(out, libc::F_DUPFD_CLOEXEC, 3) };
    if kept < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `kept` was just made by fcntl and nothing else owns it.
    let protocol = unsafe { File::from_raw_fd(kept) };
    // SAFETY: dup2 on two descriptor numbers; `out` is replaced atomically.
    if unsafe { libc::dup2(err, out) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(protocol)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    fn pipe() -> (File, File) {
        let mut fds = [0; 2];
        // SAFETY: pipe2 writes two new descriptors into the array.
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        // SAFETY: both descriptors are new and owned here alone.
        unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) }
    }

    /// After the claim, what is written to the old descriptor lands where errors go, and
    /// only the returned file reaches the protocol's pipe; that file is not inherited.
    #[test]
    fn a_claimed_output_carries_only_the_protocol() {
        use std::os::fd::AsRawFd;
        let (mut protocol_end, stdout_like) = pipe();
        let (mut error_end, stderr_like) = pipe();
        let mut protocol = claim(stdout_like.as_raw_fd(), stderr_like.as_raw_fd()).unwrap();
        // SAFETY: F_GETFD reads the flags of a descriptor this test owns.
        let flags = unsafe { libc::fcntl(protocol.as_raw_fd(), libc::F_GETFD) };
        assert_eq!(flags & libc::FD_CLOEXEC, libc::FD_CLOEXEC);
        protocol.write_all(b"{\"jsonrpc\":\"2.0\"}\n").unwrap();
        (&stdout_like).write_all(b"a stray print\n").unwrap();
        drop((protocol, stdout_like, stderr_like));
        let mut sent = String::new();
        protocol_end.read_to_string(&mut sent).unwrap();
        let mut diverted = String::new();
        error_end.read_to_string(&mut diverted).unwrap();
        assert_eq!(
            (sent.as_str(), diverted.as_str()),
            ("{\"jsonrpc\":\"2.0\"}\n", "a stray print\n")
        );
    }

    /// A client's server is read as a configured entry is: its name kept, the transport's
    /// own headers refused, as `mcp.json` refuses them.
    #[test]
    fn a_client_server_is_checked_like_a_configured_one() {
        let stdio = McpServerSpec::Stdio {
            name: "notes".into(),
            command: "notes-server".into(),
            args: vec!["--root".into(), "${workspace}".into()],
            env: vec![("NOTES_TOKEN".into(), "t0ken".into())],
        };
        let config = stdio.to_config().unwrap();
        assert_eq!(
            (config.name.as_str(), &config.transport, config.approval),
            (
                "notes",
                &mcp::McpTransport::Stdio {
                    command: "notes-server".into(),
                    args: vec!["--root".into(), "${workspace}".into()],
                    env: [("NOTES_TOKEN".to_string(), "t0ken".to_string())].into(),
                    cwd: None,
                },
                mcp::McpApproval::Ask
            )
        );
        let reserved = McpServerSpec::Http {
            name: "remote".into(),
            url: "https://example.com/mcp".into(),
            headers: vec![("Mcp-Session-Id".into(), "x".into())],
        };
        assert_eq!(
            reserved.to_config().map_err(|err| err.to_string()).err(),
            Some(
                "the client's MCP servers: server `remote`: `headers`: \"Mcp-Session-Id\" is set by the transport and cannot be configured"
                    .to_string()
            )
        );
    }
}
