//! The tmux bridge: inside a bridged pane, `tmux` reaches fugue.
//!
//! A bridged pane gets `TMUX` and `TMUX_PANE` in tmux's format (so agent CLIs
//! that decide from them, like Claude Code's teammates, believe they run in
//! tmux), and a directory holding a `tmux` shim first on its `PATH`: a script
//! in fugued's runtime directory that runs this daemon's `fugue tmux` by
//! absolute path. The caller proves its pane as hook reports do
//! (`FUGUE_PANE` and `FUGUE_PANE_TOKEN`).
//!
//! The bridge is on by default for panes whose program is a known agent CLI,
//! and on or off per pane or session with `FUGUE_TMUX_BRIDGE=1`/`0` in its
//! environment, or for every pane with `fugued --tmux-bridge`. A sandboxed pane
//! never gets it: docs/remote.md promises a sandboxed agent cannot drive fugue.
//!
//! Here too: the ids fugue's tmux gives out (`%N`, `@N`, `$N`), one counter
//! each for the daemon, moved past every id a restored pane holds, so ids stay
//! across a restart and a live upgrade.

use crate::terminal::pty::Launch;
use fugue_protocol::{PaneSize, SessionId, TmuxPlace};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// The variable that turns the bridge on (`1`) or off (`0`) for a pane or session.
pub const BRIDGE_VAR: &str = "FUGUE_TMUX_BRIDGE";

/// Which panes get the bridge when their environment does not say.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum BridgeDefault {
    /// Panes whose program is a known agent CLI.
    #[default]
    Agents,
    /// Every pane (people who run the real tmux in a pane then get fugue's).
    All,
    /// None: only panes that ask (`FUGUE_TMUX_BRIDGE=1`).
    Off,
}

/// Whether `launch` gets the bridge under `default`.
pub fn wants_bridge(launch: &Launch, default: BridgeDefault) -> bool {
    if crate::agent::detect::is_sandboxed(&launch.display_command) {
        return false;
    }
    let asked = launch
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == BRIDGE_VAR)
        .map(|(_, v)| v.as_str());
    match asked {
        Some("1") => true,
        Some("0") => false,
        _ => match default {
            BridgeDefault::All => true,
            BridgeDefault::Off => false,
            BridgeDefault::Agents => crate::agent::detect_kind(&launch.display_command, &[]).is_some(),
        },
    }
}

/// The ids fugue's tmux hands out, and the `$N` of each tmux session name.
#[derive(Clone, Default)]
pub struct Ids {
    inner: Arc<Mutex<IdState>>,
    /// Where the bridge's shim and `TMUX` paths are (in the runtime directory).
    bridge_dir: Option<Arc<PathBuf>>,
}

#[derive(Default)]
struct IdState {
    next_pane: u32,
    next_window: u32,
    next_session: u32,
    /// (fugue session, server, tmux session name) -> `$N`.
    sessions: HashMap<(SessionId, String, String), u32>,
    /// Look-only options set on a server (`set-option`), as set: a server's
    /// options go with the daemon (they change nothing fugue shows).
    options: HashMap<(SessionId, String), BTreeMap<String, String>>,
}

/// Options recorded in all, names and values bounded: what a caller can make
/// the daemon hold with `set-option`.
pub const MAX_OPTIONS: usize = 4096;
pub const MAX_OPTION_NAME: usize = 64;
pub const MAX_OPTION_VALUE: usize = 1024;

