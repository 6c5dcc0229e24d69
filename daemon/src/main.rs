//! `fugued`: the fugue daemon. It owns the terminals; clients talk to it over a Unix
//! socket. See docs/daemon.md for the actor tree; the code is in the library.

use clap::Parser;
use fugue_daemon::config::DaemonConfig;
use fugue_daemon::handover;
use fugue_daemon::serve::{self, ClaimedSocket};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// The fugue daemon: owns terminal sessions and panes, serves them on a Unix socket.
#[derive(Parser, Debug)]
#[command(name = "fugued", version)]
struct Args {
    /// Socket path (default: $FUGUE_SOCKET, $XDG_RUNTIME_DIR/fugue/fugue.sock, or /tmp/fugue-$UID/fugue.sock).
    #[arg(long)]
    socket: Option<PathBuf>,
    /// Stay in the foreground and log to stderr (for systemd, or debugging).
    #[arg(long)]
    foreground: bool,
    /// How long exited panes stay readable before removal (e.g. 300, 90s, 5m, 500ms).
    #[arg(long, default_value = "5m", value_parser = fugue_daemon::policy::parse_duration)]
    exited_ttl: Duration,
    /// Running panes allowed per session.
    #[arg(long, default_value_t = 10)]
    max_panes: usize,
    /// Time between a kill signal and SIGKILL.
    #[arg(long, default_value = "3s", value_parser = fugue_daemon::policy::parse_duration)]
    kill_grace: Duration,
    /// Where sessions and panes are recorded ("none": nowhere). Default:
    /// $XDG_STATE_HOME/fugue/state.db for the default socket, state-<socket hash>.db for others.
    #[arg(long, value_name = "PATH")]
    state: Option<PathBuf>,
    /// Leave processes that a crashed daemon left behind running (default: end them).
    #[arg(long)]
    keep_orphans: bool,
    /// Memory all clients together may make the daemon hold (queued replies and
    /// events, requests in flight, wait patterns), in MiB. Past it the client
    /// holding the most is cut, then requests are refused.
    #[arg(long, value_name = "MIB", default_value_t = (fugue_daemon::budget::DEFAULT_CLIENT_MEMORY >> 20) as u64,
          value_parser = clap::value_parser!(u64).range(8..=1 << 20))]
    client_memory: u64,
    /// The config file naming notification sinks (`[[notify]]` tables: a
    /// webhook or a command for "a pane needs you" and program notifications;
    /// "none": none). Default: $XDG_CONFIG_HOME/fugue/config.toml.
    #[arg(long, value_name = "PATH")]
    config: Option<PathBuf>,
    /// Which panes get the tmux bridge (`TMUX`, `TMUX_PANE` and a `tmux` that
    /// reaches fugue) when their environment says nothing
    /// (`FUGUE_TMUX_BRIDGE=1`/`0`): agent CLIs, all, or off. Sandboxed panes
    /// never get it. See docs/tmux.md.
    #[arg(long, value_enum, default_value = "agents")]
    tmux_bridge: fugue_daemon::bridge::BridgeDefault,
    /// Live upgrade (internal): take over the state handed over on this descriptor.
    #[arg(long, hide = true, value_name = "FD")]
    handover_fd: Option<i32>,
    /// Live upgrade (internal): read a handover on stdin and say whether this
    /// binary can take it over.
    #[arg(long, hide = true)]
    check_handover: bool,
    /// Live upgrade (internal): the listening socket handed over came from the
    /// service manager (socket activation), which keeps its file.
    #[arg(long, hide = true)]
    activated_socket: bool,
}

/// This process's arguments, as a live upgrade passes them on (without the
/// descriptor of the handover it may have come from).
fn upgrade_args() -> Vec<std::ffi::OsString> {
    let mut args = Vec::new();
    let mut given = std::env::args_os().skip(1);
    while let Some(arg) = given.next() {
        if arg == "--handover-fd" {
            given.next();
            continue;
        }
        if arg.to_string_lossy().starts_with("--handover-fd=") {
            continue;
        }
        args.push(arg);
    }
    args
}

