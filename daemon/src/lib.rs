//! The fugue daemon's parts. `fugued` (main.rs) parses flags and runs
//! [`server::run`]; the benchmarks use the output path directly.
//!
//! Actors: [`supervisor`] -> [`session`] -> [`pane`]; each client is a
//! [`connection`] whose requests [`requests`] answers. A pane's PTY is [`pty`], its
//! output [`pane_output`] (the raw log and text view in [`output`], the screen
//! model in [`screen`]); [`agent`] reads agent CLIs' state off the screen.
//! Program output is untrusted input: [`string_limit`] bounds the control strings
//! it may send before either parser sees them. Client input is bounded by
//! `fugue_protocol::limits` (every request is validated in [`connection`]).

pub mod agent;
pub mod config;
pub mod connection;
pub mod feed;
pub mod memory;
pub mod output;
pub mod pane;
pub mod pane_output;
pub mod process;
pub mod pty;
pub mod requests;
pub mod screen;
pub mod server;
pub mod session;
pub mod string_limit;
pub mod supervisor;
