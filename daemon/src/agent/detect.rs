//! Recognising agent CLIs (Claude Code, Codex, Gemini CLI, Qwen Code, opencode,
//! aider) in a pane and what they are
//! doing, from the rendered screen: the same string can mean different things in
//! different agents, so each has its own markers.
//!
//! Pure functions of the screen, the pane's command, how long the screen has
//! been quiet and what was read of the agent's process and files (read in
//! `super::process_files`): waiting and idle need the screen to have settled, so
//! a prompt that flashes by mid-redraw is not reported.

use crate::terminal::reports::{ProgramStatus, TerminalSignals};
use fugue_protocol::{AgentHook, AgentKind, AgentState};
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

/// A screen must be this quiet before it counts as waiting for permission.
pub const WAITING_SETTLE: Duration = Duration::from_millis(300);
/// ... and this quiet, with no busy marker, before it counts as idle.
pub const IDLE_SETTLE: Duration = Duration::from_millis(1500);
/// Output this long after a hook reported a finished turn is the agent's own
/// redraw of that moment, not a new turn.
pub const HOOK_REDRAW: Duration = Duration::from_millis(500);
/// An agent started with a first prompt is `starting` until that turn shows, or
/// this long (a first turn that failed leaves it at its input box).
pub const FIRST_TURN_LIMIT: Duration = Duration::from_secs(60);

/// One agent's entry in agents.toml (see the comments there).
#[derive(Debug, Deserialize)]
struct Markers {
    programs: Vec<String>,
    #[serde(default)]
    banners: Vec<String>,
    #[serde(default)]
    version: String,
    waiting: Vec<String>,
    /// A question for a person is up (its choices may look like a permission
    /// prompt's, so it is checked first).
    #[serde(default)]
    question: Vec<String>,
    busy: Vec<String>,
    ready: Vec<String>,
    /// Empty: it takes no first prompt on its command line.
    #[serde(default)]
    prompt_flags: Vec<String>,
    #[serde(default)]
    value_flags: Vec<String>,
    #[serde(default)]
    subcommands: Vec<String>,
    /// Arguments that resume session `{id}`.
    #[serde(default)]
    resume: Vec<String>,
    /// Hook event (or `Event:detail`) -> the state it means.
    #[serde(default)]
    hooks: HashMap<String, String>,
    /// What its window title says (lower-cased substrings).
    #[serde(default)]
    title_busy: Vec<String>,
    #[serde(default)]
    title_waiting: Vec<String>,
    #[serde(default)]
    title_idle: Vec<String>,
    /// A line-oriented CLI (aider): what scrolled up is history, so its markers
    /// count only on the screen's last non-blank line.
    #[serde(default)]
    last_line_only: bool,
    /// The keys that approve and that deny its permission prompt.
    #[serde(default = "approve_keys")]
    approve: Vec<String>,
    #[serde(default = "deny_keys")]
    deny: Vec<String>,
    /// What begins its input box's first line (after blanks), so text a
    /// person typed there and did not send can be read.
    #[serde(default)]
    input: Vec<String>,
    /// Its turn ended on a usage or rate limit (the CLI's own error line,
    /// near the bottom of the screen): `limited` instead of `idle`.
    #[serde(default)]
    limited: Vec<String>,
}

fn approve_keys() -> Vec<String> {
    vec!["Enter".into()]
}

fn deny_keys() -> Vec<String> {
    vec!["Escape".into()]
}

/// The keys that give `answer` to a permission prompt of `kind`.
pub fn answer_keys(kind: Option<AgentKind>, answer: fugue_protocol::PermissionAnswer) -> Vec<String> {
    let m = kind.and_then(markers);
    match answer {
        fugue_protocol::PermissionAnswer::Approve => m.map_or_else(approve_keys, |m| m.approve.clone()),
        fugue_protocol::PermissionAnswer::Deny => m.map_or_else(deny_keys, |m| m.deny.clone()),
    }
}

/// The table, parsed once from the data compiled in (its test checks it parses).
static TABLE: LazyLock<HashMap<String, Markers>> = LazyLock::new(|| {
    toml::from_str(include_str!("agents.toml")).unwrap_or_else(|err| {
        tracing::error!(%err, "agents.toml does not parse: no agent CLI will be recognised");
        HashMap::new()
    })
});

fn markers(kind: AgentKind) -> Option<&'static Markers> {
    TABLE.get(kind.as_str())
}

/// What fugue remembers of one pane's agent between two looks at its screen.
#[derive(Clone, Copy, Debug, Default)]
pub struct AgentMemory {
    /// Its interface was seen (a marker of any kind): no longer `starting`.
    pub recognised: bool,
    /// A turn was seen running (busy or waiting).
    pub turn_seen: bool,
    /// The dialog (a permission prompt or a question) it was last seen waiting
    /// on: a digest of the dialog's marker lines. While those lines stay on
    /// screen it still waits, however the rest of the screen animates (a timer,
    /// a spinner): settling is about the dialog, not the whole screen.
    pub dialog: Option<u64>,
    /// The limit lines (a digest) the agent was last reported `limited` on,
    /// and those a turn ran after: still on screen above a new turn, they
    /// are history, not a limit.
    pub limit_shown: Option<u64>,
    pub limit_spent: Option<u64>,
}

/// The markers of a turn that ended on a usage or rate limit (agents.toml's `limited`).
pub(super) fn limit_markers(kind: AgentKind) -> &'static [String] {
    markers(kind).map_or(&[], |m| m.limited.as_slice())
}

/// The agent running in a pane, from its command or, failing that, its screen.
pub fn detect_kind(command: &[String], screen: &[String]) -> Option<AgentKind> {
    let command = unsandboxed(command);
    let program = command
        .first()
        .map(|c| c.split_whitespace().next().unwrap_or(c))
        .unwrap_or("");
    let name = program.rsplit('/').next().unwrap_or(program).to_ascii_lowercase();
    let by_name = AgentKind::ALL
        .iter()
        .copied()
        .find(|kind| markers(*kind).is_some_and(|m| m.programs.iter().any(|p| name.contains(p.as_str()))));
    if by_name.is_some() {
        return by_name;
    }
    let text = screen.join("\n").to_lowercase();
    AgentKind::ALL
        .iter()
        .copied()
        .find(|kind| markers(*kind).is_some_and(|m| m.banners.iter().any(|b| text.contains(b.as_str()))))
}

/// The program a sandboxed pane runs in its container: what follows `--` in
/// `fugue sandbox-run [the sandbox] -- PROGRAM ARGS` (`run --sandbox`).
fn unsandboxed(command: &[String]) -> &[String] {
    match is_sandboxed(command) {
        true => command
            .iter()
            .position(|a| a == "--")
            .map_or(&command[..0], |at| &command[at + 1..]),
        false => command,
    }
}

/// Whether `command` runs its program in a sandbox (`fugue sandbox-run`).
pub fn is_sandboxed(command: &[String]) -> bool {
    command.first().is_some_and(|c| c == "fugue" || c.ends_with("/fugue"))
        && command.get(1).is_some_and(|c| c == "sandbox-run")
}

/// Whether the command line gives the agent a first prompt (see agents.toml):
/// the arguments after the agent's own program, wherever a wrapper put it
/// (`sh -c 'setup; exec "$@"' fugue-setup claude PROMPT`). A command that
/// names no agent program (a script that starts one) gives it none that
/// fugue can see.
pub fn started_with_prompt(kind: AgentKind, command: &[String]) -> bool {
    let Some(m) = markers(kind) else { return false };
    if m.prompt_flags.is_empty() {
        // It takes no first prompt on its command line (aider's arguments are files).
        return false;
    }
    let Some(args) = agent_args(m, command) else {
        return false;
    };
    if m.prompt_flags.iter().any(|f| f != "positional") {
        return args
            .iter()
            .any(|a| m.prompt_flags.iter().any(|f| a == f || a.starts_with(&format!("{f}="))));
    }
    // The first word that is no flag: a prompt, unless it names a subcommand
    // (`codex resume ID`).
    match first_word(m, args) {
        Some("--") => true,
        Some(word) => !m.subcommands.iter().any(|s| s == word),
        None => false,
    }
}

