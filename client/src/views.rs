//! What the CLI's `--json` and the MCP tools show of fugue's objects: one set of
//! serializable views, built from the protocol's types in one place, so a pane, a
//! session or a screen reads the same whichever way it was asked for.
//!
//! With the `schema` feature the views also describe themselves as JSON Schema
//! (the MCP bridge publishes them as its tools' output schemas).

use fugue_protocol::{
    AgentKind, AgentState, Attention, CaptureResult, DaemonInfo, OutputChunk, PaneInfo, RowOrigin, SessionInfo,
    StateSource, TurnState, WaitCondition, WaitOutcome,
};
use serde::Serialize;

#[cfg(feature = "schema")]
use schemars::JsonSchema;

/// JSON text as fugue writes it for programs (`--json`, HTTP bodies): every
/// character a terminal would act on or that reorders or hides text (see
/// `limits::is_unsafe_char`: C1 controls, DEL, bidirectional overrides and
/// isolates, U+061C) is written as a `\u` escape, as serde_json already does for
/// C0. Lossless for a program, harmless when the bytes reach a terminal.
pub fn safe_json(value: &impl Serialize, pretty: bool) -> String {
    let text = match pretty {
        true => serde_json::to_string_pretty(value),
        false => serde_json::to_string(value),
    }
    .unwrap_or_default();
    escape_unsafe_in_json(&text)
}

pub use fugue_protocol::limits::{escape_unsafe_in_json, JsonEscaper};

/// Whether an HTTP body of this `Content-Type` is JSON text fugue escapes as it
/// leaves ([`escape_json_stream`]): JSON, and server-sent events carrying JSON.
pub fn is_json_content_type(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or_default().trim();
    essence.eq_ignore_ascii_case("application/json") || essence.eq_ignore_ascii_case("text/event-stream")
}

/// A stream of JSON text (an HTTP body, server-sent events) with
/// [`JsonEscaper`] applied to each piece as it passes.
pub fn escape_json_stream<S, B, E>(pieces: S) -> impl futures::Stream<Item = Result<Vec<u8>, E>>
where
    S: futures::Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
{
    use futures::StreamExt;
    let mut escaper = JsonEscaper::default();
    let end = futures::stream::once(async { None });
    pieces.map(Some).chain(end).map(move |piece| {
        let mut out = Vec::new();
        match piece {
            Some(Ok(piece)) => escaper.push(piece.as_ref(), &mut out),
            Some(Err(e)) => return Err(e),
            None => escaper.finish(&mut out),
        }
        Ok(out)
    })
}

pub use fugue_protocol::now_ms;

/// Whether a process runs, and how it ended.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct StateView {
    /// `running`, `exited`, `restarting` (its restart policy starts it again
    /// after a backoff) or `lost` (it was running when the daemon went away; its
    /// last screen and text stay readable).
    pub status: String,
    /// Exit code, if it exited normally.
    pub exit_code: Option<i32>,
    /// Name of the signal that ended it (e.g. `SIGKILL`).
    pub signal: Option<String>,
}

impl From<&PaneInfo> for StateView {
    fn from(info: &PaneInfo) -> Self {
        Self {
            status: info.state.as_str().into(),
            exit_code: info.exit.and_then(|e| e.code),
            signal: info.exit.and_then(|e| e.signal_name()),
        }
    }
}

