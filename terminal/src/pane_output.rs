//! Everything a pane keeps of its output, in three parts so the PTY drain never
//! waits on parsing and the two parsers run side by side:
//!
//! - the *log* (the raw log), appended to by the PTY reader task;
//! - the *text view*, fed from the reader through the emulation pool
//!   ([`crate::feed`]);
//! - the *screen side* (screen model, and the subscribers that follow the pane
//!   live), fed by the pool with the same chunks once the text view has them. The
//!   scrollback stores lines the text view also holds by reference, so the text
//!   view may run ahead of the screen but never behind it.
//!
//! Subscribers hang off the screen side so a redraw and the output after it are
//! always consistent. They get output through bounded queues: one that falls
//! behind is not waited for. Its queue overflows, it is marked lagged and skipped,
//! and once it has drained its queue it is resynchronised with a redraw of the
//! screen (what tmux does), so a stalled client costs a fixed amount of memory
//! and never slows the pane.
//!
//! Locks are taken in the order screen side, then text view.

use crate::output::{LogSnapshot, OutputLog, SearchBatch, TextLines, TextSnapshot};
use crate::raw_log::LogFile;
use crate::reports::{Notice, Report, ReportScanner, TerminalSignals};
use crate::screen::{Captured, FeedReport, LineRange, Screen, ScreenSnapshot, SharedText};
use crate::sync::lock;
use bytes::Bytes;
use fugue_protocol::{CaptureWhat, PaneSize, ReadMode};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};

/// Largest read reply, so a reply always fits in a frame.
pub use fugue_protocol::limits::MAX_READ_BYTES;
/// Events queued per subscriber before it counts as lagging.
pub const SUBSCRIBER_QUEUE: usize = 256;
/// Output bytes queued per subscriber before it counts as lagging: a stalled
/// attached client costs at most this much, however fast the pane writes.
pub const SUBSCRIBER_BYTES: usize = 1024 * 1024;

/// Sizes of a pane's buffers.
#[derive(Clone, Copy, Debug)]
pub struct OutputLimits {
    pub log_bytes: usize,
    pub text_lines: usize,
    pub text_bytes: usize,
    pub scrollback_lines: usize,
    pub scrollback_bytes: usize,
}

impl Default for OutputLimits {
    /// A pane's buffers as fugued sizes them unless told otherwise.
    fn default() -> Self {
        use super::{output, screen};
        Self {
            log_bytes: output::DEFAULT_BYTE_LIMIT,
            text_lines: output::DEFAULT_TEXT_LINES,
            text_bytes: output::DEFAULT_TEXT_BYTES,
            scrollback_lines: screen::DEFAULT_SCROLLBACK_LINES,
            scrollback_bytes: screen::DEFAULT_SCROLLBACK_BYTES,
        }
    }
}

/// A pane's output as it is handed to an upgraded daemon: the raw log, the text
/// view and the screen, with the offsets that go on from there.
#[derive(Serialize, Deserialize)]
pub struct OutputSnapshot {
    log: LogSnapshot,
    text: TextSnapshot,
    screen: ScreenSnapshot,
    /// Log offset the screen had seen.
    fed: u64,
}

/// What a subscriber receives, in order.
#[derive(Clone, Debug)]
pub enum PaneEvent {
    Output(Bytes),
    Title(String),
    Bell,
}

/// The consumer's end of a subscription.
pub struct Subscription {
    pub id: u64,
    pub events: mpsc::Receiver<PaneEvent>,
    /// Set when events were dropped; cleared by [`PaneOutput::resync`].
    pub lagged: Arc<AtomicBool>,
    /// Output bytes queued and not yet taken; see [`Subscription::took`].
    pub queued: Arc<AtomicUsize>,
}

impl Subscription {
    /// The consumer took `event` off the queue.
    pub fn took(&self, event: &PaneEvent) {
        if let PaneEvent::Output(bytes) = event {
            self.queued.fetch_sub(bytes.len(), Ordering::AcqRel);
        }
    }
}

struct Subscriber {
    id: u64,
    queue: mpsc::Sender<PaneEvent>,
    lagged: Arc<AtomicBool>,
    queued: Arc<AtomicUsize>,
}

/// What a read returns; the request adds the pane's info.
pub struct ReadResult {
    pub data: Vec<u8>,
    pub lines: Vec<String>,
    pub start_offset: u64,
    pub next_offset: u64,
    pub truncated: bool,
}

