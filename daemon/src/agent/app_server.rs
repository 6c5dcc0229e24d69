//! Codex through its app-server: a Codex pane runs the TUI as a client
//! (`codex --remote unix://SOCK`) of an app-server of its own, started
//! beside it in the pane with the pane's environment and directory (the
//! server runs the model calls and the commands, so it needs both: one per
//! pane, as Codex's schema puts the environment and working directory on the
//! server and its threads), and fugued is a second client of that server.
//!
//! The socket is `<runtime dir>/codex/<pane>.sock` (fugued's 0700 runtime
//! directory; Codex makes it a link to a socket in a 0700 directory of its
//! own), never TCP. The transport is WebSocket over that socket, JSON-RPC
//! inside; fugued reads at most [`MAX_MESSAGE`] per message.
//!
//! The server's events are the first source of the agent's state: its main
//! thread's status (`active`, `waitingOnApproval`, `waitingOnUserInput`,
//! `idle`), approvals with their exact command (fugued subscribes to the
//! thread with `thread/resume`, so the server asks it too, and the first
//! answer wins: `serverRequest/resolved` tells the TUI), token totals, rate
//! limits and usage-limit errors. An approval fugue answers goes back as the
//! JSON-RPC response to that request: no keystroke.
//!
//! If the server dies, or was never reached (an older Codex, a pane with
//! `FUGUE_CODEX_APP_SERVER=0`), the screen reads the agent as before. A live
//! upgrade keeps the pane's processes; the new fugued connects to the same
//! socket again and learns the thread from its next status change.

use super::codex_protocol as cx;
use super::file_watch;
use fugue_protocol::{AgentState, ErrorReply, PaneId, PermissionAnswer, TokenTotals};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// The largest message read from the app-server (a whole turn's items come
/// in `turn/completed`).
pub const MAX_MESSAGE: usize = 4 << 20;
/// How long the socket may take to appear after the pane starts.
const CONNECT_WITHIN: Duration = Duration::from_secs(30);
/// Lines of an approval kept as its evidence, and their length.
const PROMPT_LINES: usize = 6;
const PROMPT_LINE_CHARS: usize = 500;

/// Starts the app-server beside the TUI and points the TUI at it: the pane
/// runs `sh` with this script (`$1` codex, `$2` the socket, then the TUI's
/// arguments). Without the socket within 10 s (an older Codex) the TUI
/// starts on its own, and the screen reads it.
const LAUNCHER: &str = r#"codex=$1 sock=$2
shift 2
rm -f "$sock"
"$codex" app-server --listen "unix://$sock" </dev/null >/dev/null 2>&1 &
server=$!
n=0
while [ ! -S "$sock" ] && [ "$n" -lt 100 ] && kill -0 "$server" 2>/dev/null; do sleep 0.1; n=$((n + 1)); done
if [ -S "$sock" ]; then "$codex" --remote "unix://$sock" "$@"; else "$codex" "$@"; fi
status=$?
kill "$server" 2>/dev/null
exit "$status"
"#;

/// The socket of pane `pane`'s app-server under fugued's runtime directory.
pub fn socket_of(runtime: &Path, pane: PaneId) -> PathBuf {
    runtime.join("codex").join(format!("{pane}.sock"))
}

/// Whether `command` starts Codex's TUI (no subcommand, no server of its own).
pub fn is_codex_tui(command: &[String]) -> bool {
    if super::detect::detect_kind(command, &[]) != Some(fugue_protocol::AgentKind::Codex)
        || super::detect::is_sandboxed(command)
    {
        return false;
    }
    let own_server = command.iter().any(|a| a == "--remote" || a.starts_with("--remote="));
    !own_server && !super::detect::has_subcommand(fugue_protocol::AgentKind::Codex, command)
}