fn main() -> ExitCode {
    // The socket accepts connections before the signal handlers run; a hang-up in
    // that window must not kill us (children get default dispositions back).
    ignore_hangup();
    let args = Args::parse();
    if args.check_handover {
        return match handover::check_stdin() {
            Ok(summary) => {
                println!("{summary}");
                ExitCode::SUCCESS
            }
            Err(why) => {
                eprintln!("fugued: {why}");
                ExitCode::FAILURE
            }
        };
    }
    let located = fugue_protocol::socket::locate_socket(args.socket.as_deref());
    let socket = located.path.clone();
    // A live upgrade: the previous image of this process left the socket, its
    // lock and the panes open for us, and is already detached.
    let handed = match args.handover_fd.map(handover::read_fd).transpose() {
        Ok(handed) => handed,
        Err(why) => {
            eprintln!("fugued: {why}");
            return ExitCode::FAILURE;
        }
    };
    // Socket activation (systemd, systemd-socket-activate): read before any thread
    // exists, and never by an upgraded image (the socket comes in the hand-over).
    let activated = match handed.is_none().then(activated_socket).transpose() {
        Ok(activated) => activated.flatten(),
        Err(why) => {
            eprintln!("fugued: {why}");
            return ExitCode::FAILURE;
        }
    };
    let claimed = match (&handed, activated) {
        (Some(handover), _) => ClaimedSocket::inherited(
            socket.clone(),
            handover.listener_fd,
            handover.lock_fd,
            args.activated_socket,
        ),
        (None, Some(listener)) => serve::claim_activated(&socket, listener).map_err(|e| e.to_string()),
        (None, None) => serve::claim(&socket).map_err(|e| e.to_string()),
    };
    let mut claimed = match claimed {
        Ok(claimed) => claimed,
        Err(err) => {
            eprintln!("fugued: {err}");
            return ExitCode::FAILURE;
        }
    };
    // Fork before any thread exists; the socket is already bound, so a client that
    // saw `fugued` return can connect at once.
    if !args.foreground && handed.is_none() {
        if let Err(err) = daemonize() {
            eprintln!("fugued: cannot detach: {err}");
            return ExitCode::FAILURE;
        }
    }
    claimed.record_pid(std::process::id());
    if let Err(err) = init_logging(args.foreground) {
        eprintln!("fugued: {err}");
        return ExitCode::FAILURE;
    }
    match serve::raise_fd_limit() {
        Ok(limit) => tracing::info!(limit, "open file limit"),
        Err(err) => tracing::warn!(%err, "cannot raise the open file limit"),
    }
    let mut config = DaemonConfig::new(socket);
    config.socket_why = located.why;
    config.exited_ttl = args.exited_ttl;
    config.max_running_panes = args.max_panes;
    config.kill_grace = args.kill_grace;
    config.keep_orphans = args.keep_orphans;
    config.tmux_bridge = args.tmux_bridge;
    config.client_memory = (args.client_memory as usize) << 20;
    config.args = upgrade_args();
    if claimed.activated && !args.activated_socket {
        config.args.push("--activated-socket".into());
    }
    config.notify_config = match args.config {
        Some(path) if path.as_os_str() == "none" => None,
        Some(path) => Some(path),
        None => fugue_daemon::notify::default_config_path(),
    };
    if let Some(path) = &config.notify_config {
        config.hibernate_after = fugue_daemon::policy::HibernateAfter::read(path);
    }
    config.state = match args.state {
        Some(path) if path.as_os_str() == "none" => None,
        Some(path) => Some(path),
        None => default_state_path(&config.socket),
    };

    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(err) => {
            tracing::error!(%err, "cannot start the runtime");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve::run(claimed, config, handed)) {
        Ok(()) => {
            // Escalation timers and blocked PTY threads must not hold up the exit.
            runtime.shutdown_timeout(Duration::from_millis(100));
            ExitCode::SUCCESS
        }
        Err(err) => {
            tracing::error!(%err, "fugued failed");
            ExitCode::FAILURE
        }
    }
}