fn lock(ids: &Ids) -> std::sync::MutexGuard<'_, IdState> {
    ids.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Ids {
    /// Ids for a daemon whose runtime directory is `runtime`.
    pub fn for_runtime(runtime: Option<&Path>) -> Self {
        Self {
            bridge_dir: runtime.map(|r| Arc::new(shim_dir(r))),
            ..Self::default()
        }
    }

    /// The server label a `-S PATH` names: a bridged pane's `TMUX` holds
    /// `BRIDGE_DIR/LABEL` (and programs pass it back as `-S`, as Claude Code
    /// does); any other path is a label of its own.
    pub fn server_of_path(&self, path: &str) -> String {
        let label = self
            .bridge_dir
            .as_deref()
            .and_then(|dir| Path::new(path).strip_prefix(dir).ok())
            .and_then(|rest| rest.to_str())
            .filter(|rest| !rest.is_empty() && !rest.contains('/'));
        label.unwrap_or(path).to_string()
    }

    pub fn next_pane(&self) -> u32 {
        let mut state = lock(self);
        let id = state.next_pane;
        state.next_pane = id.saturating_add(1);
        id
    }

    pub fn next_window(&self) -> u32 {
        let mut state = lock(self);
        let id = state.next_window;
        state.next_window = id.saturating_add(1);
        id
    }

    /// The `$N` of tmux session `name` of `server` in fugue session `session`:
    /// the one it has, or a new one.
    pub fn session(&self, session: SessionId, server: &str, name: &str) -> u32 {
        let mut state = lock(self);
        let key = (session, server.to_string(), name.to_string());
        if let Some(id) = state.sessions.get(&key) {
            return *id;
        }
        let id = state.next_session;
        state.next_session = id.saturating_add(1);
        state.sessions.insert(key, id);
        id
    }

    /// A tmux session was renamed: its `$N` goes with its new name.
    pub fn rename_session(&self, session: SessionId, server: &str, from: &str, to: &str) {
        let mut state = lock(self);
        if let Some(id) = state.sessions.remove(&(session, server.to_string(), from.to_string())) {
            state.sessions.insert((session, server.to_string(), to.to_string()), id);
        }
    }

    /// Records `name = value` on a server (`None`: unsets it).
    pub fn set_option(&self, server: (SessionId, &str), name: &str, value: Option<&str>) -> Result<(), String> {
        if name.len() > MAX_OPTION_NAME || value.is_some_and(|v| v.len() > MAX_OPTION_VALUE) {
            return Err(format!(
                "option names are at most {MAX_OPTION_NAME} bytes and values {MAX_OPTION_VALUE}"
            ));
        }
        let mut state = lock(self);
        let total: usize = state.options.values().map(BTreeMap::len).sum();
        let key = (server.0, server.1.to_string());
        match value {
            None => {
                if let Some(options) = state.options.get_mut(&key) {
                    options.remove(name);
                }
            }
            Some(value) => {
                let options = state.options.entry(key).or_default();
                if !options.contains_key(name) && total >= MAX_OPTIONS {
                    return Err(format!("{MAX_OPTIONS} options are recorded already; unset some (-u)"));
                }
                options.insert(name.to_string(), value.to_string());
            }
        }
        Ok(())
    }

    /// The options recorded on a server.
    pub fn options(&self, server: (SessionId, &str)) -> BTreeMap<String, String> {
        lock(self)
            .options
            .get(&(server.0, server.1.to_string()))
            .cloned()
            .unwrap_or_default()
    }

    /// A pane came back with `place`: no id it holds is handed out again.
    pub fn observe(&self, session: SessionId, place: &TmuxPlace) {
        let mut state = lock(self);
        state.next_pane = state.next_pane.max(place.pane_id.saturating_add(1));
        state.next_window = state.next_window.max(place.window_id.saturating_add(1));
        state.next_session = state.next_session.max(place.session_id.saturating_add(1));
        state
            .sessions
            .entry((session, place.server.clone(), place.session.clone()))
            .or_insert(place.session_id);
    }
}

/// The server label of a pane fugue started with the bridge on.
pub const DEFAULT_SERVER: &str = "default";

/// A tmux session name for `name` (a fugue session's): tmux refuses `:` and
/// `.` in one, fugue whitespace; both become `_`.
pub fn session_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c == ':' || c == '.' || c.is_whitespace() {
                '_'
            } else {
                c
            }
        })
        .collect()
}