/// Makes a Codex TUI pane's launch start an app-server beside it; the socket
/// it will listen on, or `None` (not Codex's TUI, typed into a shell, opted
/// out with `FUGUE_CODEX_APP_SERVER=0`, no runtime directory).
pub fn wire(launch: &mut fugue_terminal::pty::Launch, runtime: &Path, pane: PaneId) -> Option<PathBuf> {
    let opted_out = launch
        .env
        .iter()
        .any(|(k, v)| k == "FUGUE_CODEX_APP_SERVER" && v == "0");
    if opted_out || launch.typed_line.is_some() || !is_codex_tui(&launch.display_command) {
        return None;
    }
    let dir = runtime.join("codex");
    if let Err(err) = private_dir(&dir) {
        tracing::warn!(%err, dir = %dir.display(), "no directory for Codex app-server sockets; the screen reads Codex");
        return None;
    }
    let socket = socket_of(runtime, pane);
    let mut args = vec![
        "-c".to_string(),
        LAUNCHER.to_string(),
        "fugue-codex".to_string(),
        launch.program.display().to_string(),
        socket.display().to_string(),
    ];
    args.append(&mut launch.args);
    launch.args = args;
    launch.program = PathBuf::from("/bin/sh");
    Some(socket)
}

fn private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::create_dir_all(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}

/// An approval the app-server asked for and nobody answered yet.
#[derive(Clone, Debug)]
struct Pending {
    /// The JSON-RPC id to answer.
    id: Value,
    /// What it asks, as a person reads it (the exact command first).
    lines: Vec<String>,
    /// When it was asked (Unix ms).
    since_ms: u64,
}

/// What the app-server said, as fugued keeps it.
#[derive(Debug, Default)]
struct Known {
    connected: bool,
    /// The TUI's thread (not an ephemeral one, nor a sub-agent's), from
    /// `thread/started` or, after a reconnect, the thread whose
    /// `thread/resume` succeeded (an ephemeral thread has nothing to resume).
    thread: Option<String>,
    /// Threads known not to be it.
    others: Vec<String>,
    /// Subscribed to the thread (its approvals and usage come here too).
    subscribed: bool,
    /// A `thread/resume` under way: its request id, the thread, and the
    /// status it had then.
    resuming: Option<(u64, String, AgentState)>,
    status: Option<(AgentState, u64)>,
    pending: Option<Pending>,
    tokens: Option<TokenTotals>,
    /// The last turn ended on a usage limit: when it resets, if said, and
    /// the error's words.
    limited: Option<(Option<u64>, String)>,
    /// When the rate limit that was reached resets (Unix ms).
    rate_resets_at: Option<u64>,
    next_id: u64,
}

/// What the app-server says of the agent now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reading {
    pub state: AgentState,
    pub since_ms: u64,
    pub evidence: Vec<String>,
    /// While it waits for an approval: the prompt's id.
    pub prompt_id: Option<String>,
    pub resets_at_ms: Option<u64>,
    pub tokens: Option<TokenTotals>,
}

/// One pane's connection to its Codex app-server.
#[derive(Default)]
pub struct AppServer {
    known: Mutex<Known>,
    outbox: Mutex<Option<mpsc::UnboundedSender<String>>>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl AppServer {
    /// What it says now; `None` while not connected or before its thread's
    /// first status (the screen reads the agent then).
    pub fn reading(&self) -> Option<Reading> {
        let known = lock(&self.known);
        if !known.connected {
            return None;
        }
        // A status fugue does not know (`notLoaded`, a newer one): the other
        // sources say.
        let (status, since_ms) = known.status.filter(|(state, _)| *state != AgentState::Unknown)?;
        let mut reading = Reading {
            state: status,
            since_ms,
            evidence: vec![format!("app-server: thread {}", status.as_str())],
            prompt_id: None,
            resets_at_ms: None,
            tokens: known.tokens,
        };
        match (status, &known.pending, &known.limited) {
            (AgentState::WaitingForPermission, Some(pending), _) => {
                reading.evidence.clone_from(&pending.lines);
                reading.prompt_id = Some(prompt_id(&pending.id, pending.since_ms));
                reading.since_ms = pending.since_ms;
            }
            // Waiting on an approval it has not told this client of: the
            // turn runs, nothing to answer yet.
            (AgentState::WaitingForPermission, None, _) => reading.state = AgentState::Busy,
            (AgentState::Idle, _, Some((resets_at, said))) => {
                reading.state = AgentState::Limited;
                reading.resets_at_ms = *resets_at;
                reading.evidence = vec![format!("app-server: {said}")];
            }
            _ => {}
        }
        Some(reading)
    }

    /// Answers the approval `prompt_id` through the protocol: only while
    /// that request is still pending, once.
    pub fn answer(&self, prompt: &str, answer: PermissionAnswer) -> Result<(), ErrorReply> {
        let pending = {
            let mut known = lock(&self.known);
            match &known.pending {
                Some(p) if prompt_id(&p.id, p.since_ms) == prompt => known.pending.take(),
                _ => None,
            }
        };
        let Some(pending) = pending else {
            return Err(ErrorReply::new(
                fugue_protocol::ErrorCode::PromptNotShown,
                "prompt_not_shown: that approval is no longer pending in Codex's app-server; nothing was sent",
            ));
        };
        let decision = match answer {
            PermissionAnswer::Approve => "accept",
            PermissionAnswer::Deny => "decline",
        };
        let response = json!({"jsonrpc": "2.0", "id": pending.id, "result": {"decision": decision}});
        self.send(response.to_string())
            .map_err(|()| ErrorReply::internal("Codex's app-server connection ended before the answer was sent"))?;
        tracing::info!(decision, "approval answered through codex's app-server");
        Ok(())
    }

    fn send(&self, text: String) -> Result<(), ()> {
        match &*lock(&self.outbox) {
            Some(outbox) => outbox.send(text).map_err(|_| ()),
            None => Err(()),
        }
    }

    fn request(&self, method: &str, params: Value) -> u64 {
        let id = {
            let mut known = lock(&self.known);
            known.next_id += 1;
            known.next_id
        };
        let _ = self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string());
        id
    }

