//! The socket: claiming it (lock file, stale-socket check), accepting connections
//! from our own uid only, shutting down on a signal or a Shutdown request, and
//! the steps of a live upgrade (on SIGUSR2 or an UpgradeDaemon request).

use crate::agent::hook_socket::HookSockets;
use crate::config::DaemonConfig;
mod connection;

use crate::actors::supervisor::{Start, SupervisorActor, SupervisorArgs, SupervisorMsg};
use crate::handover::{self, Handover, HANDOVER_VERSION};
use crate::requests::Handler;
use crate::store::Store;
use fugue_protocol::socket::{lock_path, prepare_socket_dir};
use futures::StreamExt;
use ractor::Actor;
use ractor::ActorRef;
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::fd::{AsRawFd, IntoRawFd, RawFd};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::os::unix::net::UnixListener as StdListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::UnixListener;
use tokio_util::sync::CancellationToken;

/// Why the daemon could not claim its socket.
#[derive(Debug, thiserror::Error)]
pub enum ClaimError {
    #[error("already running (pid {0})")]
    AlreadyRunning(String),
    #[error("{0}")]
    Other(String),
}

/// A claimed socket: bound, with the start-up lock held for the daemon's lifetime.
pub struct ClaimedSocket {
    pub path: PathBuf,
    listener: StdListener,
    lock: File,
    /// The socket came from the service manager (socket activation), which owns
    /// the file: it stays when fugued stops, so the next connection starts it.
    pub activated: bool,
}

/// Claims `socket`: one daemon per socket, guarded by a lock file beside it; a
/// socket file that nothing answers on is stale and replaced.
pub fn claim(socket: &Path) -> Result<ClaimedSocket, ClaimError> {
    let lock = lock_socket(socket)?;
    if socket.exists() {
        if std::os::unix::net::UnixStream::connect(socket).is_ok() {
            return Err(ClaimError::AlreadyRunning(
                "unknown: a daemon without a lock file answers".into(),
            ));
        }
        tracing::info!(socket = %socket.display(), "replacing stale socket");
        std::fs::remove_file(socket)
            .map_err(|e| ClaimError::Other(format!("cannot remove stale socket {}: {e}", socket.display())))?;
    }
    let listener =
        StdListener::bind(socket).map_err(|e| ClaimError::Other(format!("cannot bind {}: {e}", socket.display())))?;
    let _ = std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600));
    Ok(ClaimedSocket {
        path: socket.to_path_buf(),
        listener,
        lock,
        activated: false,
    })
}

/// Claims the listening socket a service manager handed over (systemd's socket
/// activation): it must be a Unix stream socket listening at `socket` itself, so
/// the daemon's records and clients agree on where it is.
pub fn claim_activated(socket: &Path, listener: std::os::fd::OwnedFd) -> Result<ClaimedSocket, ClaimError> {
    use rustix::net::sockopt;
    let refuse = |why: String| ClaimError::Other(format!("the socket from the service manager {why}"));
    match (sockopt::socket_type(&listener), sockopt::socket_acceptconn(&listener)) {
        (Ok(rustix::net::SocketType::STREAM), Ok(true)) => {}
        _ => return Err(refuse("is not a listening stream socket".into())),
    }
    let listener = StdListener::from(listener);
    let address = listener
        .local_addr()
        .map_err(|e| refuse(format!("has no address: {e}")))?;
    match address.as_pathname() {
        Some(path) if path == socket => {}
        Some(path) => {
            return Err(refuse(format!(
                "is {}, but fugued serves {}; give it --socket {0}",
                path.display(),
                socket.display()
            )))
        }
        None => return Err(refuse("is not a Unix socket with a path".into())),
    }
    let lock = lock_socket(socket)?;
    // The unit says SocketMode=0600; a manager that made it wider does not decide.
    let _ = std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600));
    Ok(ClaimedSocket {
        path: socket.to_path_buf(),
        listener,
        lock,
        activated: true,
    })
}

/// Takes the start-up lock beside `socket` (one daemon per socket).
fn lock_socket(socket: &Path) -> Result<File, ClaimError> {
    prepare_socket_dir(socket).map_err(ClaimError::Other)?;
    let lock_file = lock_path(socket);
    let mut lock = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(&lock_file)
        .map_err(|e| ClaimError::Other(format!("cannot open lock file {}: {e}", lock_file.display())))?;
    if lock.try_lock().is_err() {
        let mut pid = String::new();
        let _ = lock.read_to_string(&mut pid);
        let pid = pid.trim();
        return Err(ClaimError::AlreadyRunning(if pid.is_empty() {
            "unknown".into()
        } else {
            pid.into()
        }));
    }
    Ok(lock)
}

