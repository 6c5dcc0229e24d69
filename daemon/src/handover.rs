//! Live upgrade: the state one fugued hands to the binary that replaces it.
//!
//! The daemon re-executes itself in place, so it keeps its pid and stays the
//! parent of every pane's process. What crosses the `exec` is a set of inherited
//! descriptors (the listening socket, its lock file, each pane's PTY master) and
//! one [`Handover`], encoded with bincode into a memfd: the sessions, and for each
//! pane its records, its terminal (screen, scrollback, text view, raw log and
//! offsets) and its size policy. Processes are found again by pid (a pidfd is
//! opened for each); their output waited in the PTY meanwhile, so nothing is lost
//! and nothing is read twice.
//!
//! Before the exec the new binary reads the very handover it is about to get
//! (`fugued --check-handover`); if it cannot, the old daemon takes its state
//! back and goes on. This module holds the data and the process-level steps;
//! the actors build and consume the state, `serve` runs the steps in order.

use crate::store::SessionRecord;
use crate::terminal::pane_output::OutputSnapshot;
use fugue_protocol::{ExitStatus, PaneInfo, SizePolicy, SpawnSpec};
use serde::{Deserialize, Serialize};
use std::io::{Read, Seek, Write};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;
use std::time::Duration;

/// Version of the [`Handover`] layout. A binary reads only its own; one that
/// changes the layout bumps it, and an upgrade across it is refused (the old
/// daemon keeps running and says so).
pub const HANDOVER_VERSION: u32 = 1;
/// How long the new binary gets to read the handover in the check.
const CHECK_TIMEOUT: Duration = Duration::from_secs(20);

/// Everything the next daemon needs, besides the descriptors it inherits.
#[derive(Serialize, Deserialize)]
pub struct Handover {
    pub version: u32,
    /// The version of the daemon that wrote it.
    pub from_version: String,
    pub started_at_ms: u64,
    pub listener_fd: RawFd,
    pub lock_fd: RawFd,
    pub sessions: Vec<SessionHandover>,
}

#[derive(Serialize, Deserialize)]
pub struct SessionHandover {
    pub record: SessionRecord,
    pub panes: Vec<PaneHandover>,
}

/// One pane as it is handed over.
#[derive(Serialize, Deserialize)]
pub struct PaneHandover {
    pub info: PaneInfo,
    pub spec: SpawnSpec,
    pub pid_start: Option<u64>,
    /// The PTY master, inherited under this number; `None` when the pane has no
    /// process (exited, lost).
    pub master_fd: Option<RawFd>,
    /// How the process ended, if it has (maybe while the handover was made).
    pub exit: Option<(ExitStatus, u64)>,
    pub output: OutputSnapshot,
    pub policy: SizePolicy,
}

impl Handover {
    pub fn encode(&self) -> Result<Vec<u8>, String> {
        bincode::serde::encode_to_vec(self, bincode::config::standard()).map_err(|e| e.to_string())
    }

    /// Decodes a handover; one of another layout version is refused by name.
    pub fn decode(bytes: &[u8]) -> Result<Self, String> {
        // The version comes first, so any layout can tell it.
        let (version, _): (u32, usize) = bincode::serde::decode_from_slice(bytes, bincode::config::standard())
            .map_err(|e| format!("unreadable handover: {e}"))?;
        if version != HANDOVER_VERSION {
            return Err(format!(
                "handover layout {version}, this fugued reads layout {HANDOVER_VERSION}"
            ));
        }
        let (handover, _): (Handover, usize) =
            bincode::serde::decode_from_slice(bytes, bincode::config::standard().with_limit::<{ 1 << 31 }>())
                .map_err(|e| format!("unreadable handover: {e}"))?;
        Ok(handover)
    }

    /// The descriptors the next daemon inherits.
    pub fn inherited_fds(&self) -> Vec<RawFd> {
        let masters = self.sessions.iter().flat_map(|s| &s.panes).filter_map(|p| p.master_fd);
        [self.listener_fd, self.lock_fd].into_iter().chain(masters).collect()
    }
}

