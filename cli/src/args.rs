//! The command line as clap reads it, and the checks that turn its strings into
//! the protocol's typed values. Nothing here talks to a daemon or prints:
//! `commands` acts on what this parses, `render` shows what comes back.

use clap::{Args, Parser, Subcommand};
use fugue_client::protocol::{EnvVar, PaneSize, RestartPolicy, SpawnSpec, WaitUntil};
use fugue_client::ClientError;
use std::path::PathBuf;
use std::time::Duration;

/// The session `fugue` alone and `fugue run` without `-s` use.
pub const DEFAULT_SESSION: &str = "default";

/// `fugue`: a terminal supervisor for AI agents and the people who work beside them.
///
/// Targets: a session is a name, a full UUID or a unique UUID prefix (4+ hex digits);
/// a pane is a full UUID, a unique prefix, or SESSION:INDEX / SESSION:TITLE.
#[derive(Parser, Debug)]
#[command(name = "fugue", version, propagate_version = true)]
pub struct Cli {
    /// Socket of the daemon (default: $FUGUE_SOCKET, $XDG_RUNTIME_DIR/fugue/fugue.sock, /tmp/fugue-$UID/fugue.sock).
    #[arg(long, global = true)]
    pub socket: Option<PathBuf>,
    /// Print machine-readable JSON.
    #[arg(long, global = true)]
    pub json: bool,
    /// The daemon elsewhere (needs fugue there): over ssh, a name from
    /// $XDG_CONFIG_HOME/fugue/hosts.toml or [user@]host[:port]; in a container,
    /// docker://CONTAINER or podman://CONTAINER; in a pod,
    /// k8s://[CONTEXT/]NAMESPACE/POD[:CONTAINER]; or exec:COMMAND, a command
    /// whose stdin and stdout reach `fugue proxy`.
    #[arg(long, global = true, env = "FUGUE_HOST", value_name = "HOST")]
    pub host: Option<String>,
    /// Without a command: a new shell in the default session, attached (the
    /// session is created if needed), as `tmux` alone does.
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    #[command(flatten)]
    Sessions(SessionCommand),
    #[command(flatten)]
    Panes(PaneCommand),
    #[command(flatten)]
    Io(IoCommand),
    #[command(flatten)]
    Wait(WaitCommand),
    #[command(flatten)]
    Agents(AgentCommand),
    #[command(flatten)]
    Worktrees(WorktreeCommand),
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
    /// Run a tmux command line on fugue's panes (`fugue tmux new-session -d -s
    /// app`, `split-window`, `send-keys`, `capture-pane -p`, ...): what a
    /// bridged pane's programs run as `tmux`. The commands and flags it takes
    /// are in docs/tmux.md.
    #[command(disable_help_flag = true, disable_version_flag = true)]
    Tmux {
        /// What follows `tmux`: its global options (-L, -S, -V), then
        /// commands with their flags, separated by `;`.
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
    /// Qwen Code see docs/agents.md.
    AgentEvent {
        /// The agent running the hook: claude, codex, gemini or qwen.
        #[arg(long)]
        agent: Option<String>,
    },
    /// The fleet: the daemons the hosts file's [[fleet]] sources find (running
    /// containers with a label; its hosts), where each runs, and whether it
    /// answers (its version, sessions and panes), asked 32 at a time, each
    /// within 10 s, starting no daemon. See docs/remote.md, "A fleet".
    Fleet {
        /// Then follow the engines' events: a line for each endpoint that
        /// starts or stops, until interrupted.
        #[arg(long)]
        watch: bool,
    },
    /// Run a pane's program in a container of its own: what `run --sandbox`
    /// makes the pane run (inside a fugue pane only).
    #[command(name = "sandbox-run", hide = true)]
    SandboxRun(SandboxRunArgs),
}

/// `fugue sandbox-run`, as `fugue_client::sandbox::Sandbox::wrap` writes it.
#[derive(Args, Debug)]
pub struct SandboxRunArgs {
    #[arg(long, value_parser = ["docker", "podman"])]
    pub engine: String,
    #[arg(long)]
    pub image: String,
    #[arg(long, value_parser = fugue_client::sandbox::Network::parse)]
    pub network: fugue_client::sandbox::Network,
    #[arg(long)]
    pub cpus: Option<String>,
    #[arg(long)]
    pub memory: Option<String>,
    #[arg(long)]
    pub pass_env: Vec<String>,
    #[arg(last = true)]
    pub program: Vec<String>,
}

/// Sessions: create, list, rename, kill.
#[derive(Subcommand, Debug)]
pub enum SessionCommand {
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
        /// This machine's and every daemon of the fleet (`fugue fleet`).
        #[arg(long, conflicts_with = "all_hosts")]
        fleet: bool,
    },
    /// Rename a session.
    RenameSession { target: String, name: String },
    /// Kill a session and all its panes.
    KillSession { target: String },
}

