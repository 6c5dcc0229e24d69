//! Notification sinks: when a pane's agent newly needs a person, or a program
//! asks its terminal to notify (OSC 9/777/99), fugued tells the sinks named in
//! `$XDG_CONFIG_HOME/fugue/config.toml` (read once, at start):
//!
//! ```toml
//! [[notify]]
//! webhook = "https://ntfy.example/fugue"   # the event as a JSON POST
//! events = ["permission", "question"]      # default: every event
//!
//! [[notify]]
//! command = ["notify-send-json"]           # the event as JSON on stdin
//!
//! [[notify]]
//! kind = "webpush"                         # to the pages' push subscriptions
//! content_free = true                      # say only that something needs you
//! contact = "mailto:me@example.com"        # VAPID's contact for push services
//! ```
//!
//! Web Push ([`crate::push`]) is a sink of its own kind: without a
//! `kind = "webpush"` table it runs with every event and content, and sends
//! only once a page subscribed.
//!
//! Each sink has a thread of its own and a queue of [`QUEUE`] events: a sink
//! that hangs or fails fills its own queue (later events for it are dropped,
//! and logged), never the daemon's runtime or another sink. A webhook gets
//! [`WEBHOOK_TRIES`] tries of [`WEBHOOK_TIMEOUT`] each; a command is killed
//! after [`COMMAND_TIMEOUT`].

use crate::actors::session::SessionMsg;
use crate::actors::supervisor::SupervisorMsg;
use crate::event_bus::Published;
use fugue_protocol::{AgentInfo, AgentState, Attention, Event, PaneId, ServerFrame};
use ractor::ActorRef;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::time::Duration;

/// Events waiting for one sink; past this, new ones for it are dropped.
const QUEUE: usize = 64;
const WEBHOOK_TRIES: u32 = 3;
const WEBHOOK_TIMEOUT: Duration = Duration::from_secs(5);
const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);
/// Lines of a waiting prompt sent with its event.
const PROMPT_LINES: usize = 12;

/// The config file's part fugued reads.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    notify: Vec<SinkConfig>,
    /// Worktree setup and teardown commands: the client library reads them
    /// (`fugue_client::worktree_setup`), where git and the commands run.
    #[serde(default, rename = "worktree")]
    _worktree: Vec<toml::Value>,
    /// Per agent kind policies: read by [`crate::policy`].
    #[serde(default, rename = "agents")]
    _agents: toml::Table,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SinkConfig {
    /// `webhook`, `command` or `webpush`; the first two may also be told
    /// by their key alone.
    kind: Option<String>,
    /// webpush: every push says only that something needs the person.
    content_free: Option<bool>,
    /// webpush: the VAPID `sub` (a `mailto:` or `https:` URL).
    contact: Option<String>,
    webhook: Option<String>,
    command: Option<Vec<String>>,
    /// Which events: `permission`, `question`, `finished` (a turn nobody saw
    /// end), `needs` (all three), `notification` (a program's). Default: all.
    #[serde(default)]
    events: Vec<String>,
}

/// Where one sink delivers.
#[derive(Debug, Clone, PartialEq)]
enum Target {
    Webhook(String),
    Command(Vec<String>),
    WebPush(crate::push::PushOptions),
}

/// One configured sink: what it takes and its queue.
struct Sink {
    name: String,
    events: Vec<String>,
    queue: SyncSender<std::sync::Arc<NotifyEvent>>,
    /// A webpush sink's subscriptions: it takes nothing while there are none.
    push: Option<std::sync::Arc<crate::push::Push>>,
}

/// What a sink is told, as JSON.
#[derive(Debug, Serialize)]
pub struct NotifyEvent {
    /// `permission`, `question`, `finished` or `notification`.
    pub event: String,
    pub pane: String,
    pub session: String,
    /// SESSION:INDEX.
    pub label: String,
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// A waiting prompt's lines, as the agent shows them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_id: Option<String>,
    /// A program's notification.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notification_title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notification_body: Option<String>,
    /// Unix ms.
    pub at: u64,
    /// One line for a person.
    pub message: String,
    /// An agent waits on a person ([`Attention::needs_you`]).
    #[serde(skip)]
    pub needs_you: bool,
    /// The pane in fugue-web's page, when a fugue-web serves this daemon.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// The config file fugued reads: `$XDG_CONFIG_HOME/fugue/config.toml`, or
/// `~/.config/fugue/config.toml`.
pub fn default_config_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))?;
    Some(base.join("fugue").join("config.toml"))
}