/// Whether the command runs one of the agent's subcommands (`codex exec`,
/// `codex resume ID`), not its interactive interface.
pub fn has_subcommand(kind: AgentKind, command: &[String]) -> bool {
    let Some(m) = markers(kind) else { return false };
    let word = agent_args(m, command).and_then(|args| first_word(m, args));
    word.is_some_and(|word| m.subcommands.iter().any(|s| s == word))
}

/// The arguments after the agent's own program, wherever a wrapper put it
/// (the sandbox wrapper's own words are not the agent's).
fn agent_args<'a>(m: &Markers, command: &'a [String]) -> Option<&'a [String]> {
    let command = unsandboxed(command);
    let names_agent = |word: &String| {
        let program = word.split_whitespace().next().unwrap_or(word);
        let name = program.rsplit('/').next().unwrap_or(program).to_ascii_lowercase();
        m.programs.iter().any(|p| name.contains(p.as_str()))
    };
    let at = command.iter().position(names_agent)?;
    Some(&command[at + 1..])
}

/// The first argument that is no flag and no flag's value (`--` itself ends
/// the flags).
fn first_word<'a>(m: &Markers, args: &'a [String]) -> Option<&'a str> {
    let mut after_value_flag = false;
    for arg in args {
        if std::mem::take(&mut after_value_flag) {
            continue;
        }
        if arg == "--" {
            return Some("--");
        }
        if arg.starts_with('-') {
            after_value_flag = !arg.contains('=') && m.value_flags.iter().any(|f| f == arg);
            continue;
        }
        return Some(arg);
    }
    None
}

/// The command line that resumes `kind`'s session `id`: the program and the
/// flags of `command` (its first prompt left out), then the resume arguments.
pub fn resume_command(kind: AgentKind, command: &[String], id: &str) -> Option<Vec<String>> {
    // A sandboxed agent resumes in a sandbox of the same kind.
    let program = unsandboxed(command);
    let wrapper = &command[..command.len() - program.len()];
    let mut line = wrapper.to_vec();
    line.extend(resume_line(kind, program, id)?);
    Some(line)
}

fn resume_line(kind: AgentKind, command: &[String], id: &str) -> Option<Vec<String>> {
    // Only a UUID is ever recorded; checked again here, as no other value may
    // become an argument of the agent's command line (`--dangerously-...`).
    if !fugue_protocol::limits::is_agent_session_id(id) {
        return None;
    }
    let m = markers(kind)?;
    if m.resume.is_empty() {
        return None;
    }
    let mut line = vec![command.first()?.clone()];
    let mut args = command.iter().skip(1);
    while let Some(arg) = args.next() {
        let prompt_flag = m
            .prompt_flags
            .iter()
            .any(|f| arg == f || arg.starts_with(&format!("{f}=")));
        if prompt_flag {
            // Its value (the old first prompt) goes with it.
            if !arg.contains('=') {
                args.next();
            }
            continue;
        }
        if !arg.starts_with('-') || arg == "--" {
            // The first prompt, a subcommand or a resume: none belongs in a resume.
            break;
        }
        if m.resume.first().is_some_and(|flag| flag == arg) {
            // An earlier resume (the pane was resumed before): replaced below.
            args.next();
            continue;
        }
        line.push(arg.clone());
        if !arg.contains('=') && m.value_flags.iter().any(|f| f == arg) {
            line.extend(args.next().cloned());
        }
    }
    line.extend(m.resume.iter().map(|a| a.replace("{id}", id)));
    Some(line)
}

/// What a hook means for the agent's state (agents.toml's `hooks`), if anything.
pub fn hook_state(kind: AgentKind, hook: &AgentHook) -> Option<AgentState> {
    let m = markers(kind)?;
    let detail = hook.notification.as_deref().or(hook.tool.as_deref());
    let specific = detail.and_then(|d| m.hooks.get(&format!("{}:{d}", hook.event)));
    let meaning = specific.or_else(|| m.hooks.get(&hook.event))?;
    AgentState::parse(meaning).ok()
}

/// A hook's report, for the process that ran it.
#[derive(Clone, Copy, Debug)]
pub struct HookSeen {
    pub state: AgentState,
    pub at: Instant,
}

/// What the screen says, for weighing a hook's report against it.
pub struct ScreenVerdict {
    pub state: AgentState,
    /// A marker decided `state` (not just output flowing or a quiet screen).
    pub sure: bool,
    /// A permission prompt shows (settled or not).
    pub prompt_shown: bool,
    /// When the screen last changed.
    pub changed_at: Instant,
}

impl ScreenVerdict {
    /// A permission prompt shows and the screen has been quiet on it long
    /// enough to count (what `waiting` markers need): it can be answered.
    pub fn prompt_settled(&self) -> bool {
        self.sure && self.state == AgentState::WaitingForPermission
    }
}

/// The state a hook's report means now; `None` once the screen has moved on
/// from it (hooks report transitions, and some transitions run no hook: a
/// prompt denied with Escape ends the turn without `Stop`).
pub fn state_from_hook(hook: HookSeen, screen: &ScreenVerdict) -> Option<AgentState> {
    let moved_on = screen.changed_at > hook.at && screen.sure;
    match hook.state {
        // Answerable only once the prompt has settled on screen: approve acts
        // on it, and its id is a digest of that screen. Gemini CLI's hook runs
        // before its dialog is drawn; an id handed out then was stale 100 ms
        // later, and the approval refused. Until then the turn still runs.
        AgentState::WaitingForPermission if screen.prompt_settled() => Some(AgentState::WaitingForPermission),
        // Claude Code asks its AskUserQuestion through a permission request too:
        // a question on screen is never approvable.
        AgentState::WaitingForPermission if screen.sure && screen.state == AgentState::WaitingForAnswer => {
            Some(AgentState::WaitingForAnswer)
        }
        AgentState::WaitingForPermission => screen.prompt_shown.then_some(AgentState::Busy),
        AgentState::Busy
            if moved_on
                && matches!(
                    screen.state,
                    AgentState::Idle | AgentState::WaitingForPermission | AgentState::WaitingForAnswer
                ) =>
        {
            None
        }
        AgentState::WaitingForAnswer if moved_on && matches!(screen.state, AgentState::Idle | AgentState::Busy) => None,
        // A question needs a person once it is on screen: Claude Code runs its
        // AskUserQuestion hook before the question is drawn, and keys sent then
        // went to the input box. Where fugue knows the question's look, that
        // look, settled; else (an MCP server's dialog) a screen quiet since the hook.
        AgentState::WaitingForAnswer => {
            let shown = screen.sure && screen.state == AgentState::WaitingForAnswer;
            let settled = screen.changed_at.max(hook.at).elapsed() >= WAITING_SETTLE;
            Some(match shown || settled {
                true => AgentState::WaitingForAnswer,
                false => AgentState::Busy,
            })
        }
        AgentState::Idle => {
            let new_output = screen.changed_at > hook.at + HOOK_REDRAW && screen.sure;
            let screen_differs = matches!(screen.state, AgentState::Busy | AgentState::WaitingForPermission);
            (!(new_output && screen_differs)).then_some(AgentState::Idle)
        }
        state => Some(state),
    }
}

/// What an agent's terminal signals say of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// A turn runs.
    Running,
    /// It asks for a permission.
    Permission,
    /// It waits for a person for something else (a question).
    Question,
    /// No turn runs.
    Resting,
}

/// What the agent told its terminal, and the line that says so: its program
/// status if it prints one (explicit, so it comes first), else its window title
/// read by agents.toml's `title_*` markers.
pub fn terminal_signal(kind: AgentKind, signals: &TerminalSignals) -> Option<(Signal, String)> {
    if let Some(status) = signals.status {
        let signal = match status {
            ProgramStatus::Working => Signal::Running,
            ProgramStatus::Blocked { permission: true } => Signal::Permission,
            ProgramStatus::Blocked { permission: false } => Signal::Question,
            ProgramStatus::Resting => Signal::Resting,
        };
        return Some((signal, format!("program status: {}", status.as_str())));
    }
    let title = signals.title.as_ref()?;
    let m = markers(kind)?;
    let lower = title.to_lowercase();
    let says = |needles: &[String]| needles.iter().any(|n| shows(&lower, n));
    let signal = if says(&m.title_waiting) {
        Signal::Permission
    } else if says(&m.title_busy) {
        Signal::Running
    } else if says(&m.title_idle) {
        Signal::Resting
    } else {
        return None;
    };
    Some((signal, format!("title: {}", title.trim())))
}