/// Panes: start, list, show, arrange, signal, remove.
#[derive(Subcommand, Debug)]
pub enum PaneCommand {
    /// Start a command in a new pane; prints the pane id.
    Run(Box<RunArgs>),
    /// List panes of one session, or of all.
    Panes {
        session: Option<String>,
        /// This machine's and every host's in hosts.toml, with a HOST column.
        #[arg(long)]
        all_hosts: bool,
        /// This machine's and every daemon of the fleet (`fugue fleet`).
        #[arg(long, conflicts_with = "all_hosts")]
        fleet: bool,
    },
    /// Show one pane.
    Status { pane: String },
    /// Set a pane's title.
    RenamePane { pane: String, title: String },
    /// Reorder a session's panes; name every pane exactly once.
    Reorder {
        session: String,
        #[arg(required = true)]
        panes: Vec<String>,
    },
    /// Resize a pane's terminal.
    Resize {
        pane: String,
        /// COLSxROWS, e.g. 120x40.
        size: String,
    },
    /// Who decides a pane's size with several clients attached: latest (the last to
    /// type or resize), smallest or largest.
    SetSizePolicy { pane: String, policy: String },
    /// Send SIGINT to the pane's foreground process; the shell stays.
    Interrupt { pane: String },
    /// Signal a pane's processes (default TERM, then KILL after the grace period).
    Kill {
        pane: String,
        #[arg(long, short = 's', default_value = "TERM")]
        signal: String,
    },
    /// Remove a pane at once, killing it if it still runs. Its worktree, if it
    /// has one, goes too when it holds no uncommitted or unmerged work; else it
    /// is kept and the reply says what it holds.
    Release {
        pane: String,
        /// Remove the pane's worktree and branch even with work in them.
        #[arg(long)]
        discard: bool,
    },
}

