//! The screen's fast path for plain lines against feeding every byte to the
//! emulator: the same output, cut into the same reads, must leave the same screen,
//! scrollback, cursor and redraw either way (unless a burst outran the emulator's
//! history, when the slow path itself loses lines).

use fugue_daemon::terminal::screen::{LineRange, Screen};
use fugue_protocol::PaneSize;

/// One input, as the fuzz target `plain_lines` and the corpus replay give it.
pub fn run(data: &[u8]) {
    let Some((&shape, data)) = data.split_first() else {
        return;
    };
    let size = PaneSize {
        cols: 1 + (shape & 0x1f) as u16,
        rows: 1 + (shape >> 5) as u16 * 2,
    };
    let mut slow = Screen::new(size, 4096, 1 << 20);
    slow.set_fast_path(false);
    let mut fast = Screen::new(size, 4096, 1 << 20);
    // Cut the input where a 0xff byte (rare in real output) says.
    for chunk in data.split(|b| *b == 0xff) {
        assert_eq!(slow.feed(chunk), fast.feed(chunk), "replies, title or bells differ");
    }
    // A burst that outran the emulator's history lost lines on the slow path
    // (which ones differs from the fast path's): no oracle then.
    if slow.bursts() > 0 {
        return;
    }
    let all = LineRange {
        start: i64::MIN,
        end: i64::MAX,
    };
    for ansi in [false, true] {
        assert_eq!(
            slow.capture(all, ansi, false),
            fast.capture(all, ansi, false),
            "the screens differ"
        );
    }
    assert_eq!(slow.cursor(), fast.cursor());
    assert_eq!(slow.redraw(), fast.redraw());
}
