//! Daemons elsewhere: on other machines, in containers, in pods. Each is
//! reached the same way, by a command whose stdin and stdout carry the fugue
//! protocol to `fugue proxy` there, which connects to that daemon's socket. The
//! command is the user's own tool, so their credentials and settings apply
//! and fugue stores no secret:
//!
//! - `ssh [-p PORT] -T DESTINATION fugue proxy`: a name from hosts.toml, or
//!   `[user@]host[:port]`. The user's ssh does everything ssh does (config,
//!   keys, agent, jump hosts, ControlMaster). `FUGUE_SSH` replaces the ssh
//!   command, as `GIT_SSH_COMMAND` does for git.
//! - `docker exec -i CONTAINER fugue proxy`: `docker://CONTAINER` (the Docker
//!   socket and context of the user's `docker`); `podman://CONTAINER` likewise.
//! - `kubectl exec -i -n NAMESPACE POD [-c CONTAINER] -- fugue proxy`:
//!   `k8s://[CONTEXT/]NAMESPACE/POD[:CONTAINER]` (the user's kubeconfig with its
//!   auth plugins).
//! - `sh -c COMMAND`: `exec:COMMAND`, any command whose stdio reaches `fugue
//!   proxy` (a hosted sandbox's own CLI, say).
//!
//! None of them gets a TTY: the protocol is binary and carries sizes and exits
//! itself.
//!
//! Hosts have names in `$XDG_CONFIG_HOME/fugue/hosts.toml`:
//!
//! ```toml
//! [hosts.build]
//! ssh = "me@build.example.com:2222"   # [user@]host[:port], or a name from ~/.ssh/config
//! fugue_path = "/opt/fugue/bin/fugue" # where fugue is, if not on the non-interactive PATH
//! socket = "/run/user/1000/fugue/fugue.sock" # the remote daemon's socket, if not the default
//!
//! [hosts.sandbox]
//! address = "docker://agent-1"        # or podman://, k8s://, exec:
//! ```

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A daemon elsewhere and how to reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote {
    /// What the user called it: a name from the hosts file, or the address.
    pub name: String,
    pub transport: Transport,
    /// The `fugue` program there.
    pub fugue_path: String,
    /// The daemon's socket there; `None`: its default.
    pub socket: Option<String>,
}

/// The command that carries the protocol to `fugue proxy` where the daemon is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    Ssh {
        /// ssh's destination (`user@host` or a `Host` of the ssh config).
        destination: String,
        port: Option<u16>,
        /// A shell command line that replaces `ssh` (`$FUGUE_SSH` when resolved).
        ssh_command: Option<String>,
    },
    /// A running container of a local engine: `docker exec -i`, `podman exec -i`.
    Container { engine: Engine, container: String },
    /// A pod's container: `kubectl exec -i`.
    Kubernetes {
        /// A context of the kubeconfig; `None`: its current one.
        context: Option<String>,
        namespace: String,
        pod: String,
        /// `None`: the pod's default container.
        container: Option<String>,
    },
    /// Any shell command line whose stdin and stdout reach `fugue proxy`.
    Exec { command: String },
}

/// A container engine fugue drives through its own CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Docker,
    Podman,
}

impl Engine {
    pub fn parse(name: &str) -> Result<Engine, String> {
        match name {
            "docker" => Ok(Engine::Docker),
            "podman" => Ok(Engine::Podman),
            other => Err(format!("unknown container engine '{other}'; use docker or podman")),
        }
    }

    pub fn program(self) -> &'static str {
        match self {
            Engine::Docker => "docker",
            Engine::Podman => "podman",
        }
    }

    /// Runs the engine's CLI with `args` and no input, within `within`; its
    /// stdout, or its own complaint on one line. In a process group of its
    /// own: run from a sandbox's wrapper while its pane's terminal hangs up,
    /// it must not get the hang-up meant for the pane.
    pub(crate) async fn ask(self, args: &[&str], within: std::time::Duration) -> Result<String, String> {
        ask_tool(self.program(), args, within).await
    }
}

/// Whether what a transport said means there is no `fugue` to run on the far
/// side (a shell's, env's, docker's or a container runtime's words for it).
pub fn says_fugue_is_missing(said: &str) -> bool {
    [
        "\"fugue\": executable file not found",
        "fugue: not found",
        "fugue: command not found",
        "'fugue': No such file",
    ]
    .iter()
    .any(|words| said.contains(words))
}

