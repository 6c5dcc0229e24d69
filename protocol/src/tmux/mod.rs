//! fugue's tmux command line (`fugue tmux ARGS...`, and the `tmux` an agent
//! finds first on its PATH in a bridged pane): the global options, the commands
//! fugue's tmux answers with the flags each takes, `;` chaining and tmux's
//! target grammar. Parsed here, as plain data; the daemon runs it
//! (`daemon/src/tmux/`).
//!
//! One table ([`COMMANDS`]) says what each command takes: its flags as tmux's
//! own `getopt` templates write them (`"dPs:n:"`: `-s` and `-n` take a value),
//! the flags accepted only as hints (styles, focus, client options: they change
//! nothing fugue shows), and its arguments. docs/tmux.md is written from it.
//! A flag or command outside it is refused with one line naming what is
//! supported, never ignored.

pub mod format;

use crate::error::ErrorReply;
use crate::limits::Validate;
use crate::requests as rq;

/// What `tmux -V` answers: a version inside the range libtmux 0.62 accepts
/// (3.2a to 3.7), whose format variables fugue's tmux expands.
pub const VERSION: &str = "3.6a";

/// Arguments one call may carry, and bytes in all of them.
pub const MAX_ARGS: usize = 1024;
pub const MAX_ARGS_BYTES: usize = 256 * 1024;
/// Commands one call may chain with `;`.
pub const MAX_COMMANDS: usize = 64;
/// Environment variables a call may carry (the caller's, for the panes it makes).
pub const MAX_CALL_ENV: usize = 1024;

/// Which tmux server a call addresses: a label, never a file (`-L NAME`, `-S PATH`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Server {
    /// Neither `-L` nor `-S`: the caller's own (its pane's, or `default`).
    Default,
    Named(String),
    Path(String),
}

/// One parsed call: its server and its commands, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invocation {
    pub server: Server,
    /// `-V`: print the version and nothing else.
    pub version: bool,
    pub commands: Vec<Command>,
}

/// One command of a call, with its flags in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    pub spec: &'static CommandSpec,
    pub flags: Vec<(char, Option<String>)>,
    pub args: Vec<String>,
}

impl Command {
    pub fn name(&self) -> &'static str {
        self.spec.name
    }

    /// Whether flag `-c` was given.
    pub fn has(&self, c: char) -> bool {
        self.flags.iter().any(|(f, _)| *f == c)
    }

    /// The value of flag `-c`: the last one given, as tmux takes it.
    pub fn value(&self, c: char) -> Option<&str> {
        self.flags
            .iter()
            .rev()
            .find(|(f, _)| *f == c)
            .and_then(|(_, v)| v.as_deref())
    }

    /// Every value of a flag that may repeat (`-e VAR=VALUE`).
    pub fn values(&self, c: char) -> impl Iterator<Item = &str> {
        self.flags
            .iter()
            .filter(move |(f, _)| *f == c)
            .filter_map(|(_, v)| v.as_deref())
    }
}

/// What one command takes.
#[derive(Debug, PartialEq, Eq)]
pub struct CommandSpec {
    pub name: &'static str,
    pub alias: &'static str,
    /// Every flag it accepts, as a getopt template (`x:` takes a value).
    pub template: &'static str,
    /// The flags of `template` accepted as hints only: they change nothing
    /// fugue shows (styles, focus, a client's options).
    pub hints: &'static str,
    pub min_args: usize,
    pub max_args: usize,
    /// What fugue does with it, for docs/tmux.md.
    pub does: &'static str,
}

const ANY: usize = usize::MAX;

macro_rules! command {
    ($name:literal, $alias:literal, $template:literal, $hints:literal, $min:expr, $max:expr, $does:literal) => {
        CommandSpec {
            name: $name,
            alias: $alias,
            template: $template,
            hints: $hints,
            min_args: $min,
            max_args: $max,
            does: $does,
        }
    };
}

