//! What a program tells its terminal about itself, found in the pane's output:
//! - desktop notifications: OSC 9 (iTerm2: `ESC ] 9 ; body ST`), OSC 777 (urxvt,
//!   Ghostty: `ESC ] 777 ; notify ; title ; body ST`) and OSC 99 (kitty: `ESC ] 99
//!   ; metadata ; payload ST`, the title and body possibly in several chunks);
//! - its status: OSC 7501 program status (`state=working|blocked|done|idle|error|
//!   clear`, `kind=permission|question|...` for blocked; Codex prints it) and
//!   ConEmu's OSC 9;4 progress (1 or 3 while working, 0 when done);
//! - its window title (OSC 0 and 2), which agent CLIs use to show their state.
//!
//! Agent CLIs print these when a turn starts or ends or they need a person.
//!
//! A streaming scanner: sequences may be split across chunks; payloads are
//! bounded, a longer one is skipped whole.
//!
//! Programs that believe they run in tmux (a bridged pane's `TMUX` says so)
//! wrap these in tmux's passthrough, `ESC P tmux; ... ESC \\` with each ESC
//! inside doubled; the scanner reads what is inside as if sent plainly (one
//! level: passthrough inside passthrough is not unwrapped again).

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

/// What the pane's current process last told its terminal about itself: its
/// program status (OSC 7501 or 9;4) and its window title. Cleared when a new
/// process starts in the pane, so a previous process's signals never count.
#[derive(Clone, Debug, Default)]
pub struct TerminalSignals {
    pub status: Option<ProgramStatus>,
    pub title: Option<String>,
}

/// A program's own account of its state (OSC 7501 or OSC 9;4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProgramStatus {
    Working,
    /// It waits for a person: a permission (`kind=permission`, or no kind) or
    /// anything else (a question, a password...).
    Blocked {
        permission: bool,
    },
    /// Not working: done, idle, failed or cleared.
    Resting,
}

impl ProgramStatus {
    pub fn as_str(&self) -> &'static str {
        match self {
            ProgramStatus::Working => "working",
            ProgramStatus::Blocked { permission: true } => "blocked on a permission",
            ProgramStatus::Blocked { permission: false } => "blocked on a question",
            ProgramStatus::Resting => "not working",
        }
    }
}

/// One thing found in the output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Report {
    Notice(Notice),
    Status(ProgramStatus),
    /// The window title it set (control characters removed, bounded).
    Title(String),
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
    /// After ESC P, matching `tmux;` (how much of it matched so far).
    DcsPrefix(u8),
    /// Inside tmux passthrough: bytes go to the inner scanner, ESC ESC as one ESC.
    Passthrough,
    /// After ESC inside tmux passthrough: ESC is a doubled one, `\\` the end.
    PassthroughEscape,
}

/// What follows `ESC P` in tmux's passthrough.
const TMUX_PASSTHROUGH: &[u8] = b"tmux;";

#[derive(Debug, Default)]
pub struct ReportScanner {
    state: State,
    osc: Vec<u8>,
    /// A kitty notification's title while its body is still to come (`d=0`).
    kitty_title: String,
    /// What reads the inside of tmux passthrough; `None` until there is some,
    /// and always in a scanner that is itself inside (no nesting).
    inner: Option<Box<ReportScanner>>,
    /// This scanner reads the inside of passthrough: it does not unwrap more.
    inside: bool,
}

