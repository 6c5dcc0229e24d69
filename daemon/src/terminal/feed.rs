//! The emulation pool: a few threads (one per core) that feed every pane's output
//! to its text view and terminal emulator.
//!
//! A pane's PTY reader only appends to the raw log and queues the chunk here, so
//! draining a PTY never waits on emulation. Each pane has its own queue, bounded in
//! bytes ([`FEED_BYTES`]): a reader that gets that far ahead waits (that pane only)
//! until the pool catches up, which is what keeps a flooding pane's memory bounded.
//! Panes with queued output take turns: a worker takes at most [`QUANTUM`] bytes
//! of one pane, then puts it at the back of the line, so a pane that floods cannot
//! starve a quiet one's screen updates.

use crate::sync::lock;
use crate::terminal::pane_output::PaneOutput;
use bytes::Bytes;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use tokio::sync::{mpsc, Notify};

/// Bytes queued per pane before its reader waits.
pub const FEED_BYTES: usize = 1024 * 1024;
/// Bytes of one pane a worker processes before it lets the next pane go.
pub const QUANTUM: usize = 128 * 1024;

#[derive(Default)]
struct FeedState {
    /// Chunks and the log offset just past each.
    chunks: VecDeque<(Bytes, u64)>,
    bytes: usize,
    /// In the pool's queue or being worked on.
    scheduled: bool,
    /// The PTY reached its end; no more chunks will come.
    closed: bool,
    drained_reported: bool,
}

/// One pane's queue into the pool.
pub struct PaneFeed {
    state: Mutex<FeedState>,
    space: Notify,
    output: Arc<PaneOutput>,
    /// Where the emulator's answers to terminal queries go (the pane's input).
    replies: mpsc::Sender<Vec<u8>>,
    /// Called once, when the PTY has ended and everything read has been processed.
    on_drained: Mutex<Option<Box<dyn FnOnce() + Send>>>,
}

impl PaneFeed {
    pub fn new(
        output: Arc<PaneOutput>,
        replies: mpsc::Sender<Vec<u8>>,
        on_drained: Box<dyn FnOnce() + Send>,
    ) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(FeedState::default()),
            space: Notify::new(),
            output,
            replies,
            on_drained: Mutex::new(Some(on_drained)),
        })
    }

    /// Queues a chunk that ends at log offset `end`; waits while the queue is full.
    pub async fn push(self: &Arc<Self>, chunk: Bytes, end: u64) {
        let mut chunk = Some(chunk);
        loop {
            let space = self.space.notified();
            tokio::pin!(space);
            space.as_mut().enable();
            {
                let mut state = lock(&self.state);
                let len = chunk.as_ref().map_or(0, Bytes::len);
                if state.bytes == 0 || state.bytes + len <= FEED_BYTES {
                    if let Some(chunk) = chunk.take() {
                        state.bytes += chunk.len();
                        state.chunks.push_back((chunk, end));
                    }
                    self.schedule(state);
                    return;
                }
            }
            space.await;
        }
    }

    /// Whether output is queued or being processed (the screen is not yet current).
    pub fn busy(&self) -> bool {
        lock(&self.state).scheduled
    }

    /// The PTY ended: once the queue is processed, `on_drained` runs.
    pub fn close(self: &Arc<Self>) {
        let mut state = lock(&self.state);
        state.closed = true;
        self.schedule(state);
    }

    fn schedule(self: &Arc<Self>, mut state: MutexGuard<'_, FeedState>) {
        if state.scheduled {
            return;
        }
        state.scheduled = true;
        drop(state);
        pool().submit(self.clone());
    }

    /// Processes up to a quantum; true if more is queued (the caller requeues it).
    fn run(&self) -> bool {
        let batch: Vec<(Bytes, u64)> = {
            let mut state = lock(&self.state);
            let mut taken = 0;
            let mut batch = Vec::new();
            while taken < QUANTUM {
                let Some((chunk, end)) = state.chunks.pop_front() else {
                    break;
                };
                taken += chunk.len();
                batch.push((chunk, end));
            }
            state.bytes -= taken;
            batch
        };
        if !batch.is_empty() {
            self.space.notify_waiters();
        }
        for (chunk, end) in batch {
            let answer = self.output.push_screen(chunk, end);
            // A program that asked the terminal something waits for the answer.
            // Never block for it: a full input queue drops the reply.
            if !answer.is_empty() && self.replies.try_send(answer).is_err() {
                tracing::debug!("input queue full; terminal query reply dropped");
            }
        }
        let mut state = lock(&self.state);
        if !state.chunks.is_empty() {
            return true;
        }
        state.scheduled = false;
        let report = state.closed && !state.drained_reported;
        state.drained_reported |= report;
        drop(state);
        if report {
            if let Some(on_drained) = lock(&self.on_drained).take() {
                on_drained();
            }
        }
        false
    }
}

/// Panes with work, in turn order, and the threads that do it.
struct Pool {
    ready: Mutex<VecDeque<Arc<PaneFeed>>>,
    wake: Condvar,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<&'static Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let pool: &'static Pool = Box::leak(Box::new(Pool {
            ready: Mutex::new(VecDeque::new()),
            wake: Condvar::new(),
        }));
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 16);
        for n in 0..threads {
            let started = std::thread::Builder::new()
                .name(format!("emulate-{n}"))
                .stack_size(512 * 1024)
                .spawn(move || pool.work());
            if let Err(err) = started {
                tracing::error!(%err, "cannot start an emulation thread");
            }
        }
        pool
    })
}

impl Pool {
    fn submit(&self, feed: Arc<PaneFeed>) {
        lock(&self.ready).push_back(feed);
        self.wake.notify_one();
    }

    fn work(&self) {
        loop {
            let feed = {
                let mut ready = lock(&self.ready);
                loop {
                    if let Some(feed) = ready.pop_front() {
                        break feed;
                    }
                    ready = self.wake.wait(ready).unwrap_or_else(|p| p.into_inner());
                }
            };
            // One pane's emulator failing must not take the thread (and every other
            // pane's screen) with it.
            let more = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| feed.run())).unwrap_or_else(|_| {
                tracing::error!("emulation panicked; the pane's screen is rebuilt");
                feed.output.rebuild_screen();
                true
            });
            if more {
                self.submit(feed);
            }
        }
    }
}