/// One pane (a terminal): its names, its process and its size.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct PaneView {
    /// The pane's id; any unique prefix of 4+ hex digits also names it.
    pub id: String,
    /// The host it runs on, in listings that span hosts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    pub session: String,
    pub session_id: String,
    /// Position in its session (`SESSION:INDEX` names it).
    pub index: u32,
    pub title: String,
    /// What it is for, as its creator said.
    pub purpose: String,
    pub command: Vec<String>,
    /// Run through the user's shell.
    pub shell: bool,
    pub cwd: String,
    pub pid: u32,
    pub cols: u16,
    pub rows: u16,
    #[serde(flatten)]
    pub state: StateView,
    pub started_at_ms: u64,
    pub exited_at_ms: Option<u64>,
    /// How long it ran, or has been running.
    pub uptime_ms: u64,
    /// `never`, `on-failure` or `always`.
    pub restart: String,
    /// Times its restart policy started it again (reset after a minute of healthy running).
    pub restarts: u32,
    /// How the run before the last restart ended.
    pub last_exit: Option<String>,
    /// The agent CLI's own session (`fugue resume` starts it again).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_session: Option<AgentSessionView>,
    /// Where it sits in fugue's tmux, when it has a place there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tmux: Option<TmuxPlaceView>,
}

/// A pane's place in fugue's tmux (`fugue tmux`, the bridge): tmux's names
/// and ids for it, and the pane whose program made it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct TmuxPlaceView {
    /// The tmux server: its `-L`/`-S` label, or `default`.
    pub server: String,
    pub session: String,
    /// `$N`.
    pub session_id: String,
    /// `@N`.
    pub window_id: String,
    pub window: String,
    /// How the window lays its panes out: tiled, main-vertical, ...
    pub layout: String,
    /// `%N`: what `TMUX_PANE` holds in it.
    pub pane_id: String,
    /// Made through tmux (its kill commands may end it), not by fugue for a person.
    pub made_by_tmux: bool,
    /// The pane whose program made it (a lead agent, for its teammates).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// That parent no longer runs: this pane outlived the program that made it.
    pub parent_exited: bool,
}

impl From<&fugue_protocol::TmuxPlace> for TmuxPlaceView {
    fn from(place: &fugue_protocol::TmuxPlace) -> Self {
        Self {
            server: place.server.clone(),
            session: place.session.clone(),
            session_id: format!("${}", place.session_id),
            window_id: format!("@{}", place.window_id),
            window: place.window_name.clone(),
            layout: place.layout.clone(),
            pane_id: format!("%{}", place.pane_id),
            made_by_tmux: place.made_by_tmux,
            parent: place.parent.map(|p| p.to_string()),
            parent_exited: place.parent_exited,
        }
    }
}

/// An agent CLI's own session, recorded with its pane.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct AgentSessionView {
    pub agent: AgentKind,
    pub id: String,
    /// Whether a turn ran in it: a wake resumes it; without one, it starts
    /// the agent afresh (there is nothing to resume).
    pub conversation: bool,
}

/// A pane woken from hibernation: the pane, and why its agent was started
/// afresh rather than resumed, if it was.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct WokenView {
    #[serde(flatten)]
    pub pane: PaneView,
    /// Set when no turn ran in its recorded session (nothing to resume): the
    /// agent was started afresh with the pane's own command.
    pub started_fresh: Option<String>,
}

impl From<&fugue_protocol::Woken> for WokenView {
    fn from(woken: &fugue_protocol::Woken) -> Self {
        Self {
            pane: PaneView::from(&woken.pane),
            started_fresh: woken.started_fresh.clone(),
        }
    }
}

impl From<&PaneInfo> for PaneView {
    fn from(info: &PaneInfo) -> Self {
        Self {
            id: info.id.to_string(),
            host: None,
            session: info.session_name.clone(),
            session_id: info.session_id.to_string(),
            index: info.index,
            title: info.title.clone(),
            purpose: info.purpose.clone(),
            command: info.command.clone(),
            shell: info.shell,
            cwd: info.cwd.clone(),
            pid: info.pid,
            cols: info.size.cols,
            rows: info.size.rows,
            state: info.into(),
            started_at_ms: info.started_at_ms,
            exited_at_ms: info.exited_at_ms,
            uptime_ms: uptime_ms(info),
            restart: info.restart.as_str().into(),
            restarts: info.restarts,
            last_exit: info.last_exit.map(|e| e.to_string()),
            agent_session: info.agent_session.as_ref().map(|s| AgentSessionView {
                agent: s.agent,
                id: s.id.clone(),
                conversation: s.conversation,
            }),
            tmux: info.tmux.as_ref().map(TmuxPlaceView::from),
        }
    }
}

