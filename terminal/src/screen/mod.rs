//! The screen model: what a pane's terminal shows, and what scrolled off it.
//!
//! A terminal emulator (alacritty_terminal, chosen by measurement: ~90-100 MB/s on
//! this machine against vt100's ~40 MB/s) renders the output. Lines that scroll off
//! the top are taken out of the emulator after every slice of input and kept as
//! plain text in a compact ring, not as emulator cells: a 200-column row is ~4.8 KB
//! as cells and its length in bytes as text.
//!
//! The emulator also answers terminal queries (cursor position, device attributes,
//! colours); [`Screen::feed`] hands those replies back for the caller to write to
//! the PTY. This module knows nothing of PTYs or sockets.
//!
//! By job: this file holds the emulator and feeding it; `scrollback` the ring and
//! the moves between it and the emulator's history; `fast_path` plain lines that
//! skip the grid; `capture` reading the screen out (captures, the redraw);
//! `listener` what the emulator reports while it parses.

use crate::output::TextLines;
use crate::plain::PlainLine;
use alacritty_terminal::grid::{Dimensions, Row};
use alacritty_terminal::index::Line;
use alacritty_terminal::term::cell::Cell;
use alacritty_terminal::term::{Config, Term, TermMode, TermState};
use alacritty_terminal::vte::ansi::Processor;
use fugue_protocol::PaneSize;
use serde::{Deserialize, Serialize};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

mod capture;
mod fast_path;
mod listener;
mod scrollback;

pub use capture::{Captured, LineRange};
use fast_path::{line_end, slice_end, Skip};
use listener::{Listener, Reports};
use scrollback::Scrollback;

/// Lines of emulator history between harvests. Each input slice scrolls fewer
/// than 512; a synchronized update is held back and applied at once, so one can
/// scroll more (up to this many are kept; the buffer grows only when used).
const HISTORY: usize = 2048;
/// Input is fed in slices of at most this many bytes and line feeds, so one slice
/// cannot scroll more than [`HISTORY`] lines at widths of 10 columns and more.
const SLICE_BYTES: usize = 4096;
/// How many cells of scrollback a resize gives back to the emulator to rewrap
/// (at most half its history in lines): 1 024 lines at 200 columns, 26 at the
/// widest screen (10 000); 6 MB of cells for the moment of the resize.
const RESTORE_CELLS: usize = 256 * 1024;
const SLICE_LINE_FEEDS: usize = 128;
/// Rows of plain lines the fast path takes in at once: bounds the rows held as
/// text and the time the text view is locked to match them.
const PLAIN_ROWS: usize = HISTORY;
/// Default scrollback caps.
pub const DEFAULT_SCROLLBACK_LINES: usize = 10_000;
pub const DEFAULT_SCROLLBACK_BYTES: usize = 8 * 1024 * 1024;

struct Dims {
    cols: usize,
    lines: usize,
}

impl Dimensions for Dims {
    fn total_lines(&self) -> usize {
        self.lines
    }
    fn screen_lines(&self) -> usize {
        self.lines
    }
    fn columns(&self) -> usize {
        self.cols
    }
}

/// What one [`Screen::feed`] produced besides the new screen.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct FeedReport {
    /// Answers to terminal queries, to be written to the PTY.
    pub replies: Vec<u8>,
    /// The window title changed (to this).
    pub title: Option<String>,
    pub bells: u32,
}

/// The pane's text view, for [`Screen::feed_sharing`]: it has seen the output up
/// to log offset `upto`, which includes the bytes being fed (it may have seen more).
#[derive(Clone, Copy)]
pub struct SharedText<'a> {
    pub lines: &'a Mutex<TextLines>,
    pub upto: u64,
}

/// A [`Screen`] as it is handed to an upgraded daemon: the emulator's whole
/// state, the scrollback and the title. The parser starts afresh (a sequence cut
/// by the upgrade is lost); a synchronized update under way is shown first.
#[derive(Serialize, Deserialize)]
pub struct ScreenSnapshot {
    term: Option<TermState>,
    size: PaneSize,
    scrollback: Scrollback,
    last_shared: Option<u64>,
    title: String,
}

