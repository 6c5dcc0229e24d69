//! Every bound on what a client may ask of the daemon, and the one check
//! ([`Validate`], through `Request::validate`) that each request passes before the daemon acts on it.
//!
//! A refusal is one line that names what was wrong and the limit
//! (`size 65535x65535 exceeds the maximum 10000x10000`). The daemon calls
//! `Request::validate` for every request it reads, so no other code path needs to
//! re-check these bounds; the CLI and the MCP bridge may call it early for a
//! faster error, but never instead.

use crate::error::ErrorReply;
use crate::messages::*;
use crate::requests as rq;
use crate::target::validate_session_name;
use std::borrow::Cow;

/// Narrowest terminal: the emulator cannot place a wide character in one column.
pub const MIN_COLS: u16 = 2;
/// Longest side of a terminal (tmux's limit).
pub const MAX_SIDE: u16 = 10_000;
/// Most cells in one terminal: the emulator allocates every cell up front.
pub const MAX_CELLS: u32 = 1_000_000;
/// Longest pane title, in characters (also applies to titles programs set).
pub const MAX_TITLE_CHARS: usize = 256;
/// Characters in a permission prompt's id (fugue's are 16 hex digits).
pub const MAX_PROMPT_ID_CHARS: usize = 64;
/// Characters in one field of an agent hook report (event, session id, ...).
pub const MAX_HOOK_FIELD_CHARS: usize = 256;
/// Longest pane purpose, in characters.
pub const MAX_PURPOSE_CHARS: usize = 1024;
/// Longest session or pane target string, in bytes.
pub const MAX_TARGET_BYTES: usize = 512;
/// Longest key name (`C-M-a`, `PageDown`, ...), in bytes.
pub const MAX_KEY_NAME_BYTES: usize = 32;
/// Most keys in one SendKeys request.
pub const MAX_KEYS: usize = 4096;
/// Environment variables in one request.
pub const MAX_ENV_VARS: usize = 256;
pub const MAX_ENV_NAME_BYTES: usize = 256;
pub const MAX_ENV_VALUE_BYTES: usize = 32 * 1024;
/// Program arguments, and the bytes of program and arguments together.
pub const MAX_ARGS: usize = 4096;
pub const MAX_COMMAND_BYTES: usize = 256 * 1024;
/// Longest path (cwd), in bytes (Linux's PATH_MAX).
pub const MAX_PATH_BYTES: usize = 4096;
/// Longest wait pattern, in bytes, and the most memory its compiled form may take.
pub const MAX_PATTERN_BYTES: usize = 4096;
pub const MAX_PATTERN_MEMORY: usize = 1024 * 1024;
/// Most input bytes in one WriteInput request (the client splits larger writes).
pub const MAX_WRITE_BYTES: usize = 1024 * 1024;
/// Longest timeout or idle time a wait may ask for: 30 days.
pub const MAX_TIMEOUT_MS: u64 = 30 * 24 * 3600 * 1000;
/// Most bytes one read (raw bytes, text lines or a capture) returns.
pub const MAX_READ_BYTES: usize = 8 * 1024 * 1024;
/// Most text lines one read may ask for.
pub const MAX_READ_LINES: u32 = 100_000;
/// Agent states, or needs, one wait may name (each list; repeats count).
pub const MAX_WAIT_STATES: usize = 32;
/// Largest raw log a pane may keep (`output_byte_limit`).
pub const MAX_OUTPUT_LIMIT: u64 = 256 * 1024 * 1024;
/// Most panes named in one ReorderPanes request.
pub const MAX_REORDER: usize = 10_000;
/// Longest client name or version in a Hello, in bytes.
pub const MAX_HELLO_FIELD_BYTES: usize = 128;
/// Largest frame a client may send (a WriteInput of [`MAX_WRITE_BYTES`] plus room).
/// Larger frames are refused as soon as their length prefix is read.
pub const MAX_CLIENT_FRAME_BYTES: usize = 2 * 1024 * 1024;

fn invalid(message: String) -> ErrorReply {
    ErrorReply::invalid(message)
}