/// How long a pane ran, or has been running.
pub fn uptime_ms(info: &PaneInfo) -> u64 {
    info.exited_at_ms
        .unwrap_or_else(now_ms)
        .saturating_sub(info.started_at_ms)
}

/// One session.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct SessionView {
    pub id: String,
    pub name: String,
    pub cwd: String,
    pub panes: u32,
    pub running_panes: u32,
    pub created_at_ms: u64,
}

impl From<&SessionInfo> for SessionView {
    fn from(info: &SessionInfo) -> Self {
        Self {
            id: info.id.to_string(),
            name: info.name.clone(),
            cwd: info.cwd.clone(),
            panes: info.panes,
            running_panes: info.running_panes,
            created_at_ms: info.created_at_ms,
        }
    }
}

/// The daemon.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct DaemonView {
    pub pid: u32,
    pub version: String,
    pub protocol_version: u32,
    pub socket: String,
    /// Why the socket is there ("in $XDG_RUNTIME_DIR", ...).
    pub socket_why: String,
    pub started_at_ms: u64,
    pub uptime_ms: u64,
    pub sessions: u32,
    pub panes: u32,
    pub running_panes: u32,
    /// Where sessions and panes are recorded (empty: nowhere).
    pub state_path: String,
    /// What start-up restored or how the daemon was upgraded (empty: a fresh start).
    pub recovery: String,
    /// Records that could not be written (a full disk) since start.
    pub unpersisted_writes: u64,
    /// Bytes clients make the daemon hold now, and the daemon's budget for them.
    pub client_memory_used: u64,
    pub client_memory_limit: u64,
    /// Looks taken at agents' state since start: flat while every pane is quiet.
    pub agent_looks: u64,
}

impl From<&DaemonInfo> for DaemonView {
    fn from(info: &DaemonInfo) -> Self {
        Self {
            pid: info.pid,
            version: info.version.clone(),
            protocol_version: info.protocol_version,
            socket: info.socket.clone(),
            socket_why: info.socket_why.clone(),
            started_at_ms: info.started_at_ms,
            uptime_ms: now_ms().saturating_sub(info.started_at_ms),
            sessions: info.sessions,
            panes: info.panes,
            running_panes: info.running_panes,
            state_path: info.state_path.clone(),
            recovery: info.recovery.clone(),
            unpersisted_writes: info.unpersisted_writes,
            client_memory_used: info.client_memory_used,
            client_memory_limit: info.client_memory_limit,
            agent_looks: info.agent_looks,
        }
    }
}

/// Output read from a pane.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct ReadView {
    pub text: String,
    /// The text as lines (text reads from the CLI; the MCP tools send `text` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<Vec<String>>,
    #[serde(flatten)]
    pub state: StateView,
    /// Some requested output was dropped by the output limits.
    pub truncated: bool,
    /// Offset of the first byte returned.
    pub start_offset: u64,
    /// Pass as `since` (`since_offset`) to read only newer output next time.
    pub next_offset: u64,
}

impl ReadView {
    /// The view of `chunk`, whose output the caller rendered as `text`.
    pub fn new(chunk: &OutputChunk, text: String, lines: Option<Vec<String>>) -> Self {
        Self {
            text,
            lines,
            state: (&chunk.pane).into(),
            truncated: chunk.truncated,
            start_offset: chunk.start_offset,
            next_offset: chunk.next_offset,
        }
    }
}

/// Where the cursor is, 0-based on the visible screen.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct CursorView {
    pub row: u16,
    pub col: u16,
    pub visible: bool,
}

