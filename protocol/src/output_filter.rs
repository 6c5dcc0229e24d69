//! What of a pane's output must not reach the terminal a client shows it on.
//!
//! A pane's output is passed through to attached terminals byte for byte, so a
//! terminal query the program sends (cursor position, device attributes, a mode,
//! a colour, the kitty keyboard flags) would be answered twice: by fugue's own
//! emulator, which always answers, and by every attached terminal, whose answers
//! come back as typed input. The program then reads stray replies as keystrokes.
//! So the queries fugue answers are removed on the way out, leaving one answer
//! whether zero or five clients are attached. Clipboard writes (OSC 52) are
//! removed too unless the user allowed them: any program in the pane could
//! otherwise set the user's clipboard. So is tmux's passthrough (`ESC P tmux;
//! ... ESC \\`), which programs that believe they run in tmux (a bridged
//! pane's) wrap notifications and clipboard writes in: meant for the terminal
//! around tmux, it would carry anything, unfiltered, to the terminal around a
//! person's tmux.
//!
//! Everything else passes unchanged and in order, across any chunk split.

/// The longest control sequence held back while deciding; a longer one passes
/// through as it is (no query is that long).
const MAX_HELD: usize = 64;

/// Removes answered queries (and, unless allowed, clipboard writes) from a pane's
/// output, keeping state across chunk boundaries. On the way it follows the kitty
/// keyboard flags the program sets (see [`OutputFilter::kitty_keyboard`]).
#[derive(Debug, Default)]
pub struct OutputFilter {
    allow_clipboard: bool,
    keyboard: KittyFlags,
    state: State,
    /// Bytes held back while it is not yet known whether they start something
    /// to remove.
    held: Vec<u8>,
}

#[derive(Default, Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    #[default]
    Ground,
    /// After ESC.
    Escape,
    /// After ESC [, collecting parameters and intermediates.
    Csi,
    /// After ESC ], reading the OSC number.
    OscNumber,
    /// Inside an OSC that may be a colour query, held until it ends.
    OscQuery,
    /// After ESC inside a held colour OSC: `\` ends it.
    OscQueryEscape,
    /// Inside an OSC 52, dropping it.
    Dropping,
    /// After ESC inside an OSC 52: `\` ends it.
    DroppingEscape,
    /// After ESC P, holding what may be `tmux;`.
    DcsPrefix,
    /// Inside tmux passthrough, dropping it (ESC inside is doubled).
    Passthrough,
    /// After ESC inside tmux passthrough: ESC is a doubled one, `\` the end.
    PassthroughEscape,
}

/// How tmux's passthrough begins.
const TMUX_PASSTHROUGH: &[u8] = b"\x1bPtmux;";

impl OutputFilter {
    /// A filter that lets clipboard writes through when `allow_clipboard`.
    pub fn new(allow_clipboard: bool) -> Self {
        Self {
            allow_clipboard,
            ..Self::default()
        }
    }

    /// Starts over (before a redraw, or on another pane).
    pub fn reset(&mut self) {
        *self = Self::new(self.allow_clipboard);
    }

    pub fn filter(&mut self, data: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(data.len());
        let mut rest = data;
        while !rest.is_empty() {
            if self.state == State::Ground {
                // Plain text is most of any output: copy up to the next escape.
                let run = rest.iter().position(|&b| b == 0x1b).unwrap_or(rest.len());
                out.extend_from_slice(&rest[..run]);
                rest = &rest[run..];
                if rest.is_empty() {
                    break;
                }
            }
            self.state = self.step(rest[0], &mut out);
            rest = &rest[1..];
        }
        out
    }

