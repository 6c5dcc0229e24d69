//! The emulation pool: a few threads (one per core) that feed every pane's output
//! to its text view and terminal emulator.
//!
//! A pane's PTY reader only appends to the raw log and queues the chunk here, so
//! draining a PTY never waits on emulation. Each chunk goes through two stages,
//! the text view and then the screen, which the pool runs as separate jobs: while
//! one worker emulates a chunk another can already parse the next into the text
//! view, so one busy pane uses two cores. Each pane's queue is bounded in bytes
//! ([`FEED_BYTES`]): a reader that gets that far ahead waits (that pane only)
//! until the pool catches up, which is what keeps a flooding pane's memory
//! bounded. The text view runs at most [`TEXT_LEAD`] ahead of the screen, so the
//! lines the scrollback will share with it are still there when it needs them.
//! Jobs take turns: a worker takes at most [`QUANTUM`] bytes of one pane's stage,
//! then puts it at the back of the line, so a pane that floods cannot starve a
//! quiet one's screen updates.

use crate::pane_output::PaneOutput;
use crate::sync::lock;
use bytes::Bytes;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use tokio::sync::{mpsc, Notify};

/// Bytes queued per pane before its reader waits.
pub const FEED_BYTES: usize = 1024 * 1024;
/// Bytes of one pane a worker processes before it lets the next job go.
pub const QUANTUM: usize = 128 * 1024;
/// Bytes of queued chunks fed to the screen at once: lines that scroll away
/// within them are not drawn (a PTY read is at most 4 KB), and the screen is
/// locked for at most this much work.
pub const SCREEN_GROUP: usize = 64 * 1024;
/// While a pane floods (chunks come less than [`FLOOD_GAP`] apart), its chunks
/// wait for this many bytes, or [`FLOOD_GAP`] after the first of them, before the
/// pool takes them: the screen's fast path skips drawing lines that scroll away
/// within what it is fed together, which a single read (at most 4 KB, about a
/// screenful) rarely holds, and the pool's threads wake once a batch instead of
/// twice a read. Output after a pause (keystroke echoes, a frame) goes at once.
pub const FLOOD_BATCH: usize = 32 * 1024;
pub const FLOOD_GAP: std::time::Duration = std::time::Duration::from_millis(1);
/// Bytes the text view may have seen that the screen has not.
pub const TEXT_LEAD: usize = 256 * 1024;

/// The two stages a chunk goes through, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Text,
    Screen,
}

#[derive(Default)]
struct FeedState {
    /// Chunks read and the log offset just past each, waiting for the text view.
    to_text: VecDeque<(Bytes, u64)>,
    /// Chunks the text view has, waiting for the screen.
    to_screen: VecDeque<(Bytes, u64)>,
    /// Bytes in both queues.
    bytes: usize,
    /// Bytes in `to_screen` and in the screen job (the text view's lead).
    lead: usize,
    /// Each stage is in the pool's queue or being worked on.
    text_scheduled: bool,
    screen_scheduled: bool,
    /// The PTY reached its end; no more chunks will come.
    closed: bool,
    drained_reported: bool,
    /// A task waits to show a synchronized update that has not ended.
    sync_timer: bool,
    /// When the last chunk was queued, and whether the one before came less
    /// than [`FLOOD_GAP`] earlier.
    last_chunk: Option<std::time::Instant>,
    flooding: bool,
    /// A task waits to hand the pool what a flood queued so far.
    batch_timer: bool,
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
    /// Runs the timers for synchronized updates that outstay their deadline.
    runtime: tokio::runtime::Handle,
}

