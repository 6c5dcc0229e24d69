//! What fugue knows of an agent CLI in a pane: which one it is, what it is
//! doing, whether it needs a person, what its hooks reported, and what became
//! of a prompt or an answer the daemon delivered to it. Plain wire types, as
//! in `messages` (no serde attributes that bincode cannot carry).

use arbitrary::Arbitrary;
use serde::{Deserialize, Serialize};

/// The agent CLIs fugue recognises (each has its entry in the daemon's agents.toml).
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
pub enum AgentKind {
    #[serde(alias = "Claude")]
    Claude,
    #[serde(alias = "Codex")]
    Codex,
    #[serde(alias = "Gemini")]
    Gemini,
    #[serde(alias = "Qwen")]
    Qwen,
    #[strum(serialize = "opencode")]
    #[serde(rename = "opencode", alias = "OpenCode")]
    OpenCode,
    #[serde(alias = "Aider")]
    Aider,
}

impl AgentKind {
    /// Every kind, in declaration order.
    pub const ALL: &'static [AgentKind] = <AgentKind as strum::VariantArray>::VARIANTS;

    pub fn as_str(&self) -> &'static str {
        self.into()
    }

    /// Parses a kind's name (as in `agents.toml` and `--agent`).
    pub fn parse(name: &str) -> Result<AgentKind, String> {
        crate::names::parse(name, "agent", &[])
    }
}

/// What an agent CLI is doing, in one word (the two axes below, summed up).
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
pub enum AgentState {
    #[serde(alias = "WaitingForPermission")]
    WaitingForPermission,
    #[serde(alias = "Busy")]
    Busy,
    #[serde(alias = "Idle")]
    Idle,
    #[serde(alias = "Exited")]
    Exited,
    /// Started, its interface not recognised yet (or its first prompt not run yet).
    #[serde(alias = "Starting")]
    Starting,
    /// Recognised, but nothing on screen says what it is doing: never answerable.
    #[serde(alias = "Unknown")]
    Unknown,
    /// It asked a question (a choice or free text) and waits for the answer: a
    /// person answers it, never `approve`/`deny`.
    #[serde(alias = "WaitingForAnswer")]
    WaitingForAnswer,
    /// Put to rest by fugue (its process ended, its session recorded): a prompt,
    /// an attach or `fugue wake` resumes it.
    #[serde(alias = "Hibernated")]
    Hibernated,
    /// Its last turn ended on a usage or rate limit: no turn runs, and none
    /// will until the limit resets (`AgentInfo::resets_at_ms`, when the CLI
    /// says) or a person sends another prompt.
    #[serde(alias = "Limited")]
    Limited,
}

impl AgentState {
    pub fn as_str(&self) -> &'static str {
        self.into()
    }

    pub fn parse(text: &str) -> Result<Self, String> {
        crate::names::parse(text, "agent state", &[])
    }

    /// One state or several separated by `|` or `,` ("idle|waiting_for_permission").
    pub fn parse_list(text: &str) -> Result<Vec<Self>, String> {
        split_list(text).map(Self::parse).collect()
    }

    /// Whether a turn is running.
    pub fn turn(&self) -> TurnState {
        match self {
            AgentState::WaitingForPermission | AgentState::WaitingForAnswer | AgentState::Busy => TurnState::Running,
            AgentState::Idle | AgentState::Exited | AgentState::Hibernated | AgentState::Limited => {
                TurnState::NotRunning
            }
            AgentState::Starting | AgentState::Unknown => TurnState::Unknown,
        }
    }

    /// Whether the agent needs a person.
    pub fn needs(&self) -> Attention {
        match self {
            AgentState::WaitingForPermission => Attention::Permission,
            AgentState::WaitingForAnswer => Attention::Question,
            _ => Attention::Nothing,
        }
    }
}

/// Is a turn running?
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
pub enum TurnState {
    #[serde(alias = "Running")]
    Running,
    #[serde(alias = "NotRunning")]
    NotRunning,
    #[serde(alias = "Unknown")]
    Unknown,
}

impl TurnState {
    pub fn as_str(&self) -> &'static str {
        self.into()
    }
}

/// Does the agent need a person?
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
pub enum Attention {
    #[serde(alias = "Nothing")]
    Nothing,
    /// It asks to be allowed to do something (approve or deny).
    #[serde(alias = "Permission")]
    Permission,
    /// It asked a question only a person can answer.
    #[serde(alias = "Question")]
    Question,
    /// A turn finished and nobody has looked since (no client attached to the
    /// pane or typed into it).
    #[serde(alias = "FinishedUnseen")]
    FinishedUnseen,
}

impl Attention {
    /// Every reason an agent needs a person (what `any` stands for).
    pub const ANY: [Attention; 3] = [Attention::Permission, Attention::Question, Attention::FinishedUnseen];