/// Reads the sinks of `path` (none when it does not exist). A sink that is
/// wrong is skipped with a warning naming what was wrong: a typo in it must
/// not keep the daemon from starting.
fn read_sinks(path: &Path) -> Vec<(Target, Vec<String>)> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(err) => {
            tracing::warn!(path = %path.display(), %err, "cannot read the config file; no notification sinks");
            return Vec::new();
        }
    };
    let config: ConfigFile = match toml::from_str(&text) {
        Ok(config) => config,
        Err(err) => {
            let err = err.to_string().replace('\n', " ");
            tracing::warn!(path = %path.display(), %err, "config file does not parse; no notification sinks");
            return Vec::new();
        }
    };
    config
        .notify
        .into_iter()
        .enumerate()
        .filter_map(|(n, sink)| match parse_sink(sink) {
            Ok(sink) => Some(sink),
            Err(why) => {
                tracing::warn!(path = %path.display(), sink = n + 1, why, "notification sink skipped");
                None
            }
        })
        .collect()
}

const EVENT_NAMES: [&str; 6] = ["permission", "question", "finished", "limited", "needs", "notification"];

fn parse_sink(sink: SinkConfig) -> Result<(Target, Vec<String>), String> {
    if let Some(bad) = sink.events.iter().find(|e| !EVENT_NAMES.contains(&e.as_str())) {
        return Err(format!("unknown event '{bad}'; use {}", EVENT_NAMES.join(", ")));
    }
    match sink.kind.as_deref() {
        None | Some("webhook" | "command") => {}
        Some("webpush") => {
            if sink.webhook.is_some() || sink.command.is_some() {
                return Err("a webpush sink sends to the pages' subscriptions: give no webhook or command".into());
            }
            let mut options = crate::push::PushOptions {
                content_free: sink.content_free.unwrap_or(false),
                ..Default::default()
            };
            if let Some(contact) = sink.contact {
                if !(contact.starts_with("mailto:") || contact.starts_with("https://")) {
                    return Err(format!("contact '{contact}' is no mailto: or https: URL"));
                }
                options.contact = contact;
            }
            return Ok((Target::WebPush(options), sink.events));
        }
        Some(other) => return Err(format!("unknown kind '{other}'; use webhook, command or webpush")),
    }
    if sink.content_free.is_some() || sink.contact.is_some() {
        return Err("content_free and contact are for kind = \"webpush\"".into());
    }
    let target = match (sink.webhook, sink.command) {
        (Some(url), None) if url.starts_with("http://") || url.starts_with("https://") => Target::Webhook(url),
        (Some(url), None) => return Err(format!("webhook '{url}' is no http:// or https:// URL")),
        (None, Some(command)) if !command.is_empty() && !command[0].is_empty() => Target::Command(command),
        (None, Some(_)) => return Err("command is empty; give the program and its arguments".into()),
        _ => return Err("give exactly one of webhook = \"URL\" or command = [\"program\", ...]".into()),
    };
    Ok((target, sink.events))
}

/// Starts the sinks `config` names (if any), Web Push's (always), and the task
/// that feeds them from the daemon's events.
pub async fn start(
    config: Option<PathBuf>,
    socket: PathBuf,
    supervisor: ActorRef<SupervisorMsg>,
    push: std::sync::Arc<crate::push::Push>,
) {
    let mut targets = config.as_deref().map(read_sinks).unwrap_or_default();
    if !targets.iter().any(|(target, _)| matches!(target, Target::WebPush(_))) {
        targets.push((Target::WebPush(Default::default()), Vec::new()));
    }
    let sinks: Vec<Sink> = targets
        .into_iter()
        .map(|(target, events)| spawn_sink(target, events, &push))
        .collect();
    tracing::info!(count = sinks.len(), path = ?config, "notification sinks");
    let events = match supervisor
        .call(SupervisorMsg::Subscribe, Some(Duration::from_secs(10)))
        .await
    {
        Ok(ractor::rpc::CallResult::Success(events)) => events,
        _ => {
            tracing::warn!("cannot subscribe the notification sinks to events");
            return;
        }
    };
    tokio::spawn(feed(events, sinks, supervisor, socket.with_extension("web.json"), push));
}

