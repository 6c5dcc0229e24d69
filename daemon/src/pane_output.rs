//! Everything a pane keeps of its output, behind one per-pane lock: the raw log,
//! the text view, the screen model, and the subscribers that follow it live.
//!
//! The PTY reader thread feeds it; requests read it. Subscribers get output through
//! bounded queues: one that falls behind is not waited for. Its queue overflows,
//! it is marked lagged and skipped, and once it has drained its queue it is
//! resynchronised with a redraw of the screen (what tmux does), so a stalled client
//! costs a fixed amount of memory and never slows the pane.

use crate::output::{OutputLog, TextLines};
use crate::screen::{Captured, FeedReport, LineRange, Screen};
use fugue_protocol::{CaptureWhat, PaneSize, ReadMode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::sync::mpsc;

/// Largest read reply, so a reply always fits in a frame.
pub const MAX_READ_BYTES: usize = 8 * 1024 * 1024;
/// Events queued per subscriber before it counts as lagging.
pub const SUBSCRIBER_QUEUE: usize = 256;

/// Sizes of a pane's buffers.
#[derive(Clone, Copy, Debug)]
pub struct OutputLimits {
    pub log_bytes: usize,
    pub text_lines: usize,
    pub text_bytes: usize,
    pub scrollback_lines: usize,
    pub scrollback_bytes: usize,
}

/// What a subscriber receives, in order.
#[derive(Clone, Debug)]
pub enum PaneEvent {
    Output(Vec<u8>),
    Title(String),
    Bell,
}

/// The consumer's end of a subscription.
pub struct Subscription {
    pub id: u64,
    pub events: mpsc::Receiver<PaneEvent>,
    /// Set when events were dropped; cleared by [`PaneOutput::resync`].
    pub lagged: Arc<AtomicBool>,
}

struct Subscriber {
    id: u64,
    queue: mpsc::Sender<PaneEvent>,
    lagged: Arc<AtomicBool>,
}

/// What a read returns; the request adds the pane's info.
pub struct ReadResult {
    pub data: Vec<u8>,
    pub lines: Vec<String>,
    pub start_offset: u64,
    pub next_offset: u64,
    pub truncated: bool,
}

pub struct PaneOutput {
    log: OutputLog,
    text: TextLines,
    screen: Screen,
    subscribers: Vec<Subscriber>,
    next_subscriber: u64,
}

impl PaneOutput {
    pub fn new(limits: OutputLimits, size: PaneSize) -> Self {
        Self {
            log: OutputLog::new(limits.log_bytes),
            text: TextLines::new(limits.text_lines, limits.text_bytes),
            screen: Screen::new(size, limits.scrollback_lines, limits.scrollback_bytes),
            subscribers: Vec::new(),
            next_subscriber: 1,
        }
    }

    /// Takes one chunk of PTY output. Returns the emulator's answers to terminal
    /// queries, which the caller writes back to the PTY.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<u8> {
        self.log.push(bytes);
        self.text.push(bytes, self.log.end());
        let FeedReport { replies, title, bells } = self.screen.feed(bytes);
        if !self.subscribers.is_empty() {
            self.broadcast(PaneEvent::Output(bytes.to_vec()));
            if let Some(title) = title {
                self.broadcast(PaneEvent::Title(title));
            }
            if bells > 0 {
                self.broadcast(PaneEvent::Bell);
            }
        }
        replies
    }

    fn broadcast(&mut self, event: PaneEvent) {
        self.subscribers.retain(|sub| {
            if sub.lagged.load(Ordering::Acquire) {
                return !sub.queue.is_closed();
            }
            match sub.queue.try_send(event.clone()) {
                Ok(()) => true,
                Err(mpsc::error::TrySendError::Full(_)) => {
                    sub.lagged.store(true, Ordering::Release);
                    true
                }
                Err(mpsc::error::TrySendError::Closed(_)) => false,
            }
        });
    }

    /// Adds a subscriber; returns it with the redraw that brings it up to date.
    /// Taken under the same lock as output, so nothing falls between the two.
    pub fn subscribe(&mut self) -> (Subscription, Vec<u8>) {
        let id = self.next_subscriber;
        self.next_subscriber += 1;
        let (queue, events) = mpsc::channel(SUBSCRIBER_QUEUE);
        let lagged = Arc::new(AtomicBool::new(false));
        self.subscribers.push(Subscriber {
            id,
            queue,
            lagged: lagged.clone(),
        });
        (Subscription { id, events, lagged }, self.screen.redraw())
    }

    pub fn unsubscribe(&mut self, id: u64) {
        self.subscribers.retain(|s| s.id != id);
    }

    /// A redraw for a subscriber that lagged; from here on it gets output again.
    pub fn resync(&mut self, lagged: &AtomicBool) -> Vec<u8> {
        lagged.store(false, Ordering::Release);
        self.screen.redraw()
    }

    pub fn resize(&mut self, size: PaneSize) {
        self.screen.resize(size);
    }

    pub fn size(&self) -> PaneSize {
        self.screen.size()
    }

    pub fn application_cursor(&self) -> bool {
        self.screen.application_cursor()
    }

    pub fn bracketed_paste(&self) -> bool {
        self.screen.bracketed_paste()
    }

    pub fn read(&self, mode: ReadMode) -> ReadResult {
        match mode {
            ReadMode::Raw { since, max_bytes } => {
                let max = max_bytes.map_or(MAX_READ_BYTES, |m| (m as usize).min(MAX_READ_BYTES));
                let read = match since {
                    Some(since) => self.log.read_since(since, max),
                    None => self.log.tail(max),
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
                let read = self.text.read(lines as usize, since, MAX_READ_BYTES);
                ReadResult {
                    data: Vec::new(),
                    lines: read.lines,
                    start_offset: since.unwrap_or(0),
                    next_offset: self.log.end(),
                    truncated: read.truncated,
                }
            }
        }
    }

    /// Lines of `what`, narrowed by `start`/`end` (tmux's -S/-E numbering).
    pub fn capture(&self, what: CaptureWhat, start: Option<i64>, end: Option<i64>, ansi: bool, join: bool) -> Captured {
        let rows = self.screen.size().rows as i64;
        let history = self.screen.scrollback_len() as i64;
        let (from, to) = match what {
            CaptureWhat::Screen => (0, rows - 1),
            CaptureWhat::Scrollback => (-history, -1),
            CaptureWhat::All => (-history, rows - 1),
        };
        let range = LineRange {
            start: start.unwrap_or(from),
            end: end.unwrap_or(to),
        };
        if what == CaptureWhat::Scrollback && history == 0 && start.is_none() && end.is_none() {
            return Captured {
                lines: Vec::new(),
                first_line: 0,
            };
        }
        self.screen.capture(range, ansi, join)
    }

    pub fn screen(&self) -> &Screen {
        &self.screen
    }
}
