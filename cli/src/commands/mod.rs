//! Acting on a parsed command line: one module per group of commands, each
//! taking its group's arguments (`crate::args`), calling the daemon through the
//! client library, and handing what comes back to `crate::render`.

mod agents;
mod daemon;
mod fleet;
mod io;
mod panes;
mod remote;
mod sandbox;
mod sessions;
mod tmux;
mod wait;
mod web;
mod worktrees;

use crate::args::{Cli, Command};
use crate::render::Output;
use clap::Parser;
use fugue_client::{Client, ClientError, ConnectOptions};
use std::path::PathBuf;
use std::process::ExitCode;

/// Exit status of `fugue wait` when the timeout passes first (as timeout(1)).
const EXIT_TIMEOUT: u8 = 124;

/// What every command runs with: the global flags and where its result goes.
pub struct Context<'a> {
    pub cli: &'a Cli,
    pub out: Output,
}

impl Context<'_> {
    /// How to reach the daemon: this machine's socket, or `--host`'s over ssh.
    pub fn connect_options(&self) -> Result<ConnectOptions, ClientError> {
        let mut options = ConnectOptions::default().client_name("fugue-cli");
        options.socket = self.cli.socket.clone();
        if let Some(host) = &self.cli.host {
            let remote = fugue_client::remote::resolve(host).map_err(|reason| ClientError::Connect {
                path: PathBuf::from(host),
                reason,
                not_running: false,
            })?;
            options = options.host(remote);
        }
        Ok(options)
    }

    /// The directory a new session or pane starts in when none is given: this
    /// one, for this machine's daemon; none for a daemon elsewhere (a host, a
    /// container), where this machine's directory means nothing and the
    /// daemon's own default (its home) applies.
    pub fn here_cwd(&self) -> Result<Option<PathBuf>, ClientError> {
        match self.cli.host {
            Some(_) => Ok(None),
            None => crate::args::absolute(PathBuf::from(".")).map(Some),
        }
    }

    /// A directory the person gave: made absolute here for this machine's
    /// daemon; for a daemon elsewhere it is a path there, so it must be
    /// absolute already.
    pub fn given_cwd(&self, given: &std::path::Path) -> Result<PathBuf, ClientError> {
        match self.cli.host {
            Some(_) if given.is_absolute() => Ok(given.to_path_buf()),
            Some(ref host) => Err(crate::args::invalid(format!(
                "--cwd {} is relative, but the daemon is at {host}: give an absolute directory there",
                given.display()
            ))),
            None => crate::args::absolute(given.to_path_buf()),
        }
    }

    pub async fn connect(&self, autostart: bool) -> Result<Client, ClientError> {
        Client::connect(self.connect_options()?.autostart(autostart)).await
    }
}

/// Parses the command line, runs it, and maps errors to `fugue: <message>`.
pub async fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) if !err.use_stderr() => {
            // --help and --version.
            let _ = err.print();
            return ExitCode::SUCCESS;
        }
        Err(err) => {
            let line = fugue_client::usage_error_line(&err.render().to_string());
            eprintln!("fugue: {}; see fugue --help", for_a_person(&line));
            return ExitCode::from(2);
        }
    };
    let context = Context {
        cli: &cli,
        out: Output { json: cli.json },
    };
    match run(&context).await {
        Ok(code) => code,
        Err(err) => {
            eprintln!("fugue: {}", for_a_person(&err.to_string()));
            ExitCode::FAILURE
        }
    }
}

/// An error as a person's terminal shows it: the targets, names and patterns
/// it quotes may hold escape sequences (`fugue prompt $'\e]0;PWNED\a' x`),
/// which are printed as visible escapes, never sent to the terminal. (JSON
/// output keeps them, escaped as JSON does.)
fn for_a_person(message: &str) -> std::borrow::Cow<'_, str> {
    fugue_client::protocol::limits::escape_for_display(message)
}

async fn run(ctx: &Context<'_>) -> Result<ExitCode, ClientError> {
    let Some(command) = &ctx.cli.command else {
        return io::shell_attached(ctx).await;
    };
    match command {
        Command::Sessions(command) => sessions::run(ctx, command).await,
        Command::Panes(command) => panes::run(ctx, command).await,
        Command::Io(command) => io::run(ctx, command).await,
        Command::Wait(command) => wait::run(ctx, command).await,
        Command::Agents(command) => agents::run(ctx, command).await,
        Command::Worktrees(command) => worktrees::run(ctx, command).await,
        Command::Daemon(command) => daemon::run(ctx, command).await,
        Command::Completions { shell } => {
            let mut cli = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(*shell, &mut cli, "fugue", &mut std::io::stdout());
            Ok(ExitCode::SUCCESS)
        }
        Command::Man { dir } => {
            let written = write_man_pages(dir)?;
            println!("wrote {written} man pages to {}", dir.display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Web { args } => web::run(ctx, args),
        Command::Tmux { args } => tmux::run(ctx, args).await,
        Command::Proxy => remote::proxy(ctx).await,
        Command::Events => agents::events(ctx).await,
        Command::AgentEvent { agent } => Ok(agents::agent_event(ctx, agent.as_deref()).await),
        Command::SandboxRun(args) => Ok(sandbox::run(args).await),
        Command::Fleet { watch } => fleet::run(ctx, *watch).await,
    }
}

/// Writes `fugue.1` and `fugue-COMMAND.1` for every command into `dir`.
fn write_man_pages(dir: &std::path::Path) -> Result<usize, ClientError> {
    let failed = |e: std::io::Error| crate::args::invalid(format!("cannot write man pages to {}: {e}", dir.display()));
    std::fs::create_dir_all(dir).map_err(failed)?;
    let cli = <Cli as clap::CommandFactory>::command();
    let mut pages = vec![cli.clone()];
    for sub in cli.get_subcommands() {
        let name = format!("fugue-{}", sub.get_name());
        pages.push(sub.clone().name(name));
    }
    for page in &pages {
        let mut out = Vec::new();
        clap_mangen::Man::new(page.clone()).render(&mut out).map_err(failed)?;
        let path = dir.join(format!("{}.1", page.get_name()));
        std::fs::write(&path, out).map_err(failed)?;
    }
    Ok(pages.len())
}

/// `{"ok": true}` for `--json`, nothing for a person: the commands that only act.
fn print_ok(ctx: &Context<'_>) {
    ctx.out.print(serde_json::json!({"ok": true}), String::new);
}