impl PaneFeed {
    /// Called on the runtime (the feed's timers run there).
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
            runtime: tokio::runtime::Handle::current(),
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
                    let now = std::time::Instant::now();
                    state.flooding = state.last_chunk.is_some_and(|last| now - last < FLOOD_GAP);
                    state.last_chunk = Some(now);
                    if let Some(chunk) = chunk.take() {
                        state.bytes += chunk.len();
                        state.to_text.push_back((chunk, end));
                    }
                    self.schedule_text(state);
                    return;
                }
            }
            space.await;
        }
    }

    /// Whether output is queued or being processed (the screen is not yet current).
    pub fn busy(&self) -> bool {
        let state = lock(&self.state);
        state.text_scheduled || state.screen_scheduled || !state.to_screen.is_empty()
    }

    /// The PTY ended: once the queue is processed, `on_drained` runs.
    pub fn close(self: &Arc<Self>) {
        let mut state = lock(&self.state);
        state.closed = true;
        if !state.to_text.is_empty() {
            // Held for a batch: the text view goes on at once, then the screen.
            self.schedule(state, Stage::Text);
        } else if !state.text_scheduled && !state.screen_scheduled {
            // Nothing in flight: let a screen job find the queues empty and report.
            self.schedule(state, Stage::Screen);
        }
    }

    /// Puts `stage` in the pool's queue unless it is there or running already.
    fn schedule(self: &Arc<Self>, mut state: MutexGuard<'_, FeedState>, stage: Stage) {
        let scheduled = match stage {
            Stage::Text => &mut state.text_scheduled,
            Stage::Screen => &mut state.screen_scheduled,
        };
        if *scheduled {
            return;
        }
        *scheduled = true;
        drop(state);
        pool().submit(self.clone(), stage);
    }

    /// Schedules the text stage for a chunk the reader queued, or, while the
    /// pane floods and less than [`FLOOD_BATCH`] waits, lets the chunks gather
    /// for up to [`FLOOD_GAP`].
    fn schedule_text(self: &Arc<Self>, mut state: MutexGuard<'_, FeedState>) {
        let waiting = state.bytes - state.lead;
        if !state.flooding || waiting >= FLOOD_BATCH {
            self.schedule(state, Stage::Text);
            return;
        }
        if state.batch_timer || state.text_scheduled {
            return;
        }
        state.batch_timer = true;
        drop(state);
        let feed = self.clone();
        self.runtime.spawn(async move {
            tokio::time::sleep(FLOOD_GAP).await;
            let mut state = lock(&feed.state);
            state.batch_timer = false;
            if !state.to_text.is_empty() {
                feed.schedule(state, Stage::Text);
            }
        });
    }

    /// Runs up to a quantum of `stage`; true if that stage has more to do now (the
    /// caller requeues it). Each stage catches its parser's panics itself; this
    /// is the last guard, so nothing a pane does can take a thread (and every
    /// other pane's screen) with it, and a panic counts as more to do: the stage
    /// is requeued, not left scheduled and never run.
    fn run(self: &Arc<Self>, stage: Stage) -> bool {
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match stage {
            Stage::Text => self.run_text(),
            Stage::Screen => self.run_screen(),
        }));
        ran.unwrap_or_else(|_| {
            tracing::error!(?stage, "the emulation pool caught a panic");
            true
        })
    }

    fn run_text(self: &Arc<Self>) -> bool {
        let mut done = 0;
        loop {
            let next = {
                let mut state = lock(&self.state);
                if done >= QUANTUM || state.lead >= TEXT_LEAD {
                    None
                } else {
                    state.to_text.pop_front()
                }
            };
            let Some((chunk, end)) = next else { break };
            // The chunk goes on to the screen whatever happens here, so the byte
            // counts stay right even if the text view fails.
            let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.output.push_text(&chunk, end)));
            if parsed.is_err() {
                tracing::error!("the text view panicked on a chunk of output");
            }
            done += chunk.len();
            // Handed on while more text waits, so the screen starts while this
            // stage runs; in a flood, once a batch is together or this job ends.
            let mut state = lock(&self.state);
            state.lead += chunk.len();
            state.to_screen.push_back((chunk, end));
            let more_text = !state.to_text.is_empty();
            if (!state.flooding && more_text) || state.lead >= FLOOD_BATCH {
                self.schedule(state, Stage::Screen);
            }
        }
        let mut state = lock(&self.state);
        // Requeued only if it can go on; a full lead waits for the screen job,
        // which schedules this stage again as it makes room.
        if !state.to_text.is_empty() && state.lead < TEXT_LEAD {
            return true;
        }
        state.text_scheduled = false;
        if state.screen_scheduled {
            return false;
        }
        if state.to_screen.is_empty() {
            // A screen job may have taken the last chunks while this one ran, and
            // left the report of a closed, drained queue to this job.
            self.report_if_drained(state);
            return false;
        }
        // The screen stage goes on in this thread: handing it to another woke
        // that one for every frame a TUI draws (most of the pool's wake-ups).
        state.screen_scheduled = true;
        drop(state);
        if self.run(Stage::Screen) {
            pool().submit(self.clone(), Stage::Screen);
        }
        false
    }

    fn run_screen(self: &Arc<Self>) -> bool {
        let batch: Vec<(Bytes, u64)> = {
            let mut state = lock(&self.state);
            let mut taken = 0;
            let mut batch = Vec::new();
            while taken < QUANTUM {
                let Some((chunk, end)) = state.to_screen.pop_front() else {
                    break;
                };
                taken += chunk.len();
                batch.push((chunk, end));
            }
            batch
        };
        for group in groups(batch) {
            let len: usize = group.iter().map(|(chunk, _)| chunk.len()).sum();
            let end = group.last().map_or(0, |(_, end)| *end);
            // The byte counts below must stay right whatever happens here: a count
            // left too high would hold this pane's reader and text view forever.
            let fed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.output.push_screen_batch(group)));
            match fed {
                Ok(answer) => self.reply(answer),
                Err(_) => {
                    tracing::error!("emulation panicked; the pane's screen is rebuilt");
                    self.output.rebuild_screen(end);
                }
            }
            let mut state = lock(&self.state);
            state.bytes -= len;
            state.lead -= len;
            if !state.to_text.is_empty() && state.lead < TEXT_LEAD {
                self.schedule(state, Stage::Text);
            }
            self.space.notify_waiters();
        }
        let mut state = lock(&self.state);
        if !state.to_screen.is_empty() {
            return true;
        }
        if !state.sync_timer {
            if let Some(due) = self.output.sync_deadline() {
                state.sync_timer = true;
                self.runtime.spawn(self.clone().show_overdue_sync(due));
            }
        }
        state.screen_scheduled = false;
        self.report_if_drained(state);
        false
    }

    /// Runs `on_drained` once the PTY has closed and neither stage has anything
    /// queued or running. Both stages call it as they finish, since either can be
    /// the last.
    fn report_if_drained(&self, mut state: MutexGuard<'_, FeedState>) {
        let idle =
            state.to_text.is_empty() && state.to_screen.is_empty() && !state.text_scheduled && !state.screen_scheduled;
        let report = state.closed && idle && !state.drained_reported;
        state.drained_reported |= report;
        drop(state);
        if report {
            if let Some(on_drained) = lock(&self.on_drained).take() {
                on_drained();
            }
        }
    }

    /// A program that asked the terminal something waits for the answer. Never
    /// block for it: a full input queue drops the reply.
    fn reply(&self, answer: Vec<u8>) {
        if !answer.is_empty() && self.replies.try_send(answer).is_err() {
            tracing::debug!("input queue full; terminal query reply dropped");
        }
    }

    /// Shows a synchronized update once it is overdue (a program that began a
    /// frame and stopped), following the deadline while the program extends it.
    async fn show_overdue_sync(self: Arc<Self>, mut due: std::time::Instant) {
        loop {
            tokio::time::sleep_until(due.into()).await;
            let (answer, pending) = self.output.end_overdue_sync();
            self.reply(answer);
            // Decided under the feed's lock, so a screen job that starts a new
            // update either sees this timer or starts its own.
            let mut state = lock(&self.state);
            match pending.or_else(|| self.output.sync_deadline()) {
                Some(next) => due = next,
                None => {
                    state.sync_timer = false;
                    return;
                }
            }
        }
    }
}