/// The listening socket a service manager passed (`LISTEN_PID` names us,
/// `LISTEN_FDS` is 1: descriptor 3), if any. The variables are removed so that
/// neither the panes nor an upgraded image of this process take them for theirs.
fn activated_socket() -> Result<Option<std::os::fd::OwnedFd>, String> {
    let fds = sd_notify::listen_fds().map_err(|e| format!("socket activation: {e}"))?;
    for var in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] {
        // No other thread exists yet (the caller runs first thing in main).
        std::env::remove_var(var);
    }
    let fds: Vec<_> = fds.collect();
    match fds[..] {
        [] => Ok(None),
        [fd] => Ok(Some(owned_listen_fd(fd))),
        _ => Err(format!(
            "socket activation passed {} sockets; fugued takes one (ListenStream= once)",
            fds.len()
        )),
    }
}

#[allow(unsafe_code)]
fn owned_listen_fd(fd: std::os::fd::RawFd) -> std::os::fd::OwnedFd {
    use std::os::fd::FromRawFd;
    // SAFETY: by the sd_listen_fds protocol the service manager left this
    // descriptor open for this process (LISTEN_PID is ours), and nothing else in
    // the process has taken it: this runs once, before anything opens files.
    unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) }
}

#[allow(unsafe_code)]
fn ignore_hangup() {
    // SAFETY: SIG_IGN is a valid disposition, and no other thread exists yet.
    unsafe { libc::signal(libc::SIGHUP, libc::SIG_IGN) };
}

/// Detaches from the terminal: fork (the parent exits), new session, stdio to /dev/null.
#[allow(unsafe_code)]
fn daemonize() -> std::io::Result<()> {
    // SAFETY: called before the runtime or any other thread starts, so the child
    // is a full copy of a single-threaded process; the parent only calls _exit.
    match unsafe { libc::fork() } {
        -1 => return Err(std::io::Error::last_os_error()),
        0 => {}
        // SAFETY: _exit ends the parent without running destructors the child owns too.
        _ => unsafe { libc::_exit(0) },
    }
    rustix::process::setsid()?;
    std::env::set_current_dir("/")?;
    let null = std::fs::OpenOptions::new().read(true).write(true).open("/dev/null")?;
    rustix::stdio::dup2_stdin(&null)?;
    rustix::stdio::dup2_stdout(&null)?;
    rustix::stdio::dup2_stderr(&null)?;
    Ok(())
}

/// `$XDG_STATE_HOME/fugue` (or `~/.local/state/fugue`): the log and the records.
fn state_dir() -> Option<PathBuf> {
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))?;
    Some(state.join("fugue"))
}

fn log_path() -> Option<PathBuf> {
    Some(state_dir()?.join("fugued.log"))
}

/// One database per socket: `state.db` for the default socket, and for any other
/// a name derived from its path, so two daemons never restore each other's panes.
fn default_state_path(socket: &std::path::Path) -> Option<PathBuf> {
    let dir = state_dir()?;
    if socket == fugue_protocol::socket::socket_path(None) {
        return Some(dir.join("state.db"));
    }
    let hash = fugue_protocol::socket::path_hash(socket);
    Some(dir.join(format!("state-{:08x}.db", hash as u32)))
}

fn init_logging(foreground: bool) -> Result<(), String> {
    let filter = tracing_subscriber::EnvFilter::try_from_env("FUGUE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    if foreground {
        use std::io::IsTerminal;
        builder
            .with_ansi(std::io::stderr().is_terminal())
            .with_writer(std::io::stderr)
            .init();
        return Ok(());
    }
    let Some(path) = log_path() else {
        builder.with_writer(std::io::sink).init();
        return Ok(());
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create log directory {}: {e}", dir.display()))?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| format!("cannot open log file {}: {e}", path.display()))?;
    builder.with_ansi(false).with_writer(std::sync::Mutex::new(file)).init();
    Ok(())
}
