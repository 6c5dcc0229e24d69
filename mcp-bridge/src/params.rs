//! Tool inputs and results. Doc comments become the JSON schema descriptions the
//! agent reads, so they say what each field means and what its default is.

use fugue_client::views::{PaneView, SessionView, StateView};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Environment as ACP's `[{name, value}]` or a plain object `{"NAME": "value"}`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum EnvInput {
    List(Vec<EnvEntry>),
    Map(BTreeMap<String, String>),
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct EnvEntry {
    pub name: String,
    pub value: String,
}

impl EnvInput {
    pub fn into_vars(self) -> Vec<fugue_protocol::EnvVar> {
        match self {
            EnvInput::List(list) => list
                .into_iter()
                .map(|e| fugue_protocol::EnvVar {
                    name: e.name,
                    value: e.value,
                })
                .collect(),
            EnvInput::Map(map) => map
                .into_iter()
                .map(|(name, value)| fugue_protocol::EnvVar { name, value })
                .collect(),
        }
    }
}

// ---- sessions ----

#[derive(Debug, Deserialize, JsonSchema)]
pub struct CreateSessionParams {
    /// Session name: 1-64 characters, no '.', ':', '/', whitespace or control characters.
    pub name: String,
    /// Working directory for the session's terminals (absolute, or relative to the bridge's). Default: the bridge's.
    pub cwd: Option<String>,
    /// Environment for every terminal of the session.
    pub env: Option<EnvInput>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SessionParams {
    /// Session name, UUID, or unique UUID prefix (4+ hex digits).
    pub session: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RenameSessionParams {
    /// Session name, UUID, or unique UUID prefix.
    pub session: String,
    /// The new name.
    pub name: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionList {
    pub sessions: Vec<SessionView>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct KillSessionResult {
    pub success: bool,
    pub message: String,
    pub session_id: String,
    pub session_name: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct RenameSessionResult {
    pub success: bool,
    pub session_id: String,
    pub previous_name: String,
    pub new_name: String,
}

// ---- terminals ----

#[derive(Debug, Deserialize, JsonSchema)]
pub struct StartParams {
    /// Host to run on: a hosts.toml name or [user@]host[:port] (over ssh). Default: the bridge's daemon. The terminal id then reads HOST/ID.
    pub host: Option<String>,
    /// What this terminal is for, shown in lists so people and agents recognise it (e.g. "web dev server port 9100").
    pub purpose: String,
    /// Command to run. With shell=true it is typed into an interactive shell (so shell syntax works and the shell stays after it ends); optional then.
    pub command: Option<String>,
    /// Arguments, each passed as one word.
    pub args: Option<Vec<String>>,
    /// true (default): start the user's $SHELL and type the command into it. false: run the command directly.
    pub shell: Option<bool>,
    /// Short label shown beside the terminal. Default: the command's name.
    pub title: Option<String>,
    /// Working directory: absolute, or relative to the session's. Must exist.
    pub cwd: Option<String>,
    /// Extra environment: [{"name","value"}] or {"NAME":"value"}.
    pub env: Option<EnvInput>,
    /// Bytes of raw output kept; older output is dropped from the start at a character boundary. Default 1 MiB.
    pub output_byte_limit: Option<u64>,
    /// Terminal width. Default 120.
    pub cols: Option<u16>,
    /// Terminal height. Default 40.
    pub rows: Option<u16>,
    /// Session to start in. Default: the bridge's session.
    pub session: Option<String>,
    /// Start the process again when it ends: "never" (default), "on-failure" or
    /// "always"; backoff from 1 s doubling to 60 s; kept across daemon restarts
    /// (a dev server comes back once fugued starts).
    pub restart: Option<String>,
    /// Restarts allowed in a row before the terminal stays exited (default: no limit).
    pub max_restarts: Option<u32>,
    /// Start in a git worktree of its own, made from the repository of cwd (or
    /// the session's directory) on a new branch fugue/NAME, outside the working
    /// tree: give NAME, or "" for a generated one. Uncommitted changes are not
    /// carried. This machine only (no host).
    pub worktree: Option<String>,
    /// The commit or ref the worktree starts from. Default: HEAD.
    pub base: Option<String>,
    /// Run the command in a new container of an image on this machine's
    /// container engine, with only the terminal's directory (or worktree) of
    /// this machine's files, as a non-root user; removed with the terminal.
    /// The command runs directly in the container (no shell of this machine).
    /// This machine only (no host).
    pub sandbox: Option<fugue_client::sandbox::Asked>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct StartResult {
    pub terminal_id: String,
    pub session: String,
    pub pid: u32,
    pub title: String,
    /// The worktree's directory, when started in one.
    pub worktree: Option<String>,
    /// Its branch.
    pub branch: Option<String>,
    /// What to know about it (uncommitted changes that were not carried).
    pub notes: Vec<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReleaseParams {
    /// Terminal id (or unique prefix, or SESSION:INDEX).
    pub terminal_id: String,
    /// Also remove its worktree and branch with whatever work they hold. Without
    /// it, a worktree holding uncommitted or unmerged work is kept (the result
    /// says what it holds).
    pub discard: Option<bool>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ReleaseResult {
    pub success: bool,
    pub message: String,
    /// The terminal's worktree, if it had one.
    pub worktree: Option<String>,
    /// What became of it: `removed`, `kept` or `gone` (deleted outside fugue).
    pub worktree_outcome: Option<String>,
    /// What a kept worktree holds.
    pub holds: Vec<String>,
    /// Teardown commands that failed before the worktree was removed.
    pub notes: Vec<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct DiffParams {
    /// Terminal id of a terminal started in a worktree.
    pub terminal_id: String,
    /// Only files with lines added and removed, no hunks.
    pub stat_only: Option<bool>,
    /// `files` (default: each file's hunks) or `patch`: the files' counts
    /// and `patch`, a git patch that `git apply` takes on the base commit.
    pub format: Option<fugue_client::diff::DiffFormat>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReviewParams {
    /// Terminal id of an agent started in a worktree.
    pub terminal_id: String,
    /// The comments, sent as one prompt in this order (at most 100).
    pub comments: Vec<fugue_client::review::ReviewComment>,
    /// A retry under the same key sends nothing and returns the first receipt.
    pub idempotency_key: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct FinishParams {
    /// The worktree's name (see fugue_worktrees), or the id of the terminal
    /// that works in it.
    pub worktree: String,
    /// merge only: one commit of all the branch's changes instead of a merge commit.
    pub squash: Option<bool>,
    /// merge only: the branch to merge into. Default: the one it started from.
    pub into: Option<String>,
    /// merge only: commit the worktree's uncommitted files on its branch first.
    pub commit: Option<bool>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct DiscardResult {
    pub worktree: String,
    pub branch: String,
    /// `removed`, or `gone` (it had been deleted outside fugue; forgotten now).
    pub outcome: String,
    /// Teardown commands that failed before the worktree was removed.
    pub notes: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct WorktreesResult {
    pub worktrees: Vec<fugue_client::worktree::WorktreeView>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListParams {
    /// Session to list. Default: the bridge's session.
    pub session: Option<String>,
    /// List terminals of every session.
    pub all_sessions: Option<bool>,
    /// Also every host of hosts.toml (all their sessions), ids as HOST/ID.
    pub all_hosts: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct GrepParams {
    /// A regular expression (Rust regex syntax), matched within single lines.
    pub pattern: String,
    /// Session to search. Default: the bridge's session.
    pub session: Option<String>,
    /// Search the terminals of every session.
    pub all_sessions: Option<bool>,
    /// Most matching lines returned (1 to 1000). Default 200.
    pub max_matches: Option<u32>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct TerminalList {
    pub terminals: Vec<PaneView>,
    /// Hosts that could not be listed (with all_hosts), and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unreachable: Vec<HostError>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct HostError {
    pub host: String,
    pub error: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadParams {
    /// Terminal id (or unique prefix, or SESSION:INDEX).
    pub terminal_id: String,
    /// How many of the last lines to return. Default 100.
    pub lines: Option<u32>,
    /// Return raw output with ANSI escape sequences instead of stripped text.
    pub raw: Option<bool>,
    /// Only output after this offset: pass the next_offset of your previous read to get just what is new.
    pub since_offset: Option<u64>,
    /// Return at most this many bytes (the newest).
    pub max_bytes: Option<u64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WriteParams {
    /// Terminal id.
    pub terminal_id: String,
    /// Text to type.
    pub input: String,
    /// Press Enter after the input, sent separately (and the input as a bracketed paste when the program enabled it), so TUIs do not drop it.
    pub submit: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct KeysParams {
    /// Terminal id.
    pub terminal_id: String,
    /// Keys in order: Enter, Escape, Tab, Backspace, Up, Down, Left, Right, Home, End, PageUp, PageDown, F1-F12, C-a..C-z, M-x, S-x (Shift: S-Enter, S-Tab), or single characters; combine as C-M-a.
    pub keys: Vec<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct TerminalParams {
    /// Terminal id (or unique prefix, or SESSION:INDEX).
    pub terminal_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct KillParams {
    /// Terminal id.
    pub terminal_id: String,
    /// Signal name or number. Default TERM; KILL follows after a grace period if the process does not end.
    pub signal: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Done {
    pub success: bool,
    pub message: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct TerminalStatus {
    pub terminal_id: String,
    #[serde(flatten)]
    pub state: StateView,
    pub message: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct CaptureParams {
    /// Terminal id.
    pub terminal_id: String,
    /// Include the scrollback above the visible screen.
    pub scrollback: Option<bool>,
    /// Keep colours and attributes as ANSI escape sequences.
    pub ansi: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WaitParams {
    /// Terminal id.
    pub terminal_id: String,
    /// What to wait for (the same fields as fugue's HTTP wait).
    #[serde(flatten)]
    pub wait: fugue_client::ops::WaitFor,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExecParams {
    /// Host to run on: a hosts.toml name or [user@]host[:port] (over ssh). Default: the bridge's daemon.
    pub host: Option<String>,
    /// Program to run (or a shell command line when args is empty and it contains spaces).
    pub command: String,
    /// Arguments, each one word.
    pub args: Option<Vec<String>>,
    /// Working directory: absolute, or relative to the session's.
    pub cwd: Option<String>,
    /// Extra environment: [{"name","value"}] or {"NAME":"value"}.
    pub env: Option<EnvInput>,
    /// How long to wait for it to finish. Default 10000.
    pub timeout_ms: Option<u64>,
    /// Session to run in. Default: the bridge's session.
    pub session: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ExecResult {
    pub terminal_id: String,
    /// False when it still runs after timeout_ms: follow it with fugue_read / fugue_wait.
    pub finished: bool,
    pub exit_code: Option<i32>,
    pub signal: Option<String>,
    /// Text output (last 1000 lines).
    pub output: String,
    pub truncated: bool,
}

// ---- agents ----

#[derive(Debug, Serialize, JsonSchema)]
pub struct AgentView {
    pub terminal_id: String,
    pub session: String,
    pub cwd: String,
    /// Which agent CLI it is.
    pub agent: fugue_client::protocol::AgentKind,
    /// What it is doing, in one word.
    pub state: fugue_client::protocol::AgentState,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct AgentList {
    pub agents: Vec<AgentView>,
}

/// `fugue_overview`'s rows.
#[derive(Debug, Serialize, JsonSchema)]
pub struct OverviewList {
    pub rows: Vec<fugue_client::views::OverviewView>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct AgentStatusView {
    pub terminal_id: String,
    /// With, while it waits for permission, the `prompt_id` that fugue_approve
    /// and fugue_deny take.
    #[serde(flatten)]
    pub status: fugue_client::views::AgentStateView,
    /// Set when this prompt had already been answered: nothing was sent again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub already_answered: Option<String>,
    /// fugue_wake: set when the agent was started afresh, not resumed, and why
    /// (no turn ran in its recorded session: there was nothing to resume).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_fresh: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct AnswerParams {
    /// Terminal id of the agent.
    pub terminal_id: String,
    /// The prompt_id fugue_agent_status gave for the prompt to answer. The answer is
    /// sent only while that same prompt is on screen.
    pub prompt_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct PromptParams {
    /// Terminal id of the agent.
    pub terminal_id: String,
    /// The prompt. It is pasted, then Enter is sent separately.
    pub text: String,
    /// An idempotency key: sending again with the same key sends nothing and
    /// returns the first send's receipt (safe to retry after a timeout).
    #[serde(default)]
    pub idempotency_key: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct PromptResult {
    pub terminal_id: String,
    #[serde(flatten)]
    pub sent: fugue_client::ops::PromptSent,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SpawnAgentParams {
    /// The first prompt for the agent.
    pub prompt: String,
    /// Name of the new session the agent runs in. Default: agent-<random>.
    pub name: Option<String>,
    /// Directory to work in (absolute, or relative to the bridge's). Default: the bridge's.
    pub working_dir: Option<String>,
    /// Which agent: claude (default), codex, gemini, or one configured with --agent-command.
    pub agent: Option<String>,
    /// Work in a git worktree of its own, made from the repository of
    /// working_dir on a new branch fugue/NAME: give NAME, or "" for a generated
    /// one. Two agents in one repository then never edit the same checkout.
    pub worktree: Option<String>,
    /// The commit or ref the worktree starts from. Default: HEAD.
    pub base: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SpawnAgentResult {
    pub terminal_id: String,
    pub session: String,
    pub pid: u32,
    pub agent: String,
    /// The worktree it works in, when asked for one.
    pub worktree: Option<String>,
    pub branch: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct DelegateParams {
    /// What the child agent should do.
    pub prompt: String,
    /// Which agent: claude (default), codex, gemini, or one configured with --agent-command.
    pub agent: Option<String>,
    /// Directory to work in (absolute, or relative to the bridge's). Default: the bridge's.
    pub working_dir: Option<String>,
    /// The child's worktree's name (branch fugue/NAME). Default: a generated
    /// one. The child works in a git worktree of working_dir's repository
    /// unless shared_checkout.
    pub worktree: Option<String>,
    /// Work in working_dir itself, not in a worktree of its own.
    pub shared_checkout: Option<bool>,
    /// The commit or ref the worktree starts from. Default: HEAD.
    pub base: Option<String>,
    /// Name of the child's new session. Default: delegate-<random>.
    pub name: Option<String>,
    /// The longest the child's turn may take, in milliseconds (default 1800000,
    /// at most 14400000); past it the result says timed_out and the child keeps running.
    pub timeout_ms: Option<u64>,
}

/// What a person is asked before an agent starts.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct SpawnConfirmation {
    /// Start the agent?
    pub confirm: bool,
}

rmcp::elicit_safe!(SpawnConfirmation);