/// A terminal size within [`MAX_SIDE`] and [`MAX_CELLS`], at least [`MIN_COLS`]x1.
pub fn check_size(size: PaneSize) -> Result<(), ErrorReply> {
    let PaneSize { cols, rows } = size;
    if cols < MIN_COLS || rows == 0 {
        return Err(invalid(format!(
            "size {cols}x{rows} is too small; the minimum is {MIN_COLS}x1"
        )));
    }
    if cols > MAX_SIDE || rows > MAX_SIDE {
        return Err(invalid(format!(
            "size {cols}x{rows} exceeds the maximum {MAX_SIDE}x{MAX_SIDE}"
        )));
    }
    let cells = cols as u32 * rows as u32;
    if cells > MAX_CELLS {
        return Err(invalid(format!(
            "size {cols}x{rows} is {cells} cells; the maximum is {MAX_CELLS} (e.g. 1000x1000)"
        )));
    }
    Ok(())
}

/// The nearest size that [`check_size`] accepts: sides clamped, then rows cut
/// until the cell count fits.
pub fn clamp_size(size: PaneSize) -> PaneSize {
    let cols = size.cols.clamp(MIN_COLS, MAX_SIDE);
    let max_rows = (MAX_CELLS / cols as u32).min(MAX_SIDE as u32) as u16;
    PaneSize {
        cols,
        rows: size.rows.clamp(1, max_rows),
    }
}

/// Characters that must never reach a person's terminal or an agent's context
/// raw from a name, title, command or line fugue shows: C0 and C1 controls, the
/// bidirectional overrides, isolates and marks that reorder text, and the
/// zero-width characters that hide it (two names that look alike). Tables show
/// them escaped, JSON writes them as `\u` escapes (`views::safe_json`); the one
/// rule is written down in docs/output.md.
pub fn is_unsafe_char(c: char) -> bool {
    is_control_or_bidi(c) || is_zero_width(c)
}

/// Controls and bidirectional formatting (the part of [`is_unsafe_char`] that a
/// screen's text never keeps: a zero-width joiner stays, it joins an emoji).
pub fn is_control_or_bidi(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// Zero-width space, non-joiner, joiner, word joiner and the byte-order mark.
pub fn is_zero_width(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}')
}

/// The one sanitiser for text the daemon hands out as a name that it did not
/// check on the way in (a title a program set, a title derived from a command,
/// text an agent reported): unsafe characters (see [`is_unsafe_char`]) dropped,
/// at most `max` characters kept.
pub fn clean_label(text: &str, max: usize) -> String {
    text.chars().filter(|c| !is_unsafe_char(*c)).take(max).collect()
}

/// Checks a human-readable label (title, purpose): at most `max` characters and
/// no unsafe characters. `what` names it in the error.
pub fn check_label(what: &str, text: &str, max: usize) -> Result<(), ErrorReply> {
    let len = text.chars().count();
    if len > max {
        return Err(invalid(format!("{what} is {len} characters; the maximum is {max}")));
    }
    if let Some(bad) = text.chars().find(|c| is_unsafe_char(*c)) {
        return Err(invalid(format!(
            "{what} contains the control character {}; control and bidi-override characters are not allowed",
            escape_char(bad)
        )));
    }
    Ok(())
}

fn check_bytes(what: &str, text: &str, max: usize) -> Result<(), ErrorReply> {
    if text.len() > max {
        return Err(invalid(format!("{what} is {} bytes; the maximum is {max}", text.len())));
    }
    Ok(())
}

fn check_target(what: &str, text: &str) -> Result<(), ErrorReply> {
    check_bytes(what, text, MAX_TARGET_BYTES)
}

/// Checks the pane a request says it comes from, and its token.
pub(crate) fn check_caller(caller: &crate::PaneCaller) -> Result<(), ErrorReply> {
    check_target("caller pane", &caller.pane)?;
    check_bytes("caller token", &caller.token, MAX_TARGET_BYTES)
}

pub fn check_timeout(what: &str, ms: u64) -> Result<(), ErrorReply> {
    if ms > MAX_TIMEOUT_MS {
        return Err(invalid(format!(
            "{what} {ms} ms exceeds the maximum {MAX_TIMEOUT_MS} ms (30 days)"
        )));
    }
    Ok(())
}

/// Checks an environment list: count, name and value sizes, and the characters a
/// process environment cannot hold.
pub fn check_env(env: &[EnvVar]) -> Result<(), ErrorReply> {
    if env.len() > MAX_ENV_VARS {
        return Err(invalid(format!(
            "{} environment variables; the maximum is {MAX_ENV_VARS}",
            env.len()
        )));
    }
    env.iter().try_for_each(|var| check_env_var(&var.name, &var.value))
}

