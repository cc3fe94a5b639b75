//! The `mcp.json` parser: both transports and their defaults, one-line problems naming
//! the file and the server, relative folders, `${workspace}`, and the example config.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use crate::support::tempdir;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use miniagent_core::tools::mcp::{
    HttpKind, McpApproval, McpConfig, McpServerConfig, McpTransport, load_config, parse_config,
};
use pretty_assertions::assert_eq;
use serde_json::json;
use tempdir::TempDir;

#[test]
fn config_reads_both_transports_with_defaults() {
    let text = r#"{"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "pkg", "."], "env": {"TOKEN": "t"}, "cwd": "/srv"},
        "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"},
                   "approval": "auto", "tool_approval": {"delete": "ask"},
                   "connect_timeout": 2.5, "execute_timeout": 300},
        "legacy": {"url": "http://localhost:3001/sse", "type": "sse", "disabled": true,
                   "sse_read_timeout": 120},
        "plain": {"type": "stdio", "command": "server"}
    }}"#;
    let stdio = |command: &str, args: &[&str], env: &[(&str, &str)], cwd: Option<&str>| McpTransport::Stdio {
        command: command.into(),
        args: args.iter().map(|arg| arg.to_string()).collect(),
        env: env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        cwd: cwd.map(PathBuf::from),
    };
    let server = |name: &str, transport: McpTransport| McpServerConfig {
        name: name.into(),
        transport,
        disabled: false,
        connect_timeout: Duration::from_secs(10),
        execute_timeout: Duration::from_secs(60),
        approval: McpApproval::Ask,
        tool_approval: HashMap::new(),
    };
    let config = parse_config(text, "mcp.json").unwrap();
    assert_eq!(
        config,
        McpConfig {
            servers: vec![
                server(
                    "files",
                    stdio("npx", &["-y", "pkg", "."], &[("TOKEN", "t")], Some("/srv"))
                ),
                McpServerConfig {
                    disabled: true,
                    ..server(
                        "legacy",
                        McpTransport::Http {
                            url: "http://localhost:3001/sse".into(),
                            headers: BTreeMap::new(),
                            kind: HttpKind::Sse,
                        },
                    )
                },
                server("plain", stdio("server", &[], &[], None)),
                McpServerConfig {
                    connect_timeout: Duration::from_millis(2500),
                    execute_timeout: Duration::from_secs(300),
                    approval: McpApproval::Auto,
                    tool_approval: HashMap::from([("delete".to_string(), McpApproval::Ask)]),
                    ..server(
                        "remote",
                        McpTransport::Http {
                            url: "https://example.com/mcp".into(),
                            headers: BTreeMap::from([("Authorization".to_string(), "Bearer x".to_string())]),
                            kind: HttpKind::StreamableHttp,
                        },
                    )
                },
            ],
            ..McpConfig::default()
        }
    );
    let remote = &config.servers[3];
    assert_eq!(remote.approval_for("delete"), McpApproval::Ask);
    assert_eq!(remote.approval_for("search"), McpApproval::Auto);
    assert_eq!(
        parse_config(r#"{"mcpServers": {}}"#, "mcp.json").unwrap(),
        McpConfig::default()
    );
}