struct ScreenSide {
    screen: Screen,
    /// Log offset just past the last byte the screen has seen.
    fed: u64,
    subscribers: Vec<Subscriber>,
    next_subscriber: u64,
    /// When output last reached the screen (or the pane started).
    last_output: Instant,
    /// The pane's current process has drawn something: until then the screen
    /// is a previous process's (see [`PaneOutput::process_starting`]). A flag,
    /// not a comparison of clocks: the process is spawned before the daemon
    /// notes its start time, and a fast program has drawn by then.
    drawn: bool,
    /// Finds what the program tells its terminal about itself (notifications,
    /// its status, its title).
    report_scanner: ReportScanner,
    /// Notifications found and not yet taken by the pane's watcher.
    notices: Vec<Notice>,
    /// Its last status and title, for the agent detector.
    signals: TerminalSignals,
}

/// Raw output replayed into a recovered pane's screen and text view at most.
pub const REPLAY_BYTES: usize = 4 * 1024 * 1024;

/// The part of a pane's raw log a recovery would replay: log offsets
/// `start..end`, at most `window` bytes.
#[derive(Clone, Copy, Debug)]
pub struct Replayable {
    pub start: u64,
    pub end: u64,
    pub window: u64,
}

/// What a checkpoint kept of the text view: its last complete lines, and the
/// log offset it had seen.
pub struct SavedText {
    pub lines: Vec<String>,
    pub fed: u64,
}

/// Notifications kept for the watcher at most; a program printing more faster
/// than they are reported loses the oldest.
const MAX_PENDING_NOTICES: usize = 16;

impl ScreenSide {
    /// Keeps what the scanner found: notifications for the watcher, the latest
    /// status and title for the agent detector.
    fn take_reports(&mut self, found: Vec<Report>) {
        for report in found {
            match report {
                Report::Notice(notice) => self.notices.push(notice),
                Report::Status(status) => self.signals.status = Some(status),
                Report::Title(title) => self.signals.title = Some(title),
            }
        }
        let excess = self.notices.len().saturating_sub(MAX_PENDING_NOTICES);
        self.notices.drain(..excess);
    }
}

pub struct PaneOutput {
    log: Mutex<OutputLog>,
    text: Mutex<TextLines>,
    screen: Mutex<ScreenSide>,
    /// The scrollback caps, to rebuild a screen after an emulator failure.
    limits: OutputLimits,
    /// The screen's size, readable without waiting for the emulator.
    size: AtomicU32,
    /// Bumped whenever either side changes, for waiters.
    changes: watch::Sender<u64>,
    /// Wakes the pane's watcher: the program told its terminal something (a
    /// notification, its status, its title).
    reported: tokio::sync::Notify,
}

fn pack_size(size: PaneSize) -> u32 {
    (size.cols as u32) << 16 | size.rows as u32
}

impl PaneOutput {
    pub fn new(limits: OutputLimits, size: PaneSize) -> Self {
        Self {
            log: Mutex::new(OutputLog::new(limits.log_bytes)),
            limits,
            text: Mutex::new(TextLines::new(limits.text_lines, limits.text_bytes)),
            screen: Mutex::new(ScreenSide {
                screen: Screen::new(size, limits.scrollback_lines, limits.scrollback_bytes),
                fed: 0,
                subscribers: Vec::new(),
                next_subscriber: 1,
                last_output: Instant::now(),
                // A pane handed over by a live upgrade keeps its process, whose
                // screen this is; a new process clears it in process_starting.
                drawn: true,
                report_scanner: ReportScanner::default(),
                notices: Vec::new(),
                signals: TerminalSignals::default(),
            }),
            size: AtomicU32::new(pack_size(fugue_protocol::limits::clamp_size(size))),
            changes: watch::channel(0).0,
            reported: tokio::sync::Notify::new(),
        }
    }

    /// A chunk into the raw log (the PTY reader). Returns the log offset just past
    /// it, which goes with the chunk to [`PaneOutput::push_text`] and
    /// [`PaneOutput::push_screen`].
    pub fn push_log(&self, bytes: &[u8]) -> u64 {
        let mut log = lock(&self.log);
        log.push(bytes);
        log.end()
    }