/// What a pane's screen shows.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct CaptureView {
    /// One string per row, trailing spaces trimmed.
    pub lines: Vec<String>,
    /// Line number of the first line (negative: scrollback).
    pub first_line: i64,
    pub cursor: CursorView,
    pub cols: u16,
    pub rows: u16,
    pub alternate_screen: bool,
    pub title: String,
    pub scrollback_lines: u32,
}

impl From<CaptureResult> for CaptureView {
    fn from(c: CaptureResult) -> Self {
        Self {
            lines: c.lines,
            first_line: c.first_line,
            cursor: CursorView {
                row: c.cursor_row,
                col: c.cursor_col,
                visible: c.cursor_visible,
            },
            cols: c.size.cols,
            rows: c.size.rows,
            alternate_screen: c.alternate_screen,
            title: c.title,
            scrollback_lines: c.scrollback_lines,
        }
    }
}

/// How a wait ended.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct WaitView {
    /// Which condition ended the wait.
    pub condition: WaitCondition,
    /// The text the pattern matched.
    pub matched: Option<String>,
    pub elapsed_ms: u64,
    #[serde(flatten)]
    pub state: StateView,
    /// Output offset at the end of the wait; pass as `since` (MCP: `since_offset`) to continue.
    pub next_offset: u64,
}

impl From<WaitOutcome> for WaitView {
    fn from(outcome: WaitOutcome) -> Self {
        Self {
            condition: outcome.condition,
            matched: outcome.matched,
            elapsed_ms: outcome.elapsed_ms,
            state: (&outcome.pane).into(),
            next_offset: outcome.next_offset,
        }
    }
}

/// What the agent CLI in a pane is doing: `fugue_agent_status`, `fugue events` and
/// the browser's events socket all show it this way.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct AgentStateView {
    /// Which agent CLI it is; null when none was recognised.
    pub agent: Option<AgentKind>,
    /// What it is doing, in one word. `unknown`: recognised but unreadable
    /// (never answerable); `waiting_for_answer`: it asked a question only a
    /// person answers; `hibernated`: put to rest by fugue, a prompt wakes it.
    pub state: AgentState,
    /// Is a turn running.
    pub turn: TurnState,
    /// Does the agent need a person: `question` only a person answers;
    /// `finished_unseen`, a turn ended and nobody looked since.
    pub needs: Attention,
    /// Where the state was read: `hook` (the agent's own hook, most trusted),
    /// `terminal` (the program status or window title it set), `session_file`
    /// (its status file) or `screen`.
    pub source: StateSource,
    /// The agent's version, when it shows or records it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The agent's own session id, to resume it later.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Unix ms since the state was first seen.
    pub since: u64,
    /// The screen lines (or status file fields) that decided the state.
    pub evidence: Vec<String>,
    /// While it waits for permission: this prompt's id, which an answer
    /// (`fugue approve`, `fugue_approve`) must name, so it can only go to the
    /// prompt that was looked at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_id: Option<String>,
    /// What each signal said at this look (the one named by `source` decided),
    /// with since when: the evidence for reporting a wrong state.
    pub signals: Vec<SignalView>,
    /// Text a person typed into the agent's input box and has not sent: a
    /// prompt is refused (`draft_present`) while it is there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub draft: Option<String>,
    /// While `limited`: when the limit resets (Unix ms), when the CLI says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resets_at: Option<u64>,
    /// The tokens its session used so far, where the CLI records them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<TokensView>,
}

/// Tokens an agent's session used (Claude Code's transcript, Codex's events).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct TokensView {
    pub input: u64,
    /// Of `input`, read from the model's cache.
    pub cached_input: u64,
    pub output: u64,
    pub total: u64,
}

impl From<&fugue_protocol::TokenTotals> for TokensView {
    fn from(t: &fugue_protocol::TokenTotals) -> Self {
        TokensView {
            input: t.input,
            cached_input: t.cached_input,
            output: t.output,
            total: t.input.saturating_add(t.output),
        }
    }
}

