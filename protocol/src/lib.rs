//! Wire types and codec of the fugue protocol.
//!
//! This crate is plain data: the frames a client and `fugued` exchange, the ids and
//! errors inside them, the codec that turns them into length-prefixed bincode, and a
//! few pure rules both sides share (socket paths, target names, key names, signals).
//! It owns no runtime state and spawns nothing.

pub mod agent;
pub mod codec;
pub mod devices;
pub mod error;
pub mod ids;
pub mod keys;
pub mod limits;
pub mod messages;
pub mod names;
pub mod output_filter;
pub mod requests;
pub mod secret;
pub mod signals;
pub mod socket;
pub mod target;
pub mod tmux;

pub use agent::*;
pub use error::{ErrorCode, ErrorReply};
pub use ids::{PaneId, SessionId};
pub use messages::*;
pub use requests::{Request, Response, Rpc};

/// Milliseconds since the Unix epoch, the unit of every timestamp on the wire
/// (and of every one fugue reports): one clock for the daemon and the clients.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Generation of the wire protocol. Bumped on every incompatible change (a field of
/// an existing request, reply or event changed; a request retired); the handshake
/// refuses peers of another generation. See CONTRIBUTING.md, "A protocol that can grow".
pub const PROTOCOL_VERSION: u32 = 16;

/// Compatible steps within [`PROTOCOL_VERSION`]: bumped when a request is added
/// (a new tag). Peers of one generation and different revisions work together for
/// what both know; each tells the other its revision in the handshake.
pub const PROTOCOL_REVISION: u32 = 0;

/// Largest frame either side sends or accepts (payload bytes, without the 4-byte prefix).
pub const MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;