    /// Takes one message from the app-server; whether what fugue knows changed.
    pub fn take(&self, text: &str) -> bool {
        let Ok(message) = serde_json::from_str::<Value>(text) else {
            return false;
        };
        let method = message["method"].as_str().unwrap_or("");
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        match (method, message.get("id")) {
            ("", Some(id)) => self.reply(id.as_u64(), &message),
            ("item/commandExecution/requestApproval", Some(id)) => {
                let Some(asked) = serde_json::from_value::<cx::CommandExecutionRequestApprovalParams>(params).ok()
                else {
                    return false;
                };
                let mut lines = vec![format!("$ {}", asked.command.unwrap_or_default())];
                lines.extend(asked.reason);
                lines.extend(asked.cwd.map(|cwd| format!("in {cwd}")));
                self.asked(id.clone(), asked.thread_id, lines)
            }
            ("item/fileChange/requestApproval", Some(id)) => {
                let Some(asked) = serde_json::from_value::<cx::FileChangeRequestApprovalParams>(params).ok() else {
                    return false;
                };
                let mut lines = vec!["apply the proposed file changes".to_string()];
                lines.extend(asked.reason);
                lines.extend(asked.grant_root.map(|root| format!("and allow writes under {root}")));
                self.asked(id.clone(), asked.thread_id, lines)
            }
            ("thread/started", None) => {
                let Some(started) = serde_json::from_value::<cx::ThreadStartedNotification>(params)
                    .ok()
                    .and_then(|n| n.thread)
                else {
                    return false;
                };
                let id = started.id.unwrap_or_default();
                let main = !started.ephemeral.unwrap_or(false) && started.parent_thread_id.is_none();
                let mut known = lock(&self.known);
                match main && known.thread.is_none() {
                    true => known.thread = Some(id),
                    false => known.others.push(id),
                }
                known.others.truncate(64);
                false
            }
            ("thread/status/changed", None) => {
                let Some(changed) = serde_json::from_value::<cx::ThreadStatusChangedNotification>(params).ok() else {
                    return false;
                };
                self.status_changed(changed)
            }
            ("turn/started", None) => {
                let mut known = lock(&self.known);
                known.limited = None;
                false
            }
            ("serverRequest/resolved", None) => {
                let Some(resolved) = serde_json::from_value::<cx::ServerRequestResolvedNotification>(params).ok()
                else {
                    return false;
                };
                let mut known = lock(&self.known);
                let ours = known
                    .pending
                    .as_ref()
                    .is_some_and(|p| Some(&p.id) == resolved.request_id.as_ref());
                if ours {
                    known.pending = None;
                }
                ours
            }
            ("thread/tokenUsage/updated", None) => {
                let Some(total) = serde_json::from_value::<cx::ThreadTokenUsageUpdatedNotification>(params)
                    .ok()
                    .filter(|n| self.is_main(n.thread_id.as_deref()))
                    .and_then(|n| n.token_usage?.total)
                else {
                    return false;
                };
                let count = |n: Option<i64>| n.unwrap_or(0).max(0) as u64;
                lock(&self.known).tokens = Some(TokenTotals {
                    input: count(total.input_tokens),
                    cached_input: count(total.cached_input_tokens),
                    output: count(total.output_tokens),
                });
                true
            }
            ("account/rateLimits/updated", None) => {
                let Some(limits) = serde_json::from_value::<cx::AccountRateLimitsUpdatedNotification>(params)
                    .ok()
                    .and_then(|n| n.rate_limits)
                else {
                    return false;
                };
                let windows = [limits.primary, limits.secondary];
                let reached = limits.rate_limit_reached_type.is_some_and(|t| !t.is_null())
                    || windows.iter().flatten().any(|w| w.used_percent.unwrap_or(0) >= 100);
                let resets = windows
                    .iter()
                    .flatten()
                    .filter(|w| w.used_percent.unwrap_or(0) >= 100 || reached)
                    .filter_map(|w| w.resets_at)
                    .max();
                let mut known = lock(&self.known);
                known.rate_resets_at = reached.then(|| resets.map(seconds_to_ms)).flatten();
                false
            }
            ("error", None) => {
                let Some(error) = serde_json::from_value::<cx::ErrorNotification>(params).ok() else {
                    return false;
                };
                let error_said = error.error.clone().and_then(|e| e.message).unwrap_or_default();
                let info = error.error.and_then(|e| e.codex_error_info).unwrap_or_default();
                let limit = ["usageLimitExceeded", "rateLimitExceeded"]
                    .iter()
                    .any(|kind| info == *kind || info.get(kind).is_some());
                if !limit || error.will_retry.unwrap_or(false) || !self.is_main(error.thread_id.as_deref()) {
                    return false;
                }
                let mut known = lock(&self.known);
                let said = fugue_protocol::limits::clean_label(&error_said, PROMPT_LINE_CHARS);
                // The rate limits' reset, else the one the error's words name.
                let resets = known
                    .rate_resets_at
                    .or_else(|| super::limit::reset_time(&said, chrono::Local::now()));
                known.limited = Some((resets, said));
                true
            }
            _ => false,
        }
    }

