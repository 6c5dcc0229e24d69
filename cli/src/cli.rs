//! Command-line parsing and output. Each command is one client call (or a few) and
//! prints either a human table or, with `--json`, one JSON document.

use clap::{Args, Parser, Subcommand};
use fugue_client::protocol::{
    Attention, CaptureWhat, DaemonInfo, EnvVar, ErrorCode, Event, ExitStatus, PaneInfo, PaneSize, PaneState,
    PermissionAnswer, ReadMode, RestartPolicy, SessionInfo, SizePolicy, SpawnSpec, WaitCondition, WaitUntil,
};
use fugue_client::views::{
    self, now_ms, AgentStateView, AnsweredView, CaptureView, DaemonView, GrepView, OverviewView, PaneView, ReadView,
    SessionView,
};
use fugue_client::{Client, ClientError, ConnectOptions};
use serde_json::{json, Value};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Exit status of `fugue wait` when the timeout passes first (as timeout(1)).
const EXIT_TIMEOUT: u8 = 124;

/// fugue: a terminal supervisor for AI agents and the people who work beside them.
///
/// Targets: a session is a name, a full UUID or a unique UUID prefix (4+ hex digits);
/// a pane is a full UUID, a unique prefix, or SESSION:INDEX / SESSION:TITLE.
#[derive(Parser, Debug)]
#[command(name = "fugue", version, propagate_version = true)]
struct Cli {
    /// Socket of the daemon (default: $FUGUE_SOCKET, $XDG_RUNTIME_DIR/fugue/fugue.sock, /tmp/fugue-$UID/fugue.sock).
    #[arg(long, global = true)]
    socket: Option<PathBuf>,
    /// Print machine-readable JSON.
    #[arg(long, global = true)]
    json: bool,
    /// The daemon on another machine, over ssh: a name from
    /// $XDG_CONFIG_HOME/fugue/hosts.toml or [user@]host[:port] (needs fugue there).
    #[arg(long, global = true, env = "FUGUE_HOST", value_name = "HOST")]
    host: Option<String>,
    /// Without a command: a new shell in the default session, attached (the
    /// session is created if needed), as `tmux` alone does.
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Everything that talks to a daemon about its sessions and panes.
    #[command(flatten)]
    OnDaemon(PaneCommand),
    /// Start, stop or inspect the daemon.
    #[command(subcommand)]
    Daemon(DaemonCommand),
    /// Print a completion script for a shell (bash, zsh, fish, elvish, powershell).
    Completions { shell: clap_complete::Shell },
    /// Write man pages (fugue.1 and one per command) into a directory.
    Man { dir: PathBuf },
    /// Terminal tabs in the browser: runs `fugue-web` with these arguments
    /// (`fugue web --help` lists them).
    #[command(disable_help_flag = true)]
    Web {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Carry the fugue protocol between stdin/stdout and this machine's daemon
    /// (starting it if needed, unless FUGUE_PROXY_NO_START is set, as it is for a
    /// client that would start none: a reconnect, `daemon status`, `daemon stop`):
    /// what `ssh HOST fugue proxy` runs for --host.
    Proxy,
    /// Print session, pane, agent-state and notification events as they happen (a
    /// line each; with --json one JSON object per line), until interrupted.
    Events,
    /// Report an agent CLI's hook to fugue: run by the agent's hooks (the hook's
    /// JSON on stdin), inside a fugue pane (`FUGUE_PANE`); does nothing elsewhere.
    /// fugue adds these hooks to Claude Code itself; for Codex, Gemini CLI and
    /// Qwen Code see the README.
    AgentEvent {
        /// The agent running the hook: claude, codex, gemini or qwen.
        #[arg(long)]
        agent: Option<String>,
    },
}

/// The commands that talk to a daemon (this machine's, or --host's).
#[derive(Subcommand, Debug)]
enum PaneCommand {
    /// Create a session; prints its id.
    #[command(visible_alias = "new")]
    NewSession {
        name: String,
        /// Working directory of the session's panes (default: the current directory).
        #[arg(long)]
        cwd: Option<PathBuf>,
        /// Environment for every pane of the session.
        #[arg(short = 'e', long = "env", value_name = "KEY=VALUE")]
        env: Vec<String>,
    },
    /// List sessions.
    Ls {
        /// This machine's and every host's in hosts.toml, with a HOST column.
        #[arg(long)]
        all_hosts: bool,
    },
    /// Rename a session.
    RenameSession { target: String, name: String },
    /// Kill a session and all its panes.
    KillSession { target: String },
    /// Start a command in a new pane; prints the pane id.
    Run(RunArgs),
    /// List panes of one session, or of all.
    Panes {
        session: Option<String>,
        /// This machine's and every host's in hosts.toml, with a HOST column.
        #[arg(long)]
        all_hosts: bool,
    },
    /// Every pane (of one session, or of all) with what its agent CLI is doing,
    /// how long it has been so, and its last line of output; panes whose agent
    /// needs a person first.
    Overview { session: Option<String> },
    /// Search every pane's text and scrollback (of one session, or of all) for a
    /// regular expression; prints SESSION:INDEX:LINE:TEXT per matching line
    /// (exit status 1 when nothing matched)
    Grep {
        pattern: String,
        #[arg(long, short = 's')]
        session: Option<String>,
        /// Most matching lines printed (1 to 1000; default 200)
        #[arg(long)]
        max: Option<u32>,
    },
    /// A live, full-screen overview of every pane (of one session, or of all),
    /// the panes whose agent needs a person first: attach (Enter), jump to the
    /// next pane that needs you (n), approve or deny its prompt after reading it
    /// (a, d), send a prompt (p), interrupt, kill, release, rename, start a pane,
    /// filter (/) and sort (s)
    Top {
        session: Option<String>,
        /// This machine's and every host's in hosts.toml (their panes as
        /// HOST/SESSION:INDEX); a host that cannot be reached is said
        #[arg(long, conflicts_with = "session")]
        all_hosts: bool,
    },
    /// Start the agent CLI a pane ran again on its own recorded session, in the same
    /// directory (`claude --resume ID`, `codex resume ID`, `gemini --resume ID`), as
    /// a new pane; prints its id. For a pane whose agent ended or was lost (a
    /// daemon restart, a reboot).
    Resume { pane: String },
    /// Show what the agent CLI in a pane is doing: its state, whether it needs a
    /// person, where that was read, and while it waits for permission the
    /// prompt's id that approve and deny take.
    Agent {
        pane: String,
        /// Also say what each signal (hook, terminal, status file, screen) read,
        /// what it means and for how long: which one decided, and why.
        #[arg(long)]
        explain: bool,
    },
    /// Approve the permission prompt PROMPT_ID (from `fugue agent`) of the agent in
    /// a pane: sent only while that same prompt is on screen; answering it again
    /// sends nothing and says so.
    Approve { pane: String, prompt_id: String },
    /// Deny the permission prompt PROMPT_ID (from `fugue agent`), as approve does.
    Deny { pane: String, prompt_id: String },
    /// Send a prompt to the agent CLI in a pane as a person would: pasted, then
    /// Enter once its input box took the paste in; prints the receipt: a turn
    /// started, or prompt_stalled (none within 5 s: exit status 1). Refused
    /// (agent_blocked) while the agent waits for a permission or an answer, and
    /// (draft_present) while a person's unsent text sits in its input box.
    Prompt {
        pane: String,
        text: String,
        /// An idempotency key: the same key again sends nothing and prints the
        /// first send's receipt.
        #[arg(long)]
        key: Option<String>,
    },
    /// Print a pane's output: the ANSI-stripped text view, or the raw log.
    Read {
        pane: String,
        /// Lines of the text view to print.
        #[arg(long, default_value_t = 100)]
        lines: u32,
        /// The raw byte log instead of the text view.
        #[arg(long)]
        raw: bool,
        /// Only output after this offset (from a previous read's next_offset).
        #[arg(long)]
        since: Option<u64>,
    },
    /// Type text into a pane.
    Write {
        pane: String,
        text: String,
        /// Press Enter after the text (sent separately, so TUIs do not drop it).
        #[arg(long)]
        enter: bool,
        /// Send the text as a paste: bracketed-paste markers if the program enabled them.
        #[arg(long)]
        paste: bool,
    },
    /// Print what a pane's terminal shows (one line per row, trailing spaces trimmed).
    ///
    /// Line numbers as tmux's capture-pane: 0 is the top visible row, negative
    /// numbers reach into scrollback, '-' means the very start (for -S) or end (-E).
    Capture {
        pane: String,
        /// First line (default: top of the screen, or of scrollback with --scrollback).
        #[arg(short = 'S', allow_hyphen_values = true)]
        start: Option<String>,
        /// Last line (default: bottom of the screen).
        #[arg(short = 'E', allow_hyphen_values = true)]
        end: Option<String>,
        /// Keep colours and attributes (SGR escape sequences).
        #[arg(long)]
        ansi: bool,
        /// Include the scrollback above the screen.
        #[arg(long)]
        scrollback: bool,
        /// Join lines the terminal wrapped.
        #[arg(short = 'J', long)]
        join: bool,
    },
    /// Attach this terminal to a pane (or a session's first pane).
    ///
    /// Keys: the detach key (default C-\) detaches. The prefix key (default C-b)
    /// followed by: d detach, n next pane, p previous pane, 0-9 pane by index, the
    /// prefix key again to send it. The terminal is restored on detach, when the
    /// pane exits (its exit status is printed) or when the daemon goes away.
    Attach {
        target: String,
        /// Watch only: no typing, no resizing.
        #[arg(long)]
        read_only: bool,
        #[arg(long, default_value = crate::attach::DETACH_KEY)]
        detach_key: String,
        #[arg(long, default_value = crate::attach::PREFIX_KEY)]
        prefix_key: String,
        /// Let the pane's programs set this terminal's clipboard (OSC 52; off by
        /// default, since any program in the pane could write to it).
        #[arg(long)]
        clipboard: bool,
        /// Do not show in the terminal's title how many panes need you, nor ring
        /// the bell and notify (OSC 9, OSC 777) when one newly does.
        #[arg(long)]
        no_notify: bool,
    },
    /// Who decides a pane's size with several clients attached: latest (the last to
    /// type or resize), smallest or largest.
    SetSizePolicy { pane: String, policy: String },
    /// Send keys: Enter, Escape, Tab, Backspace, Up, Down, Left, Right, Home, End, PageUp, PageDown, F1-F12, C-a..C-z, M-x, or single characters.
    SendKeys {
        pane: String,
        #[arg(required = true)]
        keys: Vec<String>,
    },
    /// Send SIGINT to the pane's foreground process; the shell stays.
    Interrupt { pane: String },
    /// Signal a pane's processes (default TERM, then KILL after the grace period).
    Kill {
        pane: String,
        #[arg(long, short = 's', default_value = "TERM")]
        signal: String,
    },
    /// Remove a pane at once, killing it if it still runs.
    Release { pane: String },
    /// Wait for a pane's process to exit and print how it ended; or, with a
    /// condition, for the first condition that holds (exit status 1 if the process
    /// exits first).
    Wait {
        pane: String,
        /// Give up after this many seconds (exit status 124).
        #[arg(long)]
        timeout: Option<f64>,
        #[command(flatten)]
        until: WaitArgs,
    },
    /// Set a pane's title.
    RenamePane { pane: String, title: String },
    /// Reorder a session's panes; name every pane exactly once.
    Reorder {
        session: String,
        #[arg(required = true)]
        panes: Vec<String>,
    },
    /// Show one pane.
    Status { pane: String },
    /// Resize a pane's terminal.
    Resize {
        pane: String,
        /// COLSxROWS, e.g. 120x40.
        size: String,
    },
}

#[derive(Subcommand, Debug)]
enum DaemonCommand {
    /// Start fugued (exit 0 if it already runs).
    Start {
        /// Run in this process, logging to stderr.
        #[arg(long)]
        foreground: bool,
    },
    /// Stop fugued: every pane is terminated.
    Stop,
    /// Show pid, version, uptime, socket, counts, where the state is kept and what
    /// start-up restored.
    Status,
    /// Replace the running fugued with the binary now on disk, keeping every pane
    /// and process (same pids, output goes on without a gap); attached clients
    /// reconnect. If the new binary cannot take over, the old one keeps running
    /// and says why (exit 1).
    Upgrade,
    /// Start fugued at login: a systemd user socket and service (Linux; fugued
    /// starts on the first connection, or at login).
    Install(InstallArgs),
    /// Remove what `daemon install` wrote, after disabling it.
    Uninstall(InstallArgs),
}

#[derive(Args, Debug)]
struct InstallArgs {
    /// Show the files and the commands, change nothing.
    #[arg(long)]
    print: bool,
    /// Write (or remove) the files only; do not run systemctl.
    #[arg(long)]
    no_enable: bool,
    /// The service manager (fugued runs on Linux: systemd).
    #[arg(long, value_enum)]
    manager: Option<crate::login::Manager>,
}

#[derive(Args, Debug)]
struct RunArgs {
    /// Session to run in; created if it is the default and does not exist.
    #[arg(short = 's', long, env = "FUGUE_SESSION", default_value = DEFAULT_SESSION)]
    session: String,
    #[arg(long)]
    title: Option<String>,
    /// What the pane is for, shown in lists.
    #[arg(long)]
    purpose: Option<String>,
    /// Absolute or relative directory (default: the session's).
    #[arg(long)]
    cwd: Option<PathBuf>,
    #[arg(short = 'e', long = "env", value_name = "KEY=VALUE")]
    env: Vec<String>,
    /// Exec the command directly instead of typing it into an interactive shell.
    #[arg(long)]
    no_shell: bool,
    /// Raw output bytes kept (default 1 MiB).
    #[arg(long, value_name = "BYTES")]
    limit: Option<u64>,
    /// Terminal size, COLSxROWS (default 120x40).
    #[arg(long)]
    size: Option<String>,
    /// Start the process again when it ends: never, on-failure or always (backoff
    /// from 1 s doubling to 60 s; kept across daemon restarts).
    #[arg(long, default_value = "never", value_parser = RestartPolicy::parse)]
    restart: RestartPolicy,
    /// Restarts allowed in a row before the pane stays exited.
    #[arg(long, value_name = "N")]
    max_restarts: Option<u32>,
    /// The command and its arguments (after --). Empty: just a shell.
    #[arg(last = true)]
    command: Vec<String>,
}

/// Attaches this terminal to `target` until the user detaches or the pane ends.
/// The overview (prefix `w`) chooses the next pane; quitting it detaches.
async fn attach(client: &Client, target: &str, options: crate::attach::AttachOptions) -> Result<ExitCode, ClientError> {
    use crate::attach::Ended;
    let connect = options
        .reconnect
        .clone()
        .ok_or_else(|| ClientError::Protocol("attach needs to know how it connected".into()))?;
    let mut target = target.to_string();
    // Each attachment after the first on a connection of its own (one
    // connection's event stream is taken once).
    let mut fresh: Option<Client> = None;
    loop {
        let client = fresh.as_ref().unwrap_or(client);
        match crate::attach::run(client, &target, options.clone()).await? {
            Ended::Detached(pane) => eprintln!("[detached from pane {}]", short(pane)),
            Ended::Exited(pane, status) => eprintln!("[pane {} {status}]", short(pane)),
            Ended::DaemonGone => {
                eprintln!("fugue: lost the connection to fugued");
                return Ok(ExitCode::FAILURE);
            }
            Ended::Overview(pane) => match crate::top::choose(&connect, pane).await? {
                Some(chosen) => {
                    target = chosen.to_string();
                    fresh = Some(Client::connect(connect.clone().autostart(false)).await?);
                    continue;
                }
                None => eprintln!("[detached from pane {}]", short(pane)),
            },
        }
        return Ok(ExitCode::SUCCESS);
    }
}

/// Creates a pane; the default session is created first if it does not exist.
async fn create_pane(client: &Client, spec: SpawnSpec) -> Result<PaneInfo, ClientError> {
    match client.create_pane(spec.clone()).await {
        Err(err) if err.code() == Some(ErrorCode::SessionNotFound) && spec.session == DEFAULT_SESSION => {
            let cwd = absolute(PathBuf::from("."))?;
            match client.create_session(DEFAULT_SESSION, Some(&cwd), Vec::new()).await {
                // Another client may have just created it.
                Ok(_) => {}
                Err(err) if err.code() == Some(ErrorCode::NameTaken) => {}
                Err(err) => return Err(err),
            }
            client.create_pane(spec).await
        }
        result => result,
    }
}

/// `fugue` alone: a new shell in the default session, attached.
async fn shell_attached(cli: &Cli) -> Result<ExitCode, ClientError> {
    if std::env::var_os("FUGUE_PANE").is_some() {
        return Err(invalid(
            "already inside a fugue pane (FUGUE_PANE is set); unset it to attach from here".into(),
        ));
    }
    let client = connect(cli, true).await?;
    let mut spec = SpawnSpec::new(DEFAULT_SESSION);
    spec.shell = true;
    let cwd = absolute(PathBuf::from("."))?;
    spec.cwd = Some(cwd.display().to_string());
    let pane = create_pane(&client, spec).await?;
    let options = crate::attach::AttachOptions {
        clipboard: false,
        read_only: false,
        detach_key: crate::attach::parse_key(crate::attach::DETACH_KEY).map_err(invalid)?,
        prefix_key: crate::attach::parse_key(crate::attach::PREFIX_KEY).map_err(invalid)?,
        reconnect: Some(connect_options(cli)?),
        notify: true,
    };
    attach(&client, &pane.id.to_string(), options).await
}

/// Writes `fugue.1` and `fugue-COMMAND.1` for every command into `dir`.
fn write_man_pages(dir: &std::path::Path) -> Result<usize, ClientError> {
    let failed = |e: std::io::Error| invalid(format!("cannot write man pages to {}: {e}", dir.display()));
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

/// The session `fugue` alone and `fugue run` without `-s` use.
const DEFAULT_SESSION: &str = "default";

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
            eprintln!(
                "fugue: {}; see fugue --help",
                fugue_client::usage_error_line(&err.render().to_string())
            );
            return ExitCode::from(2);
        }
    };
    match run(&cli).await {
        Ok(code) => code,
        Err(err) => {
            eprintln!("fugue: {err}");
            ExitCode::FAILURE
        }
    }
}

