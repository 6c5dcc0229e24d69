//! The wait engine's pattern path: an arbitrary pattern (compiled within the
//! limits, as the daemon compiles it) searched over arbitrary program output
//! the way a wait searches it, in small batches copied out of the text view,
//! resuming where the last batch stopped. It must never panic, and it must
//! find the same first match as one plain pass over every line.

use fugue_daemon::terminal::pane_output::PaneOutput;
use fugue_protocol::PaneSize;

/// One input, as the fuzz target `wait_pattern` and the corpus replay give it.
pub fn run(data: &[u8]) {
    // The pattern, a NUL, then the output (0xff cuts it into reads).
    let Some(cut) = data.iter().position(|b| *b == 0) else {
        return;
    };
    let Ok(pattern) = std::str::from_utf8(&data[..cut]) else {
        return;
    };
    let Ok(regex) = fugue_protocol::limits::compile_pattern(pattern) else {
        return;
    };
    let limits = crate::SMALL_LIMITS;
    let output = PaneOutput::new(limits, PaneSize { cols: 40, rows: 5 });
    for chunk in data[cut + 1..].split(|b| *b == 0xff) {
        let _ = output.push(chunk);
    }
    let find = |line: &str| regex.find(line).map(|m| line[m.range()].to_string());

    // One pass over everything the text view holds after offset 0.
    let (all, _) = output.search_batch(0, 0, usize::MAX);
    assert!(!all.more);
    let expected = all
        .lines
        .iter()
        .map(|(l, _)| l.as_str())
        .chain(all.partial.as_deref())
        .find_map(find);

    // As a wait does it: batches of a few bytes, each resuming where the last
    // one stopped.
    let mut searched = 0;
    let mut found = None;
    for _ in 0..10_000 {
        let (batch, _) = output.search_batch(searched, 0, 7);
        let result = batch.search(searched, find, || false);
        assert!(result.searched >= searched, "the search went back");
        assert!(!result.interrupted);
        searched = result.searched;
        if result.matched.is_some() || !batch.more {
            found = result.matched;
            break;
        }
    }
    assert_eq!(found, expected, "batches found another first match than one pass");
}
