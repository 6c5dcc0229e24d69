//! Typed errors carried in replies.

use serde::{Deserialize, Serialize};
use std::fmt;

/// What kind of failure a reply reports. Clients branch on this, people read the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, arbitrary::Arbitrary)]
pub enum ErrorCode {
    SessionNotFound,
    PaneNotFound,
    /// A prefix or name matched more than one thing; the message lists the candidates.
    Ambiguous,
    NameTaken,
    InvalidArgument,
    /// A configured cap (panes per session) is reached; the message names it.
    LimitReached,
    SpawnFailed,
    ProtocolMismatch,
    /// The peer sent a frame over [`crate::MAX_FRAME_BYTES`].
    FrameTooLarge,
    /// The peer sent bytes that do not decode as a frame.
    MalformedFrame,
    /// The peer's uid differs from the daemon's.
    PermissionDenied,
    /// The daemon is shutting down and takes no new work.
    ShuttingDown,
    /// The client cancelled the request.
    Cancelled,
    /// An answer to a permission prompt that is not the one on screen now (another
    /// prompt shows, or none): nothing was sent.
    PromptNotShown,
    /// A prompt was refused: the agent waits for a person (a permission or a
    /// question) and must be answered first. Nothing was sent.
    AgentBlocked,
    /// A prompt under the same idempotency key is being sent right now.
    PromptInFlight,
    /// A prompt was refused: text a person typed sits unsent in the agent's
    /// input box (the prompt would be appended to it). Nothing was sent.
    DraftPresent,
    Internal,
}

impl ErrorCode {
    /// Stable snake_case name, used in JSON output.
    pub fn as_str(&self) -> &'static str {
        match self {
            ErrorCode::SessionNotFound => "session_not_found",
            ErrorCode::PaneNotFound => "pane_not_found",
            ErrorCode::Ambiguous => "ambiguous",
            ErrorCode::NameTaken => "name_taken",
            ErrorCode::InvalidArgument => "invalid_argument",
            ErrorCode::LimitReached => "limit_reached",
            ErrorCode::SpawnFailed => "spawn_failed",
            ErrorCode::ProtocolMismatch => "protocol_mismatch",
            ErrorCode::FrameTooLarge => "frame_too_large",
            ErrorCode::MalformedFrame => "malformed_frame",
            ErrorCode::PermissionDenied => "permission_denied",
            ErrorCode::ShuttingDown => "shutting_down",
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::PromptNotShown => "prompt_not_shown",
            ErrorCode::AgentBlocked => "agent_blocked",
            ErrorCode::PromptInFlight => "prompt_in_flight",
            ErrorCode::DraftPresent => "draft_present",
            ErrorCode::Internal => "internal",
        }
    }
}

/// An error reply: a code and a one-line message saying what was wrong and, where it
/// helps, what would be right.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, arbitrary::Arbitrary, thiserror::Error)]
#[error("{message}")]
pub struct ErrorReply {
    pub code: ErrorCode,
    pub message: String,
}

impl ErrorReply {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        let message: String = message.into();
        // One line, always: a multi-line message would break `fugue: <message>`.
        let message = message.replace(['\n', '\r'], " ");
        Self { code, message }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidArgument, message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, message)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