/// The state a terminal signal means given the screen; `None` where the screen
/// knows better. The signals come in the same output as the screen, so they are
/// as fresh as it is, and more explicit: `idle` needs no quiet time. Waiting
/// for permission still needs the prompt settled on screen: Codex 0.169 drops
/// an Enter that comes while its dialog is still being drawn (its status says
/// `blocked` before that), so an approval sent at once would be lost. An agent
/// still starting (or exited) stays so.
pub fn state_from_signal(signal: Signal, screen: &ScreenVerdict) -> Option<AgentState> {
    if matches!(screen.state, AgentState::Starting | AgentState::Exited) {
        return None;
    }
    let screen_sure_of = |state: AgentState| screen.sure && screen.state == state;
    match signal {
        Signal::Permission => screen.prompt_settled().then_some(AgentState::WaitingForPermission),
        Signal::Question => Some(AgentState::WaitingForAnswer),
        Signal::Running => (!screen_sure_of(AgentState::WaitingForPermission)).then_some(AgentState::Busy),
        // Claude Code's title rests while its permission prompt is up.
        Signal::Resting => (!screen.prompt_shown && !screen_sure_of(AgentState::Busy)).then_some(AgentState::Idle),
    }
}

/// Whether `line` is one of a dialog's (a permission prompt's or a question's)
/// marker lines for the agent with markers `m`.
fn is_dialog_line(m: &Markers, line: &str) -> bool {
    let lower = line.to_lowercase();
    m.waiting.iter().chain(&m.question).any(|n| shows(&lower, n))
}

/// Whether a lower-cased screen line shows marker `needle`: a substring, or with
/// a trailing `$` the line's end (aider's `[yes]:` is a question only while
/// nothing was typed after it).
pub(super) fn shows(lower: &str, needle: &str) -> bool {
    match needle.strip_suffix('$') {
        Some(end) => lower.trim_end().ends_with(end.trim_end()),
        None => lower.contains(needle),
    }
}

/// The part of `screen` where `m`'s markers count: all of it, or for a
/// line-oriented CLI its last non-blank line.
fn marker_region<'a>(m: &Markers, screen: &'a [String]) -> &'a [String] {
    if !m.last_line_only {
        return screen;
    }
    match screen.iter().rposition(|l| !l.trim().is_empty()) {
        Some(last) => &screen[last..=last],
        None => &[],
    }
}

/// Lines above a dialog's first marker line that identify it with its marker
/// lines (the command or question it is about).
const DIALOG_CONTEXT_LINES: usize = 8;

/// The dialog (permission prompt or question) `kind` shows on `screen`: a
/// digest of its marker lines, which stay the same while it waits, and one of
/// the block from a few lines above it to its last marker line, which tells two
/// dialogs with the same markers apart. `None` when none shows.
pub fn dialog_on(kind: AgentKind, screen: &[String]) -> Option<(u64, u64)> {
    let (markers, block) = dialog_block(kind, screen)?;
    Some((dialog_digest(&markers), block_digest(block)))
}

/// The lines of the dialog `kind` shows on `screen` (from a few lines above
/// its first marker line to its last), blank ones left out: what a person is
/// asked, as the agent shows it.
pub fn dialog_lines(kind: AgentKind, screen: &[String]) -> Option<Vec<String>> {
    let (_, block) = dialog_block(kind, screen)?;
    Some(
        block
            .iter()
            .map(|l| l.trim_end().to_string())
            .filter(|l| !l.trim().is_empty())
            .collect(),
    )
}

/// A dialog's marker lines (trimmed) and its block on `screen`.
fn dialog_block(kind: AgentKind, screen: &[String]) -> Option<(Vec<String>, &[String])> {
    let m = markers(kind)?;
    let is_marker = |line: &String| is_dialog_line(m, line);
    let region = marker_region(m, screen);
    // Positions in `screen`: the region is its tail.
    let skipped = screen.len() - region.len();
    let first = skipped + region.iter().position(is_marker)?;
    let last = skipped + region.iter().rposition(is_marker)?;
    let markers: Vec<String> = screen[first..=last]
        .iter()
        .filter(|l| is_marker(l))
        .map(|l| l.trim().to_string())
        .collect();
    Some((markers, &screen[first.saturating_sub(DIALOG_CONTEXT_LINES)..=last]))
}

/// How far above the cursor an input box's first line may be (a draft of
/// several lines), and how much of a draft is reported.
const DRAFT_ROWS: usize = 8;
const DRAFT_CHARS: usize = 400;

/// Text a person typed into the agent's input box and did not send: the box's
/// lines from its first (which begins with one of its `input` markers) to the
/// cursor's row, when anything sits before the cursor. Every tested CLI keeps
/// the terminal's cursor at its caret (shown or not) and draws its placeholder
/// after it with the caret at the box's start, so text before the caret is
/// typed text and a placeholder never counts. A draft whose caret was moved to
/// its very start is not seen.
pub fn draft(kind: AgentKind, screen: &[String], cursor: (u16, u16)) -> Option<String> {
    let m = markers(kind)?;
    let (row, col) = (usize::from(cursor.0), usize::from(cursor.1));
    screen.get(row)?;
    // The box's first line: the cursor's row or one of the few above it; a
    // blank or border line between them ends the search (history above a box
    // can begin with the same marker).
    let mut first = None;
    for r in (row.saturating_sub(DRAFT_ROWS)..=row).rev() {
        let line = &screen[r];
        if let Some(start) = input_start(m, line) {
            first = Some((r, start));
            break;
        }
        if is_border(line) {
            return None;
        }
    }
    let (first_row, content_start) = first?;
    let mut typed_before = String::new();
    for (r, line) in screen.iter().enumerate().take(row + 1).skip(first_row) {
        let from = if r == first_row { content_start } else { 0 };
        let until = if r == row { col } else { usize::MAX };
        typed_before.push_str(&cells_before(line, from, until));
    }
    if typed_before.trim().is_empty() {
        return None;
    }
    let mut lines = vec![screen[first_row].chars().skip(content_start).collect::<String>()];
    lines.extend(
        screen[first_row + 1..=row]
            .iter()
            .map(|l| input_content(m, l).to_string()),
    );
    let text = lines.iter().map(|l| l.trim()).collect::<Vec<_>>().join("\n");
    // Zero-width marks some boxes draw at the caret (Qwen Code's U+200B).
    let visible = text
        .chars()
        .filter(|c| !matches!(c, '\u{200b}'..='\u{200d}' | '\u{feff}'));
    Some(visible.collect::<String>().trim().chars().take(DRAFT_CHARS).collect())
}

/// The characters of `line` from char index `from` that lie before cell column
/// `col` (a wide character takes two cells).
fn cells_before(line: &str, from: usize, col: usize) -> String {
    let mut cells = 0;
    let mut text = String::new();
    for (i, c) in line.chars().enumerate() {
        cells += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if cells > col {
            break;
        }
        if i >= from {
            text.push(c);
        }
    }
    text
}

/// Where the typed text of an input box's first line begins (a char index),
/// when `line` is one.
fn input_start(m: &Markers, line: &str) -> Option<usize> {
    let indent = line.chars().take_while(|c| c.is_whitespace()).count();
    let rest: String = line.chars().skip(indent).collect();
    let marker = m.input.iter().find(|marker| rest.starts_with(marker.as_str()))?;
    let after = indent + marker.chars().count();
    let gap = line.chars().skip(after).take_while(|c| c.is_whitespace()).count();
    Some(after + gap)
}

/// A continuation line of an input box without its frame (opencode's `┃`).
fn input_content<'a>(m: &Markers, line: &'a str) -> &'a str {
    let trimmed = line.trim_start();
    m.input
        .iter()
        .filter(|marker| marker.chars().all(is_frame))
        .find_map(|marker| trimmed.strip_prefix(marker.as_str()))
        .unwrap_or(trimmed)
}

/// Box-drawing characters (U+2500..U+257F), which frame input boxes.
pub(super) fn is_frame(c: char) -> bool {
    ('\u{2500}'..='\u{257f}').contains(&c)
}

/// A blank line or one of only box-drawing characters.
fn is_border(line: &str) -> bool {
    line.chars().all(|c| c.is_whitespace() || is_frame(c))
}

