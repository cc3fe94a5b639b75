//! An OpenAI-compatible model server answering on this machine, found for the person
//! who has no API key yet (the workbench's first-run panel offers it). The addresses and
//! the shape of a model list are a provider's knowledge, so they live here, not in a
//! front end.

use std::time::Duration;

/// Where local OpenAI-compatible servers usually listen: Ollama, then llama.cpp and
/// others.
pub const LOCAL_SERVERS: [&str; 2] = ["http://127.0.0.1:11434/v1", "http://127.0.0.1:8080/v1"];

/// How long one server has to answer: a port nobody listens on refuses at once, and a
/// local server that takes longer is not one to offer.
const PROBE_TIMEOUT: Duration = Duration::from_millis(800);

/// A model server found on this machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalServer {
    /// The base URL to configure (`…/v1`).
    pub base_url: String,
    /// The first model it lists.
    pub model: String,
}

/// The first of [`LOCAL_SERVERS`] that lists a model.
pub async fn probe() -> Option<LocalServer> {
    probe_at(&LOCAL_SERVERS).await
}

/// The first of `bases` whose `/models` lists a model, in the OpenAI shape
/// (`data[0].id`) or Ollama's own (`models[0].name`).
async fn probe_at(bases: &[&str]) -> Option<LocalServer> {
    // A proxy would answer for a server that is not here.
    let client = reqwest::Client::builder()
        .timeout(PROBE_TIMEOUT)
        .no_proxy()
        .build()
        .ok()?;
    for base in bases {
        let Ok(response) = client.get(format!("{base}/models")).send().await else {
            continue;
        };
        if !response.status().is_success() {
            continue;
        }
        let Ok(body) = response.json::<serde_json::Value>().await else {
            continue;
        };
        let model = body
            .pointer("/data/0/id")
            .and_then(serde_json::Value::as_str)
            .or_else(|| body.pointer("/models/0/name").and_then(serde_json::Value::as_str));
        if let Some(model) = model {
            return Some(LocalServer {
                base_url: (*base).to_string(),
                model: model.to_string(),
            });
        }
    }
    None
}

/// The addresses probed, as a person reads them (`127.0.0.1:11434`).
pub fn addresses() -> Vec<&'static str> {
    LOCAL_SERVERS
        .iter()
        .map(|base| {
            let host = base.strip_prefix("http://").unwrap_or(base);
            host.split('/').next().unwrap_or(host)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::sync::{Arc, Mutex};

    /// A server on a free port that answers every request with `status` and `body`, and
    /// keeps each request's first line.
    fn server(status: &'static str, body: &'static str) -> (String, Arc<Mutex<Vec<String>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}/v1", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let requests = Arc::clone(&seen);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut request = Vec::new();
                let mut byte = [0u8; 1];
                while !request.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
                    request.push(byte[0]);
                }
                let text = String::from_utf8_lossy(&request);
                requests
                    .lock()
                    .unwrap()
                    .push(text.lines().next().unwrap_or_default().to_string());
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        (base, seen)
    }

    /// A base URL on a port nobody listens on.
    fn closed() -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/v1", listener.local_addr().unwrap())
    }

    #[tokio::test]
    async fn the_first_server_that_lists_a_model_is_offered() {
        let (openai, openai_seen) = server(
            "200 OK",
            r#"{"object":"list","data":[{"id":"llama3.2"},{"id":"other"}]}"#,
        );
        let (ollama, _) = server("200 OK", r#"{"models":[{"name":"qwen3:8b"}]}"#);
        let nobody = closed();
        assert_eq!(
            probe_at(&[&nobody, &openai, &ollama]).await,
            Some(LocalServer {
                base_url: openai.clone(),
                model: "llama3.2".to_string()
            })
        );
        assert_eq!(
            *openai_seen.lock().unwrap(),
            vec!["GET /v1/models HTTP/1.1".to_string()]
        );
        // Ollama's own list shape is read too.
        assert_eq!(
            probe_at(&[&ollama]).await,
            Some(LocalServer {
                base_url: ollama,
                model: "qwen3:8b".to_string()
            })
        );
    }

    #[tokio::test]
    async fn servers_that_fail_or_list_nothing_are_passed_over() {
        let (failing, failing_seen) = server("500 Internal Server Error", r#"{"data":[{"id":"x"}]}"#);
        let (empty, empty_seen) = server("200 OK", r#"{"data":[]}"#);
        let (garbled, _) = server("200 OK", "<html>not json</html>");
        let (numeric, _) = server("200 OK", r#"{"data":[{"id":7}]}"#);
        assert_eq!(probe_at(&[&failing, &empty, &garbled, &numeric]).await, None);
        assert_eq!(failing_seen.lock().unwrap().len(), 1);
        assert_eq!(empty_seen.lock().unwrap().len(), 1);
        let (good, _) = server("200 OK", r#"{"data":[{"id":"m"}]}"#);
        assert_eq!(
            probe_at(&[&failing, &good]).await.map(|found| found.model),
            Some("m".to_string())
        );
    }

    #[test]
    fn the_addresses_are_said_as_host_and_port() {
        assert_eq!(addresses(), vec!["127.0.0.1:11434", "127.0.0.1:8080"]);
    }
}