fn connect_options(cli: &Cli) -> Result<ConnectOptions, ClientError> {
    let mut options = ConnectOptions::default().client_name("fugue-cli");
    options.socket = cli.socket.clone();
    if let Some(host) = &cli.host {
        let remote = fugue_client::remote::resolve(host).map_err(|reason| ClientError::Connect {
            path: PathBuf::from(format!("ssh://{host}")),
            reason,
            not_running: false,
        })?;
        options = options.host(remote);
    }
    Ok(options)
}

async fn connect(cli: &Cli, autostart: bool) -> Result<Client, ClientError> {
    Client::connect(connect_options(cli)?.autostart(autostart)).await
}

/// `fugue proxy`: the local daemon's socket on stdin and stdout, byte for byte.
async fn proxy(cli: &Cli) -> Result<ExitCode, ClientError> {
    if cli.host.is_some() {
        return Err(ClientError::Protocol(
            "proxy serves this machine's daemon; it takes no --host".into(),
        ));
    }
    // A client that would not start a daemon here (a reconnect, `daemon
    // status`) says so through the environment ssh runs this in.
    let start = std::env::var_os(fugue_client::remote::PROXY_NO_START).is_none();
    let (stream, _) = fugue_client::connect_socket(&connect_options(cli)?.autostart(start)).await?;
    let (mut from_daemon, mut to_daemon) = stream.into_split();
    let mut stdin = tokio::io::stdin();
    let mut stdout = tokio::io::stdout();
    tokio::select! {
        _ = tokio::io::copy(&mut stdin, &mut to_daemon) => {}
        _ = tokio::io::copy(&mut from_daemon, &mut stdout) => {}
    }
    use tokio::io::AsyncWriteExt;
    let _ = stdout.flush().await;
    // A blocking read of stdin cannot be cancelled; leave without waiting for it.
    std::process::exit(0)
}

