//! A pane's output buffers: the raw byte log (see [`super::raw_log`]) and the
//! ANSI-stripped text view.
//!
//! Both are fed chunk by chunk as the PTY is read, and neither cares where a chunk
//! ends: an escape sequence, a UTF-8 character or a line cut across two reads comes
//! out whole. Neither knows anything of sockets or actors.

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Default number of raw bytes kept per pane (`output_byte_limit`).
pub const DEFAULT_BYTE_LIMIT: usize = 1024 * 1024;
/// Default cap of the text view, in lines.
pub const DEFAULT_TEXT_LINES: usize = 10_000;
/// Default cap of the text view, in bytes.
pub const DEFAULT_TEXT_BYTES: usize = 4 * 1024 * 1024;
/// A line longer than this is wrapped, so one endless line cannot grow without bound.
const MAX_LINE_CHARS: usize = 16 * 1024;

pub use super::raw_log::{LogRead, LogSnapshot, OutputLog};

/// One completed line of the text view.
#[derive(Debug, Serialize, Deserialize)]
struct Line {
    text: String,
    /// Log offset at which the line was complete.
    end: u64,
}

/// The text view: output with escape sequences removed, as lines.
///
/// Carriage return, backspace, tab and the cursor movements that stay on one line
/// (erase-in-line, horizontal moves) are applied, so progress bars end up as their
/// last state rather than as every frame glued together.
pub struct TextLines {
    limiter: crate::string_limit::StringLimiter,
    parser: vte::Parser,
    lines: LineStore,
}

/// The completed lines. The text view sees the newest ones within its caps
/// (from `visible_from`); older lines stay only while the screen's scrollback
/// refers to them (from `pinned_from`), so a line that is both in the text view
/// and in the scrollback is stored once.
#[derive(Serialize, Deserialize)]
struct LineStore {
    /// Physically kept lines; `lines[0]` has sequence number `first_seq`.
    lines: VecDeque<Line>,
    first_seq: u64,
    /// Oldest line the text view shows.
    visible_from: u64,
    /// Oldest line the scrollback refers to (`u64::MAX`: none).
    pinned_from: u64,
    max_lines: usize,
    max_bytes: usize,
    bytes: usize,
    dropped: u64,
    last_dropped_end: u64,
    current: String,
    /// Characters in `current`, and the cursor column within it.
    current_chars: usize,
    col: usize,
    /// Offset at the end of the chunk being fed; lines completed in it end there.
    chunk_end: u64,
    current_touched: u64,
}

/// Lines read from [`TextLines`].
#[derive(Debug, PartialEq, Eq)]
pub struct TextRead {
    pub lines: Vec<String>,
    pub truncated: bool,
}

/// A [`TextLines`] as it is handed to an upgraded daemon (its parser starts
/// afresh: a sequence cut by the upgrade is lost).
#[derive(Serialize, Deserialize)]
pub struct TextSnapshot(LineStore);

impl TextLines {
    pub fn snapshot(&self) -> TextSnapshot {
        let store = &self.lines;
        TextSnapshot(LineStore {
            lines: store
                .lines
                .iter()
                .map(|l| Line {
                    text: l.text.clone(),
                    end: l.end,
                })
                .collect(),
            current: store.current.clone(),
            ..*store
        })
    }

    pub fn from_snapshot(snapshot: TextSnapshot) -> Self {
        let mut text = Self::new(1, 1);
        text.lines = snapshot.0;
        text
    }

    pub fn new(max_lines: usize, max_bytes: usize) -> Self {
        Self {
            limiter: crate::string_limit::StringLimiter::new(),
            parser: vte::Parser::new(),
            lines: LineStore {
                lines: VecDeque::new(),
                first_seq: 0,
                visible_from: 0,
                pinned_from: u64::MAX,
                max_lines: max_lines.max(1),
                max_bytes: max_bytes.max(1),
                bytes: 0,
                dropped: 0,
                last_dropped_end: 0,
                current: String::new(),
                current_chars: 0,
                col: 0,
                chunk_end: 0,
                current_touched: 0,
            },
        }
    }

