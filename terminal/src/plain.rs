//! Plain lines: output a terminal draws as nothing but text rows that scroll up.
//!
//! Builds and tests print lines of printable text, coloured by SGR sequences and
//! ended by CR LF. Most of them scroll off the screen within the same read, so
//! drawing them into the grid cell by cell only to turn the rows back into text
//! is wasted work. [`scan`] finds such a run of lines, so the screen can store
//! the ones that will scroll away as text directly (see `Screen`'s fast path).

/// A complete plain line: `bytes[start..end]` holds its text and SGR sequences,
/// and a CR LF follows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlainLine {
    pub start: usize,
    pub end: usize,
    /// Printable characters (each takes one cell).
    pub visible: usize,
}

impl PlainLine {
    /// Rows the line takes at `cols` columns when it starts at column 0 of an
    /// empty row and the terminal wraps: an empty line takes one, a line that
    /// exactly fills its last row does not wrap onto another.
    pub fn rows(&self, cols: usize) -> usize {
        self.visible.div_ceil(cols.max(1)).max(1)
    }

    /// Where the next line starts.
    pub fn next(&self) -> usize {
        self.end + 2
    }
}

/// Complete plain lines at the start of `bytes` into `out` (cleared first): runs
/// of printable ASCII and SGR sequences (`ESC [` digits, `;`, `:` `m`), each
/// ended by CR LF. Stops before the first line that holds anything else or does
/// not end within `bytes`, and once the lines take `max_rows` rows at `cols`.
pub fn scan(bytes: &[u8], cols: usize, max_rows: usize, out: &mut Vec<PlainLine>) {
    out.clear();
    let mut rows = 0;
    let mut start = 0;
    while rows < max_rows {
        let Some(line) = scan_line(bytes, start) else { return };
        rows += line.rows(cols);
        start = line.next();
        out.push(line);
    }
}

/// The plain line starting at `start`, if it is one and ends within `bytes`.
fn scan_line(bytes: &[u8], start: usize) -> Option<PlainLine> {
    let mut visible = 0;
    let mut i = start;
    loop {
        match *bytes.get(i)? {
            0x20..=0x7e => {
                visible += 1;
                i += 1;
            }
            b'\r' => return (*bytes.get(i + 1)? == b'\n').then_some(PlainLine { start, end: i, visible }),
            0x1b => i = sgr_end(bytes, i)?,
            _ => return None,
        }
    }
}

/// Just past the SGR sequence at `at` (an ESC), if it is one and ends in `bytes`.
/// One that may set an underline colour (a `58` anywhere in it) is not taken: a
/// blank drawn with one is text that counts, which the fast path's rows drop.
fn sgr_end(bytes: &[u8], at: usize) -> Option<usize> {
    if *bytes.get(at + 1)? != b'[' {
        return None;
    }
    let mut i = at + 2;
    loop {
        match *bytes.get(i)? {
            b'8' if bytes[i - 1] == b'5' => return None,
            b'0'..=b'9' | b';' | b':' => i += 1,
            b'm' => return Some(i + 1),
            _ => return None,
        }
    }
}

/// Splits a plain line (as [`scan`] found it) into its printable text, appended
/// to `text`, and its SGR sequences, appended to `sgr`.
pub fn split(line: &[u8], text: &mut Vec<u8>, sgr: &mut Vec<u8>) {
    let mut rest = line;
    while let Some(esc) = memchr::memchr(0x1b, rest) {
        text.extend_from_slice(&rest[..esc]);
        let end = sgr_end(rest, esc).unwrap_or(rest.len());
        sgr.extend_from_slice(&rest[esc..end]);
        rest = &rest[end..];
    }
    text.extend_from_slice(rest);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(bytes: &[u8], cols: usize, max_rows: usize) -> Vec<PlainLine> {
        let mut out = Vec::new();
        scan(bytes, cols, max_rows, &mut out);
        out
    }

    #[test]
    fn finds_complete_plain_lines_and_stops_at_anything_else() {
        let found = lines(b"one\r\n\x1b[1;31mtwo\x1b[m\r\n\r\nthree", 80, 100);
        assert_eq!(
            found,
            [
                PlainLine {
                    start: 0,
                    end: 3,
                    visible: 3
                },
                PlainLine {
                    start: 5,
                    end: 18,
                    visible: 3
                },
                PlainLine {
                    start: 20,
                    end: 20,
                    visible: 0
                },
            ]
        );
        // A cursor movement, a bare LF, a lone CR, a tab, UTF-8, a private SGR-like
        // sequence, or a sequence cut by the end of the read ends the run.
        for stop in [
            &b"a\x1b[2Ab\r\n"[..],
            b"a\nb\r\n",
            b"a\rb\r\n",
            b"a\tb\r\n",
            "é\r\n".as_bytes(),
            b"\x1b[>4;1m\r\n",
            b"\x1b[4;58;5;1mu\r\n",
            b"a\x1b[3",
            b"a\r",
        ] {
            let mut bytes = b"ok\r\n".to_vec();
            bytes.extend_from_slice(stop);
            assert_eq!(lines(&bytes, 80, 100).len(), 1, "{stop:?}");
        }
    }

    #[test]
    fn rows_follow_the_width() {
        let line = |visible| PlainLine {
            start: 0,
            end: 0,
            visible,
        };
        assert_eq!(line(0).rows(10), 1);
        assert_eq!(line(10).rows(10), 1);
        assert_eq!(line(11).rows(10), 2);
        assert_eq!(line(30).rows(10), 3);
        // The scan stops once the rows reach the cap.
        let bytes = "0123456789012345\r\n".repeat(10);
        assert_eq!(lines(bytes.as_bytes(), 10, 5).len(), 3);
    }

    #[test]
    fn split_separates_text_and_colours() {
        let (mut text, mut sgr) = (Vec::new(), Vec::new());
        split(b"\x1b[31mred\x1b[0m and \x1b[38:2::1:2:3mrgb", &mut text, &mut sgr);
        assert_eq!(text, b"red and rgb");
        assert_eq!(sgr, b"\x1b[31m\x1b[0m\x1b[38:2::1:2:3m");
    }
}
