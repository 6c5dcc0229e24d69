//! Claude Code's background sessions (`claude --bg`), which run under Claude
//! Code's own service, outside any pane: fugued reads them from the status
//! files Claude Code keeps for every session, `sessions/<pid>.json` under
//! `$CLAUDE_CONFIG_DIR` or `$HOME/.claude` *of fugued's own environment*
//! (a pane given another HOME keeps its sessions elsewhere, and those are
//! not read). A file of `"kind": "bg"` whose process still runs (its
//! `procStart` matches) and whose directory is one a pane of fugue's uses
//! (or lies below it) is a row of origin `claude_background`.
//!
//! Reading costs nothing while nobody looks: the list is read when a client
//! asks for it, and the directory is followed with inotify (no timer) once
//! some client is subscribed to events (fugued's notification sinks, Web
//! Push among them, subscribe); a change seen when nobody is subscribed any
//! more ends the following until the next subscription.

use super::detect::MAX_SESSION_FILE;
use super::file_watch;
use crate::event_bus::EventBus;
use fugue_protocol::{AgentInfo, AgentKind, AgentState, Attention, BackgroundAgent, Event, RowOrigin, StateSource};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Status files looked at in one read, at most.
const MAX_FILES: usize = 512;
/// Rows kept, at most (the rest are left out of lists and events).
pub const MAX_ROWS: usize = 64;
/// Reads follow each other at least this far apart while files keep changing
/// (a pane's own Claude Code rewrites its file with each state).
const READ_GAP: Duration = Duration::from_millis(250);

/// Where Claude Code keeps its session status files for fugued's user.
pub fn sessions_dir() -> Option<PathBuf> {
    let config = match std::env::var_os("CLAUDE_CONFIG_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".claude"),
    };
    Some(config.join("sessions"))
}

/// The fields of a status file a background row needs.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StatusFile {
    pid: u32,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    job_id: Option<String>,
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    cwd: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    status: String,
    #[serde(default)]
    waiting_for: Option<String>,
    #[serde(default)]
    proc_start: Option<String>,
    #[serde(default)]
    version: Option<String>,
    #[serde(default)]
    started_at: u64,
    #[serde(default)]
    status_updated_at: Option<u64>,
}

/// Every background session in `dir` whose directory is one of `served` or
/// lies below one, by id. Blocking (reads files and `/proc`).
pub fn read(dir: &Path, served: &[PathBuf]) -> BTreeMap<String, BackgroundAgent> {
    let mut rows = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return rows;
    };
    for entry in entries.flatten().take(MAX_FILES) {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let Some(row) = read_one(&path) else { continue };
        let cwd = Path::new(&row.cwd);
        if served.iter().any(|d| cwd.starts_with(d)) && rows.len() < MAX_ROWS {
            rows.insert(row.id.clone(), row);
        }
    }
    rows
}

fn read_one(path: &Path) -> Option<BackgroundAgent> {
    let file = std::fs::File::open(path).ok()?;
    let mut bytes = Vec::new();
    file.take(MAX_SESSION_FILE as u64 + 1).read_to_end(&mut bytes).ok()?;
    let start_ticks = |pid: u32| {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat.rsplit(')').next()?.split_whitespace().nth(19).map(str::to_string)
    };
    let mut row = parse(&bytes, start_ticks)?;
    row.program = std::fs::read_link(format!("/proc/{}/exe", row.pid))
        .ok()?
        .display()
        .to_string();
    row.env = reader_env();
    Some(row)
}

/// The variable fugued found the sessions by: what `claude attach` in a
/// pane needs to find the same service.
fn reader_env() -> Vec<fugue_protocol::EnvVar> {
    let var = |name: &str| {
        let value = std::env::var(name).ok()?;
        Some(fugue_protocol::EnvVar {
            name: name.into(),
            value,
        })
    };
    var("CLAUDE_CONFIG_DIR").or_else(|| var("HOME")).into_iter().collect()
}

/// A background row from a status file's bytes; `start_ticks` reads a
/// process's start time (`None`: it is gone). `None` for anything but a live
/// background session's file (too large, not JSON, another kind, a pid
/// reused since).
pub fn parse(bytes: &[u8], start_ticks: impl Fn(u32) -> Option<String>) -> Option<BackgroundAgent> {
    if bytes.len() > MAX_SESSION_FILE {
        return None;
    }
    let file: StatusFile = serde_json::from_slice(bytes).ok()?;
    if file.kind != "bg" {
        return None;
    }
    let running = start_ticks(file.pid)?;
    if file.proc_start.as_deref().is_some_and(|p| p != running) {
        return None;
    }
    let id = file.job_id.clone().or_else(|| file.session_id.clone())?;
    let clip = |text: &str, max: usize| fugue_protocol::limits::clean_label(text, max);
    let (state, evidence) = match file.status.as_str() {
        "busy" => (AgentState::Busy, format!("status: {}", file.status)),
        "idle" => (AgentState::Idle, format!("status: {}", file.status)),
        "waiting" => {
            let what = file.waiting_for.as_deref().unwrap_or("");
            let state = match what.contains("permission") {
                true => AgentState::WaitingForPermission,
                false => AgentState::WaitingForAnswer,
            };
            (state, clip(&format!("status: waiting for {what}"), 200))
        }
        other => (AgentState::Unknown, clip(&format!("status: {other}"), 200)),
    };
    let needs = match state {
        AgentState::WaitingForPermission => Attention::Permission,
        AgentState::WaitingForAnswer => Attention::Question,
        _ => Attention::Nothing,
    };
    Some(BackgroundAgent {
        origin: RowOrigin::ClaudeBackground,
        id: clip(&id, 64),
        pid: file.pid,
        cwd: clip(&file.cwd, 4096),
        name: clip(file.name.as_deref().unwrap_or(""), 200),
        agent: AgentInfo {
            agent: Some(AgentKind::Claude),
            state,
            needs,
            source: StateSource::SessionFile,
            version: file.version.map(|v| clip(&v, 32)),
            session_id: file.session_id.map(|s| clip(&s, 128)),
            since_ms: file.status_updated_at.unwrap_or(file.started_at),
            prompt_id: None,
            evidence: vec![evidence],
            signals: Vec::new(),
            draft: None,
            resets_at_ms: None,
            tokens: None,
        },
        program: String::new(),
        env: Vec::new(),
    })
}

