//! The bridge's side of fugued: one shared connection (reconnected when the daemon
//! restarts), the default session, and turning daemon answers into tool messages.

use fugue_client::{Client, ClientError, ConnectOptions, SharedClient};
use fugue_protocol::ErrorCode;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

#[derive(Clone, Debug)]
pub struct BridgeConfig {
    pub socket: Option<PathBuf>,
    /// The daemon on another machine, over ssh (`None`: this machine's).
    pub host: Option<fugue_client::remote::Remote>,
    pub default_session: String,
    /// The bridge's working directory: the default session's cwd, and what
    /// relative paths are relative to when no session says otherwise.
    pub cwd: PathBuf,
    pub allow_spawn: bool,
    /// fugue_merge and fugue_discard go ahead where no person can be asked.
    pub allow_merge: bool,
    pub allow_discard: bool,
    /// Agent kind -> command line.
    pub agent_commands: BTreeMap<String, String>,
}

/// Shared by every tool call; calls run concurrently on one connection.
#[derive(Clone)]
pub struct Bridge {
    pub config: Arc<BridgeConfig>,
    options: ConnectOptions,
    client: SharedClient,
    /// Connections to the daemons of other hosts (hosts.toml names), made on
    /// first use and shared by every call after.
    hosts: Arc<Mutex<HashMap<String, SharedClient>>>,
    /// Questions put to a person through a client of the 2026-07-28 era (which
    /// asks by answering a tool call with "input required"): request state ->
    /// the question, so an answer counts only for the call it was asked for.
    pub pending_questions: Arc<Mutex<PendingQuestions>>,
    /// Tool calls that became tasks (MCP tasks extension), for every session.
    pub tasks: crate::tasks::Tasks,
}

/// Questions asked and not yet answered; each answer is used once.
#[derive(Default)]
pub struct PendingQuestions {
    asked: HashMap<String, (String, std::time::Instant)>,
}

impl PendingQuestions {
    /// Questions kept at most; older ones are forgotten (their answers refused).
    const KEEP: usize = 64;
    /// How long a question waits for its answer.
    const TTL: std::time::Duration = std::time::Duration::from_secs(600);

    /// Records `question`; returns the state the client echoes with its answer.
    pub fn ask(&mut self, question: &str) -> String {
        let now = std::time::Instant::now();
        self.asked.retain(|_, (_, at)| now.duration_since(*at) < Self::TTL);
        if self.asked.len() >= Self::KEEP {
            let oldest = self.asked.iter().min_by_key(|(_, (_, at))| *at).map(|(k, _)| k.clone());
            oldest.map(|k| self.asked.remove(&k));
        }
        let state = fugue_protocol::SessionId::new().simple();
        self.asked.insert(state.clone(), (question.to_string(), now));
        state
    }

    /// Takes the question `state` names, if it is `question` and still waiting.
    pub fn answer(&mut self, state: &str, question: &str) -> bool {
        match self.asked.remove(state) {
            Some((asked, at)) => asked == question && at.elapsed() < Self::TTL,
            None => false,
        }
    }
}

/// A terminal id as the agent sees it: `HOST/ID` for a terminal on another
/// host, plain `ID` for one on the bridge's own daemon.
pub fn split_terminal(id: &str) -> (Option<&str>, &str) {
    match id.split_once('/') {
        Some((host, local)) if !host.is_empty() => (Some(host), local),
        _ => (None, id),
    }
}

/// The id an agent uses for terminal `id` on `host`.
pub fn qualify(host: Option<&str>, id: &str) -> String {
    match host {
        Some(host) => format!("{host}/{id}"),
        None => id.to_string(),
    }
}

/// A tool failure: the message the agent reads.
pub type ToolError = String;

impl Bridge {
    pub fn new(config: BridgeConfig) -> Self {
        let mut options = ConnectOptions::default().client_name("fugue-mcp");
        options.socket = config.socket.clone();
        options.host = config.host.clone();
        Self {
            config: Arc::new(config),
            client: SharedClient::new(options.clone()),
            options,
            hosts: Arc::default(),
            pending_questions: Arc::default(),
            tasks: crate::tasks::Tasks::default(),
        }
    }

