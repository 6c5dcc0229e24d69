//! A pane's process: learning that it ended, and ending it.
//!
//! Each process is watched through its pidfd, which the runtime polls like any
//! other descriptor: no thread per child, and no `waitpid(-1)` that could steal
//! another part of the program's children. When the pidfd turns readable the
//! process is reaped with `waitpid` on its own pid, and its exit code or signal is
//! published on a watch channel: the one record of "the process has been reaped".
//! Signals go to process groups with `killpg`.

use fugue_protocol::ExitStatus;
use rustix::process::{Pid, WaitOptions};
use std::os::fd::OwnedFd;
use std::time::Duration;
use tokio::io::Interest;
use tokio::sync::watch;

/// `None` while the process runs; its exit once it has been reaped.
pub type Reaped = watch::Receiver<Option<ExitStatus>>;

/// Sends `signal` to a process group; errors (group already gone) are expected
/// and ignored.
#[allow(unsafe_code)]
pub fn signal_group(pgid: i32, signal: i32) {
    if pgid > 0 {
        // SAFETY: killpg takes plain integers and has no memory-safety preconditions.
        unsafe {
            libc::killpg(pgid, signal);
        }
    }
}

/// When process `pid` started, in clock ticks after boot (`/proc/PID/stat`
/// field 22): with the pid, it names one process even after the pid is reused.
pub fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold anything.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Whether process `pid` has `name=value` in its environment.
/// The value of variable `name` in process `pid`'s environment as it started.
pub fn env_var(pid: u32, name: &str) -> Option<String> {
    let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let prefix = format!("{name}=");
    env.split(|b| *b == 0)
        .find_map(|var| var.strip_prefix(prefix.as_bytes()))
        .and_then(|value| String::from_utf8(value.to_vec()).ok())
}

pub fn has_env(pid: u32, name: &str, value: &str) -> bool {
    let wanted = format!("{name}={value}");
    std::fs::read(format!("/proc/{pid}/environ"))
        .map(|env| env.split(|b| *b == 0).any(|var| var == wanted.as_bytes()))
        .unwrap_or(false)
}

/// Kills and reaps a process that was started but will not become a pane (its
/// set-up failed half way). Blocking; used on the spawner thread only.
pub struct KillOnDrop(pub u32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        signal_group(self.0 as i32, libc::SIGKILL);
        if let Some(pid) = Pid::from_raw(self.0 as i32) {
            let _ = rustix::process::waitpid(Some(pid), WaitOptions::empty());
        }
    }
}

fn exit_status(status: rustix::process::WaitStatus) -> ExitStatus {
    ExitStatus {
        code: status.exit_status(),
        signal: status.terminating_signal(),
    }
}

/// Reaps `pid` if it has ended; `None` while it runs.
fn try_reap(pid: Pid) -> Option<ExitStatus> {
    loop {
        match rustix::process::waitpid(Some(pid), WaitOptions::NOHANG) {
            Ok(Some((_, status))) => return Some(exit_status(status)),
            Ok(None) => return None,
            Err(rustix::io::Errno::INTR) => continue,
            Err(err) => {
                // ECHILD: not ours to reap (cannot happen for a pane); report it as ended.
                tracing::error!(pid = pid.as_raw_nonzero().get(), %err, "waitpid failed");
                return Some(ExitStatus {
                    code: None,
                    signal: None,
                });
            }
        }
    }
}

