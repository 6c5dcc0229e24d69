//! Where a pane's memory goes: RSS growth of N panes' output buffers fed with
//! 10 000 lines of 100 characters, as the memory benchmark feeds them.
use fugue_protocol::PaneSize;
use fugue_terminal::output::{OutputLog, TextLines};
use fugue_terminal::pane_output::{OutputLimits, PaneOutput};
use fugue_terminal::screen::Screen;

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

fn main() {
    let panes = 20;
    let size = PaneSize { cols: 120, rows: 40 };
    let line = format!("{}\r\n", "x".repeat(100));
    let chunk: Vec<u8> = line.as_bytes().iter().copied().cycle().take(line.len() * 500).collect();
    let measure = |name: &str, f: &dyn Fn() -> Box<dyn std::any::Any>| {
        let before = rss_kib();
        let kept: Vec<_> = (0..panes).map(|_| f()).collect();
        let after = rss_kib();
        println!("{name:>12}: {:.0} KiB per pane", (after - before) as f64 / panes as f64);
        drop(kept);
    };
    measure("log", &|| {
        let mut log = OutputLog::new(1 << 20);
        for _ in 0..20 {
            log.push(&chunk);
        }
        Box::new(log)
    });
    measure("text", &|| {
        let mut text = TextLines::new(10_000, 4 << 20);
        let mut end = 0;
        for _ in 0..20 {
            end += chunk.len() as u64;
            text.push(&chunk, end);
        }
        Box::new(text)
    });
    measure("screen", &|| {
        let mut screen = Screen::new(size, 10_000, 8 << 20);
        for _ in 0..20 {
            screen.feed(&chunk);
        }
        screen.trim();
        Box::new(screen)
    });
    let limits = OutputLimits::default();
    measure("pane output", &|| {
        let out = PaneOutput::new(limits, size);
        for _ in 0..20 {
            out.push(&chunk);
        }
        out.trim();
        Box::new(out)
    });
}