/// What one signal of an agent's state said (`fugue agent --explain`).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct SignalView {
    /// Which signal it is.
    pub source: StateSource,
    /// What it read: the hook's report, the status file's status, the program
    /// status or window title, the screen's marker lines.
    pub reading: String,
    /// The state it means now, weighed against the screen; absent when it says
    /// nothing now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub means: Option<AgentState>,
    /// Unix ms since it has meant that.
    pub since: u64,
}

impl From<&fugue_protocol::SignalReading> for SignalView {
    fn from(reading: &fugue_protocol::SignalReading) -> Self {
        SignalView {
            source: reading.source,
            reading: reading.reading.clone(),
            means: reading.means,
            since: reading.since_ms,
        }
    }
}

impl From<&fugue_protocol::AgentInfo> for AgentStateView {
    fn from(info: &fugue_protocol::AgentInfo) -> Self {
        AgentStateView {
            agent: info.agent,
            state: info.state,
            turn: info.state.turn(),
            needs: info.needs,
            source: info.source,
            version: info.version.clone(),
            session_id: info.session_id.clone(),
            since: info.since_ms,
            evidence: info.evidence.clone(),
            prompt_id: info.prompt_id.clone(),
            signals: info.signals.iter().map(SignalView::from).collect(),
            draft: info.draft.clone(),
            resets_at: info.resets_at_ms,
            tokens: info.tokens.as_ref().map(TokensView::from),
        }
    }
}

/// An answer to an agent's permission prompt (`fugue approve --json`,
/// `POST /api/panes/{pane}/approve|deny`).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct AnsweredView {
    /// `approved` or `denied`: the answer the prompt has (an earlier one if `already`).
    pub answer: String,
    /// It had been answered before: nothing was sent now.
    pub already: bool,
}

impl From<&fugue_protocol::PermissionAnswered> for AnsweredView {
    fn from(answered: &fugue_protocol::PermissionAnswered) -> Self {
        AnsweredView {
            answer: answered.answer.past().into(),
            already: answered.already,
        }
    }
}

/// What a grep across panes found (`fugue grep --json`, `fugue_grep`).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct GrepView {
    pub matches: Vec<GrepMatchView>,
    /// Panes whose text was searched.
    pub panes_searched: u32,
    /// More lines matched than were returned (raise max_matches, or narrow the pattern).
    pub truncated: bool,
    /// The search's 5 s ran out before every pane was searched.
    pub timed_out: bool,
}

/// One matching line: which pane, its line number, the line.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct GrepMatchView {
    /// The pane's id (a terminal_id for the MCP tools).
    pub pane: String,
    /// SESSION:INDEX.
    pub label: String,
    pub title: String,
    /// The line's number in the pane's text view (from 1 for its first line
    /// ever; `fugue read` shows the newest lines).
    pub line: u64,
    pub text: String,
}

impl From<&fugue_protocol::GrepResult> for GrepView {
    fn from(result: &fugue_protocol::GrepResult) -> Self {
        GrepView {
            matches: result
                .matches
                .iter()
                .map(|m| GrepMatchView {
                    pane: m.pane.to_string(),
                    label: format!("{}:{}", m.session_name, m.index),
                    title: m.title.clone(),
                    line: m.line,
                    text: m.text.clone(),
                })
                .collect(),
            panes_searched: result.panes_searched,
            truncated: result.truncated,
            timed_out: result.timed_out,
        }
    }
}

/// One pane at a glance (`fugue overview`, `GET /api/overview`): the pane, what
/// its agent CLI is doing, and its last line of output.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct OverviewView {
    /// What the row is: `pane` (a fugue pane) or `claude_background` (a
    /// `claude --bg` session outside any pane, `background` says which).
    pub origin: RowOrigin,
    /// The pane; null for a row of another origin.
    pub pane: Option<PaneView>,
    /// The session outside any pane; null for a pane.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub background: Option<BackgroundView>,
    /// Null when no agent CLI runs in the pane.
    pub agent: Option<AgentStateView>,
    /// Its last non-empty line of text output (controls removed).
    pub last_line: String,
    /// Its agent needs a person now: asks for permission or a question
    /// (`Attention::needs_you`, the one definition). Since when: `agent.since`.
    pub needs_you: bool,
}

