//! Daemon settings, fixed at start-up.

use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct DaemonConfig {
    pub socket: PathBuf,
    /// Why the socket is there ("in $XDG_RUNTIME_DIR", ...), for `daemon status`.
    pub socket_why: String,
    /// Running panes allowed per session.
    pub max_running_panes: usize,
    /// How long an exited pane stays readable before it is removed.
    pub exited_ttl: Duration,
    /// Time between the kill signal and SIGKILL.
    pub kill_grace: Duration,
    /// Caps of each pane's text view.
    pub text_lines: usize,
    pub text_bytes: usize,
    /// Caps of each pane's screen scrollback.
    pub scrollback_lines: usize,
    pub scrollback_bytes: usize,
    /// The records database; `None` keeps nothing across restarts.
    pub state: Option<PathBuf>,
    /// Leave processes a crashed daemon left behind running (they are ended otherwise).
    pub keep_orphans: bool,
    /// The binary a live upgrade executes (this one's path, read at start-up, so a
    /// new binary installed there is the one that runs) and the arguments it gets.
    pub exe: PathBuf,
    pub args: Vec<std::ffi::OsString>,
    /// What clients may make the daemon hold, in bytes (see [`crate::budget`]).
    pub client_memory: usize,
    /// The config file naming notification sinks (see [`crate::notify`]).
    pub notify_config: Option<PathBuf>,
    /// How long an idle agent of each kind waits before it is hibernated.
    pub hibernate_after: crate::policy::HibernateAfter,
    /// Which panes get the tmux bridge when their environment does not say.
    pub tmux_bridge: crate::bridge::BridgeDefault,
}

impl DaemonConfig {
    pub fn new(socket: PathBuf) -> Self {
        Self {
            socket,
            socket_why: String::new(),
            max_running_panes: 10,
            exited_ttl: Duration::from_secs(300),
            kill_grace: Duration::from_secs(3),
            text_lines: crate::terminal::output::DEFAULT_TEXT_LINES,
            text_bytes: crate::terminal::output::DEFAULT_TEXT_BYTES,
            scrollback_lines: crate::terminal::screen::DEFAULT_SCROLLBACK_LINES,
            scrollback_bytes: crate::terminal::screen::DEFAULT_SCROLLBACK_BYTES,
            state: None,
            keep_orphans: false,
            exe: std::env::current_exe().unwrap_or_else(|_| PathBuf::from("fugued")),
            args: Vec::new(),
            client_memory: crate::budget::DEFAULT_CLIENT_MEMORY,
            notify_config: None,
            hibernate_after: Default::default(),
            tmux_bridge: Default::default(),
        }
    }
}