/// One pane's terminal. The emulator is created when the first output arrives, so
/// a pane that has printed nothing costs a few hundred bytes, not a grid of cells.
pub struct Screen {
    term: Option<Box<Term<Listener>>>,
    size: PaneSize,
    reports: Listener,
    limiter: crate::string_limit::StringLimiter,
    parser: Processor,
    scrollback: Scrollback,
    /// The text-view line the newest shared scrollback line refers to.
    last_shared: Option<u64>,
    /// Rows taken from the emulator's history, as text and whether each wraps;
    /// kept between harvests so their buffers are reused.
    harvested: Vec<(String, bool)>,
    /// Rows at the top of the screen that the fast path stored already: the next
    /// this many rows to scroll off are not stored again.
    stored_ahead: usize,
    /// The emulator's count of scrollback clears (ED 3) this scrollback followed.
    history_clears: u64,
    /// Slices that scrolled more lines than the emulator's history keeps, so
    /// that some were lost before they reached the scrollback.
    bursts: u64,
    /// Whether plain lines that will scroll away skip the grid (off only to test
    /// the fast path against the slow one).
    fast_path: bool,
    /// The fast path's buffers, reused: the lines found, a line's text, the SGR
    /// sequences of the lines skipped.
    plain: Vec<PlainLine>,
    plain_text: Vec<u8>,
    plain_sgr: Vec<u8>,
    title: String,
}

impl Screen {
    pub fn new(size: PaneSize, scrollback_lines: usize, scrollback_bytes: usize) -> Self {
        // Requests are validated; this guards every other path to the emulator.
        let size = fugue_protocol::limits::clamp_size(size);
        let listener = Listener::default();
        listener.state.lock().unwrap_or_else(|p| p.into_inner()).size = (size.cols, size.rows);
        Self {
            term: None,
            size,
            reports: listener,
            limiter: crate::string_limit::StringLimiter::new(),
            parser: Processor::new(),
            scrollback: Scrollback::new(scrollback_lines, scrollback_bytes),
            last_shared: None,
            harvested: Vec::new(),
            stored_ahead: 0,
            history_clears: 0,
            bursts: 0,
            fast_path: true,
            plain: Vec::new(),
            plain_text: Vec::new(),
            plain_sgr: Vec::new(),
            title: String::new(),
        }
    }

    /// Turns the fast path for plain lines off or on; for tests and the fuzz
    /// target, which compare the two.
    pub fn set_fast_path(&mut self, on: bool) {
        self.fast_path = on;
    }

    /// How many times a slice scrolled more lines than the emulator's history
    /// keeps (a synchronized update of thousands of lines), losing some before
    /// they reached the scrollback. Feeding every byte is no oracle for the fast
    /// path then: the two lose different lines.
    pub fn bursts(&self) -> u64 {
        self.bursts
    }

    /// The screen's state, for [`Screen::from_snapshot`].
    pub fn snapshot(&mut self) -> ScreenSnapshot {
        if let Some(term) = self.term.as_deref_mut() {
            if self.parser.sync_timeout().sync_timeout().is_some() {
                self.parser.stop_sync(term);
            }
        }
        self.harvest_history(None);
        ScreenSnapshot {
            term: self.term.as_deref().map(Term::state),
            size: self.size,
            scrollback: self.scrollback.clone(),
            last_shared: self.last_shared,
            title: self.title.clone(),
        }
    }

    /// The screen of a snapshot; `None` if its parts disagree.
    pub fn from_snapshot(snapshot: ScreenSnapshot) -> Option<Self> {
        let ScreenSnapshot {
            term,
            size,
            scrollback,
            last_shared,
            title,
        } = snapshot;
        let mut screen = Self::new(size, scrollback.max_lines, scrollback.max_bytes);
        if screen.size != size {
            return None;
        }
        if let Some(state) = term {
            let config = Config {
                scrolling_history: HISTORY,
                kitty_keyboard: true,
                ..Config::default()
            };
            let term = Term::from_state(config, state, screen.reports.clone())?;
            if term.columns() != size.cols as usize || term.screen_lines() != size.rows as usize {
                return None;
            }
            screen.term = Some(Box::new(term));
        }
        screen.scrollback = scrollback;
        screen.last_shared = last_shared;
        screen.title = title;
        Some(screen)
    }

