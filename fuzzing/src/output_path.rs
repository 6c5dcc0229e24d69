//! A pane's whole output path, fed arbitrary program output: raw log, text view,
//! screen with scrollback, terminal-query replies, captures, redraws, the notifications it asks for and the
//! agent detector, and the filter attach passes it through. It must never panic and stay within its caps whatever is printed.

use fugue_daemon::agent::{Proc, Tracker};
use fugue_daemon::terminal::pane_output::PaneOutput;
use fugue_protocol::output_filter::OutputFilter;
use fugue_protocol::{CaptureWhat, PaneSize, ReadMode};

/// One input, as the fuzz target `output_path` and the corpus replay give it.
pub fn run(data: &[u8]) {
    let Some((&shape, data)) = data.split_first() else {
        return;
    };
    let size = PaneSize {
        cols: 1 + (shape & 0x3f) as u16,
        rows: 1 + (shape >> 6) as u16 * 3,
    };
    let limits = crate::SMALL_LIMITS;
    let output = PaneOutput::new(limits, size);
    let (_subscription, _) = output.subscribe();
    // Cut the input where a 0xff byte (rare in real output) says, so sequences
    // split across reads are covered.
    let mut filter = OutputFilter::new(shape & 4 == 4);
    let mut filtered = Vec::new();
    for chunk in data.split(|b| *b == 0xff) {
        let _ = output.push(chunk);
        filtered.extend(filter.filter(chunk));
    }
    // What attach passes on is the output with some sequences taken out: every
    // byte it sends was in the output, in the same order.
    let mut rest = data.iter().filter(|b| **b != 0xff);
    assert!(
        filtered.iter().all(|b| rest.any(|r| r == b)),
        "the filter made up bytes"
    );
    // The notifications it asked for (OSC 9, 777, 99): bounded in number and
    // size, and free of control characters.
    let notices = output.take_notices();
    assert!(notices.len() <= 16, "{} notifications kept", notices.len());
    for notice in &notices {
        assert!(notice.title.chars().count() <= 256 && notice.body.chars().count() <= 1024);
        assert!(!notice.title.chars().chain(notice.body.chars()).any(char::is_control));
    }
    let _ = output.read(ReadMode::Text {
        lines: 1000,
        since: Some(3),
    });
    let read = output.read(ReadMode::Raw {
        since: None,
        max_bytes: None,
    });
    assert!(read.data.len() <= limits.log_bytes);
    for what in [CaptureWhat::Screen, CaptureWhat::Scrollback, CaptureWhat::All] {
        let capture = output.capture(what, None, None, shape & 1 == 1, shape & 2 == 2);
        assert!(capture.state.title.chars().count() <= fugue_protocol::limits::MAX_TITLE_CHARS);
        for line in &capture.captured.lines {
            assert!(
                !line
                    .chars()
                    .any(|c| fugue_protocol::limits::is_unsafe_char(c) && c != '\x1b'),
                "unsafe character in {line:?}"
            );
        }
    }
    let _ = output.capture(CaptureWhat::All, Some(i64::MIN), Some(i64::MAX), true, true);
    let tracker = Tracker::default();
    let proc = |command: &str, exited| Proc {
        command: vec![command.into()],
        pid: 0,
        started_at_ms: 0,
        exited,
    };
    let _ = tracker.look(&output, &proc("claude", false));
    let _ = tracker.look(&output, &proc("bash", true));
    output.resize(PaneSize {
        cols: size.rows,
        rows: size.cols.min(50),
    });
    let _ = output.push(data);
    let (_, redraw) = output.subscribe();
    assert!(redraw.len() < 64 * 1024 + size.cols as usize * size.rows as usize * 64);
}