/// Checks one environment variable: name and value sizes, and the characters a
/// process environment cannot hold.
pub fn check_env_var(name: &str, value: &str) -> Result<(), ErrorReply> {
    if name.is_empty() {
        return Err(invalid("environment variable with an empty name".into()));
    }
    check_bytes("environment variable name", name, MAX_ENV_NAME_BYTES)?;
    if name.contains(['=', '\0']) {
        return Err(invalid(format!(
            "environment variable name {} may not contain '=' or NUL",
            escape_for_display(name)
        )));
    }
    check_bytes(&format!("value of {name}"), value, MAX_ENV_VALUE_BYTES)?;
    if value.contains('\0') {
        return Err(invalid(format!("value of environment variable {name} contains NUL")));
    }
    Ok(())
}

pub(crate) fn check_path(what: &str, path: &Option<String>) -> Result<(), ErrorReply> {
    let Some(path) = path else { return Ok(()) };
    check_bytes(what, path, MAX_PATH_BYTES)?;
    if path.contains('\0') {
        return Err(invalid(format!("{what} contains NUL")));
    }
    Ok(())
}

/// Compiles a wait pattern within [`MAX_PATTERN_BYTES`] and [`MAX_PATTERN_MEMORY`].
/// The daemon compiles with this too, so the check and the use agree. The
/// meta regex (rather than `regex::Regex`) reports its memory, which the daemon
/// charges to the client that asked, and lets each search bring its own cache.
pub fn compile_pattern(pattern: &str) -> Result<regex_automata::meta::Regex, ErrorReply> {
    use regex_automata::{meta, nfa::thompson::WhichCaptures, util::syntax};
    check_bytes("pattern", pattern, MAX_PATTERN_BYTES)?;
    let config = meta::Config::new()
        .match_kind(regex_automata::MatchKind::LeftmostFirst)
        .utf8_empty(true)
        .which_captures(WhichCaptures::Implicit)
        .nfa_size_limit(Some(MAX_PATTERN_MEMORY))
        .onepass_size_limit(Some(MAX_PATTERN_MEMORY))
        .dfa_size_limit(Some(MAX_PATTERN_MEMORY))
        .hybrid_cache_capacity(MAX_PATTERN_MEMORY);
    meta::Builder::new()
        .configure(config)
        .syntax(syntax::Config::new().utf8(true).nest_limit(64))
        .build(pattern)
        .map_err(|e| match (e.size_limit(), e.syntax_error()) {
            (Some(_), _) => invalid(format!(
                "pattern compiles to more than {MAX_PATTERN_MEMORY} bytes; simplify it"
            )),
            (None, Some(syntax)) => invalid(format!("bad pattern: {}", one_line(&syntax.to_string()))),
            (None, None) => invalid(format!("bad pattern: {}", one_line(&e.to_string()))),
        })
}

/// Whether `id` has the shape of an agent CLI's session id: a UUID, 8-4-4-4-12
/// hex digits (Claude Code, Codex and Gemini CLI all use one). Nothing else is
/// recorded, so nothing else can reach a resume command line.
pub fn is_agent_session_id(id: &str) -> bool {
    id.len() == 36
        && id.split('-').map(str::len).eq([8, 4, 4, 4, 12])
        && id.chars().all(|c| c == '-' || c.is_ascii_hexdigit())
}

