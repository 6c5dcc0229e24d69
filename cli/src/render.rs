//! What the CLI prints: tables and lines for a person, one JSON document (or one
//! per line) with `--json`. Every string a program or client chose is escaped
//! here before it reaches a terminal (docs/output.md). Functions that show an
//! age take `now`, so the same input always renders the same text.

use fugue_client::diff::DiffView;
use fugue_client::protocol::limits::{escape_for_display, escape_keeping_lines};
use fugue_client::protocol::{DaemonInfo, Event, ExitStatus, PaneInfo, PaneState, SessionInfo};
use fugue_client::views::{AgentStateView, GrepView, OverviewView, PaneView, SessionView};
use fugue_client::worktree::WorktreeView;
use serde_json::Value;
use std::io::Write;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Where a command's result goes: JSON with `--json`, else text.
pub struct Output {
    pub json: bool,
}

impl Output {
    /// Prints `value` as JSON with `--json`, else the text (nothing if empty).
    /// A reader that went away (`fugue overview | head`) ends the output
    /// quietly, as in other command-line tools.
    pub fn print(&self, value: Value, text: impl FnOnce() -> String) {
        let text = match self.json {
            // Unsafe characters as \u escapes (views::safe_json), never raw.
            true => fugue_client::views::safe_json(&value, true),
            false => text(),
        };
        if text.is_empty() {
            return;
        }
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{text}").and_then(|_| stdout.flush());
    }
}

/// An event as a line: its type, then what it is about.
pub fn event_line(event: &Event, value: &Value) -> String {
    let kind = value["type"].as_str().unwrap_or("event");
    let pane = |p: &PaneInfo| format!("{}:{} {} {}", p.session_name, p.index, short(p.id), p.title);
    let about = match event {
        Event::SessionCreated(info) => format!("{} {}", info.name, short(info.id)),
        Event::SessionDestroyed { id, name } => format!("{name} {}", short(*id)),
        Event::SessionRenamed {
            id,
            previous_name,
            name,
        } => format!("{previous_name} -> {name} {}", short(*id)),
        Event::PaneCreated(p) | Event::PaneRestarted(p) | Event::PaneRenamed(p) => pane(p),
        Event::AgentSessionRecorded(p) => format!(
            "{} {}",
            pane(p),
            p.agent_session.as_ref().map(|s| s.id.as_str()).unwrap_or_default()
        ),
        Event::PaneExited(p) => format!("{} {}", pane(p), p.exit.map(|e| e.to_string()).unwrap_or_default()),
        Event::PaneRemoved { id, .. } => short(*id),
        Event::PanesReordered { panes, .. } => panes.iter().map(|p| short(*p)).collect::<Vec<_>>().join(" "),
        Event::AgentStateChanged { pane, agent, .. } => format!(
            "{} {} {} needs={} ({})",
            short(*pane),
            agent.agent.map(|a| a.as_str()).unwrap_or("agent"),
            agent.state.as_str(),
            agent.needs.as_str(),
            agent.source.as_str()
        ),
        Event::Notification { pane, title, body, .. } => format!("{} {title}: {body}", short(*pane))
            .trim_end_matches([':', ' '])
            .to_string(),
        Event::Lagged { missed } => format!("{missed} events missed; list again to catch up"),
        _ => String::new(),
    };
    format!("{kind} {about}").trim_end().to_string()
}

/// `45s`, `12m03s`, `3h07m`, `2d04h`.
pub fn human_duration(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        3600..86400 => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
        _ => format!("{}d{:02}h", s / 86400, s % 86400 / 3600),
    }
}

pub fn short(id: impl ToString) -> String {
    id.to_string()[..8].to_string()
}

pub fn exit_text(exit: Option<ExitStatus>) -> String {
    exit.map_or_else(|| "running".to_string(), |e| e.to_string())
}

/// A view as the JSON `--json` prints.
pub fn json_of(view: impl serde::Serialize) -> Value {
    serde_json::to_value(view).unwrap_or(Value::Null)
}

pub fn session_json(info: &SessionInfo) -> Value {
    json_of(SessionView::from(info))
}

pub fn pane_json(info: &PaneInfo) -> Value {
    json_of(PaneView::from(info))
}