/// Writes `bytes` into a memfd that survives `exec`.
pub fn to_memfd(bytes: &[u8]) -> std::io::Result<std::fs::File> {
    let fd = rustix::fs::memfd_create("fugue-handover", rustix::fs::MemfdFlags::empty())?;
    let mut file = std::fs::File::from(fd);
    file.write_all(bytes)?;
    file.rewind()?;
    Ok(file)
}

/// Reads the handover from inherited descriptor `fd` (from its start).
pub fn read_fd(fd: RawFd) -> Result<Handover, String> {
    if fd < 3 {
        return Err(format!("bad handover descriptor {fd}"));
    }
    // SAFETY: the previous daemon image left `fd` open for us and nothing else in
    // this process knows of it; the file takes it over.
    #[allow(unsafe_code)]
    let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
    let mut bytes = Vec::new();
    file.rewind()
        .and_then(|_| file.read_to_end(&mut bytes))
        .map_err(|e| format!("cannot read the handover: {e}"))?;
    Handover::decode(&bytes)
}

/// Takes ownership of a descriptor the previous daemon image left open.
pub fn inherited(fd: RawFd) -> Option<OwnedFd> {
    // F_GETFD fails on a descriptor that is not open.
    let probe = {
        // SAFETY: only borrowed for the duration of this call.
        #[allow(unsafe_code)]
        let borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        rustix::io::fcntl_getfd(borrowed)
    };
    if fd < 3 || probe.is_err() {
        return None;
    }
    // SAFETY: open (checked above), inherited across exec for exactly this use,
    // and owned by nothing else in this process.
    #[allow(unsafe_code)]
    Some(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Runs `exe --check-handover` on the handover in `memfd`: the new binary must
/// read it before the old one hands over.
pub fn check(exe: &Path, memfd: &std::fs::File) -> Result<(), String> {
    let input = memfd.try_clone().map_err(|e| e.to_string())?;
    let mut child = std::process::Command::new(exe)
        .arg("--check-handover")
        .stdin(input)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let deadline = std::time::Instant::now() + CHECK_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if std::time::Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{} did not read the handover within {CHECK_TIMEOUT:?}",
                    exe.display()
                ));
            }
            Err(err) => return Err(err.to_string()),
        }
    };
    if status.success() {
        return Ok(());
    }
    let mut why = String::new();
    if let Some(mut stderr) = child.stderr.take() {
        let _ = stderr.read_to_string(&mut why);
    }
    let why = why.trim().lines().last().unwrap_or("no reason given").to_string();
    Err(format!("{} refused the handover: {why}", exe.display()))
}

/// What `fugued --check-handover` does: reads a handover on stdin and says
/// whether this binary can take it.
pub fn check_stdin() -> Result<String, String> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read the handover: {e}"))?;
    let handover = Handover::decode(&bytes)?;
    let panes: usize = handover.sessions.iter().map(|s| s.panes.len()).sum();
    Ok(format!(
        "handover from fugued {}: {} sessions, {panes} panes",
        handover.from_version,
        handover.sessions.len()
    ))
}

/// Replaces this process with `exe`, passing `fds` (and the memfd) on. Returns
/// only if the exec failed; the descriptors are then private again.
pub fn exec(exe: &Path, args: &[std::ffi::OsString], fds: &[RawFd], memfd: &std::fs::File) -> String {
    use std::os::unix::process::CommandExt;
    let mut all: Vec<RawFd> = fds.to_vec();
    all.push(memfd.as_raw_fd());
    let set = |fd: RawFd, flags: rustix::io::FdFlags| {
        // SAFETY: borrowed for this call only; every one is open for as long as
        // the handover lives.
        #[allow(unsafe_code)]
        let borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        rustix::io::fcntl_setfd(borrowed, flags)
    };
    for fd in &all {
        if let Err(err) = set(*fd, rustix::io::FdFlags::empty()) {
            return format!("cannot pass descriptor {fd} on: {err}");
        }
    }
    let mut command = std::process::Command::new(exe);
    command
        .args(args)
        .arg("--handover-fd")
        .arg(memfd.as_fd().as_raw_fd().to_string());
    let err = command.exec();
    for fd in &all {
        let _ = set(*fd, rustix::io::FdFlags::CLOEXEC);
    }
    format!("cannot start {}: {err}", exe.display())
}