/// Agents' work: the worktrees fugue made, and what a pane changed in its own.
#[derive(Subcommand, Debug)]
pub enum WorktreeCommand {
    /// List the worktrees fugue made: branch, base, commits ahead and behind,
    /// uncommitted files, the pane and its agent's state.
    Worktrees,
    /// What a pane changed in its worktree against the commit it started from,
    /// committed or not (untracked files included).
    Diff {
        pane: String,
        /// Files with lines added and removed, no patch.
        #[arg(long, conflicts_with = "patch")]
        stat: bool,
        /// A git-format patch that `git apply` takes on the base commit:
        /// untracked files, modes and binary files included.
        #[arg(long)]
        patch: bool,
    },
    /// Review what a pane changed in its worktree: the diff opens in $VISUAL or
    /// $EDITOR; each comment written under a line goes to the pane's agent as
    /// one prompt (file, line, the quoted code, the comment), refused while the
    /// agent waits on a dialog or holds a draft.
    Review {
        pane: String,
        /// Send under this idempotency key: a retry sends nothing and prints
        /// the first receipt.
        #[arg(long)]
        key: Option<String>,
    },
    /// Start several agents on one prompt, each in a worktree of its own
    /// (branch fugue/GROUP-KIND-N) with a distinct free $PORT, as group GROUP in
    /// a new session of that name; `fugue compare GROUP` shows them side by side.
    Fanout {
        /// Agent kinds and how many of each: claude:2,codex:1 (at most 12 in all).
        #[arg(long)]
        agents: String,
        /// The commit or ref every worktree starts from (default HEAD).
        #[arg(long, value_name = "REF")]
        base: Option<String>,
        /// Run in each agent's worktree once its turn is done (by `fugue
        /// compare`), with its $PORT; its result shows there.
        #[arg(long, value_name = "CMD")]
        test: Option<String>,
        /// The group's name (default fan- and 6 hex digits).
        #[arg(long)]
        name: Option<String>,
        /// The repository (default: the current directory's).
        #[arg(long)]
        cwd: Option<PathBuf>,
        /// How to start an agent kind (default: by its own name); the prompt
        /// is added as the last argument.
        #[arg(long = "agent-command", value_name = "KIND=CMD")]
        agent_commands: Vec<String>,
        prompt: String,
    },
    /// A fan-out group side by side: each agent's state, diff stat, port and,
    /// once it is done, its worktree's test result (run again only when the
    /// worktree changed). With no GROUP, the groups.
    Compare {
        group: Option<String>,
        /// Do not run the group's test.
        #[arg(long)]
        no_test: bool,
        /// Merge this member (its worktree's name or pane) into the base, then
        /// offer to discard the others.
        #[arg(long, value_name = "MEMBER", requires = "group")]
        pick: Option<String>,
        /// With --pick: one squashed commit.
        #[arg(long, requires = "pick")]
        squash: bool,
        /// With --pick: discard the others without asking.
        #[arg(long, requires = "pick")]
        yes: bool,
    },
    /// A repository's own worktree commands (.fugue/worktree.toml, run when
    /// fugue makes or removes a worktree of it): trust them as the file reads
    /// now, or take the trust back.
    #[command(subcommand)]
    Worktree(TrustCommand),
    /// Merge a worktree's branch into its base branch (or --into): refused, with
    /// nothing changed, while it has uncommitted files or the merge would
    /// conflict (the files named). WORKTREE is its name or its pane.
    Merge {
        worktree: String,
        /// One commit of all the branch's changes instead of a merge commit.
        #[arg(long)]
        squash: bool,
        /// The branch to merge into (default: the one it started from).
        #[arg(long, value_name = "BRANCH")]
        into: Option<String>,
        /// Commit the worktree's uncommitted files on its branch first (agents
        /// often leave their work uncommitted).
        #[arg(long)]
        commit: bool,
    },
    /// Remove a worktree fugue made and its branch, with whatever work they
    /// hold, after asking (or with --yes). WORKTREE is its name, or the pane
    /// that worked in it; a pane still running there is released first.
    Discard {
        worktree: String,
        /// Do not ask (needed where no terminal can answer).
        #[arg(long)]
        yes: bool,
    },
}

/// Trust in a repository's `.fugue/worktree.toml`.
#[derive(Subcommand, Debug)]
pub enum TrustCommand {
    /// Let the setup and teardown commands of the repository DIR (default: the
    /// current directory's) run, as its .fugue/worktree.toml reads now; a
    /// changed file must be trusted again.
    Trust { dir: Option<PathBuf> },
    /// Stop them running.
    Untrust { dir: Option<PathBuf> },
}

