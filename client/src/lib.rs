//! Async client for `fugued`, used by the `fugue` CLI, the MCP bridge and the tests.
//!
//! A [`Client`] is one connection. It is cheap to clone and safe to use from many
//! tasks at once: every call gets its own request id, and a background task routes
//! each reply to its caller, so calls never wait on each other.

mod autostart;
pub mod delegate;
pub mod diff;
pub mod fanout;
pub mod final_message;
pub mod fleet;
mod local;
pub mod ops;
pub mod remote;
pub mod review;
pub mod sandbox;
mod shared;
pub mod token;
pub mod views;
pub mod worktree;
pub mod worktree_setup;

pub use autostart::{companion_binary, daemon_binary, start_daemon};
pub use fugue_protocol as protocol;
use local::check_peer;
pub use local::connect_socket;
pub use shared::SharedClient;

use fugue_protocol::codec::{CodecError, FrameCodec};
use fugue_protocol::requests as rq;
use fugue_protocol::*;
use futures::{SinkExt, StreamExt};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::UnixStream;
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::codec::{FramedRead, FramedWrite};

/// A command-line error as one line, without its `error: ` label: everything
/// before the usage, so "required arguments were not provided" keeps which
/// ones. `rendered` is the parser's message (clap's `Error::render`); shared by
/// fugue's programs, none of which this library parses arguments for.
pub fn usage_error_line(rendered: &str) -> String {
    let message = rendered.split("\n\n").next().unwrap_or("invalid arguments");
    let words: Vec<&str> = message.split_whitespace().collect();
    let line = words.join(" ");
    line.trim_start_matches("error: ").trim().to_string()
}

/// Largest input sent in one request; bigger writes are split, in order.
const WRITE_CHUNK: usize = 1024 * 1024;
/// Events buffered for a caller that reads them slower than they come ...
const EVENT_BUFFER: usize = 1024;
/// ... and their output bytes at most: past either the connection stops reading,
/// and the daemon drops what an attached pane's reader could not take and
/// resynchronises it with a redraw. A count alone would let 1024 chunks of 64 KiB
/// of a flooding pane pile up here (64 MiB, shown long after they were current).
const EVENT_BYTES: usize = 1024 * 1024;

/// The events of a connection (see [`Client::events`]), bounded in number and in
/// bytes.
pub struct EventStream {
    events: mpsc::Receiver<(Event, u32)>,
    budget: Arc<tokio::sync::Semaphore>,
}

impl EventStream {
    /// The next event; `None` once the connection has closed.
    pub async fn recv(&mut self) -> Option<Event> {
        let (event, cost) = self.events.recv().await?;
        self.budget.add_permits(cost as usize);
        Some(event)
    }
}

/// What an event counts against [`EVENT_BYTES`].
fn event_cost(event: &Event) -> u32 {
    let bytes = match event {
        Event::Output { data, .. } | Event::Redraw { data, .. } => data.len(),
        _ => 1,
    };
    bytes.clamp(1, EVENT_BYTES) as u32
}
/// How long auto-start waits for a new daemon.
pub const START_TIMEOUT: Duration = Duration::from_secs(5);

/// What went wrong talking to the daemon. Every variant prints as one line.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The daemon answered with an error.
    #[error("{0}")]
    Daemon(#[from] ErrorReply),
    #[error("cannot connect to fugued at {path}: {reason}")]
    Connect {
        path: PathBuf,
        reason: String,
        /// Nothing listens there (no socket, or nobody accepting on it).
        not_running: bool,
    },
    /// The socket or the process behind it is not ours: nothing was sent.
    #[error("refusing {path}: {reason}")]
    Untrusted { path: PathBuf, reason: String },
    #[error("cannot start fugued: {0}")]
    Start(String),
    #[error("protocol error: {0}")]
    Protocol(String),
    #[error("connection to fugued closed{0}")]
    Closed(String),
    #[error(transparent)]
    Worktree(#[from] worktree::WorktreeError),
}

impl ClientError {
    /// The daemon's error code, when the daemon sent one.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            ClientError::Daemon(reply) => Some(reply.code),
            _ => None,
        }
    }
}

pub type Result<T> = std::result::Result<T, ClientError>;

