//! One terminal's parts, free of sockets and actors: the PTY and its process, the
//! output (raw log, text view, screen and scrollback) fed through the emulation
//! pool, the input encoding, and what a program tells its terminal about itself
//! (notifications, its status, its title). What an agent CLI in the pane is doing
//! is read from these by `crate::agent`.

pub(crate) mod fd;
pub(crate) mod feed;
pub(crate) mod input;
pub mod output;
pub mod pane_output;
pub(crate) mod plain;
pub(crate) mod process;
pub(crate) mod pty;
pub mod raw_log;
pub(crate) mod reports;
pub mod screen;
pub(crate) mod string_limit;

/// `bytes` cut into reads of the lengths `cuts` gives, over and over (for the
/// property tests that feed output as a PTY would, cut anywhere).
#[cfg(test)]
pub(crate) fn cut_into<'a>(bytes: &'a [u8], cuts: &'a [usize]) -> impl Iterator<Item = &'a [u8]> + 'a {
    let mut rest = bytes;
    cuts.iter().cycle().map_while(move |cut| {
        if rest.is_empty() {
            return None;
        }
        let (chunk, tail) = rest.split_at((*cut).clamp(1, rest.len()));
        rest = tail;
        Some(chunk)
    })
}