/// The place of a pane fugue starts with the bridge on: a window of its own
/// in the tmux session named after its fugue session.
pub fn root_place(ids: &Ids, session: SessionId, session_name_: &str, title: &str, size: PaneSize) -> TmuxPlace {
    let tmux_session = session_name(session_name_);
    TmuxPlace {
        server: DEFAULT_SERVER.into(),
        session_id: ids.session(session, DEFAULT_SERVER, &tmux_session),
        session: tmux_session,
        window_id: ids.next_window(),
        window_name: window_name(title),
        layout: "tiled".into(),
        window_size: size,
        main_percent: None,
        pane_id: ids.next_pane(),
        made_by_tmux: false,
        parent: None,
        parent_exited: false,
    }
}

/// A window name from a title or command: its first word's file name.
pub fn window_name(text: &str) -> String {
    let first = text.split_whitespace().next().unwrap_or("");
    let name = first.rsplit('/').next().unwrap_or(first);
    let name = fugue_protocol::limits::clean_label(name, 64);
    if name.is_empty() {
        "shell".into()
    } else {
        name
    }
}

/// The directory the shim lives in, in the daemon's runtime directory.
fn shim_dir(runtime: &Path) -> PathBuf {
    runtime.join("tmux-bridge")
}

/// Writes the `tmux` shim once per daemon; `None` when there is no `fugue`
/// beside this daemon or the file cannot be written (bridged panes then get no
/// shim, and the log says why).
fn shim(runtime: &Path) -> Option<&'static Path> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        let fugue = std::env::current_exe().ok()?.with_file_name("fugue");
        if !fugue.is_file() {
            tracing::warn!(path = %fugue.display(), "no fugue binary beside fugued; bridged panes get no tmux shim");
            return None;
        }
        let dir = shim_dir(runtime);
        let quoted = shlex::try_quote(&fugue.display().to_string()).ok()?.into_owned();
        let text =
            format!("#!/bin/sh\n# fugue's tmux: what this pane's programs run as `tmux`.\nexec {quoted} tmux \"$@\"\n");
        let written = (|| {
            use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
            std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir)?;
            let partial = dir.join(format!(".tmux.{}", std::process::id()));
            std::fs::write(&partial, &text)?;
            std::fs::set_permissions(&partial, std::fs::Permissions::from_mode(0o700))?;
            std::fs::rename(&partial, dir.join("tmux"))
        })();
        match written {
            Ok(()) => Some(dir),
            Err(err) => {
                tracing::warn!(%err, dir = %dir.display(), "cannot write the tmux shim; bridged panes get none");
                None
            }
        }
    })
    .as_deref()
}

/// `TMUX` for a pane of `place`: tmux's `SOCKET,PID,SESSION` with a socket
/// path that is a label only (nothing is made there).
pub fn tmux_var(runtime: &Path, place: &TmuxPlace) -> String {
    let label: String = place
        .server
        .chars()
        .map(|c| if c == '/' || c == ',' { '_' } else { c })
        .collect();
    format!(
        "{},{},{}",
        shim_dir(runtime).join(label).display(),
        std::process::id(),
        place.session_id
    )
}

/// What a bridged pane's process gets: `TMUX`, `TMUX_PANE` and the shim first
/// on `PATH` (after the launch's own `PATH`, or the daemon's).
pub fn bridge_env(runtime: &Path, place: &TmuxPlace, launch: &Launch) -> Vec<(String, String)> {
    let mut env = vec![
        ("TMUX".to_string(), tmux_var(runtime, place)),
        ("TMUX_PANE".to_string(), format!("%{}", place.pane_id)),
    ];
    if let Some(dir) = shim(runtime) {
        let path = launch
            .env
            .iter()
            .rev()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var("PATH").ok())
            .unwrap_or_default();
        env.push(("PATH".to_string(), format!("{}:{path}", dir.display())));
    }
    env
}

/// How a command line given to fugue's tmux (after `--` in `split-window`,
/// `respawn-pane`, ...) starts. tmux runs one word through `sh -c`, several as
/// they are; fugue starts a simple line directly (`[cd DIR &&] [exec] [env]
/// [VAR=VALUE ...] PROGRAM ARGS...`, with no other shell syntax), so an agent
/// CLI started this way is known by its command line and gets its hooks as if
/// started directly. Anything else goes through `sh -c`, as in tmux.
#[derive(Debug, PartialEq, Eq)]
pub struct DirectLaunch {
    pub program: String,
    pub args: Vec<String>,
    pub cwd: Option<String>,
    pub env: Vec<(String, String)>,
}

