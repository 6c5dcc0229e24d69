//! Test harness: a real `fugued` on a socket in a fresh temp directory, and helpers
//! to drive it through the client library and the `fugue` binary.
//!
//! The binaries must be built first (`cargo build --workspace`); the README's test
//! command does that.

pub mod agents;
pub mod codex_schema;
pub mod containers;
pub mod events;
pub mod files;
pub mod kube;
pub mod mcp;
pub mod procfs;
pub mod sshd;
pub mod tmux;

pub use procfs::{children, comm, process_gone, rss_anon_kib, rss_kib, threads};
pub use tmux::Tmux;

use fugue_client::{Client, ConnectOptions};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Whether what a test needs is here: each of `needs` is a program on PATH,
/// or a path (absolute, or from the workspace's root) when it has a `/`. When
/// something is missing the test is skipped with one line saying what, unless
/// `FUGUE_TESTS_REQUIRE_ALL` is set (CI sets it), which makes it fail instead:
/// a newcomer runs what their machine can, CI runs everything.
pub fn available(needs: &[&str]) -> bool {
    let missing: Vec<&str> = needs.iter().copied().filter(|need| !found(need)).collect();
    if missing.is_empty() {
        return true;
    }
    let test = std::thread::current().name().unwrap_or("a test").to_string();
    let reason = format!("{test} needs {} (scripts/test installs it)", missing.join(", "));
    if std::env::var_os("FUGUE_TESTS_REQUIRE_ALL").is_some() {
        panic!("{reason}; FUGUE_TESTS_REQUIRE_ALL is set, so a missing program fails the test");
    }
    // Straight to the process's stderr: libtest captures eprintln! of a test
    // that passes, and a skip must be seen.
    let _ = std::io::Write::write_all(&mut std::io::stderr(), format!("skipped: {reason}\n").as_bytes());
    false
}

fn found(need: &str) -> bool {
    if need.contains('/') {
        let path = Path::new(need);
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap_or(Path::new("/"));
        return if path.is_absolute() {
            path.exists()
        } else {
            root.join(path).exists()
        };
    }
    std::env::var_os("PATH").is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(need).is_file()))
}

/// Returns from the test (skipped, with a reason) when something it needs is
/// missing; see [`available`].
#[macro_export]
macro_rules! require {
    ($($need:expr),+ $(,)?) => {
        if !$crate::available(&[$($need),+]) {
            return;
        }
    };
}

/// Default deadline for waiting on observable state.
pub const DEADLINE: Duration = Duration::from_secs(15);

/// Path of a workspace binary (`fugued`, `fugue`) of the build running this:
/// beside it (the benchmark, in `target/release`) or one up (a test, in
/// `target/PROFILE/deps`).
pub fn bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let beside = exe.parent().map(|dir| dir.join(name)).filter(|path| path.is_file());
    let dir = exe.parent().and_then(Path::parent).expect("target dir");
    let path = beside.unwrap_or_else(|| dir.join(name));
    assert!(
        path.is_file(),
        "{} is missing: run `cargo build --workspace` before the tests",
        path.display()
    );
    path
}

