//! Bounds the control strings (OSC, DCS, APC, PM, SOS) a program may send.
//!
//! The escape-sequence parsers we use (`vte`, with `std`) collect an OSC string in a
//! `Vec` with no limit, and keep its capacity afterwards: a program that prints a
//! 10 MB title, or an OSC that never ends, would cost that much per parser per pane.
//! This filter sits in front of each parser and drops the bytes of a string past
//! [`MAX_STRING_BYTES`], passing its terminator through, so the parser sees a
//! truncated string and ends it exactly where the program did. The raw log is not
//! filtered: it keeps what the program wrote.

use std::borrow::Cow;

/// Longest control string passed on to a parser. Titles are cut far shorter later;
/// this leaves room for hyperlinks (OSC 8) and clipboard writes (OSC 52).
pub const MAX_STRING_BYTES: usize = 64 * 1024;

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;
const CAN: u8 = 0x18;
const SUB: u8 = 0x1a;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Ground,
    /// After an ESC outside a string.
    Escape,
    /// Inside a control string, with this many bytes passed so far.
    String(usize),
}

/// Parser-side filter state; one per parser, fed every chunk in order.
#[derive(Debug)]
pub struct StringLimiter {
    state: State,
}

impl Default for StringLimiter {
    fn default() -> Self {
        Self::new()
    }
}

impl StringLimiter {
    pub fn new() -> Self {
        Self { state: State::Ground }
    }

    /// The chunk with over-long string bytes removed; borrowed when nothing was.
    pub fn filter<'a>(&mut self, chunk: &'a [u8]) -> Cow<'a, [u8]> {
        // Fast path: no escape at all and not inside a string.
        if self.state == State::Ground && memchr::memchr(ESC, chunk).is_none() {
            return Cow::Borrowed(chunk);
        }
        let mut kept: Option<Vec<u8>> = None;
        let mut i = 0;
        while i < chunk.len() {
            let byte = chunk[i];
            let keep = self.step(byte);
            match (&mut kept, keep) {
                (Some(out), true) => out.push(byte),
                (None, false) => {
                    let mut out = Vec::with_capacity(chunk.len());
                    out.extend_from_slice(&chunk[..i]);
                    kept = Some(out);
                }
                _ => {}
            }
            // In the ground state, jump to the next escape.
            if self.state == State::Ground {
                let next = memchr::memchr(ESC, &chunk[i + 1..]).map_or(chunk.len(), |at| i + 1 + at);
                if let Some(out) = &mut kept {
                    out.extend_from_slice(&chunk[i + 1..next]);
                }
                i = next;
                continue;
            }
            i += 1;
        }
        match kept {
            Some(out) => Cow::Owned(out),
            None => Cow::Borrowed(chunk),
        }
    }

    /// Advances over one byte; false when the byte is to be dropped.
    fn step(&mut self, byte: u8) -> bool {
        match self.state {
            State::Ground => {
                if byte == ESC {
                    self.state = State::Escape;
                }
                true
            }
            State::Escape => {
                self.state = match byte {
                    // OSC, DCS, SOS, PM, APC.
                    b']' | b'P' | b'X' | b'^' | b'_' => State::String(0),
                    ESC => State::Escape,
                    _ => State::Ground,
                };
                true
            }
            State::String(len) => match byte {
                // ESC (the start of ST, or of anything else) ends the string for
                // the parser; BEL ends an OSC; CAN and SUB abort.
                ESC => {
                    self.state = State::Escape;
                    true
                }
                BEL | CAN | SUB => {
                    self.state = State::Ground;
                    true
                }
                _ if len >= MAX_STRING_BYTES => false,
                _ => {
                    self.state = State::String(len + 1);
                    true
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(chunks: &[&[u8]]) -> Vec<u8> {
        let mut limiter = StringLimiter::new();
        chunks.iter().flat_map(|c| limiter.filter(c).into_owned()).collect()
    }

    #[test]
    fn ordinary_output_passes_untouched() {
        let text = b"plain \x1b[31mred\x1b[0m \x1b]0;title\x07 done\r\n";
        let mut limiter = StringLimiter::new();
        assert!(matches!(limiter.filter(b"no escapes here"), Cow::Borrowed(_)));
        assert!(matches!(limiter.filter(text), Cow::Borrowed(_)));
        assert_eq!(run(&[&text[..9], &text[9..]]), text);
    }

    #[test]
    fn long_strings_are_cut_and_terminated() {
        let mut osc = b"\x1b]0;".to_vec();
        osc.extend(std::iter::repeat_n(b'x', MAX_STRING_BYTES * 3));
        osc.extend_from_slice(b"\x07after");
        let out = run(&[&osc[..1000], &osc[1000..]]);
        assert_eq!(out.len(), 2 + MAX_STRING_BYTES + 1 + 5);
        assert!(out.ends_with(b"x\x07after"));
        // An OSC that never ends stays bounded too, and ST ends a DCS.
        let mut dcs = b"\x1bP".to_vec();
        dcs.extend(std::iter::repeat_n(b'q', MAX_STRING_BYTES + 10));
        dcs.extend_from_slice(b"\x1b\\ok");
        let out = run(&[&dcs]);
        assert_eq!(out.len(), 2 + MAX_STRING_BYTES + 4);
        assert!(out.ends_with(b"q\x1b\\ok"));
    }
}