/// What rows to read: the sessions directory and the directories panes use.
pub type Served = std::sync::Arc<dyn Fn() -> futures::future::BoxFuture<'static, Vec<PathBuf>> + Send + Sync>;

/// Follows `dir` (true), or its parent while it is not there (false).
fn follow(dir: &Path) -> Option<(bool, file_watch::Subscription)> {
    if let Some(followed) = file_watch::follow_dir(dir) {
        return Some((true, followed));
    }
    file_watch::follow_dir(dir.parent()?).map(|followed| (false, followed))
}

/// Follows the sessions directory while anyone is subscribed to events and
/// sends a row's changes and its end as events.
pub fn spawn_watch(events: EventBus, served: Served) {
    let Some(dir) = sessions_dir() else { return };
    tokio::spawn(async move {
        let mut shown: BTreeMap<String, BackgroundAgent> = BTreeMap::new();
        loop {
            events.until_subscribed().await;
            // Claude Code makes the directory with its first session: until
            // then its parent is followed, and the directory once it is there.
            let mut followed = follow(&dir);
            if followed.is_none() {
                // No such directory and none above it: look again when the
                // next client subscribes.
                events.next_subscription().await;
                continue;
            }
            while events.has_subscribers() {
                if followed.as_ref().is_some_and(|(of_dir, _)| !of_dir) && dir.is_dir() {
                    followed = follow(&dir).or(followed);
                }
                let served = served().await;
                let read_dir = dir.clone();
                let Ok(rows) = tokio::task::spawn_blocking(move || read(&read_dir, &served)).await else {
                    break;
                };
                for (id, row) in &rows {
                    if shown.get(id).is_none_or(|was| was.agent.state != row.agent.state) {
                        events.send(Event::BackgroundAgentChanged(row.clone()));
                    }
                }
                for id in shown.keys().filter(|id| !rows.contains_key(*id)) {
                    events.send(Event::BackgroundAgentGone { id: id.clone() });
                }
                shown = rows;
                tokio::time::sleep(READ_GAP).await;
                // Woken by the directory only (no timer): nobody subscribed
                // any more when it changes, it stops following.
                let Some((_, subscription)) = &followed else { break };
                subscription.changed().await;
            }
            shown.clear();
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(kind: &str, status: &str) -> Vec<u8> {
        serde_json::json!({
            "pid": 4242, "sessionId": "6e2ebe61-03aa", "cwd": "/work/p", "startedAt": 1000,
            "procStart": "77", "kind": kind, "jobId": "6e2ebe61", "status": status,
            "waitingFor": "permission prompt", "statusUpdatedAt": 2000, "name": "fix \u{1b}[31mit",
        })
        .to_string()
        .into_bytes()
    }

    #[test]
    fn a_live_background_session_is_a_row_and_nothing_else_is() {
        let alive = |_| Some("77".to_string());
        let row = parse(&file("bg", "waiting"), alive).expect("a row");
        assert_eq!(row.id, "6e2ebe61");
        assert_eq!(row.origin, RowOrigin::ClaudeBackground);
        assert_eq!(row.agent.state, AgentState::WaitingForPermission);
        assert_eq!(row.agent.needs, Attention::Permission);
        assert_eq!(row.agent.since_ms, 2000);
        assert!(!row.name.contains('\u{1b}'), "controls are cleaned: {:?}", row.name);
        assert_eq!(parse(&file("bg", "busy"), alive).unwrap().agent.state, AgentState::Busy);
        // A pane's own session, a process gone, a pid reused, junk, too large.
        assert!(parse(&file("interactive", "busy"), alive).is_none());
        assert!(parse(&file("bg", "busy"), |_| None).is_none());
        assert!(parse(&file("bg", "busy"), |_| Some("78".into())).is_none());
        assert!(parse(b"{\"pid\": \"x\"", alive).is_none());
        let mut large = file("bg", "busy");
        large.resize(MAX_SESSION_FILE + 1, b' ');
        assert!(parse(&large, alive).is_none());
    }
}