    /// A chunk that ends at log offset `end` into the text view (the pool's first
    /// stage).
    pub fn push_text(&self, chunk: &[u8], end: u64) {
        lock(&self.text).push(chunk, end);
        self.changes.send_modify(|n| *n += 1);
    }

    /// The same chunk into the emulator and out to subscribers (the pool's second
    /// stage, after [`PaneOutput::push_text`]). Returns the emulator's answers to
    /// terminal queries, for the PTY.
    pub fn push_screen(&self, chunk: Bytes, end: u64) -> Vec<u8> {
        self.push_screen_batch(vec![(chunk, end)])
    }

    /// Consecutive chunks, each with the log offset just past it, into the
    /// emulator at once: the screen's fast path skips drawing the lines that
    /// scroll away within what it is fed together, and a PTY read holds at most
    /// 4 KB, about one screenful.
    pub fn push_screen_batch(&self, batch: Vec<(Bytes, u64)>) -> Vec<u8> {
        let Some(&(_, end)) = batch.last() else {
            return Vec::new();
        };
        let joined = match &batch[..] {
            [(chunk, _)] => chunk.clone(),
            _ => {
                let mut joined = Vec::with_capacity(batch.iter().map(|(chunk, _)| chunk.len()).sum());
                for (chunk, _) in &batch {
                    joined.extend_from_slice(chunk);
                }
                Bytes::from(joined)
            }
        };
        let replies = {
            let mut side = lock(&self.screen);
            let shared = SharedText {
                lines: &self.text,
                upto: end,
            };
            let report = side.screen.feed_sharing(&joined, Some(shared));
            side.fed = end;
            side.last_output = Instant::now();
            side.drawn = true;
            for (chunk, _) in &batch {
                let found = side.report_scanner.scan(chunk);
                if !found.is_empty() {
                    side.take_reports(found);
                    self.reported.notify_one();
                }
            }
            if !side.subscribers.is_empty() {
                for (chunk, _) in batch {
                    side.broadcast(PaneEvent::Output(chunk));
                }
            }
            side.announce(report)
        };
        self.changes.send_modify(|n| *n += 1);
        replies
    }

    /// When a synchronized update that has not ended is due to be shown anyway.
    pub fn sync_deadline(&self) -> Option<Instant> {
        lock(&self.screen).screen.sync_deadline()
    }

    /// Shows a synchronized update that is past its deadline; returns the deadline
    /// still pending, if the program extended the update. Answers to terminal
    /// queries it held go back like [`PaneOutput::push_screen`]'s.
    pub fn end_overdue_sync(&self) -> (Vec<u8>, Option<Instant>) {
        let (replies, pending) = {
            let mut side = lock(&self.screen);
            let shared = SharedText {
                lines: &self.text,
                upto: side.fed,
            };
            let report = side.screen.end_overdue_sync(Some(shared));
            (side.announce(report), side.screen.sync_deadline())
        };
        self.changes.send_modify(|n| *n += 1);
        (replies, pending)
    }

    /// The screen's rows (with SGR attributes), the text view's last
    /// `text_lines` complete lines and the log offset the text view had seen:
    /// what is kept of a pane when its process ends or the daemon goes away
    /// (the raw log kept in the state directory has the rest, see
    /// [`PaneOutput::recover`]).
    pub fn saved(&self, text_lines: u32) -> (Vec<String>, Vec<String>, u64) {
        let screen = self
            .capture(CaptureWhat::Screen, None, None, true, false)
            .captured
            .lines;
        let text = lock(&self.text);
        (
            screen,
            text.complete_lines(text_lines as usize, MAX_READ_BYTES),
            text.fed(),
        )
    }

    /// What a recovery after a crash would replay of the raw log (see
    /// [`PaneOutput::recover`]), if the log is kept in a file.
    pub fn replayable(&self) -> Option<Replayable> {
        let log = lock(&self.log);
        log.kept_in_file().then(|| {
            let window = log.capacity().min(REPLAY_BYTES) as u64;
            Replayable {
                start: log.start().max(log.end().saturating_sub(window)),
                end: log.end(),
                window,
            }
        })
    }