/// `fugue events`: lifecycle and agent-state events, one per line, flushed as they come.
async fn events(cli: &Cli) -> Result<ExitCode, ClientError> {
    let client = connect(cli, true).await?;
    let mut events = client.subscribe().await?;
    let mut stdout = std::io::stdout();
    while let Some(event) = events.recv().await {
        let Some(value) = fugue_client::views::lifecycle_event(&event) else {
            continue;
        };
        let line = match cli.json {
            true => fugue_client::views::safe_json(&value, false),
            false => event_line(&event, &value),
        };
        if writeln!(stdout, "{line}").and_then(|()| stdout.flush()).is_err() {
            // The reader went away (a closed pipe): done.
            return Ok(ExitCode::SUCCESS);
        }
    }
    Err(ClientError::Closed(String::new()))
}

/// `fugue agent-event`: an agent's hook reporting to the daemon. It must never
/// get in the agent's way: whatever goes wrong (not in a fugue pane, no daemon,
/// JSON it does not know), it prints nothing on stdout (which agents read as
/// the hook's answer) and exits 0; problems go to stderr.
async fn agent_event(cli: &Cli, agent: Option<&str>) -> ExitCode {
    use std::io::Read;
    // Read first, always: an agent writing its hook's JSON into a pipe nobody
    // reads gets EPIPE. A hook's JSON is small; past 1 MiB it is not one (the rest,
    // up to 64 MiB, is read and dropped).
    let mut input = Vec::new();
    let mut stdin = std::io::stdin().lock();
    let read = Read::read_to_end(&mut Read::take(&mut stdin, 1 << 20), &mut input);
    let _ = std::io::copy(&mut Read::take(&mut stdin, 64 << 20), &mut std::io::sink());
    let Some(pane) = std::env::var("FUGUE_PANE").ok().filter(|p| !p.is_empty()) else {
        return ExitCode::SUCCESS;
    };
    let token = std::env::var("FUGUE_PANE_TOKEN").unwrap_or_default();
    let hook = match read
        .map_err(|e| e.to_string())
        .and_then(|_| crate::hooks::parse(&input, agent))
    {
        Ok(hook) => hook,
        Err(err) => {
            eprintln!("fugue agent-event: {err}");
            return ExitCode::SUCCESS;
        }
    };
    let sent = async {
        let client = connect(cli, false).await?;
        client.agent_hook(&pane, &token, hook).await
    };
    match tokio::time::timeout(std::time::Duration::from_secs(2), sent).await {
        Ok(Ok(())) => {}
        Ok(Err(err)) => eprintln!("fugue agent-event: {err}"),
        Err(_) => eprintln!("fugue agent-event: fugued did not answer within 2 s"),
    }
    ExitCode::SUCCESS
}

