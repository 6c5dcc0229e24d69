//! Daemons on other machines, reached over OpenSSH: `ssh HOST fugue proxy`
//! carries the fugue protocol between this client and the remote daemon's
//! socket. The user's ssh does everything ssh does (config, keys, agent, jump
//! hosts, ControlMaster); fugue stores no secret. `FUGUE_SSH` replaces the ssh
//! command, as `GIT_SSH_COMMAND` does for git.
//!
//! Hosts have names in `$XDG_CONFIG_HOME/fugue/hosts.toml`:
//!
//! ```toml
//! [hosts.build]
//! ssh = "me@build.example.com:2222"   # [user@]host[:port], or a name from ~/.ssh/config
//! fugue_path = "/opt/fugue/bin/fugue" # where fugue is, if not on the non-interactive PATH
//! socket = "/run/user/1000/fugue/fugue.sock" # the remote daemon's socket, if not the default
//! ```

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A daemon on another machine and how to reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote {
    /// What the user called it: a name from the hosts file, or the destination.
    pub name: String,
    /// ssh's destination (`user@host` or a `Host` of the ssh config).
    pub destination: String,
    pub port: Option<u16>,
    /// The `fugue` program on that host.
    pub fugue_path: String,
    /// The remote daemon's socket; `None`: its default.
    pub socket: Option<String>,
    /// A shell command line that replaces `ssh` (`$FUGUE_SSH` when resolved).
    pub ssh_command: Option<String>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct HostsFile {
    #[serde(default)]
    hosts: BTreeMap<String, HostEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HostEntry {
    ssh: String,
    fugue_path: Option<String>,
    socket: Option<String>,
}

/// Where the hosts file is.
pub fn hosts_file() -> Option<PathBuf> {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(config.join("fugue/hosts.toml"))
}

fn read_hosts() -> Result<HostsFile, String> {
    let Some(path) = hosts_file() else {
        return Ok(HostsFile::default());
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(HostsFile::default()),
        Err(err) => return Err(format!("cannot read {}: {err}", path.display())),
    };
    toml::from_str(&text).map_err(|e| {
        let first = e.to_string();
        let first = first
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("invalid")
            .trim()
            .to_string();
        format!("{}: {first}", path.display())
    })
}

/// Every host the hosts file names, in name order.
pub fn all_hosts() -> Result<Vec<Remote>, String> {
    let file = read_hosts()?;
    file.hosts
        .iter()
        .map(|(name, entry)| remote_from(name, entry))
        .collect()
}

/// `name` as the hosts file has it, else as an ssh destination
/// (`[user@]host[:port]`).
pub fn resolve(name: &str) -> Result<Remote, String> {
    let file = read_hosts()?;
    match file.hosts.get(name) {
        Some(entry) => remote_from(name, entry),
        None => {
            let (destination, port) = parse_destination(name)?;
            Ok(Remote {
                name: name.to_string(),
                destination,
                port,
                fugue_path: "fugue".into(),
                socket: None,
                ssh_command: fugue_ssh(),
            })
        }
    }
}

fn remote_from(name: &str, entry: &HostEntry) -> Result<Remote, String> {
    let (destination, port) = parse_destination(&entry.ssh).map_err(|e| format!("host '{name}': {e}"))?;
    Ok(Remote {
        name: name.to_string(),
        destination,
        port,
        fugue_path: entry.fugue_path.clone().unwrap_or_else(|| "fugue".into()),
        socket: entry.socket.clone(),
        ssh_command: fugue_ssh(),
    })
}

/// `$FUGUE_SSH`, if set.
fn fugue_ssh() -> Option<String> {
    std::env::var("FUGUE_SSH").ok().filter(|s| !s.trim().is_empty())
}

/// `[user@]host[:port]`; an IPv6 address goes in brackets (`[::1]:2222`).
fn parse_destination(text: &str) -> Result<(String, Option<u16>), String> {
    let bad = |why: &str| format!("bad host '{text}': {why}; expected [user@]host[:port]");
    if text.is_empty() || text.starts_with('-') || text.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad("empty, starting with '-', or with spaces"));
    }
    let (user, host) = match text.rsplit_once('@') {
        Some((user, host)) => (Some(user), host),
        None => (None, text),
    };
    let (host, port) = if let Some(rest) = host.strip_prefix('[') {
        let (address, after) = rest.split_once(']').ok_or_else(|| bad("unclosed '['"))?;
        let port = match after.strip_prefix(':') {
            Some(port) => Some(port),
            None if after.is_empty() => None,
            None => return Err(bad("text after ']'")),
        };
        (address.to_string(), port)
    } else {
        match host.split_once(':') {
            Some((host, port)) => (host.to_string(), Some(port)),
            None => (host.to_string(), None),
        }
    };
    if host.is_empty() {
        return Err(bad("no host"));
    }
    let port = port
        .map(|p| {
            p.parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| bad("the port is not 1-65535"))
        })
        .transpose()?;
    let destination = match user {
        Some(user) if !user.is_empty() => format!("{user}@{host}"),
        Some(_) => return Err(bad("empty user")),
        None => host,
    };
    Ok((destination, port))
}

/// Set (to anything) in `fugue proxy`'s environment: connect only to a daemon
/// that runs, start none.
pub const PROXY_NO_START: &str = "FUGUE_PROXY_NO_START";