/// [`is_agent_session_id`] as a check with a one-line refusal.
pub fn check_agent_session_id(id: &str) -> Result<(), ErrorReply> {
    match is_agent_session_id(id) {
        true => Ok(()),
        false => Err(invalid(format!(
            "agent session id {} is not a UUID (8-4-4-4-12 hex digits)",
            escape_for_display(&truncate_for_display(id, 64))
        ))),
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn check_spawn(spec: &SpawnSpec) -> Result<(), ErrorReply> {
    check_target("session", &spec.session)?;
    if spec.args.len() > MAX_ARGS {
        return Err(invalid(format!(
            "{} arguments; the maximum is {MAX_ARGS}",
            spec.args.len()
        )));
    }
    let command_bytes = spec.command.as_deref().map_or(0, str::len) + spec.args.iter().map(String::len).sum::<usize>();
    if command_bytes > MAX_COMMAND_BYTES {
        return Err(invalid(format!(
            "command and arguments are {command_bytes} bytes; the maximum is {MAX_COMMAND_BYTES}"
        )));
    }
    let nul = spec.command.iter().chain(&spec.args).any(|a| a.contains('\0'));
    if nul {
        return Err(invalid("command or argument contains NUL".into()));
    }
    check_env(&spec.env)?;
    check_path("cwd", &spec.cwd)?;
    if let Some(title) = &spec.title {
        check_label("title", title, MAX_TITLE_CHARS)?;
    }
    if let Some(purpose) = &spec.purpose {
        check_label("purpose", purpose, MAX_PURPOSE_CHARS)?;
    }
    if let Some(size) = spec.size {
        check_size(size)?;
    }
    if let Some(limit) = spec.output_byte_limit {
        if limit > MAX_OUTPUT_LIMIT {
            return Err(invalid(format!(
                "output byte limit {limit} exceeds the maximum {MAX_OUTPUT_LIMIT}"
            )));
        }
    }
    Ok(())
}

/// The bounds of one request, checked before the daemon acts on it (through
/// [`Request::validate`]). Every request struct implements it: the table in
/// `requests.rs` does not compile for one that does not.
pub trait Validate {
    fn validate(&self) -> Result<(), ErrorReply>;
}

/// Requests with nothing to check.
macro_rules! nothing_to_check {
    ($($request:ident),*) => {
        $(impl Validate for rq::$request {
            fn validate(&self) -> Result<(), ErrorReply> {
                Ok(())
            }
        })*
    };
}

nothing_to_check!(
    Ping,
    DaemonStatus,
    Shutdown,
    ListSessions,
    Subscribe,
    UpgradeDaemon,
    Cancel,
    PushKey,
    ListDevices,
    BackgroundAgents
);

/// Requests whose only string is one pane target.
macro_rules! one_pane {
    ($($request:ident),*) => {
        $(impl Validate for rq::$request {
            fn validate(&self) -> Result<(), ErrorReply> {
                check_target("pane", &self.pane)
            }
        })*
    };
}

one_pane!(
    PaneStatus,
    Interrupt,
    ReleasePane,
    Detach,
    AgentStatus,
    ResumeAgent,
    HibernatePane,
    WakePane,
    SetSizePolicy,
    Capture
);

fn check_optional_session(session: &Option<String>) -> Result<(), ErrorReply> {
    session.as_deref().map_or(Ok(()), |s| check_target("session", s))
}

impl Validate for rq::CreateSession {
    fn validate(&self) -> Result<(), ErrorReply> {
        validate_session_name(&self.name)?;
        check_path("cwd", &self.cwd)?;
        check_env(&self.env)
    }
}

impl Validate for rq::RenameSession {
    fn validate(&self) -> Result<(), ErrorReply> {
        check_target("session", &self.session)?;
        validate_session_name(&self.name)
    }
}

impl Validate for rq::DestroySession {
    fn validate(&self) -> Result<(), ErrorReply> {
        check_target("session", &self.session)
    }
}

impl Validate for rq::ListPanes {
    fn validate(&self) -> Result<(), ErrorReply> {
        check_optional_session(&self.session)
    }
}

/// Most matches one grep returns, and the most bytes of matched lines.
pub const MAX_GREP_MATCHES: u32 = 1000;
pub const MAX_GREP_REPLY_BYTES: usize = 1024 * 1024;
/// A matched line is cut to this many bytes in a grep's reply.
pub const MAX_GREP_LINE_BYTES: usize = 1024;

impl Validate for rq::Grep {
    fn validate(&self) -> Result<(), ErrorReply> {
        check_optional_session(&self.session)?;
        check_bytes("pattern", &self.pattern, MAX_PATTERN_BYTES)?;
        if self.max_matches == 0 || self.max_matches > MAX_GREP_MATCHES {
            return Err(ErrorReply::invalid(format!(
                "max_matches must be 1 to {MAX_GREP_MATCHES}, not {}",
                self.max_matches
            )));
        }
        Ok(())
    }
}

impl Validate for rq::Overview {
    fn validate(&self) -> Result<(), ErrorReply> {
        check_optional_session(&self.session)
    }
}

impl Validate for rq::CreatePane {
    fn validate(&self) -> Result<(), ErrorReply> {
        check_spawn(&self.spec)
    }
}

impl Validate for rq::KillPane {
    fn validate(&self) -> Result<(), ErrorReply> {
        check_target("pane", &self.pane)?;
        self.signal.as_deref().map_or(Ok(()), |s| check_bytes("signal", s, 32))
    }
}

impl Validate for rq::WriteInput {
    fn validate(&self) -> Result<(), ErrorReply> {
        check_target("pane", &self.pane)?;
        if self.data.len() > MAX_WRITE_BYTES {
            return Err(invalid(format!(
                "input of {} bytes exceeds the maximum {MAX_WRITE_BYTES} per request; split it",
                self.data.len()
            )));
        }
        Ok(())
    }
}

impl Validate for rq::SendKeys {
    fn validate(&self) -> Result<(), ErrorReply> {
        check_target("pane", &self.pane)?;
        if self.keys.len() > MAX_KEYS {
            return Err(invalid(format!(
                "{} keys; the maximum is {MAX_KEYS} per request",
                self.keys.len()
            )));
        }
        self.keys.iter().try_for_each(|key| crate::keys::check_key_name(key))
    }
}

/// Requests that name a pane and a size.
macro_rules! pane_and_size {
    ($($request:ident),*) => {
        $(impl Validate for rq::$request {
            fn validate(&self) -> Result<(), ErrorReply> {
                check_target("pane", &self.pane)?;
                check_size(self.size)
            }
        })*
    };
}

pane_and_size!(ResizePane, ClientResize);

impl Validate for rq::Attach {
    fn validate(&self) -> Result<(), ErrorReply> {
        check_target("pane", &self.pane)?;
        self.size.map_or(Ok(()), check_size)
    }
}

impl Validate for rq::RenamePane {
    fn validate(&self) -> Result<(), ErrorReply> {
        check_target("pane", &self.pane)?;
        check_label("title", &self.title, MAX_TITLE_CHARS)
    }
}

impl Validate for rq::ReorderPanes {
    fn validate(&self) -> Result<(), ErrorReply> {
        check_target("session", &self.session)?;
        if self.panes.len() > MAX_REORDER {
            return Err(invalid(format!(
                "{} panes named; the maximum is {MAX_REORDER}",
                self.panes.len()
            )));
        }
        self.panes.iter().try_for_each(|p| check_target("pane", p))
    }
}

/// An idempotency key of a prompt: at most this many characters.
pub const MAX_PROMPT_KEY_CHARS: usize = 128;
/// Evidence lines a prompt receipt keeps, and characters of each.
pub const RECEIPT_EVIDENCE_LINES: usize = 4;
pub const RECEIPT_EVIDENCE_CHARS: usize = 200;
/// The most a prompt receipt takes encoded: its evidence (4 bytes a character
/// at most), its key and the rest.
pub const MAX_PROMPT_RECEIPT_BYTES: usize =
    RECEIPT_EVIDENCE_LINES * (RECEIPT_EVIDENCE_CHARS * 4 + 8) + MAX_PROMPT_KEY_CHARS * 4 + 256;

fn check_prompt_key(key: &str) -> Result<(), ErrorReply> {
    if key.is_empty() {
        return Err(invalid("prompt key is empty".into()));
    }
    check_label("prompt key", key, MAX_PROMPT_KEY_CHARS)
}

impl Validate for rq::SendPrompt {
    fn validate(&self) -> Result<(), ErrorReply> {
        check_target("pane", &self.pane)?;
        if self.text.len() > MAX_WRITE_BYTES {
            return Err(invalid(format!(
                "a prompt of {} bytes exceeds the maximum {MAX_WRITE_BYTES}",
                self.text.len()
            )));
        }
        match &self.key {
            Some(key) => check_prompt_key(key),
            None => Ok(()),
        }
    }
}

impl Validate for rq::AnswerPermission {
    fn validate(&self) -> Result<(), ErrorReply> {
        check_target("pane", &self.pane)?;
        check_label("prompt id", &self.prompt_id, MAX_PROMPT_ID_CHARS)
    }
}

impl Validate for rq::ReportHook {
    fn validate(&self) -> Result<(), ErrorReply> {
        let hook = &self.hook;
        check_target("pane", &self.pane)?;
        check_bytes("pane token", &self.token, MAX_TARGET_BYTES)?;
        check_label("hook event", &hook.event, MAX_HOOK_FIELD_CHARS)?;
        if let Some(id) = &hook.session_id {
            check_agent_session_id(id)?;
        }
        for (what, field) in [("hook notification", &hook.notification), ("hook tool", &hook.tool)] {
            field
                .as_deref()
                .map_or(Ok(()), |f| check_label(what, f, MAX_HOOK_FIELD_CHARS))?;
        }
        Ok(())
    }
}

impl Validate for rq::ReadOutput {
    fn validate(&self) -> Result<(), ErrorReply> {
        check_target("pane", &self.pane)?;
        match self.mode {
            ReadMode::Text { lines, .. } if lines > MAX_READ_LINES => Err(invalid(format!(
                "{lines} lines requested; the maximum is {MAX_READ_LINES}"
            ))),
            _ => Ok(()),
        }
    }
}

impl Validate for rq::WaitForExit {
    fn validate(&self) -> Result<(), ErrorReply> {
        check_target("pane", &self.pane)?;
        self.timeout_ms.map_or(Ok(()), |ms| check_timeout("timeout", ms))
    }
}

impl Validate for rq::WaitFor {
    fn validate(&self) -> Result<(), ErrorReply> {
        let until = &self.until;
        check_target("pane", &self.pane)?;
        check_timeout("timeout", self.timeout_ms)?;
        if let Some(idle) = until.idle_ms {
            check_timeout("idle time", idle)?;
        }
        if let Some(pattern) = &until.pattern {
            compile_pattern(pattern)?;
        }
        for (what, count) in [
            ("agent states", until.agent_states.len()),
            ("agent needs", until.agent_needs.len()),
        ] {
            if count > MAX_WAIT_STATES {
                return Err(invalid(format!(
                    "{count} {what} to wait for; the maximum is {MAX_WAIT_STATES}"
                )));
            }
        }
        Ok(())
    }
}

impl Hello {
    /// The Hello's strings, cut to [`MAX_HELLO_FIELD_BYTES`] and made printable,
    /// for logs and messages: a client's string is never logged whole.
    pub fn display_name(&self) -> String {
        format!(
            "{} {}",
            truncate_for_display(&self.client_name, MAX_HELLO_FIELD_BYTES),
            truncate_for_display(&self.client_version, MAX_HELLO_FIELD_BYTES)
        )
    }
}

/// `text` cut to at most `max_bytes` (on a character boundary, with `…` when cut)
/// and escaped for display.
pub fn truncate_for_display(text: &str, max_bytes: usize) -> String {
    let mut end = text.len().min(max_bytes);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = &text[..end];
    let mut out = escape_for_display(cut).into_owned();
    if end < text.len() {
        out.push('…');
    }
    out
}

/// JSON text as fugue writes it (`views::safe_json` in the client, notification
/// bodies): an unsafe character can only be inside a
/// string (JSON's own syntax is printable ASCII and whitespace), where its `\u`
/// escape means the same.
pub fn escape_unsafe_in_json(text: &str) -> String {
    if !text.chars().any(escaped_in_json) {
        return text.to_string();
    }
    let mut out = Vec::with_capacity(text.len() + 16);
    JsonEscaper::default().push(text.as_bytes(), &mut out);
    String::from_utf8(out).unwrap_or_default()
}

/// Whether JSON text must carry `c` as a `\u` escape: the unsafe characters,
/// but not the whitespace between JSON values (inside a string serde_json
/// already escapes it).
fn escaped_in_json(c: char) -> bool {
    is_unsafe_char(c) && !matches!(c, '\n' | '\r' | '\t')
}

/// [`escape_unsafe_in_json`] over a stream of JSON text that arrives in pieces
/// (an MCP server's stdout, an HTTP body, server-sent events): a character split
/// between two pieces is held (at most 3 bytes) until its end comes. Bytes that
/// are not UTF-8 pass as they are.
#[derive(Debug, Default)]
pub struct JsonEscaper {
    /// The start of a character whose end has not arrived.
    held: Vec<u8>,
}

impl JsonEscaper {
    /// Appends `piece`, escaped, to `out`.
    pub fn push(&mut self, piece: &[u8], out: &mut Vec<u8>) {
        let joined;
        let mut rest: &[u8] = match self.held.is_empty() {
            true => piece,
            false => {
                self.held.extend_from_slice(piece);
                joined = std::mem::take(&mut self.held);
                &joined
            }
        };
        while !rest.is_empty() {
            let (valid, after) = match std::str::from_utf8(rest) {
                Ok(text) => (text, &rest[rest.len()..]),
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    // from_utf8 said the bytes up to here are UTF-8.
                    let valid = std::str::from_utf8(valid).unwrap_or_default();
                    match e.error_len() {
                        // Cut off at the end: held for the next piece.
                        None => {
                            self.held.extend_from_slice(after);
                            (valid, &after[after.len()..])
                        }
                        Some(bad) => {
                            Self::escape_into(valid, out);
                            out.extend_from_slice(&after[..bad]);
                            rest = &after[bad..];
                            continue;
                        }
                    }
                }
            };
            Self::escape_into(valid, out);
            rest = after;
        }
    }

    /// What is held at the end of the stream (a cut-off character), as it came.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        out.append(&mut self.held);
    }

    fn escape_into(text: &str, out: &mut Vec<u8>) {
        let mut plain = 0;
        for (at, c) in text.char_indices() {
            if escaped_in_json(c) {
                out.extend_from_slice(&text.as_bytes()[plain..at]);
                // Every unsafe character is in the Basic Multilingual Plane.
                out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes());
                plain = at + c.len_utf8();
            }
        }
        out.extend_from_slice(&text.as_bytes()[plain..]);
    }
}