    /// Log offset just past the last byte fed.
    pub fn fed(&self) -> u64 {
        self.lines.chunk_end
    }

    /// Feeds a chunk whose last byte is at log offset `chunk_end - 1`.
    ///
    /// Text between sequences (runs of printable ASCII, CR, LF) goes to the lines
    /// directly, a run at a time; the parser sees the rest, in pieces that end
    /// where text may start again. It is what the parser would do with every
    /// byte (it calls `print` for each such character and `execute` for CR and LF
    /// when it is between sequences), without a call per character.
    pub fn push(&mut self, bytes: &[u8], chunk_end: u64) {
        self.lines.chunk_end = chunk_end;
        let bytes = self.limiter.filter(bytes);
        let mut rest = &bytes[..];
        while let Some(&first) = rest.first() {
            let ground = self.parser.is_ground();
            if ground && (0x20..=0x7e).contains(&first) {
                let run = rest
                    .iter()
                    .position(|b| !(0x20..=0x7e).contains(b))
                    .unwrap_or(rest.len());
                self.lines.put_ascii(&rest[..run]);
                rest = &rest[run..];
                continue;
            }
            if ground && (first == b'\r' || first == b'\n') {
                vte::Perform::execute(&mut self.lines, first);
                rest = &rest[1..];
                continue;
            }
            let piece = parser_piece(rest, ground);
            self.parser.advance(&mut self.lines, &rest[..piece]);
            rest = &rest[piece..];
        }
    }

    /// The last `count` lines (the unfinished last line included when not empty),
    /// limited to lines that changed after offset `since` when given.
    /// At most `max_bytes` of text are returned; older lines give way first.
    pub fn read(&self, count: usize, since: Option<u64>, max_bytes: usize) -> TextRead {
        let store = &self.lines;
        let after = since.unwrap_or(0);
        let fresh = |end: u64| since.is_none() || end > after;
        let partial = !store.current.is_empty() && fresh(store.current_touched);
        let wanted_complete = count.saturating_sub(partial as usize);
        let mut budget = max_bytes.saturating_sub(if partial { store.current.len() } else { 0 });
        let mut over_budget = false;
        let mut lines: Vec<String> = store
            .visible()
            .rev()
            .take_while(|l| fresh(l.end))
            .take(wanted_complete)
            .take_while(|l| {
                over_budget = l.text.len() + 1 > budget;
                budget = budget.saturating_sub(l.text.len() + 1);
                !over_budget
            })
            .map(|l| l.text.clone())
            .collect();
        lines.reverse();
        if partial && count > 0 {
            lines.push(store.current.clone());
        }
        // The reader asked for lines that the caps already dropped.
        let truncated = over_budget
            || match since {
                None => store.dropped > 0 && lines.len() < count,
                Some(after) => store.dropped > 0 && store.last_dropped_end > after,
            };
        TextRead { lines, truncated }
    }
}

/// Lines copied out of the text view for a pattern search, so that the search
/// holds no lock while it runs (see `requests::search`).
#[derive(Debug, Default)]
pub struct SearchBatch {
    /// Complete lines that ended after the offset asked for, oldest first, each
    /// with the log offset at which it was complete.
    pub lines: Vec<(String, u64)>,
    /// The unfinished last line, when it changed after the offset the search
    /// began at (a prompt drawn before is no echo of what was typed since) and
    /// this is the search's last batch.
    pub partial: Option<String>,
    /// More complete lines remain after these.
    pub more: bool,
}

/// What searching a [`SearchBatch`] found.
#[derive(Debug, PartialEq, Eq)]
pub struct BatchSearch {
    pub matched: Option<String>,
    /// Offset up to which complete lines were searched without a match.
    pub searched: u64,
    /// The search stopped early (its deadline passed) without a match.
    pub interrupted: bool,
}

