//! What an agent's process and the files it keeps say, read from the system:
//! the process tree under `/proc`, Claude Code's status file and the Codex
//! transcript it holds open. Everything here does I/O, so it runs in a look on a
//! blocking thread ([`super::tracker`]); what the bytes mean is decided by the
//! pure functions of [`super::detect`]. Linux: the process table is `/proc`.

use super::detect::{self, SessionFile, MAX_SESSION_FILE};
use std::io::Read as _;
use std::path::PathBuf;

/// Processes looked at below a pane's process, at most.
const MAX_PROCESSES: usize = 64;
/// Threads of one process whose children are read, at most.
const MAX_THREADS: usize = 256;
/// Open files of one process looked at for a transcript, at most.
const MAX_FDS: usize = 1024;

/// Reads Claude Code's status file for the pane's process or one of its
/// descendants (a shell may have started it): where it is, and what it says.
pub fn claude_session_file(pid: u32) -> Option<(PathBuf, SessionFile)> {
    process_and_descendants(pid).into_iter().find_map(read_session_file)
}

/// Claude Code's status file at `path` (`<config>/sessions/<pid>.json`, found
/// before), read without walking the process tree again; `None` if it is gone
/// or no longer that process's.
pub fn claude_session_file_at(path: &std::path::Path) -> Option<SessionFile> {
    let pid: u32 = path.file_stem()?.to_str()?.parse().ok()?;
    read_status_file(path, pid)
}

/// The session of the Codex under process `pid`, and its transcript: Codex
/// keeps it (`~/.codex/sessions/.../rollout-<time>-<session id>.jsonl`) open
/// while it runs. `None` unless exactly one session is open.
pub fn codex_session(pid: u32) -> Option<(String, PathBuf)> {
    let mut ids: Vec<(String, PathBuf)> = Vec::new();
    for process in process_and_descendants(pid) {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{process}/fd")) else {
            continue;
        };
        for fd in fds.flatten().take(MAX_FDS) {
            let Ok(target) = std::fs::read_link(fd.path()) else {
                continue;
            };
            if let Some(id) = detect::rollout_session_id(&target.to_string_lossy()) {
                if !ids.iter().any(|(known, _)| *known == id) {
                    ids.push((id, target));
                }
            }
        }
    }
    match ids.len() {
        1 => ids.pop(),
        _ => None,
    }
}

/// `pid` and the processes below it, breadth-first and bounded: an agent is the
/// pane's process or close below it.
pub fn process_and_descendants(pid: u32) -> Vec<u32> {
    let mut found = vec![pid];
    let mut at = 0;
    while at < found.len() && found.len() < MAX_PROCESSES {
        // Each thread lists the children it started (Codex starts its app server
        // from a worker thread).
        let tasks = std::fs::read_dir(format!("/proc/{}/task", found[at]))
            .into_iter()
            .flatten();
        for task in tasks.flatten().take(MAX_THREADS) {
            let children = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            found.extend(children.split_whitespace().filter_map(|c| c.parse::<u32>().ok()));
        }
        at += 1;
    }
    found.truncate(MAX_PROCESSES);
    found
}

/// Claude Code's status file of process `pid` (`$CLAUDE_CONFIG_DIR` or
/// `~/.claude`, as that process sees it, then `sessions/<pid>.json`).
fn read_session_file(pid: u32) -> Option<(PathBuf, SessionFile)> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let var = |name: &str| {
        environ
            .split(|b| *b == 0)
            .find_map(|v| v.strip_prefix(format!("{name}=").as_bytes()))
            .map(|v| String::from_utf8_lossy(v).into_owned())
    };
    let config = var("CLAUDE_CONFIG_DIR").or_else(|| var("HOME").map(|h| format!("{h}/.claude")))?;
    let path = PathBuf::from(format!("{config}/sessions/{pid}.json"));
    let file = read_status_file(&path, pid)?;
    Some((path, file))
}

/// The status file at `path`, if process `pid` wrote it (its start time matches).
fn read_status_file(path: &std::path::Path, pid: u32) -> Option<SessionFile> {
    let file = std::fs::File::open(path).ok()?;
    // One byte past the cap tells a file that is too large from one that fits.
    let mut bytes = Vec::new();
    file.take(MAX_SESSION_FILE as u64 + 1).read_to_end(&mut bytes).ok()?;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command (in parentheses, which may hold anything), field 22.
    let start_ticks = stat.rsplit(')').next()?.split_whitespace().nth(19)?;
    detect::parse_session_file(&bytes, start_ticks)
}