fn escape_char(c: char) -> String {
    match c {
        '\n' => "\\n".into(),
        '\r' => "\\r".into(),
        '\t' => "\\t".into(),
        c if (c as u32) < 0x100 => format!("\\x{:02x}", c as u32),
        c => format!("\\u{{{:04x}}}", c as u32),
    }
}

/// `text` with every unsafe character shown as an escape (`\x1b`, `\u{202e}`), for
/// one-line displays of names, titles, purposes, commands and paths.
pub fn escape_for_display(text: &str) -> Cow<'_, str> {
    escape_unsafe(text, is_unsafe_char)
}

/// Like [`escape_for_display`] but newlines and tabs stay as they are: raw program
/// output shown to an agent, escape sequences visible as text.
pub fn escape_keeping_lines(text: &str) -> Cow<'_, str> {
    escape_unsafe(text, |c| is_unsafe_char(c) && c != '\n' && c != '\t')
}

fn escape_unsafe(text: &str, escaped: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(&escaped) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match escaped(c) {
            true => out.push_str(&escape_char(c)),
            false => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `text` with unsafe characters removed, keeping newlines and tabs: captured
/// program text as handed to agents and people.
pub fn strip_unsafe(text: &str) -> Cow<'_, str> {
    let unsafe_here = |c: char| is_unsafe_char(c) && c != '\n' && c != '\t';
    if !text.chars().any(unsafe_here) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.chars().filter(|c| !unsafe_here(*c)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(request: impl Into<crate::Request>) -> String {
        request.into().validate().unwrap_err().message
    }

    #[test]
    fn sizes() {
        assert!(check_size(PaneSize { cols: 120, rows: 40 }).is_ok());
        assert_eq!(
            check_size(PaneSize {
                cols: 65535,
                rows: 65535
            })
            .unwrap_err()
            .message,
            "size 65535x65535 exceeds the maximum 10000x10000"
        );
        assert!(check_size(PaneSize { cols: 5000, rows: 5000 })
            .unwrap_err()
            .message
            .contains("25000000 cells; the maximum is 1000000"));
        assert!(check_size(PaneSize { cols: 0, rows: 5 }).is_err());
        assert_eq!(
            check_size(PaneSize { cols: 1, rows: 5 }).unwrap_err().message,
            "size 1x5 is too small; the minimum is 2x1"
        );
        assert!(check_size(PaneSize { cols: 10000, rows: 100 }).is_ok());
        for (cols, rows) in [(1, 1), (65535, 65535), (3000, 3000), (0, 0), (80, 24)] {
            let clamped = clamp_size(PaneSize { cols, rows });
            assert!(check_size(clamped).is_ok(), "{clamped:?}");
        }
        assert_eq!(
            clamp_size(PaneSize { cols: 80, rows: 24 }),
            PaneSize { cols: 80, rows: 24 }
        );
    }

    #[test]
    fn titles_names_and_keys() {
        let mut spec = SpawnSpec::new("s");
        spec.title = Some("evil\x1b]0;PWNED\x07\x1b[2J".into());
        assert!(err(rq::CreatePane { spec: spec.clone() }).contains("control character \\x1b"));
        spec.title = Some("x".repeat(300));
        assert!(err(rq::CreatePane { spec }).contains("300 characters; the maximum is 256"));
        let rename = rq::RenamePane {
            pane: "p".into(),
            title: "a\u{202e}b".into(),
        };
        assert!(err(rename).contains("\\u{202e}"));
        let keys = rq::SendKeys {
            pane: "p".into(),
            keys: vec![format!("{}a", "M-".repeat(20_000))],
        };
        assert!(err(keys).contains("key name of 40001 bytes; the maximum is 32"));
    }

    #[test]
    fn timeouts_patterns_env() {
        let wait = rq::WaitFor {
            pane: "p".into(),
            until: WaitUntil {
                pattern: Some("(a{1000}){1000}".into()),
                ..Default::default()
            },
            timeout_ms: 10,
        };
        assert!(err(wait).contains("pattern compiles to more than"));
        let wait = rq::WaitFor {
            pane: "p".into(),
            until: WaitUntil {
                agent_needs: vec![crate::Attention::Question; 33],
                ..Default::default()
            },
            timeout_ms: 10,
        };
        assert!(err(wait).contains("33 agent needs to wait for; the maximum is 32"));
        let wait = rq::WaitForExit {
            pane: "p".into(),
            timeout_ms: Some(u64::MAX),
        };
        assert!(err(wait).contains("exceeds the maximum"));
        let env = (0..300)
            .map(|i| EnvVar {
                name: format!("V{i}"),
                value: String::new(),
            })
            .collect();
        let session = rq::CreateSession {
            name: "s".into(),
            cwd: None,
            env,
        };
        assert_eq!(err(session), "300 environment variables; the maximum is 256");
    }

    #[test]
    fn agent_session_ids_are_uuids_and_nothing_else() {
        assert!(is_agent_session_id("5ee3a1c0-7e20-4914-9820-0e431ad2b001"));
        for bad in [
            "--dangerously-skip-permissions",
            "s-1",
            "5ee3a1c0-7e20-4914-9820-0e431ad2b00",
            "5ee3a1c0-7e20-4914-9820-0e431ad2b0011",
            "-ee3a1c0-7e20-4914-9820-0e431ad2b001",
            "5ee3a1c0_7e20-4914-9820-0e431ad2b001",
            "5ee3a1c0-7e20-4914-9820-0e431ad2b0é",
        ] {
            assert!(!is_agent_session_id(bad), "{bad}");
        }
        let hook = rq::ReportHook {
            pane: "p".into(),
            token: String::new(),
            hook: crate::AgentHook {
                agent: None,
                event: "Stop".into(),
                session_id: Some("--resume=x".into()),
                notification: None,
                tool: None,
            },
        };
        assert_eq!(
            err(hook),
            "agent session id --resume=x is not a UUID (8-4-4-4-12 hex digits)"
        );
    }

    #[test]
    fn clean_labels_drop_controls_and_bidi_and_keep_the_limit() {
        assert_eq!(clean_label("evil\x1b]0;X\x07\u{202e}txt", 100), "evil]0;Xtxt");
        assert_eq!(clean_label("a\u{061c}b\u{200e}c", 2), "ab");
        assert_eq!(clean_label("ééé", 2), "éé");
    }

    #[test]
    fn display_helpers() {
        assert_eq!(escape_for_display("evil\x1b]0;X\x07"), "evil\\x1b]0;X\\x07");
        assert_eq!(strip_unsafe("a\x1b[2Jb\n\u{202e}c\t\u{9b}"), "a[2Jb\nc\t");
        assert_eq!(truncate_for_display("ééé", 3), "é…");
        assert_eq!(escape_keeping_lines("\x1b[31mred\r\n\tx"), "\\x1b[31mred\\r\n\tx");
        let hello = Hello {
            protocol_version: 9,
            client_name: "x".repeat(4 << 20),
            client_version: "\x1b[2J".into(),
            revision: 0,
        };
        assert!(hello.display_name().len() < 300);
    }
}