impl SearchBatch {
    /// Searches line by line with `find` until a match, the end, or `give_up`
    /// (asked between lines) says to stop.
    pub fn search(
        &self,
        since: u64,
        mut find: impl FnMut(&str) -> Option<String>,
        give_up: impl Fn() -> bool,
    ) -> BatchSearch {
        let mut searched = since;
        for (i, (text, end)) in self.lines.iter().enumerate() {
            if give_up() {
                return BatchSearch {
                    matched: None,
                    searched,
                    interrupted: true,
                };
            }
            if let Some(found) = find(text) {
                return BatchSearch {
                    matched: Some(found),
                    searched,
                    interrupted: false,
                };
            }
            // Lines completed by one read share its end offset: resuming from an
            // offset skips every line that ends there, so it moves past a group
            // only once the whole group is searched.
            if self.lines.get(i + 1).is_none_or(|(_, next)| next != end) {
                searched = *end;
            }
        }
        BatchSearch {
            matched: self.partial.as_deref().and_then(find),
            searched,
            interrupted: false,
        }
    }
}

impl TextLines {
    /// Copies out the complete lines that ended after `since`, up to about
    /// `max_bytes` of them (at least one), and, in the last batch, the
    /// unfinished line when it changed after `began` (where the search that
    /// resumes at `since` began).
    pub fn search_batch(&self, since: u64, began: u64, max_bytes: usize) -> SearchBatch {
        let store = &self.lines;
        let visible = store.visible_from.saturating_sub(store.first_seq) as usize;
        let first = store.lines.partition_point(|l| l.end <= since).max(visible);
        let mut batch = SearchBatch::default();
        let mut room = max_bytes;
        for line in store.lines.range(first.min(store.lines.len())..) {
            let same_read = batch.lines.last().is_some_and(|(_, end)| *end == line.end);
            if !batch.lines.is_empty() && line.text.len() > room && !same_read {
                batch.more = true;
                break;
            }
            room = room.saturating_sub(line.text.len() + 1);
            batch.lines.push((line.text.clone(), line.end));
        }
        if !batch.more && store.current_touched > began {
            batch.partial = Some(store.current.clone());
        }
        batch
    }
}

/// Numbered lines for a grep (see [`TextLines::numbered_lines`]).
#[derive(Default)]
pub struct NumberedLines {
    /// Each line's sequence number and text, oldest first.
    pub lines: Vec<(u64, String)>,
    /// Where the next batch starts.
    pub next: u64,
    /// More lines remain after these.
    pub more: bool,
}

impl TextLines {
    /// Every kept line (the text view and the scrollback's) from sequence
    /// number `from` (or the oldest kept), within `max_bytes` (at least one
    /// line), with the unfinished last line once the complete ones are done.
    pub fn numbered_lines(&self, from: u64, max_bytes: usize) -> NumberedLines {
        let store = &self.lines;
        let start = from.max(store.first_seq);
        let mut batch = NumberedLines {
            next: start,
            ..Default::default()
        };
        let mut room = max_bytes;
        let first = (start - store.first_seq) as usize;
        for (i, line) in store.lines.iter().enumerate().skip(first) {
            if !batch.lines.is_empty() && line.text.len() > room {
                batch.more = true;
                return batch;
            }
            room = room.saturating_sub(line.text.len() + 1);
            let seq = store.first_seq + i as u64;
            batch.lines.push((seq, line.text.clone()));
            batch.next = seq + 1;
        }
        if !store.current.is_empty() {
            let seq = store.first_seq + store.lines.len() as u64;
            batch.lines.push((seq, store.current.clone()));
            batch.next = seq + 1;
        }
        batch
    }

    /// The last `count` complete lines (not the unfinished one), within
    /// `max_bytes`.
    pub fn complete_lines(&self, count: usize, max_bytes: usize) -> Vec<String> {
        let mut budget = max_bytes;
        let mut lines: Vec<String> = self
            .lines
            .visible()
            .rev()
            .take(count)
            .take_while(|l| {
                let fits = l.text.len() < budget;
                budget = budget.saturating_sub(l.text.len() + 1);
                fits
            })
            .map(|l| l.text.clone())
            .collect();
        lines.reverse();
        lines
    }