/// How to reach the daemon.
#[derive(Clone, Debug)]
pub struct ConnectOptions {
    /// Socket path; `None` follows the usual rules (see [`socket::socket_path`]).
    pub socket: Option<PathBuf>,
    /// Start `fugued` if nothing answers on the socket.
    pub autostart: bool,
    /// Shown in the daemon's logs.
    pub client_name: String,
    /// A daemon on another machine, reached over ssh (`None`: this machine's).
    pub host: Option<remote::Remote>,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        Self {
            socket: None,
            autostart: true,
            client_name: "fugue-client".into(),
            host: None,
        }
    }
}

impl ConnectOptions {
    pub fn socket(mut self, path: impl Into<PathBuf>) -> Self {
        self.socket = Some(path.into());
        self
    }

    pub fn autostart(mut self, on: bool) -> Self {
        self.autostart = on;
        self
    }

    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    pub fn host(mut self, host: remote::Remote) -> Self {
        self.host = Some(host);
        self
    }

    pub fn socket_path(&self) -> PathBuf {
        socket::socket_path(self.socket.as_deref())
    }
}

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Response>>>>>;

/// A connection to `fugued`.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    next_id: AtomicU64,
    pending: Pending,
    out: mpsc::Sender<ClientFrame>,
    welcome: Welcome,
    socket: PathBuf,
    events: Mutex<Option<EventStream>>,
    /// Whether someone took the event stream; until then events are dropped.
    events_taken: Arc<std::sync::atomic::AtomicBool>,
    closed: watch::Receiver<bool>,
}

impl Client {
    /// Connects (starting the daemon first if allowed and needed) and handshakes.
    pub async fn connect(options: ConnectOptions) -> Result<Client> {
        if let Some(remote) = &options.host {
            return Self::connect_remote(remote, &options.client_name, options.autostart).await;
        }
        let (stream, path) = connect_socket(&options).await?;
        let (read, write) = stream.into_split();
        Self::handshake_io(Box::new(read), Box::new(write), path, &options.client_name).await
    }

    /// Handshakes on an already connected stream.
    /// The peer must run as our uid (SO_PEERCRED): nothing is sent to anyone else.
    pub async fn handshake(stream: UnixStream, socket: PathBuf, client_name: &str) -> Result<Client> {
        check_peer(&stream, &socket)?;
        let (read, write) = stream.into_split();
        Self::handshake_io(Box::new(read), Box::new(write), socket, client_name).await
    }

