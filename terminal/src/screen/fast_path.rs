//! The fast path for plain output: plain lines that would scroll off the screen
//! within one read go to the scrollback as text without being drawn cell by cell.
//! `fast_path_tests` checks it against feeding every byte to the emulator.

use super::capture::row_text;
use super::listener::Listener;
use super::scrollback::next_row;
use super::{Screen, SharedText, PLAIN_ROWS, SLICE_BYTES, SLICE_LINE_FEEDS};
use crate::plain::{self, PlainLine};
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::{Column, Line};
use alacritty_terminal::term::{Term, TermMode};

impl Screen {
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
    pub(super) fn skip_plain_lines(&mut self, bytes: &[u8], text: Option<SharedText<'_>>) -> Skip {
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
}

/// What [`Screen::skip_plain_lines`] did.
pub(super) enum Skip {
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
pub(super) fn line_end(bytes: &[u8]) -> usize {
    let window = &bytes[..slice_end(bytes)];
    memchr::memchr(b'\n', window).map_or(window.len(), |i| i + 1)
}

/// Where the next slice ends: at most [`SLICE_BYTES`] and [`SLICE_LINE_FEEDS`].
pub(super) fn slice_end(bytes: &[u8]) -> usize {
    let window = &bytes[..bytes.len().min(SLICE_BYTES)];
    match memchr::memchr_iter(b'\n', window).nth(SLICE_LINE_FEEDS - 1) {
        Some(i) => i + 1,
        None => window.len(),
    }
}

#[cfg(test)]
#[path = "fast_path_tests.rs"]
mod tests;