    /// Sequence number the next completed line will get.
    pub fn next_seq(&self) -> u64 {
        self.lines.first_seq + self.lines.lines.len() as u64
    }

    /// Completed line number `seq`, if it is still kept.
    pub fn line(&self, seq: u64) -> Option<&str> {
        let index = seq.checked_sub(self.lines.first_seq)?;
        self.lines.lines.get(index as usize).map(|l| l.text.as_str())
    }

    /// Sequence number just past the last line completed by log offset `offset`.
    pub fn next_seq_at(&self, offset: u64) -> u64 {
        let done = self.lines.lines.partition_point(|line| line.end <= offset);
        self.lines.first_seq + done as u64
    }

    /// A recent line after `after` and before `next` whose text is `text`: the
    /// first one in order (output scrolls off the screen in the order it was
    /// written) among the last `window` lines before `next`.
    pub fn match_line(&self, text: &str, after: Option<u64>, window: u64, next: u64) -> Option<u64> {
        let from = after
            .map_or(0, |a| a + 1)
            .max(next.saturating_sub(window))
            .max(self.lines.first_seq);
        (from..next).find(|seq| self.line(*seq) == Some(text))
    }

    /// Keep lines from `seq` on even when the text view no longer shows them.
    pub fn pin_from(&mut self, seq: u64) {
        self.lines.pinned_from = seq;
        self.lines.release();
    }
}

/// Lines beyond the text view's cap that the scrollback usually still refers to
/// (the screen's rows), room for which is reserved with the cap.
const PINNED_SLACK: usize = 256;

/// Appends to a ring that is capped at about `cap` elements. It grows by doubling
/// while far below the cap (an idle pane stays small), then to the cap exactly,
/// and past it (lines kept for another reader) by an eighth at a time: a ring
/// that rotates touches all of its capacity, so doubling to 16 384 slots for a
/// 10 000-line cap would keep 60% more memory resident than the lines need.
pub fn push_capped<T>(ring: &mut VecDeque<T>, item: T, cap: usize) {
    let len = ring.len();
    if len == ring.capacity() {
        let additional = match len < cap {
            true => len.max(16).min(cap - len),
            false => len / 8 + 16,
        };
        ring.reserve_exact(additional);
    }
    ring.push_back(item);
}