    /// Connects to a daemon on another machine through `ssh HOST fugue proxy`.
    /// ssh authenticates the host and the user; the proxy on the far side
    /// makes the local checks (socket ownership, the daemon's uid) there, and
    /// starts a daemon there only if `autostart`.
    async fn connect_remote(remote: &remote::Remote, client_name: &str, autostart: bool) -> Result<Client> {
        let place = PathBuf::from(remote.place());
        let failed = |reason: String| ClientError::Connect {
            path: place.clone(),
            reason,
            not_running: false,
        };
        let mut command = remote.proxy_command(autostart);
        command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let mut child = command
            .spawn()
            .map_err(|e| failed(format!("cannot run {}: {e}", remote.program())))?;
        let (Some(stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(failed(format!("{}'s pipes were not set up", remote.program())));
        };
        let said = remote::last_words(stderr);
        let handshake = Self::handshake_io(Box::new(stdout), Box::new(stdin), place.clone(), client_name);
        match tokio::time::timeout(REMOTE_CONNECT_TIMEOUT, handshake).await {
            Ok(Ok(client)) => {
                // The connection lives as long as ssh does; ssh ends when the
                // client closes its end (the proxy reads end of input).
                tokio::spawn(async move {
                    let _ = child.wait().await;
                });
                Ok(client)
            }
            Ok(Err(ClientError::Closed(_))) => {
                let _ = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
                let said = said.get().await;
                let hint = match remote::says_fugue_is_missing(&said) {
                    true => " (is fugue installed there, on its PATH?)",
                    false => "",
                };
                Err(failed(format!("{}: {said}{hint}", remote.describe())))
            }
            Ok(Err(other)) => Err(other),
            Err(_) => Err(failed(format!(
                "{} did not connect within {} s",
                remote.describe(),
                REMOTE_CONNECT_TIMEOUT.as_secs()
            ))),
        }
    }

    /// Handshakes over any byte stream (a Unix socket, or ssh's pipes).
    async fn handshake_io(read: ReadHalf, write: WriteHalf, socket: PathBuf, client_name: &str) -> Result<Client> {
        // The Welcome may carry fields a newer daemon appended: read it leniently.
        let mut codec = FrameCodec::<ClientFrame, ServerFrame>::new();
        codec.set_lenient(true);
        let mut reader = FramedRead::new(read, codec);
        let mut writer = FramedWrite::new(write, FrameCodec::<ClientFrame, ServerFrame>::new());
        let hello = Hello {
            protocol_version: PROTOCOL_VERSION,
            client_name: client_name.to_string(),
            client_version: env!("CARGO_PKG_VERSION").to_string(),
            revision: fugue_protocol::PROTOCOL_REVISION,
        };
        writer.send(ClientFrame::Hello(hello)).await.map_err(codec_error)?;
        let welcome = match reader.next().await {
            Some(Ok(ServerFrame::Welcome(welcome))) => welcome,
            // A daemon of generation 9 or older reads Hello strictly and cannot
            // read the revision appended to it: say what it is.
            Some(Ok(ServerFrame::Fatal(reply)))
                if reply.code == ErrorCode::MalformedFrame && reply.message.contains("trailing bytes") =>
            {
                return Err(ClientError::Daemon(ErrorReply::new(
                    ErrorCode::ProtocolMismatch,
                    format!(
                        "protocol mismatch: fugued speaks a protocol older than {PROTOCOL_VERSION} ({}); \
                         restart it with `fugue daemon stop` or use a matching client",
                        reply.message
                    ),
                )))
            }
            Some(Ok(ServerFrame::Fatal(reply))) => return Err(ClientError::Daemon(reply)),
            Some(Ok(other)) => return Err(ClientError::Protocol(format!("expected Welcome, got {other:?}"))),
            Some(Err(err)) => return Err(codec_error(err)),
            None => return Err(ClientError::Closed(" during the handshake".into())),
        };
        reader.decoder_mut().set_lenient(false);

        let pending: Pending = Arc::default();
        let (out, out_rx) = mpsc::channel(256);
        let (events_tx, events_rx) = mpsc::channel(EVENT_BUFFER);
        let budget = Arc::new(tokio::sync::Semaphore::new(EVENT_BYTES));
        let (closed_tx, closed) = watch::channel(false);
        let events_taken = Arc::new(std::sync::atomic::AtomicBool::new(false));
        tokio::spawn(write_loop(writer, out_rx));
        tokio::spawn(read_loop(
            reader,
            pending.clone(),
            (events_tx, budget.clone(), events_taken.clone()),
            closed_tx,
        ));
        Ok(Client {
            inner: Arc::new(Inner {
                next_id: AtomicU64::new(1),
                pending,
                out,
                welcome,
                socket,
                events: Mutex::new(Some(EventStream {
                    events: events_rx,
                    budget,
                })),
                events_taken,
                closed,
            }),
        })
    }

    /// What the daemon said in the handshake (its version and pid).
    pub fn welcome(&self) -> &Welcome {
        &self.inner.welcome
    }

    pub fn socket(&self) -> &Path {
        &self.inner.socket
    }

    /// Resolves when the daemon has closed this connection.
    pub async fn closed(&self) {
        let mut closed = self.inner.closed.clone();
        let _ = closed.wait_for(|c| *c).await;
    }

    /// Sends one request and waits for its reply. Dropping the future before the
    /// reply came cancels the request in the daemon.
    pub async fn request(&self, request: Request) -> Result<Response> {
        let name = request.name();
        // An older daemon says which requests it answers: one it does not know
        // is refused here, in the words the daemon would use.
        if !self.inner.welcome.supports(request.tag()) {
            return Err(self.unsupported(name));
        }
        match self.send_request(request).await {
            Err(ClientError::Daemon(reply)) if reply.code == ErrorCode::UnsupportedRequest => {
                Err(self.unsupported(name))
            }
            other => other,
        }
    }

    /// The error for a request the daemon does not know.
    fn unsupported(&self, name: &str) -> ClientError {
        let welcome = &self.inner.welcome;
        ClientError::Daemon(ErrorReply::new(
            ErrorCode::UnsupportedRequest,
            format!(
                "fugued {} does not support {name} (it speaks protocol {}.{}, this client {}.{}); \
                 upgrade it with `fugue daemon upgrade`",
                welcome.daemon_version,
                welcome.protocol_version,
                welcome.revision,
                PROTOCOL_VERSION,
                fugue_protocol::PROTOCOL_REVISION
            ),
        ))
    }

    async fn send_request(&self, request: Request) -> Result<Response> {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.inner.pending.lock().expect("pending map").insert(id, tx);
        if self.inner.out.send(ClientFrame::Request { id, request }).await.is_err() {
            self.inner.pending.lock().expect("pending map").remove(&id);
            return Err(ClientError::Closed(String::new()));
        }
        let mut guard = CancelOnDrop {
            inner: &self.inner,
            id,
            armed: true,
        };
        let reply = rx.await;
        guard.armed = false;
        match reply {
            Ok(result) => result,
            Err(_) => Err(ClientError::Closed(String::new())),
        }
    }

    /// Sends one typed request and returns its reply (see `fugue_protocol::requests`).
    /// Dropping the future before the reply came cancels the request in the daemon.
    pub async fn call<R: Rpc>(&self, request: R) -> Result<R::Reply> {
        R::reply(self.request(request.into()).await?)
            .map_err(|other| ClientError::Protocol(format!("the daemon answered {} with a {other} reply", R::NAME)))
    }

    /// Whether the daemon has closed this connection.
    pub fn is_closed(&self) -> bool {
        *self.inner.closed.borrow()
    }

    /// Waits (in the daemon, on events) for the first condition of `until`.
    pub async fn wait_for(&self, pane: &str, until: WaitUntil, timeout: Duration) -> Result<WaitOutcome> {
        let request = rq::WaitFor {
            pane: pane.into(),
            until,
            timeout_ms: timeout.as_millis() as u64,
        };
        self.call(request).await
    }

    /// The agent CLI in a pane and what it is doing.
    pub async fn agent_status(&self, pane: &str) -> Result<AgentInfo> {
        self.call(rq::AgentStatus { pane: pane.into() }).await
    }

    /// Sends a prompt to the agent in `pane` (see [`crate::ops::send_prompt`]):
    /// the daemon runs the whole transaction and returns its receipt.
    pub async fn send_prompt(
        &self,
        pane: &str,
        text: &str,
        key: Option<&str>,
    ) -> Result<fugue_protocol::PromptReceipt> {
        self.call(rq::SendPrompt {
            pane: pane.into(),
            text: text.into(),
            key: key.map(String::from),
        })
        .await
    }

    /// Answers the permission prompt `prompt_id` of the agent in `pane`; the
    /// daemon sends the answer only if that prompt is on screen and unanswered.
    pub async fn answer_permission(
        &self,
        pane: &str,
        prompt_id: &str,
        answer: fugue_protocol::PermissionAnswer,
    ) -> Result<fugue_protocol::PermissionAnswered> {
        let request = rq::AnswerPermission {
            pane: pane.into(),
            prompt_id: prompt_id.into(),
            answer,
        };
        self.call(request).await
    }

    /// Reports an agent hook for `pane` (see `fugue agent-event`).
    /// Reports an agent hook for `pane`, with the pane process's
    /// `FUGUE_PANE_TOKEN` (`token`).
    pub async fn agent_hook(&self, pane: &str, token: &str, hook: fugue_protocol::AgentHook) -> Result<()> {
        let request = rq::ReportHook {
            pane: pane.into(),
            token: token.into(),
            hook,
        };
        self.call(request).await
    }

    /// Starts the agent `pane` ran again on its recorded session, as a new pane.
    pub async fn resume_agent(&self, pane: &str) -> Result<PaneInfo> {
        self.call(rq::ResumeAgent { pane: pane.into() }).await
    }

    /// Puts the pane's agent to rest: its program ends, the pane stays
    /// `hibernated` until a prompt, an attach or [`Client::wake`] resumes it.
    pub async fn hibernate(&self, pane: &str) -> Result<PaneInfo> {
        self.call(rq::HibernatePane { pane: pane.into() }).await
    }

    /// Resumes a hibernated pane's agent in the same pane; answers once it is ready.
    /// Wakes a hibernated pane's agent; the reply says if it was started afresh.
    pub async fn wake(&self, pane: &str) -> Result<fugue_protocol::Woken> {
        self.call(rq::WakePane { pane: pane.into() }).await
    }

    pub async fn ping(&self) -> Result<()> {
        self.call(rq::Ping {}).await
    }

    pub async fn daemon_status(&self) -> Result<DaemonInfo> {
        self.call(rq::DaemonStatus {}).await
    }

    /// Asks the daemon to shut down and waits until it has closed the connection.
    pub async fn shutdown(&self, timeout: Duration) -> Result<()> {
        self.call(rq::Shutdown {}).await?;
        tokio::time::timeout(timeout, self.closed())
            .await
            .map_err(|_| ClientError::Protocol(format!("daemon still running {}s after shutdown", timeout.as_secs())))
    }

    /// Asks the daemon to replace itself with the binary now on disk, keeping every
    /// pane and process; waits until it answers again and returns its status, whose
    /// `recovery` says how the upgrade went (it starts with "upgrade failed" when
    /// the old daemon kept running).
    pub async fn upgrade_daemon(options: ConnectOptions, timeout: Duration) -> Result<DaemonInfo> {
        let options = options.autostart(false);
        let client = Client::connect(options.clone()).await?;
        let before = client.daemon_status().await?;
        client.call(rq::UpgradeDaemon {}).await?;
        let deadline = tokio::time::Instant::now() + timeout;
        // Every connection closes when the hand-over begins.
        let _ = tokio::time::timeout_at(deadline, client.closed()).await;
        drop(client);
        loop {
            let answered = match Client::connect(options.clone()).await {
                Ok(client) => Some(client.daemon_status().await),
                Err(err @ ClientError::Daemon(_)) => Some(Err(err)),
                Err(_) => None,
            };
            match answered {
                Some(Ok(info)) if info.started_at_ms != before.started_at_ms || info.recovery != before.recovery => {
                    return Ok(info)
                }
                // A daemon that speaks another protocol answered: the upgrade happened.
                Some(Err(err)) if err.code() == Some(ErrorCode::ProtocolMismatch) => return Err(err),
                _ => {}
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(ClientError::Protocol(format!(
                    "fugued did not answer within {}s of the upgrade",
                    timeout.as_secs()
                )));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    pub async fn create_session(&self, name: &str, cwd: Option<&Path>, env: Vec<EnvVar>) -> Result<SessionInfo> {
        let request = rq::CreateSession {
            name: name.to_string(),
            cwd: cwd.map(|c| c.display().to_string()),
            env,
        };
        self.call(request).await
    }

    pub async fn destroy_session(&self, session: &str) -> Result<SessionInfo> {
        self.call(rq::DestroySession {
            session: session.into(),
        })
        .await
    }

    pub async fn list_sessions(&self) -> Result<Vec<SessionInfo>> {
        self.call(rq::ListSessions {}).await
    }

    /// Renames a session; returns it and its previous name.
    pub async fn rename_session(&self, session: &str, name: &str) -> Result<(SessionInfo, String)> {
        let request = rq::RenameSession {
            session: session.into(),
            name: name.into(),
        };
        self.call(request).await.map(|r| (r.session, r.previous_name))
    }

    pub async fn create_pane(&self, spec: SpawnSpec) -> Result<PaneInfo> {
        self.call(rq::CreatePane { spec }).await
    }

    /// Every pane (of one session, or of all) with its agent's state and last line.
    pub async fn overview(&self, session: Option<&str>) -> Result<Vec<PaneOverview>> {
        self.call(rq::Overview {
            session: session.map(str::to_string),
        })
        .await
    }

    /// The agent sessions outside any pane (`claude --bg`) the daemon reads.
    pub async fn background_agents(&self) -> Result<Vec<fugue_protocol::BackgroundAgent>> {
        self.call(rq::BackgroundAgents {}).await
    }

    /// Every row of an overview, as the views show it: the panes (of one
    /// session, or all), then, for all sessions, the agent sessions outside
    /// any pane.
    pub async fn overview_rows(&self, session: Option<&str>) -> Result<Vec<views::OverviewView>> {
        let panes = self.overview(session).await?;
        let background = match session {
            Some(_) => Vec::new(),
            None => self.background_agents().await?,
        };
        Ok(views::overview_rows(&panes, &background))
    }

    /// The lines of every pane's text (of one session, or of all) matching
    /// `pattern`, at most `max_matches`.
    pub async fn grep(&self, pattern: &str, session: Option<&str>, max_matches: u32) -> Result<GrepResult> {
        self.call(rq::Grep {
            pattern: pattern.into(),
            session: session.map(str::to_string),
            max_matches,
        })
        .await
    }

    /// Panes of one session, or of every session.
    pub async fn list_panes(&self, session: Option<&str>) -> Result<Vec<PaneInfo>> {
        let request = rq::ListPanes {
            session: session.map(str::to_string),
        };
        self.call(request).await
    }

    pub async fn pane_status(&self, pane: &str) -> Result<PaneInfo> {
        self.call(rq::PaneStatus { pane: pane.into() }).await
    }

    /// Writes input to the pane; large input goes in several requests, in order.
    pub async fn write_input(&self, pane: &str, data: &[u8]) -> Result<()> {
        self.write(pane, data, false).await
    }

    /// Pastes text: wrapped in bracketed-paste markers if the program asked for them.
    pub async fn paste(&self, pane: &str, data: &[u8]) -> Result<()> {
        self.write(pane, data, true).await
    }

    async fn write(&self, pane: &str, data: &[u8], paste: bool) -> Result<()> {
        if paste && data.len() > WRITE_CHUNK {
            // Markers around each request would split one paste into several.
            return Err(ClientError::Daemon(ErrorReply::invalid(format!(
                "a paste is limited to {WRITE_CHUNK} bytes; write larger input without paste"
            ))));
        }
        for chunk in data.chunks(WRITE_CHUNK) {
            let request = rq::WriteInput {
                pane: pane.into(),
                data: chunk.to_vec(),
                paste,
            };
            self.call(request).await?;
        }
        Ok(())
    }

    pub async fn send_keys(&self, pane: &str, keys: &[String]) -> Result<()> {
        let request = rq::SendKeys {
            pane: pane.into(),
            keys: keys.to_vec(),
        };
        self.call(request).await
    }

    pub async fn interrupt(&self, pane: &str) -> Result<()> {
        self.call(rq::Interrupt { pane: pane.into() }).await
    }

    /// Signals the pane (default TERM; SIGKILL follows after the daemon's grace).
    pub async fn kill_pane(&self, pane: &str, signal: Option<&str>) -> Result<PaneInfo> {
        let request = rq::KillPane {
            pane: pane.into(),
            signal: signal.map(str::to_string),
        };
        self.call(request).await
    }

    pub async fn release_pane(&self, pane: &str) -> Result<()> {
        self.call(rq::ReleasePane { pane: pane.into() }).await
    }

    pub async fn resize_pane(&self, pane: &str, size: PaneSize) -> Result<()> {
        self.call(rq::ResizePane {
            pane: pane.into(),
            size,
        })
        .await
    }

    pub async fn rename_pane(&self, pane: &str, title: &str) -> Result<PaneInfo> {
        let request = rq::RenamePane {
            pane: pane.into(),
            title: title.into(),
        };
        self.call(request).await
    }

    pub async fn reorder_panes(&self, session: &str, panes: &[String]) -> Result<Vec<PaneInfo>> {
        let request = rq::ReorderPanes {
            session: session.into(),
            panes: panes.to_vec(),
        };
        self.call(request).await
    }

    pub async fn read_output(&self, pane: &str, mode: ReadMode) -> Result<OutputChunk> {
        self.call(rq::ReadOutput {
            pane: pane.into(),
            mode,
        })
        .await
    }

    /// Waits for the pane's process to exit; `Ok((info, false))` if the timeout passed first.
    pub async fn wait_for_exit(&self, pane: &str, timeout: Option<Duration>) -> Result<(PaneInfo, bool)> {
        let request = rq::WaitForExit {
            pane: pane.into(),
            timeout_ms: timeout.map(|t| t.as_millis() as u64),
        };
        self.call(request).await.map(|r| (r.pane, r.exited))
    }

    /// The connection's event stream (lifecycle events after [`Client::subscribe`],
    /// pane events after [`Client::attach`]); it can be taken once. Until it is
    /// taken events are dropped; once taken, a reader that stops reading holds up
    /// this connection's replies too, and the daemon resynchronises attached panes
    /// with a redraw when it reads again.
    pub fn events(&self) -> Result<EventStream> {
        let events = self.inner.events.lock().expect("events").take();
        let events = events.ok_or_else(|| ClientError::Protocol("the event stream was already taken".into()))?;
        self.inner.events_taken.store(true, Ordering::Release);
        Ok(events)
    }

    /// Starts session and pane lifecycle events on this connection and returns the
    /// event stream.
    pub async fn subscribe(&self) -> Result<EventStream> {
        let events = self.events()?;
        self.call(rq::Subscribe {}).await?;
        Ok(events)
    }

    /// The rendered screen and/or scrollback.
    pub async fn capture(
        &self,
        pane: &str,
        what: CaptureWhat,
        range: (Option<i64>, Option<i64>),
        ansi: bool,
        join_wrapped: bool,
    ) -> Result<CaptureResult> {
        let request = rq::Capture {
            pane: pane.into(),
            what,
            start: range.0,
            end: range.1,
            ansi,
            join_wrapped,
        };
        self.call(request).await
    }

    /// Follows a pane: [`Event::Redraw`], then its output, title, bell and exit
    /// events arrive on [`Client::events`].
    pub async fn attach(&self, pane: &str, read_only: bool, size: Option<PaneSize>) -> Result<PaneInfo> {
        let request = rq::Attach {
            pane: pane.into(),
            read_only,
            size,
        };
        self.call(request).await
    }

    pub async fn detach(&self, pane: &str) -> Result<()> {
        self.call(rq::Detach { pane: pane.into() }).await
    }

    /// Reports this client's terminal size for a pane it is attached to.
    pub async fn client_resize(&self, pane: &str, size: PaneSize) -> Result<()> {
        self.call(rq::ClientResize {
            pane: pane.into(),
            size,
        })
        .await
    }

    pub async fn set_size_policy(&self, pane: &str, policy: SizePolicy) -> Result<()> {
        self.call(rq::SetSizePolicy {
            pane: pane.into(),
            policy,
        })
        .await
    }
}

/// Tells the daemon to drop a request whose caller stopped waiting.
struct CancelOnDrop<'a> {
    inner: &'a Inner,
    id: u64,
    armed: bool,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        self.inner.pending.lock().expect("pending map").remove(&self.id);
        let cancel_id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let frame = ClientFrame::Request {
            id: cancel_id,
            request: Request::Cancel(rq::Cancel { id: self.id }),
        };
        // Best effort: if the queue is full the daemon finishes the request and
        // its reply is dropped here.
        let _ = self.inner.out.try_send(frame);
    }
}

fn codec_error(err: CodecError) -> ClientError {
    match err {
        CodecError::Io(e) => ClientError::Closed(format!(": {e}")),
        other => ClientError::Protocol(other.to_string()),
    }
}

/// How long connecting over ssh may take, handshake included.
const REMOTE_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

type ReadHalf = Box<dyn tokio::io::AsyncRead + Unpin + Send>;
type WriteHalf = Box<dyn tokio::io::AsyncWrite + Unpin + Send>;

async fn write_loop(
    mut writer: FramedWrite<WriteHalf, FrameCodec<ClientFrame, ServerFrame>>,
    mut frames: mpsc::Receiver<ClientFrame>,
) {
    while let Some(frame) = frames.recv().await {
        let sent = match frames.is_empty() {
            true => writer.send(frame).await,
            false => writer.feed(frame).await,
        };
        if sent.is_err() {
            return;
        }
    }
}

async fn read_loop(
    mut reader: FramedRead<ReadHalf, FrameCodec<ClientFrame, ServerFrame>>,
    pending: Pending,
    (events, budget, events_taken): (
        mpsc::Sender<(Event, u32)>,
        Arc<tokio::sync::Semaphore>,
        Arc<std::sync::atomic::AtomicBool>,
    ),
    closed: watch::Sender<bool>,
) {
    let reason = loop {
        match reader.next().await {
            Some(Ok(ServerFrame::Reply { id, result })) => {
                let waiter = pending.lock().expect("pending map").remove(&id);
                if let Some(waiter) = waiter {
                    let _ = waiter.send(result.map_err(ClientError::Daemon));
                }
            }
            Some(Ok(ServerFrame::Event(event))) => {
                if events_taken.load(Ordering::Acquire) {
                    // Back-pressure: the daemon notices a slow reader and resyncs it.
                    let cost = event_cost(&event);
                    let Ok(permits) = budget.acquire_many(cost).await else {
                        continue;
                    };
                    permits.forget();
                    let _ = events.send((event, cost)).await;
                }
            }
            Some(Ok(ServerFrame::Fatal(reply))) => break format!(": {}", reply.message),
            Some(Ok(ServerFrame::Welcome(_))) => break ": unexpected second Welcome".to_string(),
            Some(Err(err)) => break format!(": {err}"),
            None => break String::new(),
        }
    };
    let waiters: Vec<_> = pending.lock().expect("pending map").drain().map(|(_, w)| w).collect();
    for waiter in waiters {
        let _ = waiter.send(Err(ClientError::Closed(reason.clone())));
    }
    closed.send_replace(true);
}
