//! The API key a client holds, and the variable it came from: a provider that refuses
//! it is answered with that variable's name.

use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::{LlmError, ModelClient, ModelRequest, ModelStream};

/// The API key and the variable it came from: a provider that refuses it is answered
/// with that variable's name. Its `Debug` never shows the key.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ApiKey {
    pub value: String,
    /// Where it was read; `None` for a key given directly, or no key at all.
    pub variable: Option<String>,
    /// A variable that holds a key too but was not read, because `variable` comes first
    /// (`MINIAGENT_API_KEY` before `ANTHROPIC_API_KEY`).
    pub passed_over: Option<String>,
}

impl From<String> for ApiKey {
    fn from(value: String) -> Self {
        Self {
            value,
            ..Self::default()
        }
    }
}

impl From<&str> for ApiKey {
    fn from(value: &str) -> Self {
        value.to_string().into()
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiKey")
            .field("variable", &self.variable)
            .field("passed_over", &self.passed_over)
            .finish_non_exhaustive()
    }
}

impl ApiKey {
    /// What a provider's 401 adds: whose key it refused, or that none was sent.
    pub(super) fn refused_note(&self) -> Option<String> {
        if self.value.is_empty() {
            if let Some(unsent) = &self.passed_over {
                return Some(format!(
                    "no key was sent: {unsent} is set but goes only to its company's host; to send it here, start with --api-key-env {unsent}"
                ));
            }
            return Some(
                "no key was sent: set MINIAGENT_API_KEY, or name the variable that holds it with --api-key-env"
                    .to_string(),
            );
        }
        let variable = self.variable.as_deref()?;
        Some(match &self.passed_over {
            Some(other) => {
                format!("the key in {variable} was refused; it is used before {other}, which is set too")
            }
            None => format!("the key in {variable} was refused"),
        })
    }
}

/// A client whose provider's 401 says which variable's key it refused.
pub(super) struct NamedKeyClient {
    pub(super) inner: Arc<dyn ModelClient>,
    pub(super) note: String,
}

impl ModelClient for NamedKeyClient {
    fn provider(&self) -> &'static str {
        self.inner.provider()
    }

    fn model(&self) -> &str {
        self.inner.model()
    }

    fn stream(&self, request: &ModelRequest<'_>) -> BoxFuture<'static, Result<ModelStream, LlmError>> {
        let opening = self.inner.stream(request);
        let note = self.note.clone();
        Box::pin(async move {
            opening.await.map_err(|err| match err {
                LlmError::Status {
                    status: 401,
                    message,
                    retry_after,
                } => LlmError::Status {
                    status: 401,
                    message: format!("{message} ({note})"),
                    retry_after,
                },
                other => other,
            })
        })
    }
}