impl LineStore {
    /// The lines the text view shows, oldest first.
    fn visible(&self) -> std::collections::vec_deque::Iter<'_, Line> {
        let skip = self.visible_from.saturating_sub(self.first_seq) as usize;
        self.lines.range(skip.min(self.lines.len())..)
    }

    fn finish_line(&mut self) {
        // One exact allocation per line; `current` keeps its buffer for the next.
        let text = String::from(self.current.trim_end());
        self.current.clear();
        self.bytes += text.len();
        let cap = self.max_lines + PINNED_SLACK;
        push_capped(
            &mut self.lines,
            Line {
                text,
                end: self.chunk_end,
            },
            cap,
        );
        let next = self.first_seq + self.lines.len() as u64;
        while next - self.visible_from > 1
            && (next - self.visible_from > self.max_lines as u64 || self.bytes > self.max_bytes)
        {
            self.hide_oldest();
        }
        self.release();
        self.current_chars = 0;
        self.col = 0;
    }

    /// The text view stops showing its oldest line.
    fn hide_oldest(&mut self) {
        let index = (self.visible_from - self.first_seq) as usize;
        if let Some(line) = self.lines.get(index) {
            self.bytes -= line.text.len();
            self.dropped += 1;
            self.last_dropped_end = line.end;
        }
        self.visible_from += 1;
    }

    /// Frees lines neither the text view nor the scrollback needs.
    fn release(&mut self) {
        let keep_from = self.visible_from.min(self.pinned_from);
        while self.first_seq < keep_from && self.lines.pop_front().is_some() {
            self.first_seq += 1;
        }
    }

    /// `print` of each byte of `text`, printable ASCII, appended in one go where
    /// the column is the end of the line.
    fn put_ascii(&mut self, mut text: &[u8]) {
        while !text.is_empty() {
            if self.col >= MAX_LINE_CHARS || self.col != self.current_chars {
                self.put_char(char::from(text[0]));
                text = &text[1..];
                continue;
            }
            let (run, more) = text.split_at(text.len().min(MAX_LINE_CHARS - self.col));
            // ASCII, so always UTF-8 (checked at memory speed).
            self.current.push_str(std::str::from_utf8(run).unwrap_or_default());
            self.current_chars += run.len();
            self.col += run.len();
            self.current_touched = self.chunk_end;
            text = more;
        }
    }

    fn put_char(&mut self, c: char) {
        self.current_touched = self.chunk_end;
        if self.col >= MAX_LINE_CHARS {
            self.finish_line();
        }
        if self.col == self.current_chars {
            self.current.push(c);
            self.current_chars += 1;
        } else if self.col > self.current_chars {
            let gap = self.col - self.current_chars;
            self.current.extend(std::iter::repeat_n(' ', gap));
            self.current.push(c);
            self.current_chars = self.col + 1;
        } else {
            // Overwrite after a carriage return or a move left, in place, at the
            // character's byte: the column itself while the line is ASCII (as
            // many bytes as characters). Rebuilding the line for each character
            // made a program that rewrites long lines cost the square of their
            // length.
            let at = match self.current.len() == self.current_chars {
                true => self.col,
                false => self
                    .current
                    .char_indices()
                    .nth(self.col)
                    .map_or(self.current.len(), |(i, _)| i),
            };
            let end = at + self.current[at..].chars().next().map_or(0, char::len_utf8);
            self.current.replace_range(at..end, c.encode_utf8(&mut [0; 4]));
        }
        self.col += 1;
    }

    fn erase_from(&mut self, col: usize) {
        if col < self.current_chars {
            let cut = self
                .current
                .char_indices()
                .nth(col)
                .map_or(self.current.len(), |(i, _)| i);
            self.current.truncate(cut);
            self.current_chars = col;
            self.current_touched = self.chunk_end;
        }
    }
}

/// How much of `bytes` (not text the lines take directly) the parser gets next:
/// an escape sequence to its end when it is a CSI (the common kind), the rest of
/// a string sequence up to its terminator, a run of non-ASCII UTF-8, or a byte.
/// Any cut is right (the parser keeps its state between calls); these end where
/// text may start again.
fn parser_piece(bytes: &[u8], ground: bool) -> usize {
    match bytes[0] {
        0x1b if bytes.get(1) == Some(&b'[') => {
            let params = bytes[2..].iter().position(|b| !(0x20..=0x3f).contains(b));
            params.map_or(bytes.len(), |i| {
                2 + i + usize::from((0x40..=0x7e).contains(&bytes[2 + i]))
            })
        }
        0x1b => bytes.len().min(2),
        _ if !ground => memchr::memchr2(0x1b, 0x07, &bytes[1..]).map_or(bytes.len(), |i| match bytes[1 + i] {
            0x07 => i + 2,
            _ => i + 1,
        }),
        0x80.. => 1 + bytes[1..].iter().position(|b| *b < 0x80).unwrap_or(bytes.len() - 1),
        _ => 1,
    }
}

impl vte::Perform for LineStore {
    fn print(&mut self, c: char) {
        // C1 controls and bidi overrides arrive as printable characters; they never
        // reach a reader of the text view (a zero-width joiner stays, as on the
        // screen: it joins an emoji; what shows the text escapes it).
        if fugue_protocol::limits::is_control_or_bidi(c) {
            return;
        }
        self.put_char(c);
    }