    /// Feeds output to the emulator, harvesting scrolled-off lines as it goes.
    pub fn feed(&mut self, bytes: &[u8]) -> FeedReport {
        self.feed_sharing(bytes, None)
    }

    /// [`Screen::feed`], with lines that scroll off stored once with the pane's
    /// text view where they are the same.
    pub fn feed_sharing(&mut self, bytes: &[u8], text: Option<SharedText<'_>>) -> FeedReport {
        let filtered = self.limiter.filter(bytes);
        let mut bytes: &[u8] = &filtered;
        if !bytes.is_empty() {
            self.term_mut();
        }
        while !bytes.is_empty() {
            let cut = match self.skip_plain_lines(bytes, text) {
                Skip::Taken { skipped, drawn } => {
                    // The lines left to draw, drawn now: they scroll off every row
                    // the skip stored ahead, before anything else (a reset, a
                    // clear) could take rows off the screen another way.
                    let mut rest = &bytes[skipped..drawn];
                    while !rest.is_empty() {
                        let cut = slice_end(rest);
                        self.draw_slice(&rest[..cut], text);
                        rest = &rest[cut..];
                    }
                    debug_assert_eq!(self.stored_ahead, 0);
                    bytes = &bytes[drawn..];
                    continue;
                }
                // The next line may start where plain lines can skip the grid.
                Skip::NotAtLineStart => line_end(bytes),
                Skip::No => slice_end(bytes),
            };
            self.draw_slice(&bytes[..cut], text);
            bytes = &bytes[cut..];
        }
        self.take_report()
    }

    /// Feeds one slice to the emulator, then takes what scrolled off.
    fn draw_slice(&mut self, slice: &[u8], text: Option<SharedText<'_>>) {
        if let Some(term) = self.term.as_deref_mut() {
            self.parser.advance(term, slice);
        }
        self.harvest_history(text);
    }

    /// When a synchronized update (DEC mode 2026) that has not ended is due to be
    /// shown anyway. Until it ends or this passes, the screen keeps the last whole
    /// frame, so captures, agent-state reads and redraws never see half of one.
    pub fn sync_deadline(&self) -> Option<Instant> {
        self.parser.sync_timeout().sync_timeout()
    }

    /// Applies a synchronized update whose deadline has passed, as terminals do
    /// with a program that began a frame and never finished it.
    pub fn end_overdue_sync(&mut self, text: Option<SharedText<'_>>) -> FeedReport {
        if self.sync_deadline().is_some_and(|due| due <= Instant::now()) {
            if let Some(term) = self.term.as_deref_mut() {
                self.parser.stop_sync(term);
            }
            self.harvest_history(text);
        }
        self.take_report()
    }

    /// What the emulator reported since the last feed: answers, title, bells.
    fn take_report(&mut self) -> FeedReport {
        let (replies, title, bells) = {
            let mut reports = self.term_reports();
            let title = reports.title.take().map(|t| clean_title(&t.unwrap_or_default()));
            (
                std::mem::take(&mut reports.replies),
                title,
                std::mem::take(&mut reports.bells),
            )
        };
        if let Some(title) = &title {
            self.title.clone_from(title);
        }
        FeedReport { replies, title, bells }
    }

    fn term_reports(&self) -> MutexGuard<'_, Reports> {
        self.reports.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The emulator, created at the current size if it does not exist yet.
    fn term_mut(&mut self) -> &mut Term<Listener> {
        let (size, reports) = (self.size, &self.reports);
        self.term.get_or_insert_with(|| {
            let config = Config {
                scrolling_history: HISTORY,
                kitty_keyboard: true,
                ..Config::default()
            };
            let dims = Dims {
                cols: size.cols as usize,
                lines: size.rows as usize,
            };
            Box::new(Term::new(config, &dims, reports.clone()))
        })
    }