    pub fn as_str(&self) -> &'static str {
        self.into()
    }

    /// "Needs you": the agent waits on a person, for a permission or an
    /// answer, and does nothing until one comes. The phone's first screen,
    /// the pushes that carry actions and the urgent ones are these; a turn
    /// that finished unseen is told, not waited on.
    pub fn needs_you(&self) -> bool {
        matches!(self, Attention::Permission | Attention::Question)
    }

    pub fn parse(text: &str) -> Result<Self, String> {
        crate::names::parse(text, "need", &["any"])
    }

    /// One need or several separated by `|` or `,`; `any` is every need but nothing.
    pub fn parse_list(text: &str) -> Result<Vec<Self>, String> {
        let mut needs = Vec::new();
        for word in split_list(text) {
            match word {
                "any" => needs.extend(Attention::ANY),
                word => needs.push(Self::parse(word)?),
            }
        }
        Ok(needs)
    }
}

/// The words of a `|`- or `,`-separated list, trimmed, empty ones left out.
fn split_list(text: &str) -> impl Iterator<Item = &str> {
    text.split(['|', ',']).map(str::trim).filter(|word| !word.is_empty())
}

/// Where an agent's state was read from, most trusted first.
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
pub enum StateSource {
    /// The agent's own protocol: Codex's app-server, whose events fugued
    /// subscribes to (turns, approvals with their exact command, limits).
    #[serde(alias = "AppServer")]
    AppServer,
    /// A hook the agent ran (`fugue agent-event`).
    #[serde(alias = "Hook")]
    Hook,
    /// What the agent told its terminal: a program status (OSC 7501, OSC 9;4)
    /// or its window title. Comes before the status file where it is explicit:
    /// it arrives with the screen, the file a moment later.
    #[serde(alias = "Terminal")]
    Terminal,
    /// The agent's own status file (Claude Code's `~/.claude/sessions/<pid>.json`).
    #[serde(alias = "SessionFile")]
    SessionFile,
    /// The rendered screen, matched against the agent's known markers.
    #[serde(alias = "Screen")]
    Screen,
}

impl StateSource {
    pub fn as_str(&self) -> &'static str {
        self.into()
    }
}

/// What an agent CLI in a pane is doing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct AgentInfo {
    /// `None` when no known agent CLI was recognised.
    pub agent: Option<AgentKind>,
    pub state: AgentState,
    /// Whether it needs a person (more than `state` says: a finished turn nobody
    /// has seen yet).
    pub needs: Attention,
    pub source: StateSource,
    /// The agent's version, when it shows or records it.
    pub version: Option<String>,
    /// The agent's own session id (to resume it), when it records one.
    pub session_id: Option<String>,
    /// Unix ms since the state was first seen.
    pub since_ms: u64,
    /// While it waits for permission: the prompt's id, a digest of the process,
    /// when it began waiting and the screen (so two identical prompts in a row
    /// differ), for [`crate::requests::AnswerPermission`].
    pub prompt_id: Option<String>,
    /// The screen lines (or status file fields) that decided.
    pub evidence: Vec<String>,
    /// What each signal read at this look said, the deciding one (`source`)
    /// among them (`fugue agent --explain`): at most one per source.
    pub signals: Vec<SignalReading>,
    /// Text a person typed into the agent's input box and has not sent (a
    /// prompt sent now would be appended to it: `draft_present`).
    pub draft: Option<String>,
    /// While `limited`: when the limit resets (Unix ms), when the CLI says.
    pub resets_at_ms: Option<u64>,
    /// The tokens its session used so far, where the CLI records them.
    pub tokens: Option<TokenTotals>,
}

/// Tokens an agent's session used, as its CLI counts them (Claude Code's
/// transcript `usage`, Codex's token-usage events), summed over its turns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct TokenTotals {
    pub input: u64,
    /// Of `input`, read from the model's cache.
    pub cached_input: u64,
    pub output: u64,
}

/// What a row of an overview is: a fugue pane, or an agent session that runs
/// outside any pane and that fugued reads (Claude Code's `claude --bg`).
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
pub enum RowOrigin {
    #[serde(alias = "Pane")]
    Pane,
    #[serde(alias = "ClaudeBackground")]
    ClaudeBackground,
}

impl RowOrigin {
    pub fn as_str(&self) -> &'static str {
        self.into()
    }
}

