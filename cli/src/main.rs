//! `fugue`: the command-line client of fugued.
//!
//! `args` parses the command line, `commands` acts on it (one module per group
//! of commands), `render` prints what comes back; `attach` and `top` are the
//! two full-screen clients (`top_model` is top's state and keys, `top_view` how it draws them).
// No function here outgrows a screen (cli/clippy.toml sets the limit).
#![warn(clippy::too_many_lines)]

mod args;
mod attach;
pub(crate) mod commands;
#[cfg(test)]
mod fixtures;
#[cfg(test)]
mod help;
mod hooks;
mod login;
mod render;
mod tiles;
mod top;
mod top_model;
mod top_view;

use std::process::ExitCode;

fn main() -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(err) => {
            eprintln!("fugue: cannot start: {err}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(commands::main())
}