/// `fugue agent`: the state in a line, then what is behind it.
/// `fugue agent --explain`: one row per signal, the deciding one marked.
pub fn signals_text(view: &AgentStateView, now: u64) -> String {
    let rows: Vec<String> = view
        .signals
        .iter()
        .map(|signal| {
            let mark = if signal.source == view.source { "*" } else { " " };
            format!(
                "{mark} {:<12} {:<22} for {:<8} {}",
                signal.source,
                signal.means.map_or("(says nothing now)", |means| means.as_str()),
                human_duration(now.saturating_sub(signal.since)),
                escape_for_display(&signal.reading)
            )
        })
        .collect();
    format!("signals (* decided):\n{}", rows.join("\n"))
}

pub fn agent_text(view: &AgentStateView, now: u64) -> String {
    let mut text = format!(
        "{}  {} (turn {}, needs {}) from {}, for {}",
        view.agent.map_or("no agent", |agent| agent.as_str()),
        state_label(view),
        view.turn,
        view.needs,
        view.source,
        human_duration(now.saturating_sub(view.since)),
    );
    let mut row = |name: &str, value: &str| text.push_str(&format!("\n{name:<10} {}", escape_for_display(value)));
    if let Some(version) = &view.version {
        row("version", version);
    }
    if let Some(session) = &view.session_id {
        row("session", session);
    }
    if let Some(prompt) = &view.prompt_id {
        row("prompt_id", prompt);
    }
    if let Some(draft) = &view.draft {
        row("draft", draft);
    }
    if let Some(tokens) = &view.tokens {
        let cached = match tokens.cached_input {
            0 => String::new(),
            n => format!(" ({n} cached)"),
        };
        row(
            "tokens",
            &format!(
                "{} in{cached}, {} out, {} in all",
                tokens.input, tokens.output, tokens.total
            ),
        );
    }
    for line in &view.evidence {
        row("evidence", line);
    }
    text
}

pub fn daemon_text(info: &DaemonInfo, now: u64) -> String {
    let mut text = format!(
        "pid      {}\nversion  {} (protocol {})\nuptime   {}\nsocket   {}\nsessions {}\npanes    {} ({} running)\nstate    {}",
        info.pid,
        info.version,
        info.protocol_version,
        human_duration(now.saturating_sub(info.started_at_ms)),
        match info.socket_why.is_empty() {
            true => info.socket.clone(),
            false => format!("{} ({})", info.socket, info.socket_why),
        },
        info.sessions,
        info.panes,
        info.running_panes,
        if info.state_path.is_empty() { "not persisted" } else { &info.state_path },
    );
    if info.unpersisted_writes > 0 {
        text.push_str(&format!(" ({} records not written)", info.unpersisted_writes));
    }
    text.push_str(&format!(
        "\nclients  {:.1} MiB held of a {} MiB budget",
        info.client_memory_used as f64 / (1 << 20) as f64,
        info.client_memory_limit >> 20
    ));
    text.push_str(&format!("\nlooks    {} at agents' state since start", info.agent_looks));
    if !info.recovery.is_empty() {
        text.push_str(&format!("\nstart    {}", info.recovery));
    }
    text
}

/// Left-aligned columns separated by two spaces, measured in terminal cells
/// (a wide character takes two; a combining mark none).
pub fn table(header: &[&str], rows: Vec<Vec<String>>) -> String {
    // Names, titles and purposes may hold anything a program or client chose;
    // none of it reaches the terminal as a control character.
    let rows: Vec<Vec<String>> = rows
        .into_iter()
        .map(|row| row.into_iter().map(|c| escape_for_display(&c).into_owned()).collect())
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.width()).collect();
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.width());
        }
    }
    let line = |cells: Vec<String>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c}{}", " ".repeat(w.saturating_sub(c.width()))))
            .collect();
        padded.join("  ").trim_end().to_string()
    };
    let mut out = vec![line(header.iter().map(|h| h.to_string()).collect())];
    out.extend(rows.into_iter().map(line));
    out.join("\n")
}

/// The longest start of `text` that fits in `cells` terminal cells.
pub fn fit(text: &str, cells: usize) -> String {
    let mut used = 0;
    text.chars()
        .take_while(|c| {
            used += c.width().unwrap_or(0);
            used <= cells
        })
        .collect()
}