/// Polls `check` until it returns `Some`, or panics with `what` after `deadline`.
pub fn wait_until<T>(what: &str, deadline: Duration, mut check: impl FnMut() -> Option<T>) -> T {
    let end = Instant::now() + deadline;
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(Instant::now() < end, "timed out after {deadline:?} waiting for {what}");
        // Paced: the step of this poll helper.
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Async twin of [`wait_until`].
pub async fn wait_for<T, F, Fut>(what: &str, deadline: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let end = Instant::now() + deadline;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(Instant::now() < end, "timed out after {deadline:?} waiting for {what}");
        // Paced: the step of this poll helper.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until a pane's text view contains `needle`; returns the text.
pub async fn wait_for_text(client: &Client, pane: &str, needle: &str) -> String {
    wait_for_text_within(client, pane, needle, DEADLINE).await
}

/// [`wait_for_text`] with its own deadline (an agent CLI starting under load
/// takes longer than a shell); a timeout shows the last text it read. The
/// daemon waits (its `WaitFor`, on the pane's output events); nothing polls.
pub async fn wait_for_text_within(client: &Client, pane: &str, needle: &str, deadline: Duration) -> String {
    wait_in_daemon(client, pane, needle, fugue_client::protocol::MatchOn::Output, deadline).await;
    let mode = fugue_client::protocol::ReadMode::Text {
        lines: 1000,
        since: None,
    };
    let text = client
        .read_output(pane, mode)
        .await
        .expect("read the pane")
        .lines
        .join("\n");
    assert!(
        text.contains(needle),
        "timed out after {deadline:?} waiting for '{needle}' in pane output; it reads:\n{text}"
    );
    text
}

/// Waits until a pane's visible screen shows `needle` (the daemon's `WaitFor`
/// on the screen); returns the screen.
pub async fn wait_for_screen(client: &Client, pane: &str, needle: &str) -> fugue_client::protocol::CaptureResult {
    wait_for_screen_within(client, pane, needle, DEADLINE).await
}

/// [`wait_for_screen`] with its own deadline.
pub async fn wait_for_screen_within(
    client: &Client,
    pane: &str,
    needle: &str,
    deadline: Duration,
) -> fugue_client::protocol::CaptureResult {
    use fugue_client::protocol::CaptureWhat;
    wait_in_daemon(client, pane, needle, fugue_client::protocol::MatchOn::Screen, deadline).await;
    let screen = client
        .capture(pane, CaptureWhat::Screen, (None, None), false, false)
        .await
        .expect("capture the pane");
    assert!(
        screen.lines.iter().any(|l| l.contains(needle)),
        "timed out after {deadline:?} waiting for '{needle}' on screen; it shows:\n{}",
        screen.lines.join("\n")
    );
    screen
}

/// The daemon's `WaitFor` of `needle` (literally, within one line) on the
/// pane's output or screen; returns when it matched, the pane exited or the
/// deadline passed (the caller checks which by reading).
async fn wait_in_daemon(
    client: &Client,
    pane: &str,
    needle: &str,
    on: fugue_client::protocol::MatchOn,
    deadline: Duration,
) {
    assert!(!needle.contains('\n'), "a wait matches within one line: {needle:?}");
    let until = fugue_client::protocol::WaitUntil {
        pattern: Some(regex_literal(needle)),
        on,
        ..Default::default()
    };
    let end = Instant::now() + deadline;
    loop {
        let left = end.saturating_duration_since(Instant::now());
        let outcome = client
            .wait_for(pane, until.clone(), left)
            .await
            .expect("wait in the daemon");
        // A wait ends when the process does; a pane its restart policy starts
        // again may still show the text, so wait on (the daemon cannot wait
        // across a restart's backoff: that alone is polled).
        let pane_info = &outcome.pane;
        let restarting = pane_info
            .exit
            .is_some_and(|exit| pane_info.restart.restarts_after(&exit));
        if outcome.condition != fugue_client::protocol::WaitCondition::Exit || !restarting || left.is_zero() {
            return;
        }
        // Polled: a restart's backoff has no event to wait on across it (the next wait starts after it).
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `text` as a regular expression that matches it literally.
pub fn regex_literal(text: &str) -> String {
    let mut pattern = String::with_capacity(text.len() * 2);
    for c in text.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern
}

/// Runs git in `dir` with the tests' own identity (never the machine's);
/// its stdout, or a panic with git's complaint.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "fugue test")
        .env("GIT_AUTHOR_EMAIL", "test@fugue.invalid")
        .env("GIT_COMMITTER_NAME", "fugue test")
        .env("GIT_COMMITTER_EMAIL", "test@fugue.invalid")
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A private directory (0700) for sockets, logs and files of one test.
pub fn private_dir() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("fugue-test-")
        .tempdir()
        .expect("temp dir");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).expect("chmod");
    dir
}

/// A `fugued --foreground` owned by one test; killed when dropped.
pub struct Daemon {
    pub dir: tempfile::TempDir,
    pub socket: PathBuf,
    /// The fugued binary it runs: the build's, or a copy (see [`Daemon::start_copy`]).
    pub exe: PathBuf,
    child: Option<Child>,
    /// Where fugued says it is ready (`NOTIFY_SOCKET`), at each start and
    /// again after a live upgrade.
    ready: Option<std::os::unix::net::UnixDatagram>,
    /// Where its records are kept (`XDG_STATE_HOME`), when not under `dir`.
    state_home: Option<PathBuf>,
}

impl Daemon {
    pub fn start() -> Daemon {
        Self::start_with(&[])
    }

    /// Starts with extra `fugued` flags (e.g. `--exited-ttl 300ms`).
    pub fn start_with(args: &[&str]) -> Daemon {
        Self::start_limited(args, None)
    }

    /// Starts with extra variables in fugued's environment (test switches
    /// such as `FUGUE_TEST_PUSH_LOOPBACK`).
    pub fn start_with_env(env: &[(&str, &str)]) -> Daemon {
        let dir = private_dir();
        let socket = dir.path().join("fugue.sock");
        let exe = bin("fugued");
        let mut command = Self::command(&exe, &dir, &socket, &[]);
        command.envs(env.iter().copied());
        Self::launch(dir, exe, command)
    }

    /// Starts with soft and hard open-file limits of `nofile` (which it cannot raise).
    pub fn start_with_rlimit_nofile(nofile: u64) -> Daemon {
        Self::start_limited(&[], Some(nofile))
    }

    /// Starts fugued in a network namespace of its own with only loopback up
    /// (`unshare --net`, so as root): its panes, and what joins the namespace with
    /// `nsenter`, reach nothing beyond 127.0.0.1 of that namespace. The socket is a
    /// file, so clients outside still connect.
    pub fn start_offline() -> Daemon {
        Self::start_offline_with_env(&[])
    }

    /// [`Daemon::start_offline`] with extra variables in fugued's environment.
    pub fn start_offline_with_env(env: &[(&str, &str)]) -> Daemon {
        let dir = private_dir();
        let socket = dir.path().join("fugue.sock");
        let exe = bin("fugued");
        // `unshare` runs `sh`, which brings loopback up and becomes fugued (same pid).
        let prefix = [
            "unshare",
            "--net",
            "--",
            "sh",
            "-c",
            "ip link set lo up && exec \"$0\" \"$@\"",
        ];
        let mut command = Self::command_under(&prefix, &exe, &dir, &socket);
        command.envs(env.iter().copied());
        Self::launch(dir, exe, command)
    }

    /// fugued's command as [`Daemon::command`] makes it, run by `prefix` (a
    /// program and its arguments, before fugued's path), with the same
    /// environment and log.
    fn command_under(prefix: &[&str], exe: &Path, dir: &tempfile::TempDir, socket: &Path) -> Command {
        let inner = Self::command(exe, dir, socket, &[]);
        let mut command = Command::new(prefix[0]);
        command.args(&prefix[1..]).arg(exe).args(inner.get_args());
        for (key, value) in inner.get_envs() {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        let log = std::fs::File::options()
            .append(true)
            .open(dir.path().join("fugued.stderr"))
            .expect("log file");
        command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(log);
        command
    }

    /// Starts with its records (XDG_STATE_HOME) under `state`, e.g. a small
    /// filesystem a test fills up.
    pub fn start_with_state_home(state: &Path) -> Daemon {
        let dir = private_dir();
        let socket = dir.path().join("fugue.sock");
        let exe = bin("fugued");
        let mut command = Self::command(&exe, &dir, &socket, &[]);
        command.env("XDG_STATE_HOME", state);
        let mut daemon = Self::launch(dir, exe, command);
        daemon.state_home = Some(state.to_path_buf());
        daemon
    }

    /// Starts a copy of fugued kept in the test's directory (`bin/fugued`), so the
    /// test can replace that file and upgrade the daemon to it.
    pub fn start_copy(args: &[&str]) -> Daemon {
        let dir = private_dir();
        let exe = dir.path().join("bin").join("fugued");
        std::fs::create_dir_all(exe.parent().expect("bin dir")).expect("bin dir");
        std::fs::copy(bin("fugued"), &exe).expect("copy fugued");
        let command = Self::command(&exe, &dir, &dir.path().join("fugue.sock"), args);
        Self::launch(dir, exe, command)
    }

    /// Starts on `socket` (a person's default socket, say) rather than in the
    /// test's directory; its records and HOME stay in the test's directory.
    pub fn start_on(socket: &Path) -> Daemon {
        let dir = private_dir();
        let exe = bin("fugued");
        let command = Self::command(&exe, &dir, socket, &[]);
        Self::launch_on(socket.to_path_buf(), dir, exe, command)
    }

    #[allow(unsafe_code)]
    fn start_limited(args: &[&str], nofile: Option<u64>) -> Daemon {
        let dir = private_dir();
        let socket = dir.path().join("fugue.sock");
        let exe = bin("fugued");
        let mut command = Self::command(&exe, &dir, &socket, args);
        if let Some(limit) = nofile {
            use std::os::unix::process::CommandExt;
            // SAFETY: setrlimit is async-signal-safe, and `rlimit` lives in the closure.
            unsafe {
                command.pre_exec(move || {
                    let rlimit = libc::rlimit {
                        rlim_cur: limit,
                        rlim_max: limit,
                    };
                    match libc::setrlimit(libc::RLIMIT_NOFILE, &rlimit) {
                        0 => Ok(()),
                        _ => Err(std::io::Error::last_os_error()),
                    }
                });
            }
        }
        Self::launch(dir, exe, command)
    }

    /// Spawns `command` (fugued on `dir`'s socket) and waits until it accepts.
    fn launch(dir: tempfile::TempDir, exe: PathBuf, command: Command) -> Daemon {
        Self::launch_on(dir.path().join("fugue.sock"), dir, exe, command)
    }

    /// Spawns `command` (fugued on `socket`) and waits until it accepts.
    fn launch_on(socket: PathBuf, dir: tempfile::TempDir, exe: PathBuf, mut command: Command) -> Daemon {
        let (child, ready) = spawn_ready(dir.path(), &mut command);
        Daemon {
            socket,
            dir,
            exe,
            child: Some(child),
            ready: Some(ready),
            state_home: None,
        }
    }

    fn command(exe: &Path, dir: &tempfile::TempDir, socket: &Path, args: &[&str]) -> Command {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.path().join("fugued.stderr"))
            .expect("log file");
        let mut command = Command::new(exe);
        command
            .arg("--foreground")
            .arg("--socket")
            .arg(socket)
            .args(args)
            .env("XDG_STATE_HOME", dir.path().join("state"))
            // The machine's config (notification sinks) stays out of the tests.
            .env("XDG_CONFIG_HOME", dir.path().join("config"))
            .env("FUGUE_LOG", "debug")
            // Shell panes run `bash -i`: keep the machine's ~/.bashrc out of the tests.
            .env("HOME", dir.path())
            .env("SHELL", "/bin/bash")
            // Programs in panes act differently under CI (Gemini CLI with
            // CI=true starts headless unless given a prompt): tests run as on a
            // person's machine, in CI and out of it.
            .env_remove("CI")
            .env_remove("GITHUB_ACTIONS")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        command
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    /// The daemon's stderr log so far (for failure messages).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("fugued.stderr")).unwrap_or_default()
    }

    pub async fn client(&self) -> Client {
        Client::connect(
            ConnectOptions::default()
                .socket(&self.socket)
                .autostart(false)
                .client_name("fugue-tests"),
        )
        .await
        .expect("connect to the test daemon")
    }

    /// fake-agent under the name `claude` (a link in the test's directory), so
    /// the daemon watches it and pushes its states as it would the real one's.
    /// Its path; run it with no argument but a first prompt, or with
    /// `FUGUE_AGENT_HOOKS=0` (fake-agent would take the hooks' `--settings`
    /// for one).
    pub fn fake_claude(&self) -> String {
        let dir = self.dir.path().join("agent-bin");
        let link = dir.join("claude");
        if !link.exists() {
            std::fs::create_dir_all(&dir).expect("agent-bin");
            std::os::unix::fs::symlink(bin("fake-agent"), &link).expect("link fake-agent as claude");
        }
        link.display().to_string()
    }

    /// Starts the fake Claude Code in `session` (which must exist) through the
    /// CLI, without hooks, waiting at its prompt; its pane id.
    pub fn run_fake_claude(&self, session: &str) -> String {
        let claude = self.fake_claude();
        self.cli(&[
            "run",
            "-s",
            session,
            "-e",
            "FUGUE_AGENT_HOOKS=0",
            "--no-shell",
            "--",
            &claude,
        ])
        .ok()
    }

    /// Starts the fake Claude Code in `session` (which must exist) through the
    /// CLI, without hooks, keeping Claude Code's status file under the test's
    /// directory (`claude-config`), as Claude Code does; `env`: more `K=V`.
    /// Its pane id.
    pub fn run_fake_claude_keeping_status(&self, session: &str, env: &[&str]) -> String {
        let claude = self.fake_claude();
        let config = format!("CLAUDE_CONFIG_DIR={}", self.dir.path().join("claude-config").display());
        let mut args = vec!["run", "-s", session, "-e", "FUGUE_AGENT_HOOKS=0", "-e", &config];
        for var in env {
            args.extend(["-e", var]);
        }
        args.extend(["--no-shell", "--", &claude]);
        self.cli(&args).ok().trim().to_string()
    }

    /// Runs `fugue --socket <ours> ARGS...`.
    pub fn cli(&self, args: &[&str]) -> CliOutput {
        cli_with_env(&self.socket, &self.dir, args, &[])
    }

    /// Waits until `pane`'s output holds `needle` (within one line), as one
    /// `fugue wait --pattern`: the daemon's `WaitFor` on the pane's output
    /// events, not a poll. Returns the text read after; fails showing it.
    pub fn wait_text(&self, pane: &str, needle: &str) -> String {
        self.wait_in_daemon(pane, &["--pattern", &regex_literal(needle)]);
        let text = self.cli(&["read", pane, "--lines", "1000"]).ok();
        assert!(
            text.contains(needle),
            "waited {DEADLINE:?} for '{needle}' in pane {pane}'s output; it reads:\n{text}"
        );
        text
    }

    /// Waits until `pane`'s screen shows `needle` (one `fugue wait --screen`);
    /// returns the screen.
    pub fn wait_screen(&self, pane: &str, needle: &str) -> String {
        self.wait_in_daemon(pane, &["--screen", "--pattern", &regex_literal(needle)]);
        let screen = self.cli(&["capture", pane]).ok();
        assert!(
            screen.contains(needle),
            "waited {DEADLINE:?} for '{needle}' on pane {pane}'s screen; it shows:\n{screen}"
        );
        screen
    }

    /// Waits until `pane`'s agent is in `state` (one `fugue wait
    /// --agent-state`); returns `fugue agent --json` after.
    pub fn wait_agent_state(&self, pane: &str, state: &str) -> serde_json::Value {
        self.wait_in_daemon(pane, &["--agent-state", state]);
        let agent = self.cli(&["--json", "agent", pane]).json();
        assert_eq!(agent["state"], state, "waited {DEADLINE:?} for {pane}'s agent: {agent}");
        agent
    }

    /// One `fugue wait PANE CONDITION` within [`DEADLINE`]; whether it held
    /// is for the caller to check (the wait also ends when the process does).
    fn wait_in_daemon(&self, pane: &str, condition: &[&str]) {
        let timeout = DEADLINE.as_secs().to_string();
        let mut args = vec!["wait", pane, "--timeout", timeout.as_str()];
        args.extend_from_slice(condition);
        let _ = self.cli(&args);
    }

    /// [`Daemon::cli`] with extra environment variables.
    pub fn cli_with_env(&self, args: &[&str], env: &[(&str, &str)]) -> CliOutput {
        cli_with_env(&self.socket, &self.dir, args, env)
    }

    /// Starts a fresh daemon on the same socket (after the previous one exited).
    pub fn restart(&mut self, args: &[&str]) {
        assert!(self.child.is_none(), "stop the daemon first");
        let mut command = Self::command(&self.exe, &self.dir, &self.socket, args);
        if let Some(state) = &self.state_home {
            command.env("XDG_STATE_HOME", state);
        }
        let (child, ready) = spawn_ready(self.dir.path(), &mut command);
        (self.child, self.ready) = (Some(child), Some(ready));
    }

    /// Starts a fresh daemon on the same socket in the network namespace of
    /// process `pid` (an offline daemon's model stub, say), after the previous
    /// daemon exited.
    pub fn restart_in_netns_of(&mut self, pid: u32) {
        assert!(self.child.is_none(), "stop the daemon first");
        let net = format!("--net=/proc/{pid}/ns/net");
        let mut command = Self::command_under(&["nsenter", &net, "--"], &self.exe, &self.dir, &self.socket);
        if let Some(state) = &self.state_home {
            command.env("XDG_STATE_HOME", state);
        }
        let (child, ready) = spawn_ready(self.dir.path(), &mut command);
        (self.child, self.ready) = (Some(child), Some(ready));
    }

    /// Sends `signal` and waits for the daemon to exit; returns its exit status.
    pub fn signal_and_wait(&mut self, signal: i32) -> std::process::ExitStatus {
        let mut child = self.child.take().expect("running");
        send_signal(child.id(), signal);
        procfs::wait_child(&mut child, "fugued to exit")
    }

    /// The names of the daemon's sessions.
    pub async fn session_names(&self) -> Vec<String> {
        let sessions = self.client().await.list_sessions().await.expect("list sessions");
        sessions.into_iter().map(|s| s.name).collect()
    }

    /// The records database of this daemon (one per socket, named after it).
    pub fn state_db(&self) -> PathBuf {
        let home = self.state_home.clone().unwrap_or_else(|| self.dir.path().join("state"));
        let dir = home.join("fugue");
        let found = std::fs::read_dir(&dir)
            .expect("state dir")
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "db"));
        found.expect("a state database")
    }

    /// Whether the daemon process has exited (without waiting).
    pub fn has_exited(&mut self) -> bool {
        match self.child.as_mut() {
            Some(child) => child.try_wait().expect("try_wait").is_some(),
            None => true,
        }
    }

    /// Waits for the daemon to exit on its own (after a shutdown request).
    pub fn wait_exit(&mut self) -> std::process::ExitStatus {
        let mut child = self.child.take().expect("running");
        procfs::wait_child(&mut child, "fugued to exit")
    }
}