impl ClaimedSocket {
    /// Records our pid in the lock file, for "already running (pid N)".
    pub fn record_pid(&mut self, pid: u32) {
        let _ = self.lock.set_len(0);
        let _ = self.lock.rewind();
        let _ = write!(self.lock, "{pid}");
        let _ = self.lock.flush();
    }
}

impl ClaimedSocket {
    /// The socket and lock a replaced daemon image left open for us.
    /// `activated`: the socket came from the service manager to the first image.
    pub fn inherited(path: PathBuf, listener_fd: RawFd, lock_fd: RawFd, activated: bool) -> Result<Self, String> {
        let listener = handover::inherited(listener_fd).ok_or("the listening socket was not handed over")?;
        let lock = handover::inherited(lock_fd).ok_or("the lock file was not handed over")?;
        Ok(Self {
            path,
            listener: StdListener::from(listener),
            lock: File::from(lock),
            activated,
        })
    }
}

/// Runs the daemon until SIGTERM/SIGINT or a Shutdown request, then terminates every
/// pane, removes the socket, and returns. With `handover`, it takes over the panes
/// of the daemon image it replaced; otherwise it restores the records.
pub async fn run(claimed: ClaimedSocket, config: DaemonConfig, handover: Option<Handover>) -> Result<(), String> {
    let config = Arc::new(config);
    let shutdown = CancellationToken::new();
    let upgrade = Arc::new(tokio::sync::Notify::new());
    watch_signals(shutdown.clone(), upgrade.clone())?;

    claimed.listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    let listener = UnixListener::from_std(claimed.listener).map_err(|e| e.to_string())?;
    let (store, loaded) = match &config.state {
        Some(path) => Store::open(path),
        None => (Store::disabled(), Default::default()),
    };
    let memory = crate::budget::Budget::new("the daemon's client memory", config.client_memory);
    let hook_sockets = HookSockets::default();
    let tmux_ids = crate::bridge::Ids::for_runtime(config.socket.parent());
    let args = SupervisorArgs {
        config: config.clone(),
        store: store.clone(),
        memory: memory.clone(),
        hook_sockets: hook_sockets.clone(),
        tmux_ids: tmux_ids.clone(),
    };
    let (supervisor, supervisor_task) = Actor::spawn(None, SupervisorActor, args)
        .await
        .map_err(|e| format!("cannot start supervisor: {e}"))?;
    let start = match handover {
        Some(handover) => Start::Handover {
            from_version: handover.from_version,
            sessions: handover.sessions,
            failed: None,
        },
        None => Start::Records {
            loaded,
            keep_orphans: config.keep_orphans,
        },
    };
    restore(&supervisor, start).await;
    // Paired devices and push subscriptions are kept beside the records.
    let kept = config.state.as_deref();
    let devices = Arc::new(crate::devices::Devices::open(
        kept.map(|s| s.with_extension("devices.json")),
    ));
    let push = crate::push::Push::open(kept);
    crate::notify::start(
        config.notify_config.clone(),
        config.socket.clone(),
        supervisor.clone(),
        push.clone(),
    )
    .await;
    let handler = Arc::new(Handler {
        supervisor: supervisor.clone(),
        tmux_ids,
        devices,
        push,
        memory,
        clients: Default::default(),
        shutdown: shutdown.clone(),
    });
    follow_background_agents(&supervisor).await;
    tracing::info!(socket = %claimed.path.display(), pid = std::process::id(), activated = claimed.activated, "fugued ready");
    // Readiness for a service manager (Type=notify); nothing without NOTIFY_SOCKET.
    if let Err(err) = sd_notify::notify(&[sd_notify::NotifyState::Ready]) {
        tracing::warn!(%err, "cannot tell the service manager fugued is ready");
    }

    let uid = rustix::process::getuid().as_raw();
    let handshakes = Arc::new(connection::Handshakes::default());
    let (generation, generations) = tokio::sync::watch::channel(0u64);
    let lifecycle = connection::Lifecycle {
        shutdown: shutdown.clone(),
        upgrade: upgrade.clone(),
        generation: generations,
    };
    // Containers a crash left (their wrappers went with it), off the start's path.
    tokio::spawn({
        let (handler, socket) = (handler.clone(), config.socket.clone());
        async move {
            let running = handler.running_panes().await;
            let removed = crate::sandbox::reconcile(&socket, &running).await;
            if removed > 0 {
                tracing::info!(removed, "removed sandbox containers whose panes no longer run");
            }
        }
    });
    // Sandboxed agents' hook sockets: the same connections, each scoped to
    // its pane's hook reports.
    hook_sockets.serve_with({
        let (handler, lifecycle, handshakes) = (handler.clone(), lifecycle.clone(), handshakes.clone());
        Arc::new(move |stream, pane| {
            let scope = connection::Scope::HooksOf(pane);
            tokio::spawn(connection::serve(
                stream,
                handler.clone(),
                lifecycle.clone(),
                handshakes.clone(),
                scope,
            ));
        })
    });
    let upgrader = Upgrader {
        supervisor: supervisor.clone(),
        store: store.clone(),
        config: config.clone(),
        listener_fd: listener.as_raw_fd(),
        lock_fd: claimed.lock.as_raw_fd(),
    };
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = shutdown.cancelled() => break,
            _ = upgrade.notified() => {
                // Every client reconnects to whichever daemon answers next.
                generation.send_modify(|g| *g += 1);
                upgrader.upgrade().await;
                continue;
            }
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(err) => {
                out_of_descriptors(&err, &handshakes, &shutdown).await;
                continue;
            }
        };
        match stream.peer_cred() {
            Ok(cred) if cred.uid() == uid => {}
            Ok(cred) => {
                tracing::warn!(peer_uid = cred.uid(), peer_pid = ?cred.pid(), "refused connection from another user");
                continue;
            }
            Err(err) => {
                tracing::warn!(%err, "refused connection: no peer credentials");
                continue;
            }
        }
        tokio::spawn(connection::serve(
            stream,
            handler.clone(),
            lifecycle.clone(),
            handshakes.clone(),
            connection::Scope::Everything,
        ));
    }

    drop(listener);
    tracing::info!("shutting down");
    let _ = sd_notify::notify(&[sd_notify::NotifyState::Stopping]);
    let reaped = match supervisor
        .call(SupervisorMsg::Shutdown, Some(Duration::from_secs(10)))
        .await
    {
        Ok(ractor::rpc::CallResult::Success(reaped)) => reaped,
        _ => Vec::new(),
    };
    // Panes got SIGHUP and SIGTERM; SIGKILL follows after the grace. Wait for the reaps.
    let deadline = config.kill_grace + Duration::from_secs(2);
    let all_reaped = futures::future::join_all(reaped.into_iter().map(|mut r| async move {
        let _ = r.wait_for(|reaped| reaped.is_some()).await;
    }));
    if tokio::time::timeout(deadline, all_reaped).await.is_err() {
        tracing::warn!("some pane processes were not reaped before exit");
    }
    supervisor.stop(None);
    let _ = supervisor_task.await;
    store.flush().await;
    if !claimed.activated {
        let _ = std::fs::remove_file(&claimed.path);
    }
    // The lock file stays: removing it would let two daemons lock two different files.
    drop(claimed.lock);
    tracing::info!("bye");
    Ok(())
}