    /// From now on keeps the raw log in the file `path` (see
    /// [`OutputLog::keep_in`]); on failure it stays in memory.
    /// The file is made without the log's lock (the reader goes on meanwhile);
    /// blocking file system work: call it off the runtime's workers.
    pub fn keep_log_in(&self, path: &std::path::Path) {
        let kept = LogFile::create(path, self.limits.log_bytes).and_then(|file| lock(&self.log).adopt(file));
        if let Err(err) = kept {
            tracing::warn!(path = %path.display(), %err, "cannot keep a pane's output in the state directory; it is kept in memory");
        }
    }

    /// A pane's output after a crash of the daemon: the raw log it kept in the
    /// state directory (every byte read before the crash) and the last
    /// checkpoint. The text view is the checkpoint's lines and then the log's
    /// text after them; the screen is the log replayed (its last
    /// [`REPLAY_BYTES`]), so the last lines printed before the crash are there.
    pub fn recover(limits: OutputLimits, size: PaneSize, saved: Option<&SavedText>, log: OutputLog) -> Self {
        let output = Self::new(limits, size);
        let (start, end) = (log.start(), log.end());
        let replay_from = start.max(end.saturating_sub(REPLAY_BYTES as u64));
        let replay = log.read_since(replay_from, REPLAY_BYTES).data;
        // Where the log's text takes over from the checkpoint's: after the last
        // line feed the checkpoint had seen, if the log still has it.
        let text_from = match saved {
            Some(saved) if (replay_from..=end).contains(&saved.fed) => {
                let seen = &replay[..(saved.fed - replay_from) as usize];
                replay_from + memchr::memrchr(b'\n', seen).map_or(0, |i| i as u64 + 1)
            }
            _ => replay_from,
        };
        {
            let mut text = lock(&output.text);
            if let Some(saved) = saved {
                let mut lines = String::new();
                for line in &saved.lines {
                    lines.push_str(line);
                    lines.push('\n');
                }
                text.push(lines.as_bytes(), text_from);
            }
            text.push(&replay[(text_from - replay_from) as usize..], end);
        }
        {
            let mut side = lock(&output.screen);
            let _ = side.screen.feed(&replay);
            side.fed = end;
        }
        *lock(&output.log) = log;
        output
    }

    /// Everything kept of the output, for [`PaneOutput::from_snapshot`]. Taken
    /// when nothing feeds the pane any more (its reader has stopped and the pool
    /// has caught up), so the three parts agree.
    pub fn snapshot(&self) -> OutputSnapshot {
        let mut side = lock(&self.screen);
        let text = lock(&self.text);
        OutputSnapshot {
            log: lock(&self.log).snapshot(),
            text: text.snapshot(),
            screen: side.screen.snapshot(),
            fed: side.fed,
        }
    }

    /// The output of a snapshot; `None` if its screen does not hold together.
    pub fn from_snapshot(limits: OutputLimits, snapshot: OutputSnapshot) -> Option<Self> {
        let screen = Screen::from_snapshot(snapshot.screen)?;
        let output = Self::new(limits, screen.size());
        *lock(&output.log) = OutputLog::from_snapshot(snapshot.log, limits.log_bytes);
        *lock(&output.text) = TextLines::from_snapshot(snapshot.text);
        let mut side = lock(&output.screen);
        side.screen = screen;
        side.fed = snapshot.fed;
        drop(side);
        Some(output)
    }

    /// A pane's output brought back from [`PaneOutput::saved`]: the rows drawn on
    /// a screen of `size` and the lines in the text view (the raw log starts empty).
    pub fn from_saved(limits: OutputLimits, size: PaneSize, screen: &[String], text: &[String]) -> Self {
        let output = Self::new(limits, size);
        let mut lines = String::new();
        for line in text {
            lines.push_str(line);
            lines.push('\n');
        }
        lock(&output.text).push(lines.as_bytes(), 0);
        let mut rows = String::from("\x1b[H\x1b[2J");
        for (row, line) in screen.iter().enumerate().take(size.rows as usize) {
            rows.push_str(&format!("\x1b[{};1H{line}", row + 1));
        }
        lock(&output.screen).screen.feed(rows.as_bytes());
        output
    }

    /// All three at once, for callers without the pool (benchmarks, tests).
    pub fn push(&self, bytes: &[u8]) -> Vec<u8> {
        let end = self.push_log(bytes);
        self.push_text(bytes, end);
        self.push_screen(Bytes::copy_from_slice(bytes), end)
    }

