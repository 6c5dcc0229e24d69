//! Frames and the requests, replies and events inside them.
//!
//! Wire types stay plain (no `flatten`, `tag`, `untagged` or `skip_serializing_if`):
//! bincode is not self-describing and those attributes lose data under it. Byte
//! payloads use `serde_bytes`, so bincode copies them as one slice instead of
//! serialising every byte as a sequence element.

use crate::agent::{AgentInfo, AgentSession, AgentState, Attention, BackgroundAgent};
use crate::error::ErrorReply;
use crate::ids::{PaneId, SessionId};
use crate::requests::{Request, Response};
use arbitrary::Arbitrary;
use serde::{Deserialize, Serialize};

/// Everything a client sends. The first frame must be [`ClientFrame::Hello`]; keep it
/// the first variant with these fields forever, so a daemon can always read the
/// version of a client that speaks another one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Arbitrary)]
pub enum ClientFrame {
    Hello(Hello),
    Request { id: u64, request: Request },
}

/// Everything the daemon sends. Replies answer one request id; events are pushed and
/// carry no id, so they can never be taken for a reply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Arbitrary)]
pub enum ServerFrame {
    Welcome(Welcome),
    Reply {
        id: u64,
        result: Result<Response, ErrorReply>,
    },
    Event(Event),
    /// The connection cannot go on (version mismatch, oversize or malformed frame);
    /// the daemon closes it after this frame.
    Fatal(ErrorReply),
}

/// The client's first frame. Its first three fields are fixed forever (a daemon of
/// any generation reads the version); new fields are only ever appended, and a
/// reader ignores bytes after the fields it knows (`codec::decode_hello`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct Hello {
    pub protocol_version: u32,
    pub client_name: String,
    pub client_version: String,
    /// The client's [`crate::PROTOCOL_REVISION`] (appended in generation 10).
    pub revision: u32,
}

/// The daemon's answer to a Hello of its generation. Fields are only ever
/// appended; the client reads it leniently (bytes after what it knows are ignored).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct Welcome {
    pub protocol_version: u32,
    pub daemon_version: String,
    pub pid: u32,
    /// The daemon's [`crate::PROTOCOL_REVISION`].
    pub revision: u32,
    /// The wire tag of every request the daemon answers: a client can tell
    /// before it asks whether an older daemon knows a request.
    pub requests: Vec<u32>,
}

impl Welcome {
    /// Whether the daemon answers the request with wire tag `tag`.
    pub fn supports(&self, tag: u32) -> bool {
        self.requests.contains(&tag)
    }
}

/// An environment variable, in ACP's `{name, value}` shape.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct EnvVar {
    pub name: String,
    pub value: String,
}

/// Terminal size in character cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct PaneSize {
    pub cols: u16,
    pub rows: u16,
}

impl Default for PaneSize {
    fn default() -> Self {
        Self { cols: 120, rows: 40 }
    }
}

/// Everything needed to start one pane. The ACP `terminal/create` parameters are a subset.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct SpawnSpec {
    /// Session target (name, UUID or unique prefix).
    pub session: String,
    /// Program to run. With `shell` it is typed into the shell; may then be empty.
    pub command: Option<String>,
    pub args: Vec<String>,
    /// Added to (and overriding) the session's environment.
    pub env: Vec<EnvVar>,
    /// Absolute directory; the session's cwd when `None`.
    pub cwd: Option<String>,
    /// `true`: start `$SHELL -i` and type the command into it, so the shell stays when
    /// the command ends. `false`: exec the command directly.
    pub shell: bool,
    pub title: Option<String>,
    pub purpose: Option<String>,
    pub size: Option<PaneSize>,
    /// Bytes of raw output kept; oldest dropped first. Default 1 MiB.
    pub output_byte_limit: Option<u64>,
    /// Whether the process is started again when it ends.
    pub restart: RestartPolicy,
    /// Restarts allowed in a row (a minute of healthy running resets the count);
    /// `None`: no limit.
    pub max_restarts: Option<u32>,
}

