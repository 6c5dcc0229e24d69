//! `web`: terminal tabs in the browser, by running `fugue-web`.

use super::Context;
use fugue_client::ClientError;
use std::process::ExitCode;

/// Replaces this process with `fugue-web` (so its output, signals and exit
/// status are the user's), passing the daemon's socket or `--host` on.
pub fn run(ctx: &Context<'_>, args: &[String]) -> Result<ExitCode, ClientError> {
    use std::os::unix::process::CommandExt;
    let program = fugue_client::companion_binary("fugue-web");
    let mut command = std::process::Command::new(&program);
    if let Some(socket) = &ctx.cli.socket {
        command.arg("--socket").arg(socket);
    }
    if let Some(host) = &ctx.cli.host {
        command.arg("--host").arg(host);
    }
    let err = command.args(args).exec();
    eprintln!(
        "fugue: cannot run {}: {err} (scripts/install puts it beside fugue)",
        program.display()
    );
    Ok(ExitCode::FAILURE)
}
