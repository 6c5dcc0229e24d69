//! Starting a process on a PTY.
//!
//! Validation happens before anything is created, so a bad spec leaves nothing
//! behind. Spawning is `posix_spawn` (glibc's is `clone(CLONE_VM|CLONE_VFORK)`, so
//! it costs the same in a daemon with a thousand panes as in an empty one: no page
//! tables are copied) on one spawner thread, so a request that creates a pane
//! waits for its own spawn and never blocks a runtime worker or another request.
//! The child starts a new session and opens the PTY's slave by path, which makes it
//! the child's controlling terminal; every signal goes back to its default and no
//! descriptor but the terminal is inherited.
//!
//! portable-pty is not used here any more: it spawns with fork (slow in a large
//! process) and hands out blocking readers that need a thread per pane.

use fugue_protocol::{ErrorCode, ErrorReply, PaneSize};
use std::ffi::CString;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Environment variables that describe the daemon's own terminal, not the pane's.
const SCRUBBED_ENV: &[&str] = &[
    "TMUX",
    "TMUX_PANE",
    "COLUMNS",
    "LINES",
    "FUGUE_LOG",
    "TERM_PROGRAM",
    "TERM_PROGRAM_VERSION",
    // What a service manager tells fugued itself (readiness socket, journal, watchdog).
    "NOTIFY_SOCKET",
    "JOURNAL_STREAM",
    "WATCHDOG_PID",
    "WATCHDOG_USEC",
    "INVOCATION_ID",
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
        let typed_line = command.map(|c| shell_line(c, req.args)).transpose()?;
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

/// The line typed into the interactive shell: the command as given (a shell
/// line of its own), then each argument quoted (shlex: POSIX quoting).
fn shell_line(command: &str, args: &[String]) -> Result<String, ErrorReply> {
    let quoted = shlex::try_join(args.iter().map(String::as_str))
        .map_err(|_| ErrorReply::invalid("an argument contains NUL, which a shell line cannot carry"))?;
    Ok(match quoted.is_empty() {
        true => command.to_string(),
        false => format!("{command} {quoted}"),
    })
}

/// A started process and the PTY master it runs on (non-blocking, close-on-exec).
pub struct SpawnedPty {
    pub master: OwnedFd,
    pub pid: u32,
    /// A pidfd for the process: readable once it has exited.
    pub pidfd: OwnedFd,
}

type SpawnJob = (
    Launch,
    Vec<(String, String)>,
    tokio::sync::oneshot::Sender<Result<SpawnedPty, ErrorReply>>,
);

/// The spawner thread's queue; started on first use.
fn spawner() -> &'static std::sync::Mutex<std::sync::mpsc::Sender<SpawnJob>> {
    static SPAWNER: std::sync::OnceLock<std::sync::Mutex<std::sync::mpsc::Sender<SpawnJob>>> =
        std::sync::OnceLock::new();
    SPAWNER.get_or_init(|| {
        let (jobs, queue) = std::sync::mpsc::channel::<SpawnJob>();
        let started = std::thread::Builder::new()
            .name("pty-spawn".into())
            .stack_size(256 * 1024)
            .spawn(move || {
                while let Ok((launch, extra_env, reply)) = queue.recv() {
                    let _ = reply.send(spawn_now(&launch, &extra_env));
                }
            });
        if let Err(err) = started {
            tracing::error!(%err, "cannot start the spawner thread");
        }
        std::sync::Mutex::new(jobs)
    })
}

/// Opens a PTY and starts the launch on it, on the spawner thread. `extra_env`
/// describes the pane to itself (`FUGUE_PANE`, `FUGUE_SOCKET`, ...).
pub async fn spawn(launch: Launch, extra_env: Vec<(String, String)>) -> Result<SpawnedPty, ErrorReply> {
    let (reply, answer) = tokio::sync::oneshot::channel();
    let sent = spawner()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .send((launch, extra_env, reply));
    if sent.is_err() {
        return Err(ErrorReply::internal("the spawner thread is gone"));
    }
    answer
        .await
        .map_err(|_| ErrorReply::internal("the spawner thread dropped the request"))?
}

fn cstring(what: &str, bytes: &[u8]) -> Result<CString, ErrorReply> {
    CString::new(bytes).map_err(|_| ErrorReply::invalid(format!("{what} contains a NUL byte")))
}