/// Runs the user's `program` (an engine's CLI, kubectl) with `args` and no
/// input, within `within`; its stdout, or its own complaint on one line. In a
/// process group of its own (see [`Engine::ask`]).
pub(crate) async fn ask_tool(program: &str, args: &[&str], within: std::time::Duration) -> Result<String, String> {
    let run = tokio::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .process_group(0)
        .kill_on_drop(true)
        .output();
    let out = match tokio::time::timeout(within, run).await {
        Err(_) => return Err(format!("{program} did not answer within {} s", within.as_secs())),
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!("{program} is not installed here (not on PATH)"))
        }
        Ok(Err(e)) => return Err(format!("cannot run {program}: {e}")),
        Ok(Ok(out)) => out,
    };
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).trim().to_string());
    }
    let said = String::from_utf8_lossy(&out.stderr);
    let line = said
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("no reason given");
    Err(crate::protocol::limits::clean_label(line, 300))
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct HostsFile {
    #[serde(default)]
    hosts: BTreeMap<String, HostEntry>,
    /// Where more daemons are found (`crate::fleet`).
    #[serde(default)]
    fleet: Vec<crate::fleet::Source>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HostEntry {
    /// `[user@]host[:port]`: reached over ssh.
    ssh: Option<String>,
    /// Or any `--host` address: `docker://`, `podman://`, `k8s://`, `exec:`.
    address: Option<String>,
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
    toml::from_str(&text).map_err(|e| toml_error(&path, &text, &e))
}

/// A config file's TOML error on one line, naming the file and the line
/// (toml's own text spans lines: the line quoted, a caret).
pub(crate) fn toml_error(path: &std::path::Path, text: &str, e: &toml::de::Error) -> String {
    let line = e
        .span()
        .map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1);
    let message = e.message().lines().next().unwrap_or("invalid").trim().to_string();
    match line {
        Some(line) => format!("{} line {line}: {message}", path.display()),
        None => format!("{}: {message}", path.display()),
    }
}

/// The hosts file's `[[fleet]]` sources, as written.
pub fn fleet_sources() -> Result<Vec<crate::fleet::Source>, String> {
    Ok(read_hosts()?.fleet)
}

/// Every host the hosts file names, in name order.
pub fn all_hosts() -> Result<Vec<Remote>, String> {
    let file = read_hosts()?;
    file.hosts
        .iter()
        .map(|(name, entry)| remote_from(name, entry))
        .collect()
}

/// `name` as an address (`docker://`, `podman://`, `k8s://`, `exec:`), else as
/// the hosts file has it, else as an ssh destination (`[user@]host[:port]`).
pub fn resolve(name: &str) -> Result<Remote, String> {
    if let Some(transport) = parse_address(name)? {
        return Ok(Remote {
            name: name.to_string(),
            transport,
            fugue_path: "fugue".into(),
            socket: None,
        });
    }
    let file = read_hosts()?;
    match file.hosts.get(name) {
        Some(entry) => remote_from(name, entry),
        None => {
            let (destination, port) = parse_destination(name)?;
            Ok(Remote {
                name: name.to_string(),
                transport: Transport::Ssh {
                    destination,
                    port,
                    ssh_command: fugue_ssh(),
                },
                fugue_path: "fugue".into(),
                socket: None,
            })
        }
    }
}

fn remote_from(name: &str, entry: &HostEntry) -> Result<Remote, String> {
    let transport = match (&entry.ssh, &entry.address) {
        (Some(ssh), None) => {
            let (destination, port) = parse_destination(ssh).map_err(|e| format!("host '{name}': {e}"))?;
            Transport::Ssh {
                destination,
                port,
                ssh_command: fugue_ssh(),
            }
        }
        (None, Some(address)) => match parse_address(address).map_err(|e| format!("host '{name}': {e}"))? {
            Some(transport) => transport,
            None => {
                return Err(format!(
                    "host '{name}': address {address:?} is none of docker://, podman://, k8s://, exec: (an ssh host goes in ssh = ...)"
                ))
            }
        },
        _ => return Err(format!("host '{name}': give one of ssh = \"[user@]host[:port]\" or address = \"docker://...\"")),
    };
    Ok(Remote {
        name: name.to_string(),
        transport,
        fugue_path: entry.fugue_path.clone().unwrap_or_else(|| "fugue".into()),
        socket: entry.socket.clone(),
    })
}

