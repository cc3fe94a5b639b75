//! `miniagent serve`: sessions driven over HTTP, their events streamed as server-sent
//! events (the same JSON as `exec --json`). A face like the workbench: it reaches the
//! core only through `miniagent-api`, and holds no agent logic, only translation between
//! HTTP and `Op`/`Event`.
//!
//! Safe by default: it listens on 127.0.0.1; every endpoint but `/health` needs the bearer
//! token; a browser's `Origin` or a `Host` that is not the server's is refused; a
//! workspace outside the configured roots is refused; a call that needs approval while no
//! client is connected is refused.

mod error;
mod guard;
mod routes;
mod session;
mod state;

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use miniagent_api::{self as api, Env, ServeSettings, StartOptions};

pub use session::NO_CLIENT;

/// What `miniagent serve` was started with.
#[derive(Clone, Debug, Default)]
pub struct ServeOptions {
    /// The agent options every session starts from (config file, provider, …).
    pub start: StartOptions,
    /// `--bind`: the only way to listen beyond this machine.
    pub bind: Option<SocketAddr>,
    /// `--root`: folders a workspace must be in, instead of `serve.roots`.
    pub roots: Vec<PathBuf>,
}

/// Why the server did not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("{0}")]
    Settings(String),
    #[error(
        "serve.bind {0} is not a loopback address: to listen beyond this machine, say so with --bind {0}"
    )]
    NotLoopback(SocketAddr),
    #[error("--root {}: {why}", .root.display())]
    Root { root: PathBuf, why: std::io::Error },
    #[error(transparent)]
    Token(#[from] api::TokenError),
    #[error("cannot listen on {addr}: {why}")]
    Bind { addr: SocketAddr, why: std::io::Error },
    #[error(transparent)]
    Runtime(#[from] api::RuntimeError),
    #[error("the server stopped: {0}")]
    Serve(std::io::Error),
}

/// Runs the server until SIGINT or SIGTERM; the first lines on stdout say where it
/// listens and, when it made one, the token (the only place the token is ever shown).
pub fn run(options: ServeOptions, env: &Env) -> Result<(), ServeError> {
    let settings = settings(&options, env)?;
    let token = api::serve_token(&settings.token_env, env)?;
    api::start_logging(env);
    api::block_on(async move {
        let listener = tokio::net::TcpListener::bind(settings.bind)
            .await
            .map_err(|why| ServeError::Bind {
                addr: settings.bind,
                why,
            })?;
        let local = listener.local_addr().map_err(ServeError::Serve)?;
        {
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "miniagent serve: listening on http://{local}");
            if token.generated() {
                let _ = writeln!(stdout, "token: {}", token.reveal());
            }
            let _ = stdout.flush();
        }
        tracing::info!("serve: listening on {local}");
        let state = Arc::new(state::AppState::new(
            settings,
            token,
            env.clone(),
            options.start,
            local,
        ));
        let app = routes::router(Arc::clone(&state));
        let served = tokio::select! {
            served = axum::serve(listener, app) => served.map_err(ServeError::Serve),
            () = stopped() => Ok(()),
        };
        close_all(&state).await;
        served
    })?
}

/// The settings with the command line's bind and roots.
fn settings(options: &ServeOptions, env: &Env) -> Result<ServeSettings, ServeError> {
    let mut settings =
        ServeSettings::load(&options.start, env).map_err(|err| ServeError::Settings(format!("{err:#}")))?;
    match options.bind {
        Some(bind) => settings.bind = bind,
        None if !settings.bind.ip().is_loopback() => return Err(ServeError::NotLoopback(settings.bind)),
        None => {}
    }
    if !options.roots.is_empty() {
        settings.roots = options
            .roots
            .iter()
            .map(|root| {
                root.canonicalize().map_err(|why| ServeError::Root {
                    root: root.clone(),
                    why,
                })
            })
            .collect::<Result<_, _>>()?;
    }
    Ok(settings)
}

/// SIGINT or SIGTERM.
async fn stopped() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut interrupt), Ok(mut terminate)) =
        (signal(SignalKind::interrupt()), signal(SignalKind::terminate()))
    else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = interrupt.recv() => {}
        _ = terminate.recv() => {}
    }
}

/// Ends every live session so their logs are written out.
async fn close_all(state: &state::AppState) {
    let open: Vec<_> = state.registry().live.drain().map(|(_, live)| live).collect();
    for live in &open {
        live.send(miniagent_protocol::Op::Shutdown);
    }
    let all = futures_util::future::join_all(open.iter().map(|live| live.finished()));
    let _ = tokio::time::timeout(Duration::from_secs(10), all).await;
}
