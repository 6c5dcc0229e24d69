//! fugue's tmux command line: arbitrary arguments (NUL-separated) parsed as
//! `fugue tmux` parses them, each `-t` target parsed, each `-F`, `-f` and
//! argument expanded as a format, and each `-x`/`-y`/`-l` read as a size. It
//! must never panic, and an expansion never passes its bound.

use fugue_protocol::tmux::{self, format};

/// One input, as the fuzz target `tmux_args` and the corpus replay give it.
pub fn run(data: &[u8]) {
    let argv: Vec<String> = data
        .split(|b| *b == 0)
        .map(|word| String::from_utf8_lossy(word).into_owned())
        .collect();
    let Ok(call) = tmux::parse(&argv) else {
        return;
    };
    let lookup = |name: &str| (!name.len().is_multiple_of(3)).then(|| name.repeat(3));
    for command in &call.commands {
        for (flag, value) in &command.flags {
            let Some(value) = value else { continue };
            match flag {
                't' => {
                    let _ = tmux::parse_target(value);
                }
                'x' | 'y' | 'l' => {
                    let _ = tmux::parse_extent(value, 200);
                }
                _ => {
                    let expanded = format::expand(value, &lookup);
                    assert!(expanded.len() <= format::MAX_EXPANDED);
                }
            }
        }
        for arg in &command.args {
            assert!(format::expand(arg, &lookup).len() <= format::MAX_EXPANDED);
        }
    }
}