/// The child's environment: the daemon's, minus what describes the daemon's own
/// terminal, then the launch's and the pane's (later entries win).
fn child_env(launch: &Launch, extra_env: &[(String, String)]) -> Result<Vec<CString>, ErrorReply> {
    let mut env: Vec<(Vec<u8>, Vec<u8>)> = std::env::vars_os()
        .filter(|(k, _)| !SCRUBBED_ENV.iter().any(|s| k.as_bytes() == s.as_bytes()))
        .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
        .collect();
    for (k, v) in launch.env.iter().chain(extra_env) {
        env.retain(|(name, _)| name.as_slice() != k.as_bytes());
        env.push((k.as_bytes().to_vec(), v.as_bytes().to_vec()));
    }
    env.into_iter()
        .map(|(mut k, v)| {
            k.push(b'=');
            k.extend_from_slice(&v);
            cstring("an environment variable", &k)
        })
        .collect()
}

/// Opens a PTY master and returns it with its slave's path.
fn open_pty(size: PaneSize) -> Result<(OwnedFd, CString), ErrorReply> {
    use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};
    let fail = |e: rustix::io::Errno| spawn_failed(format!("cannot open a PTY: {e}"));
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).map_err(fail)?;
    grantpt(&master).map_err(fail)?;
    unlockpt(&master).map_err(fail)?;
    let slave = ptsname(&master, Vec::new()).map_err(fail)?;
    set_size(&master, size).map_err(|e| spawn_failed(format!("cannot size the PTY: {e}")))?;
    Ok((master, slave))
}

/// Sets the terminal size (the kernel sends SIGWINCH to the foreground group).
pub fn set_size(master: &OwnedFd, size: PaneSize) -> std::io::Result<()> {
    let winsize = rustix::termios::Winsize {
        ws_row: size.rows,
        ws_col: size.cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    rustix::termios::tcsetwinsize(master, winsize).map_err(std::io::Error::from)
}

/// The terminal's foreground process group, if it has one.
pub fn foreground_group(master: &OwnedFd) -> Option<i32> {
    rustix::termios::tcgetpgrp(master)
        .ok()
        .map(|pid| pid.as_raw_nonzero().get())
        .filter(|pgid| *pgid > 0)
}

/// Spawns `launch` on a new PTY. Blocking (for as long as the child takes to exec).
fn spawn_now(launch: &Launch, extra_env: &[(String, String)]) -> Result<SpawnedPty, ErrorReply> {
    let program = cstring("the program path", launch.program.as_os_str().as_bytes())?;
    let mut argv = vec![program.clone()];
    for arg in &launch.args {
        argv.push(cstring("an argument", arg.as_bytes())?);
    }
    let envp = child_env(launch, extra_env)?;
    let cwd = cstring("the working directory", launch.cwd.as_os_str().as_bytes())?;
    let (master, slave) = open_pty(launch.size)?;
    let pid = posix_spawn(&program, &argv, &envp, &cwd, &slave)
        .map_err(|e| spawn_failed(format!("cannot start {}: {e}", launch.program.display())))?;
    // From here on the process exists; the guard ends it if anything below fails.
    let guard = crate::process::KillOnDrop(pid);
    let pidfd = rustix::process::pidfd_open(
        rustix::process::Pid::from_raw(pid as i32).ok_or_else(|| ErrorReply::internal("spawned pid 0"))?,
        rustix::process::PidfdFlags::empty(),
    )
    .map_err(|e| {
        ErrorReply::internal(format!(
            "cannot watch the new process (pidfd_open needs Linux 5.3): {e}"
        ))
    })?;
    set_nonblocking(&master).map_err(|e| spawn_failed(format!("cannot set up the PTY: {e}")))?;
    std::mem::forget(guard);
    Ok(SpawnedPty { master, pid, pidfd })
}

fn set_nonblocking(fd: &OwnedFd) -> rustix::io::Result<()> {
    use rustix::fs::{fcntl_getfl, fcntl_setfl, OFlags};
    let flags = fcntl_getfl(fd)?;
    fcntl_setfl(fd, flags | OFlags::NONBLOCK)
}

/// Owns the raw `posix_spawn` attribute objects and frees them on every path.
struct SpawnAttrs {
    attr: libc::posix_spawnattr_t,
    actions: libc::posix_spawn_file_actions_t,
}

impl Drop for SpawnAttrs {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        // SAFETY: both were initialised by `SpawnAttrs::new` and are destroyed once.
        unsafe {
            libc::posix_spawnattr_destroy(&mut self.attr);
            libc::posix_spawn_file_actions_destroy(&mut self.actions);
        }
    }
}