/// An event as a line: its type, then what it is about.
fn event_line(event: &Event, value: &Value) -> String {
    let kind = value["type"].as_str().unwrap_or("event");
    let pane = |p: &PaneInfo| format!("{}:{} {} {}", p.session_name, p.index, short(p.id), p.title);
    let about = match event {
        Event::SessionCreated(info) => format!("{} {}", info.name, short(info.id)),
        Event::SessionDestroyed { id, name } => format!("{name} {}", short(*id)),
        Event::SessionRenamed {
            id,
            previous_name,
            name,
        } => format!("{previous_name} -> {name} {}", short(*id)),
        Event::PaneCreated(p) | Event::PaneRestarted(p) | Event::PaneRenamed(p) => pane(p),
        Event::PaneExited(p) => format!("{} {}", pane(p), p.exit.map(|e| e.to_string()).unwrap_or_default()),
        Event::PaneRemoved { id, .. } => short(*id),
        Event::PanesReordered { panes, .. } => panes.iter().map(|p| short(*p)).collect::<Vec<_>>().join(" "),
        Event::AgentStateChanged { pane, agent, .. } => format!(
            "{} {} {} needs={} ({})",
            short(*pane),
            agent.agent.map(|a| a.as_str()).unwrap_or("agent"),
            agent.state.as_str(),
            agent.needs.as_str(),
            agent.source.as_str()
        ),
        Event::Notification { pane, title, body, .. } => format!("{} {title}: {body}", short(*pane))
            .trim_end_matches([':', ' '])
            .to_string(),
        Event::Lagged { missed } => format!("{missed} events missed; list again to catch up"),
        _ => String::new(),
    };
    format!("{kind} {about}").trim_end().to_string()
}

/// What `--all-hosts` lists.
enum Listing {
    Sessions,
    Panes(Option<String>),
}