/// The fleet's panes, grouped by endpoint (`GET /api/fleet`): every daemon the
/// hosts file's `[[fleet]]` sources find, with its panes or why it did not answer.
#[derive(Debug, Clone, Default, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct FleetView {
    pub endpoints: Vec<FleetEndpointView>,
    /// Endpoints that matched past the bound (500), counted and not asked.
    pub over: usize,
    /// Sources that could not be asked (an engine not running), one line each.
    pub problems: Vec<String>,
}

/// One endpoint of the fleet and its panes.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct FleetEndpointView {
    /// Its `--host` address (`docker://NAME`, `k8s://NS/POD`, a host's name).
    pub endpoint: String,
    /// The source that found it (`docker label fugue.enable=true`).
    pub source: String,
    /// Why it did not answer; null when it did.
    pub error: Option<String>,
    pub panes: Vec<OverviewView>,
}

/// An agent session outside any pane (`claude --bg`): `fugue attach
/// bg:ID` opens it in a new pane.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct BackgroundView {
    /// The CLI's own short id (`claude attach ID`).
    pub id: String,
    /// What `fugue attach` takes to open it: `bg:ID`.
    pub target: String,
    pub pid: u32,
    pub cwd: String,
    pub name: String,
}

impl From<&fugue_protocol::BackgroundAgent> for OverviewView {
    fn from(row: &fugue_protocol::BackgroundAgent) -> Self {
        OverviewView {
            origin: row.origin,
            pane: None,
            background: Some(BackgroundView {
                id: row.id.clone(),
                target: format!("bg:{}", row.id),
                pid: row.pid,
                cwd: row.cwd.clone(),
                name: row.name.clone(),
            }),
            agent: Some((&row.agent).into()),
            last_line: String::new(),
            needs_you: row.agent.needs.needs_you(),
        }
    }
}

/// Every row of an overview: the panes, then the sessions outside any pane.
pub fn overview_rows(
    panes: &[fugue_protocol::PaneOverview],
    background: &[fugue_protocol::BackgroundAgent],
) -> Vec<OverviewView> {
    let panes = panes.iter().map(OverviewView::from);
    panes.chain(background.iter().map(OverviewView::from)).collect()
}

impl From<&fugue_protocol::PaneOverview> for OverviewView {
    fn from(overview: &fugue_protocol::PaneOverview) -> Self {
        OverviewView {
            origin: RowOrigin::Pane,
            pane: Some((&overview.pane).into()),
            background: None,
            agent: overview.agent.as_ref().map(AgentStateView::from),
            last_line: overview.last_line.clone(),
            needs_you: overview.agent.as_ref().is_some_and(|a| a.needs.needs_you()),
        }
    }
}