/// The watch on one process's exit.
pub struct ExitWatch {
    pub reaped: Reaped,
    stop: tokio_util::sync::CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl ExitWatch {
    /// Stops watching without reaping (the process is being handed to an
    /// upgraded daemon, which watches it from then on). Returns the exit if the
    /// process was reaped before the watch stopped.
    pub async fn stop(self) -> Option<ExitStatus> {
        self.stop.cancel();
        let _ = self.task.await;
        *self.reaped.borrow()
    }
}

/// Starts watching `pid` through `pidfd`; [`ExitWatch::reaped`] turns `Some`
/// once the process has been reaped. Must be called inside the runtime.
pub fn watch_exit(pid: u32, pidfd: OwnedFd) -> ExitWatch {
    let (reaped, receiver) = watch::channel(None);
    let stop = tokio_util::sync::CancellationToken::new();
    let Some(pid) = Pid::from_raw(pid as i32) else {
        reaped.send_replace(Some(ExitStatus {
            code: None,
            signal: None,
        }));
        return ExitWatch {
            reaped: receiver,
            stop,
            task: tokio::spawn(async {}),
        };
    };
    let stopped = stop.clone();
    let task = tokio::spawn(async move {
        let wait = async {
            match crate::fd::register(pidfd, Interest::READABLE) {
                Ok(pidfd) => loop {
                    match pidfd.readable().await {
                        Ok(mut ready) => match try_reap(pid) {
                            Some(status) => break status,
                            None => ready.clear_ready(),
                        },
                        Err(err) => {
                            tracing::error!(%err, "cannot poll a pidfd; waiting on a blocking thread");
                            break wait_blocking(pid).await;
                        }
                    }
                },
                Err(err) => {
                    tracing::error!(%err, "cannot register a pidfd; waiting on a blocking thread");
                    wait_blocking(pid).await
                }
            }
        };
        tokio::select! {
            biased;
            _ = stopped.cancelled() => {}
            status = wait => {
                reaped.send_replace(Some(status));
            }
        }
    });
    ExitWatch {
        reaped: receiver,
        stop,
        task,
    }
}

/// A pidfd for `pid`, a child this process did not start in its current image
/// (handed over by the daemon it replaced).
pub fn open_pidfd(pid: u32) -> std::io::Result<OwnedFd> {
    let pid = Pid::from_raw(pid as i32).ok_or_else(|| std::io::Error::other("pid 0"))?;
    Ok(rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty())?)
}

async fn wait_blocking(pid: Pid) -> ExitStatus {
    let waited = tokio::task::spawn_blocking(move || loop {
        match rustix::process::waitpid(Some(pid), WaitOptions::empty()) {
            Ok(Some((_, status))) => return exit_status(status),
            Err(rustix::io::Errno::INTR) | Ok(None) => continue,
            Err(_) => {
                return ExitStatus {
                    code: None,
                    signal: None,
                }
            }
        }
    });
    waited.await.unwrap_or(ExitStatus {
        code: None,
        signal: None,
    })
}

/// Owns a pane's process group for signalling. Until the process is reaped,
/// dropping it hangs the group up and kills it after a grace period, so a pane that
/// goes away by any path (release, session destroyed, actor killed) never leaves
/// its process behind.
pub struct ProcessGuard {
    pid: u32,
    /// Cleared when the process is handed over: dropping then leaves it alone.
    armed: bool,
    reaped: Reaped,
    /// Time between the hang-up on drop and SIGKILL.
    grace: Duration,
}

impl ProcessGuard {
    pub fn new(pid: u32, reaped: Reaped, grace: Duration) -> Self {
        Self {
            pid,
            armed: true,
            reaped,
            grace,
        }
    }

    /// Lets go of the process without ending it (it is being handed over).
    pub fn disarm(mut self) {
        self.armed = false;
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    pub fn has_exited(&self) -> bool {
        self.reaped.borrow().is_some()
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
        let mut reaped = self.reaped.clone();
        let escalate = move |reaped: &Reaped| {
            if reaped.borrow().is_none() {
                for pgid in &groups {
                    signal_group(*pgid, libc::SIGKILL);
                }
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn(async move {
                    let ended = reaped.wait_for(|r| r.is_some());
                    if tokio::time::timeout(grace, ended).await.is_err() {
                        escalate(&reaped);
                    }
                });
            }
            Err(_) => escalate(&reaped),
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
