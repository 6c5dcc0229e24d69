//! What an agent CLI in a pane is doing, and whether it needs a person.
//!
//! - `detect`: the detector, pure: which agent a command or screen shows, and its
//!   state from the screen, the terminal signals, hooks and status files (per-agent
//!   data in `agents.toml`).
//! - `process_files`: the reads the detector needs from the system: the process
//!   tree under `/proc`, Claude Code's status file, the Codex transcript it holds
//!   open. Apart from `watch`, which uses `tracker`, whose look reads them.
//! - `hooks`: the hooks fugue gives the agents it starts (Claude Code's settings).
//! - `hook_socket`: a sandboxed pane's own socket, taking its hook reports only.
//! - `tracker`: one pane's agent: what was seen between looks, the look, and the
//!   state published for requests and waits.
//! - `watch`: one task per pane process that looks when something changed and
//!   pushes the changes as events.
//! - `transcript`: the tokens a session used, read from its CLI's transcript.
//! - `limit`: a turn that ended on a usage or rate limit, and when it resets,
//!   from the screen.
//! - `app_server`: Codex through its app-server (one per pane, started
//!   beside the TUI): its events as the first source of the agent's state,
//!   approvals answered in its protocol; `codex_protocol` its types,
//!   generated from Codex's schema.
//! - `background`: agent sessions outside any pane (`claude --bg`), read from
//!   the status files their CLI keeps, followed only while someone looks.
//!
//! It reads the terminal's parts (`crate::terminal`); they know nothing of it.

pub mod app_server;
pub(crate) mod background;
pub mod codex_protocol;
pub(crate) mod detect;
pub(crate) mod file_watch;
pub(crate) mod hook_socket;
pub(crate) mod hooks;
pub(crate) mod limit;
pub(crate) mod process_files;
pub(crate) mod process_watch;
pub mod tracker;
pub(crate) mod transcript;
pub(crate) mod watch;

pub use detect::{answer_keys, detect_kind, resume_command};
pub use tracker::{Proc, Tracker};