/// Every command fugue's tmux answers. The templates are tmux 3.6's, less the
/// flags fugue refuses.
pub static COMMANDS: &[CommandSpec] = &[
    command!("new-session", "new", "Ac:dDe:EF:n:Ps:t:x:Xy:", "ADEXt", 0, ANY, "a pane in a new window of a new tmux session; `-A` with an existing name does nothing"),
    command!("new-window", "neww", "abc:de:F:kn:PSt:", "abkS", 0, ANY, "a pane in a new window"),
    command!("split-window", "splitw", "bc:de:fF:hl:p:Pt:vZ", "bfZ", 0, ANY, "a pane beside the target, in its window; the target gives up the room (`-l`/`-p`, else half)"),
    command!("list-sessions", "ls", "F:f:", "", 0, 0, "the server's tmux sessions"),
    command!("list-windows", "lsw", "aF:f:t:", "", 0, 0, "a session's windows (`-a`: every session's)"),
    command!("list-panes", "lsp", "asF:f:t:", "", 0, 0, "a window's panes (`-s`: the session's, `-a`: all)"),
    command!("display-message", "display", "aCc:d:INpt:F:v", "aCcdINv", 0, 1, "the format expanded for the target, on standard output"),
    command!("has-session", "has", "t:", "", 0, 0, "exit 0 when the session exists, else 1 and `can't find session: NAME`"),
    command!("kill-pane", "killp", "at:", "", 0, 0, "ends a pane made through tmux (`-a`: every other one of its window)"),
    command!("kill-window", "killw", "at:", "", 0, 0, "ends a window's panes made through tmux"),
    command!("kill-session", "", "aCt:", "C", 0, 0, "ends a session's panes made through tmux"),
    command!("kill-server", "", "", "", 0, 0, "ends every pane made through tmux on this server, and nothing else"),
    command!("select-pane", "selectp", "DdegLlMmP:RT:t:UZ", "DdegLlMmPRUZ", 0, 0, "`-T` sets the pane's title"),
    command!("select-window", "selectw", "lnpTt:", "lnpT", 0, 0, "accepted; fugue has no current window to move"),
    command!("select-layout", "selectl", "Enopt:", "Enop", 0, 1, "the window's layout: tiled, main-vertical, main-horizontal, even-horizontal, even-vertical"),
    command!("resize-pane", "resizep", "DLMRTt:Ux:y:Z", "DLMRTUZ", 0, 1, "`-x`/`-y` in cells or percent of the window: the pane's size, and the main pane's share of its layout"),
    command!("respawn-pane", "respawnp", "c:e:kt:", "k", 0, ANY, "a new program in the pane (same `%N`); the old one is ended"),
    command!("rename-window", "renamew", "t:", "", 1, 1, "the window's name"),
    command!("rename-session", "rename", "t:", "", 1, 1, "the tmux session's name"),
    command!("send-keys", "send", "FHlN:Rt:", "FR", 0, ANY, "keys by tmux's names (Enter, C-c, Escape, ...), other words typed as text; `-l` types all as text, `-H` hex bytes"),
    command!("capture-pane", "capturep", "aCeE:JNpPqS:Tt:", "aCNPqT", 0, 0, "the pane's screen (`-S`/`-E` into scrollback, `-e` attributes, `-J` joined); only with `-p`"),
    command!("set-option", "set", "aFgopqst:uUw", "aFgopqsuUw", 1, 2, "accepted and recorded on the server: look-only options (styles, borders, status); `show-options` reads them back"),
    command!("set-window-option", "setw", "aFgoqt:u", "aFgoqu", 1, 2, "as `set-option -w`"),
    command!("show-options", "show", "AgHpqst:vw", "AgHpqsw", 0, 1, "recorded options, with tmux's defaults for `prefix`, `base-index` and a few more; `-v` the value alone"),
    command!("show-window-options", "showw", "gvt:", "g", 0, 1, "as `show-options -w`"),
    command!("start-server", "start", "", "", 0, 0, "nothing: fugued is the server"),
];