    /// Replaces a screen whose emulator failed on the output up to log offset
    /// `end` with a blank one of the same size; the text view, the raw log and
    /// the subscribers stay. That output counts as seen, so readers waiting for
    /// the screen to catch up (a capture) do not wait for it.
    pub fn rebuild_screen(&self, end: u64) {
        let mut side = lock(&self.screen);
        let size = side.screen.size();
        side.screen = Screen::new(size, self.limits.scrollback_lines, self.limits.scrollback_bytes);
        side.fed = side.fed.max(end);
        drop(side);
        self.changes.send_modify(|n| *n += 1);
    }

    /// Gives back memory a quiet pane no longer needs (the emulator's row cache).
    pub fn trim(&self) {
        lock(&self.screen).screen.trim();
    }

    /// Adds a subscriber; returns it with the redraw that brings it up to date.
    /// Taken under the screen lock, so nothing falls between the two.
    pub fn subscribe(&self) -> (Subscription, Vec<u8>) {
        let mut side = lock(&self.screen);
        let id = side.next_subscriber;
        side.next_subscriber += 1;
        let (queue, events) = mpsc::channel(SUBSCRIBER_QUEUE);
        let lagged = Arc::new(AtomicBool::new(false));
        let queued = Arc::new(AtomicUsize::new(0));
        side.subscribers.push(Subscriber {
            id,
            queue,
            lagged: lagged.clone(),
            queued: queued.clone(),
        });
        (
            Subscription {
                id,
                events,
                lagged,
                queued,
            },
            side.screen.redraw(),
        )
    }

    pub fn unsubscribe(&self, id: u64) {
        lock(&self.screen).subscribers.retain(|s| s.id != id);
    }

    /// A redraw for a subscriber that lagged; from here on it gets output again.
    pub fn resync(&self, lagged: &AtomicBool) -> Vec<u8> {
        let side = lock(&self.screen);
        lagged.store(false, Ordering::Release);
        side.screen.redraw()
    }

    pub fn resize(&self, size: PaneSize) {
        // The screen's lock, then the text view's, as a feed takes them.
        let mut side = lock(&self.screen);
        side.screen.resize(size, Some(&lock(&self.text)));
        self.size.store(pack_size(side.screen.size()), Ordering::Release);
        drop(side);
        self.changes.send_modify(|n| *n += 1);
    }

    pub fn size(&self) -> PaneSize {
        let packed = self.size.load(Ordering::Acquire);
        PaneSize {
            cols: (packed >> 16) as u16,
            rows: packed as u16,
        }
    }

    /// Whether the program asked for focus in/out reports (mode 1004).
    pub fn focus_events(&self) -> bool {
        lock(&self.screen).screen.focus_events()
    }

    /// How the program wants keys sent: cursor-key mode and kitty keyboard flags.
    pub fn key_mode(&self) -> fugue_protocol::keys::KeyMode {
        let screen = &lock(&self.screen).screen;
        fugue_protocol::keys::KeyMode {
            app_cursor: screen.application_cursor(),
            kitty_flags: screen.kitty_keyboard_flags(),
        }
    }

    pub fn bracketed_paste(&self) -> bool {
        lock(&self.screen).screen.bracketed_paste()
    }

    pub fn read(&self, mode: ReadMode) -> ReadResult {
        match mode {
            ReadMode::Raw { since, max_bytes } => {
                let max = max_bytes.map_or(MAX_READ_BYTES, |m| (m as usize).min(MAX_READ_BYTES));
                let log = lock(&self.log);
                let read = match since {
                    Some(since) => log.read_since(since, max),
                    None => log.tail(max),
                };
                ReadResult {
                    data: read.data,
                    lines: Vec::new(),
                    start_offset: read.start_offset,
                    next_offset: read.next_offset,
                    truncated: read.truncated,
                }
            }
            ReadMode::Text { lines, since } => {
                let text = lock(&self.text);
                let read = text.read(lines as usize, since, MAX_READ_BYTES);
                ReadResult {
                    data: Vec::new(),
                    lines: read.lines,
                    start_offset: since.unwrap_or(0),
                    next_offset: text.fed(),
                    truncated: read.truncated,
                }
            }
        }
    }