/// Where a pane sits in fugue's tmux (`fugue tmux`, and the `tmux` a bridged
/// pane's programs find on their PATH): its server, tmux session, window and
/// ids, which stay across a daemon restart and a live upgrade. A window is a
/// named group of panes with a layout.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct TmuxPlace {
    /// The server it belongs to: the `-L` name or `-S` path (a label: no file
    /// is made there), or `default`.
    pub server: String,
    /// The tmux session's name and id (`$N`).
    pub session: String,
    pub session_id: u32,
    /// The window's id (`@N`), name and layout (`tiled`, `main-vertical`, ...).
    pub window_id: u32,
    pub window_name: String,
    pub layout: String,
    /// The window's size, which its panes share by its layout.
    pub window_size: PaneSize,
    /// The main pane's share of its layout, in percent (`resize-pane -x 30%`).
    pub main_percent: Option<u8>,
    /// The pane's id (`%N`).
    pub pane_id: u32,
    /// Made through tmux (`new-session`, `split-window`, ...), so tmux's kill
    /// commands may end it; `false` for a pane fugue started with the bridge on.
    pub made_by_tmux: bool,
    /// The pane whose program made it, when a pane's program did.
    pub parent: Option<PaneId>,
    /// That parent's pane no longer runs (it exited, or is gone): the pane
    /// outlived the program that made it. Filled in when panes are listed.
    #[serde(default)]
    pub parent_exited: bool,
}

/// The pane a request comes from, proven as hook reports are: its
/// `FUGUE_PANE` and the `FUGUE_PANE_TOKEN` its process was given.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct PaneCaller {
    pub pane: String,
    pub token: String,
}

/// What a `fugue tmux` call printed, and its exit status, as tmux's would be.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct TmuxOutput {
    pub stdout: String,
    pub stderr: String,
    pub code: u8,
}

/// When a pane's process is started again after it ends (with the same spec,
/// after a backoff doubling from 1 s to 60 s).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    Arbitrary,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::VariantNames,
    strum::VariantArray,
)]
#[strum(serialize_all = "snake_case")]
pub enum RestartPolicy {
    #[default]
    Never,
    /// After an exit with a non-zero code or a signal.
    #[strum(to_string = "on-failure", serialize = "on_failure")]
    OnFailure,
    Always,
}

impl RestartPolicy {
    pub fn parse(text: &str) -> Result<Self, String> {
        crate::names::parse(text, "restart policy", &[])
    }

    pub fn as_str(&self) -> &'static str {
        self.into()
    }

    /// Whether a process that ended with `status` is started again.
    pub fn restarts_after(&self, status: &ExitStatus) -> bool {
        match self {
            Self::Never => false,
            Self::OnFailure => status.code != Some(0),
            Self::Always => true,
        }
    }
}

impl SpawnSpec {
    /// A spec with the documented defaults: shell mode, session cwd, default size and limit.
    pub fn new(session: impl Into<String>) -> Self {
        Self {
            session: session.into(),
            command: None,
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            shell: true,
            title: None,
            purpose: None,
            size: None,
            output_byte_limit: None,
            restart: RestartPolicy::Never,
            max_restarts: None,
        }
    }
}

/// How to read a pane's output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub enum ReadMode {
    /// The ANSI-stripped text view: the last `lines` complete or partial lines, limited
    /// to lines that ended after byte offset `since` when given.
    Text { lines: u32, since: Option<u64> },
    /// The raw byte log. With `since`, bytes from that offset on (at most `max_bytes`,
    /// page on with `next_offset`); without, the last `max_bytes`.
    Raw { since: Option<u64>, max_bytes: Option<u64> },
}