/// Quotes for the remote shell, which is what runs ssh's command (shlex: POSIX
/// quoting). A NUL, which no shell word carries, quotes as an empty word: the
/// remote command then fails and says so, rather than running something else.
fn shell_quote(text: &str) -> String {
    shlex::try_quote(text).map_or_else(|_| "''".into(), |quoted| quoted.into_owned())
}

impl Remote {
    /// The command that connects to the remote daemon: `ssh [-p PORT] -T
    /// DESTINATION fugue [--socket S] proxy`, through `ssh_command` if set.
    /// Unless `start_daemon`, the proxy is told ([`PROXY_NO_START`]) not to
    /// start a daemon that is not running, as a local connection would not
    /// (`daemon status`, `daemon stop`, a reconnect). An environment variable
    /// rather than a flag, so a fugue there that predates it still connects.
    pub fn proxy_command(&self, start_daemon: bool) -> tokio::process::Command {
        let mut remote = Vec::new();
        if !start_daemon {
            remote.extend(["env".to_string(), format!("{PROXY_NO_START}=1")]);
        }
        remote.push(shell_quote(&self.fugue_path));
        if let Some(socket) = &self.socket {
            remote.push("--socket".into());
            remote.push(shell_quote(socket));
        }
        remote.push("proxy".into());
        let mut args: Vec<String> = vec!["-T".into()];
        if let Some(port) = self.port {
            args.extend(["-p".into(), port.to_string()]);
        }
        // `--` keeps a destination from being read as an option.
        args.extend(["--".into(), self.destination.clone(), remote.join(" ")]);
        let mut command = match &self.ssh_command {
            // Like GIT_SSH_COMMAND: a shell command line, the arguments after it.
            Some(ssh) => {
                let mut command = tokio::process::Command::new("sh");
                command.arg("-c").arg(format!("{ssh} \"$@\"")).arg("fugue-ssh");
                command
            }
            None => tokio::process::Command::new("ssh"),
        };
        command.args(args);
        command
    }
}

/// The last line a process wrote on `stderr`, kept while it runs (ssh says why
/// it failed there).
pub(crate) fn last_words(stderr: tokio::process::ChildStderr) -> LastWords {
    use tokio::io::AsyncBufReadExt;
    let (tx, rx) = tokio::sync::watch::channel(String::new());
    let task = tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let line = line.trim();
            if !line.is_empty() {
                tx.send_replace(crate::protocol::limits::truncate_for_display(line, 300));
            }
        }
    });
    LastWords { rx, task }
}

pub(crate) struct LastWords {
    rx: tokio::sync::watch::Receiver<String>,
    task: tokio::task::JoinHandle<()>,
}

impl LastWords {
    /// Once the process has closed stderr (bounded): its last line.
    pub(crate) async fn get(self) -> String {
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), self.task).await;
        match self.rx.borrow().as_str() {
            "" => {
                "the connection closed without a word (is fugue installed there? see fugue_path in hosts.toml)".into()
            }
            said => said.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_for_the_remote_shell_come_back_as_given() {
        for word in ["fugue", "/opt/my tools/fugue", "it's", "$(reboot)", "~/bin/fugue", ""] {
            let quoted = shell_quote(word);
            assert_eq!(shlex::split(&quoted).unwrap(), [word], "{quoted}");
        }
        assert_eq!(
            shell_quote("/usr/bin/fugue"),
            "/usr/bin/fugue",
            "a plain word stays as it is"
        );
    }

    #[test]
    fn destinations() {
        assert_eq!(parse_destination("box"), Ok(("box".into(), None)));
        assert_eq!(parse_destination("me@box:2222"), Ok(("me@box".into(), Some(2222))));
        assert_eq!(parse_destination("me@[::1]:22"), Ok(("me@::1".into(), Some(22))));
        assert_eq!(parse_destination("[fe80::1]"), Ok(("fe80::1".into(), None)));
        for bad in [
            "",
            "-oProxyCommand=x",
            "a b",
            "box:0",
            "box:99999",
            "@box",
            "me@",
            "[::1",
        ] {
            assert!(parse_destination(bad).is_err(), "{bad}");
        }
        assert!(parse_destination("box:x")
            .unwrap_err()
            .contains("expected [user@]host[:port]"));
    }

    #[test]
    fn the_remote_command_is_quoted_for_the_remote_shell() {
        let remote = Remote {
            name: "b".into(),
            destination: "me@b".into(),
            port: Some(2222),
            fugue_path: "/opt/my fugue/fugue".into(),
            socket: Some("/tmp/it's.sock".into()),
            ssh_command: None,
        };
        let last_arg = |start| {
            let command = remote.proxy_command(start);
            let args: Vec<String> = command
                .as_std()
                .get_args()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            assert!(args.contains(&"2222".to_string()));
            args.last().cloned().unwrap_or_default()
        };
        // What the remote shell reads back from the line ssh sends.
        let words = |start| shlex::split(&last_arg(start)).unwrap_or_default();
        assert_eq!(
            words(true),
            ["/opt/my fugue/fugue", "--socket", "/tmp/it's.sock", "proxy"]
        );
        assert_eq!(
            words(false),
            [
                "env",
                "FUGUE_PROXY_NO_START=1",
                "/opt/my fugue/fugue",
                "--socket",
                "/tmp/it's.sock",
                "proxy"
            ]
        );
    }
}