/// `ls --all-hosts` and `panes --all-hosts`: this machine and every host of the
/// hosts file, asked at once; a host that cannot be reached is reported and the
/// others listed (exit 1 only when none answered).
async fn list_all_hosts(cli: &Cli, listing: Listing) -> Result<ExitCode, ClientError> {
    let hosts = fugue_client::remote::all_hosts().map_err(ClientError::Protocol)?;
    // Listing starts no daemon here (a host's proxy starts its own, as any
    // command there would).
    let local = ConnectOptions {
        socket: cli.socket.clone(),
        ..ConnectOptions::default().client_name("fugue-cli").autostart(false)
    };
    let mut targets = vec![("local".to_string(), local)];
    for remote in hosts {
        let options = ConnectOptions::default().client_name("fugue-cli").host(remote.clone());
        targets.push((remote.name, options));
    }
    let (key, head) = match listing {
        Listing::Sessions => ("sessions", SESSION_HEADER),
        Listing::Panes(_) => ("panes", PANE_HEADER),
    };
    let listing = &listing;
    // Each host's answer: its listing as JSON values and as table rows.
    let answers = futures::future::join_all(targets.into_iter().map(|(name, options)| async move {
        let listed = async {
            let client = Client::connect(options).await?;
            Ok::<_, ClientError>(match listing {
                Listing::Sessions => {
                    let sessions = client.list_sessions().await?;
                    (
                        sessions.iter().map(session_json).collect::<Vec<_>>(),
                        sessions_rows(&sessions),
                    )
                }
                Listing::Panes(session) => {
                    let panes = client.list_panes(session.as_deref()).await?;
                    (panes.iter().map(pane_json).collect(), panes_rows(&panes))
                }
            })
        };
        (name, listed.await)
    }))
    .await;
    let answered = answers.iter().filter(|(_, a)| a.is_ok()).count();
    let header: Vec<&str> = std::iter::once("HOST").chain(head.iter().copied()).collect();
    let (mut json_hosts, mut rows) = (Vec::new(), Vec::new());
    for (host, answer) in answers {
        match answer {
            Ok((values, host_rows)) => {
                json_hosts.push(json!({"host": host, key: values}));
                rows.extend(
                    host_rows
                        .into_iter()
                        .map(|row| std::iter::once(host.clone()).chain(row).collect()),
                );
            }
            Err(err) => {
                json_hosts.push(json!({"host": host, "error": err.to_string()}));
                if !cli.json {
                    eprintln!("fugue: host {host}: {err}");
                }
            }
        }
    }
    let out = Output { json: cli.json };
    out.print(Value::Array(json_hosts), || match rows.is_empty() {
        true => String::new(),
        false => table(&header, rows),
    });
    Ok(if answered == 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

async fn run(cli: &Cli) -> Result<ExitCode, ClientError> {
    let Some(command) = &cli.command else {
        return shell_attached(cli).await;
    };
    match command {
        Command::Daemon(command) => daemon(cli, command).await,
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
        Command::Web { args } => run_web(cli, args),
        Command::Proxy => proxy(cli).await,
        Command::Events => events(cli).await,
        Command::AgentEvent { agent } => Ok(agent_event(cli, agent.as_deref()).await),
        Command::OnDaemon(command) => on_daemon(cli, command).await,
    }
}

/// Runs a command that talks to a daemon.
async fn on_daemon(cli: &Cli, command: &PaneCommand) -> Result<ExitCode, ClientError> {
    match command {
        PaneCommand::Ls { all_hosts: true } => return list_all_hosts(cli, Listing::Sessions).await,
        PaneCommand::Panes {
            session,
            all_hosts: true,
        } => return list_all_hosts(cli, Listing::Panes(session.clone())).await,
        PaneCommand::Top { all_hosts: true, .. } => {
            let mut local = ConnectOptions::default().client_name("fugue-cli");
            local.socket = cli.socket.clone();
            return crate::top::run_all_hosts(local).await;
        }
        _ => {}
    }
    let client = connect(cli, true).await?;
    let out = Output { json: cli.json };
    match command {
        PaneCommand::NewSession { name, cwd, env } => {
            let cwd = absolute(cwd.clone().unwrap_or_else(|| PathBuf::from(".")))?;
            let info = client.create_session(name, Some(&cwd), parse_env(env)?).await?;
            out.print(session_json(&info), || info.id.to_string());
        }
        PaneCommand::Ls { .. } => {
            let sessions = client.list_sessions().await?;
            out.print(Value::Array(sessions.iter().map(session_json).collect()), || {
                sessions_table(&sessions)
            });
        }
        PaneCommand::RenameSession { target, name } => {
            let (info, previous) = client.rename_session(target, name).await?;
            let mut value = session_json(&info);
            value["previous_name"] = json!(previous);
            out.print(value, || format!("renamed '{previous}' to '{}'", info.name));
        }
        PaneCommand::KillSession { target } => {
            let info = client.destroy_session(target).await?;
            out.print(session_json(&info), || {
                format!("killed session '{}' ({})", info.name, info.id)
            });
        }
        PaneCommand::Run(args) => {
            let info = create_pane(&client, spawn_spec(args)?).await?;
            out.print(pane_json(&info), || info.id.to_string());
        }
        PaneCommand::Resume { pane } => {
            let info = client.resume_agent(pane).await?;
            out.print(pane_json(&info), || info.id.to_string());
        }
        PaneCommand::Agent { pane, explain } => {
            let view = AgentStateView::from(&client.agent_status(pane).await?);
            out.print(json_of(&view), || match explain {
                true => format!("{}\n{}", agent_text(&view), signals_text(&view)),
                false => agent_text(&view),
            });
        }
        PaneCommand::Prompt { pane, text, key } => {
            let sent = fugue_client::ops::send_prompt(&client, pane, text, key.as_deref()).await?;
            out.print(json_of(&sent), || sent.message.clone());
            if !sent.went_busy {
                return Ok(ExitCode::FAILURE);
            }
        }
        PaneCommand::Approve { pane, prompt_id } | PaneCommand::Deny { pane, prompt_id } => {
            let answer = match command {
                PaneCommand::Approve { .. } => PermissionAnswer::Approve,
                _ => PermissionAnswer::Deny,
            };
            let answered = client.answer_permission(pane, prompt_id, answer).await?;
            out.print(json_of(AnsweredView::from(&answered)), || match answered.already {
                true => format!("already {}: nothing sent", answered.answer.past()),
                false => answered.answer.past().to_string(),
            });
        }
        PaneCommand::Overview { session } => {
            let mut panes = client.overview(session.as_deref()).await?;
            // Needs-you first, then the session's own order.
            panes.sort_by_key(|p| p.agent.as_ref().is_none_or(|a| a.needs == Attention::Nothing));
            let views: Vec<OverviewView> = panes.iter().map(OverviewView::from).collect();
            out.print(json_of(&views), || overview_table(&views));
        }
        PaneCommand::Panes { session, .. } => {
            let panes = client.list_panes(session.as_deref()).await?;
            out.print(Value::Array(panes.iter().map(pane_json).collect()), || {
                panes_table(&panes)
            });
        }
        PaneCommand::Read {
            pane,
            lines,
            raw,
            since,
        } => {
            let mode = match raw {
                true => ReadMode::Raw {
                    since: *since,
                    max_bytes: None,
                },
                false => ReadMode::Text {
                    lines: *lines,
                    since: *since,
                },
            };
            let chunk = client.read_output(pane, mode).await?;
            let text = match raw {
                true => String::from_utf8_lossy(&chunk.data).into_owned(),
                false => chunk.lines.join("\n"),
            };
            if cli.json {
                let lines = (!raw).then(|| chunk.lines.clone());
                out.print(json_of(ReadView::new(&chunk, text, lines)), String::new);
            } else if *raw {
                let mut stdout = std::io::stdout().lock();
                let _ = stdout.write_all(&chunk.data);
                let _ = stdout.flush();
            } else if !text.is_empty() {
                println!("{text}");
            }
        }
        PaneCommand::Write {
            pane,
            text,
            enter,
            paste,
        } => {
            match paste {
                true => client.paste(pane, text.as_bytes()).await?,
                false => client.write_input(pane, text.as_bytes()).await?,
            }
            if *enter {
                client.send_keys(pane, &["Enter".to_string()]).await?;
            }
            out.print(json!({"ok": true}), String::new);
        }
        PaneCommand::SendKeys { pane, keys } => {
            client.send_keys(pane, keys).await?;
            out.print(json!({"ok": true}), String::new);
        }
        PaneCommand::Interrupt { pane } => {
            client.interrupt(pane).await?;
            out.print(json!({"ok": true}), String::new);
        }
        PaneCommand::Kill { pane, signal } => {
            let info = client.kill_pane(pane, Some(signal)).await?;
            out.print(pane_json(&info), String::new);
        }
        PaneCommand::Release { pane } => {
            client.release_pane(pane).await?;
            out.print(json!({"ok": true}), String::new);
        }
        PaneCommand::Wait { pane, timeout, until } => {
            let timeout = match timeout {
                Some(secs) => Some(parse_timeout(*secs)?),
                None => None,
            };
            if let Some(until) = until.until()? {
                return wait_for(&client, &out, pane, until, timeout).await;
            }
            let (info, exited) = client.wait_for_exit(pane, timeout).await?;
            if !exited {
                let secs = timeout.map_or(0.0, |t| t.as_secs_f64());
                if cli.json {
                    let mut value = pane_json(&info);
                    value["timed_out"] = json!(true);
                    out.print(value, String::new);
                }
                eprintln!("fugue: timed out after {secs}s waiting for pane {} to exit", info.id);
                return Ok(ExitCode::from(EXIT_TIMEOUT));
            }
            let mut value = pane_json(&info);
            value["timed_out"] = json!(false);
            out.print(value, || exit_text(info.exit));
        }
        PaneCommand::RenamePane { pane, title } => {
            let info = client.rename_pane(pane, title).await?;
            out.print(pane_json(&info), String::new);
        }
        PaneCommand::Reorder { session, panes } => {
            let list = client.reorder_panes(session, panes).await?;
            out.print(Value::Array(list.iter().map(pane_json).collect()), || {
                panes_table(&list)
            });
        }
        PaneCommand::Status { pane } => {
            let info = client.pane_status(pane).await?;
            out.print(pane_json(&info), || panes_table(std::slice::from_ref(&info)));
        }
        PaneCommand::Capture {
            pane,
            start,
            end,
            ansi,
            scrollback,
            join,
        } => {
            let what = if *scrollback {
                CaptureWhat::All
            } else {
                CaptureWhat::Screen
            };
            let range = (
                line_number(start.as_deref(), i64::MIN)?,
                line_number(end.as_deref(), i64::MAX)?,
            );
            let capture = client.capture(pane, what, range, *ansi, *join).await?;
            let text = capture.lines.join("\n");
            out.print(json_of(CaptureView::from(capture)), || text);
        }
        PaneCommand::Grep { pattern, session, max } => {
            let found = fugue_client::ops::grep(&client, pattern, session.as_deref(), *max).await?;
            let view = GrepView::from(&found);
            out.print(json_of(&view), || grep_text(&view));
            if found.timed_out {
                eprintln!("fugue: the search took its 5 s before every pane was searched; narrow it with --session");
            }
            if found.truncated {
                eprintln!(
                    "fugue: more lines matched than the {} shown (--max)",
                    view.matches.len()
                );
            }
            return Ok(match found.matches.is_empty() {
                true => ExitCode::FAILURE,
                false => ExitCode::SUCCESS,
            });
        }
        PaneCommand::Top { session, .. } => {
            return crate::top::run(&client, session.clone()).await;
        }
        PaneCommand::Attach {
            target,
            read_only,
            detach_key,
            prefix_key,
            clipboard,
            no_notify,
        } => {
            let options = crate::attach::AttachOptions {
                notify: !*no_notify,
                clipboard: *clipboard,
                read_only: *read_only,
                detach_key: crate::attach::parse_key(detach_key).map_err(invalid)?,
                prefix_key: crate::attach::parse_key(prefix_key).map_err(invalid)?,
                reconnect: Some(connect_options(cli)?),
            };
            return attach(&client, target, options).await;
        }
        PaneCommand::SetSizePolicy { pane, policy } => {
            let policy = SizePolicy::parse(policy).map_err(invalid)?;
            client.set_size_policy(pane, policy).await?;
            out.print(json!({"ok": true, "policy": policy.as_str()}), String::new);
        }
        PaneCommand::Resize { pane, size } => {
            client.resize_pane(pane, parse_size(size)?).await?;
            out.print(json!({"ok": true}), String::new);
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn daemon(cli: &Cli, command: &DaemonCommand) -> Result<ExitCode, ClientError> {
    let out = Output { json: cli.json };
    let socket = fugue_client::protocol::socket::socket_path(cli.socket.as_deref());
    match command {
        DaemonCommand::Start { foreground } => {
            if let Ok(client) = connect(cli, false).await {
                let pid = client.welcome().pid;
                out.print(json!({"running": true, "pid": pid, "started": false}), || {
                    format!("fugued already running (pid {pid})")
                });
                return Ok(ExitCode::SUCCESS);
            }
            if *foreground {
                use std::os::unix::process::CommandExt;
                let err = std::process::Command::new(fugue_client::daemon_binary())
                    .arg("--foreground")
                    .arg("--socket")
                    .arg(&socket)
                    .exec();
                return Err(ClientError::Start(err.to_string()));
            }
            fugue_client::start_daemon(&socket).await?;
            let client = connect(cli, false).await?;
            let pid = client.welcome().pid;
            out.print(json!({"running": true, "pid": pid, "started": true}), || {
                format!("fugued started (pid {pid})")
            });
        }
        DaemonCommand::Stop => {
            let client = match connect(cli, false).await {
                Ok(client) => client,
                Err(ClientError::Connect { .. }) => {
                    out.print(json!({"running": false, "stopped": false}), || {
                        "fugued is not running".to_string()
                    });
                    return Ok(ExitCode::SUCCESS);
                }
                Err(err) => return Err(err),
            };
            let pid = client.welcome().pid;
            client.shutdown(Duration::from_secs(15)).await?;
            out.print(json!({"running": false, "stopped": true, "pid": pid}), || {
                format!("fugued stopped (pid {pid})")
            });
        }
        DaemonCommand::Status => {
            let client = connect(cli, false).await?;
            let info = client.daemon_status().await?;
            out.print(json_of(DaemonView::from(&info)), || daemon_text(&info));
        }
        DaemonCommand::Install(install) => return login(&socket, install, true, &out),
        DaemonCommand::Uninstall(install) => return login(&socket, install, false, &out),
        DaemonCommand::Upgrade => {
            let info = Client::upgrade_daemon(connect_options(cli)?, Duration::from_secs(60)).await?;
            let failed = info.recovery.starts_with("upgrade failed");
            out.print(json_of(DaemonView::from(&info)), || match failed {
                true => format!("fugue: {}", info.recovery),
                false => info.recovery.clone(),
            });
            if failed {
                return Ok(ExitCode::FAILURE);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `fugue daemon install` and `uninstall`.
fn login(socket: &std::path::Path, args: &InstallArgs, install: bool, out: &Output) -> Result<ExitCode, ClientError> {
    use crate::login::{activation_commands, run_commands, unit_files};
    let fail = |why: String| ClientError::Start(why);
    let manager = args.manager.unwrap_or_default();
    let fugued = crate::login::absolute_fugued(fugue_client::daemon_binary()).map_err(fail)?;
    let files = unit_files(manager, &fugued, socket).map_err(fail)?;
    let commands = match args.no_enable {
        true => Vec::new(),
        false => activation_commands(manager, install),
    };
    let paths: Vec<String> = files.iter().map(|f| f.path.display().to_string()).collect();
    let shown: Vec<String> = commands.iter().map(|c| c.join(" ")).collect();
    if args.print {
        out.print(
            json!({"files": files.iter().map(|f| json!({"path": f.path, "text": f.text})).collect::<Vec<_>>(), "commands": shown}),
            || {
                let mut text = String::new();
                for file in &files {
                    text.push_str(&format!("# {}\n{}\n", file.path.display(), file.text));
                }
                for command in &shown {
                    text.push_str(&format!("$ {command}\n"));
                }
                text.trim_end().to_string()
            },
        );
        return Ok(ExitCode::SUCCESS);
    }
    if install {
        for file in &files {
            if let Some(dir) = file.path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| fail(format!("cannot create {}: {e}", dir.display())))?;
            }
            std::fs::write(&file.path, &file.text)
                .map_err(|e| fail(format!("cannot write {}: {e}", file.path.display())))?;
        }
        run_commands(&commands).map_err(|e| fail(format!("wrote {}, but {e}", paths.join(", "))))?;
    } else {
        // Disable first (the manager needs the files for it), then remove them.
        if let Err(err) = run_commands(&commands) {
            eprintln!("fugue: {err}; removing the files anyway");
        }
        for file in &files {
            match std::fs::remove_file(&file.path) {
                Ok(()) => {}
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => return Err(fail(format!("cannot remove {}: {err}", file.path.display()))),
            }
        }
    }
    let verb = if install { "installed" } else { "removed" };
    out.print(json!({verb: paths, "commands": shown}), || {
        let mut text = format!("{verb} {}", paths.join(", "));
        if !shown.is_empty() {
            text.push_str(&format!(" (ran: {})", shown.join("; ")));
        }
        text
    });
    Ok(ExitCode::SUCCESS)
}

struct Output {
    json: bool,
}

impl Output {
    /// Prints `value` as JSON with `--json`, else the text (nothing if empty).
    /// A reader that went away (`fugue overview | head`) ends the output
    /// quietly, as in other command-line tools.
    fn print(&self, value: Value, text: impl FnOnce() -> String) {
        let text = match self.json {
            // Unsafe characters as \u escapes (views::safe_json), never raw.
            true => fugue_client::views::safe_json(&value, true),
            false => text(),
        };
        if text.is_empty() {
            return;
        }
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{text}").and_then(|_| stdout.flush());
    }
}

/// What `fugue wait` waits for besides the process's exit.
#[derive(Args, Debug, Default)]
pub struct WaitArgs {
    /// A regular expression, matched within single lines of the output.
    #[arg(long)]
    pattern: Option<String>,
    /// Match the pattern against what the screen shows now instead.
    #[arg(long, requires = "pattern")]
    screen: bool,
    /// The pane printed nothing for this many milliseconds.
    #[arg(long, value_name = "MS")]
    idle: Option<u64>,
    /// The agent CLI reaches one of these states (`|` or `,` between them):
    /// waiting_for_permission, waiting_for_answer, busy, idle, starting, unknown, exited.
    #[arg(long, value_name = "STATES")]
    agent_state: Option<String>,
    /// The agent CLI needs a person for one of these reasons (`|` or `,` between
    /// them): permission, question, finished_unseen, or any.
    #[arg(long, value_name = "NEEDS")]
    needs: Option<String>,
}

impl WaitArgs {
    /// The conditions, or `None` when only the exit is awaited. The flags map
    /// onto the wait every front end takes (`fugue_client::ops::WaitFor`).
    fn until(&self) -> Result<Option<WaitUntil>, ClientError> {
        let wait = fugue_client::ops::WaitFor {
            exit: Some(true),
            pattern: self.pattern.clone(),
            on: self.screen.then(|| "screen".to_string()),
            idle_ms: self.idle,
            agent_state: self.agent_state.clone(),
            needs: self.needs.clone(),
            ..Default::default()
        };
        let (until, _) = wait.until().map_err(invalid)?;
        let only_exit = until.pattern.is_none()
            && until.idle_ms.is_none()
            && until.agent_states.is_empty()
            && until.agent_needs.is_empty();
        Ok((!only_exit).then_some(until))
    }
}

fn invalid(message: String) -> ClientError {
    ClientError::Daemon(fugue_client::protocol::ErrorReply::invalid(message))
}

fn absolute(path: PathBuf) -> Result<PathBuf, ClientError> {
    let joined = match path.is_absolute() {
        true => path,
        false => std::env::current_dir()
            .map_err(|e| invalid(format!("cannot read the current directory: {e}")))?
            .join(path),
    };
    // Canonical form when it exists; the daemon reports a missing directory itself.
    Ok(joined.canonicalize().unwrap_or(joined))
}

fn parse_env(pairs: &[String]) -> Result<Vec<EnvVar>, ClientError> {
    pairs
        .iter()
        .map(|pair| match pair.split_once('=') {
            Some((name, value)) if !name.is_empty() => Ok(EnvVar {
                name: name.into(),
                value: value.into(),
            }),
            _ => Err(invalid(format!("bad environment variable '{pair}'; use KEY=VALUE"))),
        })
        .collect()
}

/// A capture line number; `-` is the given extreme.
fn line_number(text: Option<&str>, dash: i64) -> Result<Option<i64>, ClientError> {
    match text {
        None => Ok(None),
        Some("-") => Ok(Some(dash)),
        Some(n) => n
            .parse()
            .map(Some)
            .map_err(|_| invalid(format!("bad line number '{n}'; use an integer or -"))),
    }
}

/// `--timeout` seconds as a duration, refused (never a panic) when negative, not a
/// number, or past the daemon's limit.
/// `fugue wait` with conditions: prints which one held; 124 on timeout, 1 when
/// the process exited before any other condition held.
async fn wait_for(
    client: &Client,
    out: &Output,
    pane: &str,
    until: WaitUntil,
    timeout: Option<Duration>,
) -> Result<ExitCode, ClientError> {
    let timeout = timeout.unwrap_or(Duration::from_millis(fugue_client::protocol::limits::MAX_TIMEOUT_MS));
    let outcome = client.wait_for(pane, until, timeout).await?;
    let condition = outcome.condition;
    let view = views::WaitView::from(outcome);
    let text = match &view.matched {
        Some(matched) => format!(
            "{} after {} ms: {}",
            view.condition,
            view.elapsed_ms,
            escape_for_display(matched)
        ),
        None => format!("{} after {} ms", view.condition, view.elapsed_ms),
    };
    out.print(serde_json::to_value(&view).unwrap_or_default(), || text.clone());
    let code = match condition {
        WaitCondition::Timeout => EXIT_TIMEOUT,
        WaitCondition::Exit => 1,
        _ => return Ok(ExitCode::SUCCESS),
    };
    if out.json {
        eprintln!("fugue: {text}");
    } else {
        eprintln!("fugue: pane {pane} ended the wait with {}", view.condition);
    }
    Ok(ExitCode::from(code))
}

fn parse_timeout(secs: f64) -> Result<Duration, ClientError> {
    use fugue_client::protocol::limits::MAX_TIMEOUT_MS;
    let max_secs = MAX_TIMEOUT_MS / 1000;
    match Duration::try_from_secs_f64(secs) {
        Ok(timeout) if timeout.as_millis() <= MAX_TIMEOUT_MS as u128 => Ok(timeout),
        Ok(_) => Err(invalid(format!(
            "--timeout {secs} exceeds the maximum {max_secs} seconds (30 days)"
        ))),
        Err(_) => Err(invalid(format!(
            "--timeout must be a number of seconds from 0 to {max_secs}, got {secs}"
        ))),
    }
}

use fugue_client::protocol::limits::escape_for_display;

fn parse_size(text: &str) -> Result<PaneSize, ClientError> {
    let parsed = text.split_once(['x', 'X']).and_then(|(c, r)| {
        Some(PaneSize {
            cols: c.trim().parse().ok()?,
            rows: r.trim().parse().ok()?,
        })
    });
    match parsed {
        Some(size) if size.cols > 0 && size.rows > 0 => Ok(size),
        _ => Err(invalid(format!("bad size '{text}'; use COLSxROWS, e.g. 120x40"))),
    }
}

fn spawn_spec(args: &RunArgs) -> Result<SpawnSpec, ClientError> {
    let mut spec = SpawnSpec::new(args.session.clone());
    let mut command = args.command.iter();
    spec.command = command.next().cloned();
    spec.args = command.cloned().collect();
    spec.env = parse_env(&args.env)?;
    spec.cwd = args
        .cwd
        .clone()
        .map(absolute)
        .transpose()?
        .map(|p| p.display().to_string());
    spec.shell = !args.no_shell;
    spec.title = args.title.clone();
    spec.purpose = args.purpose.clone();
    spec.size = args.size.as_deref().map(parse_size).transpose()?;
    spec.output_byte_limit = args.limit;
    spec.restart = args.restart;
    spec.max_restarts = args.max_restarts;
    Ok(spec)
}

/// Replaces this process with `fugue-web` (so its output, signals and exit
/// status are the user's), passing the daemon's socket on.
fn run_web(cli: &Cli, args: &[String]) -> Result<ExitCode, ClientError> {
    use std::os::unix::process::CommandExt;
    let program = fugue_client::companion_binary("fugue-web");
    let mut command = std::process::Command::new(&program);
    if let Some(socket) = &cli.socket {
        command.arg("--socket").arg(socket);
    }
    let err = command.args(args).exec();
    eprintln!(
        "fugue: cannot run {}: {err} (scripts/install puts it beside fugue)",
        program.display()
    );
    Ok(ExitCode::FAILURE)
}

/// `45s`, `12m03s`, `3h07m`, `2d04h`.
fn human_duration(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        3600..86400 => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
        _ => format!("{}d{:02}h", s / 86400, s % 86400 / 3600),
    }
}

fn short(id: impl ToString) -> String {
    id.to_string()[..8].to_string()
}

fn exit_text(exit: Option<ExitStatus>) -> String {
    exit.map_or_else(|| "running".to_string(), |e| e.to_string())
}

/// A view as the JSON `--json` prints.
fn json_of(view: impl serde::Serialize) -> Value {
    serde_json::to_value(view).unwrap_or(Value::Null)
}

fn session_json(info: &SessionInfo) -> Value {
    json_of(SessionView::from(info))
}

fn pane_json(info: &PaneInfo) -> Value {
    json_of(PaneView::from(info))
}

/// `fugue agent`: the state in a line, then what is behind it.
/// `fugue agent --explain`: one row per signal, the deciding one marked.
fn signals_text(view: &AgentStateView) -> String {
    let now = now_ms();
    let rows: Vec<String> = view
        .signals
        .iter()
        .map(|signal| {
            let mark = if signal.source == view.source { "*" } else { " " };
            format!(
                "{mark} {:<12} {:<22} for {:<8} {}",
                signal.source,
                signal.means.as_deref().unwrap_or("(says nothing now)"),
                human_duration(now.saturating_sub(signal.since)),
                escape_for_display(&signal.reading)
            )
        })
        .collect();
    format!("signals (* decided):\n{}", rows.join("\n"))
}

fn agent_text(view: &AgentStateView) -> String {
    let mut text = format!(
        "{}  {} (turn {}, needs {}) from {}, for {}",
        view.agent.as_deref().unwrap_or("no agent"),
        view.state,
        view.turn,
        view.needs,
        view.source,
        human_duration(now_ms().saturating_sub(view.since)),
    );
    let mut row = |name: &str, value: &str| text.push_str(&format!("\n{name:<10} {}", escape_for_display(value)));
    if let Some(version) = &view.version {
        row("version", version);
    }
    if let Some(session) = &view.session_id {
        row("session", session);
    }
    if let Some(prompt) = &view.prompt_id {
        row("prompt_id", prompt);
    }
    if let Some(draft) = &view.draft {
        row("draft", draft);
    }
    for line in &view.evidence {
        row("evidence", line);
    }
    text
}

fn daemon_text(info: &DaemonInfo) -> String {
    let mut text = format!(
        "pid      {}\nversion  {} (protocol {})\nuptime   {}\nsocket   {}\nsessions {}\npanes    {} ({} running)\nstate    {}",
        info.pid,
        info.version,
        info.protocol_version,
        human_duration(now_ms().saturating_sub(info.started_at_ms)),
        match info.socket_why.is_empty() {
            true => info.socket.clone(),
            false => format!("{} ({})", info.socket, info.socket_why),
        },
        info.sessions,
        info.panes,
        info.running_panes,
        if info.state_path.is_empty() { "not persisted" } else { &info.state_path },
    );
    if info.unpersisted_writes > 0 {
        text.push_str(&format!(" ({} records not written)", info.unpersisted_writes));
    }
    text.push_str(&format!(
        "\nclients  {:.1} MiB held of a {} MiB budget",
        info.client_memory_used as f64 / (1 << 20) as f64,
        info.client_memory_limit >> 20
    ));
    if !info.recovery.is_empty() {
        text.push_str(&format!("\nstart    {}", info.recovery));
    }
    text
}

/// Left-aligned columns separated by two spaces.
fn table(header: &[&str], rows: Vec<Vec<String>>) -> String {
    // Names, titles and purposes may hold anything a program or client chose;
    // none of it reaches the terminal as a control character.
    let rows: Vec<Vec<String>> = rows
        .into_iter()
        .map(|row| row.into_iter().map(|c| escape_for_display(&c).into_owned()).collect())
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<String>| {
        let padded: Vec<String> = cells.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect();
        padded.join("  ").trim_end().to_string()
    };
    let mut out = vec![line(header.iter().map(|h| h.to_string()).collect())];
    out.extend(rows.into_iter().map(line));
    out.join("\n")
}

const SESSION_HEADER: &[&str] = &["ID", "NAME", "PANES", "CREATED", "CWD"];
const PANE_HEADER: &[&str] = &["ID", "PANE", "TITLE", "STATUS", "PID", "UPTIME", "PURPOSE"];

fn sessions_table(sessions: &[SessionInfo]) -> String {
    if sessions.is_empty() {
        return "no sessions".into();
    }
    table(SESSION_HEADER, sessions_rows(sessions))
}

fn sessions_rows(sessions: &[SessionInfo]) -> Vec<Vec<String>> {
    sessions
        .iter()
        .map(|s| {
            vec![
                short(s.id),
                s.name.clone(),
                format!("{} ({} running)", s.panes, s.running_panes),
                format!("{} ago", human_duration(now_ms().saturating_sub(s.created_at_ms))),
                s.cwd.clone(),
            ]
        })
        .collect()
}

/// `SESSION:INDEX:LINE:TEXT` per match, as `grep -n` across files.
fn grep_text(view: &GrepView) -> String {
    view.matches
        .iter()
        .map(|m| format!("{}:{}:{}", m.label, m.line, escape_for_display(&m.text)))
        .collect::<Vec<_>>()
        .join("\n")
}

fn overview_table(panes: &[OverviewView]) -> String {
    if panes.is_empty() {
        return "no panes".into();
    }
    const HEADER: &[&str] = &["ID", "PANE", "STATUS", "AGENT", "STATE", "NEEDS", "FOR", "LAST LINE"];
    let now = now_ms();
    let rows = panes
        .iter()
        .map(|view| {
            let pane = &view.pane;
            let agent = view.agent.as_ref();
            let field = |f: fn(&AgentStateView) -> String| agent.map(f).unwrap_or_else(|| "-".into());
            vec![
                short(&pane.id),
                format!("{}:{}", pane.session, pane.index),
                pane.state.status.clone(),
                field(|a| a.agent.clone().unwrap_or_default()),
                field(|a| a.state.clone()),
                field(|a| a.needs.clone()),
                agent.map_or_else(|| "-".into(), |a| human_duration(now.saturating_sub(a.since))),
                view.last_line.chars().take(60).collect(),
            ]
        })
        .collect();
    table(HEADER, rows)
}

fn panes_table(panes: &[PaneInfo]) -> String {
    if panes.is_empty() {
        return "no panes".into();
    }
    table(PANE_HEADER, panes_rows(panes))
}

fn panes_rows(panes: &[PaneInfo]) -> Vec<Vec<String>> {
    panes
        .iter()
        .map(|p| {
            let exit = p.exit.map(|e| match (e.code, e.signal_name()) {
                (Some(code), _) => code.to_string(),
                (None, Some(sig)) => sig,
                _ => "?".into(),
            });
            vec![
                short(p.id),
                format!("{}:{}", p.session_name, p.index),
                p.title.clone(),
                match (p.state, p.restarts) {
                    (PaneState::Running, 0) => "running".into(),
                    (PaneState::Running, n) => format!("running (restarts {n})"),
                    (PaneState::Exited, _) => format!("exited {}", exit.unwrap_or_default()),
                    (PaneState::Restarting, n) => format!(
                        "restarting ({} exit {}, restarts {n})",
                        p.restart.as_str(),
                        exit.unwrap_or_default()
                    ),
                    (PaneState::Lost, _) => "lost".into(),
                },
                p.pid.to_string(),
                human_duration(views::uptime_ms(p)),
                p.purpose.clone(),
            ]
        })
        .collect()
}