/// Conditions of a [`crate::requests::WaitFor`]; any that holds ends the wait.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, Arbitrary)]
pub struct WaitUntil {
    /// The process exited. (A wait also ends when the process exits while waiting
    /// for something else: nothing more can happen.)
    pub exit: bool,
    /// A regular expression, matched within single lines of the ANSI-stripped
    /// output (from `since` on) or against the visible screen.
    pub pattern: Option<String>,
    pub on: MatchOn,
    /// Output offset to search from (default: all kept output).
    pub since: Option<u64>,
    /// No output for this long.
    pub idle_ms: Option<u64>,
    /// The agent CLI in the pane is in any of these states.
    pub agent_states: Vec<AgentState>,
    /// The agent CLI needs a person for any of these reasons.
    pub agent_needs: Vec<Attention>,
}

/// Where a wait's pattern is looked for.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    Default,
    Arbitrary,
    strum::IntoStaticStr,
    strum::Display,
    strum::EnumString,
    strum::VariantNames,
    strum::VariantArray,
)]
#[strum(serialize_all = "snake_case")]
#[serde(rename_all = "snake_case")]
pub enum MatchOn {
    /// The ANSI-stripped text output (from the wait's `since` on).
    #[default]
    Output,
    /// What the terminal shows now.
    Screen,
}

impl MatchOn {
    pub fn as_str(&self) -> &'static str {
        self.into()
    }
}

/// Which condition ended a wait.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    Arbitrary,
    strum::IntoStaticStr,
    strum::Display,
    strum::EnumString,
    strum::VariantNames,
    strum::VariantArray,
)]
#[strum(serialize_all = "snake_case")]
#[serde(rename_all = "snake_case")]
pub enum WaitCondition {
    #[serde(alias = "Exit")]
    Exit,
    #[serde(alias = "Pattern")]
    Pattern,
    #[serde(alias = "Idle")]
    Idle,
    #[serde(alias = "AgentState")]
    AgentState,
    #[serde(alias = "AgentNeeds")]
    AgentNeeds,
    #[serde(alias = "Timeout")]
    Timeout,
}

impl WaitCondition {
    pub fn as_str(&self) -> &'static str {
        self.into()
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct WaitOutcome {
    pub condition: WaitCondition,
    /// The text the pattern matched.
    pub matched: Option<String>,
    pub elapsed_ms: u64,
    pub pane: PaneInfo,
    /// Output offset at the end of the wait (pass as `since` to continue).
    pub next_offset: u64,
}

/// Which part of a pane's history a capture covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub enum CaptureWhat {
    Screen,
    Scrollback,
    All,
}

/// Who decides a pane's size when several clients are attached (tmux's `window-size`).
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    Arbitrary,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::VariantNames,
    strum::VariantArray,
)]
#[strum(serialize_all = "snake_case", ascii_case_insensitive)]
pub enum SizePolicy {
    /// The client that last typed or resized.
    Latest,
    Smallest,
    Largest,
}

impl SizePolicy {
    pub fn parse(text: &str) -> Result<Self, String> {
        crate::names::parse(text, "size policy", &[])
    }

    pub fn as_str(&self) -> &'static str {
        self.into()
    }
}

/// A captured screen.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct CaptureResult {
    pub lines: Vec<String>,
    /// Line number (as in `start`) of the first line returned.
    pub first_line: i64,
    /// Cursor row and column, 0-based, on the visible screen.
    pub cursor_row: u16,
    pub cursor_col: u16,
    pub cursor_visible: bool,
    pub size: PaneSize,
    pub alternate_screen: bool,
    pub title: String,
    /// Lines currently kept in scrollback.
    pub scrollback_lines: u32,
}

/// How a pane's process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct ExitStatus {
    /// Exit code when it exited normally.
    pub code: Option<i32>,
    /// Signal number when a signal ended it.
    pub signal: Option<i32>,
}

impl ExitStatus {
    /// `SIGKILL`-style name of the terminating signal, if any.
    pub fn signal_name(&self) -> Option<String> {
        self.signal.map(crate::signals::signal_name)
    }
}

impl std::fmt::Display for ExitStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.code, self.signal_name()) {
            (Some(code), _) => write!(f, "exited with code {code}"),
            (None, Some(name)) => write!(f, "killed by {name}"),
            (None, None) => write!(f, "exited"),
        }
    }
}