async fn restore(supervisor: &ActorRef<SupervisorMsg>, start: Start) {
    if let Err(err) = supervisor
        .call(|reply| SupervisorMsg::Restore { start, reply }, None)
        .await
    {
        tracing::error!(%err, "restoring the sessions failed");
    }
}

/// The steps of a live upgrade (see [`crate::handover`]).
struct Upgrader {
    supervisor: ActorRef<SupervisorMsg>,
    store: Store,
    config: Arc<DaemonConfig>,
    listener_fd: RawFd,
    lock_fd: RawFd,
}

impl Upgrader {
    /// Freezes every pane, has the new binary check the handover, and re-executes
    /// in place. Returns only if the upgrade failed, with the state taken back.
    async fn upgrade(&self) {
        let started = std::time::Instant::now();
        tracing::info!(exe = %self.config.exe.display(), "live upgrade: handing over");
        let frozen = self.supervisor.call(SupervisorMsg::Freeze, None).await;
        let Ok(ractor::rpc::CallResult::Success((sessions, fds))) = frozen else {
            tracing::error!("live upgrade: the sessions did not hand over");
            return;
        };
        // Records written so far reach the disk before this image goes.
        self.store.flush().await;
        let handover = Handover {
            version: HANDOVER_VERSION,
            from_version: env!("CARGO_PKG_VERSION").to_string(),
            started_at_ms: fugue_protocol::now_ms(),
            listener_fd: self.listener_fd,
            lock_fd: self.lock_fd,
            sessions,
        };
        let why = self.hand_over(&handover, started).await;
        tracing::error!(reason = %why, "live upgrade failed; this daemon keeps running");
        // The descriptors are found again by number, as the new image would.
        for fd in fds {
            let _ = fd.into_raw_fd();
        }
        let start = Start::Handover {
            from_version: handover.from_version,
            sessions: handover.sessions,
            failed: Some(why),
        };
        restore(&self.supervisor, start).await;
    }

