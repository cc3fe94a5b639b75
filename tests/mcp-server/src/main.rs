//! The MCP server the tests start (`tests/mcp/harness.rs` builds and finds it): rmcp's
//! server side over stdio, streamable HTTP, or the 2024-11-05 HTTP+SSE transport that
//! rmcp no longer serves (written here, as miniagent's client speaks it too).
//!
//! Everything a test varies is on the command line, so `/proc/<pid>/cmdline` tells the
//! servers of parallel tests apart:
//!
//! - `--transport stdio|http|sse`: over HTTP it listens on a free port of 127.0.0.1 and
//!   prints `listening on <url>` as its first line of standard output.
//! - `--name NAME`: the name it gives in `initialize`.
//! - `--stderr-line TEXT`: a line it writes on stderr as it starts (what miniagent's
//!   server log keeps; it is silent otherwise, as a failure's reason quotes stderr).
//! - `--init-delay-ms N`, `--init-never`, `--init-after-file PATH`: when `initialize` is
//!   answered (after N ms, never, or once PATH exists).
//! - `--tools-file PATH`: serve the tools in that JSON array instead, 2,000 to a page;
//!   a call answers `<name> answered`.
//! - `--endless endless|cursors|loop`: a tool list without end (a new page with a
//!   100 KB tool each time; empty pages with a new 1 MB cursor; or the same cursor again).
//! - `--child`: start a `sleep` child first, so the server's process group holds more
//!   than its leader, as a server started through `npx` does.

mod handler;
mod http;

use std::path::PathBuf;
use std::process::ExitCode;

use rmcp::ServiceExt;

pub use handler::TestServer;

/// How to answer `initialize`.
#[derive(Clone, Debug)]
pub enum InitGate {
    Now,
    AfterMs(u64),
    Never,
    AfterFile(PathBuf),
}

/// Which tools to list.
#[derive(Clone, Debug)]
pub enum Listing {
    /// The built-in tools of [`handler`].
    Builtin,
    /// The tools of a JSON file, in pages.
    File(PathBuf),
    /// A list that never ends, in the named way.
    Endless(String),
}

#[derive(Clone, Debug)]
pub struct Options {
    transport: String,
    pub name: String,
    pub init: InitGate,
    pub listing: Listing,
    child: bool,
    stderr_line: Option<String>,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options = Options {
        transport: "stdio".into(),
        name: "test".into(),
        init: InitGate::Now,
        listing: Listing::Builtin,
        child: false,
        stderr_line: None,
    };
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--transport" => options.transport = value()?,
            "--name" => options.name = value()?,
            "--init-delay-ms" => {
                let ms = value()?;
                options.init = InitGate::AfterMs(ms.parse().map_err(|_| format!("bad delay {ms}"))?);
            }
            "--init-never" => options.init = InitGate::Never,
            "--init-after-file" => options.init = InitGate::AfterFile(value()?.into()),
            "--tools-file" => options.listing = Listing::File(value()?.into()),
            "--endless" => options.listing = Listing::Endless(value()?),
            "--child" => options.child = true,
            "--stderr-line" => options.stderr_line = Some(value()?),
            // A tag only: it makes this server's command line unique to its test.
            "--tag" => drop(value()?),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(options)
}

#[tokio::main]
async fn main() -> ExitCode {
    let options = match parse(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(problem) => {
            eprintln!("miniagent-mcp-test-server: {problem}");
            return ExitCode::from(2);
        }
    };
    // Kept alive as long as the server: its group is the server's.
    let _child = options.child.then(|| {
        tokio::process::Command::new("sleep")
            .arg("3600")
            .kill_on_drop(true)
            .spawn()
    });
    if let Some(line) = &options.stderr_line {
        eprintln!("{line}");
    }
    let served = match options.transport.as_str() {
        "stdio" => serve_stdio(options).await,
        "http" => http::serve_streamable(options).await,
        "sse" => http::serve_legacy_sse(options).await,
        other => Err(format!("unknown transport {other}")),
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(problem) => {
            eprintln!("miniagent-mcp-test-server: {problem}");
            ExitCode::FAILURE
        }
    }
}

async fn serve_stdio(options: Options) -> Result<(), String> {
    let running = TestServer::new(options)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|err| format!("initialize failed: {err}"))?;
    running.waiting().await.map(drop).map_err(|err| err.to_string())
}
