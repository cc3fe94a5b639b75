//! The 2024-11-05 "HTTP with SSE" transport, which rmcp no longer ships: a GET opens an
//! event stream whose first `endpoint` event names the URL to POST requests to; answers
//! and notifications arrive as `message` events on the stream.

use std::collections::HashMap;

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use reqwest::Url;
use reqwest::header::{ACCEPT, HeaderMap, HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use crate::llm::error_chain;

/// Messages buffered between the stream reader and the client.
const INCOMING_BUFFER: usize = 64;

/// Why a message could not be sent.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(super) struct SseSendError(String);

/// A connected SSE session: the stream is read by a background task until it ends or
/// the transport is dropped.
pub(super) struct LegacySseTransport {
    client: reqwest::Client,
    endpoint: Url,
    headers: HeaderMap,
    incoming: mpsc::Receiver<ServerJsonRpcMessage>,
    reader: AbortHandle,
}

impl LegacySseTransport {
    /// Opens the event stream at `url` and waits for the endpoint it announces.
    pub(super) async fn open(url: &str, headers: HashMap<HeaderName, HeaderValue>) -> Result<Self, String> {
        let base = Url::parse(url).map_err(|err| format!("`{url}` is not a URL: {err}"))?;
        let headers: HeaderMap = headers.into_iter().collect();
        let client = reqwest::Client::builder()
            .build()
            .map_err(|err| format!("cannot set up HTTP: {}", error_chain(&err)))?;
        let response = client
            .get(base.clone())
            .headers(headers.clone())
            .header(ACCEPT, "text/event-stream")
            .send()
            .await
            .map_err(|err| format!("cannot reach {url}: {}", error_chain(&err)))?;
        if !response.status().is_success() {
            return Err(format!("GET {url} answered {}", response.status()));
        }
        let mut events = response.bytes_stream().eventsource();
        let endpoint = loop {
            match events.next().await {
                Some(Ok(event)) if event.event == "endpoint" => {
                    break base
                        .join(event.data.trim())
                        .map_err(|err| format!("the SSE endpoint \"{}\" is not a URL: {err}", event.data))?;
                }
                Some(Ok(_)) => continue,
                Some(Err(err)) => return Err(format!("the SSE stream broke: {err}")),
                None => return Err("the SSE stream ended before naming its endpoint".to_string()),
            }
        };
        // Our headers (tokens) must only ever go to the server we were configured with.
        if endpoint.origin() != base.origin() {
            return Err(format!(
                "the SSE endpoint {endpoint} is on another origin than {url}"
            ));
        }
        let (sender, incoming) = mpsc::channel(INCOMING_BUFFER);
        let reader = tokio::spawn(async move {
            while let Some(Ok(event)) = events.next().await {
                if event.event != "message" {
                    continue;
                }
                match serde_json::from_str::<ServerJsonRpcMessage>(&event.data) {
                    Ok(message) => {
                        if sender.send(message).await.is_err() {
                            break;
                        }
                    }
                    Err(err) => tracing::warn!("MCP SSE: unreadable message skipped: {err}"),
                }
            }
        })
        .abort_handle();
        Ok(Self {
            client,
            endpoint,
            headers,
            incoming,
            reader,
        })
    }
}

impl Transport<RoleClient> for LegacySseTransport {
    type Error = SseSendError;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let request = self
            .client
            .post(self.endpoint.clone())
            .headers(self.headers.clone())
            .json(&item);
        async move {
            let response = request
                .send()
                .await
                .map_err(|err| SseSendError(error_chain(&err)))?;
            if response.status().is_success() {
                Ok(())
            } else {
                Err(SseSendError(format!("the server answered {}", response.status())))
            }
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        self.incoming.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.reader.abort();
        Ok(())
    }
}

impl Drop for LegacySseTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}