    /// Encodes, checks and executes; returns why it did not happen.
    async fn hand_over(&self, handover: &Handover, started: std::time::Instant) -> String {
        let memfd = match handover.encode().and_then(|bytes| {
            tracing::info!(bytes = bytes.len(), "live upgrade: handover encoded");
            handover::to_memfd(&bytes).map_err(|e| format!("cannot write the handover: {e}"))
        }) {
            Ok(memfd) => memfd,
            Err(why) => return why,
        };
        let memfd = Arc::new(memfd);
        let exe = self.config.exe.clone();
        let checked = tokio::task::spawn_blocking({
            let memfd = memfd.clone();
            move || handover::check(&exe, &memfd)
        })
        .await
        .unwrap_or_else(|e| Err(e.to_string()));
        if let Err(why) = checked {
            return why;
        }
        tracing::info!(after = ?started.elapsed(), "live upgrade: the new binary read the handover; executing it");
        handover::exec(&self.config.exe, &self.config.args, &handover.inherited_fds(), &memfd)
    }
}

/// An accept failed. When descriptors ran out (EMFILE/ENFILE), free some by dropping
/// the older half of the connections still in their handshake, then wait for a
/// connection to close (or a second) instead of retrying in a busy loop.
async fn out_of_descriptors(err: &std::io::Error, handshakes: &connection::Handshakes, shutdown: &CancellationToken) {
    let no_fds = matches!(err.raw_os_error(), Some(libc::EMFILE) | Some(libc::ENFILE));
    if !no_fds {
        tracing::warn!(%err, "accept failed");
        tokio::time::sleep(Duration::from_millis(10)).await;
        return;
    }
    let dropped = handshakes.evict_older_half();
    tracing::warn!(%err, dropped, "out of file descriptors; dropped connections still in their handshake");
    let closed = handshakes.closed.notified();
    tokio::select! {
        _ = closed => {}
        _ = tokio::time::sleep(Duration::from_secs(1)) => {}
        _ = shutdown.cancelled() => {}
    }
}

/// Raises the soft limit on open files to the hard limit, as servers that hold a
/// descriptor per client and per pane must. Returns the limit now in force.
pub fn raise_fd_limit() -> std::io::Result<u64> {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let limit = getrlimit(Resource::Nofile);
    let (Some(current), max) = (limit.current, limit.maximum) else {
        return Ok(u64::MAX);
    };
    let raised = max.unwrap_or(u64::MAX);
    if current >= raised {
        return Ok(current);
    }
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(raised),
            maximum: max,
        },
    )?;
    Ok(raised)
}

fn watch_signals(shutdown: CancellationToken, upgrade: Arc<tokio::sync::Notify>) -> Result<(), String> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGUSR2};
    let mut signals = signal_hook_tokio::Signals::new([SIGTERM, SIGINT, SIGHUP, SIGUSR2])
        .map_err(|e| format!("cannot watch signals: {e}"))?;
    tokio::spawn(async move {
        while let Some(signal) = signals.next().await {
            if signal == SIGHUP {
                tracing::info!("SIGHUP ignored");
                continue;
            }
            if signal == SIGUSR2 {
                tracing::info!("SIGUSR2: live upgrade");
                upgrade.notify_one();
                continue;
            }
            tracing::info!(signal, "signal received");
            shutdown.cancel();
        }
    });
    Ok(())
}

/// Sends the changes of agent sessions outside any pane as events, while
/// anyone is subscribed ([`crate::agent::background`]).
async fn follow_background_agents(supervisor: &ractor::ActorRef<SupervisorMsg>) {
    let Ok(ractor::rpc::CallResult::Success(events)) = supervisor
        .call(SupervisorMsg::Events, Some(std::time::Duration::from_secs(10)))
        .await
    else {
        return;
    };
    let supervisor = supervisor.clone();
    let served: crate::agent::background::Served = std::sync::Arc::new(move || {
        let supervisor = supervisor.clone();
        Box::pin(async move { crate::requests::served_dirs(&supervisor).await })
    });
    crate::agent::background::spawn_watch(events, served);
}