/// What the four address forms say, `None` for anything else (a host name).
fn parse_address(text: &str) -> Result<Option<Transport>, String> {
    if let Some(container) = text.strip_prefix("docker://") {
        return container_address(Engine::Docker, container).map(Some);
    }
    if let Some(container) = text.strip_prefix("podman://") {
        return container_address(Engine::Podman, container).map(Some);
    }
    if let Some(rest) = text.strip_prefix("k8s://") {
        return kubernetes_address(rest).map(Some);
    }
    if let Some(command) = text.strip_prefix("exec:") {
        if command.trim().is_empty() || command.contains('\0') {
            return Err(format!(
                "bad address '{text}': expected exec:COMMAND, a command line whose stdio reaches `fugue proxy`"
            ));
        }
        return Ok(Some(Transport::Exec {
            command: command.to_string(),
        }));
    }
    Ok(None)
}

/// A word that goes to another program's command line as one argument: not
/// empty, not an option, no spaces or control characters.
/// A name a `k8s://` address may hold (a namespace, pod, container or
/// context): no option, no blank, no control character, no `/` or `:` that
/// would split it differently when read back.
pub(crate) fn is_kube_name(word: &str) -> bool {
    is_plain_word(word) && word.len() <= 253 && !word.contains(['/', ':'])
}

/// A word that is no option and holds no blank or control character.
pub(crate) fn is_plain_word(word: &str) -> bool {
    !word.is_empty() && !word.starts_with('-') && !word.chars().any(|c| c.is_whitespace() || c.is_control())
}

fn container_address(engine: Engine, container: &str) -> Result<Transport, String> {
    // Docker's and podman's names: [a-zA-Z0-9][a-zA-Z0-9_.-]*, or an id.
    let named = container.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && container
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
    if !named || container.len() > 255 {
        let scheme = engine.program();
        return Err(format!(
            "bad address '{scheme}://{container}': expected {scheme}://CONTAINER, a container's name or id ([a-zA-Z0-9][a-zA-Z0-9_.-]*)"
        ));
    }
    Ok(Transport::Container {
        engine,
        container: container.to_string(),
    })
}