/// The version the agent's banner shows.
pub fn version(kind: AgentKind, screen: &[String]) -> Option<String> {
    let m = markers(kind).filter(|m| !m.version.is_empty())?;
    screen.iter().find_map(|line| {
        let lower = line.to_lowercase();
        let at = lower.find(m.version.as_str())? + m.version.len();
        let version: String = lower[at..]
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        (!version.is_empty()).then_some(version)
    })
}

/// How the pane's agent looks on screen now.
pub struct ScreenLook<'a> {
    pub screen: &'a [String],
    /// How long the screen has been quiet.
    pub quiet: Duration,
    /// How long the pane's process has run.
    pub age: Duration,
    pub exited: bool,
    /// Its command line gave it a first prompt.
    pub first_prompt: bool,
    /// This process has drawn something: until then the screen is a previous
    /// process's (a restarted pane), whose prompt must never be answered.
    pub drawn: bool,
}

/// The agent's state and the lines that decided it; `memory` carries what was
/// seen before (an interface recognised, a turn seen).
pub fn detect_state(kind: AgentKind, look: &ScreenLook, memory: &mut AgentMemory) -> (AgentState, Vec<String>) {
    if look.exited {
        return (AgentState::Exited, Vec::new());
    }
    if !look.drawn {
        return (AgentState::Starting, Vec::new());
    }
    let Some(m) = markers(kind) else {
        return (AgentState::Unknown, Vec::new());
    };
    let region = marker_region(m, look.screen);
    let lines_with = |needles: &[String]| -> Vec<String> {
        region
            .iter()
            .filter(|line| {
                let lower = line.to_lowercase();
                needles.iter().any(|n| shows(&lower, n))
            })
            .map(|line| line.trim().to_string())
            .collect()
    };
    let question = lines_with(&m.question);
    let held = |lines: &[String]| !lines.is_empty() && memory.dialog == Some(dialog_digest(lines));
    let waits = |lines: &[String]| !lines.is_empty() && (look.quiet >= WAITING_SETTLE || held(lines));
    if waits(&question) {
        *memory = AgentMemory {
            recognised: true,
            turn_seen: true,
            dialog: Some(dialog_digest(&question)),
            ..*memory
        };
        return (AgentState::WaitingForAnswer, question);
    }
    // A question's choices are no permission prompt, settled or not.
    let prompt_is_permission = question.is_empty();
    let waiting = match prompt_is_permission {
        true => lines_with(&m.waiting),
        false => question,
    };
    if prompt_is_permission && waits(&waiting) {
        *memory = AgentMemory {
            recognised: true,
            turn_seen: true,
            dialog: Some(dialog_digest(&waiting)),
            ..*memory
        };
        return (AgentState::WaitingForPermission, waiting);
    }
    memory.dialog = None;
    let busy = lines_with(&m.busy);
    if !busy.is_empty() {
        *memory = AgentMemory {
            recognised: true,
            turn_seen: true,
            dialog: None,
            ..*memory
        };
        return (AgentState::Busy, busy);
    }
    let ready = lines_with(&m.ready);
    memory.recognised |= !ready.is_empty() || !waiting.is_empty();
    let first_turn_pending = look.first_prompt && !memory.turn_seen && look.age < FIRST_TURN_LIMIT;
    if !memory.recognised || first_turn_pending {
        return (AgentState::Starting, Vec::new());
    }
    if look.quiet < IDLE_SETTLE {
        // Output is still flowing (or a prompt has not settled yet).
        return (AgentState::Busy, waiting);
    }
    match ready.is_empty() {
        false => (AgentState::Idle, ready),
        true => (AgentState::Unknown, Vec::new()),
    }
}

/// What identifies a dialog on screen: its marker lines (its question, its
/// choices, its keys), not the lines around it that may animate. Only their
/// letters count: a spinner frame or a timer inside a marker line (Qwen Code's
/// "⠏ Waiting for user confirmation...") and the selection mark moving between
/// choices leave the dialog the same.
pub fn dialog_digest(lines: &[String]) -> u64 {
    let letters: String = lines
        .iter()
        .flat_map(|line| line.chars().filter(|c| c.is_alphabetic()).chain(['\n']))
        .collect();
    fugue_protocol::socket::stable_hash(letters.as_bytes())
}

/// A digest of the lines around a dialog (`dialog_on`'s block), which tells
/// two dialogs with the same marker lines apart by what they are about (its
/// command, letters, digits and ASCII punctuation), not by a spinner frame or a
/// selection mark.
fn block_digest(lines: &[String]) -> u64 {
    let kept: String = lines
        .iter()
        .flat_map(|line| {
            line.chars()
                .filter(|c| c.is_alphanumeric() || c.is_ascii_punctuation() || *c == ' ')
                .chain(['\n'])
        })
        .collect();
    fugue_protocol::socket::stable_hash(kept.as_bytes())
}

/// When an agent detection that depends on quiet time could next change.
pub fn settle_due(quiet: Duration) -> Option<Duration> {
    [WAITING_SETTLE, IDLE_SETTLE]
        .into_iter()
        .filter(|t| *t > quiet)
        .map(|t| t - quiet)
        .min()
}

/// What Claude Code's own status file (`<config>/sessions/<pid>.json`, written
/// since 2.1.139) says about the process `pid`.
#[derive(Debug, PartialEq, Eq)]
pub struct SessionFile {
    pub status: String,
    pub session_id: Option<String>,
    pub version: Option<String>,
    /// The directory it runs in (which names its transcript's).
    pub cwd: Option<String>,
}

/// Claude Code's status file, as read for process `pid`; `None` unless it is
/// one (at most 64 KiB, a JSON object with a `status`) and was written by that
/// process (its `procStart` matches `start_ticks`, field 22 of `/proc/PID/stat`,
/// so a reused pid does not count).
pub fn parse_session_file(bytes: &[u8], start_ticks: &str) -> Option<SessionFile> {
    if bytes.len() > MAX_SESSION_FILE {
        return None;
    }
    let file: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    if file["procStart"].as_str().is_some_and(|p| p != start_ticks) {
        return None;
    }
    Some(SessionFile {
        status: file["status"].as_str()?.to_string(),
        session_id: file["sessionId"]
            .as_str()
            .filter(|id| fugue_protocol::limits::is_agent_session_id(id))
            .map(String::from),
        version: file["version"].as_str().map(String::from),
        cwd: file["cwd"].as_str().map(String::from),
    })
}

/// A status file is small; a larger one is not Claude Code's.
pub const MAX_SESSION_FILE: usize = 64 * 1024;

/// The session id in a Codex transcript's path, if it is one.
pub fn rollout_session_id(path: &str) -> Option<String> {
    if !path.contains("/sessions/") {
        return None;
    }
    let name = path
        .rsplit('/')
        .next()?
        .strip_prefix("rollout-")?
        .strip_suffix(".jsonl")?;
    // The id is the UUID at its end (36 characters, 8-4-4-4-12).
    let id = name.get(name.len().checked_sub(36)?..)?;
    let shape_ok =
        id.split('-').map(str::len).eq([8, 4, 4, 4, 12]) && id.chars().all(|c| c == '-' || c.is_ascii_hexdigit());
    shape_ok.then(|| id.to_string())
}