    fn step(&mut self, byte: u8, out: &mut Vec<u8>) -> State {
        match (self.state, byte) {
            (State::Ground, 0x1b) => self.hold(byte, State::Escape),
            (State::Ground, _) => {
                out.push(byte);
                State::Ground
            }
            (State::Escape, b'[') => self.hold(byte, State::Csi),
            (State::Escape, b']') => self.hold(byte, State::OscNumber),
            (State::Escape, b'P') => self.hold(byte, State::DcsPrefix),
            (State::DcsPrefix, _) if TMUX_PASSTHROUGH.get(self.held.len()) == Some(&byte) => {
                if self.held.len() + 1 < TMUX_PASSTHROUGH.len() {
                    return self.hold(byte, State::DcsPrefix);
                }
                self.held.clear();
                State::Passthrough
            }
            (State::Passthrough, 0x1b) => State::PassthroughEscape,
            (State::Passthrough, _) => State::Passthrough,
            (State::PassthroughEscape, 0x1b) => State::Passthrough,
            // `\` ends it; a single ESC ends it too, as tmux reads it.
            (State::PassthroughEscape, _) => State::Ground,
            // DECID, an old spelling of "send device attributes".
            (State::Escape, b'Z') => {
                self.held.clear();
                State::Ground
            }
            (State::Csi, 0x20..=0x3f) if self.held.len() < MAX_HELD => self.hold(byte, State::Csi),
            (State::Csi, 0x40..=0x7e) => {
                self.held.push(byte);
                self.keyboard.observe(&self.held[2..]);
                if !answered_query(&self.held[2..]) {
                    out.append(&mut self.held);
                }
                self.held.clear();
                State::Ground
            }
            (State::OscNumber, b'0'..=b'9') if self.held.len() < 8 => self.hold(byte, State::OscNumber),
            (State::OscNumber, b';') => match &self.held[2..] {
                b"52" if !self.allow_clipboard => {
                    self.held.clear();
                    State::Dropping
                }
                b"4" | b"10" | b"11" | b"12" => self.hold(byte, State::OscQuery),
                _ => self.release(byte, out),
            },
            (State::OscQuery, 0x07) => {
                self.held.push(byte);
                self.end_colour_osc(out)
            }
            (State::OscQuery, 0x1b) => self.hold(byte, State::OscQueryEscape),
            (State::OscQuery, 0x18 | 0x1a) => self.release(byte, out),
            (State::OscQuery, _) if self.held.len() < MAX_HELD => self.hold(byte, State::OscQuery),
            (State::OscQueryEscape, b'\\') => {
                self.held.push(byte);
                self.end_colour_osc(out)
            }
            // BEL, or CAN and SUB (which cancel a sequence), end it.
            (State::Dropping, 0x07 | 0x18 | 0x1a) => State::Ground,
            (State::Dropping, 0x1b) => State::DroppingEscape,
            (State::Dropping, _) => State::Dropping,
            (State::DroppingEscape, b'\\') => State::Ground,
            // Another escape sequence cuts the OSC short, as terminals do.
            (State::DroppingEscape, 0x1b) => self.hold(byte, State::Escape),
            (State::DroppingEscape, _) => {
                out.extend_from_slice(&[0x1b, byte]);
                State::Ground
            }
            // Anything else: what was held was not something to remove.
            (
                State::Escape
                | State::Csi
                | State::OscNumber
                | State::OscQuery
                | State::OscQueryEscape
                | State::DcsPrefix,
                _,
            ) => self.release(byte, out),
        }
    }

    /// Whether the program has asked for keys in the kitty keyboard protocol's
    /// encoding (flags 1 or 8 on the screen it is on), going by the output this
    /// filter has seen since the last redraw.
    pub fn kitty_keyboard(&self) -> bool {
        self.keyboard.current() & (1 | 8) != 0
    }

    fn hold(&mut self, byte: u8, next: State) -> State {
        self.held.push(byte);
        next
    }

    /// Passes what was held, then treats `byte` as if nothing had been held.
    fn release(&mut self, byte: u8, out: &mut Vec<u8>) -> State {
        out.append(&mut self.held);
        self.state = State::Ground;
        self.step(byte, out)
    }

    /// A whole OSC 4/10/11/12 is held: drop it if it asks for a colour.
    fn end_colour_osc(&mut self, out: &mut Vec<u8>) -> State {
        let body = self
            .held
            .strip_suffix(b"\x1b\\")
            .or_else(|| self.held.strip_suffix(b"\x07"));
        let query = body.is_some_and(|body| body.split(|&b| b == b';').any(|field| field == b"?"));
        if !query {
            out.append(&mut self.held);
        }
        self.held.clear();
        State::Ground
    }
}