/// Spawns fugued and waits until it says it is ready, as it tells a service
/// manager (`sd_notify` `READY=1` on `NOTIFY_SOCKET`, a datagram socket in
/// `dir` of this start's own): no connection attempts on a clock. Returns the
/// child and the socket, on which it says so again after a live upgrade.
pub fn spawn_ready(dir: &Path, command: &mut Command) -> (Child, std::os::unix::net::UnixDatagram) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static STARTS: AtomicUsize = AtomicUsize::new(0);
    let path = dir.join(format!("ready-{}.sock", STARTS.fetch_add(1, Ordering::Relaxed)));
    let ready = std::os::unix::net::UnixDatagram::bind(&path).expect("bind the readiness socket");
    let mut child = command.env("NOTIFY_SOCKET", &path).spawn().expect("start fugued");
    await_ready(&ready, &mut child, dir);
    (child, ready)
}

/// Waits for fugued's next `READY=1` on `ready`; panics with its log if it
/// ends first or says nothing within [`DEADLINE`].
fn await_ready(ready: &std::os::unix::net::UnixDatagram, child: &mut Child, dir: &Path) {
    let end = Instant::now() + DEADLINE;
    let mut message = [0u8; 512];
    loop {
        let left = end.saturating_duration_since(Instant::now());
        // A second at most, to notice a daemon that failed to start.
        ready
            .set_read_timeout(Some(left.clamp(Duration::from_millis(1), Duration::from_secs(1))))
            .expect("a read timeout");
        if let Ok(n) = ready.recv(&mut message) {
            if String::from_utf8_lossy(&message[..n]).lines().any(|l| l == "READY=1") {
                return;
            }
        }
        let log = || std::fs::read_to_string(dir.join("fugued.stderr")).unwrap_or_default();
        if let Some(status) = child.try_wait().expect("try_wait") {
            panic!("fugued ended before it was ready ({status}); its log:\n{}", log());
        }
        assert!(
            !left.is_zero(),
            "fugued did not say it was ready within {DEADLINE:?}; its log:\n{}",
            log()
        );
    }
}