    /// Frees the emulator's cache of spare rows (it keeps up to a thousand after
    /// anything scrolled); called once a pane has gone quiet.
    pub fn trim(&mut self) {
        if let Some(term) = self.term.as_deref_mut() {
            term.grid_mut().truncate();
        }
        self.harvested = Vec::new();
    }

    /// Resizes the terminal. `text` is the pane's text view, which the newest
    /// scrollback lines may refer to: when the screen grows, they go back to the
    /// emulator to be rewrapped and pulled into view.
    pub fn resize(&mut self, size: PaneSize, text: Option<&TextLines>) {
        let size = fugue_protocol::limits::clamp_size(size);
        let dims = Dims {
            cols: size.cols as usize,
            lines: size.rows as usize,
        };
        // tmux rewraps its history at any new width, and pulls it into view when
        // the screen grows.
        let restore = size.cols != self.size.cols || size.rows > self.size.rows;
        self.size = size;
        if restore {
            // Rows are rebuilt at the old width and reflowed at the new one.
            let widest = dims.cols.max(self.term.as_deref().map_or(1, |t| t.columns()));
            self.restore_scrollback((RESTORE_CELLS / widest).clamp(1, HISTORY / 2), text);
        }
        if let Some(term) = self.term.as_deref_mut() {
            term.resize(dims);
        }
        self.term_reports().size = (size.cols, size.rows);
        // Shrinking pushes rows into history.
        self.harvest_history(None);
    }

    pub fn size(&self) -> PaneSize {
        self.size
    }

    fn mode(&self) -> TermMode {
        self.term.as_deref().map_or_else(TermMode::default, |t| *t.mode())
    }

    /// Row `row` of the visible screen, if the emulator exists.
    fn row(&self, row: usize) -> Option<&Row<Cell>> {
        self.term.as_deref().map(|t| &t.grid()[Line(row as i32)])
    }

    /// Cursor (row, col), 0-based, and whether it is shown.
    pub fn cursor(&self) -> (u16, u16, bool) {
        let visible = self.mode().contains(TermMode::SHOW_CURSOR);
        let Some(term) = self.term.as_deref() else {
            return (0, 0, visible);
        };
        let point = term.grid().cursor.point;
        (point.line.0.max(0) as u16, point.column.0 as u16, visible)
    }

    pub fn alternate_screen(&self) -> bool {
        self.mode().contains(TermMode::ALT_SCREEN)
    }

    pub fn application_cursor(&self) -> bool {
        self.mode().contains(TermMode::APP_CURSOR)
    }

    /// The kitty keyboard protocol flags the program has set on the current screen
    /// (1 disambiguate, 2 event types, 4 alternate keys, 8 all keys as escape
    /// codes, 16 associated text); 0 for legacy keys.
    pub fn kitty_keyboard_flags(&self) -> u8 {
        let mode = self.mode();
        [
            TermMode::DISAMBIGUATE_ESC_CODES,
            TermMode::REPORT_EVENT_TYPES,
            TermMode::REPORT_ALTERNATE_KEYS,
            TermMode::REPORT_ALL_KEYS_AS_ESC,
            TermMode::REPORT_ASSOCIATED_TEXT,
        ]
        .iter()
        .enumerate()
        .filter(|(_, flag)| mode.contains(**flag))
        .fold(0, |flags, (bit, _)| flags | 1 << bit)
    }

    /// Whether the program asked for focus in/out reports (mode 1004).
    pub fn focus_events(&self) -> bool {
        self.mode().contains(TermMode::FOCUS_IN_OUT)
    }

    pub fn bracketed_paste(&self) -> bool {
        self.mode().contains(TermMode::BRACKETED_PASTE)
    }

    pub fn title(&self) -> &str {
        &self.title
    }

    pub fn scrollback_len(&self) -> usize {
        self.scrollback.len()
    }
}

/// A title as a program set it, made safe to show: unsafe characters dropped and
/// cut to the protocol's title length.
fn clean_title(title: &str) -> String {
    fugue_protocol::limits::clean_label(title, fugue_protocol::limits::MAX_TITLE_CHARS)
}

#[cfg(test)]
mod tests;
