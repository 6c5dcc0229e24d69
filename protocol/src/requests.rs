//! Every request, declared once with the type of its reply.
//!
//! The [`requests!`] table below is the one place a request is declared. From each
//! line it makes:
//! - the request's struct (`requests::KillPane { pane, signal }`), with serde and
//!   [`arbitrary`] derives (the codec's property tests and the fuzz targets make
//!   requests from random bytes, so a new request is covered without a strategy);
//! - its [`Rpc`] impl: the reply type, its name, and how large its reply may be;
//! - a variant of [`Request`] holding it and a variant of [`Response`] holding
//!   its reply, both named after it, so the daemon can only answer a request with
//!   the reply the table names (`Response::KillPane(pane_info)`), and the client's
//!   [`Rpc::reply`] can only take that one out.
//!
//! Each request struct must also implement [`Validate`] (in `limits.rs`), or the
//! table does not compile. The wire layout of a struct variant and of a newtype
//! variant holding a struct with the same fields is the same under bincode.

use crate::error::ErrorReply;
use crate::limits::{Validate, MAX_READ_BYTES};
use crate::messages::*;
use arbitrary::Arbitrary;
use serde::{Deserialize, Serialize};

/// Reply room reserved for a request whose reply is small (an id, a status).
pub const SMALL_REPLY_BYTES: usize = 4096;
/// Reply room reserved for a list (sessions, panes, an overview).
pub const LIST_REPLY_BYTES: usize = 256 * 1024;

/// A request with its reply type: what [`requests!`] makes for each line.
pub trait Rpc: Validate + Into<Request> + Send + 'static {
    /// What the daemon answers it with.
    type Reply: Send + 'static;
    /// The request's name, for logs and errors.
    const NAME: &'static str;
    /// The most bytes its reply may take, reserved before it runs.
    fn reply_bytes(&self) -> usize;
    /// Its reply out of a [`Response`]; for any other reply, that reply's name.
    fn reply(response: Response) -> Result<Self::Reply, &'static str>;
}

