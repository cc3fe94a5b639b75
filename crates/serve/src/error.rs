//! The one shape every refusal takes: a status and `{"error": {"code", "message"}}`, the
//! message safe to show (it never repeats a token, and names no folder of the server's).

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// A request the server will not carry out, as its answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    /// For 410: the oldest event index the session still holds.
    pub first_available: Option<u64>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            first_available: None,
        }
    }

    pub fn unknown_session(id: &str) -> Self {
        // The id is the client's own text: shown cleaned and cut.
        let id: String = miniagent_text::clean(id).chars().take(80).collect();
        Self::new(
            StatusCode::NOT_FOUND,
            "unknown_session",
            format!("no session `{id}` is open on this server"),
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut error = json!({"code": self.code, "message": self.message});
        if let Some(first) = self.first_available {
            error["first_available"] = json!(first);
        }
        let mut response = (self.status, axum::Json(json!({ "error": error }))).into_response();
        if self.status == StatusCode::PAYLOAD_TOO_LARGE {
            // The rest of the body was not read: the connection cannot carry another
            // request, and a client must not reuse it.
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        if self.status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> Self {
        match rejection.status() {
            StatusCode::PAYLOAD_TOO_LARGE => Self::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "body_too_large",
                "the request body is larger than serve.max_body_bytes allows",
            ),
            StatusCode::UNSUPPORTED_MEDIA_TYPE => Self::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "not_json",
                "the body must be JSON, sent with Content-Type: application/json",
            ),
            _ => Self::new(
                StatusCode::BAD_REQUEST,
                "malformed_json",
                // serde's message names the field and position, never a value.
                miniagent_text::clean(&rejection.body_text())
                    .chars()
                    .take(300)
                    .collect::<String>(),
            ),
        }
    }
}

impl From<QueryRejection> for ApiError {
    fn from(_: QueryRejection) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "bad_query",
            "the query string could not be read (since takes an event index)",
        )
    }
}
