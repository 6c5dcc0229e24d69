//! The fast path for plain lines against feeding every byte to the emulator.

use crate::screen::{LineRange, Screen};
use fugue_protocol::PaneSize;
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
        for chunk in crate::cut_into(&bytes, &cuts) {
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
