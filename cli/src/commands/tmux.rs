//! `fugue tmux ARGS...`: a tmux command line, run by the daemon on fugue's
//! panes, printed and exited as tmux would.

use super::Context;
use fugue_client::protocol::requests as rq;
use fugue_client::protocol::tmux::{self, MAX_CALL_ENV};
use fugue_client::protocol::{EnvVar, PaneCaller};
use fugue_client::ClientError;
use std::io::Write;
use std::process::ExitCode;

/// The pane this process runs in, as its environment says (checked by the
/// daemon against the pane's token).
fn caller() -> Option<PaneCaller> {
    let pane = std::env::var("FUGUE_PANE").ok().filter(|p| !p.is_empty())?;
    let token = std::env::var("FUGUE_PANE_TOKEN").unwrap_or_default();
    Some(PaneCaller { pane, token })
}

/// This process's environment (what its panes start with), the part that is
/// text.
fn environment() -> Vec<EnvVar> {
    std::env::vars_os()
        .filter_map(|(name, value)| {
            Some(EnvVar {
                name: name.into_string().ok()?,
                value: value.into_string().ok()?,
            })
        })
        .take(MAX_CALL_ENV)
        .collect()
}

/// What `fugue tmux --help` prints (tmux has no `--help`; fugue's commands do).
fn usage() -> String {
    let commands: Vec<&str> = tmux::COMMANDS.iter().map(|c| c.name).collect();
    format!(
        "Run a tmux command line on fugue's panes, as tmux would.\n\n\
Usage: fugue tmux [-L NAME | -S PATH] COMMAND [FLAGS] [ARGS] [; COMMAND ...]\n\n\
Commands: {}.\n\n\
A bridged pane's programs run it as `tmux`. Each command's flags, the servers\n\
(-L/-S are labels) and what differs from tmux: docs/tmux.md.\n",
        commands.join(", ")
    )
}

pub async fn run(ctx: &Context<'_>, args: &[String]) -> Result<ExitCode, ClientError> {
    if matches!(args.first().map(String::as_str), Some("--help" | "-h" | "help")) {
        print!("{}", usage());
        return Ok(ExitCode::SUCCESS);
    }
    // `-V` needs no daemon (libtmux asks it before each listing), and a line
    // fugue's tmux cannot take is refused before connecting.
    match tmux::parse(args) {
        Ok(call) if call.version => {
            println!("tmux {}", tmux::VERSION);
            return Ok(ExitCode::SUCCESS);
        }
        Ok(_) => {}
        Err(err) => {
            eprintln!("{}", fugue_client::protocol::limits::escape_for_display(&err.0));
            return Ok(ExitCode::FAILURE);
        }
    }
    let cwd = std::env::current_dir().map_or_else(|_| "/".to_string(), |d| d.display().to_string());
    let request = rq::Tmux {
        argv: args.to_vec(),
        caller: caller(),
        cwd,
        env: environment(),
    };
    let client = ctx.connect(true).await?;
    let out = client.call(request).await?;
    let _ = std::io::stdout().lock().write_all(out.stdout.as_bytes());
    let _ = std::io::stderr().lock().write_all(out.stderr.as_bytes());
    Ok(ExitCode::from(out.code))
}
