//! The screen model: what a pane's terminal shows, and what scrolled off it.
//!
//! A terminal emulator (alacritty_terminal, chosen by measurement: ~90-100 MB/s on
//! this machine against vt100's ~40 MB/s) renders the output. Lines that scroll off
//! the top are taken out of the emulator after every slice of input and kept as
//! plain text in a compact ring ([`Scrollback`]), not as emulator cells: a 200-column
//! row is ~4.8 KB as cells and its length in bytes as text.
//!
//! The emulator also answers terminal queries (cursor position, device attributes,
//! colours); [`Screen::feed`] hands those replies back for the caller to write to
//! the PTY. This module knows nothing of PTYs or sockets.

use crate::sync::lock;
use crate::terminal::output::{push_capped, TextLines};
use crate::terminal::plain::{self, PlainLine};
use alacritty_terminal::event::{Event, EventListener, WindowSize};
use alacritty_terminal::grid::{Dimensions, Row};
use alacritty_terminal::index::{Column, Line};
use alacritty_terminal::term::cell::{Cell, Flags};
use alacritty_terminal::term::{Config, Term, TermMode, TermState};
use alacritty_terminal::vte::ansi::{Color, NamedColor, Processor, Rgb};
use fugue_protocol::PaneSize;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

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

/// Colours reported to programs that ask (OSC 10/11): light grey on black.
const DEFAULT_FG: Rgb = Rgb {
    r: 0xe5,
    g: 0xe5,
    b: 0xe5,
};
const DEFAULT_BG: Rgb = Rgb { r: 0, g: 0, b: 0 };

/// The colour a program that did not set it is told it has: xterm's default
/// 256-colour palette, and [`DEFAULT_FG`] / [`DEFAULT_BG`] for the named ones.
fn default_color(index: usize) -> Rgb {
    const BASE: [(u8, u8, u8); 16] = [
        (0x00, 0x00, 0x00),
        (0xcd, 0x00, 0x00),
        (0x00, 0xcd, 0x00),
        (0xcd, 0xcd, 0x00),
        (0x00, 0x00, 0xee),
        (0xcd, 0x00, 0xcd),
        (0x00, 0xcd, 0xcd),
        (0xe5, 0xe5, 0xe5),
        (0x7f, 0x7f, 0x7f),
        (0xff, 0x00, 0x00),
        (0x00, 0xff, 0x00),
        (0xff, 0xff, 0x00),
        (0x5c, 0x5c, 0xff),
        (0xff, 0x00, 0xff),
        (0x00, 0xff, 0xff),
        (0xff, 0xff, 0xff),
    ];
    const CUBE: [u8; 6] = [0, 95, 135, 175, 215, 255];
    match index {
        0..=15 => {
            let (r, g, b) = BASE[index];
            Rgb { r, g, b }
        }
        16..=231 => {
            let cube = index - 16;
            Rgb {
                r: CUBE[cube / 36],
                g: CUBE[cube / 6 % 6],
                b: CUBE[cube % 6],
            }
        }
        232..=255 => {
            let level = 8 + 10 * (index - 232) as u8;
            Rgb {
                r: level,
                g: level,
                b: level,
            }
        }
        _ if index == NamedColor::Background as usize => DEFAULT_BG,
        _ => DEFAULT_FG,
    }
}

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

/// Collects what the emulator reports while it parses. The term owns one handle,
/// the [`Screen`] the other (the term offers no way back to its listener).
#[derive(Default, Clone)]
struct Listener {
    state: Arc<Mutex<Reports>>,
}

#[derive(Default)]
struct Reports {
    replies: Vec<u8>,
    title: Option<Option<String>>,
    bells: u32,
    size: (u16, u16),
}

impl EventListener for Listener {
    fn send_event(&self, event: Event) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match event {
            Event::PtyWrite(text) => state.replies.extend_from_slice(text.as_bytes()),
            Event::Title(title) => state.title = Some(Some(title)),
            Event::ResetTitle => state.title = Some(None),
            Event::Bell => state.bells += 1,
            // Only colours the program did not set reach here (the emulator
            // answers the ones it set).
            Event::ColorRequest(index, format) => {
                state.replies.extend_from_slice(format(default_color(index)).as_bytes());
            }
            Event::TextAreaSizeRequest(format) => {
                let (cols, rows) = state.size;
                let size = WindowSize {
                    num_lines: rows,
                    num_cols: cols,
                    cell_width: 0,
                    cell_height: 0,
                };
                state.replies.extend_from_slice(format(size).as_bytes());
            }
            _ => {}
        }
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

/// Scrolled-off lines as text: one byte ring and a ring of line lengths, so
/// nothing is allocated per line once the caps are reached. A line that is also a
/// line of the pane's text view (plain output) is not copied: the scrollback refers
/// to it by its number there.
#[derive(Serialize, Deserialize)]
struct Scrollback {
    text: VecDeque<u8>,
    lines: VecDeque<ScrollLine>,
    /// The text-view line numbers referred to, oldest first.
    shared: VecDeque<u64>,
    /// Bytes of all lines, own and shared (the byte cap counts both).
    bytes: usize,
    max_lines: usize,
    max_bytes: usize,
    /// Lines dropped by the caps, or lost to a burst that outran the emulator history.
    dropped: u64,
}

#[derive(Clone, Copy, Serialize, Deserialize)]
struct ScrollLine {
    len: u32,
    /// Continues on the next line (soft wrap).
    wrapped: bool,
    /// Stored in the text view as this line, not in `text`.
    shared: Option<u64>,
}

impl Scrollback {
    fn new(max_lines: usize, max_bytes: usize) -> Self {
        Self {
            text: VecDeque::new(),
            lines: VecDeque::new(),
            shared: VecDeque::new(),
            bytes: 0,
            max_lines,
            max_bytes,
            dropped: 0,
        }
    }

    fn len(&self) -> usize {
        self.lines.len()
    }

    /// Forgets every line (the program cleared the scrollback).
    fn clear(&mut self) {
        self.text.clear();
        self.lines.clear();
        self.shared.clear();
        self.bytes = 0;
    }

    /// Adds a line: a copy of `line`, or a reference to text-view line `shared`
    /// (whose text is `line`).
    fn push(&mut self, line: &str, wrapped: bool, shared: Option<u64>) {
        if self.max_lines == 0 {
            self.dropped += 1;
            return;
        }
        let len = line.len().min(self.max_bytes);
        while self.lines.len() >= self.max_lines || self.bytes + len > self.max_bytes {
            let Some(oldest) = self.lines.pop_front() else { break };
            match oldest.shared {
                Some(_) => {
                    self.shared.pop_front();
                }
                None => {
                    self.text.drain(..oldest.len as usize);
                }
            }
            self.bytes -= oldest.len as usize;
            self.dropped += 1;
        }
        match shared {
            Some(seq) => push_capped(&mut self.shared, seq, self.max_lines),
            None => self.text.extend(&line.as_bytes()[..len]),
        }
        self.bytes += len;
        let line = ScrollLine {
            len: len as u32,
            wrapped,
            shared,
        };
        push_capped(&mut self.lines, line, self.max_lines);
    }