pub const SESSION_HEADER: &[&str] = &["ID", "NAME", "PANES", "CREATED", "CWD"];
pub const PANE_HEADER: &[&str] = &["ID", "PANE", "TITLE", "STATUS", "PID", "UPTIME", "PURPOSE"];

pub fn sessions_table(sessions: &[SessionInfo], now: u64) -> String {
    if sessions.is_empty() {
        return "no sessions".into();
    }
    table(SESSION_HEADER, sessions_rows(sessions, now))
}

pub fn sessions_rows(sessions: &[SessionInfo], now: u64) -> Vec<Vec<String>> {
    sessions
        .iter()
        .map(|s| {
            vec![
                short(s.id),
                s.name.clone(),
                format!("{} ({} running)", s.panes, s.running_panes),
                format!("{} ago", human_duration(now.saturating_sub(s.created_at_ms))),
                s.cwd.clone(),
            ]
        })
        .collect()
}

/// `SESSION:INDEX:LINE:TEXT` per match, as `grep -n` across files.
pub fn grep_text(view: &GrepView) -> String {
    view.matches
        .iter()
        .map(|m| format!("{}:{}:{}", m.label, m.line, escape_for_display(&m.text)))
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn overview_table(panes: &[OverviewView], now: u64) -> String {
    if panes.is_empty() {
        return "no panes".into();
    }
    const HEADER: &[&str] = &["ID", "PANE", "STATUS", "AGENT", "STATE", "NEEDS", "FOR", "LAST LINE"];
    let rows = panes
        .iter()
        .map(|view| {
            let agent = view.agent.as_ref();
            let field = |f: fn(&AgentStateView) -> String| agent.map(f).unwrap_or_else(|| "-".into());
            let (id, place, status) = match (&view.pane, &view.background) {
                (Some(pane), _) => (
                    short(&pane.id),
                    format!("{}:{}", pane.session, pane.index),
                    pane.state.status.clone(),
                ),
                (None, Some(bg)) => (bg.target.clone(), fit(&bg.cwd, 30), view.origin.to_string()),
                (None, None) => ("-".into(), "-".into(), view.origin.to_string()),
            };
            vec![
                id,
                place,
                status,
                field(|a| a.agent.map(|agent| agent.to_string()).unwrap_or_default()),
                field(state_label),
                field(|a| a.needs.to_string()),
                agent.map_or_else(|| "-".into(), |a| human_duration(now.saturating_sub(a.since))),
                fit(&view.last_line, 60),
            ]
        })
        .collect();
    table(HEADER, rows)
}

/// An agent's state in one word, and until when for a limit the CLI said
/// resets ("limited until 17:00", local time).
pub fn state_label(agent: &AgentStateView) -> String {
    match (agent.state, agent.resets_at) {
        (fugue_client::protocol::AgentState::Limited, Some(at)) => format!("limited until {}", local_clock(at)),
        (state, _) => state.to_string(),
    }
}

/// `17:00` for a time today, `Mon 17:00` for one further away (local time).
pub fn local_clock(unix_ms: u64) -> String {
    use chrono::TimeZone as _;
    let Some(at) = chrono::Local.timestamp_millis_opt(unix_ms as i64).single() else {
        return unix_ms.to_string();
    };
    match at.date_naive() == chrono::Local::now().date_naive() {
        true => at.format("%H:%M").to_string(),
        false => at.format("%a %H:%M").to_string(),
    }
}

pub fn panes_table(panes: &[PaneInfo], now: u64) -> String {
    if panes.is_empty() {
        return "no panes".into();
    }
    table(PANE_HEADER, panes_rows(panes, now))
}

pub fn panes_rows(panes: &[PaneInfo], now: u64) -> Vec<Vec<String>> {
    panes
        .iter()
        .map(|p| {
            let exit = p.exit.map(|e| match (e.code, e.signal_name()) {
                (Some(code), _) => code.to_string(),
                (None, Some(sig)) => sig,
                _ => "?".into(),
            });
            vec![
                short(p.id),
                format!("{}:{}", p.session_name, p.index),
                p.title.clone(),
                match (p.state, p.restarts) {
                    (PaneState::Running, 0) => "running".into(),
                    (PaneState::Running, n) => format!("running (restarts {n})"),
                    (PaneState::Exited, _) => format!("exited {}", exit.unwrap_or_default()),
                    (PaneState::Restarting, n) => format!(
                        "restarting ({} exit {}, restarts {n})",
                        p.restart.as_str(),
                        exit.unwrap_or_default()
                    ),
                    (PaneState::Lost, _) => "lost".into(),
                    (PaneState::Hibernated, _) => "hibernated".into(),
                },
                p.pid.to_string(),
                human_duration(p.exited_at_ms.unwrap_or(now).saturating_sub(p.started_at_ms)),
                p.purpose.clone(),
            ]
        })
        .collect()
}

/// Which condition ended a wait, after how long, and the line that matched.
pub fn wait_text(view: &fugue_client::views::WaitView) -> String {
    match &view.matched {
        Some(matched) => format!(
            "{} after {} ms: {}",
            view.condition,
            view.elapsed_ms,
            escape_for_display(matched)
        ),
        None => format!("{} after {} ms", view.condition, view.elapsed_ms),
    }
}

pub const WORKTREE_HEADER: &[&str] = &[
    "NAME", "BRANCH", "BASE", "AHEAD", "BEHIND", "DIRTY", "PANE", "STATE", "AGENT",
];

/// `fugue worktrees`: one row a worktree; a pane that is gone shows `-`, a
/// checkout removed behind fugue's back `gone`.
pub fn worktrees_table(views: &[WorktreeView]) -> String {
    let rows = views
        .iter()
        .map(|v| {
            let dirty = match (v.status.exists, &v.status.problem) {
                (false, _) => "gone".to_string(),
                (true, Some(_)) => "unreadable".to_string(),
                (true, None) => v.status.dirty.len().to_string(),
            };
            vec![
                v.record.name.clone(),
                v.record.branch.clone(),
                format!(
                    "{} ({})",
                    v.record.base_ref,
                    &v.record.base[..v.record.base.len().min(8)]
                ),
                v.status.ahead.to_string(),
                v.status.behind.to_string(),
                dirty,
                v.record.pane.as_deref().map(short).unwrap_or_else(|| "-".into()),
                v.pane_state.clone().unwrap_or_else(|| "-".into()),
                v.agent_state.map_or_else(|| "-".into(), |state| state.to_string()),
            ]
        })
        .collect();
    table(WORKTREE_HEADER, rows)
}

pub const COMPARE_HEADER: &[&str] = &["WORKTREE", "AGENT", "PANE", "STATE", "FILES", "+", "-", "PORT", "TEST"];

/// `fugue compare`: the group, then a row per member side by side, then the
/// end of each failed test's output.
pub fn compare_text(comparison: &fugue_client::fanout::Comparison) -> String {
    let rows = comparison
        .members
        .iter()
        .map(|m| {
            let state = match (&m.agent_state, m.pane_status.as_str()) {
                (Some(agent), "running") => agent.to_string(),
                (_, pane) => pane.to_string(),
            };
            let test = match (&m.member.test, &m.problem, m.done, &comparison.test) {
                (_, Some(problem), _, _) => problem.clone(),
                (_, _, _, None) => "-".into(),
                (_, _, false, Some(_)) => "(not done)".into(),
                (Some(run), _, _, _) if run.passed => format!("passed ({:.1} s)", run.seconds),
                (Some(run), _, _, _) => match run.exit_code {
                    Some(code) => format!("failed (exit {code}, {:.1} s)", run.seconds),
                    None => format!("failed ({})", run.output.lines().last().unwrap_or("killed")),
                },
                (None, _, true, Some(_)) => "not run".into(),
            };
            vec![
                m.member.worktree.clone(),
                m.member.agent.clone(),
                short(&m.member.pane),
                state,
                m.files.to_string(),
                format!("+{}", m.added),
                format!("-{}", m.removed),
                m.member.port.to_string(),
                test,
            ]
        })
        .collect();
    let prompt: String = comparison.prompt.chars().take(200).collect();
    let mut out = format!(
        "group {} in {}: {:?}\ntest: {}\n\n{}",
        comparison.group,
        comparison.repo,
        prompt,
        comparison.test.as_deref().unwrap_or("none (fanout --test)"),
        table(COMPARE_HEADER, rows)
    );
    for member in &comparison.members {
        if let Some(run) = member.member.test.as_ref().filter(|r| !r.passed) {
            let last: Vec<&str> = run.output.lines().rev().take(5).collect();
            let last: Vec<&str> = last.into_iter().rev().collect();
            out.push_str(&format!("\n{} test output (end):\n", member.member.worktree));
            out.push_str(&escape_keeping_lines(&last.join("\n")));
            out.push('\n');
        }
    }
    out
}

/// `fugue diff`: a line per file (`+added -removed path`), a total, then the
/// patch unless `stat_only`; added lines green and removed red when `color`.
/// Every line is escaped: file contents may hold anything.
pub fn diff_text(view: &DiffView, stat_only: bool, color: bool) -> String {
    let mut out = Vec::new();
    for file in &view.files {
        let path = match &file.old_path {
            Some(old) => format!("{old} -> {}", file.path),
            None => file.path.clone(),
        };
        let counts = match file.binary {
            true => "binary".to_string(),
            false => format!("+{} -{}", file.added, file.removed),
        };
        out.push(format!(
            "{counts:>12}  {:<8}  {}",
            file.status,
            escape_for_display(&path)
        ));
    }
    out.push(format!(
        "{} file(s), +{} -{} against {} ({})",
        view.files.len(),
        view.added,
        view.removed,
        &view.base[..view.base.len().min(12)],
        view.branch
    ));
    if stat_only {
        return out.join("\n");
    }
    let paint = |code: &str, line: &str| match color {
        true => format!("\x1b[{code}m{line}\x1b[0m"),
        false => line.to_string(),
    };
    for file in &view.files {
        out.push(String::new());
        out.push(paint(
            "1",
            &format!("{} ({})", escape_for_display(&file.path), file.status),
        ));
        for hunk in &file.hunks {
            out.push(paint("36", &escape_for_display(&hunk.header)));
            for line in &hunk.lines {
                let line = escape_keeping_lines(line);
                out.push(match line.chars().next() {
                    Some('+') => paint("32", &line),
                    Some('-') => paint("31", &line),
                    _ => line.into_owned(),
                });
            }
        }
    }
    if view.truncated {
        out.push("(the patch was cut at 8 MiB: later files show counts only)".into());
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{pane, NOW};
    use fugue_client::protocol::{AgentKind, RowOrigin, SessionId, StateSource, TurnState};
    use fugue_client::views::{GrepMatchView, SignalView, WaitView};

    fn agent(state: &str, needs: &str) -> AgentStateView {
        AgentStateView {
            agent: Some(AgentKind::Claude),
            state: state.parse().unwrap(),
            turn: TurnState::NotRunning,
            needs: needs.parse().unwrap(),
            source: StateSource::Hook,
            version: Some("2.1.197".into()),
            session_id: Some("5f0c".into()),
            since: NOW - 95_000,
            evidence: vec!["Do you want to run \u{1b}[31mrm\u{1b}[0m?".into()],
            prompt_id: Some("p-1".into()),
            signals: vec![
                SignalView {
                    source: StateSource::Hook,
                    reading: "PermissionRequest Bash".into(),
                    means: Some(state.parse().unwrap()),
                    since: NOW - 95_000,
                },
                SignalView {
                    source: StateSource::Screen,
                    reading: "\u{202e}spoof".into(),
                    means: None,
                    since: NOW - 2_000,
                },
            ],
            draft: None,
            resets_at: None,
            tokens: None,
        }
    }

    #[test]
    fn panes_table_shows_each_state_and_escapes_titles() {
        let panes = [
            pane(0, "build", PaneState::Running, None),
            pane(
                1,
                "title\u{1b}]0;PWNED\u{7}",
                PaneState::Exited,
                Some(ExitStatus {
                    code: Some(2),
                    signal: None,
                }),
            ),
            pane(
                2,
                "killed",
                PaneState::Exited,
                Some(ExitStatus {
                    code: None,
                    signal: Some(9),
                }),
            ),
            pane(3, "lost", PaneState::Lost, None),
        ];
        insta::assert_snapshot!(panes_table(&panes, NOW));
        assert_eq!(panes_table(&[], NOW), "no panes");
    }

    #[test]
    fn sessions_table_counts_panes_and_ages() {
        let session = SessionInfo {
            id: SessionId(uuid::Uuid::from_u128(0xabcd_ef00_0000_0000_0000_0000_0000_0001)),
            name: "work".into(),
            cwd: "/src".into(),
            panes: 3,
            running_panes: 2,
            created_at_ms: NOW - 2 * 86_400_000 - 4 * 3_600_000,
        };
        insta::assert_snapshot!(sessions_table(&[session], NOW));
        assert_eq!(sessions_table(&[], NOW), "no sessions");
    }

    #[test]
    fn overview_puts_agent_columns_beside_each_pane() {
        let with_agent = OverviewView {
            origin: RowOrigin::Pane,
            background: None,
            pane: Some(PaneView::from(&pane(0, "claude", PaneState::Running, None))),
            agent: Some(agent("waiting_for_permission", "permission")),
            last_line: "Do you want to proceed?".into(),
            needs_you: true,
        };
        let plain = OverviewView {
            origin: RowOrigin::Pane,
            background: None,
            pane: Some(PaneView::from(&pane(1, "shell", PaneState::Running, None))),
            agent: None,
            last_line: "x".repeat(80),
            needs_you: false,
        };
        insta::assert_snapshot!(overview_table(&[with_agent, plain], NOW));
    }

    #[test]
    fn a_limit_says_until_when() {
        let mut limited = agent("limited", "nothing");
        assert_eq!(state_label(&limited), "limited");
        let at = NOW + 3_600_000;
        limited.resets_at = Some(at);
        assert_eq!(state_label(&limited), format!("limited until {}", local_clock(at)));
        assert!(local_clock(at).contains(':'), "{}", local_clock(at));
        assert_eq!(state_label(&agent("idle", "nothing")), "idle");
    }

    #[test]
    fn agent_text_and_signals_explain_the_state() {
        let view = agent("waiting_for_permission", "permission");
        insta::assert_snapshot!(format!("{}\n{}", agent_text(&view, NOW), signals_text(&view, NOW)));
    }

    #[test]
    fn daemon_text_names_state_memory_and_recovery() {
        let info = DaemonInfo {
            pid: 77,
            version: "0.1.0".into(),
            protocol_version: 12,
            socket: "/run/user/1000/fugue/fugue.sock".into(),
            socket_why: String::new(),
            started_at_ms: NOW - 45_000,
            sessions: 2,
            panes: 5,
            running_panes: 4,
            state_path: "/home/u/.local/state/fugue".into(),
            recovery: "restored 2 sessions".into(),
            unpersisted_writes: 0,
            client_memory_used: 3 << 19,
            client_memory_limit: 256 << 20,
            agent_looks: 1234,
        };
        insta::assert_snapshot!(daemon_text(&info, NOW));
    }

    #[test]
    fn grep_and_wait_lines_escape_what_matched() {
        let view = GrepView {
            matches: vec![GrepMatchView {
                pane: "12345678".into(),
                label: "work:0".into(),
                title: "build".into(),
                line: 42,
                text: "error\u{1b}[2J here".into(),
            }],
            panes_searched: 1,
            truncated: false,
            timed_out: false,
        };
        assert_eq!(grep_text(&view), "work:0:42:error\\x1b[2J here");
        let wait = WaitView {
            condition: fugue_client::protocol::WaitCondition::Pattern,
            matched: Some("ok\u{7}".into()),
            elapsed_ms: 12,
            state: fugue_client::views::StateView {
                status: "running".into(),
                exit_code: None,
                signal: None,
            },
            next_offset: 0,
        };
        assert_eq!(wait_text(&wait), "pattern after 12 ms: ok\\x07");
    }

    #[test]
    fn columns_line_up_in_cells_with_wide_characters() {
        let rows = vec![
            vec!["界界".to_string(), "x".to_string()],
            vec!["ab".to_string(), "y".to_string()],
        ];
        assert_eq!(table(&["NAME", "V"], rows), "NAME  V\n界界  x\nab    y");
        assert_eq!(fit("界界界", 5), "界界");
        assert_eq!(fit("abc", 60), "abc");
    }

    #[test]
    fn durations_read_as_a_person_says_them() {
        let cases = [
            (0, "0s"),
            (59_999, "59s"),
            (60_000, "1m00s"),
            (3_723_000, "1h02m"),
            (90_000_000, "1d01h"),
        ];
        for (ms, text) in cases {
            assert_eq!(human_duration(ms), text);
        }
    }
}