    fn is_main(&self, thread: Option<&str>) -> bool {
        let known = lock(&self.known);
        known.thread.is_some() && known.thread.as_deref() == thread
    }

    fn asked(&self, id: Value, thread: Option<String>, lines: Vec<String>) -> bool {
        if !self.is_main(thread.as_deref()) {
            return false;
        }
        let lines = lines
            .into_iter()
            .take(PROMPT_LINES)
            .map(|line| fugue_protocol::limits::clean_label(&line, PROMPT_LINE_CHARS))
            .collect();
        lock(&self.known).pending = Some(Pending {
            id,
            lines,
            since_ms: fugue_protocol::now_ms(),
        });
        true
    }

    fn status_changed(&self, changed: cx::ThreadStatusChangedNotification) -> bool {
        let Some(thread) = changed.thread_id else { return false };
        let status = changed.status.unwrap_or_default();
        let flags: Vec<String> = status
            .active_flags
            .and_then(|f| serde_json::from_value(f).ok())
            .unwrap_or_default();
        let state = match status.kind.as_deref() {
            // A turn that ended on an error (a usage limit among them): no
            // turn runs.
            Some("idle" | "systemError") => AgentState::Idle,
            Some("active") if flags.iter().any(|f| f == "waitingOnApproval") => AgentState::WaitingForPermission,
            Some("active") if flags.iter().any(|f| f == "waitingOnUserInput") => AgentState::WaitingForAnswer,
            Some("active") => AgentState::Busy,
            _ => AgentState::Unknown,
        };
        let resume = {
            let mut known = lock(&self.known);
            let another = known.thread.as_ref().is_some_and(|main| *main != thread);
            if another || known.others.contains(&thread) {
                return false;
            }
            let resume = !known.subscribed && known.resuming.is_none();
            if known.thread.is_some() {
                known.set_status(state);
            }
            resume
        };
        if resume {
            let id = self.request("thread/resume", json!({"threadId": thread, "excludeTurns": true}));
            lock(&self.known).resuming = Some((id, thread, state));
        }
        lock(&self.known).thread.is_some()
    }