/// A lifecycle event (`type` and what changed), as `fugue events --json` prints
/// it and fugue-web's events socket sends it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventView {
    SessionCreated {
        session_id: String,
        name: String,
    },
    SessionDestroyed {
        session_id: String,
        name: String,
    },
    SessionRenamed {
        session_id: String,
        name: String,
    },
    PaneCreated {
        session_id: String,
        pane: PaneView,
    },
    PaneExited {
        session_id: String,
        pane: PaneView,
    },
    /// Its restart policy started the pane's process again.
    PaneRestarted {
        session_id: String,
        pane: PaneView,
    },
    PaneRenamed {
        session_id: String,
        pane: PaneView,
    },
    /// The pane's agent recorded the session it resumes from: it can now be
    /// hibernated, or restarted on that conversation.
    AgentSessionRecorded {
        session_id: String,
        pane: PaneView,
    },
    PaneRemoved {
        session_id: String,
        pane_id: String,
    },
    /// The session's panes in their new order.
    PanesReordered {
        session_id: String,
        panes: Vec<String>,
    },
    /// The agent CLI in a pane changed state.
    #[serde(rename = "agent_state")]
    AgentState {
        session_id: String,
        pane_id: String,
        agent: AgentStateView,
    },
    /// A program asked its terminal to notify the user (OSC 9, 777 or 99).
    Notification {
        session_id: String,
        pane_id: String,
        title: String,
        body: String,
    },
    /// An agent session outside any pane (`claude --bg`) appeared or changed
    /// state: its overview row.
    BackgroundAgent {
        row: Box<OverviewView>,
    },
    /// That session ended.
    BackgroundAgentGone {
        id: String,
    },
    /// Events were dropped because this reader was too slow; list again to resync.
    Lagged {
        missed: u64,
    },
}

impl EventView {
    /// The view of a lifecycle event; `None` for the events of an attached pane's
    /// stream (output, redraws, titles, bells, its exit).
    pub fn of(event: &fugue_protocol::Event) -> Option<EventView> {
        use fugue_protocol::Event;
        let pane = |info: &PaneInfo| (info.session_id.to_string(), PaneView::from(info));
        Some(match event {
            Event::SessionCreated(info) => EventView::SessionCreated {
                session_id: info.id.to_string(),
                name: info.name.clone(),
            },
            Event::SessionDestroyed { id, name } => EventView::SessionDestroyed {
                session_id: id.to_string(),
                name: name.clone(),
            },
            Event::SessionRenamed { id, name, .. } => EventView::SessionRenamed {
                session_id: id.to_string(),
                name: name.clone(),
            },
            Event::PaneCreated(info) => {
                let (session_id, pane) = pane(info);
                EventView::PaneCreated { session_id, pane }
            }
            Event::PaneExited(info) => {
                let (session_id, pane) = pane(info);
                EventView::PaneExited { session_id, pane }
            }
            Event::PaneRestarted(info) => {
                let (session_id, pane) = pane(info);
                EventView::PaneRestarted { session_id, pane }
            }
            Event::PaneRenamed(info) => {
                let (session_id, pane) = pane(info);
                EventView::PaneRenamed { session_id, pane }
            }
            Event::AgentSessionRecorded(info) => {
                let (session_id, pane) = pane(info);
                EventView::AgentSessionRecorded { session_id, pane }
            }
            Event::PaneRemoved { id, session_id } => EventView::PaneRemoved {
                session_id: session_id.to_string(),
                pane_id: id.to_string(),
            },
            Event::PanesReordered { session_id, panes } => EventView::PanesReordered {
                session_id: session_id.to_string(),
                panes: panes.iter().map(|p| p.to_string()).collect(),
            },
            Event::AgentStateChanged {
                pane,
                session_id,
                agent,
            } => EventView::AgentState {
                session_id: session_id.to_string(),
                pane_id: pane.to_string(),
                agent: agent.into(),
            },
            Event::Notification {
                pane,
                session_id,
                title,
                body,
            } => EventView::Notification {
                session_id: session_id.to_string(),
                pane_id: pane.to_string(),
                title: title.clone(),
                body: body.clone(),
            },
            Event::BackgroundAgentChanged(row) => EventView::BackgroundAgent {
                row: Box::new(row.into()),
            },
            Event::BackgroundAgentGone { id } => EventView::BackgroundAgentGone { id: id.clone() },
            Event::Lagged { missed } => EventView::Lagged { missed: *missed },
            Event::Redraw { .. }
            | Event::Output { .. }
            | Event::Title { .. }
            | Event::Bell { .. }
            | Event::Exited { .. } => return None,
        })
    }
}

/// [`EventView::of`] as JSON.
pub fn lifecycle_event(event: &fugue_protocol::Event) -> Option<serde_json::Value> {
    EventView::of(event).and_then(|view| serde_json::to_value(view).ok())
}

