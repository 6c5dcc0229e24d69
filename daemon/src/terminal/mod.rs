//! One terminal's parts, free of sockets and actors: the PTY and its process, the
//! output (raw log, text view, screen and scrollback) fed through the emulation
//! pool, the input encoding, the agent-state detector, the notifications a program asks
//! for, and the watcher that reports both.

pub(crate) mod agent;
pub(crate) mod agent_hooks;
pub(crate) mod agent_watch;
pub(crate) mod fd;
pub(crate) mod feed;
pub(crate) mod input;
pub mod output;
pub mod pane_output;
pub(crate) mod process;
pub(crate) mod pty;
pub mod raw_log;
pub(crate) mod reports;
pub mod screen;
pub(crate) mod string_limit;
