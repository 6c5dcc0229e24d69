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

/// Version of the [`Handover`] layout. A binary reads its own and the ones
/// before it that it knows (see [`layout_v1`]); one that changes the layout
/// bumps it. A handover of a newer layout is refused (the old daemon keeps
/// running and says so). Layout 2 carries each pane's info as JSON, so fields
/// added to it with a default need no new layout.
pub const HANDOVER_VERSION: u32 = 2;
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
    #[serde(with = "as_json")]
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
        let limited = bincode::config::standard().with_limit::<{ 1 << 31 }>();
        let unreadable = |e: bincode::error::DecodeError| format!("unreadable handover: {e}");
        match version {
            HANDOVER_VERSION => Ok(bincode::serde::decode_from_slice::<Handover, _>(bytes, limited)
                .map_err(unreadable)?
                .0),
            1 => Ok(
                bincode::serde::decode_from_slice::<layout_v1::Handover, _>(bytes, limited)
                    .map_err(unreadable)?
                    .0
                    .into(),
            ),
            _ => Err(format!(
                "handover layout {version}, this fugued reads layouts 1 to {HANDOVER_VERSION}"
            )),
        }
    }

    /// The descriptors the next daemon inherits.
    pub fn inherited_fds(&self) -> Vec<RawFd> {
        let masters = self.sessions.iter().flat_map(|s| &s.panes).filter_map(|p| p.master_fd);
        [self.listener_fd, self.lock_fd].into_iter().chain(masters).collect()
    }
}