#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    Arbitrary,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::VariantNames,
    strum::VariantArray,
)]
#[strum(serialize_all = "snake_case")]
pub enum PaneState {
    Running,
    Exited,
    /// Its process ended and will be started again (restart policy) after a backoff.
    Restarting,
    /// It was running when the daemon went away (crash, kill, reboot); its last
    /// screen and text stay readable.
    Lost,
    /// Its agent was put to rest (`fugue hibernate`): the program ended, its
    /// screen and records stay, and a prompt, an attach or `fugue wake` resumes
    /// it here on its recorded session. It counts against no limit and never
    /// expires.
    Hibernated,
}

impl PaneState {
    pub fn as_str(&self) -> &'static str {
        self.into()
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct SessionInfo {
    pub id: SessionId,
    pub name: String,
    pub cwd: String,
    pub panes: u32,
    pub running_panes: u32,
    /// Unix time in milliseconds.
    pub created_at_ms: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct PaneInfo {
    pub id: PaneId,
    pub session_id: SessionId,
    pub session_name: String,
    /// Position in the session's order, from 0.
    pub index: u32,
    pub title: String,
    pub purpose: String,
    /// The command as started (program and args).
    pub command: Vec<String>,
    pub shell: bool,
    pub cwd: String,
    pub state: PaneState,
    pub pid: u32,
    pub exit: Option<ExitStatus>,
    pub size: PaneSize,
    pub started_at_ms: u64,
    pub exited_at_ms: Option<u64>,
    pub restart: RestartPolicy,
    /// Times the process was started again since the count was last reset.
    pub restarts: u32,
    /// How the previous run ended, for a pane that was restarted.
    pub last_exit: Option<ExitStatus>,
    /// The session of the agent CLI running in it, once known (to resume it).
    #[serde(default)]
    pub agent_session: Option<AgentSession>,
    /// Its place in fugue's tmux, when it has one.
    #[serde(default)]
    pub tmux: Option<TmuxPlace>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct DaemonInfo {
    pub pid: u32,
    pub version: String,
    pub protocol_version: u32,
    pub socket: String,
    /// Why the daemon's socket is where it is ("in $XDG_RUNTIME_DIR", ...).
    pub socket_why: String,
    pub started_at_ms: u64,
    pub sessions: u32,
    pub panes: u32,
    pub running_panes: u32,
    /// Where sessions and panes are recorded; empty when they are not.
    pub state_path: String,
    /// What start-up restored ("restored 4 sessions, 12 panes: ..."), or how the
    /// daemon was upgraded; empty for a fresh start.
    pub recovery: String,
    /// Records that could not be written (a full disk, say) since start.
    pub unpersisted_writes: u64,
    /// Bytes that clients make the daemon hold now (queued replies and events,
    /// requests in flight, compiled patterns), and the budget for them.
    pub client_memory_used: u64,
    pub client_memory_limit: u64,
    /// Looks taken at agents' state since start, all panes together: flat while
    /// every pane is quiet (nothing runs on a timer for them).
    pub agent_looks: u64,
}

/// Output read from a pane.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct OutputChunk {
    pub pane: PaneInfo,
    /// Raw bytes (raw mode); empty in text mode.
    #[serde(with = "serde_bytes")]
    pub data: Vec<u8>,
    /// ANSI-stripped lines (text mode); empty in raw mode.
    pub lines: Vec<String>,
    /// Offset of the first byte in `data` (raw mode).
    pub start_offset: u64,
    /// Pass as `since` to read only what comes after this reply.
    pub next_offset: u64,
    /// Some of the requested output was dropped by the pane's limits.
    pub truncated: bool,
}

/// Reply to [`crate::requests::RenameSession`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct SessionRenamed {
    pub session: SessionInfo,
    pub previous_name: String,
}

/// Reply to [`crate::requests::WakePane`]: the pane, its agent ready.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct Woken {
    pub pane: PaneInfo,
    /// Set when the agent was started afresh with the pane's own command, not
    /// resumed, and why: its recorded session had no conversation (no turn
    /// ever ran in it).
    pub started_fresh: Option<String>,
}