/// Turns the daemon's events into sink events: a need that begins (not one
/// that goes on), and every program notification.
async fn feed(
    mut events: tokio::sync::broadcast::Receiver<Published>,
    sinks: Vec<Sink>,
    supervisor: ActorRef<SupervisorMsg>,
    web: PathBuf,
    push: std::sync::Arc<crate::push::Push>,
) {
    let mut needs: HashMap<PaneId, Attention> = HashMap::new();
    let mut limited: HashMap<PaneId, bool> = HashMap::new();
    loop {
        let published = match events.recv().await {
            Ok(published) => published,
            Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                tracing::warn!(missed, "notification sinks missed events");
                continue;
            }
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
        };
        let Published::Event(encoded) = published else { continue };
        // Encoded once for every subscriber: the payload after its length prefix.
        let payload = encoded.frame.get(4..).unwrap_or_default();
        let Ok(ServerFrame::Event(event)) = fugue_protocol::codec::decode::<ServerFrame>(payload) else {
            continue;
        };
        let wanted = |kind: &str| sinks.iter().any(|sink| sink.takes(kind));
        let mut notice = match event {
            Event::AgentStateChanged { pane, agent, .. } => {
                // A push's action tokens end with the prompt they answer.
                push.prompt_ended(pane, agent.prompt_id.as_deref());
                let before = needs.insert(pane, agent.needs).unwrap_or(Attention::Nothing);
                // Once on entering `limited`, as a need is once on arriving.
                let is_limited = agent.state == AgentState::Limited;
                let was_limited = limited.insert(pane, is_limited).unwrap_or(false);
                let entered_limit = is_limited && !was_limited && wanted("limited");
                let new_need =
                    agent.needs != Attention::Nothing && agent.needs != before && wanted(need_name(agent.needs));
                if !entered_limit && !new_need {
                    continue;
                }
                needs_event(&supervisor, pane, &agent).await
            }
            Event::Notification { pane, title, body, .. } if wanted("notification") => {
                notification_event(&supervisor, pane, title, body).await
            }
            Event::PaneRemoved { id, .. } => {
                needs.remove(&id);
                limited.remove(&id);
                push.prompt_ended(id, None);
                continue;
            }
            _ => continue,
        };
        notice.url = web_server(&web).map(|base| format!("{base}/?view=all&pane={}", notice.pane));
        let notice = std::sync::Arc::new(notice);
        for sink in &sinks {
            if !sink.takes(&notice.event) {
                continue;
            }
            if let Err(TrySendError::Full(_)) = sink.queue.try_send(notice.clone()) {
                tracing::warn!(
                    sink = sink.name,
                    event = notice.event,
                    "notification sink is behind; event dropped"
                );
            }
        }
    }
}

/// The address a running fugue-web announced beside the socket (see
/// fugue-web's `announce`): only while that process is a fugue-web still.
fn web_server(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    let pid = value["pid"].as_u64()?;
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    if comm.trim() != "fugue-web" {
        return None;
    }
    let url = value["url"].as_str()?;
    let plain = url.starts_with("http://") || url.starts_with("https://");
    (plain && !url.contains(char::is_whitespace)).then(|| url.trim_end_matches('/').to_string())
}

impl Sink {
    fn takes(&self, event: &str) -> bool {
        takes(&self.events, event) && self.push.as_ref().is_none_or(|push| push.has_subscriptions())
    }
}

/// " until 17:00" (local time) for a limit's reset, when known.
fn until(resets_at_ms: Option<u64>) -> String {
    use chrono::TimeZone as _;
    let at = resets_at_ms.and_then(|ms| chrono::Local.timestamp_millis_opt(ms as i64).single());
    at.map(|at| format!(" until {}", at.format("%H:%M")))
        .unwrap_or_default()
}

fn need_name(needs: Attention) -> &'static str {
    match needs {
        Attention::Permission => "permission",
        Attention::Question => "question",
        _ => "finished",
    }
}

fn takes(events: &[String], event: &str) -> bool {
    events.is_empty()
        || events
            .iter()
            .any(|e| e == event || (e == "needs" && event != "notification"))
}

