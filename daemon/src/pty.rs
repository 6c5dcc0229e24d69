//! Starting a process on a PTY, and signalling and reaping it.
//!
//! Validation happens before anything is created, so a bad spec leaves nothing
//! behind. The blocking parts (reading the master, writing to it, waiting for the
//! child) each get a small dedicated thread; signals go to process groups with
//! `killpg`, never through portable-pty's blocking `Child::kill`.

use fugue_protocol::{ErrorCode, ErrorReply, ExitStatus, PaneSize};
use portable_pty::{CommandBuilder, MasterPty, PtySize};
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Environment variables that describe the daemon's own terminal, not the pane's.
const SCRUBBED_ENV: &[&str] = &[
    "TMUX",
    "TMUX_PANE",
    "COLUMNS",
    "LINES",
    "FUGUE_LOG",
    "TERM_PROGRAM",
    "TERM_PROGRAM_VERSION",
];

/// A validated spawn: everything checked, nothing created yet.
#[derive(Debug, Clone)]
pub struct Launch {
    /// Resolved program path.
    pub program: PathBuf,
    /// argv[1..].
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
    pub size: PaneSize,
    /// Shell mode: this line is typed into the shell after it starts.
    pub typed_line: Option<String>,
    /// What `ListPanes` shows as the command.
    pub display_command: Vec<String>,
}

/// The parts of a spec that [`validate`] needs, after session defaults were applied.
pub struct LaunchRequest<'a> {
    pub command: Option<&'a str>,
    pub args: &'a [String],
    /// Session env first, then the spec's: later entries win.
    pub env: Vec<(String, String)>,
    pub cwd: &'a Path,
    pub shell: bool,
    pub size: PaneSize,
}

fn spawn_failed(message: String) -> ErrorReply {
    ErrorReply::new(ErrorCode::SpawnFailed, message)
}

/// Checks a directory a pane or session would start in.
pub fn validate_cwd(cwd: &Path) -> Result<(), ErrorReply> {
    if !cwd.is_absolute() {
        return Err(ErrorReply::invalid(format!(
            "cwd must be an absolute path, got {}",
            cwd.display()
        )));
    }
    match std::fs::metadata(cwd) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(spawn_failed(format!("cwd {} is not a directory", cwd.display()))),
        Err(_) => Err(spawn_failed(format!("cwd {} does not exist", cwd.display()))),
    }
}

/// Turns a request into a [`Launch`], or says what is wrong with it.
pub fn validate(req: LaunchRequest<'_>) -> Result<Launch, ErrorReply> {
    for (name, value) in &req.env {
        fugue_protocol::limits::check_env_var(name, value)?;
    }
    validate_cwd(req.cwd)?;
    fugue_protocol::limits::check_size(req.size)?;
    let env_value = |key: &str| req.env.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.clone());
    let path_var = env_value("PATH")
        .or_else(|| std::env::var("PATH").ok())
        .unwrap_or_default();
    let command = req.command.map(str::trim).filter(|c| !c.is_empty());

    let mut env = req.env.clone();
    if env_value("TERM").is_none() {
        env.push(("TERM".into(), "xterm-256color".into()));
    }

    if req.shell {
        let shell = env_value("SHELL")
            .or_else(|| std::env::var("SHELL").ok())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "/bin/sh".into());
        let program = resolve_program(&shell, &path_var)?;
        let typed_line = command.map(|c| shell_line(c, req.args));
        let display_command = match command {
            Some(c) => std::iter::once(c.to_string()).chain(req.args.iter().cloned()).collect(),
            None => vec![shell.clone()],
        };
        return Ok(Launch {
            program,
            args: vec!["-i".into()],
            env,
            cwd: req.cwd.to_path_buf(),
            size: req.size,
            typed_line,
            display_command,
        });
    }

    let Some(command) = command else {
        return Err(ErrorReply::invalid(
            "empty command with shell=false; give a command to run",
        ));
    };
    let program = resolve_program(command, &path_var)?;
    Ok(Launch {
        program,
        args: req.args.to_vec(),
        env,
        cwd: req.cwd.to_path_buf(),
        size: req.size,
        typed_line: None,
        display_command: std::iter::once(command.to_string())
            .chain(req.args.iter().cloned())
            .collect(),
    })
}

/// Finds `command` as a path or on `path_var`, and checks it can be executed.
fn resolve_program(command: &str, path_var: &str) -> Result<PathBuf, ErrorReply> {
    if command.contains('/') {
        let path = PathBuf::from(command);
        return check_executable(&path).map(|_| path);
    }
    for dir in path_var.split(':').filter(|d| !d.is_empty()) {
        let candidate = Path::new(dir).join(command);
        if candidate.is_file() && check_executable(&candidate).is_ok() {
            return Ok(candidate);
        }
    }
    Err(spawn_failed(format!("command not found: {command} (searched PATH)")))
}