fn check(rc: libc::c_int) -> std::io::Result<()> {
    match rc {
        0 => Ok(()),
        errno => Err(std::io::Error::from_raw_os_error(errno)),
    }
}

/// `posix_spawn` in a new session whose controlling terminal is `slave` (opened as
/// fds 0-2), in `cwd`, with default signal dispositions, an empty signal mask and
/// no other descriptors.
#[allow(unsafe_code)]
fn posix_spawn(
    program: &CString,
    argv: &[CString],
    envp: &[CString],
    cwd: &CString,
    slave: &CString,
) -> std::io::Result<u32> {
    let mut argv_ptrs: Vec<*mut libc::c_char> = argv.iter().map(|a| a.as_ptr() as *mut _).collect();
    argv_ptrs.push(std::ptr::null_mut());
    let mut envp_ptrs: Vec<*mut libc::c_char> = envp.iter().map(|e| e.as_ptr() as *mut _).collect();
    envp_ptrs.push(std::ptr::null_mut());
    // SAFETY: zeroed storage is what the init functions expect to overwrite; every
    // pointer passed below points into CStrings and Vecs that outlive the call, the
    // pointer arrays are NUL-terminated, and `attrs` destroys the objects on drop.
    unsafe {
        let mut attrs = SpawnAttrs {
            attr: std::mem::zeroed(),
            actions: std::mem::zeroed(),
        };
        check(libc::posix_spawnattr_init(&mut attrs.attr))?;
        check(libc::posix_spawn_file_actions_init(&mut attrs.actions))?;
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        check(libc::posix_spawnattr_setsigdefault(&mut attrs.attr, &all))?;
        check(libc::posix_spawnattr_setsigmask(&mut attrs.attr, &none))?;
        let flags =
            libc::POSIX_SPAWN_SETSID as libc::c_int | libc::POSIX_SPAWN_SETSIGDEF | libc::POSIX_SPAWN_SETSIGMASK;
        check(libc::posix_spawnattr_setflags(&mut attrs.attr, flags as libc::c_short))?;
        // setsid runs before the file actions, so this open acquires the terminal.
        check(libc::posix_spawn_file_actions_addopen(
            &mut attrs.actions,
            0,
            slave.as_ptr(),
            libc::O_RDWR,
            0,
        ))?;
        check(libc::posix_spawn_file_actions_adddup2(&mut attrs.actions, 0, 1))?;
        check(libc::posix_spawn_file_actions_adddup2(&mut attrs.actions, 0, 2))?;
        check(libc::posix_spawn_file_actions_addclosefrom_np(&mut attrs.actions, 3))?;
        check(libc::posix_spawn_file_actions_addchdir_np(
            &mut attrs.actions,
            cwd.as_ptr(),
        ))?;
        let mut pid: libc::pid_t = 0;
        check(libc::posix_spawn(
            &mut pid,
            program.as_ptr(),
            &attrs.actions,
            &attrs.attr,
            argv_ptrs.as_ptr(),
            envp_ptrs.as_ptr(),
        ))?;
        Ok(pid as u32)
    }
}

/// The line typed into a shell pane once it starts, if any.
pub fn typed_input(launch: &Launch) -> Option<Vec<u8>> {
    launch.typed_line.as_ref().map(|line| format!("{line}\r").into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_typed_line_gives_the_shell_back_every_argument() {
        let args: Vec<String> = ["plain", "two words", "it's", "$HOME", "", "*", "a\"b", "tab\there", "ü"]
            .map(String::from)
            .to_vec();
        let line = shell_line("printf '%s|'", &args).unwrap();
        let words = shlex::split(&line).unwrap();
        assert_eq!(words[0], "printf", "{line}");
        assert_eq!(&words[2..], &args[..], "{line}");
        assert_eq!(shell_line("ls", &[]).unwrap(), "ls");
        let nul = shell_line("echo", &["a\0b".into()]).unwrap_err();
        assert!(nul.message.contains("NUL"), "{}", nul.message);
    }

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
        assert_eq!(launch.typed_line.as_deref(), Some(r#"echo 'a b' "it's" plain"#));
        assert_eq!(launch.args, vec!["-i"]);
        assert!(launch.env.iter().any(|(k, v)| k == "TERM" && v == "xterm-256color"));
    }
}
