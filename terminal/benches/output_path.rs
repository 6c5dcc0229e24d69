//! The PTY output path: what every byte a program prints costs before it can be
//! read, captured or streamed (emulator feed, text view, raw log).

use fugue_protocol::PaneSize;
use fugue_terminal::pane_output::{OutputLimits, PaneOutput};
use fugue_terminal::screen::Screen;

fn main() {
    divan::main();
}

const SIZE: PaneSize = PaneSize { cols: 200, rows: 50 };
const TOTAL: usize = 4 << 20;

/// base64-like 76-column lines, as `base64` prints them.
fn lines() -> Vec<u8> {
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::with_capacity(TOTAL);
    let mut x: u32 = 1;
    while out.len() < TOTAL {
        for _ in 0..76 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            out.push(alphabet[(x >> 16) as usize % 64]);
        }
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// A full-screen program's redraws: colours and cursor addressing.
fn tui() -> Vec<u8> {
    let mut out = Vec::with_capacity(TOTAL);
    let mut frame = 0u32;
    while out.len() < TOTAL {
        out.extend_from_slice(b"\x1b[H");
        for row in 1..=50 {
            out.extend_from_slice(
                format!(
                    "\x1b[{row};1H\x1b[3{}m{:>6} cpu {:>3}% \x1b[0m{}",
                    row % 8,
                    frame,
                    row * 2 % 100,
                    "|".repeat(row as usize)
                )
                .as_bytes(),
            );
        }
        frame += 1;
    }
    out
}

/// An agent CLI's frames as `fugue-bench --emit-frames` draws them (scenario
/// 15's paced load): a synchronized update redrawing 40 rows of 80 columns in
/// place, a colour a row (~4 KB a frame).
fn agent() -> Vec<u8> {
    let mut out = Vec::with_capacity(TOTAL);
    let mut n = 0usize;
    while out.len() < TOTAL {
        out.extend_from_slice(b"\x1b[?2026h");
        for row in 0..40usize {
            let colour = (n + row) % 216 + 16;
            let text = format!("frame {n:06} row {row:02} the agent is thinking about the change it will make");
            out.extend_from_slice(format!("\x1b[{};1H\x1b[38;5;{colour}m{text:<76}\x1b[0m\x1b[K", row + 1).as_bytes());
        }
        out.extend_from_slice(b"\x1b[?2026l");
        n += 1;
    }
    out
}

fn workload(kind: &str) -> Vec<u8> {
    match kind {
        "lines" => lines(),
        "agent" => agent(),
        _ => tui(),
    }
}

#[divan::bench(args = ["lines", "tui", "agent"])]
fn screen_feed(bencher: divan::Bencher, kind: &str) {
    let data = workload(kind);
    bencher.counter(divan::counter::BytesCount::new(data.len())).bench(|| {
        let mut screen = Screen::new(SIZE, 10_000, 8 << 20);
        for chunk in data.chunks(4096) {
            screen.feed(chunk);
        }
        screen.scrollback_len()
    });
}

#[divan::bench(args = ["lines", "tui", "agent"])]
fn pane_output_push(bencher: divan::Bencher, kind: &str) {
    let data = workload(kind);
    let limits = OutputLimits::default();
    bencher.counter(divan::counter::BytesCount::new(data.len())).bench(|| {
        let output = PaneOutput::new(limits, SIZE);
        for chunk in data.chunks(4096) {
            output.push(chunk);
        }
        output.end_offset()
    });
}

/// The emulator alone, history discarded: the floor under `screen_feed`.
#[divan::bench(args = ["lines", "tui", "agent"])]
fn emulator_alone(bencher: divan::Bencher, kind: &str) {
    use alacritty_terminal::term::{Config, Term};
    use alacritty_terminal::vte::ansi::Processor;
    struct Dims;
    impl alacritty_terminal::grid::Dimensions for Dims {
        fn total_lines(&self) -> usize {
            50
        }
        fn screen_lines(&self) -> usize {
            50
        }
        fn columns(&self) -> usize {
            200
        }
    }
    let data = workload(kind);
    bencher.counter(divan::counter::BytesCount::new(data.len())).bench(|| {
        let config = Config {
            scrolling_history: 0,
            ..Config::default()
        };
        let mut term = Term::new(config, &Dims, alacritty_terminal::event::VoidListener);
        let mut parser: Processor = Processor::new();
        for chunk in data.chunks(4096) {
            parser.advance(&mut term, chunk);
        }
        term.grid().cursor.point.line.0
    });
}