    /// Lines of `what`, narrowed by `start`/`end` (tmux's -S/-E numbering), with
    /// the screen's state.
    pub fn capture(&self, what: CaptureWhat, start: Option<i64>, end: Option<i64>, ansi: bool, join: bool) -> Capture {
        let side = lock(&self.screen);
        let text = lock(&self.text);
        Capture {
            captured: capture(&side.screen, &text, what, start, end, ansi, join),
            state: ScreenState::of(&side.screen),
        }
    }

    /// A new process is about to start in the pane (called before it is
    /// spawned): until it draws, the screen and what was told to the terminal
    /// are a previous process's, and its agent state must not come from them.
    pub fn process_starting(&self) {
        let mut side = lock(&self.screen);
        side.drawn = false;
        side.signals = TerminalSignals::default();
    }

    /// Notified whenever output arrives or the screen changes.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Log offset up to which the screen has seen the output (the text view may
    /// be further on; see [`PaneOutput::text_offset`]).
    pub fn end_offset(&self) -> u64 {
        lock(&self.screen).fed
    }

    /// Log offset up to which the text view has seen the output.
    pub fn text_offset(&self) -> u64 {
        lock(&self.text).fed()
    }

    /// Waits, at most `within`, until the screen has seen the output the text
    /// view had when called. The text view runs ahead of the screen (see
    /// [`crate::feed`]): a client that waited for a pattern in the
    /// output and then reads the screen must find it there.
    pub async fn screen_catch_up(&self, within: Duration) {
        let target = self.text_offset();
        // Subscribed before the first look: a screen update after it wakes us.
        let mut changes = self.changes();
        let deadline = tokio::time::Instant::now() + within;
        while self.end_offset() < target {
            match tokio::time::timeout_at(deadline, changes.changed()).await {
                Ok(Ok(())) => {}
                // Past the deadline (a flood keeps the screen behind), or the
                // pane is gone: the screen as it is.
                _ => return,
            }
        }
    }

    /// How long no output has reached the screen.
    pub fn quiet_for(&self) -> Duration {
        lock(&self.screen).last_output.elapsed()
    }

    /// Lines of the text view after log offset `since`, for a search that
    /// began at `began`, to search (see
    /// [`TextLines::search_batch`]), and how far the text view had seen the
    /// output: the screen shows a match in them once it is this far too.
    pub fn search_batch(&self, since: u64, began: u64, max_bytes: usize) -> (SearchBatch, u64) {
        let text = lock(&self.text);
        (text.search_batch(since, began, max_bytes), text.fed())
    }

    /// Numbered lines for a grep (see [`TextLines::numbered_lines`]): copied
    /// out under the lock, searched outside it.
    pub fn numbered_lines(&self, from: u64, max_bytes: usize) -> crate::output::NumberedLines {
        lock(&self.text).numbered_lines(from, max_bytes)
    }

    /// Whether a client is attached to the pane (a person, or a browser tab).
    pub fn attached(&self) -> bool {
        !lock(&self.screen).subscribers.is_empty()
    }

    /// The visible screen's rows as text.
    pub fn screen_text(&self) -> Vec<String> {
        lock(&self.screen).screen.visible_text()
    }

    /// What the agent detector reads of the screen, in one look under its lock.
    pub fn agent_inputs(&self) -> AgentInputs {
        let side = lock(&self.screen);
        AgentInputs {
            screen: side.screen.visible_text(),
            quiet: side.last_output.elapsed(),
            last_output: side.last_output,
            drawn: side.drawn,
            watched: !side.subscribers.is_empty(),
            signals: side.signals.clone(),
            cursor: {
                let (row, col, _) = side.screen.cursor();
                (row, col)
            },
        }
    }

    /// Resolves when the program told its terminal something since the last call.
    pub async fn reported(&self) {
        self.reported.notified().await
    }

    /// The notifications found since the last call.
    pub fn take_notices(&self) -> Vec<Notice> {
        std::mem::take(&mut lock(&self.screen).notices)
    }
}

/// What the agent detector reads of a pane (see [`PaneOutput::agent_inputs`]).
pub struct AgentInputs {
    /// The visible screen's rows.
    pub screen: Vec<String>,
    /// How long no output has reached the screen, and when it last did.
    pub quiet: Duration,
    pub last_output: Instant,
    /// The current process has drawn (see [`PaneOutput::process_starting`]).
    pub drawn: bool,
    /// A client is attached, so a person sees a turn end.
    pub watched: bool,
    /// What the current process last told its terminal about itself.
    pub signals: TerminalSignals,
    /// The cursor's row and column on the screen (an agent's caret).
    pub cursor: (u16, u16),
}