/// A pane's terminal: read, type, capture, search, attach.
#[derive(Subcommand, Debug)]
pub enum IoCommand {
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
    /// Send keys: Enter, Escape, Tab, Backspace, Up, Down, Left, Right, Home, End, PageUp, PageDown, F1-F12, C-a..C-z, M-x, or single characters.
    SendKeys {
        pane: String,
        #[arg(required = true)]
        keys: Vec<String>,
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
        /// Show the whole tmux window the pane is in, its panes side by side
        /// (as TARGET `@N` does): prefix `o` moves the focus, `z` zooms.
        #[arg(long)]
        window: bool,
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
}

/// Waiting on a pane.
#[derive(Subcommand, Debug)]
pub enum WaitCommand {
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
}

/// The agent CLIs in panes: overview, state, permission answers, prompts.
#[derive(Subcommand, Debug)]
pub enum AgentCommand {
    /// Every pane (of one session, or of all) with what its agent CLI is doing,
    /// how long it has been so, and its last line of output; panes whose agent
    /// needs a person first.
    Overview { session: Option<String> },
    /// A live, full-screen overview of every pane (of one session, or of all),
    /// the panes whose agent needs a person first: attach (Enter), jump to the
    /// next pane that needs you (n), approve or deny its prompt after reading it
    /// (a, d), send a prompt (p), interrupt, kill, release, rename, start a pane,
    /// filter (/) and sort (s).
    Top {
        session: Option<String>,
        /// This machine's and every host's in hosts.toml (their panes as
        /// HOST/SESSION:INDEX); a host that cannot be reached says so in its row.
        #[arg(long, conflicts_with = "session")]
        all_hosts: bool,
        /// This machine's and every daemon of the fleet (`fugue fleet`), their
        /// panes as ENDPOINT/SESSION:INDEX.
        #[arg(long, conflicts_with_all = ["session", "all_hosts"])]
        fleet: bool,
    },
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
    /// Start the agent CLI a pane ran again on its own recorded session, in the same
    /// directory (`claude --resume ID`, `codex resume ID`, `gemini --resume ID`), as
    /// a new pane; prints its id. For a pane whose agent ended or was lost (a
    /// daemon restart, a reboot).
    Resume { pane: String },
    /// Put an idle agent to rest: its program ends (its own quit keys, then
    /// signals) and its memory is freed; the pane stays in place, `hibernated`,
    /// with its screen, scrollback and records. A prompt, an attach or `fugue
    /// wake` resumes it there on its recorded session. Refused while the agent is
    /// busy, waits for a person or holds a draft.
    Hibernate { pane: String },
    /// Resume a hibernated agent in its pane, on its recorded session, same
    /// directory and environment; returns once it is ready for a prompt.
    Wake { pane: String },
}

#[derive(Subcommand, Debug)]
pub enum DaemonCommand {
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
pub struct InstallArgs {
    /// Show the files and the commands, change nothing.
    #[arg(long)]
    pub print: bool,
    /// Write (or remove) the files only; do not run systemctl.
    #[arg(long)]
    pub no_enable: bool,
    /// The service manager (fugued runs on Linux: systemd).
    #[arg(long, value_enum)]
    pub manager: Option<crate::login::Manager>,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Session to run in; created if it is the default and does not exist.
    #[arg(short = 's', long, env = "FUGUE_SESSION", default_value = DEFAULT_SESSION)]
    pub session: String,
    #[arg(long)]
    pub title: Option<String>,
    /// What the pane is for, shown in lists.
    #[arg(long)]
    pub purpose: Option<String>,
    /// Absolute or relative directory (default: the session's).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    #[arg(short = 'e', long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// Exec the command directly instead of typing it into an interactive shell.
    #[arg(long)]
    pub no_shell: bool,
    /// Raw output bytes kept (default 1 MiB).
    #[arg(long, value_name = "BYTES")]
    pub limit: Option<u64>,
    /// Terminal size, COLSxROWS (default 120x40).
    #[arg(long)]
    pub size: Option<String>,
    /// Start the process again when it ends: never, on-failure or always (backoff
    /// from 1 s doubling to 60 s; kept across daemon restarts).
    #[arg(long, default_value = "never", value_parser = RestartPolicy::parse)]
    pub restart: RestartPolicy,
    /// Restarts allowed in a row before the pane stays exited.
    #[arg(long, value_name = "N")]
    pub max_restarts: Option<u32>,
    /// Start in a git worktree of its own, on a new branch fugue/NAME (default
    /// NAME: agent- and 8 hex digits), made from the repository of --cwd or the
    /// session's directory, outside the working tree. Uncommitted changes there
    /// are not carried (the command says so).
    #[arg(long, value_name = "NAME", num_args = 0..=1, default_missing_value = "")]
    pub worktree: Option<String>,
    /// The commit or ref the worktree starts from (default: HEAD).
    #[arg(long, value_name = "REF", requires = "worktree")]
    pub base: Option<String>,
    /// Run the command in a new container of IMAGE on this machine's Docker
    /// engine (podman with --engine podman), as a non-root user, with the pane's
    /// directory (or its worktree) mounted read-write and nothing else of this
    /// machine's files. The container is removed when the pane ends. Empty
    /// command: the image's own. Without IMAGE, and for what is not given,
    /// the profile of the agent started (or [default]) in sandbox.toml beside
    /// hosts.toml. See docs/remote.md, "Sandboxed panes".
    #[arg(long, value_name = "IMAGE", num_args = 0..=1, default_missing_value = "")]
    pub sandbox: Option<String>,
    /// The sandbox's network: none (only its own loopback, the default), bridge
    /// (the engine's network, not this machine's loopback) or host (no network
    /// isolation).
    #[arg(long, requires = "sandbox", value_parser = fugue_client::sandbox::Network::parse)]
    pub network: Option<fugue_client::sandbox::Network>,
    /// CPUs the sandbox may use (0.5, 2).
    #[arg(long, requires = "sandbox", value_name = "N")]
    pub cpus: Option<String>,
    /// Memory the sandbox may use (512m, 2g).
    #[arg(long, requires = "sandbox", value_name = "SIZE")]
    pub memory: Option<String>,
    /// The engine that runs the sandbox: docker or podman.
    #[arg(long, requires = "sandbox", value_parser = ["docker", "podman"])]
    pub engine: Option<String>,
    /// The command and its arguments (after --). Empty: just a shell.
    #[arg(last = true)]
    pub command: Vec<String>,
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
    /// waiting_for_permission, waiting_for_answer, busy, idle, starting, unknown, exited, hibernated.
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
    pub fn until(&self) -> Result<Option<WaitUntil>, ClientError> {
        let wait = fugue_client::ops::WaitFor {
            exit: Some(true),
            pattern: self.pattern.clone(),
            on: self.screen.then_some(fugue_client::protocol::MatchOn::Screen),
            idle_ms: self.idle,
            agent_state: self.agent_state.as_deref().map(Into::into),
            needs: self.needs.as_deref().map(Into::into),
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

pub fn invalid(message: String) -> ClientError {
    ClientError::Daemon(fugue_client::protocol::ErrorReply::invalid(message))
}

pub fn absolute(path: PathBuf) -> Result<PathBuf, ClientError> {
    let joined = match path.is_absolute() {
        true => path,
        false => std::env::current_dir()
            .map_err(|e| invalid(format!("cannot read the current directory: {e}")))?
            .join(path),
    };
    // Canonical form when it exists; the daemon reports a missing directory itself.
    Ok(joined.canonicalize().unwrap_or(joined))
}

pub fn parse_env(pairs: &[String]) -> Result<Vec<EnvVar>, ClientError> {
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
pub fn line_number(text: Option<&str>, dash: i64) -> Result<Option<i64>, ClientError> {
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
pub fn parse_timeout(secs: f64) -> Result<Duration, ClientError> {
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

pub fn parse_size(text: &str) -> Result<PaneSize, ClientError> {
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

/// The pane `run` asks for; a relative `--cwd` is made absolute here only
/// for this machine's daemon (see `Context::given_cwd`).
pub fn spawn_spec(ctx: &crate::commands::Context<'_>, args: &RunArgs) -> Result<SpawnSpec, ClientError> {
    let mut spec = SpawnSpec::new(args.session.clone());
    let mut command = args.command.iter();
    spec.command = command.next().cloned();
    spec.args = command.cloned().collect();
    spec.env = parse_env(&args.env)?;
    spec.cwd = args
        .cwd
        .as_deref()
        .map(|cwd| ctx.given_cwd(cwd))
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

#[cfg(test)]
mod tests {
    use super::*;
    use fugue_client::protocol::MatchOn;

    fn parse(line: &str) -> Cli {
        Cli::try_parse_from(line.split_whitespace()).unwrap_or_else(|err| panic!("{line}: {err}"))
    }

    fn message(err: ClientError) -> String {
        err.to_string()
    }

    #[test]
    fn the_command_line_definition_is_consistent() {
        <Cli as clap::CommandFactory>::command().debug_assert();
    }

    #[test]
    fn run_becomes_the_spawn_spec_the_daemon_takes() {
        let cli = parse("fugue run -s work --title t --size 80x24 -e A=1 -e B=x=y --no-shell --restart on-failure --max-restarts 3 --limit 4096 -- ls -l /");
        let Some(Command::Panes(PaneCommand::Run(args))) = &cli.command else {
            panic!("not run: {:?}", cli.command);
        };
        let ctx = crate::commands::Context {
            cli: &cli,
            out: crate::render::Output { json: false },
        };
        let spec = spawn_spec(&ctx, args).unwrap();
        assert_eq!(spec.session, "work");
        assert_eq!(spec.title.as_deref(), Some("t"));
        assert_eq!(spec.size, Some(PaneSize { cols: 80, rows: 24 }));
        assert_eq!(
            spec.env
                .iter()
                .map(|e| (e.name.as_str(), e.value.as_str()))
                .collect::<Vec<_>>(),
            [("A", "1"), ("B", "x=y")]
        );
        assert!(!spec.shell);
        assert_eq!(spec.restart, RestartPolicy::OnFailure);
        assert_eq!(spec.max_restarts, Some(3));
        assert_eq!(spec.output_byte_limit, Some(4096));
        assert_eq!(spec.command.as_deref(), Some("ls"));
        assert_eq!(spec.args, ["-l", "/"]);
    }

    #[test]
    fn global_flags_go_anywhere_and_groups_share_one_namespace() {
        let cli = parse("fugue panes work --json --socket /tmp/s.sock");
        assert!(cli.json);
        assert_eq!(cli.socket.as_deref(), Some(std::path::Path::new("/tmp/s.sock")));
        assert!(matches!(cli.command, Some(Command::Panes(PaneCommand::Panes { .. }))));
        assert!(matches!(
            parse("fugue new s").command,
            Some(Command::Sessions(SessionCommand::NewSession { .. }))
        ));
        assert!(matches!(
            parse("fugue read p --raw").command,
            Some(Command::Io(IoCommand::Read { raw: true, .. }))
        ));
        assert!(matches!(
            parse("fugue approve p id").command,
            Some(Command::Agents(AgentCommand::Approve { .. }))
        ));
        assert!(matches!(
            parse("fugue daemon status").command,
            Some(Command::Daemon(DaemonCommand::Status))
        ));
        assert!(parse("fugue").command.is_none());
        assert!(Cli::try_parse_from(["fugue", "no-such-command"]).is_err());
    }

    #[test]
    fn wait_flags_become_conditions_or_the_exit_alone() {
        let until = |line: &str| match parse(line).command {
            Some(Command::Wait(WaitCommand::Wait { until, .. })) => until.until(),
            other => panic!("not wait: {other:?}"),
        };
        assert_eq!(until("fugue wait p").unwrap(), None);
        let screen = until("fugue wait p --pattern ready --screen").unwrap().unwrap();
        assert_eq!((screen.pattern.as_deref(), screen.on), (Some("ready"), MatchOn::Screen));
        assert!(screen.exit);
        let agent = until("fugue wait p --agent-state idle|busy --idle 500")
            .unwrap()
            .unwrap();
        assert_eq!((agent.agent_states.len(), agent.idle_ms), (2, Some(500)));
        let bad = message(until("fugue wait p --agent-state sleepy").unwrap_err());
        assert!(bad.contains("sleepy"), "{bad}");
        assert!(
            Cli::try_parse_from(["fugue", "wait", "p", "--screen"]).is_err(),
            "--screen needs --pattern"
        );
    }

    #[test]
    fn bad_values_are_refused_with_what_was_wrong() {
        for (size, ok) in [
            ("120x40", true),
            ("80X24", true),
            ("0x10", false),
            ("wide", false),
            ("1x", false),
        ] {
            assert_eq!(parse_size(size).is_ok(), ok, "{size}");
        }
        assert!(message(parse_size("0x10").unwrap_err()).contains("use COLSxROWS"));
        assert_eq!(parse_timeout(1.5).unwrap(), Duration::from_millis(1500));
        assert!(message(parse_timeout(-1.0).unwrap_err()).contains("from 0 to"));
        assert!(message(parse_timeout(f64::NAN).unwrap_err()).contains("from 0 to"));
        assert!(message(parse_timeout(1e12).unwrap_err()).contains("exceeds the maximum"));
        assert_eq!(line_number(Some("-"), i64::MIN).unwrap(), Some(i64::MIN));
        assert_eq!(line_number(Some("-5"), 0).unwrap(), Some(-5));
        assert!(message(line_number(Some("top"), 0).unwrap_err()).contains("bad line number 'top'"));
        assert!(message(parse_env(&["=x".into()]).unwrap_err()).contains("use KEY=VALUE"));
    }
}