/// The spec of command `name` (its name or alias, or a unique prefix of a name,
/// as tmux takes it).
pub fn command_spec(name: &str) -> Option<&'static CommandSpec> {
    if name.is_empty() {
        return None;
    }
    if let Some(spec) = COMMANDS
        .iter()
        .find(|c| c.name == name || (!c.alias.is_empty() && c.alias == name))
    {
        return Some(spec);
    }
    let mut prefixed = COMMANDS.iter().filter(|c| c.name.starts_with(name));
    match (prefixed.next(), prefixed.next()) {
        (Some(one), None) => Some(one),
        _ => None,
    }
}

/// A call fugue's tmux cannot take, with tmux's exit status (1).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ParseError(pub String);

fn error(message: String) -> ParseError {
    ParseError(message)
}

fn supported_commands() -> String {
    COMMANDS.iter().map(|c| c.name).collect::<Vec<_>>().join(", ")
}

/// Parses a call's arguments (what follows `tmux`).
pub fn parse(argv: &[String]) -> Result<Invocation, ParseError> {
    let mut server = Server::Default;
    let mut version = false;
    let mut at = 0;
    while let Some(arg) = argv.get(at) {
        if arg == "--" {
            at += 1;
            break;
        }
        let Some(flags) = arg.strip_prefix('-').filter(|f| !f.is_empty()) else {
            break;
        };
        at += 1;
        for (i, c) in flags.char_indices() {
            match c {
                'L' | 'S' | 'f' | 'T' | 'c' => {
                    let rest = &flags[i + c.len_utf8()..];
                    let value = if rest.is_empty() {
                        let value = argv
                            .get(at)
                            .ok_or_else(|| error(format!("option requires an argument -- {c}")))?;
                        at += 1;
                        value.clone()
                    } else {
                        rest.to_string()
                    };
                    match c {
                        'L' => server = Server::Named(value),
                        'S' => server = Server::Path(value),
                        'c' => {
                            return Err(error(
                                "tmux -c (run a shell command as tmux's shell) is not supported by fugue's tmux"
                                    .into(),
                            ))
                        }
                        // -f (a config file) and -T (terminal features) only
                        // shape a client fugue does not make.
                        _ => {}
                    }
                    break;
                }
                'V' => version = true,
                // UTF-8, colours, verbose logging, no start on a missing server:
                // shapes of a client fugue does not make.
                '2' | 'u' | 'v' | 'l' | 'N' | 'D' => {}
                'C' => {
                    return Err(error(
                        "tmux -C (control mode) is not supported by fugue's tmux; fugue attach, fugue wait and \
fugue events follow panes"
                            .into(),
                    ))
                }
                other => {
                    return Err(error(format!(
                        "unknown option -- {other}; fugue's tmux takes -L NAME, -S PATH, -V (and -2 -u -v -l -N -f -T as hints)"
                    )))
                }
            }
        }
    }
    if version {
        return Ok(Invocation {
            server,
            version,
            commands: Vec::new(),
        });
    }
    let rest = &argv[at..];
    if rest.is_empty() {
        return Err(error(
            "no command: fugue's tmux makes no attached client; run `fugue attach` to watch a pane, or give a command \
(new-session -d, split-window, ...)"
                .into(),
        ));
    }
    let mut commands = Vec::new();
    for words in split_commands(rest) {
        if words.is_empty() {
            continue;
        }
        if commands.len() == MAX_COMMANDS {
            return Err(error(format!("more than {MAX_COMMANDS} commands chained with ';'")));
        }
        commands.push(parse_command(&words)?);
    }
    if commands.is_empty() {
        return Err(error("no command between the ';'".into()));
    }
    Ok(Invocation {
        server,
        version,
        commands,
    })
}