#[test]
fn config_problems_are_one_line_naming_file_and_server() {
    let cases = [
        (
            r#"{"mcpServers": {"#,
            "m.json: invalid JSON: EOF while parsing an object at line 1 column 16",
        ),
        (r#"[]"#, "m.json: expected a JSON object with `mcpServers`"),
        (r#"{"servers": {}}"#, "m.json: `mcpServers` is missing"),
        (
            r#"{"mcpServers": []}"#,
            "m.json: `mcpServers` must be an object of servers, got an array",
        ),
        (
            r#"{"mcpServers": {"x": "npx"}}"#,
            "m.json: server `x`: expected an object, got a string",
        ),
        (
            r#"{"mcpServers": {"x": {"command": "a", "args": "b c"}}}"#,
            "m.json: server `x`: `args` must be an array of strings, got a string",
        ),
        (
            r#"{"mcpServers": {"x": {"command": 5}}}"#,
            "m.json: server `x`: `command` must be a string, got a number",
        ),
        (
            r#"{"mcpServers": {"x": {"command": "a", "env": {"K": 1}}}}"#,
            "m.json: server `x`: `env.K` must be a string, got a number",
        ),
        (
            r#"{"mcpServers": {"x": {"command": "a", "disabled": "yes"}}}"#,
            "m.json: server `x`: `disabled` must be true or false, got a string",
        ),
        (
            r#"{"mcpServers": {"x": {"command": "a", "connect_timeout": -1}}}"#,
            "m.json: server `x`: `connect_timeout` must be between 0 and 86400 seconds, got -1",
        ),
        (
            r#"{"mcpServers": {"x": {"command": "a", "approval": "sometimes"}}}"#,
            "m.json: server `x`: `approval` must be \"auto\" or \"ask\", got \"sometimes\"",
        ),
        (
            r#"{"mcpServers": {"x": {"command": "a", "tool_approval": {"t": true}}}}"#,
            "m.json: server `x`: `tool_approval.t` must be \"auto\" or \"ask\", got true",
        ),
        (
            r#"{"mcpServers": {"x": {}}}"#,
            "m.json: server `x`: needs `command` (a program to start) or `url` (a server to reach)",
        ),
        (
            r#"{"mcpServers": {"x": {"command": "a", "url": "http://h"}}}"#,
            "m.json: server `x`: has both `command` and `url`; a server is one or the other",
        ),
        (
            r#"{"mcpServers": {"x": {"url": "ftp://h/mcp"}}}"#,
            "m.json: server `x`: `url` \"ftp://h/mcp\" must start with http:// or https://",
        ),
        (
            r#"{"mcpServers": {"x": {"url": "http://h", "type": "websocket"}}}"#,
            "m.json: server `x`: `type` \"websocket\" is not one of \"streamable_http\", \"http\", \"sse\", \"stdio\"",
        ),
        (
            r#"{"mcpServers": {"x": {"url": "http://h", "headers": {"Accept": "x"}}}}"#,
            "m.json: server `x`: `headers`: \"Accept\" is set by the transport and cannot be configured",
        ),
        (
            r#"{"mcpServers": {"x": {"url": "http://h", "args": []}}}"#,
            "m.json: server `x`: `args` only applies to servers with a `command`",
        ),
        (
            r#"{"mcpServers": {"x": {"command": "a", "disable": true}}}"#,
            "m.json: server `x`: unknown key `disable` (known: command, args, env, cwd, url, headers, type, \
             disabled, connect_timeout, execute_timeout, sse_read_timeout, approval, tool_approval)",
        ),
    ];
    for (text, expected) in cases {
        let error = parse_config(text, "m.json").unwrap_err().to_string();
        assert_eq!(error, expected, "for {text}");
        assert!(!error.contains('\n'), "{error}");
    }
}

#[test]
fn load_config_resolves_relative_folders_and_names_the_file() {
    let dir = TempDir::new();
    let path = dir.write(
        "conf/mcp.json",
        r#"{"mcpServers": {"s": {"command": "server", "cwd": "work"}, "t": {"command": "x", "cwd": "/abs"}}}"#,
    );
    let config = load_config(&path).unwrap();
    let cwds: Vec<Option<PathBuf>> = config
        .servers
        .iter()
        .map(|server| match &server.transport {
            McpTransport::Stdio { cwd, .. } => cwd.clone(),
            McpTransport::Http { .. } => None,
        })
        .collect();
    assert_eq!(
        cwds,
        vec![Some(dir.join("conf/work")), Some(PathBuf::from("/abs"))]
    );
    let missing = dir.join("nope.json");
    assert_eq!(
        load_config(&missing).unwrap_err().to_string(),
        format!(
            "{}: cannot read: No such file or directory (os error 2)",
            missing.display()
        )
    );
}

/// `${workspace}` in `args`, `env` and `cwd` is the workspace's path (a relative `cwd`
/// that starts with it is not taken from the file's folder); a server with no `cwd`
/// starts in the folder given (the neutral one for the user's servers); the filled-in
/// path is no credential, a long token beside it still is.
#[test]
fn workspace_is_filled_in_and_servers_without_a_cwd_get_the_default_folder() {
    let dir = TempDir::new();
    let path = dir.write(
        "conf/mcp.json",
        json!({"mcpServers": {
            "a": {"command": "srv", "args": ["--root", "${workspace}", "x=${workspace}/src"],
                  "env": {"ROOT": "${workspace}", "TOKEN_ISH": "0123456789abcdefghijklmnop",
                          "WRITTEN_OUT": "/home/me/projects/a long repository name"},
                  "cwd": "${workspace}/sub"},
            "b": {"command": "srv", "args": ["$workspace", "{workspace}"]},
            "c": {"command": "srv", "cwd": "work"},
            "h": {"url": "https://example.com/${workspace}"},
        }})
        .to_string(),
    );
    let workspace = Path::new("/home/me/projects/a long repository name");
    let config = load_config(&path)
        .unwrap()
        .for_workspace(workspace, Path::new(miniagent_core::tools::mcp::NEUTRAL_FOLDER));
    let stdio = |args: &[&str], env: &[(&str, &str)], cwd: PathBuf| McpTransport::Stdio {
        command: "srv".to_string(),
        args: args.iter().map(|arg| arg.to_string()).collect(),
        env: env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        cwd: Some(cwd),
    };
    let transports: Vec<McpTransport> = config
        .servers
        .iter()
        .map(|server| server.transport.clone())
        .collect();
    let root = "/home/me/projects/a long repository name";
    assert_eq!(
        transports,
        vec![
            stdio(
                &["--root", root, &format!("x={root}/src")],
                &[
                    ("ROOT", root),
                    ("TOKEN_ISH", "0123456789abcdefghijklmnop"),
                    ("WRITTEN_OUT", root),
                ],
                PathBuf::from(format!("{root}/sub")),
            ),
            stdio(&["$workspace", "{workspace}"], &[], PathBuf::from("/")),
            stdio(&[], &[], dir.join("conf/work")),
            McpTransport::Http {
                url: "https://example.com/${workspace}".to_string(),
                headers: BTreeMap::new(),
                kind: HttpKind::StreamableHttp,
            },
        ]
    );
    assert_eq!(config.workspace.as_deref(), Some(workspace));
    // Only the value `${workspace}` was put in is known not to be a key.
    assert_eq!(
        config.secret_values(),
        vec!["0123456789abcdefghijklmnop".to_string(), root.to_string()]
    );
}

#[test]
fn the_example_config_parses() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/mcp.json");
    let config = load_config(&path).unwrap();
    assert!(!config.servers.is_empty());
}
