//! The editor's files: when the client said at `initialize` that it reads and writes text
//! files, the agent's file tools go through `fs/read_text_file` and `fs/write_text_file`,
//! so they see unsaved buffers and their edits land in the editor. The agent confines
//! every path before it gets here; this only carries the request and its answer.

use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{Client, ErrorCode};
use miniagent_api::{BoxFuture, ClientFileError, ClientFiles};

/// How long the editor may take to answer one file request: a file tool waiting on an
/// editor that never answers would hold the turn (an interrupt still ends it at once).
const ANSWER_WITHIN: Duration = Duration::from_secs(30);

/// The client's file system, for one session.
#[derive(Debug)]
pub struct EditorFiles {
    cx: ConnectionTo<Client>,
    /// The session's id, known once the agent has started (no tool runs before).
    session: Arc<OnceLock<acp::SessionId>>,
}

impl EditorFiles {
    /// Files through `cx`, for the session whose id is set in `session` once known.
    pub fn new(cx: ConnectionTo<Client>, session: Arc<OnceLock<acp::SessionId>>) -> Self {
        Self { cx, session }
    }

    fn session(&self) -> Result<acp::SessionId, ClientFileError> {
        self.session
            .get()
            .cloned()
            .ok_or_else(|| ClientFileError::Other("the session has not started yet".to_string()))
    }
}

/// The answer to a file request, or what went wrong: the editor's "not found" is the
/// tools' own, anything else is said as it came.
fn failure(err: &agent_client_protocol::Error) -> ClientFileError {
    if err.code == ErrorCode::RESOURCE_NOT_FOUND {
        ClientFileError::NotFound
    } else {
        ClientFileError::Other(format!("the editor said: {}", err.message))
    }
}

impl ClientFiles for EditorFiles {
    fn read_text(&self, path: &Path) -> BoxFuture<'_, Result<String, ClientFileError>> {
        let path = path.to_path_buf();
        Box::pin(async move {
            let request = self
                .cx
                .send_request(acp::ReadTextFileRequest::new(self.session()?, path));
            match tokio::time::timeout(ANSWER_WITHIN, request.block_task()).await {
                Ok(Ok(response)) => Ok(response.content),
                Ok(Err(err)) => Err(failure(&err)),
                Err(_) => Err(ClientFileError::Other(
                    "the editor did not answer in 30 s".to_string(),
                )),
            }
        })
    }

    fn write_text(&self, path: &Path, text: String) -> BoxFuture<'_, Result<(), ClientFileError>> {
        let path = path.to_path_buf();
        Box::pin(async move {
            let request = self
                .cx
                .send_request(acp::WriteTextFileRequest::new(self.session()?, path, text));
            match tokio::time::timeout(ANSWER_WITHIN, request.block_task()).await {
                Ok(Ok(_)) => Ok(()),
                Ok(Err(err)) => Err(failure(&err)),
                Err(_) => Err(ClientFileError::Other(
                    "the editor did not answer in 30 s".to_string(),
                )),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::Error;

    #[test]
    fn the_editors_not_found_is_the_tools_own_and_the_rest_is_said() {
        assert_eq!(
            failure(&Error::new(
                ErrorCode::RESOURCE_NOT_FOUND,
                "no such buffer".to_string()
            )),
            ClientFileError::NotFound
        );
        assert_eq!(
            failure(&Error::new(ErrorCode::INTERNAL_ERROR, "disk full".to_string())),
            ClientFileError::Other("the editor said: disk full".to_string())
        );
    }
}