/// The chunks of a batch in groups of at most [`SCREEN_GROUP`] bytes (or one
/// chunk), each fed to the screen at once.
fn groups(batch: Vec<(Bytes, u64)>) -> Vec<Vec<(Bytes, u64)>> {
    let mut groups: Vec<Vec<(Bytes, u64)>> = Vec::new();
    let mut bytes = 0;
    for (chunk, end) in batch {
        match groups.last_mut() {
            Some(group) if bytes + chunk.len() <= SCREEN_GROUP => {
                bytes += chunk.len();
                group.push((chunk, end));
            }
            _ => {
                bytes = chunk.len();
                groups.push(vec![(chunk, end)]);
            }
        }
    }
    groups
}

/// Panes with work, in turn order, and the threads that do it.
struct Pool {
    ready: Mutex<VecDeque<(Arc<PaneFeed>, Stage)>>,
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
    fn submit(&self, feed: Arc<PaneFeed>, stage: Stage) {
        lock(&self.ready).push_back((feed, stage));
        self.wake.notify_one();
    }

    fn work(&self) {
        loop {
            let (feed, stage) = {
                let mut ready = lock(&self.ready);
                loop {
                    if let Some(job) = ready.pop_front() {
                        break job;
                    }
                    ready = self.wake.wait(ready).unwrap_or_else(|p| p.into_inner());
                }
            };
            if feed.run(stage) {
                self.submit(feed, stage);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pane_output::OutputLimits;
    use fugue_protocol::{CaptureWhat, PaneSize, ReadMode};
    use std::time::Duration;

    const SIZE: PaneSize = PaneSize { cols: 40, rows: 10 };

    fn everything(output: &PaneOutput) -> (Vec<String>, Vec<String>) {
        let all = output
            .capture(CaptureWhat::All, None, None, false, false)
            .captured
            .lines;
        let text = output
            .read(ReadMode::Text {
                lines: 100_000,
                since: None,
            })
            .lines;
        (all, text)
    }

    /// Output that exercises both halves: plain lines (shared between the text view
    /// and the scrollback), long lines that wrap, and cursor-addressed redraws.
    fn mixed_output() -> Vec<Vec<u8>> {
        (0..3000)
            .map(|i| match i % 7 {
                0 => format!("\x1b[2;5Hframe {i}\x1b[10;1H\r\n").into_bytes(),
                1 => format!("{}\r\n", "wrapped-".repeat(12)).into_bytes(),
                _ => format!("line {i}\r\n").into_bytes(),
            })
            .collect()
    }

    /// A feed into `output` and what it reports: a message when drained, and
    /// the emulator's replies (kept open).
    fn feed_into(output: &Arc<PaneOutput>) -> (Arc<PaneFeed>, mpsc::Receiver<()>, mpsc::Receiver<Vec<u8>>) {
        let (replies, replies_rx) = mpsc::channel(16);
        let (drained, drained_rx) = mpsc::channel(1);
        let feed = PaneFeed::new(
            output.clone(),
            replies,
            Box::new(move || {
                let _ = drained.try_send(());
            }),
        );
        (feed, drained_rx, replies_rx)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_pipeline_ends_where_feeding_in_order_does() {
        let chunks = mixed_output();
        let limits = OutputLimits {
            scrollback_lines: 20_000,
            text_lines: 20_000,
            ..OutputLimits::default()
        };
        let sequential = PaneOutput::new(limits, SIZE);
        for chunk in &chunks {
            sequential.push(chunk);
        }

        let output = Arc::new(PaneOutput::new(limits, SIZE));
        let (feed, mut drained_rx, _replies) = feed_into(&output);
        for chunk in &chunks {
            let end = output.push_log(chunk);
            feed.push(Bytes::copy_from_slice(chunk), end).await;
        }
        feed.close();
        tokio::time::timeout(Duration::from_secs(30), drained_rx.recv())
            .await
            .expect("the pool drains the pane");
        assert!(!feed.busy());
        assert_eq!(output.end_offset(), sequential.end_offset());
        assert_eq!(output.text_offset(), output.end_offset());
        assert_eq!(everything(&output), everything(&sequential));
    }

    /// A pane that closes while its text job runs is reported drained however the
    /// two stages finish: a screen job that takes the last chunks before the text
    /// job ends leaves the report to that job (a missed report holds the pane's
    /// exit for a grace period).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_closed_feed_reports_drained() {
        for round in 0..300 {
            let output = Arc::new(PaneOutput::new(OutputLimits::default(), SIZE));
            let (feed, mut drained_rx, _replies) = feed_into(&output);
            for i in 0..(round % 7 + 1) {
                let chunk = format!("round {round} line {i}\r\n");
                let end = output.push_log(chunk.as_bytes());
                feed.push(Bytes::from(chunk), end).await;
            }
            feed.close();
            tokio::time::timeout(Duration::from_secs(10), drained_rx.recv())
                .await
                .unwrap_or_else(|_| panic!("round {round}: the feed never reported drained"));
            assert!(!feed.busy());
        }
    }
}
