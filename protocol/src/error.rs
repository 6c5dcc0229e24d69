//! Typed errors carried in replies.

use serde::{Deserialize, Serialize};
use std::fmt;

/// What kind of failure a reply reports. Clients branch on this, people read the message.
///
/// New codes go last (a code's place is its number on the wire). A code this
/// build does not know (a newer daemon's) reads as [`ErrorCode::Internal`] and
/// keeps its message, so adding one is a compatible step.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Serialize, arbitrary::Arbitrary, strum::IntoStaticStr, strum::VariantArray,
)]
#[strum(serialize_all = "snake_case")]
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
    /// A request whose wire tag this daemon does not know (the client is newer);
    /// the connection stays open.
    UnsupportedRequest,
}

impl ErrorCode {
    /// Every code, in wire order (declaration order).
    pub const ALL: &'static [ErrorCode] = <ErrorCode as strum::VariantArray>::VARIANTS;

    /// Stable snake_case name, used in JSON output.
    pub fn as_str(&self) -> &'static str {
        self.into()
    }
}

impl<'de> Deserialize<'de> for ErrorCode {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Code;
        impl<'de> serde::de::Visitor<'de> for Code {
            type Value = ErrorCode;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an error code")
            }
            fn visit_enum<A: serde::de::EnumAccess<'de>>(self, data: A) -> Result<ErrorCode, A::Error> {
                use serde::de::VariantAccess;
                let (index, variant): (u32, _) = data.variant()?;
                variant.unit_variant()?;
                Ok(ErrorCode::ALL
                    .get(index as usize)
                    .copied()
                    .unwrap_or(ErrorCode::Internal))
            }
        }
        // The names are not used by bincode (it reads the index); an unknown
        // index is Internal above.
        deserializer.deserialize_enum("ErrorCode", &[], Code)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_keep_their_wire_number_and_unknown_ones_read_as_internal() {
        for (index, code) in ErrorCode::ALL.iter().enumerate() {
            let bytes = crate::codec::encode(code).unwrap();
            assert_eq!(bytes, crate::codec::encode(&(index as u32)).unwrap(), "{code:?}");
            assert_eq!(crate::codec::decode::<ErrorCode>(&bytes).unwrap(), *code);
        }
        let newer = crate::codec::encode(&(ErrorCode::ALL.len() as u32 + 5)).unwrap();
        assert_eq!(crate::codec::decode::<ErrorCode>(&newer).unwrap(), ErrorCode::Internal);
        let reply = ErrorReply::new(ErrorCode::UnsupportedRequest, "x");
        let back: ErrorReply = crate::codec::decode(&crate::codec::encode(&reply).unwrap()).unwrap();
        assert_eq!(back, reply);
    }
}
