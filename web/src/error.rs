//! Every failure the HTTP API reports: a status and `{code, message}`, with the
//! protocol's error codes where the daemon said no, so a script branches on the
//! same codes as the CLI's `--json` and the MCP tools.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use fugue_client::protocol::ErrorCode;
use fugue_client::worktree::WorktreeError;
use fugue_client::ClientError;
use serde::Serialize;

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ErrorBody {
    /// A stable snake_case code: the daemon's (`pane_not_found`, `invalid_argument`,
    /// ...) or the server's own (`unauthorized`, `forbidden`, `daemon_unreachable`, ...).
    pub code: String,
    /// One line saying what was wrong and, where it helps, what would be right.
    pub message: String,
}

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: String,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &str, message: impl Into<String>) -> Self {
        let message: String = message.into();
        Self {
            status,
            code: code.into(),
            message: message.replace(['\n', '\r'], " "),
        }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, ErrorCode::InvalidArgument.as_str(), message)
    }

    pub fn not_found(code: ErrorCode, message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, code.as_str(), message)
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "forbidden", message)
    }

    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
    }
}

/// The HTTP status for a daemon error code.
fn status_of(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::SessionNotFound | ErrorCode::PaneNotFound => StatusCode::NOT_FOUND,
        ErrorCode::Ambiguous | ErrorCode::InvalidArgument => StatusCode::BAD_REQUEST,
        ErrorCode::NameTaken
        | ErrorCode::PromptNotShown
        | ErrorCode::AgentBlocked
        | ErrorCode::PromptInFlight
        | ErrorCode::DraftPresent => StatusCode::CONFLICT,
        ErrorCode::LimitReached => StatusCode::TOO_MANY_REQUESTS,
        ErrorCode::SpawnFailed => StatusCode::UNPROCESSABLE_ENTITY,
        ErrorCode::FrameTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        ErrorCode::PermissionDenied => StatusCode::FORBIDDEN,
        ErrorCode::ShuttingDown => StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::Cancelled => StatusCode::REQUEST_TIMEOUT,
        ErrorCode::UnsupportedRequest => StatusCode::NOT_IMPLEMENTED,
        ErrorCode::ProtocolMismatch | ErrorCode::MalformedFrame | ErrorCode::Internal => {
            StatusCode::INTERNAL_SERVER_ERROR
        }
    }
}

impl From<ClientError> for ApiError {
    fn from(err: ClientError) -> Self {
        match err {
            ClientError::Daemon(reply) => Self::new(status_of(reply.code), reply.code.as_str(), reply.message),
            ClientError::Closed(why) => Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "daemon_unreachable",
                format!("lost the connection to fugued{why}; retry"),
            ),
            ClientError::Connect { .. } | ClientError::Start(_) | ClientError::Untrusted { .. } => {
                Self::new(StatusCode::SERVICE_UNAVAILABLE, "daemon_unreachable", err.to_string())
            }
            ClientError::Protocol(_) => Self::new(StatusCode::BAD_GATEWAY, "protocol", err.to_string()),
            ClientError::Worktree(WorktreeError::Invalid(_)) => {
                Self::new(StatusCode::BAD_REQUEST, "invalid_argument", err.to_string())
            }
            ClientError::Worktree(_) => Self::new(StatusCode::INTERNAL_SERVER_ERROR, "worktree", err.to_string()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            code: self.code,
            message: self.message,
        };
        (self.status, Json(body)).into_response()
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

/// A JSON request body whose refusals are [`ApiError`]s (axum's own are plain text).
pub struct JsonBody<T>(pub T);

impl<S, T> axum::extract::FromRequest<S> for JsonBody<T>
where
    Json<T>: axum::extract::FromRequest<S, Rejection = axum::extract::rejection::JsonRejection>,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, ApiError> {
        use axum::extract::rejection::JsonRejection;
        match Json::<T>::from_request(req, state).await {
            Ok(Json(value)) => Ok(JsonBody(value)),
            Err(JsonRejection::MissingJsonContentType(_)) => Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "this request takes a JSON body: send Content-Type: application/json",
            )),
            Err(other) => Err(ApiError::invalid(format!("invalid JSON body: {}", other.body_text()))),
        }
    }
}

/// Query parameters whose refusals are [`ApiError`]s.
pub struct QueryParams<T>(pub T);

impl<S, T> axum::extract::FromRequestParts<S> for QueryParams<T>
where
    T: serde::de::DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, _: &S) -> Result<Self, ApiError> {
        axum::extract::Query::<T>::try_from_uri(&parts.uri)
            .map(|q| QueryParams(q.0))
            .map_err(|e| ApiError::invalid(format!("invalid query: {}", e.body_text())))
    }
}