/// The state a session file's `status` means, given what the screen shows; `None`
/// where the screen knows better. The file is written a moment after the screen
/// changes, so a marker on screen (a busy line, a settled permission prompt) wins;
/// where the screen is ambiguous (quiet, flowing, or a dialog fugue does not
/// know), the file decides.
pub fn state_from_session_file(status: &str, screen_state: AgentState, screen_evidence: bool) -> Option<AgentState> {
    let screen_is_sure = screen_evidence
        && matches!(
            screen_state,
            AgentState::Busy | AgentState::WaitingForPermission | AgentState::WaitingForAnswer
        );
    if screen_is_sure {
        return None;
    }
    match status {
        "busy" | "shell" => Some(AgentState::Busy),
        "idle" if screen_state == AgentState::Starting => Some(AgentState::Starting),
        "idle" => Some(AgentState::Idle),
        // A prompt still settling on screen: the screen will say.
        "waiting" if screen_state == AgentState::Busy => None,
        // Waiting on something that is no permission prompt fugue can answer.
        "waiting" => Some(AgentState::Unknown),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    const SETTLED: Duration = Duration::from_secs(2);

    /// The state of `lines` for an agent already recognised, with no first prompt.
    fn state(kind: AgentKind, lines: &[&str], quiet: Duration) -> AgentState {
        let mut memory = AgentMemory {
            recognised: true,
            turn_seen: true,
            ..AgentMemory::default()
        };
        let screen = screen(lines);
        let look = ScreenLook {
            screen: &screen,
            quiet,
            age: SETTLED,
            exited: false,
            first_prompt: false,
            drawn: true,
        };
        detect_state(kind, &look, &mut memory).0
    }

    #[test]
    fn the_marker_table_parses_and_covers_every_agent() {
        if let Err(err) = toml::from_str::<HashMap<String, Markers>>(include_str!("agents.toml")) {
            panic!("agents.toml: {err}");
        }
        for &kind in AgentKind::ALL {
            let m = markers(kind).unwrap_or_else(|| panic!("agents.toml has no [{}]", kind.as_str()));
            assert!(!m.waiting.is_empty() && !m.busy.is_empty() && !m.ready.is_empty());
        }
    }

    #[test]
    fn kinds_from_command_or_screen() {
        assert_eq!(detect_kind(&["/usr/bin/claude".into()], &[]), Some(AgentKind::Claude));
        assert_eq!(detect_kind(&["codex --full-auto".into()], &[]), Some(AgentKind::Codex));
        assert_eq!(
            detect_kind(&["bash".into()], &screen(&["╭ Claude Code ╮"])),
            Some(AgentKind::Claude)
        );
        assert_eq!(detect_kind(&["bash".into()], &screen(&["$ ls"])), None);
        let sandboxed: Vec<String> = [
            "/usr/bin/fugue",
            "sandbox-run",
            "--image",
            "claude",
            "--",
            "codex",
            "-m",
            "o3",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(detect_kind(&sandboxed, &[]), Some(AgentKind::Codex));
        assert_eq!(detect_kind(&sandboxed[..4], &[]), None);
    }

    #[test]
    fn first_prompts_on_the_command_line() {
        let with = |kind, line| started_with_prompt(kind, &words(line));
        assert!(with(AgentKind::Claude, "claude --permission-mode default fix-it"));
        assert!(!with(AgentKind::Claude, "claude --permission-mode default"));
        assert!(!with(AgentKind::Claude, "claude --resume abc"));
        assert!(with(AgentKind::Codex, "codex -m gpt hello"));
        assert!(!with(AgentKind::Codex, "codex resume abc"));
        assert!(with(AgentKind::Gemini, "gemini -i hello"));
        assert!(with(AgentKind::Gemini, "gemini --prompt-interactive=hello"));
        assert!(!with(AgentKind::Gemini, "gemini -m pro"));
        // After a wrapper: a worktree's setup, or a script that starts it.
        let setup = [
            "sh",
            "-c",
            "fugue_setup 'npm ci'\nexec \"$@\"",
            "fugue-setup",
            "/x/claude",
            "fix it",
        ];
        assert!(started_with_prompt(AgentKind::Claude, &setup.map(String::from)));
        let script = ["sh", "-c", "echo hi > a.txt; exec /x/fake-agent"];
        assert!(!started_with_prompt(AgentKind::Claude, &script.map(String::from)));
        // In a sandbox: the wrapper's words (a variable named CLAUDE_...) are not the agent's.
        let sandboxed = "/bin/fugue sandbox-run --image i --pass-env CLAUDE_CODE_X -- claude --resume abc";
        assert!(!with(AgentKind::Claude, sandboxed));
        assert!(with(AgentKind::Claude, &sandboxed.replace("--resume abc", "fix-it")));
    }

    #[test]
    fn resume_lines_keep_flags_and_drop_the_first_prompt() {
        const ID: &str = "5ee3a1c0-7e20-4914-9820-0e431ad2b001";
        let resume = |kind, line| resume_command(kind, &words(line), ID).map(|l| l.join(" "));
        assert_eq!(
            resume(AgentKind::Claude, "/x/claude --permission-mode default fix-it"),
            Some("/x/claude --permission-mode default --resume 5ee3a1c0-7e20-4914-9820-0e431ad2b001".into())
        );
        assert_eq!(
            resume(AgentKind::Codex, "codex -m gpt hello"),
            Some("codex -m gpt resume 5ee3a1c0-7e20-4914-9820-0e431ad2b001".into())
        );
        assert_eq!(
            resume(AgentKind::Gemini, "gemini -m pro -i hello --yolo"),
            Some("gemini -m pro --yolo --resume 5ee3a1c0-7e20-4914-9820-0e431ad2b001".into())
        );
        assert_eq!(
            resume(AgentKind::Claude, "/x/fugue sandbox-run --image i -- claude fix-it"),
            Some("/x/fugue sandbox-run --image i -- claude --resume 5ee3a1c0-7e20-4914-9820-0e431ad2b001".into())
        );
        assert_eq!(
            resume(AgentKind::Gemini, "gemini --prompt-interactive=hi"),
            Some("gemini --resume 5ee3a1c0-7e20-4914-9820-0e431ad2b001".into())
        );
        // A pane resumed before is resumed on the new id alone.
        assert_eq!(
            resume(
                AgentKind::Gemini,
                "gemini -m pro --resume 01a209d7-5ee3-7e20-9914-78200e431ad2"
            ),
            Some("gemini -m pro --resume 5ee3a1c0-7e20-4914-9820-0e431ad2b001".into())
        );
        assert_eq!(
            resume(AgentKind::Qwen, "qwen --approval-mode default -i hello"),
            Some("qwen --approval-mode default --resume 5ee3a1c0-7e20-4914-9820-0e431ad2b001".into())
        );
        assert_eq!(resume(AgentKind::Aider, "aider --model x"), None);
        // Only a session id of the agents' shape becomes an argument.
        for bad in ["--dangerously-skip-permissions", "ID", "x; rm -rf ~"] {
            assert_eq!(resume_command(AgentKind::Claude, &words("claude"), bad), None, "{bad}");
        }
    }

    #[test]
    fn a_status_file_counts_only_for_the_process_that_wrote_it() {
        let file = br#"{"status":"waiting","sessionId":"5ee37e20-9914-4e20-9914-78200e431ad2","version":"2.1.197","procStart":"4242"}"#;
        let read = parse_session_file(file, "4242").expect("its own process's file");
        assert_eq!(read.status, "waiting");
        assert_eq!(read.session_id.as_deref(), Some("5ee37e20-9914-4e20-9914-78200e431ad2"));
        assert_eq!(read.version.as_deref(), Some("2.1.197"));
        // A reused pid: another process wrote it.
        assert_eq!(parse_session_file(file, "99"), None);
        // No status, not JSON, too large.
        assert_eq!(parse_session_file(br#"{"procStart":"4242"}"#, "4242"), None);
        assert_eq!(parse_session_file(b"status: idle", "4242"), None);
        let mut large = br#"{"status":"idle","pad":""#.to_vec();
        large.resize(MAX_SESSION_FILE, b'x');
        large.extend_from_slice(br#""}"#);
        assert_eq!(parse_session_file(&large, "4242"), None);
        // A session id that is not one is left out, the status kept.
        let odd = parse_session_file(br#"{"status":"idle","sessionId":"../../etc"}"#, "1").expect("status");
        assert_eq!(odd.session_id, None);
    }

    #[test]
    fn codex_session_ids_from_transcript_paths() {
        let id = rollout_session_id(
            "/h/.codex/sessions/2026/11/23/rollout-2026-11-23T19-17-19-01a209d7-5ee3-7e20-9914-78200e431ad2.jsonl",
        );
        assert_eq!(id.as_deref(), Some("01a209d7-5ee3-7e20-9914-78200e431ad2"));
        assert_eq!(rollout_session_id("/h/.codex/log/rollout-x.jsonl"), None);
        assert_eq!(rollout_session_id("/h/sessions/rollout-short.jsonl"), None);
        assert_eq!(
            rollout_session_id("/h/sessions/rollout-2026-zzzzzzzz-5ee3-7e20-9914-78200e431ad2.jsonl"),
            None
        );
    }

    #[test]
    fn hooks_mean_states_per_agent() {
        let hook = |event: &str, notification: Option<&str>, tool: Option<&str>| AgentHook {
            agent: None,
            event: event.into(),
            session_id: None,
            notification: notification.map(String::from),
            tool: tool.map(String::from),
        };
        use AgentKind::*;
        use AgentState::*;
        assert_eq!(
            hook_state(Claude, &hook("PermissionRequest", None, Some("Bash"))),
            Some(WaitingForPermission)
        );
        assert_eq!(hook_state(Claude, &hook("PreToolUse", None, Some("Bash"))), Some(Busy));
        assert_eq!(
            hook_state(Claude, &hook("PreToolUse", None, Some("AskUserQuestion"))),
            Some(WaitingForAnswer)
        );
        assert_eq!(
            hook_state(Claude, &hook("Notification", Some("idle_prompt"), None)),
            Some(Idle)
        );
        assert_eq!(
            hook_state(Claude, &hook("Notification", Some("something_new"), None)),
            None
        );
        assert_eq!(hook_state(Claude, &hook("Stop", None, None)), Some(Idle));
        assert_eq!(
            hook_state(Gemini, &hook("Notification", Some("ToolPermission"), None)),
            Some(WaitingForPermission)
        );
        assert_eq!(hook_state(Gemini, &hook("AfterAgent", None, None)), Some(Idle));
        assert_eq!(hook_state(Gemini, &hook("Stop", None, None)), None);
        assert_eq!(hook_state(Codex, &hook("Stop", None, None)), Some(Idle));
    }

    #[test]
    fn a_hook_holds_until_the_screen_moves_on() {
        use AgentState::*;
        let at = Instant::now();
        let later = at + Duration::from_secs(2);
        let screen = |state, sure, prompt_shown, changed_at| ScreenVerdict {
            state,
            sure,
            prompt_shown,
            changed_at,
        };
        let hook = |state| HookSeen { state, at };
        // Waiting counts only once the prompt has settled on screen: approve
        // acts on it. While it is drawn, the turn still runs.
        assert_eq!(
            state_from_hook(
                hook(WaitingForPermission),
                &screen(WaitingForPermission, true, true, later)
            ),
            Some(WaitingForPermission)
        );
        assert_eq!(
            state_from_hook(hook(WaitingForPermission), &screen(Busy, true, true, later)),
            Some(Busy)
        );
        assert_eq!(
            state_from_hook(hook(WaitingForPermission), &screen(Busy, false, false, at)),
            None
        );
        // Busy until the screen, changed since, is surely idle (a turn ended by Escape runs no hook).
        assert_eq!(
            state_from_hook(hook(Busy), &screen(Idle, false, false, later)),
            Some(Busy)
        );
        assert_eq!(state_from_hook(hook(Busy), &screen(Idle, true, false, later)), None);
        assert_eq!(state_from_hook(hook(Busy), &screen(Idle, true, false, at)), Some(Busy));
        // Idle, despite the redraw that follows it at once, until a new turn shows.
        let redraw = at + Duration::from_millis(100);
        assert_eq!(
            state_from_hook(hook(Idle), &screen(Busy, true, false, redraw)),
            Some(Idle)
        );
        assert_eq!(state_from_hook(hook(Idle), &screen(Busy, true, false, later)), None);
        // A question needs a person once it shows, settled; a dialog fugue does not
        // know (it may look like a permission prompt: the hook knows better) once
        // the screen has been quiet since the hook. Until then the turn runs.
        let past = Instant::now().checked_sub(Duration::from_secs(2)).unwrap_or(at);
        let asked = |at| HookSeen {
            state: WaitingForAnswer,
            at,
        };
        assert_eq!(
            state_from_hook(asked(past), &screen(WaitingForAnswer, true, true, past)),
            Some(WaitingForAnswer)
        );
        assert_eq!(
            state_from_hook(asked(past), &screen(WaitingForPermission, true, true, past)),
            Some(WaitingForAnswer)
        );
        let now = Instant::now();
        assert_eq!(state_from_hook(asked(now), &screen(Busy, true, false, now)), Some(Busy));
        assert_eq!(
            state_from_hook(hook(WaitingForAnswer), &screen(Idle, true, false, later)),
            None
        );
        // Claude Code's permission request for its own question: still a question.
        assert_eq!(
            state_from_hook(hook(WaitingForPermission), &screen(WaitingForAnswer, true, true, later)),
            Some(WaitingForAnswer)
        );
    }

    #[test]
    fn versions_from_banners() {
        let v = |kind, line: &str| version(kind, &screen(&[line]));
        assert_eq!(
            v(AgentKind::Claude, " ▐▛███▜▌   Claude Code v2.1.197"),
            Some("2.1.197".into())
        );
        assert_eq!(
            v(AgentKind::Codex, "  >_ OpenAI Codex (v0.169.0)"),
            Some("0.169.0".into())
        );
        assert_eq!(
            v(AgentKind::Gemini, " ▝▜▄     Gemini CLI v0.61.0"),
            Some("0.61.0".into())
        );
        assert_eq!(v(AgentKind::Gemini, "no banner"), None);
    }

    #[test]
    fn claude_states() {
        let waiting = ["Bash(rm -rf build)", "Do you want to proceed?", "❯ 1. Yes", "  2. No"];
        let mut memory = AgentMemory::default();
        let lines = screen(&waiting);
        let look = ScreenLook {
            screen: &lines,
            quiet: SETTLED,
            age: SETTLED,
            exited: false,
            first_prompt: false,
            drawn: true,
        };
        let (state, evidence) = detect_state(AgentKind::Claude, &look, &mut memory);
        assert_eq!(state, AgentState::WaitingForPermission);
        assert_eq!(evidence, vec!["Do you want to proceed?", "❯ 1. Yes"]);
        // Not settled yet: not reported as waiting.
        assert_eq!(state_of_claude(&waiting, Duration::from_millis(50)), AgentState::Busy);
        let busy = ["✻ Thinking… (12s · esc to interrupt)"];
        assert_eq!(state_of_claude(&busy, SETTLED), AgentState::Busy);
        let ready = ["❯ ", "  ? for shortcuts"];
        assert_eq!(state_of_claude(&ready, SETTLED), AgentState::Idle);
        assert_eq!(state_of_claude(&ready, Duration::ZERO), AgentState::Busy);
        // A quiet screen it does not know is unknown, never idle or waiting.
        assert_eq!(state_of_claude(&["some dialog"], SETTLED), AgentState::Unknown);
        // Its AskUserQuestion: numbered like a permission prompt, but a question.
        let question = [
            " ☐ Colour",
            "Which colour should the file be?",
            "❯ 1. Blue",
            "     A blue file",
            "  2. Green",
            "  3. Type something.",
        ];
        assert_eq!(state_of_claude(&question, SETTLED), AgentState::WaitingForAnswer);
        assert_eq!(state_of_claude(&question, Duration::from_millis(50)), AgentState::Busy);
        assert!(dialog_on(AgentKind::Claude, &screen(&question)).is_some());
    }

    fn state_of_claude(lines: &[&str], quiet: Duration) -> AgentState {
        state(AgentKind::Claude, lines, quiet)
    }

    #[test]
    fn starting_until_the_interface_or_the_first_turn_shows() {
        let logo = screen(&["  >_ OpenAI Codex (v0.169.0)", "   ⣀⣤⣤⣤⣀⣀"]);
        let ready = screen(&["› Ask Codex to do anything"]);
        let working = screen(&["• Working (0s • esc to interrupt)", "› Ask Codex to do anything"]);
        let mut memory = AgentMemory::default();
        fn look(screen: &[String], first_prompt: bool) -> ScreenLook<'_> {
            ScreenLook {
                screen,
                quiet: SETTLED,
                age: SETTLED,
                exited: false,
                first_prompt,
                drawn: true,
            }
        }
        // The logo, however long it stays: starting, not idle.
        assert_eq!(
            detect_state(AgentKind::Codex, &look(&logo, false), &mut memory).0,
            AgentState::Starting
        );
        // Its input box up, with a first prompt pending: still starting.
        assert_eq!(
            detect_state(AgentKind::Codex, &look(&ready, true), &mut memory).0,
            AgentState::Starting
        );
        // Without one, idle.
        let mut fresh = AgentMemory::default();
        assert_eq!(
            detect_state(AgentKind::Codex, &look(&ready, false), &mut fresh).0,
            AgentState::Idle
        );
        // The first turn shows, then ends: idle.
        assert_eq!(
            detect_state(AgentKind::Codex, &look(&working, true), &mut memory).0,
            AgentState::Busy
        );
        assert_eq!(
            detect_state(AgentKind::Codex, &look(&ready, true), &mut memory).0,
            AgentState::Idle
        );
        // A first turn that never shows stops holding it after FIRST_TURN_LIMIT.
        let mut stuck = AgentMemory::default();
        let late = ScreenLook {
            age: FIRST_TURN_LIMIT,
            ..look(&ready, true)
        };
        assert_eq!(detect_state(AgentKind::Codex, &late, &mut stuck).0, AgentState::Idle);
    }

    /// A Codex permission prompt as it sits on screen while a timer below it
    /// counts (the redraw that made it flap to busy twice a second).
    fn codex_dialog(command: &str, seconds: u32) -> Vec<String> {
        [
            "  >_ OpenAI Codex (v0.169.0)".to_string(),
            String::new(),
            format!("  $ {command}"),
            String::new(),
            "  Would you like to run the following command?".into(),
            "  › 1. Yes, proceed (y)".into(),
            "    2. No, and tell Codex what to do differently (esc)".into(),
            "  Press enter to confirm or esc to cancel".into(),
            format!("• Working ({seconds}s • esc to interrupt)"),
        ]
        .into()
    }

    #[test]
    fn a_dialog_holds_while_the_screen_around_it_animates() {
        let mut memory = AgentMemory::default();
        let look = |screen: &[String], quiet: Duration, memory: &mut AgentMemory| {
            let look = ScreenLook {
                screen,
                quiet,
                age: SETTLED,
                exited: false,
                first_prompt: false,
                drawn: true,
            };
            detect_state(AgentKind::Codex, &look, memory).0
        };
        let redrawn = Duration::from_millis(30);
        // Not settled at first: the dialog may still be drawing.
        assert_eq!(
            look(&codex_dialog("touch a", 1), redrawn, &mut memory),
            AgentState::Busy
        );
        assert_eq!(
            look(&codex_dialog("touch a", 2), SETTLED, &mut memory),
            AgentState::WaitingForPermission
        );
        // The timer redraws every second; the dialog's lines do not change.
        for seconds in 3..30 {
            let state = look(&codex_dialog("touch a", seconds), redrawn, &mut memory);
            assert_eq!(state, AgentState::WaitingForPermission, "at {seconds}s");
        }
        // Answered: the dialog goes, the turn runs.
        let running = vec!["• Working (31s • esc to interrupt)".to_string()];
        assert_eq!(look(&running, redrawn, &mut memory), AgentState::Busy);
        // A new dialog must settle again before it counts.
        assert_eq!(
            look(&codex_dialog("touch b", 32), redrawn, &mut memory),
            AgentState::Busy
        );
        assert_eq!(
            look(&codex_dialog("touch b", 33), SETTLED, &mut memory),
            AgentState::WaitingForPermission
        );
    }

    /// Qwen Code 0.24's permission dialog, as captured, with its spinner frame.
    fn qwen_dialog(spinner: &str) -> Vec<String> {
        screen(&[
            "  ◆︎ Let me create that file for you.",
            "  ? Shell touch approved.txt (Create the file the user asked for.) ←",
            "     touch approved.txt",
            "   Allow execution of: 'touch'?",
            "   › 1. Yes, allow once",
            "     2. Always allow run 'touch *' commands in this project",
            "     4. No, suggest changes (esc)",
            &format!("  {spinner} Waiting for user confirmation..."),
        ])
    }

    #[test]
    fn new_agents_dialogs_hold_and_their_rest_and_turns_read_right() {
        let mut memory = AgentMemory::default();
        let mut look = |kind, screen: &[String], quiet: Duration| {
            let look = ScreenLook {
                screen,
                quiet,
                age: SETTLED,
                exited: false,
                first_prompt: false,
                drawn: true,
            };
            detect_state(kind, &look, &mut memory).0
        };
        let redrawn = Duration::from_millis(30);
        // Qwen Code: its spinner turns under the dialog; the dialog holds.
        assert_eq!(
            look(AgentKind::Qwen, &qwen_dialog("⠋"), SETTLED),
            AgentState::WaitingForPermission
        );
        for spinner in ["⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"] {
            let state = look(AgentKind::Qwen, &qwen_dialog(spinner), redrawn);
            assert_eq!(state, AgentState::WaitingForPermission, "{spinner}");
        }
        let qwen_busy = screen(&[
            "  .. Communing with the machine spirit... (1s · ↓ 4 tokens · esc to cancel)",
            ">   Type your message or @path/to/file",
            "  Enter to steer · Ctrl+Q to queue · ⏸ Ask permissions (shift + tab to cycle)",
        ]);
        assert_eq!(look(AgentKind::Qwen, &qwen_busy, SETTLED), AgentState::Busy);
        // opencode: its dialog and its spinner line.
        let opencode_dialog = screen(&[
            "  ┃  △ Permission required",
            "  ┃    # Shell command",
            "  ┃  $ touch approved.txt",
            "  ┃   Allow once   Allow always   Reject                    ctrl+f fullscreen  ⇆ select  enter confirm",
        ]);
        assert_eq!(
            look(AgentKind::OpenCode, &opencode_dialog, SETTLED),
            AgentState::WaitingForPermission
        );
        let opencode_busy = screen(&["   ⬝⬝⬝⬝⬝⬝⬝⬝  esc interrupt                          20  ctrl+p commands"]);
        assert_eq!(look(AgentKind::OpenCode, &opencode_busy, SETTLED), AgentState::Busy);
        let opencode_rest = screen(&["   /tmp/oh/proj                                    20  ctrl+p commands"]);
        assert_eq!(look(AgentKind::OpenCode, &opencode_rest, SETTLED), AgentState::Idle);
        // aider: a line-oriented CLI. Its question waits while it is the last
        // line; once answered (Enter takes the default and echoes nothing) what
        // follows is its turn, then its input prompt.
        let asked = screen(&[
            "diff> Create a file for me. FILE=approved.txt",
            "touch approved.txt",
            "Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]: ",
            "",
        ]);
        assert_eq!(
            look(AgentKind::Aider, &asked, SETTLED),
            AgentState::WaitingForPermission
        );
        let mut answered = asked.clone();
        answered.push("Running touch approved.txt".into());
        assert_eq!(look(AgentKind::Aider, &answered, redrawn), AgentState::Busy);
        answered.push("diff>".into());
        assert_eq!(look(AgentKind::Aider, &answered, SETTLED), AgentState::Idle);
        // "n" typed, Enter not yet: no longer a question waiting.
        let typed = screen(&["Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]: n"]);
        assert_ne!(
            look(AgentKind::Aider, &typed, SETTLED),
            AgentState::WaitingForPermission
        );
        assert_eq!(
            answer_keys(Some(AgentKind::Aider), fugue_protocol::PermissionAnswer::Deny),
            ["n", "Enter"]
        );
    }

    #[test]
    fn a_dialog_is_known_by_its_markers_and_told_apart_by_its_command() {
        let (markers, block) = dialog_on(AgentKind::Codex, &codex_dialog("touch a", 3)).unwrap();
        let (markers_later, block_later) = dialog_on(AgentKind::Codex, &codex_dialog("touch a", 9)).unwrap();
        // The timer is below the dialog: neither digest moves with it.
        assert_eq!((markers, block), (markers_later, block_later));
        let (markers_b, block_b) = dialog_on(AgentKind::Codex, &codex_dialog("touch b", 3)).unwrap();
        assert_eq!(markers, markers_b);
        assert_ne!(block, block_b);
        assert_eq!(
            dialog_on(AgentKind::Codex, &["• Working (1s • esc to interrupt)".into()]),
            None
        );
        // Qwen Code's spinner turns inside its dialog: the same dialog.
        assert_eq!(
            dialog_on(AgentKind::Qwen, &qwen_dialog("⠋")),
            dialog_on(AgentKind::Qwen, &qwen_dialog("⠙"))
        );
    }

    #[test]
    fn the_same_words_mean_different_things_per_agent() {
        let line = ["(esc to cancel)"];
        assert_eq!(
            state(AgentKind::Claude, &line, SETTLED),
            AgentState::WaitingForPermission
        );
        assert_eq!(state(AgentKind::Gemini, &line, SETTLED), AgentState::Busy);
        let codex = ["Allow command?", "press enter to confirm or esc to cancel"];
        assert_eq!(
            state(AgentKind::Codex, &codex, SETTLED),
            AgentState::WaitingForPermission
        );
    }

    #[test]
    fn session_file_status_with_the_screen() {
        use AgentState::*;
        let file = |status, screen, evidence| state_from_session_file(status, screen, evidence);
        assert_eq!(file("busy", Idle, true), Some(Busy));
        assert_eq!(file("idle", Starting, false), Some(Starting));
        assert_eq!(file("idle", Unknown, false), Some(Idle));
        // Output flowing with no marker: the file knows the turn ended.
        assert_eq!(file("idle", Busy, false), Some(Idle));
        // The screen's markers come first: the file is written a moment later.
        assert_eq!(file("idle", Busy, true), None);
        assert_eq!(file("busy", WaitingForPermission, true), None);
        // A prompt still settling on screen.
        assert_eq!(file("waiting", Busy, false), None);
        // Waiting on something the screen does not show as a permission prompt.
        assert_eq!(file("waiting", Idle, true), Some(Unknown));
        assert_eq!(file("new-status", Idle, true), None);
    }

    fn verdict(state: AgentState, sure: bool, prompt_shown: bool) -> ScreenVerdict {
        ScreenVerdict {
            state,
            sure,
            prompt_shown,
            changed_at: Instant::now(),
        }
    }

    #[test]
    fn titles_and_program_status_per_agent() {
        let signals = |status: Option<ProgramStatus>, title: Option<&str>| TerminalSignals {
            status,
            title: title.map(str::to_string),
        };
        let signal = |kind, s: &TerminalSignals| terminal_signal(kind, s).map(|(signal, _)| signal);
        use Signal::*;
        // What the tested versions set (tests/tests/agents.rs ran them).
        let claude = [
            ("⠂ Claude Code", Running),
            ("⠐ Fix the bug", Running),
            ("✳ Claude Code", Resting),
        ];
        for (title, meant) in claude {
            assert_eq!(
                signal(AgentKind::Claude, &signals(None, Some(title))),
                Some(meant),
                "{title}"
            );
        }
        let gemini = [
            ("◇  Ready (project)", Resting),
            ("✦  Working… (project)", Running),
            ("✦  Reading the files (project)", Running),
            ("✋  Action Required (project)", Permission),
        ];
        for (title, meant) in gemini {
            assert_eq!(
                signal(AgentKind::Gemini, &signals(None, Some(title))),
                Some(meant),
                "{title}"
            );
        }
        let codex = [
            ("⠹ project", Some(Running)),
            ("[ ! ] Action Required | project", Some(Permission)),
        ];
        for (title, meant) in codex {
            assert_eq!(signal(AgentKind::Codex, &signals(None, Some(title))), meant, "{title}");
        }
        // A title without a marker (Codex at rest, Gemini's static title) says nothing...
        assert_eq!(signal(AgentKind::Codex, &signals(None, Some("project"))), None);
        assert_eq!(
            signal(AgentKind::Gemini, &signals(None, Some("Gemini CLI (project)"))),
            None
        );
        // ...but a program status does, and comes before the title.
        let resting = signals(Some(ProgramStatus::Resting), Some("⠹ project"));
        assert_eq!(signal(AgentKind::Codex, &resting), Some(Resting));
        let question = signals(Some(ProgramStatus::Blocked { permission: false }), None);
        assert_eq!(signal(AgentKind::Codex, &question), Some(Question));
    }

    #[test]
    fn signals_with_the_screen() {
        use AgentState::*;
        use Signal::*;
        let at = |signal, screen: ScreenVerdict| state_from_signal(signal, &screen);
        // Explicit and as fresh as the screen: idle needs no quiet time.
        assert_eq!(at(Resting, verdict(Busy, false, false)), Some(Idle));
        assert_eq!(at(Resting, verdict(Unknown, false, false)), Some(Idle));
        assert_eq!(at(Running, verdict(Idle, true, false)), Some(Busy));
        // Waiting once the prompt has settled on screen; never without it.
        assert_eq!(
            at(Permission, verdict(WaitingForPermission, true, true)),
            Some(WaitingForPermission)
        );
        assert_eq!(at(Permission, verdict(Busy, false, true)), None);
        assert_eq!(at(Permission, verdict(Busy, false, false)), None);
        assert_eq!(at(Question, verdict(Idle, true, false)), Some(WaitingForAnswer));
        // Claude Code's title rests while its prompt is up; a busy line on screen
        // outranks a title that has not caught up.
        assert_eq!(at(Resting, verdict(WaitingForPermission, true, true)), None);
        assert_eq!(at(Resting, verdict(Busy, true, false)), None);
        assert_eq!(at(Running, verdict(WaitingForPermission, true, true)), None);
        // Starting and exited stay so (Gemini says Ready before its first prompt runs).
        assert_eq!(at(Resting, verdict(Starting, false, false)), None);
        assert_eq!(at(Running, verdict(Exited, false, false)), None);
    }

    /// Each CLI's input box as its tested version draws it (fugue captures of
    /// the real CLIs): empty with its placeholder, with "draft words here"
    /// typed, and with the caret moved back three cells.
    #[test]
    fn a_draft_is_what_sits_before_the_caret_never_a_placeholder() {
        let rule = "─".repeat(40);
        let cases: [(AgentKind, &str, &str, u16, u16); 6] = [
            (AgentKind::Claude, "❯\u{a0}", "❯\u{a0}draft words here", 2, 2),
            (
                AgentKind::Codex,
                "› Ask Codex to do anything",
                "› draft words here",
                2,
                2,
            ),
            (
                AgentKind::Gemini,
                " >   Type your message or @path/to/file",
                " > draft words here",
                3,
                3,
            ),
            (
                AgentKind::Qwen,
                ">   Type your message or @path/to/file",
                "> draft words here \u{200b}",
                2,
                2,
            ),
            (AgentKind::OpenCode, "  ┃", "  ┃  draft words here", 5, 5),
            (AgentKind::Aider, "diff>", "diff> draft words here", 6, 6),
        ];
        for (kind, empty, typed, empty_col, start) in cases {
            let screen = |input: &str| {
                vec![
                    "● Done: the file is there.".to_string(),
                    rule.clone(),
                    input.to_string(),
                ]
            };
            assert_eq!(draft(kind, &screen(empty), (2, empty_col)), None, "{kind:?}");
            let end = start + 16;
            assert_eq!(
                draft(kind, &screen(typed), (2, end)).as_deref(),
                Some("draft words here"),
                "{kind:?}"
            );
            assert_eq!(
                draft(kind, &screen(typed), (2, end - 3)).as_deref(),
                Some("draft words here"),
                "{kind:?}: caret moved left"
            );
            // A caret at the box's start: whatever follows is a placeholder.
            assert_eq!(draft(kind, &screen(typed), (2, start)), None, "{kind:?}");
            // The cursor elsewhere (a turn's output): no input box there.
            assert_eq!(draft(kind, &screen(typed), (0, 10)), None, "{kind:?}");
        }
    }

    #[test]
    fn a_draft_of_several_lines_wide_characters_and_history_above_the_box() {
        let rule = "─".repeat(40);
        let screen: Vec<String> = [
            "❯ an earlier prompt",
            "● Done.",
            &rule,
            "❯ first line",
            "  second 日本",
            &rule,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // The caret after "日本" (two wide characters: four cells).
        assert_eq!(
            draft(AgentKind::Claude, &screen, (4, 13)).as_deref(),
            Some("first line\nsecond 日本")
        );
        // On the second line's start: the first line was typed before it.
        assert_eq!(
            draft(AgentKind::Claude, &screen, (4, 0)).as_deref(),
            Some("first line\nsecond 日本")
        );
        // A caret on the rule under the box: the history above never counts.
        assert_eq!(draft(AgentKind::Claude, &screen, (5, 3)), None);
        let lone: Vec<String> = vec!["❯ an earlier prompt".into(), "".into(), "plain output".into()];
        assert_eq!(draft(AgentKind::Claude, &lone, (2, 5)), None);
        // Cells, not chars: the caret inside "日本" counts only what is before it.
        let wide: Vec<String> = vec![rule.clone(), "› 日本語".into()];
        assert_eq!(draft(AgentKind::Codex, &wide, (1, 4)).as_deref(), Some("日本語"));
        assert_eq!(draft(AgentKind::Codex, &wide, (1, 2)), None);
        // An agent with no input markers, and a cursor off the screen.
        assert_eq!(draft(AgentKind::Claude, &wide, (9, 0)), None);
    }
}