/// Reply to [`crate::requests::WaitForExit`]: `exited` false means the timeout
/// passed first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct ExitWaited {
    pub pane: PaneInfo,
    pub exited: bool,
}

/// One pane as an overview shows it (see [`crate::requests::Overview`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct PaneOverview {
    pub pane: PaneInfo,
    /// What the agent CLI in it is doing; `None` when no agent CLI runs there.
    pub agent: Option<AgentInfo>,
    /// Its last non-empty line of text output (cleaned of controls), or empty.
    pub last_line: String,
}

/// What a grep across panes found (see [`crate::requests::Grep`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct GrepResult {
    pub matches: Vec<GrepMatch>,
    /// Panes whose text was searched.
    pub panes_searched: u32,
    /// More lines matched than were returned (`max_matches`, or the reply's
    /// byte limit).
    pub truncated: bool,
    /// The search's time ran out before every pane was searched.
    pub timed_out: bool,
}

/// One matching line of one pane's text view.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct GrepMatch {
    pub pane: PaneId,
    pub session_name: String,
    pub index: u32,
    pub title: String,
    /// The line's number in the pane's text view, from 1 for its first line
    /// ever (numbers stay when old lines are dropped).
    pub line: u64,
    /// The line (cut to [`crate::limits::MAX_GREP_LINE_BYTES`]).
    pub text: String,
}

/// Pushed events (after [`crate::requests::Subscribe`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Arbitrary)]
pub enum Event {
    SessionCreated(SessionInfo),
    SessionDestroyed {
        id: SessionId,
        name: String,
    },
    SessionRenamed {
        id: SessionId,
        previous_name: String,
        name: String,
    },
    PaneCreated(PaneInfo),
    PaneExited(PaneInfo),
    /// A pane's process was started again by its restart policy.
    PaneRestarted(PaneInfo),
    PaneRemoved {
        id: PaneId,
        session_id: SessionId,
    },
    PaneRenamed(PaneInfo),
    /// The agent CLI in a pane recorded the session it resumes from
    /// (`PaneInfo::agent_session`): from now on the pane can be hibernated and
    /// woken, or restarted on that conversation.
    AgentSessionRecorded(PaneInfo),
    PanesReordered {
        session_id: SessionId,
        panes: Vec<PaneId>,
    },
    /// The agent CLI in a pane changed state (see `requests::AgentStatus`).
    AgentStateChanged {
        pane: PaneId,
        session_id: SessionId,
        agent: AgentInfo,
    },
    /// A program asked its terminal to notify the user (OSC 9, OSC 777 or OSC 99).
    Notification {
        pane: PaneId,
        session_id: SessionId,
        title: String,
        body: String,
    },
    /// An agent session outside any pane appeared or changed state
    /// ([`crate::requests::BackgroundAgents`]).
    BackgroundAgentChanged(BackgroundAgent),
    /// It ended (its process is gone).
    BackgroundAgentGone {
        id: String,
    },
    /// Events were dropped because this client read too slowly; re-list to resync.
    Lagged {
        missed: u64,
    },
    /// Bytes that draw an attached pane's whole current screen: sent first on
    /// attach, and again instead of output a slow client could not keep up with.
    Redraw {
        pane: PaneId,
        #[serde(with = "serde_bytes")]
        data: Vec<u8>,
    },
    /// Output of an attached pane, exactly as the program wrote it.
    Output {
        pane: PaneId,
        #[serde(with = "serde_bytes")]
        data: Vec<u8>,
    },
    Title {
        pane: PaneId,
        title: String,
    },
    Bell {
        pane: PaneId,
    },
    /// An attached pane's process ended; the attachment ends with it.
    Exited {
        pane: PaneId,
        status: ExitStatus,
    },
}