impl Daemon {
    /// Runs `action` (a live upgrade: `SIGUSR2`, `fugue daemon upgrade`) and
    /// waits until the daemon says it is ready again, as the new program does.
    /// What it said before the action is not taken for the answer.
    pub fn ready_again_after(&mut self, action: impl FnOnce()) {
        let (Some(ready), Some(child)) = (&self.ready, self.child.as_mut()) else {
            panic!("the daemon is not running");
        };
        ready.set_nonblocking(true).expect("a non-blocking socket");
        let mut stale = [0u8; 512];
        while ready.recv(&mut stale).is_ok() {}
        ready.set_nonblocking(false).expect("a blocking socket");
        action();
        await_ready(ready, child, self.dir.path());
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            send_signal(child.id(), libc::SIGTERM);
            procfs::gone_within(child.id(), Duration::from_secs(10));
            let _ = child.kill();
            let _ = child.wait();
        }
        self.fail_on_leftover_daemons();
    }
}

impl Daemon {
    /// No daemon outlives its test: any fugued still running whose command line
    /// or environment names this test's directory (one a test started by other
    /// means: `fugue daemon start`, an autostart, a restart) is killed, and the
    /// test fails naming it, unless it is failing already.
    fn fail_on_leftover_daemons(&self) {
        let dir = self.dir.path();
        // A daemon told to stop may take a moment to exit.
        let end = Instant::now() + Duration::from_secs(5);
        for pid in daemons_under(dir) {
            procfs::gone_within(pid, end.saturating_duration_since(Instant::now()));
        }
        let left = daemons_under(dir);
        if left.is_empty() {
            return;
        }
        for pid in &left {
            send_signal(*pid, libc::SIGKILL);
        }
        if !std::thread::panicking() {
            let test = std::thread::current().name().unwrap_or("a test").to_string();
            panic!(
                "{test} left fugued running after it ended (pid {left:?}, under {}); stop every daemon a test starts",
                dir.display()
            );
        }
    }
}