fn check_executable(path: &Path) -> Result<(), ErrorReply> {
    let meta = std::fs::metadata(path).map_err(|_| spawn_failed(format!("command not found: {}", path.display())))?;
    if meta.is_dir() {
        return Err(spawn_failed(format!(
            "{} is a directory, not a program",
            path.display()
        )));
    }
    if meta.permissions().mode() & 0o111 == 0 {
        return Err(spawn_failed(format!("{} is not executable", path.display())));
    }
    Ok(())
}

/// The line typed into the shell: the command as given (it may use shell syntax),
/// then each argument quoted.
fn shell_line(command: &str, args: &[String]) -> String {
    let mut line = command.to_string();
    for arg in args {
        line.push(' ');
        line.push_str(&shell_quote(arg));
    }
    line
}

fn shell_quote(arg: &str) -> String {
    let safe = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if safe {
        return arg.to_string();
    }
    format!("'{}'", arg.replace('\'', r"'\''"))
}

/// A started process and the PTY it runs on.
pub struct SpawnedPty {
    pub master: Box<dyn MasterPty + Send>,
    pub reader: Box<dyn Read + Send>,
    pub writer: Box<dyn Write + Send>,
    pub pid: u32,
}

fn pty_size(size: PaneSize) -> PtySize {
    PtySize {
        rows: size.rows,
        cols: size.cols,
        pixel_width: 0,
        pixel_height: 0,
    }
}

/// Opens a PTY and starts the launch on it. `extra_env` describes the pane to itself
/// (`FUGUE_PANE`, `FUGUE_SOCKET`, ...).
pub fn spawn(launch: &Launch, extra_env: &[(String, String)]) -> Result<SpawnedPty, ErrorReply> {
    let system = portable_pty::native_pty_system();
    let pair = system
        .openpty(pty_size(launch.size))
        .map_err(|e| spawn_failed(format!("cannot open a PTY: {e}")))?;
    let mut cmd = CommandBuilder::new(&launch.program);
    cmd.args(&launch.args);
    cmd.cwd(&launch.cwd);
    for key in SCRUBBED_ENV {
        cmd.env_remove(key);
    }
    for (k, v) in launch.env.iter().chain(extra_env) {
        cmd.env(k, v);
    }
    let child = pair
        .slave
        .spawn_command(cmd)
        .map_err(|e| spawn_failed(format!("cannot start {}: {e}", launch.program.display())))?;
    // The slave must close here, or the reader never sees EOF.
    drop(pair.slave);
    let pid = child
        .process_id()
        .ok_or_else(|| ErrorReply::internal("spawned process has no pid"))?;
    // We reap by pid ourselves (waitpid on that pid only); the handle is not needed.
    drop(child);
    let guard_on_error = ProcessGuard::new(pid, Duration::ZERO);
    let reader = pair
        .master
        .try_clone_reader()
        .map_err(|e| spawn_failed(format!("cannot read the PTY: {e}")))?;
    let mut writer = pair
        .master
        .take_writer()
        .map_err(|e| spawn_failed(format!("cannot write the PTY: {e}")))?;
    if let Some(line) = &launch.typed_line {
        // The terminal buffers this until the shell reads it.
        let typed = format!("{line}\r");
        writer
            .write_all(typed.as_bytes())
            .map_err(|e| spawn_failed(format!("cannot type the command into the shell: {e}")))?;
    }
    guard_on_error.disarm();
    Ok(SpawnedPty {
        master: pair.master,
        reader,
        writer,
        pid,
    })
}

/// Signals to a process group; errors (group already gone) are expected and ignored.
pub fn signal_group(pgid: i32, signal: i32) {
    if pgid > 0 {
        unsafe {
            libc::killpg(pgid, signal);
        }
    }
}

/// Waits for `pid` (and only it) to exit; blocking, so call it on its own thread.
pub fn wait_for_exit(pid: u32) -> ExitStatus {
    let mut status: libc::c_int = 0;
    loop {
        let rc = unsafe { libc::waitpid(pid as libc::pid_t, &mut status, 0) };
        if rc == pid as libc::pid_t {
            break;
        }
        let err = std::io::Error::last_os_error();
        if err.kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        tracing::error!(pid, %err, "waitpid failed");
        return ExitStatus {
            code: None,
            signal: None,
        };
    }
    if libc::WIFEXITED(status) {
        ExitStatus {
            code: Some(libc::WEXITSTATUS(status)),
            signal: None,
        }
    } else if libc::WIFSIGNALED(status) {
        ExitStatus {
            code: None,
            signal: Some(libc::WTERMSIG(status)),
        }
    } else {
        ExitStatus {
            code: None,
            signal: None,
        }
    }
}

