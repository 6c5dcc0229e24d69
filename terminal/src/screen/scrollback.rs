//! The scrollback: lines that scrolled off the screen, kept as text in a compact
//! ring rather than as emulator cells (a 200-column row is ~4.8 KB as cells and its
//! length in bytes as text), and the moves between it and the emulator's history:
//! harvesting after every slice of input, and restoring before a resize rewraps.

use super::capture::row_text;
use super::{Screen, SharedText, HISTORY, SLICE_LINE_FEEDS};
use crate::output::{push_capped, TextLines};
use crate::sync::lock;
use alacritty_terminal::grid::{Dimensions, Row};
use alacritty_terminal::index::{Column, Line};
use alacritty_terminal::term::cell::{Cell, Flags};
use alacritty_terminal::term::TermMode;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Scrolled-off lines as text: one byte ring and a ring of line lengths, so
/// nothing is allocated per line once the caps are reached. A line that is also a
/// line of the pane's text view (plain output) is not copied: the scrollback refers
/// to it by its number there.
#[derive(Clone, Serialize, Deserialize)]
pub(super) struct Scrollback {
    text: VecDeque<u8>,
    lines: VecDeque<ScrollLine>,
    /// The text-view line numbers referred to, oldest first.
    shared: VecDeque<u64>,
    /// Bytes of all lines, own and shared (the byte cap counts both).
    bytes: usize,
    pub(super) max_lines: usize,
    pub(super) max_bytes: usize,
    /// Lines dropped by the caps, or lost to a burst that outran the emulator history.
    pub(super) dropped: u64,
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
    pub(super) fn new(max_lines: usize, max_bytes: usize) -> Self {
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

    pub(super) fn len(&self) -> usize {
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
    pub(super) fn lines(&self, from: usize, to: usize, text: Option<&TextLines>) -> Vec<(String, bool)> {
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

impl Screen {
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
    pub(super) fn harvest_history(&mut self, shared_with: Option<SharedText<'_>>) {
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
    pub(super) fn store_harvested(&mut self, count: usize, shared_with: Option<SharedText<'_>>, window: u64) {
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

    /// Before a resize: puts the newest scrollback lines (about `count` rows'
    /// worth, back to the start of a wrapped line) into the emulator's empty
    /// history, as tmux keeps them in its grid. The resize then reflows them at
    /// the new width with the screen and pulls into view what fits; the rest is
    /// harvested again, rewrapped. Without this, widening left the start of a
    /// wrapped line out of view and blank rows at the bottom.
    pub(super) fn restore_scrollback(&mut self, count: usize, text: Option<&TextLines>) {
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
}

/// The next of `harvested`'s rows to fill, emptied; `count` counts them.
pub(super) fn next_row<'a>(harvested: &'a mut Vec<(String, bool)>, count: &mut usize) -> &'a mut (String, bool) {
    if harvested.len() <= *count {
        harvested.push(Default::default());
    }
    *count += 1;
    let row = &mut harvested[*count - 1];
    row.0.clear();
    row
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