/// The fugued processes whose command line or environment names `dir`.
pub fn daemons_under(dir: &Path) -> Vec<u32> {
    use std::os::unix::ffi::OsStrExt;
    let needle = dir.as_os_str().as_bytes();
    let holds = |haystack: &[u8]| haystack.windows(needle.len()).any(|w| w == needle);
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != std::process::id())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let program = cmdline.split(|b| *b == 0).next().unwrap_or_default();
            let is_fugued = Path::new(std::ffi::OsStr::from_bytes(program))
                .file_name()
                .is_some_and(|name| name.as_bytes().starts_with(b"fugued"));
            let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = state
                .rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('Z'));
            is_fugued
                && !zombie
                && (holds(&cmdline) || holds(&std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default()))
        })
        .collect()
}

/// The `FUGUE_PANE_TOKEN` the daemon gave the process `pid` (a pane's), which
/// its agent's hook reports must carry.
/// (Until the process has exec'd its program, /proc shows the daemon's
/// environment: nothing but /proc can tell, so this reads until it changes.)
pub fn pane_token(pid: u32) -> String {
    // Polled: only /proc shows a process's environment, and nothing says when exec replaced it.
    wait_until("FUGUE_PANE_TOKEN in the pane's environment", DEADLINE, || {
        let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
        env.split(|b| *b == 0)
            .find_map(|var| var.strip_prefix(b"FUGUE_PANE_TOKEN="))
            .map(|token| String::from_utf8_lossy(token).into_owned())
    })
}