    fn execute(&mut self, byte: u8) {
        match byte {
            b'\n' | 0x0b | 0x0c => self.finish_line(),
            b'\r' => self.col = 0,
            0x08 => self.col = self.col.saturating_sub(1),
            b'\t' => {
                // A bounded count, not "until the column is reached": at the
                // line's cap `put_char` starts a new line, and a column moved
                // past the cap was never reached (`ESC[65535C` then a tab hung
                // the emulation thread for good; found by the output_path fuzz
                // target).
                let next = (self.col / 8 + 1) * 8;
                for _ in self.col..next.min(MAX_LINE_CHARS) {
                    self.put_char(' ');
                }
            }
            _ => {}
        }
    }

    fn csi_dispatch(&mut self, params: &vte::Params, _: &[u8], _: bool, action: char) {
        let first = params.iter().next().and_then(|p| p.first().copied()).unwrap_or(0) as usize;
        let count = first.max(1);
        match action {
            'K' => match first {
                0 => self.erase_from(self.col),
                2 => self.erase_from(0),
                _ => {}
            },
            // Columns stay within the line's cap (a move is at most 65 535).
            'G' | '`' => self.col = (count - 1).min(MAX_LINE_CHARS),
            'C' | 'a' => self.col = (self.col + count).min(MAX_LINE_CHARS),
            'D' => self.col = self.col.saturating_sub(count),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log and a text view fed together, as a pane feeds them.
    struct Both {
        log: OutputLog,
        text: TextLines,
    }

    impl Both {
        fn new(byte_limit: usize, lines: usize, bytes: usize) -> Self {
            Self {
                log: OutputLog::new(byte_limit),
                text: TextLines::new(lines, bytes),
            }
        }

        fn push(&mut self, bytes: &[u8]) {
            self.log.push(bytes);
            self.text.push(bytes, self.log.end());
        }
    }

    fn text(chunks: &[&[u8]]) -> Vec<String> {
        let mut out = Both::new(1 << 20, 100, 1 << 20);
        for c in chunks {
            out.push(c);
        }
        out.text.read(100, None, usize::MAX).lines
    }

    /// A tab after a move past the line's cap ended only at a column the line
    /// never reached: the emulation thread spun for good (found by fuzzing).
    #[test]
    fn a_tab_after_a_long_move_ends() {
        let lines = text(&[b"ab\x1b[65535C\tcd\r\n\x1b[65535G\tef\r\n\x1b[?65535a\t\tgh\r\n"]);
        assert_eq!(
            lines.len(),
            6,
            "{:?}",
            lines.iter().map(String::len).collect::<Vec<_>>()
        );
        assert!(lines.iter().all(|l| l.chars().count() <= MAX_LINE_CHARS));
        assert_eq!(lines[1], "cd");
        assert_eq!(lines[5], "gh");
    }

    #[test]
    fn characters_overwritten_after_a_return_are_replaced_in_place() {
        let lines = text(&[
            b"hello\rJ\r\n",
            "h\u{e9}llo\rX\x1b[1C\u{e8}\r\n".as_bytes(),
            "abc\r\u{4e2d}\r\n".as_bytes(),
        ]);
        assert_eq!(lines, ["Jello", "X\u{e9}\u{e8}lo", "\u{4e2d}bc"]);
    }

    #[test]
    fn lines_split_across_reads_stay_whole() {
        assert_eq!(text(&[b"hel", b"lo\nwor", b"ld\n"]), vec!["hello", "world"]);
        // An escape sequence and a UTF-8 character cut in half.
        assert_eq!(text(&[b"\x1b[3", b"1mred\x1b[0m \xc3", b"\xa9\n"]), vec!["red é"]);
    }

    #[test]
    fn carriage_return_and_erase() {
        assert_eq!(text(&[b"10%\r50%\r100%\n"]), vec!["100%"]);
        assert_eq!(text(&[b"long line\r\x1b[Kshort\n"]), vec!["short"]);
        assert_eq!(text(&[b"crlf\r\n", b"a\tb\n"]), vec!["crlf", "a       b"]);
        assert_eq!(text(&[b"abc\x08\x08X\n"]), vec!["aXc"]);
        assert_eq!(text(&[b"prompt$ "]), vec!["prompt$ "]);
    }

    #[test]
    fn text_caps_lines_and_reads_since() {
        let mut out = Both::new(1 << 20, 3, 1 << 20);
        for i in 0..5 {
            out.push(format!("line {i}\n").as_bytes());
        }
        let read = out.text.read(10, None, usize::MAX);
        assert_eq!(read.lines, vec!["line 2", "line 3", "line 4"]);
        assert!(read.truncated);
        let mark = out.log.end();
        out.push(b"line 5\npart");
        let read = out.text.read(10, Some(mark), usize::MAX);
        assert_eq!(read.lines, vec!["line 5", "part"]);
        assert!(!read.truncated);
        assert_eq!(out.text.read(1, None, usize::MAX).lines, vec!["part"]);
        let read = out.text.read(10, None, 16);
        assert_eq!(read.lines, vec!["line 5", "part"]);
        assert!(read.truncated);
    }

    /// The first match after `since`, as a wait searches: batch by batch.
    fn find(out: &Both, pattern: &str, since: u64) -> (Option<String>, u64) {
        let re = regex::Regex::new(pattern).unwrap();
        let mut searched = since;
        loop {
            let batch = out.text.search_batch(searched, since, 16);
            let found = batch.search(searched, |line| re.find(line).map(|m| m.as_str().to_string()), || false);
            searched = found.searched;
            if found.matched.is_some() || !batch.more {
                return (found.matched, searched);
            }
        }
    }

    #[test]
    fn an_unfinished_line_is_searched_only_once_it_changes() {
        let mut out = Both::new(1 << 20, 100, 1 << 20);
        out.push(b"ready\n> ");
        // The prompt drawn before `since` is no new output...
        let since = out.log.end();
        assert_eq!(find(&out, "[\\s\\S]", since).0, None);
        // ...what is typed after it is, unfinished line and all.
        out.push(b"b");
        assert_eq!(find(&out, "[\\s\\S]", since).0.as_deref(), Some(">"));
    }

    #[test]
    fn find_resumes_after_searched_lines() {
        let mut out = Both::new(1 << 20, 100, 1 << 20);
        out.push(b"alpha\nbeta\ngam");
        let (found, searched) = find(&out, "g.m+a", 0);
        assert_eq!(found, None);
        assert_eq!(searched, out.log.end());
        out.push(b"ma ray\n");
        assert_eq!(find(&out, "g.m+a", searched).0.as_deref(), Some("gamma"));
        assert_eq!(find(&out, "^b", 0).0.as_deref(), Some("b"));
        assert_eq!(find(&out, "^b", searched).0, None);
    }

    #[test]
    fn a_search_gives_up_between_lines_and_says_how_far_it_got() {
        let mut out = Both::new(1 << 20, 100, 1 << 20);
        out.push(b"one\ntwo\nthree\n");
        let batch = out.text.search_batch(0, 0, 1 << 20);
        assert_eq!(batch.lines.len(), 3);
        assert!(!batch.more);
        let asked = std::cell::Cell::new(0);
        let found = batch.search(
            0,
            |_| None,
            || {
                asked.set(asked.get() + 1);
                asked.get() > 2
            },
        );
        assert!(found.interrupted);
        assert_eq!(
            found.searched, 0,
            "lines of one read end together: none is done until all are"
        );
        // Small batches: one line at least, and never half of one read's lines.
        out.push(b"four\n");
        let batch = out.text.search_batch(0, 0, 1);
        assert_eq!((batch.lines.len(), batch.more), (3, true));
        let rest = out
            .text
            .search_batch(batch.search(0, |_| None, || false).searched, 0, 1);
        // The unfinished line comes with the last batch when it changed after
        // where the search began, wherever the batches before it stopped.
        out.push(b"five\nsix");
        let first = out.text.search_batch(0, 0, 1);
        let mut resumed = first.search(0, |_| None, || false).searched;
        let last = loop {
            let batch = out.text.search_batch(resumed, 0, 1);
            if !batch.more {
                break batch;
            }
            resumed = batch.search(resumed, |_| None, || false).searched;
        };
        assert_eq!(last.partial.as_deref(), Some("six"));
        assert_eq!(rest.lines.len(), 1);
        assert_eq!(rest.lines[0].0, "four");
    }

    #[test]
    fn text_caps_bytes_and_long_lines() {
        let mut out = Both::new(1 << 20, 1000, 100);
        for _ in 0..10 {
            out.push(&[b'y'; 40]);
            out.push(b"\n");
        }
        assert_eq!(out.text.read(1000, None, usize::MAX).lines.len(), 2);
        let mut out = Both::new(1 << 20, 1000, 1 << 20);
        out.push(&vec![b'z'; MAX_LINE_CHARS * 2 + 5]);
        let lines = out.text.read(1000, None, usize::MAX).lines;
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[2].len(), 5);
    }

    #[test]
    fn capped_rings_grow_to_their_cap_not_past_it() {
        let mut ring = VecDeque::new();
        for n in 0..10_000 {
            push_capped(&mut ring, n, 10_000);
            if n == 3 {
                assert!(ring.capacity() < 64, "{}", ring.capacity());
            }
        }
        assert!(ring.capacity() < 10_100, "{}", ring.capacity());
        for n in 0..100 {
            ring.pop_front();
            push_capped(&mut ring, n, 10_000);
        }
        assert!(ring.capacity() < 10_100, "{}", ring.capacity());
        push_capped(&mut ring, 1, 10_000);
        assert!(ring.capacity() < 11_500, "{}", ring.capacity());
    }
}

/// The text view's runs of text against the parser alone.
#[cfg(test)]
mod text_run_tests {
    use super::*;
    use proptest::prelude::*;