/// A pane's info as a JSON string inside the bincode handover: JSON names its
/// fields, so a newer daemon reads an older one's info with defaults for what
/// it added.
mod as_json {
    use fugue_protocol::PaneInfo;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(info: &PaneInfo, serializer: S) -> Result<S::Ok, S::Error> {
        serde_json::to_string(info)
            .map_err(serde::ser::Error::custom)?
            .serialize(serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<PaneInfo, D::Error> {
        let text = String::deserialize(deserializer)?;
        serde_json::from_str(&text).map_err(serde::de::Error::custom)
    }
}

/// Layout 1 (fugued before agent sessions were recorded): pane info in bincode,
/// without `agent_session`. Read, so an upgrade from it keeps every pane.
mod layout_v1 {
    use super::*;
    use fugue_protocol::{PaneId, PaneSize, PaneState, RestartPolicy, SessionId};

    #[derive(Serialize, Deserialize)]
    pub struct Handover {
        pub version: u32,
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

    #[derive(Serialize, Deserialize)]
    pub struct PaneHandover {
        pub info: PaneInfoV1,
        pub spec: SpawnSpec,
        pub pid_start: Option<u64>,
        pub master_fd: Option<RawFd>,
        pub exit: Option<(ExitStatus, u64)>,
        pub output: OutputSnapshot,
        pub policy: SizePolicy,
    }

    /// `PaneInfo` as layout 1 wrote it, field for field.
    #[derive(Serialize, Deserialize)]
    pub struct PaneInfoV1 {
        pub id: PaneId,
        pub session_id: SessionId,
        pub session_name: String,
        pub index: u32,
        pub title: String,
        pub purpose: String,
        pub command: Vec<String>,
        pub shell: bool,
        pub cwd: String,
        pub state: PaneState,
        pub pid: u32,
        pub exit: Option<ExitStatus>,
        pub size: PaneSize,
        pub started_at_ms: u64,
        pub exited_at_ms: Option<u64>,
        pub restart: RestartPolicy,
        pub restarts: u32,
        pub last_exit: Option<ExitStatus>,
    }

    impl From<Handover> for super::Handover {
        fn from(old: Handover) -> Self {
            let sessions = old.sessions.into_iter().map(|session| super::SessionHandover {
                record: session.record,
                panes: session.panes.into_iter().map(super::PaneHandover::from).collect(),
            });
            super::Handover {
                // Read into today's layout, so that is its version now.
                version: HANDOVER_VERSION,
                from_version: old.from_version,
                started_at_ms: old.started_at_ms,
                listener_fd: old.listener_fd,
                lock_fd: old.lock_fd,
                sessions: sessions.collect(),
            }
        }
    }

    impl From<PaneHandover> for super::PaneHandover {
        fn from(old: PaneHandover) -> Self {
            let i = old.info;
            let info = PaneInfo {
                id: i.id,
                session_id: i.session_id,
                session_name: i.session_name,
                index: i.index,
                title: i.title,
                purpose: i.purpose,
                command: i.command,
                shell: i.shell,
                cwd: i.cwd,
                state: i.state,
                pid: i.pid,
                exit: i.exit,
                size: i.size,
                started_at_ms: i.started_at_ms,
                exited_at_ms: i.exited_at_ms,
                restart: i.restart,
                restarts: i.restarts,
                last_exit: i.last_exit,
                agent_session: None,
                tmux: None,
            };
            super::PaneHandover {
                info,
                spec: old.spec,
                pid_start: old.pid_start,
                master_fd: old.master_fd,
                exit: old.exit,
                output: old.output,
                policy: old.policy,
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terminal::pane_output::{OutputLimits, PaneOutput};
    use fugue_protocol::{PaneId, PaneSize, PaneState, RestartPolicy, SessionId};

    fn output() -> OutputSnapshot {
        let limits = OutputLimits {
            log_bytes: 1024,
            text_lines: 10,
            text_bytes: 1024,
            scrollback_lines: 10,
            scrollback_bytes: 1024,
        };
        let output = PaneOutput::new(limits, PaneSize { cols: 20, rows: 4 });
        let _ = output.push(b"still here\r\n");
        output.snapshot()
    }

    /// An upgrade from a fugued that wrote layout 1 keeps its panes.
    #[test]
    fn layout_1_is_read() {
        let info = layout_v1::PaneInfoV1 {
            id: PaneId::new(),
            session_id: SessionId::new(),
            session_name: "old".into(),
            index: 0,
            title: "build".into(),
            purpose: String::new(),
            command: vec!["make".into()],
            shell: true,
            cwd: "/tmp".into(),
            state: PaneState::Running,
            pid: 42,
            exit: None,
            size: PaneSize { cols: 20, rows: 4 },
            started_at_ms: 1,
            exited_at_ms: None,
            restart: RestartPolicy::Never,
            restarts: 0,
            last_exit: None,
        };
        let id = info.id;
        let old = layout_v1::Handover {
            version: 1,
            from_version: "0.old".into(),
            started_at_ms: 7,
            listener_fd: 3,
            lock_fd: 4,
            sessions: vec![layout_v1::SessionHandover {
                record: SessionRecord {
                    id: info.session_id,
                    name: "old".into(),
                    cwd: "/tmp".into(),
                    env: vec![],
                    created_at_ms: 1,
                    order: 0,
                },
                panes: vec![layout_v1::PaneHandover {
                    info,
                    spec: SpawnSpec::new("old"),
                    pid_start: Some(9),
                    master_fd: Some(5),
                    exit: None,
                    output: output(),
                    policy: SizePolicy::Latest,
                }],
            }],
        };
        let bytes = bincode::serde::encode_to_vec(&old, bincode::config::standard()).unwrap();
        let read = Handover::decode(&bytes).unwrap();
        assert_eq!(read.from_version, "0.old");
        assert_eq!(read.inherited_fds(), vec![3, 4, 5]);
        let pane = &read.sessions[0].panes[0];
        assert_eq!(
            (pane.info.id, pane.info.pid, pane.info.agent_session.clone()),
            (id, 42, None)
        );
        // And today's layout reads back what it wrote.
        let again = Handover::decode(&read.encode().unwrap()).unwrap();
        assert_eq!(again.sessions[0].panes[0].info, pane.info);
        let mut newer = bytes.clone();
        newer[0] = 9;
        let refused = Handover::decode(&newer).err().unwrap_or_default();
        assert!(refused.contains("layouts 1 to 2"), "{refused}");
    }
}
