//! Everything a pane keeps of its output, behind one per-pane lock: the raw log,
//! the text view, the screen model, and the subscribers that follow it live.
//!
//! The PTY reader thread feeds it; requests read it. Subscribers get output through
//! bounded queues: one that falls behind is not waited for. Its queue overflows,
//! it is marked lagged and skipped, and once it has drained its queue it is
//! resynchronised with a redraw of the screen (what tmux does), so a stalled client
//! costs a fixed amount of memory and never slows the pane.

use crate::agent;
use crate::output::{OutputLog, TextLines};
use crate::screen::{Captured, FeedReport, LineRange, Screen};
use fugue_protocol::{AgentInfo, AgentState};
use fugue_protocol::{CaptureWhat, PaneSize, ReadMode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};

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
    /// When output last arrived (or the pane started).
    last_output: Instant,
    /// Bumped with the log's end offset on every chunk, for waiters.
    changes: watch::Sender<u64>,
    /// The last agent state seen, and since when (Unix ms).
    agent_seen: Option<(AgentState, u64)>,
}

impl PaneOutput {
    pub fn new(limits: OutputLimits, size: PaneSize) -> Self {
        Self {
            log: OutputLog::new(limits.log_bytes),
            text: TextLines::new(limits.text_lines, limits.text_bytes),
            screen: Screen::new(size, limits.scrollback_lines, limits.scrollback_bytes),
            subscribers: Vec::new(),
            next_subscriber: 1,
            last_output: Instant::now(),
            changes: watch::channel(0).0,
            agent_seen: None,
        }
    }

    /// Takes one chunk of PTY output. Returns the emulator's answers to terminal
    /// queries, which the caller writes back to the PTY.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<u8> {
        self.log.push(bytes);
        self.text.push(bytes, self.log.end());
        let FeedReport { replies, title, bells } = self.screen.feed(bytes);
        self.last_output = Instant::now();
        self.changes.send_replace(self.log.end());
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

    /// Notified with the log's end offset whenever output arrives.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    pub fn end_offset(&self) -> u64 {
        self.log.end()
    }

    /// How long no output has arrived.
    pub fn quiet_for(&self) -> Duration {
        self.last_output.elapsed()
    }

    pub fn find_in_output(&self, pattern: &regex::Regex, since: u64) -> (Option<String>, u64) {
        self.text.find(pattern, since)
    }

    pub fn find_on_screen(&self, pattern: &regex::Regex) -> Option<String> {
        let lines = self.capture(CaptureWhat::Screen, None, None, false, false).lines;
        lines
            .iter()
            .find_map(|line| pattern.find(line).map(|m| m.as_str().to_string()))
    }

    /// What the agent CLI in the pane (if any) is doing.
    pub fn agent_status(&mut self, command: &[String], exited: bool) -> AgentInfo {
        let screen = self.capture(CaptureWhat::Screen, None, None, false, false).lines;
        let Some(kind) = agent::detect_kind(command, &screen) else {
            // No agent recognised (yet): busy while output flows, idle once quiet.
            let state = match (exited, self.quiet_for() >= agent::IDLE_SETTLE) {
                (true, _) => AgentState::Exited,
                (false, true) => AgentState::Idle,
                (false, false) => AgentState::Busy,
            };
            return AgentInfo {
                agent: None,
                state,
                since_ms: self.seen(state),
                evidence: Vec::new(),
            };
        };
        let (state, evidence) = agent::detect_state(kind, &screen, self.quiet_for(), exited);
        AgentInfo {
            agent: Some(kind),
            state,
            since_ms: self.seen(state),
            evidence,
        }
    }

    fn seen(&mut self, state: AgentState) -> u64 {
        match self.agent_seen {
            Some((seen, since)) if seen == state => since,
            _ => {
                let now = crate::config::now_ms();
                self.agent_seen = Some((state, now));
                now
            }
        }
    }
}