macro_rules! requests {
    ($(
        $(#[doc = $doc:literal])*
        $name:ident { $( $(#[$field_meta:meta])* $field:ident : $ty:ty ),* $(,)? } -> $reply:ty
        $(, reply_bytes($this:ident) = $estimate:expr)? ;
    )*) => {
        $(
            $(#[doc = $doc])*
            #[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Arbitrary)]
            pub struct $name {
                $( $(#[$field_meta])* pub $field: $ty, )*
            }

            impl Rpc for $name {
                type Reply = $reply;
                const NAME: &'static str = stringify!($name);

                fn reply_bytes(&self) -> usize {
                    requests!(@reply_bytes self $(, $this, $estimate)?)
                }

                fn reply(response: Response) -> Result<$reply, &'static str> {
                    match response {
                        Response::$name(reply) => Ok(reply),
                        other => Err(other.name()),
                    }
                }
            }

            impl From<$name> for Request {
                fn from(request: $name) -> Request {
                    Request::$name(request)
                }
            }
        )*

        /// Every request a client can make. Targets are strings the daemon
        /// resolves (see [`crate::target`]): a full UUID, a unique prefix of at
        /// least 4 hex digits, or a name.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Arbitrary)]
        pub enum Request {
            $( $(#[doc = $doc])* $name($name), )*
        }

        /// A request's reply, in the variant named after the request.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Arbitrary)]
        pub enum Response {
            $( $name($reply), )*
        }

        impl Request {
            /// The name of every request, in wire order.
            pub const NAMES: &'static [&'static str] = &[$( stringify!($name), )*];

            /// The request's name, for logs.
            pub fn name(&self) -> &'static str {
                match self {
                    $( Request::$name(_) => stringify!($name), )*
                }
            }

            /// Checks every bound of this request (see [`Validate`]). The daemon
            /// refuses a request that fails with the returned error and does
            /// nothing else for it.
            pub fn validate(&self) -> Result<(), ErrorReply> {
                match self {
                    $( Request::$name(request) => request.validate(), )*
                }
            }

            /// The most bytes its reply may take (see [`Rpc::reply_bytes`]).
            pub fn reply_bytes(&self) -> usize {
                match self {
                    $( Request::$name(request) => request.reply_bytes(), )*
                }
            }
        }

        impl Response {
            /// The name of the request this replies to.
            pub fn name(&self) -> &'static str {
                match self {
                    $( Response::$name(_) => stringify!($name), )*
                }
            }
        }
    };
    (@reply_bytes $self:ident) => { SMALL_REPLY_BYTES };
    (@reply_bytes $self:ident, $this:ident, $estimate:expr) => {{
        let $this = $self;
        $estimate
    }};
}

// Keep the order: a variant's index is its tag on the wire. New requests go last.
requests! {
    Ping {} -> ();
    DaemonStatus {} -> DaemonInfo;
    /// Graceful shutdown: every pane is terminated, then the daemon exits. The
    /// shutdown begins once the reply is written.
    Shutdown {} -> ();
    CreateSession {
        name: String,
        /// Absolute directory; the daemon's home when `None`.
        cwd: Option<String>,
        env: Vec<EnvVar>,
    } -> SessionInfo;
    DestroySession { session: String } -> SessionInfo;
    ListSessions {} -> Vec<SessionInfo>, reply_bytes(_request) = LIST_REPLY_BYTES;
    RenameSession { session: String, name: String } -> SessionRenamed;
    CreatePane { spec: SpawnSpec } -> PaneInfo;
    /// Panes of one session, or of all sessions when `None`.
    ListPanes { session: Option<String> } -> Vec<PaneInfo>, reply_bytes(_request) = LIST_REPLY_BYTES;
    PaneStatus { pane: String } -> PaneInfo;
    WriteInput {
        pane: String,
        #[serde(with = "serde_bytes")]
        data: Vec<u8>,
        /// A paste: wrapped in bracketed-paste markers when the program enabled them.
        paste: bool,
    } -> ();
    /// Key names as in [`crate::keys`] (Enter, C-c, F5, ...).
    SendKeys { pane: String, keys: Vec<String> } -> ();
    /// SIGINT to the pane's foreground process group; the PTY and shell stay.
    Interrupt { pane: String } -> ();
    /// Signal the pane's processes (default TERM), escalating to KILL after the grace.
    KillPane { pane: String, signal: Option<String> } -> PaneInfo;
    /// Remove the pane at once, killing it first if it runs.
    ReleasePane { pane: String } -> ();
    ResizePane { pane: String, size: PaneSize } -> ();
    RenamePane { pane: String, title: String } -> PaneInfo;
    /// New order of a session's panes: every pane exactly once.
    ReorderPanes { session: String, panes: Vec<String> } -> Vec<PaneInfo>,
        reply_bytes(_request) = LIST_REPLY_BYTES;
    ReadOutput { pane: String, mode: ReadMode } -> OutputChunk, reply_bytes(request) = match request.mode {
        ReadMode::Raw { max_bytes: Some(max), .. } => (max as usize).min(MAX_READ_BYTES) + SMALL_REPLY_BYTES,
        _ => MAX_READ_BYTES + SMALL_REPLY_BYTES,
    };
    /// Wait until the pane's process exits, or the timeout passes (no timeout: forever).
    WaitForExit { pane: String, timeout_ms: Option<u64> } -> ExitWaited;
    /// Push session and pane lifecycle events on this connection from now on.
    Subscribe {} -> ();
    /// The rendered screen and/or scrollback of a pane.
    Capture {
        pane: String,
        what: CaptureWhat,
        /// First line, as tmux's `capture-pane -S`: 0 is the top visible row,
        /// negative numbers reach into scrollback. Default: the start of `what`.
        start: Option<i64>,
        /// Last line (inclusive), as `-E`. Default: the end of `what`.
        end: Option<i64>,
        /// Include colours and attributes as SGR sequences (screen rows).
        ansi: bool,
        /// Join soft-wrapped rows into one line.
        join_wrapped: bool,
    } -> CaptureResult, reply_bytes(_request) = MAX_READ_BYTES + SMALL_REPLY_BYTES;
    /// Follow a pane on this connection: a [`Event::Redraw`] first, then its output,
    /// title, bell and exit events. With a size (and not read-only) the client takes
    /// part in the pane's size policy; read-only clients never resize or type.
    Attach { pane: String, read_only: bool, size: Option<PaneSize> } -> PaneInfo;
    Detach { pane: String } -> ();
    /// The size of this connection's terminal attached to the pane changed.
    ClientResize { pane: String, size: PaneSize } -> ();
    SetSizePolicy { pane: String, policy: SizePolicy } -> ();
    /// Wait until the first of several conditions holds (or the timeout passes).
    /// The daemon waits on the pane's events; nothing polls.
    WaitFor { pane: String, until: WaitUntil, timeout_ms: u64 } -> WaitOutcome;
    /// Which agent CLI runs in the pane, and whether it is busy, idle or waiting
    /// for permission, read from the rendered screen.
    AgentStatus { pane: String } -> AgentInfo;
    /// A hook of the agent CLI in a pane fired (`fugue agent-event`, run by the
    /// agent with the pane's `FUGUE_PANE`): the most trusted signal of its state.
    /// `token` is the pane process's `FUGUE_PANE_TOKEN`: a report without the
    /// token of the process now in the pane is refused, so another pane cannot
    /// speak for this one.
    ReportHook { pane: String, token: String, hook: AgentHook } -> ();
    /// Answer the permission prompt `prompt_id` (from [`AgentInfo::prompt_id`])
    /// of the agent CLI in a pane, only if that same prompt is on screen now and
    /// nobody answered it yet; the daemon checks and sends the agent's key in one
    /// step, so no other client's answer or keystroke lands between. Answering a
    /// prompt again sends nothing and says what it was answered with.
    AnswerPermission { pane: String, prompt_id: String, answer: PermissionAnswer } -> PermissionAnswered;
    /// Start the agent whose session a pane recorded again, in the same directory,
    /// with its resume flag (`claude --resume ID`, `codex resume ID`, ...), as a new
    /// pane of the same session. The old pane must no longer run.
    ResumeAgent { pane: String } -> PaneInfo;
    /// Abandon request `id` of this connection (its reply is a `cancelled` error).
    Cancel { id: u64 } -> ();
    /// Replace the running daemon with the binary now on disk, keeping every pane
    /// and process. Replies once the new binary was checked; connections then close
    /// and clients reconnect to the upgraded daemon.
    UpgradeDaemon {} -> ();
    /// Claim idempotency key `key` for a prompt to the agent in a pane
    /// (`fugue prompt --key`, `fugue_send_prompt`'s `idempotency_key`): the
    /// first claim sends; later ones get that send's receipt, or are told it
    /// is still being sent.
    ClaimPromptKey { pane: String, key: String } -> PromptKeyClaim;
    /// Record the receipt (its JSON, as the client shows it) of the prompt sent
    /// under a claimed key, for the claims that come after.
    RecordPromptReceipt { pane: String, key: String, receipt: String } -> ();
    /// Every pane of one session (or of all when `None`) with what a person
    /// needs to see at a glance: its agent's state and its last line of output.
    Overview { session: Option<String> } -> Vec<PaneOverview>, reply_bytes(_request) = 4 * LIST_REPLY_BYTES;
    /// The lines of every pane's text view and scrollback (of one session, or
    /// of all) that match `pattern` (a wait pattern's syntax and limits), in
    /// pane order, at most `max_matches` (up to [`crate::limits::MAX_GREP_MATCHES`]).
    Grep { pattern: String, session: Option<String>, max_matches: u32 } -> GrepResult,
        reply_bytes(_request) = crate::limits::MAX_GREP_REPLY_BYTES + SMALL_REPLY_BYTES;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_come_out_of_their_own_variant_only() {
        let pane = Response::Ping(());
        assert_eq!(Ping::reply(pane.clone()), Ok(()));
        assert_eq!(Shutdown::reply(pane), Err("Ping"));
        assert_eq!(Request::from(ListSessions {}).name(), "ListSessions");
        assert_eq!(<ListSessions as Rpc>::NAME, "ListSessions");
    }

    #[test]
    fn reply_room_follows_what_a_read_may_return() {
        let read = |max_bytes| ReadOutput {
            pane: "p".into(),
            mode: ReadMode::Raw { since: None, max_bytes },
        };
        assert_eq!(read(Some(10)).reply_bytes(), 10 + SMALL_REPLY_BYTES);
        assert_eq!(read(Some(u64::MAX)).reply_bytes(), MAX_READ_BYTES + SMALL_REPLY_BYTES);
        assert_eq!(Request::from(Ping {}).reply_bytes(), SMALL_REPLY_BYTES);
    }
}