/// An agent session running outside any fugue pane, read from what its CLI
/// keeps (Claude Code's `sessions/<pid>.json` of a `claude --bg` session).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct BackgroundAgent {
    pub origin: RowOrigin,
    /// The CLI's own short id (`claude attach ID`).
    pub id: String,
    pub pid: u32,
    pub cwd: String,
    /// The name the CLI gave it (its first prompt, or a title).
    pub name: String,
    /// Its state (`source` `session_file`), since when, and its session id.
    pub agent: AgentInfo,
    /// The CLI's executable (the session's own), which `attach ID` opens it.
    pub program: String,
    /// What that attach needs of the environment fugued read it with
    /// (`HOME` or `CLAUDE_CONFIG_DIR`).
    pub env: Vec<crate::messages::EnvVar>,
}

/// What one signal of an agent's state said at a look.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct SignalReading {
    pub source: StateSource,
    /// What it read: the hook's report, the status file's status, the program
    /// status or title, the screen's marker lines (or how long it was quiet).
    pub reading: String,
    /// The state it means now, weighed against the screen; `None` when it
    /// says nothing now (a hook the screen has moved on from).
    pub means: Option<AgentState>,
    /// Unix ms since it has meant `means`.
    pub since_ms: u64,
}

/// What became of a prompt the daemon delivered ([`crate::requests::SendPrompt`]),
/// built from what the daemon saw: no client writes a receipt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct PromptReceipt {
    /// Whether a turn started within 5 s of Enter.
    pub outcome: PromptOutcome,
    /// The agent's state then.
    pub state: AgentState,
    /// Where that state was read.
    pub source: StateSource,
    /// The lines or reports that showed it (at most
    /// [`crate::limits::RECEIPT_EVIDENCE_LINES`] of
    /// [`crate::limits::RECEIPT_EVIDENCE_CHARS`] characters).
    pub evidence: Vec<String>,
    /// Unix ms when the turn was seen started (or the deadline passed).
    pub at_ms: u64,
    /// The idempotency key it was sent under, if any.
    pub key: Option<String>,
    /// This is the receipt of an earlier send under the same key: nothing was
    /// sent this time.
    pub repeated: bool,
}

/// How a delivered prompt went.
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
pub enum PromptOutcome {
    /// The agent showed a turn running (its busy marker) or asked for permission.
    #[serde(alias = "Started")]
    Started,
    /// Pasted and Enter sent, but no turn showed within 5 s: the prompt may
    /// still sit in the input box.
    #[strum(serialize = "prompt_stalled")]
    #[serde(rename = "prompt_stalled", alias = "Stalled")]
    Stalled,
}

impl PromptOutcome {
    /// `started` or `prompt_stalled`.
    pub fn as_str(&self) -> &'static str {
        self.into()
    }
}

/// How to answer a permission prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub enum PermissionAnswer {
    Approve,
    Deny,
}

impl PermissionAnswer {
    /// What the prompt was answered with: `approved` or `denied`.
    pub fn past(&self) -> &'static str {
        match self {
            PermissionAnswer::Approve => "approved",
            PermissionAnswer::Deny => "denied",
        }
    }
}

/// What an answer to a permission prompt did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct PermissionAnswered {
    /// The answer the prompt has: this one, or the earlier one if `already`.
    pub answer: PermissionAnswer,
    /// It was answered before (by any client): nothing was sent now.
    pub already: bool,
}

/// Where a sandboxed pane's hook directory (its hook socket, its agent's hook
/// settings) is mounted in the container: the daemon names files there, the
/// sandbox wrapper mounts it.
pub const SANDBOX_HOOK_DIR: &str = "/run/fugue";

/// The hook socket's name in that directory.
pub const SANDBOX_HOOK_SOCKET: &str = "hook.sock";

/// The variable naming a sandboxed pane's hook directory on the host, set by
/// the daemon for the sandbox wrapper.
pub const HOOK_DIR_VAR: &str = "FUGUE_HOOK_DIR";

/// What one hook of an agent CLI reported (the JSON it gave its hook command,
/// boiled down). Event names are the agent's own (`PermissionRequest`, `Stop`,
/// `BeforeAgent`, ...).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct AgentHook {
    /// The agent that ran the hook, when the hook command says.
    pub agent: Option<AgentKind>,
    /// `hook_event_name`.
    pub event: String,
    /// The agent's session id (to resume it).
    pub session_id: Option<String>,
    /// The notification's kind (`notification_type`), for notification hooks.
    pub notification: Option<String>,
    /// The tool it is about (`tool_name`), for tool hooks.
    pub tool: Option<String>,
}

/// An agent's own session, recorded so the agent can be resumed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct AgentSession {
    pub agent: AgentKind,
    pub id: String,
    /// Whether a turn ran in it (the agent worked or asked something since it
    /// was recorded; a resumed session has its conversation): one without has
    /// nothing to resume (`claude --resume` answers "No conversation found"),
    /// and a wake starts the agent afresh instead. Records from before it was
    /// kept say yes.
    #[serde(default = "has_conversation")]
    pub conversation: bool,
}

fn has_conversation() -> bool {
    true
}