/// The kitty keyboard flag stacks of the main and the alternate screen, as the
/// program's `CSI > u` (push), `CSI < u` (pop) and `CSI = u` (set) leave them.
#[derive(Debug, Default)]
struct KittyFlags {
    main: Vec<u8>,
    alternate: Vec<u8>,
    on_alternate: bool,
}

/// Deeper stacks drop their oldest entry, as terminals do.
const MAX_KITTY_STACK: usize = 64;

impl KittyFlags {
    fn current(&self) -> u8 {
        let stack = if self.on_alternate { &self.alternate } else { &self.main };
        stack.last().copied().unwrap_or(0)
    }

    /// Follows one CSI sequence (what follows `ESC [`, final byte included).
    fn observe(&mut self, sequence: &[u8]) {
        let Some((&last, body)) = sequence.split_last() else {
            return;
        };
        let (marker, params) = match body.split_first() {
            Some((&m @ (b'?' | b'>' | b'=' | b'<'), rest)) => (Some(m), rest),
            _ => (None, body),
        };
        let Ok(params) = std::str::from_utf8(params) else {
            return;
        };
        let mut numbers = params.split(';').map(|p| p.parse::<u16>().ok());
        let first = numbers.next().flatten();
        let stack = if self.on_alternate {
            &mut self.alternate
        } else {
            &mut self.main
        };
        match (marker, last) {
            (Some(b'>'), b'u') => {
                if stack.len() >= MAX_KITTY_STACK {
                    stack.remove(0);
                }
                stack.push(first.unwrap_or(0) as u8 & 31);
            }
            (Some(b'<'), b'u') => {
                let keep = stack.len().saturating_sub(first.unwrap_or(1).max(1) as usize);
                stack.truncate(keep);
            }
            (Some(b'='), b'u') => {
                let flags = first.unwrap_or(0) as u8 & 31;
                let current = stack.last().copied().unwrap_or(0);
                let new = match numbers.next().flatten().unwrap_or(1) {
                    2 => current | flags,
                    3 => current & !flags,
                    _ => flags,
                };
                match stack.last_mut() {
                    Some(top) => *top = new,
                    None => stack.push(new),
                }
            }
            (Some(b'?'), b'h' | b'l') => {
                let switches = params.split(';').any(|p| matches!(p, "47" | "1047" | "1049"));
                if switches {
                    self.on_alternate = last == b'h';
                }
            }
            _ => {}
        }
    }
}