/// The call's words split into commands at `;` (a word of its own, or ending
/// one: `a;` is `a` then a split; `\;` is a literal `;`), as tmux does.
fn split_commands(words: &[String]) -> Vec<Vec<String>> {
    let mut commands = Vec::new();
    let mut current = Vec::new();
    for word in words {
        if word == ";" {
            commands.push(std::mem::take(&mut current));
        } else if let Some(escaped) = word.strip_suffix("\\;") {
            current.push(format!("{escaped};"));
        } else if let Some(ended) = word.strip_suffix(';') {
            current.push(ended.to_string());
            commands.push(std::mem::take(&mut current));
        } else {
            current.push(word.clone());
        }
    }
    commands.push(current);
    commands
}

/// Whether flag `c` of `template` takes a value; `None` when it is not there.
fn takes_value(template: &str, c: char) -> Option<bool> {
    let at = template.find(c).filter(|_| c != ':')?;
    Some(template[at + c.len_utf8()..].starts_with(':'))
}

fn flag_list(template: &str) -> String {
    let mut out = Vec::new();
    let chars: Vec<char> = template.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        if *c == ':' {
            continue;
        }
        out.push(if chars.get(i + 1) == Some(&':') {
            format!("-{c} VALUE")
        } else {
            format!("-{c}")
        });
    }
    if out.is_empty() {
        "no flags".into()
    } else {
        out.join(" ")
    }
}

fn parse_command(words: &[String]) -> Result<Command, ParseError> {
    let name = &words[0];
    let spec = command_spec(name).ok_or_else(|| {
        error(format!(
            "unknown command: {}; fugue's tmux supports {} (docs/tmux.md)",
            crate::limits::escape_for_display(name),
            supported_commands()
        ))
    })?;
    let mut flags = Vec::new();
    let mut at = 1;
    while let Some(word) = words.get(at) {
        if word == "--" {
            at += 1;
            break;
        }
        let Some(cluster) = word.strip_prefix('-').filter(|c| !c.is_empty()) else {
            break;
        };
        at += 1;
        for (i, c) in cluster.char_indices() {
            let Some(valued) = takes_value(spec.template, c) else {
                return Err(error(format!(
                    "{}: -{} is not supported by fugue's tmux; it takes {}",
                    spec.name,
                    crate::limits::escape_for_display(&c.to_string()),
                    flag_list(spec.template)
                )));
            };
            if !valued {
                flags.push((c, None));
                continue;
            }
            let rest = &cluster[i + c.len_utf8()..];
            let value = if rest.is_empty() {
                let value = words
                    .get(at)
                    .ok_or_else(|| error(format!("{}: -{c} needs a value", spec.name)))?;
                at += 1;
                value.clone()
            } else {
                rest.to_string()
            };
            flags.push((c, Some(value)));
            break;
        }
    }
    let args = words[at..].to_vec();
    if args.len() < spec.min_args || args.len() > spec.max_args {
        let wants = match (spec.min_args, spec.max_args) {
            (0, 0) => "no arguments".to_string(),
            (min, ANY) => format!("at least {min}"),
            (min, max) if min == max => format!("{min}"),
            (min, max) => format!("{min} to {max}"),
        };
        return Err(error(format!(
            "{}: {} arguments given, it takes {wants}",
            spec.name,
            args.len()
        )));
    }
    Ok(Command { spec, flags, args })
}

