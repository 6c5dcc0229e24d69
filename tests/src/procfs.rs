//! What /proc says about a process: memory, CPU time, threads, children, whether
//! it is gone. Shared by the end-to-end tests and the benchmark.

/// Resident memory of a process in KiB (`VmRSS`).
pub fn rss_kib(pid: u32) -> u64 {
    status_kib(pid, "VmRSS:")
}

/// Resident memory of a process that is its own (`RssAnon`: heap and stacks),
/// in KiB: without the pages of files it maps (a pane's output log), which are
/// the page cache's to reclaim.
pub fn rss_anon_kib(pid: u32) -> u64 {
    status_kib(pid, "RssAnon:")
}

fn status_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// CPU time (user + system) a process has used, in milliseconds.
pub fn cpu_ms(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks: u64 = fields.get(11).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
        + fields.get(12).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    let per_sec = rustix::param::clock_ticks_per_second().max(1);
    ticks * 1000 / per_sec
}

/// CPU time a process's live threads have run, in microseconds: the
/// scheduler's own count (`/proc/PID/task/*/schedstat`), fine enough for a
/// process that runs a few microseconds a second (`cpu_ms` counts whole 10 ms
/// ticks). Threads that ended no longer count; compare stretches in which none do.
pub fn cpu_us(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("schedstat")).ok())
        .filter_map(|line| line.split_whitespace().next()?.parse::<u64>().ok())
        .sum::<u64>()
        / 1000
}

/// Threads in a process, from /proc.
pub fn threads(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// Direct children of `pid`, from /proc.
pub fn children(pid: u32) -> Vec<u32> {
    // Each thread has its own list (the daemon spawns from a thread of its own).
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .flat_map(|task| {
            std::fs::read_to_string(task.path().join("children"))
                .unwrap_or_default()
                .split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// Whether a process is gone (no such pid, or a zombie nobody reaped yet).
pub fn process_gone(pid: u32) -> bool {
    state(pid).is_none_or(|state| state == "Z")
}

/// Waits until process `pid` is gone (ended: a zombie or reaped), woken by
/// the kernel: a pidfd turns readable when its process ends, so nothing looks
/// on a clock. Panics with `what` after [`crate::DEADLINE`].
pub fn wait_gone(pid: u32, what: &str) {
    assert!(
        gone_within(pid, crate::DEADLINE),
        "timed out after {:?} waiting for {what}",
        crate::DEADLINE
    );
}

/// Whether process `pid` is gone within `timeout` (see [`wait_gone`]).
pub fn gone_within(pid: u32, timeout: std::time::Duration) -> bool {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let Some(target) = rustix::process::Pid::from_raw(pid as i32) else {
        return true;
    };
    // No such process to open: it was reaped already.
    let Ok(pidfd) = rustix::process::pidfd_open(target, rustix::process::PidfdFlags::empty()) else {
        return process_gone(pid);
    };
    let end = std::time::Instant::now() + timeout;
    loop {
        let left = end.saturating_duration_since(std::time::Instant::now());
        let wait = Timespec::try_from(left).unwrap_or(Timespec { tv_sec: 15, tv_nsec: 0 });
        let mut fds = [PollFd::new(&pidfd, PollFlags::IN)];
        match poll(&mut fds, Some(&wait)) {
            Ok(n) if n > 0 => return true,
            Err(rustix::io::Errno::INTR) => continue,
            _ if left.is_zero() || process_gone(pid) => return process_gone(pid),
            _ => continue,
        }
    }
}

/// Waits until `child` ends ([`wait_gone`]: woken by its pidfd) and reaps it.
pub fn wait_child(child: &mut std::process::Child, what: &str) -> std::process::ExitStatus {
    wait_gone(child.id(), what);
    child.wait().expect("reap the child")
}

/// Whether a process is a zombie (it ended and nobody reaped it yet).
pub fn is_zombie(pid: u32) -> bool {
    state(pid).is_some_and(|state| state == "Z")
}

/// The state letter in `/proc/PID/stat` (`R`, `S`, `Z`, ...); `None` if there is no such process.
fn state(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    Some(rest.split_whitespace().next().unwrap_or_default().to_string())
}

/// The command name of a process (`/proc/PID/comm`).
pub fn comm(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .unwrap_or_default()
        .trim()
        .to_string()
}
