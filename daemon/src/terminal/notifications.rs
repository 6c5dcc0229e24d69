//! Desktop notifications a program asks its terminal for, found in the pane's
//! output: OSC 9 (iTerm2: `ESC ] 9 ; body ST`), OSC 777 (urxvt, Ghostty:
//! `ESC ] 777 ; notify ; title ; body ST`) and OSC 99 (kitty: `ESC ] 99 ;
//! metadata ; payload ST`, the title and body possibly in several chunks).
//! Agent CLIs print them when a turn ends or they need a person.
//!
//! A streaming scanner: sequences may be split across chunks; payloads are
//! bounded, a longer one is skipped whole.

/// The longest payload read; a longer sequence is skipped.
const MAX_PAYLOAD: usize = 4096;
/// Characters kept of a title and of a body.
const MAX_TITLE: usize = 256;
const MAX_BODY: usize = 1024;

/// One notification.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    pub title: String,
    pub body: String,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum State {
    #[default]
    Ground,
    Escape,
    /// Inside an OSC, collecting it (number and payload).
    Osc,
    /// After ESC inside an OSC: `\` ends it.
    OscEscape,
    /// Inside an OSC too long to read, until it ends.
    Skipping,
    SkippingEscape,
}

#[derive(Debug, Default)]
pub struct NoticeScanner {
    state: State,
    osc: Vec<u8>,
    /// A kitty notification's title while its body is still to come (`d=0`).
    kitty_title: String,
}

impl NoticeScanner {
    /// Scans `data`, returning the notifications that ended in it.
    pub fn scan(&mut self, data: &[u8]) -> Vec<Notice> {
        let mut found = Vec::new();
        let mut rest = data;
        while !rest.is_empty() {
            if self.state == State::Ground {
                let Some(at) = memchr::memchr(0x1b, rest) else {
                    break;
                };
                rest = &rest[at..];
            }
            let byte = rest[0];
            rest = &rest[1..];
            self.state = match (self.state, byte) {
                (State::Ground, _) => State::Escape,
                (State::Escape, b']') => {
                    self.osc.clear();
                    State::Osc
                }
                (State::Escape, 0x1b) => State::Escape,
                (State::Escape, _) => State::Ground,
                (State::Osc, 0x07) => self.end(&mut found),
                (State::Osc, 0x1b) => State::OscEscape,
                (State::Osc, 0x18 | 0x1a) => State::Ground,
                (State::Osc, _) if self.osc.len() < MAX_PAYLOAD => {
                    self.osc.push(byte);
                    State::Osc
                }
                (State::Osc, _) => State::Skipping,
                (State::OscEscape, b'\\') => self.end(&mut found),
                // ESC then anything else: the OSC was cut off; that ESC starts anew.
                (State::OscEscape, b']') => {
                    self.osc.clear();
                    State::Osc
                }
                (State::OscEscape, _) => State::Ground,
                (State::Skipping, 0x07 | 0x18 | 0x1a) => State::Ground,
                (State::Skipping, 0x1b) => State::SkippingEscape,
                (State::Skipping, _) => State::Skipping,
                (State::SkippingEscape, _) => State::Ground,
            };
        }
        found
    }

    fn end(&mut self, found: &mut Vec<Notice>) -> State {
        let osc = std::mem::take(&mut self.osc);
        let text = String::from_utf8_lossy(&osc);
        let Some((number, payload)) = text.split_once(';') else {
            return State::Ground;
        };
        let notice = match number {
            // OSC 9;4;... is ConEmu's progress report, not a notification.
            "9" if !payload.starts_with("4;") => Some(notice("", payload)),
            "777" => payload.strip_prefix("notify;").map(|rest| {
                let (title, body) = rest.split_once(';').unwrap_or((rest, ""));
                notice(title, body)
            }),
            "99" => self.kitty(payload),
            _ => None,
        };
        found.extend(notice);
        State::Ground
    }

    /// Kitty's `metadata;payload`: metadata `key=value` pairs split by `:`; `p`
    /// says whether the payload is the title (default) or the body, `d=0` that
    /// more is coming. Base64 payloads (`e=1`) are not decoded.
    fn kitty(&mut self, payload: &str) -> Option<Notice> {
        let (metadata, text) = payload.split_once(';').unwrap_or(("", payload));
        let mut part = "title";
        let mut done = true;
        for pair in metadata.split(':') {
            match pair.split_once('=') {
                Some(("p", p)) => part = if p == "body" { "body" } else { "title" },
                Some(("d", "0")) => done = false,
                Some(("e", "1")) => return None,
                _ => {}
            }
        }
        let title = match part {
            "title" => {
                self.kitty_title = text.chars().take(MAX_TITLE).collect();
                None
            }
            _ => Some(std::mem::take(&mut self.kitty_title)),
        };
        if !done {
            return None;
        }
        let title = title.unwrap_or_else(|| std::mem::take(&mut self.kitty_title));
        let body = if part == "body" { text } else { "" };
        Some(notice(&title, body))
    }
}

fn notice(title: &str, body: &str) -> Notice {
    let clean = |text: &str, max: usize| -> String {
        text.chars()
            .filter(|c| !fugue_protocol::limits::is_unsafe_char(*c))
            .take(max)
            .collect()
    };
    Notice {
        title: clean(title, MAX_TITLE),
        body: clean(body, MAX_BODY),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(chunks: &[&[u8]]) -> Vec<Notice> {
        let mut scanner = NoticeScanner::default();
        chunks.iter().flat_map(|c| scanner.scan(c)).collect()
    }

    fn n(title: &str, body: &str) -> Notice {
        notice(title, body)
    }

    #[test]
    fn the_three_kinds_each_way_they_end() {
        assert_eq!(all(&[b"a\x1b]9;Build done\x07b"]), vec![n("", "Build done")]);
        assert_eq!(
            all(&[b"\x1b]777;notify;Claude;Needs you\x1b\\"]),
            vec![n("Claude", "Needs you")]
        );
        assert_eq!(all(&[b"\x1b]99;;Hello\x1b\\"]), vec![n("Hello", "")]);
        assert_eq!(
            all(&[b"\x1b]99;i=1:d=0;Title\x1b\\", b"\x1b]99;i=1:p=body;The body\x1b\\"]),
            vec![n("Title", "The body")]
        );
    }

    #[test]
    fn split_anywhere_gives_the_same() {
        let stream = b"x\x1b]777;notify;T;B\x07y\x1b]9;one\x1b\\z";
        for cut in 0..stream.len() {
            let (a, b) = stream.split_at(cut);
            assert_eq!(all(&[a, b]), vec![n("T", "B"), n("", "one")], "cut at {cut}");
        }
    }

    #[test]
    fn other_sequences_progress_and_overlong_ones_are_no_notification() {
        assert!(all(&[b"\x1b]0;title\x07\x1b]9;4;1;50\x07\x1b[31m"]).is_empty());
        let mut long = b"\x1b]9;".to_vec();
        long.extend(std::iter::repeat_n(b'a', MAX_PAYLOAD + 10));
        long.extend(b"\x07\x1b]9;after\x07");
        assert_eq!(all(&[&long]), vec![n("", "after")]);
        // Control characters and bidi overrides never reach a notification.
        assert_eq!(all(&[b"\x1b]9;a\x05b\x07"]), vec![n("", "ab")]);
        assert_eq!(all(&["\x1b]9;a\u{202e}b\x07".as_bytes()]), vec![n("", "ab")]);
        // Cancelled by CAN.
        assert!(all(&[b"\x1b]9;gone\x18\x07"]).is_empty());
    }
}