/// A parsed `-t` target, in tmux's grammar.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// `%N`.
    Pane(u32),
    /// `@N`.
    Window(u32),
    /// `$N`.
    Session(u32),
    /// `SESSION`, `SESSION:WINDOW`, `SESSION:WINDOW.PANE`, `:WINDOW`, `.PANE`,
    /// with any part left out meaning the current one.
    Path {
        session: Option<SessionRef>,
        window: Option<WindowRef>,
        pane: Option<PaneRef>,
        /// No `:` was written: a bare word, which names a session first, then a
        /// window of the current session.
        bare: bool,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionRef {
    Id(u32),
    /// A name; `exact` when written `=NAME` (no prefix match).
    Name {
        name: String,
        exact: bool,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WindowRef {
    Id(u32),
    Index(u32),
    Name(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PaneRef {
    Id(u32),
    Index(u32),
}

fn number_after(text: &str, sigil: char) -> Option<u32> {
    text.strip_prefix(sigil)?.parse().ok()
}

/// Parses a `-t` value.
pub fn parse_target(text: &str) -> Result<Target, ParseError> {
    if let Some(id) = number_after(text, '%') {
        return Ok(Target::Pane(id));
    }
    if let Some(id) = number_after(text, '@') {
        return Ok(Target::Window(id));
    }
    if let Some(id) = number_after(text, '$') {
        return Ok(Target::Session(id));
    }
    if text.starts_with('{') || text.starts_with('~') || text.starts_with('!') {
        return Err(error(format!(
            "target {}: tmux's special tokens are not supported by fugue's tmux; use a name, an index or an id (%N, @N, $N)",
            crate::limits::escape_for_display(text)
        )));
    }
    let (session_part, rest, bare) = match text.split_once(':') {
        Some((session, rest)) => (session, rest, false),
        None => match text.strip_prefix('.') {
            Some(_) => ("", text, false),
            None => (text, "", true),
        },
    };
    let session = match session_part {
        "" => None,
        s => Some(match number_after(s, '$') {
            Some(id) => SessionRef::Id(id),
            None => match s.strip_prefix('=') {
                Some(name) => SessionRef::Name {
                    name: name.to_string(),
                    exact: true,
                },
                None => SessionRef::Name {
                    name: s.to_string(),
                    exact: false,
                },
            },
        }),
    };
    let (window_part, pane_part) = match rest.rsplit_once('.') {
        Some((window, pane)) if pane.parse::<u32>().is_ok() || pane.starts_with('%') => (window, Some(pane)),
        _ => (rest, None),
    };
    let window = match window_part {
        "" => None,
        w => Some(if let Some(id) = number_after(w, '@') {
            WindowRef::Id(id)
        } else if let Ok(index) = w.parse() {
            WindowRef::Index(index)
        } else {
            WindowRef::Name(w.strip_prefix('=').unwrap_or(w).to_string())
        }),
    };
    let pane = match pane_part {
        None | Some("") => None,
        Some(p) => Some(match number_after(p, '%') {
            Some(id) => PaneRef::Id(id),
            None => PaneRef::Index(p.parse().map_err(|_| error(format!("bad pane in target {text}")))?),
        }),
    };
    Ok(Target::Path {
        session,
        window,
        pane,
        bare,
    })
}

/// The layouts fugue's tmux lays a window's panes out by.
pub const LAYOUTS: &[&str] = &[
    "tiled",
    "main-vertical",
    "main-horizontal",
    "even-horizontal",
    "even-vertical",
];

/// A window's size from `-x`/`-y`/`-l`: cells, or a percentage of `whole`.
pub fn parse_extent(text: &str, whole: u16) -> Result<u16, ParseError> {
    let bad = || {
        error(format!(
            "bad size {}: give cells (30) or a percentage (30%)",
            crate::limits::escape_for_display(text)
        ))
    };
    match text.strip_suffix('%') {
        Some(percent) => {
            let percent: u32 = percent.parse().map_err(|_| bad())?;
            if percent > 100 {
                return Err(bad());
            }
            Ok(((whole as u32 * percent) / 100) as u16)
        }
        None => text.parse().map_err(|_| bad()),
    }
}

/// The reference table of docs/tmux.md: each command, the flags it takes,
/// those it takes as hints only, and what it does. Any other flag or command
/// is refused.
pub fn reference_table() -> String {
    let mut out = String::from("| command | flags | hints only | what fugue does |\n| --- | --- | --- | --- |\n");
    for spec in COMMANDS {
        let name = match spec.alias {
            "" => format!("`{}`", spec.name),
            alias => format!("`{}` (`{alias}`)", spec.name),
        };
        let mut flags = Vec::new();
        let mut hints = Vec::new();
        let chars: Vec<char> = spec.template.chars().collect();
        for (i, c) in chars.iter().enumerate() {
            if *c == ':' {
                continue;
            }
            let flag = match chars.get(i + 1) == Some(&':') {
                true => format!("`-{c} X`"),
                false => format!("`-{c}`"),
            };
            match spec.hints.contains(*c) {
                true => hints.push(flag),
                false => flags.push(flag),
            }
        }
        let list = |v: Vec<String>| if v.is_empty() { "".to_string() } else { v.join(" ") };
        out.push_str(&format!(
            "| {name} | {} | {} | {} |\n",
            list(flags),
            list(hints),
            spec.does
        ));
    }
    out
}

impl Validate for rq::Tmux {
    fn validate(&self) -> Result<(), ErrorReply> {
        if self.argv.len() > MAX_ARGS {
            return Err(ErrorReply::invalid(format!(
                "tmux call of {} arguments; the maximum is {MAX_ARGS}",
                self.argv.len()
            )));
        }
        let bytes: usize = self.argv.iter().map(String::len).sum();
        if bytes > MAX_ARGS_BYTES {
            return Err(ErrorReply::invalid(format!(
                "tmux call of {bytes} bytes of arguments; the maximum is {MAX_ARGS_BYTES}"
            )));
        }
        if self.argv.iter().any(|a| a.contains('\0')) {
            return Err(ErrorReply::invalid("a tmux argument contains NUL"));
        }
        if self.env.len() > MAX_CALL_ENV {
            return Err(ErrorReply::invalid(format!(
                "tmux call with {} environment variables; the maximum is {MAX_CALL_ENV}",
                self.env.len()
            )));
        }
        self.env
            .iter()
            .try_for_each(|var| crate::limits::check_env_var(&var.name, &var.value))?;
        if let Some(caller) = &self.caller {
            crate::limits::check_caller(caller)?;
        }
        crate::limits::check_path("cwd", &Some(self.cwd.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Vec<String> {
        text.split(' ').map(String::from).collect()
    }

    #[test]
    fn claude_codes_calls_parse() {
        let call = parse(&args("new-session -d -s swarm -n lead -P -F #{pane_id}")).unwrap();
        assert_eq!(call.server, Server::Default);
        let new = &call.commands[0];
        assert_eq!(new.name(), "new-session");
        assert!(new.has('d') && new.has('P'));
        assert_eq!(new.value('s'), Some("swarm"));
        assert_eq!(new.value('F'), Some("#{pane_id}"));

        let split = parse(&args("split-window -d -t %3 -h -l 70% -P -F #{pane_id} -- claude --x")).unwrap();
        let split = &split.commands[0];
        assert_eq!(split.value('l'), Some("70%"));
        assert_eq!(split.args, vec!["claude", "--x"]);
    }

    #[test]
    fn libtmux_writes_values_and_sockets_attached() {
        let call = parse(&args("-Lprobe new-window -t $0: -d -P -F#{window_id} -n second -t$0:")).unwrap();
        assert_eq!(call.server, Server::Named("probe".into()));
        let cmd = &call.commands[0];
        assert_eq!(cmd.value('t'), Some("$0:"));
        assert_eq!(cmd.value('F'), Some("#{window_id}"));
        assert!(parse(&args("-V")).unwrap().version);
        assert_eq!(
            parse(&args("-S /tmp/x ls")).unwrap().server,
            Server::Path("/tmp/x".into())
        );
    }

    #[test]
    fn commands_chain_at_semicolons() {
        let call = parse(&args("new-session -d -s a ; split-window -t a; kill-server")).unwrap();
        let names: Vec<_> = call.commands.iter().map(Command::name).collect();
        assert_eq!(names, ["new-session", "split-window", "kill-server"]);
        let call = parse(&args("send-keys -t a echo\\; Enter")).unwrap();
        assert_eq!(call.commands[0].args, vec!["echo;", "Enter"]);
    }

    #[test]
    fn what_is_not_supported_is_refused_naming_what_is() {
        let err = parse(&args("new-session -Z")).unwrap_err().0;
        assert!(err.contains("-Z is not supported") && err.contains("-s VALUE"), "{err}");
        let err = parse(&args("pipe-pane -t a cat")).unwrap_err().0;
        assert!(
            err.starts_with("unknown command: pipe-pane") && err.contains("split-window"),
            "{err}"
        );
        assert!(parse(&args("has-session -t")).unwrap_err().0.contains("needs a value"));
        assert!(parse(&args("-C ls")).unwrap_err().0.contains("control mode"));
        assert!(parse(&[]).unwrap_err().0.contains("no attached client"));
        assert!(parse(&args("rename-window")).unwrap_err().0.contains("takes 1"));
    }

    #[test]
    fn aliases_and_prefixes_name_commands() {
        assert_eq!(command_spec("splitw").unwrap().name, "split-window");
        assert_eq!(command_spec("capture-p").unwrap().name, "capture-pane");
        assert_eq!(command_spec("kill"), None, "ambiguous");
    }

    #[test]
    fn targets_follow_tmuxs_grammar() {
        assert_eq!(parse_target("%12").unwrap(), Target::Pane(12));
        assert_eq!(parse_target("@3").unwrap(), Target::Window(3));
        assert_eq!(parse_target("$0").unwrap(), Target::Session(0));
        assert_eq!(
            parse_target("=work").unwrap(),
            Target::Path {
                session: Some(SessionRef::Name {
                    name: "work".into(),
                    exact: true
                }),
                window: None,
                pane: None,
                bare: true
            }
        );
        assert_eq!(
            parse_target("work:@2.%5").unwrap(),
            Target::Path {
                session: Some(SessionRef::Name {
                    name: "work".into(),
                    exact: false
                }),
                window: Some(WindowRef::Id(2)),
                pane: Some(PaneRef::Id(5)),
                bare: false
            }
        );
        assert_eq!(
            parse_target("$0:").unwrap(),
            Target::Path {
                session: Some(SessionRef::Id(0)),
                window: None,
                pane: None,
                bare: false
            }
        );
        assert_eq!(
            parse_target("app:main.1").unwrap(),
            Target::Path {
                session: Some(SessionRef::Name {
                    name: "app".into(),
                    exact: false
                }),
                window: Some(WindowRef::Name("main".into())),
                pane: Some(PaneRef::Index(1)),
                bare: false
            }
        );
        assert!(parse_target("{last}").is_err());
    }

    #[test]
    fn extents_are_cells_or_percentages() {
        assert_eq!(parse_extent("30%", 200).unwrap(), 60);
        assert_eq!(parse_extent("42", 200).unwrap(), 42);
        assert!(parse_extent("300%", 10).is_err());
        assert!(parse_extent("x", 10).is_err());
    }

    /// docs/tmux.md holds the table of commands as [`COMMANDS`] says;
    /// `FUGUE_WRITE_DOCS=1` writes it again.
    #[test]
    fn the_docs_table_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/tmux.md");
        let text = std::fs::read_to_string(path).unwrap();
        let (begin, end) = (
            "<!-- commands: written by the protocol's tests -->\n",
            "<!-- end of commands -->",
        );
        let start = text.find(begin).expect("docs/tmux.md has the commands marker") + begin.len();
        let stop = text.find(end).expect("docs/tmux.md has the end marker");
        let table = reference_table();
        if text[start..stop] == table {
            return;
        }
        if std::env::var_os("FUGUE_WRITE_DOCS").is_some() {
            std::fs::write(path, format!("{}{table}{}", &text[..start], &text[stop..])).unwrap();
            return;
        }
        panic!("docs/tmux.md's table of commands is stale: run FUGUE_WRITE_DOCS=1 cargo test -p fugue-protocol tmux");
    }

    #[test]
    fn every_hint_is_a_flag_of_its_template() {
        for spec in COMMANDS {
            for hint in spec.hints.chars() {
                assert!(takes_value(spec.template, hint).is_some(), "{}: -{hint}", spec.name);
            }
        }
    }
}