    /// The answer to a request of fugued's: a `thread/resume` subscribed it
    /// (and, after a reconnect, says which thread is the TUI's), or failed
    /// (no rollout yet, or an ephemeral thread: asked again at the next
    /// status change).
    fn reply(&self, id: Option<u64>, message: &Value) -> bool {
        let mut known = lock(&self.known);
        let Some((resuming, thread, state)) = known.resuming.clone() else {
            return false;
        };
        if id != Some(resuming) {
            return false;
        }
        known.resuming = None;
        if message.get("error").is_some() {
            return false;
        }
        known.subscribed = true;
        if known.thread.is_none() {
            known.thread = Some(thread);
            known.set_status(state);
        }
        true
    }

    /// Connected to nothing (what it sends is dropped): for the fuzz target,
    /// which feeds it messages without a server.
    pub fn connect_for_fuzzing(&self) {
        let (outbox, _) = mpsc::unbounded_channel();
        self.connected(Some(outbox));
    }

    fn connected(&self, outbox: Option<mpsc::UnboundedSender<String>>) {
        let connected = outbox.is_some();
        *lock(&self.outbox) = outbox;
        let mut known = lock(&self.known);
        *known = Known {
            connected,
            next_id: known.next_id,
            ..Known::default()
        };
    }
}

impl Known {
    /// The thread's state now, since when it has been so.
    fn set_status(&mut self, state: AgentState) {
        if self.status.is_none_or(|(was, _)| was != state) {
            self.status = Some((state, fugue_protocol::now_ms()));
        }
        match state {
            AgentState::Idle => self.pending = None,
            // A new turn: the limit the last one ended on is history.
            _ => self.limited = None,
        }
    }
}

/// How long the app-server and the screen may disagree before it is logged.
const DISAGREE_FOR: Duration = Duration::from_secs(1);

/// Logs, once per spell, an app-server and a screen that disagree for more
/// than [`DISAGREE_FOR`] (a transition one sees a moment before the other
/// is no disagreement); `spell`: since when, and whether it was logged.
pub fn cross_check(spell: &mut Option<(std::time::Instant, bool)>, said: AgentState, screen: AgentState) {
    let agree = said == screen || matches!(screen, AgentState::Unknown | AgentState::Starting);
    match (spell.as_mut(), agree) {
        (_, true) => *spell = None,
        (None, false) => *spell = Some((std::time::Instant::now(), false)),
        (Some((since, logged)), false) if !*logged && since.elapsed() > DISAGREE_FOR => {
            *logged = true;
            tracing::info!(
                app_server = said.as_str(),
                screen = screen.as_str(),
                "Codex's app-server and its screen disagree"
            );
        }
        _ => {}
    }
}

/// The state, its source, evidence and reset from what the app-server said
/// and what the screen read (with its limit): the app-server's, except an
/// approval the TUI has not settled on screen yet (Codex drops an Enter
/// while its dialog is drawn, so a key sent then is lost: the turn runs
/// until it has) and a limit only the screen names.
pub fn weigh(
    said: &Reading,
    screen: (AgentState, fugue_protocol::StateSource, Vec<String>, Option<u64>),
    prompt_settled: bool,
) -> (AgentState, fugue_protocol::StateSource, Vec<String>, Option<u64>) {
    use fugue_protocol::StateSource::AppServer;
    match (said.state, screen.0) {
        (AgentState::WaitingForPermission, _) if !prompt_settled => {
            (AgentState::Busy, AppServer, said.evidence.clone(), None)
        }
        (AgentState::Idle, AgentState::Limited) => screen,
        (AgentState::Limited, _) => (
            AgentState::Limited,
            AppServer,
            said.evidence.clone(),
            said.resets_at_ms.or(screen.3),
        ),
        _ => (said.state, AppServer, said.evidence.clone(), said.resets_at_ms),
    }
}