/// `[CONTEXT/]NAMESPACE/POD[:CONTAINER]`. A context's name may hold `/` (EKS
/// names its contexts after ARNs), so the last two parts are the namespace and
/// the pod.
fn kubernetes_address(rest: &str) -> Result<Transport, String> {
    let bad = || format!("bad address 'k8s://{rest}': expected k8s://[CONTEXT/]NAMESPACE/POD[:CONTAINER]");
    let mut parts = rest.rsplitn(3, '/');
    let (Some(pod), Some(namespace)) = (parts.next(), parts.next()) else {
        return Err(bad());
    };
    let context = parts.next();
    let (pod, container) = match pod.split_once(':') {
        Some((pod, container)) => (pod, Some(container)),
        None => (pod, None),
    };
    let words_ok = [Some(namespace), Some(pod), container, context]
        .into_iter()
        .flatten()
        .all(is_plain_word);
    if !words_ok {
        return Err(bad());
    }
    Ok(Transport::Kubernetes {
        context: context.map(String::from),
        namespace: namespace.to_string(),
        pod: pod.to_string(),
        container: container.map(String::from),
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

/// Daemons asked at once when many are (`--all-hosts`, the MCP bridge's
/// `all_hosts`): a hosts file of hundreds dials at most this many together.
pub const ASK_AT_ONCE: usize = 32;
/// How long one daemon elsewhere gets to answer such a question; one that is
/// black-holed is reported as not answering then, and delays no other.
pub const ASK_WITHIN: std::time::Duration = std::time::Duration::from_secs(10);

/// Asks every target (at most [`ASK_AT_ONCE`] at a time, each within
/// [`ASK_WITHIN`]); the answers in the targets' order, a target that took
/// longer answered by an error saying so.
pub async fn ask_each<T, R, F, Fut>(targets: Vec<T>, ask: F) -> Vec<(T, Result<R, String>)>
where
    T: Clone,
    F: Fn(T) -> Fut,
    Fut: std::future::Future<Output = Result<R, String>>,
{
    use futures::StreamExt;
    futures::stream::iter(targets)
        .map(|target| within_deadline(target.clone(), ask(target)))
        .buffered(ASK_AT_ONCE)
        .collect()
        .await
}

/// `target`'s answer, or an error once [`ASK_WITHIN`] passes.
async fn within_deadline<T, R>(
    target: T,
    asked: impl std::future::Future<Output = Result<R, String>>,
) -> (T, Result<R, String>) {
    let answer = match tokio::time::timeout(ASK_WITHIN, asked).await {
        Ok(answer) => answer,
        Err(_) => Err(format!("did not answer within {} s", ASK_WITHIN.as_secs())),
    };
    (target, answer)
}

/// As [`ask_each`], but each answer as it comes: a slow or black-holed target
/// delays no other, and a view can show what answered while the rest are
/// still asked. At most [`ASK_AT_ONCE`] at a time, each within [`ASK_WITHIN`];
/// the channel closes once every target has answered or timed out.
pub fn ask_each_as_answered<T, R, F, Fut>(
    targets: Vec<T>,
    ask: F,
) -> tokio::sync::mpsc::Receiver<(T, Result<R, String>)>
where
    T: Clone + Send + 'static,
    R: Send + 'static,
    F: Fn(T) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<R, String>> + Send + 'static,
{
    use futures::StreamExt;
    let (send, answers) = tokio::sync::mpsc::channel(ASK_AT_ONCE);
    tokio::spawn(async move {
        let mut asking = futures::stream::iter(targets)
            .map(|target| within_deadline(target.clone(), ask(target)))
            .buffer_unordered(ASK_AT_ONCE);
        while let Some(answer) = asking.next().await {
            if send.send(answer).await.is_err() {
                return;
            }
        }
    });
    answers
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
    /// The command that connects to the daemon there (see the module's doc).
    /// Unless `start_daemon`, the proxy is told ([`PROXY_NO_START`]) not to
    /// start a daemon that is not running, as a local connection would not
    /// (`daemon status`, `daemon stop`, a reconnect). An environment variable
    /// rather than a flag, so a fugue there that predates it still connects.
    pub fn proxy_command(&self, start_daemon: bool) -> tokio::process::Command {
        match &self.transport {
            Transport::Ssh {
                destination,
                port,
                ssh_command,
            } => self.ssh_command(destination, *port, ssh_command.as_deref(), start_daemon),
            Transport::Container { engine, container } => {
                let mut command = tokio::process::Command::new(engine.program());
                command.args(["exec", "-i"]);
                if !start_daemon {
                    command.args(["-e", &format!("{PROXY_NO_START}=1")]);
                }
                command.arg(container).args(self.fugue_words());
                command
            }
            Transport::Kubernetes {
                context,
                namespace,
                pod,
                container,
            } => {
                let mut command = tokio::process::Command::new("kubectl");
                if let Some(context) = context {
                    command.args(["--context", context]);
                }
                command.args(["exec", "-i", "-n", namespace, pod]);
                if let Some(container) = container {
                    command.args(["-c", container]);
                }
                command.arg("--");
                if !start_daemon {
                    command.args(["env", &format!("{PROXY_NO_START}=1")]);
                }
                command.args(self.fugue_words());
                command
            }
            Transport::Exec { command: line } => {
                let mut command = tokio::process::Command::new("sh");
                command.args(["-c", line]);
                if !start_daemon {
                    // Reaches a `fugue proxy` this command starts with its environment.
                    command.env(PROXY_NO_START, "1");
                }
                command
            }
        }
    }

    /// `fugue [--socket S] proxy`, as words.
    fn fugue_words(&self) -> Vec<String> {
        let mut words = vec![self.fugue_path.clone()];
        if let Some(socket) = &self.socket {
            words.extend(["--socket".to_string(), socket.clone()]);
        }
        words.push("proxy".into());
        words
    }

    /// `ssh [-p PORT] -T DESTINATION fugue [--socket S] proxy`, through
    /// `ssh_command` if set; the remote part quoted for the remote shell.
    fn ssh_command(
        &self,
        destination: &str,
        port: Option<u16>,
        ssh_command: Option<&str>,
        start_daemon: bool,
    ) -> tokio::process::Command {
        let mut remote = Vec::new();
        if !start_daemon {
            remote.extend(["env".to_string(), format!("{PROXY_NO_START}=1")]);
        }
        remote.extend(self.fugue_words().iter().map(|word| shell_quote(word)));
        let mut args: Vec<String> = vec!["-T".into()];
        if let Some(port) = port {
            args.extend(["-p".into(), port.to_string()]);
        }
        // `--` keeps a destination from being read as an option.
        args.extend(["--".into(), destination.to_string(), remote.join(" ")]);
        let mut command = match ssh_command {
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

    /// How it is reached, for messages: `ssh me@box`, `docker exec web-1`,
    /// `kubectl exec agents/pod-0`, `exec: COMMAND`.
    pub fn describe(&self) -> String {
        match &self.transport {
            Transport::Ssh { destination, .. } => format!("ssh {destination}"),
            Transport::Container { engine, container } => format!("{} exec {container}", engine.program()),
            Transport::Kubernetes { namespace, pod, .. } => format!("kubectl exec {namespace}/{pod}"),
            Transport::Exec { command } => {
                format!("exec: {}", crate::protocol::limits::truncate_for_display(command, 80))
            }
        }
    }

    /// Where it is, as connection errors name it: `ssh://NAME` for a host, the
    /// address itself (`docker://web-1`) for the others.
    pub fn place(&self) -> String {
        match &self.transport {
            Transport::Ssh { .. } => format!("ssh://{}", self.name),
            _ => self.name.clone(),
        }
    }

    /// The program the command runs, for "cannot run ..." messages.
    pub fn program(&self) -> &'static str {
        match &self.transport {
            Transport::Ssh { ssh_command: None, .. } => "ssh",
            Transport::Ssh { .. } | Transport::Exec { .. } => "sh",
            Transport::Container { engine, .. } => engine.program(),
            Transport::Kubernetes { .. } => "kubectl",
        }
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
    fn a_missing_fugue_is_recognised_in_each_tool_s_words() {
        for said in [
            "error: OCI runtime exec failed: exec failed: unable to start container process: exec: \"fugue\": executable file not found in $PATH: unknown",
            "sh: 1: fugue: not found",
            "bash: line 1: fugue: command not found",
            "env: 'fugue': No such file or directory",
        ] {
            assert!(says_fugue_is_missing(said), "{said}");
        }
        assert!(!says_fugue_is_missing(
            "Error from server (NotFound): pods \"x\" not found"
        ));
        assert!(!says_fugue_is_missing("No such container: agent-1"));
    }

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
            transport: Transport::Ssh {
                destination: "me@b".into(),
                port: Some(2222),
                ssh_command: None,
            },
            fugue_path: "/opt/my fugue/fugue".into(),
            socket: Some("/tmp/it's.sock".into()),
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

    fn args_of(remote: &Remote, start: bool) -> (String, Vec<String>) {
        let command = remote.proxy_command(start);
        let std = command.as_std();
        (
            std.get_program().to_string_lossy().into_owned(),
            std.get_args().map(|a| a.to_string_lossy().into_owned()).collect(),
        )
    }

    #[test]
    fn containers_pods_and_commands_are_addresses() {
        let docker = resolve("docker://agent-1").unwrap();
        assert_eq!(
            args_of(&docker, false),
            (
                "docker".into(),
                [
                    "exec",
                    "-i",
                    "-e",
                    "FUGUE_PROXY_NO_START=1",
                    "agent-1",
                    "fugue",
                    "proxy"
                ]
                .map(String::from)
                .to_vec()
            )
        );
        assert_eq!(
            args_of(&resolve("podman://c0ffee").unwrap(), true).1,
            ["exec", "-i", "c0ffee", "fugue", "proxy"]
        );
        let pod = resolve("k8s://arn:aws:eks:eu-west-1:1:cluster/prod/agents/worker-0:fugue").unwrap();
        assert_eq!(
            pod.transport,
            Transport::Kubernetes {
                context: Some("arn:aws:eks:eu-west-1:1:cluster/prod".into()),
                namespace: "agents".into(),
                pod: "worker-0".into(),
                container: Some("fugue".into()),
            }
        );
        assert_eq!(
            args_of(&pod, false).1,
            [
                "--context",
                "arn:aws:eks:eu-west-1:1:cluster/prod",
                "exec",
                "-i",
                "-n",
                "agents",
                "worker-0",
                "-c",
                "fugue",
                "--",
                "env",
                "FUGUE_PROXY_NO_START=1",
                "fugue",
                "proxy"
            ]
        );
        assert_eq!(
            args_of(&resolve("k8s://default/p").unwrap(), true).1,
            ["exec", "-i", "-n", "default", "p", "--", "fugue", "proxy"]
        );
        let exec = resolve("exec:gh codespace ssh -c x -- fugue proxy").unwrap();
        assert_eq!(args_of(&exec, true).1, ["-c", "gh codespace ssh -c x -- fugue proxy"]);
        assert_eq!(exec.describe(), "exec: gh codespace ssh -c x -- fugue proxy");
        for bad in [
            "docker://",
            "docker://-it",
            "docker://a b",
            "podman://x;y",
            "k8s://",
            "k8s://pod",
            "k8s://ns/",
            "k8s://-n/pod",
            "k8s://ns/pod:",
            "exec:",
            "exec:   ",
        ] {
            let err = resolve(bad).unwrap_err();
            assert!(err.starts_with("bad address"), "{bad}: {err}");
            assert!(err.contains("expected"), "{bad}: {err}");
        }
    }
}
