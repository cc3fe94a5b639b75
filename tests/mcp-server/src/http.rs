//! The server over HTTP on a free port of 127.0.0.1, named on the first line of standard
//! output (`listening on http://127.0.0.1:<port>`) so that parallel tests never race
//! for a port: streamable HTTP through rmcp's own service, and the old HTTP+SSE
//! transport (a GET opens an event stream whose `endpoint` event names where to POST;
//! answers come back as `message` events), which rmcp no longer serves.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures_util::StreamExt;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::ServiceExt;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::PollSender;

use crate::{Options, TestServer};

type Body = BoxBody<Bytes, Infallible>;

pub async fn serve_streamable(options: Options) -> Result<(), String> {
    let service = Arc::new(StreamableHttpService::new(
        move || Ok(TestServer::new(options.clone())),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    ));
    serve(move |request| {
        let service = service.clone();
        async move { service.handle(request).await }
    })
    .await
}

/// Each open event stream's way to the server behind it, by session id.
type Sessions = Arc<Mutex<HashMap<String, mpsc::Sender<ClientJsonRpcMessage>>>>;

pub async fn serve_legacy_sse(options: Options) -> Result<(), String> {
    let sessions = Sessions::default();
    let next = Arc::new(AtomicU64::new(1));
    serve(move |request| {
        let (options, sessions, next) = (options.clone(), sessions.clone(), next.clone());
        async move {
            match (request.method(), request.uri().path()) {
                (&Method::GET, "/sse") => {
                    let id = next.fetch_add(1, Ordering::SeqCst).to_string();
                    open_stream(options, &sessions, id)
                }
                (&Method::POST, "/message") => post(request, &sessions).await,
                _ => status(StatusCode::NOT_FOUND),
            }
        }
    })
    .await
}

/// Starts a server for a new event stream and answers with the stream.
fn open_stream(options: Options, sessions: &Sessions, id: String) -> Response<Body> {
    let (to_server, from_client) = mpsc::channel::<ClientJsonRpcMessage>(64);
    let (to_client, from_server) = mpsc::channel::<ServerJsonRpcMessage>(64);
    lock(sessions).insert(id.clone(), to_server);
    tokio::spawn(async move {
        let transport = (PollSender::new(to_client), ReceiverStream::new(from_client));
        if let Ok(running) = TestServer::new(options).serve(transport).await {
            let _ = running.waiting().await;
        }
    });
    let endpoint = event("endpoint", &format!("/message?sessionId={id}"));
    let messages = ReceiverStream::new(from_server)
        .map(|message| event("message", &serde_json::to_string(&message).unwrap_or_default()));
    let frames = futures_util::stream::iter([endpoint]).chain(messages);
    let mut response = Response::new(BodyExt::boxed(StreamBody::new(frames)));
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/event-stream"),
    );
    response
}

fn event(name: &str, data: &str) -> Result<Frame<Bytes>, Infallible> {
    Ok(Frame::data(Bytes::from(format!(
        "event: {name}\ndata: {data}\n\n"
    ))))
}

/// A client's message for the session its URL names: accepted, its answer on the stream.
async fn post(request: Request<Incoming>, sessions: &Sessions) -> Response<Body> {
    let id = request
        .uri()
        .query()
        .and_then(|query| query.strip_prefix("sessionId="))
        .unwrap_or("")
        .to_string();
    let Some(session) = lock(sessions).get(&id).cloned() else {
        return status(StatusCode::NOT_FOUND);
    };
    let Ok(body) = request.into_body().collect().await else {
        return status(StatusCode::BAD_REQUEST);
    };
    let Ok(message) = serde_json::from_slice::<ClientJsonRpcMessage>(&body.to_bytes()) else {
        return status(StatusCode::BAD_REQUEST);
    };
    match session.send(message).await {
        Ok(()) => status(StatusCode::ACCEPTED),
        Err(_) => status(StatusCode::GONE),
    }
}

fn status(code: StatusCode) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::new()).boxed());
    *response.status_mut() = code;
    response
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Listens on a free port, says which, and answers each connection with `handle`.
async fn serve<F, Fut>(handle: F) -> Result<(), String>
where
    F: Fn(Request<Incoming>) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Response<Body>> + Send + 'static,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|err| format!("cannot listen: {err}"))?;
    let address = listener.local_addr().map_err(|err| err.to_string())?;
    println!("listening on http://{address}");
    loop {
        let (stream, _) = listener.accept().await.map_err(|err| err.to_string())?;
        let handle = handle.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let answer = handle(request);
                async move { Ok::<_, Infallible>(answer.await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