/// Whether a CSI sequence (what follows `ESC [`, final byte included) is a query
/// fugue's emulator answers: device attributes (primary and secondary), device
/// status and cursor position, DECRQM, the text area size, the kitty keyboard
/// flags.
fn answered_query(sequence: &[u8]) -> bool {
    let Some((&last, body)) = sequence.split_last() else {
        return false;
    };
    let (marker, body) = match body.first() {
        Some(&m @ (b'?' | b'>' | b'=' | b'<')) => (Some(m), &body[1..]),
        _ => (None, body),
    };
    let params_end = body.iter().position(|b| !matches!(b, b'0'..=b'9' | b';' | b':'));
    let (params, intermediates) = body.split_at(params_end.unwrap_or(body.len()));
    match (marker, intermediates, last) {
        // (The emulator looks at the first parameter only.)
        (None | Some(b'>'), b"", b'c') => matches!(params.split(|&b| b == b';').next(), Some(b"" | b"0")),
        (None, b"", b'n') => matches!(params, b"5" | b"6"),
        (None | Some(b'?'), b"$", b'p') => !params.is_empty() && params.iter().all(u8::is_ascii_digit),
        (None, b"", b't') => matches!(params, b"14" | b"18"),
        (Some(b'?'), b"", b'u') => params.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every split of `stream` into two chunks, and byte by byte, gives `expected`.
    fn check(allow_clipboard: bool, stream: &[u8], expected: &[u8]) {
        for split in 0..=stream.len() {
            let mut filter = OutputFilter::new(allow_clipboard);
            let mut out = filter.filter(&stream[..split]);
            out.extend(filter.filter(&stream[split..]));
            assert_eq!(
                String::from_utf8_lossy(&out),
                String::from_utf8_lossy(expected),
                "split at {split}"
            );
        }
        let mut filter = OutputFilter::new(allow_clipboard);
        let out: Vec<u8> = stream.iter().flat_map(|b| filter.filter(&[*b])).collect();
        assert_eq!(out, expected);
    }

    #[test]
    fn clipboard_writes_are_removed_wherever_the_chunks_split() {
        let stream: &[u8] =
            b"a\x1b]52;c;aGVsbG8=\x07b\x1b]0;title\x07c\x1b]52;;eA==\x1b\\d\x1b[1me\x1b]520;x\x07f\x1b]52;c;\x1b[31mg";
        check(false, stream, b"ab\x1b]0;title\x07cd\x1b[1me\x1b]520;x\x07f\x1b[31mg");
        check(true, stream, stream);
    }

    #[test]
    fn tmux_passthrough_never_reaches_a_persons_terminal() {
        // A clipboard write wrapped for the terminal around tmux, ESC doubled
        // inside; other DCS (sixel) and text around it are kept.
        let stream: &[u8] =
            b"a\x1bPtmux;\x1b\x1b]52;c;aGVsbG8=\x07\x1b\\b\x1bPq#0\x1b\\c\x1bPtmux;\x1b\x1b]9;x\x1b\x1b\\\x1b\\d\x1bPtmu\x1b[1me";
        let kept: &[u8] = b"ab\x1bPq#0\x1b\\cd\x1bPtmu\x1b[1me";
        check(false, stream, kept);
        check(true, stream, kept);
    }

    #[test]
    fn answered_queries_are_removed_and_everything_else_kept() {
        let stream: &[u8] = b"a\x1b[6nb\x1b[c\x1b[0c\x1b[>c\x1b[>0;1c\x1b[5n\x1b[?2026$p\x1b[4$p\x1b[18t\x1b[14t\
\x1b[?u\x1b]11;?\x07\x1b]10;?\x1b\\\x1b]4;1;?\x07\x1bZc";
        // Kept: sequences that look alike but set things or are not answered by fugue.
        let kept: &[u8] = b"\x1b[?6n\x1b[=c\x1b[>1u\x1b[<u\x1b[=1;1u\x1b[u\x1b[8;24;80t\x1b[2J\x1b[?1049h\
\x1b]11;#000000\x07\x1b]4;1;rgb:00/00/00\x1b\\\x1b]0;t\x07\x1b[38:2:1:2:3m";
        check(false, stream, b"abc");
        check(false, kept, kept);
        let mixed = [&b"x"[..], kept, stream, b"y"].concat();
        check(false, &mixed, &[&b"x"[..], kept, b"abc", b"y"].concat());
    }

    #[test]
    fn the_kitty_keyboard_flags_are_followed_per_screen() {
        let mut filter = OutputFilter::new(false);
        let mut feed = |data: &[u8]| {
            filter.filter(data);
            filter.kitty_keyboard()
        };
        assert!(!feed(b"plain"));
        assert!(feed(b"\x1b[>1u"));
        assert!(!feed(b"\x1b[>2u"), "event types alone change no key");
        assert!(feed(b"\x1b[<u"));
        assert!(!feed(b"\x1b[?1049h"), "the alternate screen has its own stack");
        assert!(feed(b"\x1b[=9;1u"));
        assert!(!feed(b"\x1b[=9;3u"));
        assert!(feed(b"\x1b[?1049l"));
        assert!(!feed(b"\x1b[<5u"));
        // A redraw sets the flags outright.
        assert!(feed(b"\x1b[?1049l\x1b[=1;1u"));
        assert!(!feed(&b"\x1b[<u".repeat(100)));
    }

    #[test]
    fn overlong_and_interrupted_sequences_pass_through() {
        let long_csi = [&b"\x1b["[..], &[b'1'; 100], b"m"].concat();
        check(false, &long_csi, &long_csi);
        let long_osc = [&b"\x1b]11;"[..], &[b'a'; 100], b"\x07"].concat();
        check(false, &long_osc, &long_osc);
        // An escape inside a CSI starts over; the first part passes.
        check(false, b"\x1b[1\x1b[6n!", b"\x1b[1!");
        check(false, b"\x1b]11;\x18?\x1b[6n", b"\x1b]11;\x18?");
    }
}
