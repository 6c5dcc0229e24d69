//! What each fuzz target runs, one module per target, each a `run(data)`.
//!
//! Two callers, one body: cargo fuzz's targets in `fuzz/` (coverage-guided,
//! by hand: `scripts/fuzz`), and `tests/corpus.rs`, which replays every
//! committed input of `fuzz/corpus/TARGET/` in the ordinary test run, so a
//! corpus input that panics fails CI without an instrumented build.

pub mod app_server_message;
pub mod frame_decoder;
pub mod git_diff;
pub mod handover;
pub mod output_path;
pub mod plain_lines;
pub mod push_subscription;
pub mod requests;
pub mod tmux_args;
pub mod wait_pattern;

/// A pane's output limits, small enough that a fuzz input reaches every cap
/// (the log's ring, the text view's and the scrollback's line and byte caps).
pub const SMALL_LIMITS: fugue_daemon::terminal::pane_output::OutputLimits =
    fugue_daemon::terminal::pane_output::OutputLimits {
        log_bytes: 4096,
        text_lines: 64,
        text_bytes: 8192,
        scrollback_lines: 32,
        scrollback_bytes: 4096,
    };

/// A target's body: one input, any bytes.
pub type Target = fn(&[u8]);

/// Every target by the name of its corpus directory.
pub const TARGETS: &[(&str, Target)] = &[
    ("frame_decoder", frame_decoder::run),
    ("requests", requests::run),
    ("output_path", output_path::run),
    ("plain_lines", plain_lines::run),
    ("wait_pattern", wait_pattern::run),
    ("git_diff", git_diff::run),
    ("handover", handover::run),
    ("tmux_args", tmux_args::run),
    ("push_subscription", push_subscription::run),
    ("app_server_message", app_server_message::run),
];