/// Owns a pane's process group for signalling. Until the process is reaped, dropping
/// it hangs the group up and kills it after a grace period, so a pane that goes away
/// by any path (release, session destroyed, actor killed) never leaves its process.
pub struct ProcessGuard {
    pid: u32,
    exited: Arc<AtomicBool>,
    armed: bool,
    /// Time between the hang-up on drop and SIGKILL.
    grace: Duration,
}

impl ProcessGuard {
    pub fn new(pid: u32, grace: Duration) -> Self {
        Self {
            pid,
            exited: Arc::new(AtomicBool::new(false)),
            armed: true,
            grace,
        }
    }

    /// Flag the waiter thread sets once it has reaped the process.
    pub fn exited_flag(&self) -> Arc<AtomicBool> {
        self.exited.clone()
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    pub fn has_exited(&self) -> bool {
        self.exited.load(Ordering::Acquire)
    }

    fn disarm(mut self) {
        self.armed = false;
    }

    /// Sends `signal` to the process group and to `foreground` (the terminal's
    /// foreground group, when it differs), then SIGKILL to both after `grace` unless
    /// the process was reaped by then. Never blocks.
    pub fn terminate(&self, signal: i32, foreground: Option<i32>, grace: Duration) {
        if self.has_exited() {
            return;
        }
        let groups = groups(self.pid as i32, foreground);
        for pgid in &groups {
            signal_group(*pgid, signal);
        }
        if signal == libc::SIGKILL {
            return;
        }
        let exited = self.exited.clone();
        let escalate = move || {
            if !exited.load(Ordering::Acquire) {
                for pgid in &groups {
                    signal_group(*pgid, libc::SIGKILL);
                }
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn(async move {
                    tokio::time::sleep(grace).await;
                    escalate();
                });
            }
            Err(_) => escalate(),
        }
    }
}

fn groups(pid: i32, foreground: Option<i32>) -> Vec<i32> {
    let mut groups = vec![pid];
    if let Some(fg) = foreground.filter(|fg| *fg > 0 && *fg != pid) {
        groups.push(fg);
    }
    groups
}

impl Drop for ProcessGuard {
    fn drop(&mut self) {
        if self.armed && !self.has_exited() {
            signal_group(self.pid as i32, libc::SIGHUP);
            self.terminate(libc::SIGTERM, None, self.grace);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request<'a>(command: Option<&'a str>, args: &'a [String], shell: bool, cwd: &'a Path) -> LaunchRequest<'a> {
        LaunchRequest {
            command,
            args,
            env: vec![],
            cwd,
            shell,
            size: PaneSize::default(),
        }
    }

    #[test]
    fn validation_names_the_cause() {
        let tmp = std::env::temp_dir();
        let none: Vec<String> = vec![];
        let err = validate(request(Some("no-such-program-xyz"), &none, false, &tmp)).unwrap_err();
        assert_eq!(err.code, ErrorCode::SpawnFailed);
        assert!(err.message.contains("command not found: no-such-program-xyz"));
        let err = validate(request(None, &none, false, &tmp)).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgument);
        let err = validate(request(Some("/etc/passwd"), &none, false, &tmp)).unwrap_err();
        assert!(err.message.contains("not executable"), "{}", err.message);
        let err = validate(request(Some("true"), &none, false, Path::new("/no/such/dir"))).unwrap_err();
        assert!(err.message.contains("does not exist"));
        let err = validate(request(Some("true"), &none, false, Path::new("relative"))).unwrap_err();
        assert!(err.message.contains("absolute"));
        let mut req = request(Some("true"), &none, false, &tmp);
        req.env = vec![("A=B".into(), "x".into())];
        assert!(validate(req).unwrap_err().message.contains("may not contain '='"));
    }

    #[test]
    fn shell_mode_types_quoted_line() {
        let tmp = std::env::temp_dir();
        let args = vec!["a b".to_string(), "it's".to_string(), "plain".to_string()];
        let launch = validate(request(Some("echo"), &args, true, &tmp)).unwrap();
        assert_eq!(launch.typed_line.as_deref(), Some(r"echo 'a b' 'it'\''s' plain"));
        assert_eq!(launch.args, vec!["-i"]);
        assert!(launch.env.iter().any(|(k, v)| k == "TERM" && v == "xterm-256color"));
    }
}