    /// Whether line `index` (0 = oldest) continues on the next one.
    fn wrapped(&self, index: usize) -> bool {
        self.lines.get(index).is_some_and(|l| l.wrapped)
    }

    /// Whether any of lines `from..` is a reference to the text view.
    fn shares_from(&self, from: usize) -> bool {
        self.lines.range(from..).any(|l| l.shared.is_some())
    }

    /// Forgets the newest `count` lines (they went back to the emulator).
    fn truncate_newest(&mut self, count: usize) {
        for _ in 0..count {
            let Some(line) = self.lines.pop_back() else { return };
            match line.shared {
                Some(_) => {
                    self.shared.pop_back();
                }
                None => self.text.truncate(self.text.len() - line.len as usize),
            }
            self.bytes -= line.len as usize;
        }
    }

    /// Lines `from..to` (0 = oldest), each with its wrapped flag; shared lines are
    /// read from `text`.
    fn lines(&self, from: usize, to: usize, text: Option<&TextLines>) -> Vec<(String, bool)> {
        let mut start: usize = self
            .lines
            .iter()
            .take(from)
            .filter(|l| l.shared.is_none())
            .map(|l| l.len as usize)
            .sum();
        let mut out = Vec::with_capacity(to.saturating_sub(from));
        for line in self.lines.range(from..to) {
            if let Some(seq) = line.shared {
                let shared = text.and_then(|t| t.line(seq)).unwrap_or_default();
                out.push((shared.to_string(), line.wrapped));
                continue;
            }
            let end = start + line.len as usize;
            let bytes: Vec<u8> = self.text.range(start..end).copied().collect();
            out.push((String::from_utf8_lossy(&bytes).into_owned(), line.wrapped));
            start = end;
        }
        out
    }
}

/// Which lines a capture covers, numbered as tmux does: 0 is the top visible row,
/// negative numbers reach into scrollback (-1 is the newest scrolled-off line).
#[derive(Clone, Copy, Debug)]
pub struct LineRange {
    pub start: i64,
    pub end: i64,
}

/// A rendered capture.
#[derive(Debug, PartialEq, Eq)]
pub struct Captured {
    pub lines: Vec<String>,
    /// Number (as in [`LineRange`]) of the first line returned.
    pub first_line: i64,
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
    limiter: crate::terminal::string_limit::StringLimiter,
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
            limiter: crate::terminal::string_limit::StringLimiter::new(),
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
        let scrollback = &self.scrollback;
        ScreenSnapshot {
            term: self.term.as_deref().map(Term::state),
            size: self.size,
            scrollback: Scrollback {
                text: scrollback.text.clone(),
                lines: scrollback.lines.clone(),
                shared: scrollback.shared.clone(),
                ..*scrollback
            },
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

    /// The fast path: plain lines at the start of `bytes` that would scroll off
    /// the screen before the end of `bytes` go to the scrollback as text, without
    /// being drawn; says what it took, or why it took nothing.
    ///
    /// It applies when the cursor waits at the start of an empty bottom row of the
    /// primary screen, with the whole screen as scroll region, autowrap on and
    /// ASCII drawn as itself: then each plain line fills fresh rows from there and
    /// scrolls them up, so its rows' text is its own text cut at the width. The
    /// lines that take the last `rows + 1` rows are left to the emulator: drawing
    /// them scrolls every row on the screen now off it, so the screen ends as
    /// feeding every byte leaves it. The rows above the cursor are stored now,
    /// before the skipped lines, and not again as they scroll off
    /// (`stored_ahead`); the skipped lines' SGR sequences go to the parser, so the
    /// colours the next lines are drawn in are the same.
    fn skip_plain_lines(&mut self, bytes: &[u8], text: Option<SharedText<'_>>) -> Skip {
        let Some(term) = self.term.as_deref_mut() else {
            return Skip::No;
        };
        if !self.fast_path || !self.parser.is_ground() || !draws_plain_lines(term) {
            return Skip::No;
        }
        if !at_empty_bottom_row(term) {
            return Skip::NotAtLineStart;
        }
        // A blank cell with a link or an underline colour is text that counts
        // (row_text keeps it); the fast path's rows drop trailing blanks.
        if term.grid().cursor.template.extra.is_some() {
            return Skip::No;
        }
        let (rows, cols) = (term.screen_lines(), term.columns());
        plain::scan(bytes, cols, PLAIN_ROWS + rows + 1, &mut self.plain);
        // The shortest run of last lines that takes more rows than the screen has.
        let (mut drawn, mut skipped) = (0, self.plain.len());
        while drawn <= rows && skipped > 0 {
            skipped -= 1;
            drawn += self.plain[skipped].rows(cols);
        }
        if drawn <= rows || skipped == 0 {
            return Skip::No;
        }
        let taken = self.plain[skipped - 1].next();
        let drawn = self.plain.last().map_or(taken, PlainLine::next);

        // The rows the skipped lines push off the top, then their own rows.
        let mut count = 0;
        let harvested = &mut self.harvested;
        let grid = term.grid();
        for line in self.stored_ahead..rows - 1 {
            let row = next_row(harvested, &mut count);
            row.1 = row_text(&grid[Line(line as i32)], &mut row.0);
        }
        self.plain_sgr.clear();
        let mut last_char = None;
        for line in &self.plain[..skipped] {
            self.plain_text.clear();
            plain::split(&bytes[line.start..line.end], &mut self.plain_text, &mut self.plain_sgr);
            last_char = self.plain_text.last().map(|&b| char::from(b)).or(last_char);
            let line_rows = line.rows(cols);
            for r in 0..line_rows {
                let cells = &self.plain_text[(r * cols).min(line.visible)..((r + 1) * cols).min(line.visible)];
                let used = cells.iter().rposition(|&b| b != b' ').map_or(0, |i| i + 1);
                let row = next_row(harvested, &mut count);
                // ASCII, so always UTF-8 (checked at memory speed).
                row.0.push_str(std::str::from_utf8(&cells[..used]).unwrap_or_default());
                // Every row but a line's last wraps onto the next.
                row.1 = r + 1 < line_rows;
            }
        }
        self.parser.advance(term, &self.plain_sgr);
        if last_char.is_some() {
            self.parser.set_preceding_char(last_char);
        }
        self.stored_ahead = rows - 1;

        // The text view has seen every byte of the read; the lines it may share
        // with these rows end before the lines left to draw.
        let shared = text.map(|shared| SharedText {
            upto: shared.upto.saturating_sub((bytes.len() - taken) as u64),
            ..shared
        });
        let window = (count + rows + 2 * SLICE_LINE_FEEDS) as u64;
        self.store_harvested(count, shared, window);
        Skip::Taken { skipped: taken, drawn }
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

    /// The oldest text-view line the scrollback refers to, if any.
    pub fn oldest_shared_line(&self) -> Option<u64> {
        self.scrollback.shared.front().copied()
    }

    /// The text-view lines the scrollback refers to, oldest first.
    #[cfg(test)]
    pub fn shared_lines(&self) -> Vec<u64> {
        self.scrollback.shared.iter().copied().collect()
    }

    /// Moves lines from the emulator's history into the text scrollback. The text
    /// view is locked only to match the lines, not while rows become text.
    fn harvest_history(&mut self, shared_with: Option<SharedText<'_>>) {
        let Some(term) = self.term.as_deref_mut() else { return };
        if term.history_clears() != self.history_clears {
            // The program cleared the scrollback: what the emulator still held went
            // with it, and so goes what was taken out before.
            self.history_clears = term.history_clears();
            self.scrollback.clear();
        }
        let rows = term.screen_lines();
        // The primary screen's: what scrolled just before a program entered the
        // alternate screen in the same slice is stored now, not when it leaves.
        let grid = term.primary_grid_mut();
        let count = grid.history_size();
        if count == 0 {
            return;
        }
        // The oldest rows may be ones the fast path stored before they scrolled.
        let mut stored = self.stored_ahead.min(count);
        if count >= HISTORY {
            // The slice scrolled more lines than the emulator kept: some are gone,
            // the oldest first, so the rows stored ahead most likely among them.
            self.scrollback.dropped += 1;
            self.bursts += 1;
            stored = 0;
            self.stored_ahead = 0;
        }
        self.stored_ahead -= stored;
        let new = count - stored;
        let harvested = &mut self.harvested;
        if harvested.len() < new {
            harvested.resize_with(new, Default::default);
        }
        for (i, (text, wrapped)) in (1..=new).rev().zip(harvested.iter_mut()) {
            text.clear();
            *wrapped = row_text(&grid[Line(-(i as i32))], text);
        }
        let window = rows as u64 + 2 * SLICE_LINE_FEEDS as u64;
        grid.clear_history();
        self.store_harvested(new, shared_with, window);
    }

    /// Stores the first `count` rows of `harvested` in the scrollback, each whole
    /// line the text view also holds (among the `window` lines it completed last)
    /// as a reference to it.
    fn store_harvested(&mut self, count: usize, shared_with: Option<SharedText<'_>>, window: u64) {
        // The text view, locked once for the whole harvest, and the line just past
        // the ones it completed by this output (later lines are not candidates).
        let mut text_view = shared_with.map(|shared| {
            let lines = lock(shared.lines);
            let next = lines.next_seq_at(shared.upto);
            (lines, next)
        });
        for (text, wrapped) in &self.harvested[..count] {
            // A whole line that the text view also holds is stored there only.
            let shared = match (&text_view, wrapped) {
                (Some((lines, next)), false) if !text.is_empty() => {
                    lines.match_line(text, self.last_shared, window, *next)
                }
                _ => None,
            };
            if shared.is_some() {
                self.last_shared = shared;
            }
            self.scrollback.push(text, *wrapped, shared);
        }
        if let Some((lines, _)) = &mut text_view {
            lines.pin_from(self.scrollback.shared.front().copied().unwrap_or(u64::MAX));
        }
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

    /// Before a resize: puts the newest scrollback lines (about `count` rows'
    /// worth, back to the start of a wrapped line) into the emulator's empty
    /// history, as tmux keeps them in its grid. The resize then reflows them at
    /// the new width with the screen and pulls into view what fits; the rest is
    /// harvested again, rewrapped. Without this, widening left the start of a
    /// wrapped line out of view and blank rows at the bottom.
    fn restore_scrollback(&mut self, count: usize, text: Option<&TextLines>) {
        let Some(term) = self.term.as_deref_mut() else { return };
        // Rows stored ahead are on the screen and in the scrollback at once.
        if term.mode().contains(TermMode::ALT_SCREEN) || self.stored_ahead != 0 {
            return;
        }
        let len = self.scrollback.len();
        let mut from = len.saturating_sub(count);
        let earliest = len.saturating_sub(HISTORY);
        while from > earliest && self.scrollback.wrapped(from - 1) {
            from -= 1;
        }
        if from == len || (text.is_none() && self.scrollback.shares_from(from)) {
            return;
        }
        let cols = term.columns();
        let lines = self.scrollback.lines(from, len, text);
        // Newest first, whole lines while they fit in `count` rows (one from a
        // wider screen takes several).
        let mut restored: Vec<Row<Cell>> = Vec::new();
        let mut line_rows = Vec::new();
        let mut taken = 0;
        for (line, wrapped) in lines.iter().rev() {
            line_rows.clear();
            text_rows(line, *wrapped, cols, &mut line_rows);
            if restored.len() + line_rows.len() > count {
                break;
            }
            restored.extend(line_rows.drain(..).rev());
            taken += 1;
        }
        restored.reverse();
        if !term.primary_grid_mut().restore_history(restored) {
            return;
        }
        self.scrollback.truncate_newest(taken);
        self.last_shared = self.scrollback.shared.back().copied();
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

    /// The visible rows as plain text, trailing spaces trimmed.
    pub fn visible_text(&self) -> Vec<String> {
        self.capture(
            LineRange {
                start: 0,
                end: self.size.rows as i64 - 1,
            },
            false,
            false,
        )
        .lines
    }

    /// Lines `range.start..=range.end`, clamped to what exists; `ansi` adds SGR
    /// attributes to screen rows (scrollback is text only); `join_wrapped` joins
    /// soft-wrapped rows into one line, as `tmux capture-pane -J`.
    pub fn capture(&self, range: LineRange, ansi: bool, join_wrapped: bool) -> Captured {
        self.capture_sharing(range, ansi, join_wrapped, None)
    }

    /// [`Screen::capture`] for a screen fed with [`Screen::feed_sharing`].
    pub fn capture_sharing(
        &self,
        range: LineRange,
        ansi: bool,
        join_wrapped: bool,
        text: Option<&TextLines>,
    ) -> Captured {
        let history = self.scrollback.len() as i64;
        let rows = self.size.rows as i64;
        let start = range.start.clamp(-history, rows - 1);
        let end = range.end.clamp(-history, rows - 1);
        let mut lines: Vec<(String, bool)> = Vec::new();
        if start <= end {
            if start < 0 {
                let from = (history + start) as usize;
                let to = (history + end.min(-1) + 1) as usize;
                lines.extend(self.scrollback.lines(from, to, text));
            }
            for row in start.max(0)..=end {
                if row < 0 {
                    continue;
                }
                let mut text = String::new();
                let wrapped = match (self.row(row as usize), ansi) {
                    (Some(cells), true) => row_ansi(cells.into_iter(), &mut text),
                    (Some(cells), false) => row_text(cells, &mut text),
                    (None, _) => false,
                };
                lines.push((text, wrapped));
            }
        }
        let lines = match join_wrapped {
            true => join(lines),
            false => lines.into_iter().map(|(l, _)| l).collect(),
        };
        Captured {
            lines,
            first_line: start,
        }
    }

    /// Bytes that make a terminal of the same size show this screen: contents with
    /// attributes, cursor, and the input modes the program set. What a newly
    /// attached client (or one that fell behind) is sent first.
    pub fn redraw(&self) -> Vec<u8> {
        let mut out = String::from("\x1b[0m");
        out.push_str(if self.alternate_screen() {
            "\x1b[?1049h"
        } else {
            "\x1b[?1049l"
        });
        out.push_str("\x1b[H\x1b[2J");
        for row in 0..self.size.rows as usize {
            if let Some(cells) = self.row(row) {
                let _ = write!(out, "\x1b[{};1H", row + 1);
                row_ansi(cells.into_iter(), &mut out);
            }
        }
        let mode = self.mode();
        let flag = |on: bool, code: &str, out: &mut String| {
            let _ = write!(out, "\x1b[?{code}{}", if on { 'h' } else { 'l' });
        };
        flag(mode.contains(TermMode::APP_CURSOR), "1", &mut out);
        flag(mode.contains(TermMode::BRACKETED_PASTE), "2004", &mut out);
        // The client's terminal moves its cursor on the backspaces that follow.
        flag(mode.contains(TermMode::REVERSE_WRAP), "45", &mut out);
        flag(mode.contains(TermMode::REVERSE_WRAP_EXTENDED), "1045", &mut out);
        // Turning any mouse mode off turns mouse reporting off (xterm, tmux), so
        // all are reset first and only then is the one in use set.
        out.push_str("\x1b[?1000l\x1b[?1002l\x1b[?1003l");
        let mouse = [
            (TermMode::MOUSE_REPORT_CLICK, "1000"),
            (TermMode::MOUSE_DRAG, "1002"),
            (TermMode::MOUSE_MOTION, "1003"),
        ];
        for (_, code) in mouse.iter().filter(|(m, _)| mode.contains(*m)) {
            let _ = write!(out, "\x1b[?{code}h");
        }
        flag(mode.contains(TermMode::SGR_MOUSE), "1006", &mut out);
        flag(mode.contains(TermMode::FOCUS_IN_OUT), "1004", &mut out);
        // The kitty keyboard flags of this screen, set outright (terminals
        // without the protocol ignore it; detaching sets 0 again).
        let _ = write!(out, "\x1b[={};1u", self.kitty_keyboard_flags());
        out.push_str(if mode.contains(TermMode::APP_KEYPAD) {
            "\x1b="
        } else {
            "\x1b>"
        });
        // The cursor's shape as the program set it, or the terminal's own (0).
        let _ = write!(out, "\x1b[{} q", self.cursor_shape_code());
        let (row, col, visible) = self.cursor();
        let _ = write!(out, "\x1b[{};{}H", row + 1, col + 1);
        flag(visible, "25", &mut out);
        out.into_bytes()
    }

    /// The DECSCUSR code of the cursor style the program set: 0 for none (the
    /// terminal's default), 1-6 for blinking/steady block, underline and bar.
    fn cursor_shape_code(&self) -> u8 {
        self.term.as_deref().map_or(0, |t| t.program_cursor_style_code())
    }
}

/// A title as a program set it, made safe to show: unsafe characters dropped and
/// cut to the protocol's title length.
fn clean_title(title: &str) -> String {
    fugue_protocol::limits::clean_label(title, fugue_protocol::limits::MAX_TITLE_CHARS)
}

/// Appends a cell's character and its zero-width companions; characters that must
/// not reach a reader (C1 controls, bidi overrides) become a blank or nothing.
fn push_cell(cell: &Cell, out: &mut String) {
    use fugue_protocol::limits::{is_control_or_bidi, is_unsafe_char};
    out.push(if is_unsafe_char(cell.c) { ' ' } else { cell.c });
    if let Some(extra) = cell.zerowidth() {
        out.extend(extra.iter().filter(|c| !is_control_or_bidi(**c)));
    }
}

/// The next of `harvested`'s rows to fill, emptied; `count` counts them.
fn next_row<'a>(harvested: &'a mut Vec<(String, bool)>, count: &mut usize) -> &'a mut (String, bool) {
    if harvested.len() <= *count {
        harvested.push(Default::default());
    }
    *count += 1;
    let row = &mut harvested[*count - 1];
    row.0.clear();
    row
}

/// What [`Screen::skip_plain_lines`] did.
enum Skip {
    /// Stored the plain lines before byte `skipped`; those from there to `drawn`
    /// are to be drawn at once.
    Taken { skipped: usize, drawn: usize },
    /// Nothing: the terminal draws plain lines as plain rows, but the cursor is
    /// not at the start of an empty bottom row yet.
    NotAtLineStart,
    /// Nothing.
    No,
}

/// Whether plain lines printed now are drawn as plain rows that scroll into
/// history, as [`Screen::skip_plain_lines`] assumes: the primary screen, the whole
/// screen as scroll region, autowrap on, no insert mode, ASCII drawn as itself.
fn draws_plain_lines(term: &Term<Listener>) -> bool {
    let mode = *term.mode();
    !mode.intersects(TermMode::ALT_SCREEN | TermMode::INSERT)
        && mode.contains(TermMode::LINE_WRAP)
        && *term.scroll_region() == (Line(0)..Line(term.screen_lines() as i32))
        && term.charset_is_ascii()
}

/// Whether the cursor is at the start of an empty bottom row with no wrap
/// pending, where each plain line fills fresh rows and scrolls them up.
fn at_empty_bottom_row(term: &Term<Listener>) -> bool {
    let grid = term.grid();
    let cursor = &grid.cursor;
    let bottom = Line(term.screen_lines() as i32 - 1);
    cursor.point.line == bottom
        && cursor.point.column == Column(0)
        && !cursor.input_needs_wrap
        && grid.history_size() == 0
        && grid[bottom][..Column(grid[bottom].occupied())]
            .iter()
            .all(|c| c.c == ' ' && c.extra.is_none() && c.flags.is_empty())
}

/// Where the next slice ends when it should end with the current line: just past
/// the first line feed, within the usual slice.
fn line_end(bytes: &[u8]) -> usize {
    let window = &bytes[..slice_end(bytes)];
    memchr::memchr(b'\n', window).map_or(window.len(), |i| i + 1)
}

/// Where the next slice ends: at most [`SLICE_BYTES`] and [`SLICE_LINE_FEEDS`].
fn slice_end(bytes: &[u8]) -> usize {
    let window = &bytes[..bytes.len().min(SLICE_BYTES)];
    match memchr::memchr_iter(b'\n', window).nth(SLICE_LINE_FEEDS - 1) {
        Some(i) => i + 1,
        None => window.len(),
    }
}

/// Appends a row's text, trailing blanks trimmed; returns whether it soft-wraps.
/// This runs for every line that scrolls off, so it first finds the last cell
/// that is not a blank and copies only up to it.
fn row_text(row: &Row<Cell>, out: &mut String) -> bool {
    let wrapped = row.last().is_some_and(|c| c.flags.contains(Flags::WRAPLINE));
    // Cells past `occupied` are untouched since the row was cleared: blanks.
    let cells = &row[..Column(row.occupied())];
    let used = cells
        .iter()
        .rposition(|c| !is_blank_char(c.c) || c.extra.is_some())
        .map_or(0, |i| i + 1);
    out.reserve(used);
    for cell in &cells[..used] {
        if cell
            .flags
            .intersects(Flags::WIDE_CHAR_SPACER | Flags::LEADING_WIDE_CHAR_SPACER)
        {
            continue;
        }
        // The common case: a printable ASCII character alone in its cell (a tab
        // is stored as `\t` and goes the slow way, like any control character).
        if (cell.c.is_ascii_graphic() || cell.c == ' ') && cell.extra.is_none() {
            out.push(cell.c);
            continue;
        }
        push_cell(cell, out);
    }
    wrapped
}

/// The rows [`row_text`] read `text` from, as far as text tells (attributes are
/// not kept), at `cols` columns: one, or several wrapped ones for a line read
/// at a wider width. Appended to `out`.
fn text_rows(text: &str, wrapped: bool, cols: usize, out: &mut Vec<Row<Cell>>) {
    let mut row: Row<Cell> = Row::new(cols);
    let mut col = 0;
    for c in text.chars() {
        // As the emulator counts them; a control character in a cell (a tab)
        // took that cell.
        let width = alacritty_terminal::term::cell_width(c).map_or(1, |w| w.min(cols));
        if width == 0 {
            if col > 0 {
                let spacer = row[Column(col - 1)].flags.contains(Flags::WIDE_CHAR_SPACER);
                row[Column(col - 1 - usize::from(spacer))].push_zerowidth(c);
            }
            continue;
        }
        if col + width > cols {
            // Wrapped as the emulator wraps: a wide character that does not fit
            // leaves a spacer in the last column.
            if col < cols {
                row[Column(col)].flags.insert(Flags::LEADING_WIDE_CHAR_SPACER);
            }
            row[Column(cols - 1)].flags.insert(Flags::WRAPLINE);
            out.push(std::mem::replace(&mut row, Row::new(cols)));
            col = 0;
        }
        row[Column(col)].c = c;
        if width == 2 {
            row[Column(col)].flags.insert(Flags::WIDE_CHAR);
            row[Column(col + 1)].flags.insert(Flags::WIDE_CHAR_SPACER);
        }
        col += width;
    }
    if wrapped {
        row[Column(cols - 1)].flags.insert(Flags::WRAPLINE);
    }
    out.push(row);
}

/// Like [`row_text`], with SGR sequences for colours and attributes.
fn row_ansi<'a>(cells: impl Iterator<Item = &'a Cell>, out: &mut String) -> bool {
    let cells: Vec<&Cell> = cells.collect();
    let wrapped = cells.last().is_some_and(|c| c.flags.contains(Flags::WRAPLINE));
    // Trailing default blanks are dropped, as in plain captures.
    let used = cells.iter().rposition(|c| !is_blank(c)).map_or(0, |i| i + 1);
    let mut current = String::from("0");
    let mut link: Option<String> = None;
    for cell in &cells[..used] {
        if cell
            .flags
            .intersects(Flags::WIDE_CHAR_SPACER | Flags::LEADING_WIDE_CHAR_SPACER)
        {
            continue;
        }
        let sgr = sgr(cell);
        if sgr != current {
            let _ = write!(out, "\x1b[{sgr}m");
            current = sgr;
        }
        let cell_link = cell.hyperlink().map(|h| safe_link(h.uri()));
        if cell_link != link {
            let _ = write!(out, "\x1b]8;;{}\x1b\\", cell_link.as_deref().unwrap_or(""));
            link = cell_link;
        }
        push_cell(cell, out);
    }
    if link.is_some() {
        out.push_str("\x1b]8;;\x1b\\");
    }
    if current != "0" {
        out.push_str("\x1b[0m");
    }
    wrapped
}

/// A hyperlink's target (OSC 8) as it may be written back out: no characters
/// that could end or escape the sequence.
fn safe_link(uri: &str) -> String {
    uri.chars()
        .filter(|c| !fugue_protocol::limits::is_unsafe_char(*c))
        .collect()
}

/// A character that shows as a blank: a space, or the tab the emulator keeps in
/// the first cell a tab skipped (for copying; a terminal shows nothing there).
fn is_blank_char(c: char) -> bool {
    matches!(c, ' ' | '\t')
}

/// A cell that shows nothing at all: a blank character with no colour, link or
/// attribute that would show.
fn is_blank(cell: &Cell) -> bool {
    is_blank_char(cell.c)
        && cell.hyperlink().is_none()
        && cell.bg == Color::Named(NamedColor::Background)
        && !cell
            .flags
            .intersects(Flags::INVERSE | Flags::ALL_UNDERLINES | Flags::STRIKEOUT | Flags::BLINK)
}

/// The SGR parameters (after a reset) that give `cell` its look.
fn sgr(cell: &Cell) -> String {
    let mut codes = String::from("0");
    let flags = [
        (Flags::BOLD, ";1"),
        (Flags::DIM, ";2"),
        (Flags::ITALIC, ";3"),
        (Flags::ALL_UNDERLINES, ";4"),
        (Flags::BLINK, ";5"),
        (Flags::INVERSE, ";7"),
        (Flags::HIDDEN, ";8"),
        (Flags::STRIKEOUT, ";9"),
    ];
    for (flag, code) in flags {
        if cell.flags.intersects(flag) {
            codes.push_str(code);
        }
    }
    color(cell.fg, 30, &mut codes);
    color(cell.bg, 40, &mut codes);
    codes
}

fn color(color: Color, base: u8, out: &mut String) {
    match color {
        Color::Named(named) => {
            let n = named as usize;
            match n {
                0..=7 => {
                    let _ = write!(out, ";{}", base as usize + n);
                }
                8..=15 => {
                    let _ = write!(out, ";{}", base as usize + 60 + n - 8);
                }
                // Foreground/background defaults and the dim variants.
                _ => match named.to_dim_or_normal() {
                    Some(index) if (index as usize) < 8 => {
                        let _ = write!(out, ";{}", base as usize + index as usize);
                    }
                    _ => {}
                },
            }
        }
        Color::Indexed(i) => {
            let _ = write!(out, ";{};5;{i}", base + 8);
        }
        Color::Spec(rgb) => {
            let _ = write!(out, ";{};2;{};{};{}", base + 8, rgb.r, rgb.g, rgb.b);
        }
    }
}

trait DimOrNormal {
    fn to_dim_or_normal(self) -> Option<u8>;
}

impl DimOrNormal for NamedColor {
    /// The plain colour index of a dim named colour, if it is one.
    fn to_dim_or_normal(self) -> Option<u8> {
        let n = self as usize;
        let dim_black = NamedColor::DimBlack as usize;
        (dim_black..dim_black + 8).contains(&n).then(|| (n - dim_black) as u8)
    }
}

/// Joins soft-wrapped lines with the lines they continue on.
fn join(lines: Vec<(String, bool)>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut continues = false;
    for (line, wrapped) in lines {
        match (continues, out.last_mut()) {
            (true, Some(last)) => last.push_str(&line),
            _ => out.push(line),
        }
        continues = wrapped;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(cols: u16, rows: u16) -> Screen {
        Screen::new(PaneSize { cols, rows }, 100, 1 << 20)
    }

    #[test]
    fn cursor_addressing_renders_exactly() {
        let mut s = screen(20, 5);
        s.feed(b"\x1b[2J\x1b[3;5Hhello\x1b[1;1Htop");
        assert_eq!(s.visible_text(), vec!["top", "", "    hello", "", ""]);
        assert_eq!(s.cursor(), (0, 3, true));
    }

    #[test]
    fn scrolled_lines_go_to_text_scrollback() {
        let mut s = screen(10, 3);
        for i in 1..=10 {
            s.feed(format!("line {i}\r\n").as_bytes());
        }
        assert_eq!(s.scrollback_len(), 8);
        assert_eq!(s.visible_text(), vec!["line 9", "line 10", ""]);
        let c = s.capture(LineRange { start: -3, end: 0 }, false, false);
        assert_eq!(c.lines, vec!["line 6", "line 7", "line 8", "line 9"]);
        assert_eq!(c.first_line, -3);
        let all = s.capture(
            LineRange {
                start: i64::MIN,
                end: i64::MAX,
            },
            false,
            false,
        );
        assert_eq!(all.lines.len(), 11);
        assert_eq!(all.lines[0], "line 1");
    }

    #[test]
    fn clearing_the_scrollback_clears_all_of_it() {
        let mut s = screen(10, 3);
        for i in 1..=10 {
            s.feed(format!("line {i}\r\n").as_bytes());
        }
        // Lines taken out earlier and lines that scrolled in the same read go.
        s.feed(b"line 11\r\nline 12\r\n\x1b[3Jline 13\r\n");
        assert_eq!(s.scrollback_len(), 1);
        assert_eq!(s.visible_text(), vec!["line 12", "line 13", ""]);
        s.feed(b"line 14\r\n");
        assert_eq!(s.scrollback_len(), 2);
    }

    #[test]
    fn a_burst_of_lines_in_one_feed_keeps_them_all() {
        let mut s = Screen::new(PaneSize { cols: 20, rows: 5 }, 100_000, 1 << 24);
        let mut big = Vec::new();
        for i in 0..5000 {
            big.extend_from_slice(format!("{i}\r\n").as_bytes());
        }
        s.feed(&big);
        assert_eq!(s.scrollback_len(), 4996);
        assert_eq!(s.scrollback.dropped, 0);
        let c = s.capture(
            LineRange {
                start: -4996,
                end: -4995,
            },
            false,
            false,
        );
        assert_eq!(c.lines, vec!["0", "1"]);
    }

    #[test]
    fn scrollback_caps_lines_and_bytes() {
        let mut s = Screen::new(PaneSize { cols: 10, rows: 2 }, 5, 1 << 20);
        for i in 0..20 {
            s.feed(format!("{i}\r\n").as_bytes());
        }
        assert_eq!(s.scrollback_len(), 5);
        let mut s = Screen::new(PaneSize { cols: 10, rows: 2 }, 100, 12);
        for _ in 0..10 {
            s.feed(b"abcde\r\n");
        }
        assert_eq!(s.scrollback_len(), 2);
    }

    #[test]
    fn wrapped_lines_join() {
        let mut s = screen(5, 3);
        s.feed(b"abcdefgh");
        assert_eq!(s.visible_text(), vec!["abcde", "fgh", ""]);
        let joined = s.capture(LineRange { start: 0, end: 2 }, false, true);
        assert_eq!(joined.lines, vec!["abcdefgh", ""]);
    }

    #[test]
    fn alternate_screen_and_title() {
        let mut s = screen(10, 3);
        s.feed(b"main\x1b]0;my title\x07");
        assert_eq!(s.title(), "my title");
        s.feed(b"\x1b[?1049h\x1b[Halt");
        assert!(s.alternate_screen());
        assert_eq!(s.visible_text()[0], "alt");
        s.feed(b"\x1b[?1049l");
        assert!(!s.alternate_screen());
        assert_eq!(s.visible_text()[0], "main");
    }

    #[test]
    fn wide_characters_at_the_narrowest_size() {
        // alacritty_terminal panics writing a wide character into one column; the
        // protocol's minimum width of 2 keeps every screen out of that case.
        let mut s = screen(fugue_protocol::limits::MIN_COLS, 1);
        s.feed("中文中文\r\n😀x".as_bytes());
        // A one-column size that got past validation is widened, not obeyed.
        s.resize(PaneSize { cols: 1, rows: 3 }, None);
        assert_eq!(s.size(), PaneSize { cols: 2, rows: 3 });
        s.feed("中\u{301}文".as_bytes());
        assert!(!s.visible_text().is_empty());
    }

    #[test]
    fn hostile_titles_are_cut_and_cleaned() {
        let mut s = screen(10, 3);
        let mut osc = "\x1b]0;a\u{9b}b\u{202e}c".as_bytes().to_vec();
        osc.extend(std::iter::repeat_n(b'x', 10 << 20));
        osc.extend_from_slice(b"\x07shown");
        let report = s.feed(&osc);
        let title = report.title.unwrap();
        assert!(title.starts_with("abcxx"), "{title:?}");
        assert_eq!(title.chars().count(), fugue_protocol::limits::MAX_TITLE_CHARS);
        assert_eq!(s.visible_text()[0], "shown");
        // C1 controls printed as characters never reach a capture.
        s.feed("\r\n\u{9b}2Jz\u{202e}y".as_bytes());
        let line = &s.visible_text()[1];
        assert!(!line.chars().any(fugue_protocol::limits::is_unsafe_char), "{line:?}");
    }

    #[test]
    fn control_characters_in_cells_never_reach_a_capture() {
        // alacritty keeps a tab as `\t` in its cell; scrolled off or not, a
        // capture shows a blank there.
        let mut s = screen(20, 2);
        s.feed(b"a\tb\r\nc\td\r\n\r\n");
        let all = s.capture(LineRange { start: -10, end: 1 }, false, false);
        assert!(all.lines.iter().all(|l| !l.contains('\t')), "{:?}", all.lines);
    }

    #[test]
    fn kitty_keyboard_flags_are_kept_answered_and_redrawn() {
        let mut s = screen(20, 4);
        assert_eq!(s.feed(b"\x1b[?u").replies, b"\x1b[?0u");
        s.feed(b"\x1b[>1u\x1b[>11u");
        assert_eq!(s.kitty_keyboard_flags(), 11);
        assert_eq!(s.feed(b"\x1b[?u").replies, b"\x1b[?11u");
        assert!(String::from_utf8_lossy(&s.redraw()).contains("\x1b[=11;1u"));
        // Pop one: back to the flags pushed before.
        s.feed(b"\x1b[<u");
        assert_eq!(s.kitty_keyboard_flags(), 1);
        // The alternate screen has a stack of its own.
        s.feed(b"\x1b[?1049h");
        assert_eq!(s.kitty_keyboard_flags(), 0);
        s.feed(b"\x1b[?1049l");
        assert_eq!(s.kitty_keyboard_flags(), 1);
        // A program pushing forever is bounded, and does not bring the emulator down.
        s.feed(&b"\x1b[>3u".repeat(10_000));
        assert_eq!(s.kitty_keyboard_flags(), 3);
        // The title stack, bounded the same way, keeps working on its own (with
        // no keyboard modes pushed: a fix applied to the wrong stack panicked here).
        let mut s = screen(20, 4);
        s.feed(&b"\x1b[22t".repeat(5_000));
        s.feed(b"\x1b]0;pushed\x07\x1b[22t\x1b]0;other\x07\x1b[23t");
        assert_eq!(s.title(), "pushed");
    }

    #[test]
    fn queries_are_answered() {
        let mut s = screen(10, 3);
        let report = s.feed(b"ab\x1b[6n\x1b[c\x1b[>c");
        let replies = String::from_utf8(report.replies).unwrap();
        assert!(replies.starts_with("\x1b[1;3R\x1b[?6c\x1b[>0;"), "{replies:?}");
    }

    #[test]
    fn ansi_capture_and_redraw_carry_attributes() {
        let mut s = screen(20, 2);
        s.feed(b"\x1b[1;31mred\x1b[0m plain \x1b[38;5;200mx\x1b[48;2;1;2;3my");
        let c = s.capture(LineRange { start: 0, end: 0 }, true, false);
        assert_eq!(
            c.lines[0],
            "\x1b[0;1;31mred\x1b[0m plain \x1b[0;38;5;200mx\x1b[0;38;5;200;48;2;1;2;3my\x1b[0m"
        );
        // Replaying a redraw into a fresh screen reproduces the screen and cursor.
        s.feed(b"\x1b[2;4H\x1b[?1h");
        let mut copy = screen(20, 2);
        copy.feed(&s.redraw());
        assert_eq!(copy.visible_text(), s.visible_text());
        assert_eq!(copy.cursor(), s.cursor());
        assert!(copy.application_cursor());
        assert_eq!(
            copy.capture(LineRange { start: 0, end: 0 }, true, false),
            s.capture(LineRange { start: 0, end: 0 }, true, false)
        );
    }

    #[test]
    fn the_cursor_shape_a_program_set_is_redrawn() {
        let mut s = screen(20, 4);
        assert!(
            String::from_utf8_lossy(&s.redraw()).contains("\x1b[0 q"),
            "none set: the terminal's own"
        );
        for (set, code) in [
            ("\x1b[6 q", 6),
            ("\x1b[5 q", 5),
            ("\x1b[4 q", 4),
            ("\x1b[2 q", 2),
            ("\x1b[1 q", 1),
        ] {
            s.feed(set.as_bytes());
            let redraw = String::from_utf8_lossy(&s.redraw()).into_owned();
            assert!(redraw.contains(&format!("\x1b[{code} q")), "{set:?}: {redraw:?}");
            // A screen fed the redraw has the same style.
            let mut copy = screen(20, 4);
            copy.feed(redraw.as_bytes());
            assert_eq!(copy.cursor_shape_code(), code);
        }
        s.feed(b"\x1b[0 q");
        assert!(String::from_utf8_lossy(&s.redraw()).contains("\x1b[0 q"));
    }

    #[test]
    fn reverse_wraparound_is_redrawn() {
        let mut s = screen(20, 4);
        let redraw = String::from_utf8_lossy(&s.redraw()).into_owned();
        assert!(
            redraw.contains("\x1b[?45l") && redraw.contains("\x1b[?1045l"),
            "{redraw:?}"
        );
        s.feed(b"\x1b[?45h");
        let mut copy = screen(20, 4);
        copy.feed(&s.redraw());
        copy.feed(b"abc\r\n\x1b[2;1H\x08");
        assert_eq!(copy.cursor(), (1, 0, true), "45 goes back only into a wrapped line");
        s.feed(b"\x1b[?1045h");
        let mut copy = screen(20, 4);
        copy.feed(&s.redraw());
        copy.feed(b"\x1b[2;1H\x08");
        assert_eq!(copy.cursor(), (0, 19, true));
    }

    #[test]
    fn hyperlinks_survive_ansi_capture_and_redraw() {
        let mut s = screen(30, 2);
        s.feed(b"see \x1b]8;;https://example.org/a?b=1\x1b\\the docs\x1b]8;;\x1b\\ now");
        let c = s.capture(LineRange { start: 0, end: 0 }, true, false);
        assert_eq!(
            c.lines[0],
            "see \x1b]8;;https://example.org/a?b=1\x1b\\the docs\x1b]8;;\x1b\\ now"
        );
        // Plain captures show the text only.
        assert_eq!(
            s.capture(LineRange { start: 0, end: 0 }, false, false).lines[0],
            "see the docs now"
        );
        let mut copy = screen(30, 2);
        copy.feed(&s.redraw());
        assert_eq!(
            copy.capture(LineRange { start: 0, end: 0 }, true, false),
            s.capture(LineRange { start: 0, end: 0 }, true, false)
        );
    }
}

/// The fast path for plain lines against feeding every byte to the emulator.
#[cfg(test)]
mod fast_path_tests {
    use super::*;
    use proptest::prelude::*;

    /// Pieces of output: plain lines of every length class around the width, with
    /// colours and trailing blanks, and everything that must stop the fast path or
    /// change what it assumes (cursor moves, margins, the alternate screen, line
    /// drawing, insert mode, no autowrap, REP, tabs, wide characters, bare LF,
    /// lone CR, synchronized updates, sequences cut anywhere by the chunking).
    fn piece() -> impl Strategy<Value = Vec<u8>> {
        let plain = (0usize..40, any::<bool>(), any::<bool>(), 0u8..8).prop_map(|(len, colour, blanks, c)| {
            let mut line = Vec::new();
            if colour {
                line.extend_from_slice(format!("\x1b[3{c};4{}m", 7 - c).as_bytes());
            }
            line.extend((0..len).map(|i| b'a' + ((i as u8 + c) % 26)));
            if blanks {
                line.extend_from_slice(b"   ");
            }
            if colour && c % 2 == 0 {
                line.extend_from_slice(b"\x1b[m");
            }
            line.extend_from_slice(b"\r\n");
            line
        });
        let special = prop::sample::select(vec![
            &b"\x1b[2A"[..],
            b"\x1b[3;7r",
            b"\x1b[r",
            b"\x1b[3;7rin the region\r\n\x1b[r",
            b"\x1b[?1049h",
            b"\x1b[?1049l",
            b"\x1b[?1049hfull screen\r\n\x1b[?1049l",
            b"\x1b(0",
            b"\x1b(B",
            b"\x1b(0qqq\r\n\x1b(B",
            b"\x1b[4h",
            b"\x1b[4l",
            b"\x1b[4hinserted\r\n\x1b[4l",
            b"\x1b[?7l",
            b"\x1b[?7h",
            b"\x1b[?7lno wrap at all at any width\r\n\x1b[?7h",
            b"\x1b[?2026hframe\r\n\x1b[?2026l",
            b"x\x1b[3b",
            b"\x1b[3b",
            b"\t",
            "宽字".as_bytes(),
            b"\n",
            b"\r",
            b"\x1b[2J",
            b"\x1b[3J",
            b"\x1bc",
            b"\x1b[H",
            b"\x1b[5;1H",
            b"\x1b[K",
            b"\x1b[1;4;38;5;200m",
            b"\x1b[4;58;5;3munderlined \x1b[59m",
            b"\x1b[58:2::1:2:3m",
            b"\x1b[59m",
            b"\x1b]8;;http://x\x1b\\linked \x1b]8;;\x1b\\",
            b"\x1b]8;;http://x\x1b\\",
            b"\x1b]8;;\x1b\\",
            b"\x1b[7m",
            b"\x1b]0;title\x07",
            b"\x1b[",
        ])
        .prop_map(|s| s.to_vec());
        prop_oneof![12 => plain, 1 => special]
    }

    fn everything(screen: &Screen, ansi: bool) -> Vec<String> {
        let all = LineRange {
            start: i64::MIN,
            end: i64::MAX,
        };
        screen.capture(all, ansi, false).lines
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn the_fast_path_leaves_what_feeding_every_byte_leaves(
            pieces in prop::collection::vec(piece(), 1..400),
            cuts in prop::collection::vec(1usize..3000, 1..8),
            cols in 1u16..30,
            rows in 1u16..12,
        ) {
            let bytes: Vec<u8> = pieces.concat();
            let size = PaneSize { cols, rows };
            let mut slow = Screen::new(size, 100_000, 1 << 24);
            slow.set_fast_path(false);
            let mut fast = Screen::new(size, 100_000, 1 << 24);
            // The same chunks for both, cut anywhere (inside sequences too).
            for chunk in crate::terminal::cut_into(&bytes, &cuts) {
                prop_assert_eq!(slow.feed(chunk), fast.feed(chunk));
            }
            if slow.bursts() > 0 {
                return Ok(());
            }
            let screen = LineRange { start: 0, end: i64::from(rows) };
            prop_assert_eq!(slow.capture(screen, true, false), fast.capture(screen, true, false));
            prop_assert_eq!(slow.cursor(), fast.cursor());
            prop_assert_eq!(slow.redraw(), fast.redraw());
            // What comes next is drawn the same too (colours, REP, pending state).
            let next = b"\x1b[3bnext \x1b[5b\r\n";
            prop_assert_eq!(slow.feed(next), fast.feed(next));
            prop_assert_eq!(everything(&slow, false), everything(&fast, false));
            prop_assert_eq!(everything(&slow, true), everything(&fast, true));
            prop_assert_eq!(slow.cursor(), fast.cursor());
            prop_assert_eq!(slow.redraw(), fast.redraw());
        }
    }

    #[test]
    fn a_burst_of_coloured_plain_lines_keeps_every_line() {
        let mut s = Screen::new(PaneSize { cols: 20, rows: 5 }, 100_000, 1 << 24);
        s.feed(b"\r\n");
        let mut big = Vec::new();
        for i in 0..5000 {
            big.extend_from_slice(format!("\x1b[32m{i}\x1b[m\r\n").as_bytes());
        }
        s.feed(&big);
        let all = everything(&s, false);
        // The empty first line, 5000 lines, the empty row the cursor is on.
        assert_eq!(all.len(), 5002);
        assert_eq!(all[1], "0");
        assert_eq!(all[5000], "4999");
        assert_eq!(s.visible_text(), vec!["4996", "4997", "4998", "4999", ""]);
    }
}