/// The JSON Schema of [`EventView`], as committed in `docs/events.schema.json`
/// (the one description of what `fugue events --json` and the browser's events
/// socket send).
#[cfg(feature = "schema")]
pub fn events_schema() -> String {
    let schema = schemars::schema_for!(EventView);
    serde_json::to_string_pretty(&schema).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod safe_json_tests {
    use super::*;
    use proptest::prelude::*;

    /// What a hostile client or program puts in a name, title or line.
    const HOSTILE: &[&str] = &[
        "\u{1b}]0;PWNED\u{7}",
        "\u{1b}[2J",
        "\u{202e}",
        "\u{2066}",
        "\u{061c}",
        "\u{9b}31m",
        "\u{7f}",
        "\u{200f}",
        "\u{200d}",
        "\u{feff}",
    ];

    fn assert_safe(text: &str) {
        let bad: Vec<char> = text
            .chars()
            .filter(|c| fugue_protocol::limits::is_unsafe_char(*c) && !matches!(c, '\n' | '\r' | '\t'))
            .collect();
        assert!(bad.is_empty(), "{bad:?} raw in {text:?}");
    }

    #[test]
    fn the_hostile_set_leaves_as_escapes() {
        for hostile in HOSTILE {
            let value = serde_json::json!({"command": format!("rm{hostile}x"), "list": [hostile]});
            for pretty in [false, true] {
                let text = safe_json(&value, pretty);
                assert_safe(&text);
                assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), value);
            }
        }
        assert_eq!(safe_json(&"a\u{202e}b", false), "\"a\\u202eb\"");
        assert_eq!(safe_json(&"中文 ok", false), "\"中文 ok\"");
    }

    proptest! {
        /// However the text is cut into pieces, the escaped stream is the
        /// escaped whole.
        #[test]
        fn pieces_escape_as_the_whole(text in "(\\PC|[\u{0}-\u{a0}\u{2000}-\u{2070}\u{feff}])*", cuts in proptest::collection::vec(0usize..64, 0..6)) {
            let json = serde_json::to_string(&text).unwrap();
            let bytes = json.as_bytes();
            let mut escaper = JsonEscaper::default();
            let mut out = Vec::new();
            let mut at = 0;
            for cut in cuts {
                let to = (at + cut).min(bytes.len());
                escaper.push(&bytes[at..to], &mut out);
                at = to;
            }
            escaper.push(&bytes[at..], &mut out);
            escaper.finish(&mut out);
            prop_assert_eq!(String::from_utf8(out).unwrap(), escape_unsafe_in_json(&json));
        }

        #[test]
        fn any_string_leaves_safe_and_lossless(text in "\\PC*|[\u{0}-\u{a0}\u{2000}-\u{2070}\u{61c}\u{feff}]{0,40}") {
            let value = serde_json::json!({"text": text, "nested": {"k": [text.clone()]}});
            let out = safe_json(&value, true);
            assert_safe(&out);
            prop_assert_eq!(serde_json::from_str::<serde_json::Value>(&out).unwrap(), value);
        }
    }
}

#[cfg(all(test, feature = "schema"))]
mod schema_tests {
    /// Fails when the committed schema is not what the views describe now;
    /// `FUGUE_WRITE_SCHEMA=1 cargo test -p fugue-client --features schema` writes it.
    #[test]
    fn the_committed_events_schema_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/events.schema.json");
        let now = super::events_schema();
        if std::env::var_os("FUGUE_WRITE_SCHEMA").is_some() {
            std::fs::write(&path, &now).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == now,
            "docs/events.schema.json is stale: run FUGUE_WRITE_SCHEMA=1 cargo test -p fugue-client --features schema"
        );
        assert!(
            now.contains("\"agent_state\"") && now.contains("\"pane_created\""),
            "{now}"
        );
    }
}