/// A pane of `session` that runs `sleep 600` under a file name holding an OSC
/// title sequence and a bidi override (`evil ESC ]0;PWNED BEL U+202E txt.exe`,
/// a link made in `dir`): the daemon must hand out its derived title clean,
/// as [`EVIL_TITLE`].
pub fn evil_program_spec(dir: &Path, session: &str) -> fugue_client::protocol::SpawnSpec {
    let evil = dir.join("evil\x1b]0;PWNED\x07\u{202e}txt.exe");
    std::os::unix::fs::symlink("/bin/sleep", &evil).expect("link the evil program name");
    let mut spec = fugue_client::protocol::SpawnSpec::new(session);
    spec.command = Some(evil.display().to_string());
    spec.args = vec!["600".into()];
    spec.shell = false;
    spec
}

/// The title [`evil_program_spec`]'s pane must get.
pub const EVIL_TITLE: &str = "evil]0;PWNEDtxt.exe";

/// A pane that runs `sh -c SCRIPT` directly (no interactive shell around it).
pub fn sh_spec(session: &str, script: impl Into<String>) -> fugue_client::protocol::SpawnSpec {
    let mut spec = fugue_client::protocol::SpawnSpec::new(session);
    spec.command = Some("sh".into());
    spec.args = vec!["-c".into(), script.into()];
    spec.shell = false;
    spec
}