    /// Output as bytes from pieces that matter to the text view: text, controls,
    /// erase and moves, SGR, strings (titles, links) with either terminator,
    /// UTF-8 and C1, cut anywhere by the chunking.
    fn output() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop::sample::select(vec![
            &b"text"[..],
            b"a longer run of printable text ",
            b"\r",
            b"\n",
            b"\r\n",
            b"\t",
            b"\x08",
            b"\x07",
            b"\x1b[31m",
            b"\x1b[m",
            b"\x1b[K",
            b"\x1b[2K",
            b"\x1b[5C",
            b"\x1b[3D",
            b"\x1b[10G",
            b"\x1b[?25l",
            b"\x1b]0;title\x07",
            b"\x1b]8;;http://x\x1b\\",
            b"\x1b(0",
            b"\x1b",
            b"[",
            "é中".as_bytes(),
            b"\xe4\xb8",
            b"\xc2\x9b",
            b"\x9b",
            b"\xff",
        ]);
        prop::collection::vec(piece, 0..200).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]
        #[test]
        fn runs_of_text_read_as_the_parser_reads_them(
            bytes in output(),
            cuts in prop::collection::vec(1usize..200, 1..6),
        ) {
            let mut runs = TextLines::new(1000, 1 << 20);
            let mut parsed = TextLines::new(1000, 1 << 20);
            let mut end = 0;
            for chunk in crate::cut_into(&bytes, &cuts) {
                end += chunk.len() as u64;
                runs.push(chunk, end);
                parsed.lines.chunk_end = end;
                let filtered = parsed.limiter.filter(chunk);
                parsed.parser.advance(&mut parsed.lines, &filtered);
            }
            prop_assert_eq!(runs.read(1000, None, usize::MAX).lines, parsed.read(1000, None, usize::MAX).lines);
            prop_assert_eq!(runs.read(1000, Some(end / 2), usize::MAX).lines, parsed.read(1000, Some(end / 2), usize::MAX).lines);
            prop_assert_eq!((runs.lines.col, runs.lines.current_chars), (parsed.lines.col, parsed.lines.current_chars));
            prop_assert_eq!(&runs.lines.current, &parsed.lines.current);
            prop_assert_eq!(runs.parser.is_ground(), parsed.parser.is_ground());
        }
    }
}