impl ReportScanner {
    /// Scans `data`, returning the reports that ended in it.
    pub fn scan(&mut self, data: &[u8]) -> Vec<Report> {
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
                (State::Escape, b'P') if !self.inside => State::DcsPrefix(0),
                (State::DcsPrefix(matched), _) if TMUX_PASSTHROUGH.get(matched as usize) == Some(&byte) => {
                    match matched as usize + 1 == TMUX_PASSTHROUGH.len() {
                        true => State::Passthrough,
                        false => State::DcsPrefix(matched + 1),
                    }
                }
                (State::DcsPrefix(_), 0x1b) => State::Escape,
                (State::DcsPrefix(_), _) => State::Ground,
                (State::Passthrough, 0x1b) => State::PassthroughEscape,
                (State::Passthrough, _) => self.inside(&[byte], &mut found),
                (State::PassthroughEscape, 0x1b) => self.inside(&[0x1b], &mut found),
                // The end of the passthrough (or a single ESC, which ends it too).
                (State::PassthroughEscape, _) => State::Ground,
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

    /// `bytes` from inside tmux passthrough, read by the inner scanner.
    fn inside(&mut self, bytes: &[u8], found: &mut Vec<Report>) -> State {
        let inner = self.inner.get_or_insert_with(|| {
            Box::new(ReportScanner {
                inside: true,
                ..Default::default()
            })
        });
        found.extend(inner.scan(bytes));
        State::Passthrough
    }

    fn end(&mut self, found: &mut Vec<Report>) -> State {
        let osc = std::mem::take(&mut self.osc);
        let text = String::from_utf8_lossy(&osc);
        let Some((number, payload)) = text.split_once(';') else {
            return State::Ground;
        };
        let report = match number {
            "0" | "2" => Some(Report::Title(clean(payload, MAX_TITLE))),
            // OSC 9;4;... is ConEmu's progress report, not a notification.
            "9" => match payload.strip_prefix("4;") {
                Some(progress) => progress_status(progress).map(Report::Status),
                None => Some(Report::Notice(notice("", payload))),
            },
            "777" => payload.strip_prefix("notify;").map(|rest| {
                let (title, body) = rest.split_once(';').unwrap_or((rest, ""));
                Report::Notice(notice(title, body))
            }),
            "99" => self.kitty(payload).map(Report::Notice),
            "7501" => program_status(payload).map(Report::Status),
            _ => None,
        };
        found.extend(report);
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

/// OSC 7501's `key=value` pairs split by `:` (values that may hold `:` are
/// base64); `None` for a query (`?`) or a state it does not define.
fn program_status(payload: &str) -> Option<ProgramStatus> {
    let mut state = None;
    let mut kind = None;
    for pair in payload.split(':') {
        match pair.split_once('=') {
            Some(("state", value)) => state = Some(value),
            Some(("kind", value)) => kind = Some(value),
            _ => {}
        }
    }
    match state? {
        "working" => Some(ProgramStatus::Working),
        "blocked" => Some(ProgramStatus::Blocked {
            permission: kind.is_none_or(|k| k == "permission"),
        }),
        "done" | "idle" | "error" | "clear" => Some(ProgramStatus::Resting),
        _ => None,
    }
}

/// ConEmu's `4;STATE[;PERCENT]`: 1 (a value) and 3 (indeterminate) mean working;
/// 0 (removed), 2 (error) and 4 (paused) that it is not.
fn progress_status(progress: &str) -> Option<ProgramStatus> {
    match progress.split(';').next()? {
        "1" | "3" => Some(ProgramStatus::Working),
        "0" | "2" | "4" => Some(ProgramStatus::Resting),
        _ => None,
    }
}

use fugue_protocol::limits::clean_label as clean;

fn notice(title: &str, body: &str) -> Notice {
    Notice {
        title: clean(title, MAX_TITLE),
        body: clean(body, MAX_BODY),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn everything(chunks: &[&[u8]]) -> Vec<Report> {
        let mut scanner = ReportScanner::default();
        chunks.iter().flat_map(|c| scanner.scan(c)).collect()
    }

    /// The notifications only.
    fn all(chunks: &[&[u8]]) -> Vec<Notice> {
        everything(chunks)
            .into_iter()
            .filter_map(|r| match r {
                Report::Notice(n) => Some(n),
                _ => None,
            })
            .collect()
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

    #[test]
    fn program_status_progress_and_titles() {
        use ProgramStatus::*;
        let status = |s: &str| everything(&[s.as_bytes()]);
        // What Codex 0.169 prints.
        assert_eq!(
            status("\x1b]7501;state=working:app=codex\x1b\\"),
            vec![Report::Status(Working)]
        );
        assert_eq!(
            status("\x1b]7501;state=blocked:app=codex:kind=permission\x1b\\"),
            vec![Report::Status(Blocked { permission: true })]
        );
        assert_eq!(
            status("\x1b]7501;state=blocked:kind=question:msg=UQ==\x07"),
            vec![Report::Status(Blocked { permission: false })]
        );
        for resting in ["done", "idle", "error", "clear"] {
            assert_eq!(
                status(&format!("\x1b]7501;state={resting}:app=x\x07")),
                vec![Report::Status(Resting)]
            );
        }
        // A query, or a state it does not know: nothing.
        assert!(status("\x1b]7501;?\x07\x1b]7501;state=sleeping\x07").is_empty());
        assert_eq!(
            status("\x1b]9;4;3\x07\x1b]9;4;1;40\x07\x1b]9;4;0\x07"),
            vec![
                Report::Status(Working),
                Report::Status(Working),
                Report::Status(Resting)
            ]
        );
        assert_eq!(
            status("\x1b]0;\u{2839} project\x07\x1b]2;a\x05b\x1b\\"),
            vec![Report::Title("\u{2839} project".into()), Report::Title("ab".into())]
        );
    }

    #[test]
    fn tmux_passthrough_is_read_as_if_sent_plainly() {
        // What a program that believes it runs in tmux prints: ESC doubled inside.
        let wrapped = b"\x1bPtmux;\x1b\x1b]9;built\x07\x1b\\\x1bPtmux;\x1b\x1b]7501;state=working\x1b\x1b\\\x1b\\";
        let expected = vec![Report::Notice(n("", "built")), Report::Status(ProgramStatus::Working)];
        assert_eq!(everything(&[wrapped]), expected);
        let split: Vec<&[u8]> = wrapped.chunks(1).collect();
        assert_eq!(everything(&split), expected, "split anywhere");
        // Another DCS reports nothing, and what follows it is read.
        assert_eq!(
            everything(&[b"\x1bPq#0;2;0;0;0\x1b\\\x1b]9;after\x07"]),
            vec![Report::Notice(n("", "after"))]
        );
        // Passthrough inside passthrough: the inner scanner unwraps no more
        // (no third scanner), and reads the OSC after the ESCs as it would
        // read it plainly.
        let nested = b"\x1bPtmux;\x1b\x1bPtmux;\x1b\x1b\x1b\x1b]9;deep\x07\x1b\x1b\\\x1b\\";
        let mut scanner = ReportScanner::default();
        assert_eq!(scanner.scan(nested), vec![Report::Notice(n("", "deep"))]);
        assert!(scanner.inner.as_ref().is_some_and(|inner| inner.inner.is_none()));
    }
}