fn is_shell(program: &str) -> bool {
    matches!(program.rsplit('/').next(), Some("sh" | "bash" | "zsh" | "dash"))
}

/// Whether `text` holds shell syntax beyond words and quotes: what only a
/// shell can run as meant.
fn has_shell_syntax(text: &str) -> bool {
    let mut chars = text.chars();
    let (mut single, mut double) = (false, false);
    while let Some(c) = chars.next() {
        match c {
            '\'' if !double => single = !single,
            _ if single => {}
            '"' => double = !double,
            '\\' => {
                chars.next();
            }
            '$' | '`' => return true,
            _ if double => {}
            '|' | '&' | ';' | '<' | '>' | '(' | ')' | '*' | '?' | '[' | ']' | '{' | '}' | '~' | '#' | '\n' | '!' => {
                return true
            }
            _ => {}
        }
    }
    single || double
}

/// `cd DIR && REST` split into the directory and the rest; `(None, line)` without it.
fn split_cd(line: &str) -> Option<(Option<String>, &str)> {
    let trimmed = line.trim_start();
    if !trimmed.starts_with("cd ") {
        return Some((None, line));
    }
    let at = trimmed.find("&&")?;
    let (cd, rest) = (&trimmed[..at], &trimmed[at + 2..]);
    if has_shell_syntax(cd) {
        return None;
    }
    match shlex::split(cd)?.as_slice() {
        [_, dir] if dir.starts_with('/') => Some((Some(dir.clone()), rest)),
        _ => None,
    }
}

fn is_assignment(word: &str) -> Option<(String, String)> {
    let (name, value) = word.split_once('=')?;
    let valid = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then(|| (name.to_string(), value.to_string()))
}