/// A capture and the screen state that goes with it.
pub struct Capture {
    pub captured: Captured,
    pub state: ScreenState,
}

pub struct ScreenState {
    pub cursor: (u16, u16, bool),
    pub size: PaneSize,
    pub alternate_screen: bool,
    pub title: String,
    pub scrollback_lines: usize,
}

impl ScreenState {
    fn of(screen: &Screen) -> Self {
        Self {
            cursor: screen.cursor(),
            size: screen.size(),
            alternate_screen: screen.alternate_screen(),
            title: screen.title().to_string(),
            scrollback_lines: screen.scrollback_len(),
        }
    }
}

fn capture(
    screen: &Screen,
    text: &TextLines,
    what: CaptureWhat,
    start: Option<i64>,
    end: Option<i64>,
    ansi: bool,
    join: bool,
) -> Captured {
    let rows = screen.size().rows as i64;
    let history = screen.scrollback_len() as i64;
    let (from, to) = match what {
        CaptureWhat::Screen => (0, rows - 1),
        CaptureWhat::Scrollback => (-history, -1),
        CaptureWhat::All => (-history, rows - 1),
    };
    if what == CaptureWhat::Scrollback && history == 0 && start.is_none() && end.is_none() {
        return Captured {
            lines: Vec::new(),
            first_line: 0,
        };
    }
    screen.capture_sharing(
        LineRange {
            start: start.unwrap_or(from),
            end: end.unwrap_or(to),
        },
        ansi,
        join,
        Some(text),
    )
}

impl ScreenSide {
    /// Tells subscribers of a new title and bells the emulator saw; returns its
    /// answers to terminal queries, for the PTY.
    fn announce(&mut self, report: FeedReport) -> Vec<u8> {
        let FeedReport { replies, title, bells } = report;
        if let Some(title) = title {
            self.broadcast(PaneEvent::Title(title));
        }
        if bells > 0 {
            self.broadcast(PaneEvent::Bell);
        }
        replies
    }