/// What a `fugue` run printed.
pub struct CliOutput {
    pub status: std::process::ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl CliOutput {
    /// Stdout of a run that must have succeeded, trimmed.
    pub fn ok(&self) -> String {
        assert!(
            self.status.success(),
            "fugue failed ({}): {}{}",
            self.status,
            self.stderr,
            self.stdout
        );
        self.stdout.trim().to_string()
    }

    /// Stderr of a run that must have failed.
    pub fn err(&self) -> String {
        assert!(
            !self.status.success(),
            "fugue should have failed but printed: {}",
            self.stdout
        );
        self.stderr.trim().to_string()
    }

    /// Stdout of a successful `--json` run, parsed.
    pub fn json(&self) -> serde_json::Value {
        let text = self.ok();
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
    }
}

/// Runs `fugue --socket SOCKET ARGS...` with the test's state directory.
pub fn cli(socket: &Path, dir: &tempfile::TempDir, args: &[&str]) -> CliOutput {
    cli_with_env(socket, dir, args, &[])
}

/// [`cli`] with extra environment variables. The ones fugue sets in its panes are
/// removed first, so a test run inside a fugue pane behaves like any other.
pub fn cli_with_env(socket: &Path, dir: &tempfile::TempDir, args: &[&str], env: &[(&str, &str)]) -> CliOutput {
    let output: Output = Command::new(bin("fugue"))
        .arg("--socket")
        .arg(socket)
        .args(args)
        .env("XDG_STATE_HOME", dir.path().join("state"))
        // The machine's config stays out, as it does for the daemon.
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .env("HOME", dir.path())
        .env("SHELL", "/bin/bash")
        .env_remove("FUGUE_SESSION")
        .env_remove("FUGUE_PANE")
        .env_remove("FUGUE_PANE_TOKEN")
        .env_remove("TMUX")
        .env_remove("TMUX_PANE")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("run fugue");
    CliOutput {
        status: output.status,
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// A hand-driven connection speaking raw frames, for tests that act as a broken or
/// hostile client would.
pub struct RawConnection {
    pub stream: std::os::unix::net::UnixStream,
    codec: fugue_client::protocol::codec::FrameCodec<ClientFrame, ServerFrame>,
    buf: bytes::BytesMut,
}

use fugue_client::protocol::{ClientFrame, Hello, ServerFrame, PROTOCOL_VERSION};

impl RawConnection {
    pub fn connect(daemon: &Daemon) -> RawConnection {
        Self::connect_to(&daemon.socket)
    }

    pub fn connect_to(socket: &Path) -> RawConnection {
        Self::from_stream(std::os::unix::net::UnixStream::connect(socket).expect("connect"))
    }

    pub fn from_stream(stream: std::os::unix::net::UnixStream) -> RawConnection {
        stream.set_read_timeout(Some(DEADLINE)).expect("read timeout");
        RawConnection {
            stream,
            codec: Default::default(),
            buf: Default::default(),
        }
    }

    pub fn send(&mut self, frame: ClientFrame) {
        use std::io::Write;
        use tokio_util::codec::Encoder;
        let mut out = bytes::BytesMut::new();
        self.codec.encode(frame, &mut out).expect("encode");
        self.stream.write_all(&out).expect("write");
    }

    /// The next frame, or `None` when the daemon closed the connection.
    pub fn recv(&mut self) -> Option<ServerFrame> {
        use std::io::Read;
        use tokio_util::codec::Decoder;
        loop {
            if let Some(frame) = self.codec.decode(&mut self.buf).expect("decode") {
                return Some(frame);
            }
            let mut chunk = [0u8; 4096];
            match self.stream.read(&mut chunk) {
                Ok(0) => return None,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return None,
                Err(e) => panic!("read: {e}"),
            }
        }
    }

    /// Sends one frame of any payload (bytes no client of this build would write).
    pub fn send_payload(&mut self, payload: &[u8]) {
        use std::io::Write;
        let mut frame = (payload.len() as u32).to_be_bytes().to_vec();
        frame.extend_from_slice(payload);
        self.stream.write_all(&frame).expect("write");
    }

    pub fn hello(&mut self, version: u32) -> ServerFrame {
        self.send(ClientFrame::Hello(Hello {
            protocol_version: version,
            client_name: "raw".into(),
            client_version: "0".into(),
            revision: 0,
        }));
        self.recv().expect("a handshake answer")
    }

    /// Connects and completes the handshake.
    pub fn welcomed(daemon: &Daemon) -> RawConnection {
        let mut raw = Self::connect(daemon);
        match raw.hello(PROTOCOL_VERSION) {
            ServerFrame::Welcome(_) => raw,
            other => panic!("expected Welcome, got {other:?}"),
        }
    }

    /// Sends one request and returns the reply to it (events in between are skipped).
    pub fn request(&mut self, id: u64, request: fugue_client::protocol::Request) -> Option<ServerFrame> {
        self.send(ClientFrame::Request { id, request });
        loop {
            match self.recv()? {
                ServerFrame::Event(_) => continue,
                frame => return Some(frame),
            }
        }
    }
}

/// Sends `signal` (a number, as the tests name them) to process `pid`; a process
/// already gone is not an error.
pub fn send_signal(pid: u32, signal: i32) {
    use rustix::process::{kill_process, Pid, Signal};
    let (Some(pid), Some(signal)) = (Pid::from_raw(pid as i32), Signal::from_named_raw(signal)) else {
        panic!("no such process or signal: {pid} {signal}");
    };
    let _ = kill_process(pid, signal);
}