/// The direct launch of a tmux command line, or `None` when it needs a shell.
pub fn direct_launch(args: &[String]) -> Option<DirectLaunch> {
    let line = match args {
        [] => return None,
        [one] => one.as_str(),
        [shell, flag, line] if is_shell(shell) && (flag == "-c" || flag == "-lc") => line.as_str(),
        [program, rest @ ..] => {
            return Some(DirectLaunch {
                program: program.clone(),
                args: rest.to_vec(),
                cwd: None,
                env: Vec::new(),
            })
        }
    };
    let (cwd, rest) = split_cd(line)?;
    if has_shell_syntax(rest) {
        return None;
    }
    let mut words = shlex::split(rest)?.into_iter().peekable();
    let mut env = Vec::new();
    while let Some(word) = words.peek() {
        if word == "exec" || word == "env" {
            words.next();
        } else if let Some(var) = is_assignment(word) {
            env.push(var);
            words.next();
        } else {
            break;
        }
    }
    let program = words.next()?;
    Some(DirectLaunch {
        program,
        args: words.collect(),
        cwd,
        env,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        vec![text.to_string()]
    }

    #[test]
    fn simple_command_lines_start_directly() {
        let launch = direct_launch(&words(
            "cd '/work/a b' && env A=1 B='x y' /usr/bin/claude --agent-id lead@team",
        ))
        .unwrap();
        assert_eq!(launch.program, "/usr/bin/claude");
        assert_eq!(launch.args, ["--agent-id", "lead@team"]);
        assert_eq!(launch.cwd.as_deref(), Some("/work/a b"));
        assert_eq!(launch.env, [("A".into(), "1".into()), ("B".into(), "x y".into())]);
        let cat = direct_launch(&words("cat")).unwrap();
        assert_eq!((cat.program.as_str(), cat.args.len()), ("cat", 0));
        let argv: Vec<String> = ["sh", "-c", "exec top -b"].map(String::from).to_vec();
        assert_eq!(direct_launch(&argv).unwrap().program, "top");
        let argv: Vec<String> = ["printf", "%s;", "$HOME"].map(String::from).to_vec();
        assert_eq!(
            direct_launch(&argv).unwrap().args,
            ["%s;", "$HOME"],
            "argv is taken as it is"
        );
    }

    #[test]
    fn shell_syntax_goes_through_a_shell() {
        for line in [
            "echo $HOME",
            "a | b",
            "a; b",
            "a && b",
            "ls *.rs",
            "echo `id`",
            "cd rel && x",
            "x > f",
            "echo 'open",
            "cd /a && b || c",
        ] {
            assert_eq!(direct_launch(&words(line)), None, "{line}");
        }
        assert!(
            direct_launch(&words("echo '$HOME; a|b'")).is_some(),
            "quoted syntax is a word"
        );
    }

    #[test]
    fn ids_move_past_what_comes_back_and_sessions_keep_theirs() {
        let ids = Ids::default();
        let session = SessionId::new();
        let place = TmuxPlace {
            server: "default".into(),
            session: "work".into(),
            session_id: 4,
            window_id: 7,
            pane_id: 9,
            ..Default::default()
        };
        ids.observe(session, &place);
        assert_eq!(ids.next_pane(), 10);
        assert_eq!(ids.next_window(), 8);
        assert_eq!(ids.session(session, "default", "work"), 4);
        assert_eq!(ids.session(session, "default", "other"), 5);
        ids.rename_session(session, "default", "other", "renamed");
        assert_eq!(ids.session(session, "default", "renamed"), 5);
    }

    #[test]
    fn the_path_in_tmux_names_the_panes_own_server() {
        let ids = Ids::for_runtime(Some(Path::new("/run/fugue")));
        let place = TmuxPlace {
            server: "default".into(),
            ..Default::default()
        };
        let socket = tmux_var(Path::new("/run/fugue"), &place);
        let path = socket.split(',').next().unwrap();
        assert_eq!(ids.server_of_path(path), "default");
        assert_eq!(ids.server_of_path("/tmp/tmux-0/default"), "/tmp/tmux-0/default");
        assert_eq!(
            ids.server_of_path("/run/fugue/tmux-bridge/a/b"),
            "/run/fugue/tmux-bridge/a/b"
        );
    }

    fn launch(command: &[&str], env: &[(&str, &str)]) -> Launch {
        Launch {
            program: PathBuf::from(command[0]),
            args: command[1..].iter().map(|a| a.to_string()).collect(),
            env: env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            cwd: PathBuf::from("/"),
            size: PaneSize { cols: 80, rows: 24 },
            typed_line: None,
            display_command: command.iter().map(|a| a.to_string()).collect(),
        }
    }

    #[test]
    fn agents_get_the_bridge_others_ask_and_a_sandbox_never() {
        let claude = launch(&["claude"], &[]);
        assert!(wants_bridge(&claude, BridgeDefault::Agents));
        assert!(!wants_bridge(
            &launch(&["claude"], &[(BRIDGE_VAR, "0")]),
            BridgeDefault::Agents
        ));
        assert!(!wants_bridge(&launch(&["bash"], &[]), BridgeDefault::Agents));
        assert!(wants_bridge(
            &launch(&["bash"], &[(BRIDGE_VAR, "1")]),
            BridgeDefault::Agents
        ));
        assert!(wants_bridge(&launch(&["bash"], &[]), BridgeDefault::All));
        assert!(!wants_bridge(&claude, BridgeDefault::Off));
        // A sandboxed agent never, whatever it or the daemon asks.
        let sandboxed = ["fugue", "sandbox-run", "--engine", "docker", "--", "claude"];
        for default in [BridgeDefault::Agents, BridgeDefault::All] {
            assert!(!wants_bridge(&launch(&sandboxed, &[(BRIDGE_VAR, "1")]), default));
        }
    }

    #[test]
    fn names_tmux_refuses_are_mapped() {
        assert_eq!(session_name("a.b:c d"), "a_b_c_d");
        assert_eq!(window_name("/usr/bin/claude --x"), "claude");
        assert_eq!(window_name(""), "shell");
    }
}
