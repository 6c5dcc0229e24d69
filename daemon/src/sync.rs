//! Locking that survives a panic, and blocking work that cannot grow the
//! thread count.

pub(crate) use fugue_terminal::sync::lock;
use tokio::sync::Semaphore;

/// Making a pane's output log file (open, size, reserve, map).
pub(crate) static FILE_WORK: Semaphore = Semaphore::const_new(1);
/// Looking at an agent (reads /proc and its status file).
pub(crate) static AGENT_LOOKS: Semaphore = Semaphore::const_new(2);
/// Paired devices and push subscriptions: their files written whole (fsync).
pub(crate) static KEPT_FILES: Semaphore = Semaphore::const_new(1);
/// Resolving a push endpoint's host (DNS may take seconds).
pub(crate) static PUSH_LOOKUPS: Semaphore = Semaphore::const_new(2);

/// Runs `work` on tokio's blocking pool, at most as many at a time as `gate`
/// has permits: a burst (1000 panes created at once, as many agents redrawing)
/// waits its turn instead of growing the pool by a thread per task (it grew
/// the daemon to 60 threads creating 1000 panes). `None` if the work panicked.
pub(crate) async fn off_runtime<T: Send + 'static>(
    gate: &'static Semaphore,
    work: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let _turn = gate.acquire().await.ok()?;
    tokio::task::spawn_blocking(work).await.ok()
}