    /// How to reach the bridge's daemon, for a connection of one's own (one
    /// whose event stream is not shared with the tool calls).
    pub fn connect_options(&self) -> ConnectOptions {
        self.options.clone()
    }

    /// A live connection, (re)connecting and starting the daemon if needed.
    pub async fn client(&self) -> Result<Client, ToolError> {
        self.client.get().await.map_err(|e| format!("cannot reach fugued: {e}"))
    }

    /// A live connection to `host`'s daemon (a hosts.toml name or an ssh
    /// destination), or to the bridge's own when `None`.
    pub async fn client_on(&self, host: Option<&str>) -> Result<Client, ToolError> {
        let Some(host) = host else {
            return self.client().await;
        };
        let shared = {
            let mut hosts = self.hosts.lock().unwrap_or_else(|p| p.into_inner());
            match hosts.get(host) {
                Some(shared) => shared.clone(),
                None => {
                    let remote = fugue_client::remote::resolve(host)?;
                    let options = ConnectOptions::default().client_name("fugue-mcp").host(remote);
                    let shared = SharedClient::new(options);
                    hosts.insert(host.to_string(), shared.clone());
                    shared
                }
            }
        };
        shared
            .get()
            .await
            .map_err(|e| format!("cannot reach fugued on {host}: {e}"))
    }

    /// Whether `host` (or the bridge's own daemon) runs on another machine.
    pub fn remote(&self, host: Option<&str>) -> bool {
        host.is_some() || self.config.host.is_some()
    }

    /// The session a call works in: the given one, or the default (created on
    /// first use in the bridge's working directory).
    pub async fn session(
        &self,
        client: &Client,
        session: Option<&str>,
        host: Option<&str>,
    ) -> Result<String, ToolError> {
        if let Some(name) = session.filter(|s| !s.is_empty()) {
            return Ok(name.to_string());
        }
        let name = &self.config.default_session;
        // On another machine the bridge's directory means nothing: the daemon's default.
        let cwd = (!self.remote(host)).then_some(self.config.cwd.as_path());
        match client.create_session(name, cwd, vec![]).await {
            Ok(_) => Ok(name.clone()),
            Err(err) if err.code() == Some(ErrorCode::NameTaken) => Ok(name.clone()),
            Err(err) => Err(describe(err)),
        }
    }

    /// The directory of a new session on the bridge's daemon: `path` against
    /// the bridge's directory (checked to exist), or that directory itself. On
    /// another machine the bridge's directory means nothing: `path` against `/`,
    /// or the daemon's default (`None`).
    pub fn new_session_dir(&self, path: Option<&str>) -> Result<Option<String>, ToolError> {
        if self.remote(None) {
            return self.resolve_directory("/", path, None);
        }
        let base = self.config.cwd.display().to_string();
        Ok(Some(Self::directory(&base, path)?.unwrap_or(base)))
    }

    /// Resolves `path` against `base` (absolute paths stay) and, when the daemon
    /// runs on this machine, checks it exists (a daemon on another machine
    /// checks when it starts something there).
    pub fn resolve_directory(
        &self,
        base: &str,
        path: Option<&str>,
        host: Option<&str>,
    ) -> Result<Option<String>, ToolError> {
        match self.remote(host) {
            true => Ok(path
                .filter(|p| !p.is_empty())
                .map(|p| PathBuf::from(base).join(p).display().to_string())),
            false => Self::directory(base, path),
        }
    }

    /// Resolves `path` against `base` (absolute paths stay), and checks it exists.
    pub fn directory(base: &str, path: Option<&str>) -> Result<Option<String>, ToolError> {
        let Some(path) = path.filter(|p| !p.is_empty()) else {
            return Ok(None);
        };
        let joined = PathBuf::from(base).join(path);
        if !joined.is_dir() {
            return Err(format!(
                "directory does not exist: {} (resolved to {})",
                path,
                joined.display()
            ));
        }
        Ok(Some(joined.canonicalize().unwrap_or(joined).display().to_string()))
    }
}

/// A client error as the agent should read it.
pub fn describe(err: ClientError) -> ToolError {
    match err {
        ClientError::Daemon(reply) => reply.message,
        ClientError::Closed(why) => format!(
            "lost the connection to fugued{why}; the daemon may have restarted. The next call reconnects; retry this one if it should run again"
        ),
        other => other.to_string(),
    }
}
