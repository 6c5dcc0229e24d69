//! `fugue`: the command-line client of fugued.

mod attach;
mod cli;
mod hooks;
mod login;
mod top;
mod top_model;

use std::process::ExitCode;

fn main() -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(err) => {
            eprintln!("fugue: cannot start: {err}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(cli::main())
}