/// The pane's session name, index and title, looked up when an event comes
/// (events are rare; a cache would have to follow every rename).
async fn pane_names(supervisor: &ActorRef<SupervisorMsg>, pane: PaneId) -> (String, u32, String) {
    let sessions = match supervisor
        .call(SupervisorMsg::AllSessions, Some(Duration::from_secs(5)))
        .await
    {
        Ok(ractor::rpc::CallResult::Success(sessions)) => sessions,
        _ => Vec::new(),
    };
    for session in sessions {
        let listed = session
            .actor
            .call(SessionMsg::ListPanes, Some(Duration::from_secs(5)))
            .await;
        if let Ok(ractor::rpc::CallResult::Success(panes)) = listed {
            if let Some(info) = panes.into_iter().find(|p: &fugue_protocol::PaneInfo| p.id == pane) {
                return (info.session_name, info.index, info.title);
            }
        }
    }
    (String::new(), 0, String::new())
}

async fn needs_event(supervisor: &ActorRef<SupervisorMsg>, pane: PaneId, agent: &AgentInfo) -> NotifyEvent {
    let (session, index, title) = pane_names(supervisor, pane).await;
    let label = format!("{session}:{index}");
    let who = agent.agent.map_or("the agent", |k| k.as_str());
    let (event, message) = match (agent.state, agent.needs) {
        (AgentState::Limited, _) => (
            "limited",
            format!("{label}: {who} hit a usage limit{}", until(agent.resets_at_ms)),
        ),
        (_, Attention::Permission) => ("permission", format!("{label}: {who} asks for permission")),
        (_, Attention::Question) => ("question", format!("{label}: {who} asks a question")),
        _ => ("finished", format!("{label}: {who} finished its turn")),
    };
    let waiting = agent.needs.needs_you();
    NotifyEvent {
        event: event.into(),
        pane: pane.to_string(),
        session,
        label,
        title,
        agent: agent.agent.map(|k| k.as_str().to_string()),
        state: Some(agent.state.as_str().into()),
        prompt: waiting.then(|| {
            agent
                .evidence
                .iter()
                .take(PROMPT_LINES)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n")
        }),
        prompt_id: agent.prompt_id.clone(),
        notification_title: None,
        notification_body: None,
        at: fugue_protocol::now_ms(),
        message,
        needs_you: agent.needs.needs_you(),
        url: None,
    }
}

async fn notification_event(
    supervisor: &ActorRef<SupervisorMsg>,
    pane: PaneId,
    title: String,
    body: String,
) -> NotifyEvent {
    let (session, index, pane_title) = pane_names(supervisor, pane).await;
    let label = format!("{session}:{index}");
    let text = [title.as_str(), body.as_str()]
        .into_iter()
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join(": ");
    NotifyEvent {
        event: "notification".into(),
        pane: pane.to_string(),
        session,
        message: format!("{label}: {text}"),
        label,
        title: pane_title,
        agent: None,
        state: None,
        prompt: None,
        prompt_id: None,
        notification_title: Some(title),
        notification_body: Some(body),
        at: fugue_protocol::now_ms(),
        needs_you: false,
        url: None,
    }
}

/// A thread delivering to `target`, fed by a bounded queue.
fn spawn_sink(target: Target, events: Vec<String>, push: &std::sync::Arc<crate::push::Push>) -> Sink {
    let (queue, jobs) = sync_channel::<std::sync::Arc<NotifyEvent>>(QUEUE);
    let name = match &target {
        Target::Webhook(url) => format!("webhook {url}"),
        Target::Command(command) => format!("command {}", command[0]),
        Target::WebPush(_) => "webpush".into(),
    };
    let thread_name = name.clone();
    let sink_push = matches!(target, Target::WebPush(_)).then(|| push.clone());
    let push = push.clone();
    let spawned = std::thread::Builder::new().name("fugue-notify".into()).spawn(move || {
        for notice in jobs {
            // Titles, commands and lines with unsafe characters as \u escapes.
            let json = || {
                serde_json::to_string(&*notice)
                    .map(|json| fugue_protocol::limits::escape_unsafe_in_json(&json))
                    .map_err(|e| e.to_string())
            };
            let delivered = match &target {
                Target::Webhook(url) => json().and_then(|json| post(url, &json)),
                Target::Command(command) => json().and_then(|json| run_command(command, &json)),
                Target::WebPush(options) => {
                    push.send(&notice, options);
                    Ok(())
                }
            };
            if let Err(why) = delivered {
                tracing::warn!(sink = thread_name, why, "notification not delivered");
            }
        }
    });
    if let Err(err) = spawned {
        tracing::warn!(%err, "cannot start a notification sink");
    }
    Sink {
        name,
        events,
        queue,
        push: sink_push,
    }
}