fn seconds_to_ms(seconds: i64) -> u64 {
    (seconds.max(0) as u64).saturating_mul(1000)
}

/// An approval's prompt id: a digest of its request id and when it came.
fn prompt_id(id: &Value, since_ms: u64) -> String {
    let text = format!("codex-app-server\n{id}\n{since_ms}");
    format!("{:016x}", fugue_protocol::socket::stable_hash(text.as_bytes()))
}

/// Connects to the pane's app-server once its socket is there, and follows
/// it until it or the pane ends; `changed` is told whenever what it says
/// changed (the pane's watcher looks again).
pub fn follow<T: Send + Sync + 'static>(
    socket: PathBuf,
    server: Arc<AppServer>,
    changed: Arc<dyn Fn() + Send + Sync>,
    mut exit: tokio::sync::watch::Receiver<Option<T>>,
) {
    tokio::spawn(async move {
        let connected = tokio::select! {
            stream = connect(&socket) => stream,
            _ = ended(&mut exit) => return,
        };
        let Some(stream) = connected else {
            tracing::info!(socket = %socket.display(), "no Codex app-server answered; the screen reads Codex");
            return;
        };
        let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
            .max_message_size(Some(MAX_MESSAGE))
            .max_frame_size(Some(MAX_MESSAGE));
        let Ok((ws, _)) = tokio_tungstenite::client_async_with_config("ws://localhost/", stream, Some(config)).await
        else {
            tracing::info!(socket = %socket.display(), "Codex's app-server refused the WebSocket; the screen reads Codex");
            return;
        };
        let server_gone = run(ws, &server, &changed, &mut exit).await;
        server.connected(None);
        changed();
        // The pane's end (or a live upgrade's hand-over) ends it too: said
        // only when the server went.
        if server_gone {
            tracing::info!(socket = %socket.display(), "Codex app-server connection ended; the screen reads Codex");
        }
    });
}

async fn run<S, T>(
    ws: tokio_tungstenite::WebSocketStream<S>,
    server: &AppServer,
    changed: &Arc<dyn Fn() + Send + Sync>,
    exit: &mut tokio::sync::watch::Receiver<Option<T>>,
) -> bool
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    use futures::{SinkExt as _, StreamExt as _};
    use tokio_tungstenite::tungstenite::Message;
    let (mut sink, mut source) = ws.split();
    let (outbox, mut outgoing) = mpsc::unbounded_channel();
    server.connected(Some(outbox));
    let version = env!("CARGO_PKG_VERSION");
    server.request(
        "initialize",
        json!({"clientInfo": {"name": "fugue", "title": "fugue", "version": version}, "capabilities": {"experimentalApi": true}}),
    );
    let _ = server.send(json!({"jsonrpc": "2.0", "method": "initialized"}).to_string());
    loop {
        tokio::select! {
            message = source.next() => match message {
                Some(Ok(Message::Text(text))) => {
                    if server.take(text.as_str()) {
                        changed();
                    }
                }
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return true,
                Some(Ok(_)) => {}
            },
            Some(text) = outgoing.recv() => {
                if sink.send(Message::text(text)).await.is_err() {
                    return true;
                }
            }
            _ = ended(exit) => return false,
        }
    }
}

/// Returns once the pane's process has ended.
async fn ended<T>(exit: &mut tokio::sync::watch::Receiver<Option<T>>) {
    loop {
        if exit.borrow_and_update().is_some() {
            return;
        }
        if exit.changed().await.is_err() {
            return;
        }
    }
}

/// The socket once it accepts a connection, waiting for it to appear (its
/// directory's inotify) for at most [`CONNECT_WITHIN`].
async fn connect(socket: &Path) -> Option<tokio::net::UnixStream> {
    let deadline = tokio::time::Instant::now() + CONNECT_WITHIN;
    let followed = file_watch::follow(socket);
    loop {
        if let Ok(stream) = tokio::net::UnixStream::connect(socket).await {
            return Some(stream);
        }
        // There but not listening yet: a moment later; not there: when it is.
        let there = socket.exists();
        let wait = async {
            match (&followed, there) {
                (Some(followed), false) => followed.changed().await,
                _ => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        };
        if tokio::time::timeout_at(deadline, wait).await.is_err() {
            return None;
        }
    }
}