    fn broadcast(&mut self, event: PaneEvent) {
        self.subscribers.retain(|sub| {
            if sub.lagged.load(Ordering::Acquire) {
                return !sub.queue.is_closed();
            }
            let bytes = match &event {
                PaneEvent::Output(bytes) => bytes.len(),
                _ => 0,
            };
            if sub.queued.load(Ordering::Acquire) + bytes > SUBSCRIBER_BYTES {
                sub.lagged.store(true, Ordering::Release);
                return !sub.queue.is_closed();
            }
            // Counted before it is queued, so the consumer never subtracts first.
            sub.queued.fetch_add(bytes, Ordering::AcqRel);
            match sub.queue.try_send(event.clone()) {
                Ok(()) => true,
                Err(mpsc::error::TrySendError::Full(_)) => {
                    sub.queued.fetch_sub(bytes, Ordering::AcqRel);
                    sub.lagged.store(true, Ordering::Release);
                    true
                }
                Err(mpsc::error::TrySendError::Closed(_)) => false,
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A capture after a wait on the text view shows what the wait saw: it
    /// waits for the screen stage, and for no longer than it is told.
    #[tokio::test]
    async fn the_screen_catches_up_with_the_text_view() {
        let out = Arc::new(output(10, 10));
        let chunk = b"seen in the text\r\n";
        let end = out.push_log(chunk);
        out.push_text(chunk, end);
        assert!(out.end_offset() < out.text_offset());

        let start = Instant::now();
        out.screen_catch_up(Duration::from_millis(100)).await;
        assert!(
            start.elapsed() >= Duration::from_millis(100),
            "returned before its deadline"
        );

        let waiter = tokio::spawn({
            let out = out.clone();
            async move { out.screen_catch_up(Duration::from_secs(30)).await }
        });
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        out.push_screen(Bytes::from_static(chunk), end);
        tokio::time::timeout(Duration::from_secs(10), waiter)
            .await
            .expect("the screen caught up")
            .unwrap();
        let screen = out
            .capture(CaptureWhat::Screen, None, None, false, false)
            .captured
            .lines;
        assert_eq!(screen[0], "seen in the text");

        // Output the emulator failed on counts as seen once the screen is rebuilt.
        let chunk = b"the emulator fails\r\n";
        let end = out.push_log(chunk);
        out.push_text(chunk, end);
        out.rebuild_screen(end);
        tokio::time::timeout(Duration::from_secs(10), out.screen_catch_up(Duration::from_secs(30)))
            .await
            .expect("a rebuilt screen has caught up");
    }

    fn output(text_lines: usize, scrollback_lines: usize) -> PaneOutput {
        let limits = OutputLimits {
            log_bytes: 1 << 20,
            text_lines,
            text_bytes: 1 << 20,
            scrollback_lines,
            scrollback_bytes: 1 << 20,
        };
        PaneOutput::new(limits, PaneSize { cols: 20, rows: 3 })
    }

    fn scrollback(out: &PaneOutput) -> Vec<String> {
        out.capture(CaptureWhat::Scrollback, None, None, false, false)
            .captured
            .lines
    }

    #[test]
    fn scrollback_and_text_view_share_plain_lines() {
        // The text view keeps 5 lines, the scrollback 50: lines the text view no
        // longer shows stay readable in the scrollback, and nothing is stored twice.
        let out = output(5, 50);
        for i in 0..40 {
            out.push(format!("line {i}\r\n").as_bytes());
        }
        out.push("a much longer line that wraps\r\n".as_bytes());
        for i in 40..43 {
            out.push(format!("line {i}\r\n").as_bytes());
        }
        let lines = scrollback(&out);
        let mut expected: Vec<String> = (0..40).map(|i| format!("line {i}")).collect();
        expected.extend(["a much longer line t".to_string(), "hat wraps".to_string()]);
        expected.push("line 40".into());
        assert_eq!(lines, expected);
        assert!(
            lock(&out.screen).screen.oldest_shared_line() == Some(0),
            "plain lines are shared"
        );
        let text = lock(&out.text);
        assert_eq!(text.line(0), Some("line 0"));
        let read = text.read(100, None, usize::MAX);
        assert_eq!(
            read.lines,
            vec![
                "line 39",
                "a much longer line that wraps",
                "line 40",
                "line 41",
                "line 42"
            ]
        );
        assert!(read.truncated);
    }

    #[test]
    fn lines_are_freed_once_neither_needs_them() {
        let out = output(5, 3);
        for i in 0..100 {
            out.push(format!("{i}\r\n").as_bytes());
        }
        assert_eq!(scrollback(&out), vec!["95", "96", "97"]);
        let text = lock(&out.text);
        assert!(text.line(90).is_none(), "line 90 is in neither");
        assert_eq!(text.line(95), Some("95"));
    }

    #[test]
    fn a_text_view_ahead_of_the_screen_still_shares_its_lines() {
        // The pool's text stage runs ahead of the screen stage: lines the text view
        // completed later must not be taken for the ones scrolling off now.
        // More lines ahead than the screen's matching window (rows + 256).
        let ahead = output(2000, 2000);
        let chunks: Vec<(Vec<u8>, u64)> = (0..1000)
            .map(|i| {
                let chunk = format!("row {}\r\n", i % 20).into_bytes();
                let end = ahead.push_log(&chunk);
                (chunk, end)
            })
            .collect();
        for (chunk, end) in &chunks {
            ahead.push_text(chunk, *end);
        }
        for (chunk, end) in chunks {
            ahead.push_screen(Bytes::from(chunk), end);
        }
        let in_order = output(2000, 2000);
        for i in 0..1000 {
            in_order.push(format!("row {}\r\n", i % 20).as_bytes());
        }
        assert_eq!(scrollback(&ahead), scrollback(&in_order));
        // Every scrolled-off line refers to the text view, each to its own line.
        let screen = lock(&ahead.screen);
        assert_eq!(screen.screen.oldest_shared_line(), Some(0));
        let scrolled = screen.screen.scrollback_len() as u64;
        assert_eq!(screen.screen.shared_lines(), (0..scrolled).collect::<Vec<_>>());
    }

    #[test]
    fn output_that_differs_from_the_text_view_is_copied() {
        let out = output(100, 100);
        // Drawn with cursor addressing: the text view has no such lines.
        out.push(b"\x1b[1;1Htop\x1b[3;1Hbottom\r\n\r\n\r\n");
        assert_eq!(scrollback(&out), vec!["top", "", "bottom"]);
    }
}