/// POSTs `json` to `url`, retrying a failure twice (after 1 s, then 2 s).
fn post(url: &str, json: &str) -> Result<(), String> {
    let agent = ureq::Agent::config_builder()
        .timeout_global(Some(WEBHOOK_TIMEOUT))
        .http_status_as_error(true)
        .build()
        .new_agent();
    let mut last = String::new();
    for attempt in 0..WEBHOOK_TRIES {
        if attempt > 0 {
            std::thread::sleep(Duration::from_secs(1 << (attempt - 1)));
        }
        match agent.post(url).header("Content-Type", "application/json").send(json) {
            Ok(_) => return Ok(()),
            Err(err) => last = err.to_string(),
        }
    }
    Err(format!("{WEBHOOK_TRIES} tries failed, the last with: {last}"))
}

/// Runs `command` with `json` (and a newline) on its stdin; kills it after
/// [`COMMAND_TIMEOUT`].
fn run_command(command: &[String], json: &str) -> Result<(), String> {
    use wait_timeout::ChildExt;
    let mut child = std::process::Command::new(&command[0])
        .args(&command[1..])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", command[0]))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A command that does not read its input is its own business.
        let _ = stdin.write_all(json.as_bytes()).and_then(|_| stdin.write_all(b"\n"));
    }
    match child.wait_timeout(COMMAND_TIMEOUT) {
        Ok(Some(status)) if status.success() => Ok(()),
        Ok(Some(status)) => Err(format!("{} ended with {status}", command[0])),
        Ok(None) => {
            let _ = child.kill();
            let _ = child.wait();
            Err(format!("{} took longer than {COMMAND_TIMEOUT:?}; killed", command[0]))
        }
        Err(err) => Err(format!("cannot wait for {}: {err}", command[0])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sinks_are_read_and_wrong_ones_say_why() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            r#"
[[notify]]
webhook = "http://127.0.0.1:9/hook"
events = ["permission", "notification"]

[[notify]]
command = ["notify-send"]

[[notify]]
webhook = "ftp://nope"

[[notify]]
command = ["x"]
events = ["sometimes"]

# The client library's table: fugued leaves it alone.
[[worktree]]
repo = "*"
setup = ["npm ci"]
"#,
        )
        .unwrap();
        let sinks = read_sinks(&path);
        assert_eq!(sinks.len(), 2, "{sinks:?}");
        assert_eq!(sinks[0].0, Target::Webhook("http://127.0.0.1:9/hook".into()));
        assert_eq!(sinks[1].0, Target::Command(vec!["notify-send".into()]));
        assert!(read_sinks(&dir.path().join("missing.toml")).is_empty());
        std::fs::write(&path, "notify = 3").unwrap();
        assert!(read_sinks(&path).is_empty());
        let both = parse_sink(SinkConfig {
            webhook: Some("http://x".into()),
            command: Some(vec!["y".into()]),
            ..Default::default()
        })
        .unwrap_err();
        assert!(both.contains("exactly one"), "{both}");
        let push = parse_sink(SinkConfig {
            kind: Some("webpush".into()),
            content_free: Some(true),
            ..Default::default()
        })
        .unwrap();
        assert!(matches!(push.0, Target::WebPush(ref o) if o.content_free), "{push:?}");
        for (kind, contact, webhook) in [
            ("webpush", Some("nope"), None),
            ("webpush", None, Some("https://x")),
            ("pager", None, None),
        ] {
            let sink = SinkConfig {
                kind: Some(kind.into()),
                contact: contact.map(String::from),
                webhook: webhook.map(String::from),
                ..Default::default()
            };
            assert!(parse_sink(sink).is_err(), "{kind} {contact:?} {webhook:?}");
        }
    }

    #[test]
    fn event_filters() {
        assert!(takes(&[], "notification"));
        assert!(takes(&["needs".into()], "question"));
        assert!(!takes(&["needs".into()], "notification"));
        assert!(takes(&["finished".into()], "finished"));
        assert!(!takes(&["permission".into()], "finished"));
    }
}
