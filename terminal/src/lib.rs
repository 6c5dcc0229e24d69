//! One terminal's parts, free of sockets and actors: the PTY and its process, the
//! output (raw log, text view, screen and scrollback) fed through the emulation
//! pool, the input encoding, and what a program tells its terminal about itself
//! (notifications, its status, its title). What an agent CLI in the pane is doing
//! is read from these by the daemon's `agent` module.
//!
//! A crate of its own so that cargo holds the daemon's layering: nothing here
//! can reach the daemon's actors, requests or sockets, and `cargo test -p
//! fugue-terminal` is the fast loop for the emulator and output buffers.

pub mod fd;
pub mod feed;
pub mod input;
pub mod output;
pub mod pane_output;
pub mod plain;
pub mod process;
pub mod pty;
pub mod raw_log;
pub mod reports;
pub mod screen;
pub mod string_limit;
pub mod sync;

/// `bytes` cut into reads of the lengths `cuts` gives, over and over (for the
/// property tests that feed output as a PTY would, cut anywhere).
#[cfg(test)]
pub fn cut_into<'a>(bytes: &'a [u8], cuts: &'a [usize]) -> impl Iterator<Item = &'a [u8]> + 'a {
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
