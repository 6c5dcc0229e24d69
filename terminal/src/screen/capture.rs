//! Reading the screen out: captures as text or with SGR attributes (numbered as
//! tmux numbers them), and the redraw a newly attached client is sent first.

use super::Screen;
use crate::output::TextLines;
use alacritty_terminal::grid::Row;
use alacritty_terminal::index::Column;
use alacritty_terminal::term::cell::{Cell, Flags};
use alacritty_terminal::term::TermMode;
use alacritty_terminal::vte::ansi::{Color, NamedColor};
use std::fmt::Write as _;

impl Screen {
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
    pub(super) fn cursor_shape_code(&self) -> u8 {
        self.term.as_deref().map_or(0, |t| t.program_cursor_style_code())
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

/// Appends a cell's character and its zero-width companions; characters that must
/// not reach a reader (C1 controls, bidi overrides) become a blank or nothing.
fn push_cell(cell: &Cell, out: &mut String) {
    use fugue_protocol::limits::{is_control_or_bidi, is_unsafe_char};
    out.push(if is_unsafe_char(cell.c) { ' ' } else { cell.c });
    if let Some(extra) = cell.zerowidth() {
        out.extend(extra.iter().filter(|c| !is_control_or_bidi(**c)));
    }
}

/// Appends a row's text, trailing blanks trimmed; returns whether it soft-wraps.
/// This runs for every line that scrolls off, so it first finds the last cell
/// that is not a blank and copies only up to it.
pub(super) fn row_text(row: &Row<Cell>, out: &mut String) -> bool {
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
