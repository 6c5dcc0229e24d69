//! Tells a pane's watcher when a process under its pane ends, without polling:
//! a pidfd for each process followed (the unprivileged way; the kernel's
//! process events need CAP_NET_ADMIN), waited on by the runtime's reactor. A
//! process starting needs no watch of its own: the one that starts it is
//! followed, and a new agent draws on the terminal, which is output.

use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// Processes followed per pane, at most: an agent is the pane's process or
/// close below it, and its tools come and go below that.
const MAX_FOLLOWED: usize = 16;

/// The processes of one pane followed, by pid.
#[derive(Default)]
pub struct ProcessWatch {
    followed: HashMap<u32, JoinHandle<()>>,
    ended: Arc<Notify>,
}

impl ProcessWatch {
    /// Follows the first [`MAX_FOLLOWED`] of `pids` (the pane's process first)
    /// and lets go of any other. A process that cannot be opened (gone already,
    /// or no pidfd on this kernel) is not followed. Call it on the runtime.
    pub fn follow(&mut self, pids: &[u32]) {
        let wanted: Vec<u32> = pids.iter().copied().take(MAX_FOLLOWED).collect();
        self.followed.retain(|pid, task| {
            let keep = wanted.contains(pid) && !task.is_finished();
            if !keep {
                task.abort();
            }
            keep
        });
        for pid in wanted {
            if self.followed.contains_key(&pid) {
                continue;
            }
            if let Some(task) = wait_for_end(pid, self.ended.clone()) {
                self.followed.insert(pid, task);
            }
        }
    }

    /// Resolves once a followed process ended since the last call.
    pub async fn ended(&self) {
        self.ended.notified().await;
    }
}

impl Drop for ProcessWatch {
    fn drop(&mut self) {
        self.followed.values().for_each(JoinHandle::abort);
    }
}

/// A task that wakes `ended` when process `pid` ends (its pidfd turns readable).
fn wait_for_end(pid: u32, ended: Arc<Notify>) -> Option<JoinHandle<()>> {
    let pid = rustix::process::Pid::from_raw(i32::try_from(pid).ok()?)?;
    let fd = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()?;
    let fd = crate::terminal::fd::register(fd, tokio::io::Interest::READABLE).ok()?;
    Some(tokio::spawn(async move {
        if fd.readable().await.is_ok() {
            ended.notify_one();
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_followed_process_ending_wakes_the_watch() {
        let mut long = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let mut short = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let mut watch = ProcessWatch::default();
        watch.follow(&[long.id(), short.id()]);
        let quiet = tokio::time::timeout(Duration::from_millis(200), watch.ended()).await;
        assert!(quiet.is_err(), "woke with both processes running");
        short.kill().unwrap();
        short.wait().unwrap();
        let woke = tokio::time::timeout(Duration::from_secs(5), watch.ended()).await;
        assert!(woke.is_ok(), "the end of a followed process did not wake the watch");
        // No longer followed: its end is not heard.
        watch.follow(&[]);
        long.kill().unwrap();
        long.wait().unwrap();
        let quiet = tokio::time::timeout(Duration::from_millis(200), watch.ended()).await;
        assert!(quiet.is_err(), "woke for a process no longer followed");
    }
}
