//! `SupervisorActor`: the root. It owns the session registry (names, ids, counts),
//! an index from pane id to session for prefix lookups, and the event channel.
//! It never calls into a pane; sessions only cast [`SessionReport`]s to it, so
//! there is no call cycle and the session module does not know this one.

use crate::actors::session::{RestoreCounts, RestoredPane, SessionActor, SessionArgs, SessionMsg, SessionReport};
use crate::agent::hook_socket::HookSockets;
use crate::budget::Budget;
use crate::config::DaemonConfig;
use crate::event_bus::{EventBus, Published};
use crate::handover::SessionHandover;
use crate::store::{Loaded, SessionRecord, Store};
use crate::terminal::process;
use fugue_protocol::now_ms;
use fugue_protocol::target::{self, Candidate};
use fugue_protocol::{
    DaemonInfo, ErrorCode, ErrorReply, Event, PaneId, PaneState, SessionId, SessionInfo, PROTOCOL_VERSION,
};
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};
use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;

/// A resolved session.
#[derive(Clone)]
pub struct SessionRef {
    pub actor: ActorRef<SessionMsg>,
}

pub enum SupervisorMsg {
    CreateSession {
        name: String,
        cwd: PathBuf,
        env: Vec<(String, String)>,
        reply: RpcReplyPort<Result<SessionInfo, ErrorReply>>,
    },
    DestroySession {
        target: String,
        reply: RpcReplyPort<Result<SessionInfo, ErrorReply>>,
    },
    RenameSession {
        target: String,
        name: String,
        reply: RpcReplyPort<Result<(SessionInfo, String), ErrorReply>>,
    },
    ListSessions(RpcReplyPort<Vec<SessionInfo>>),
    AllSessions(RpcReplyPort<Vec<SessionRef>>),
    ResolveSession {
        target: String,
        reply: RpcReplyPort<Result<SessionRef, ErrorReply>>,
    },
    /// A pane by full id or unique id prefix, across all sessions.
    ResolvePane {
        target: String,
        reply: RpcReplyPort<Result<(SessionRef, PaneId), ErrorReply>>,
    },
    Status(RpcReplyPort<DaemonInfo>),
    Subscribe(RpcReplyPort<broadcast::Receiver<Published>>),
    /// The event bus itself (for what sends events of its own).
    Events(RpcReplyPort<EventBus>),
    /// Bring back what the store recorded (at start-up, before clients are served);
    /// replies with the summary line.
    Restore {
        start: Start,
        reply: RpcReplyPort<String>,
    },
    /// Let go of every session and pane for a live upgrade (requests are refused
    /// until a `Restore`).
    Freeze(RpcReplyPort<(Vec<SessionHandover>, Vec<OwnedFd>)>),
    /// Destroy every session; replies with receivers that turn true as each
    /// process is reaped, so the caller can wait for them.
    Shutdown(RpcReplyPort<Vec<crate::terminal::process::Reaped>>),
    /// What a session tells its parent.
    Report(SessionReport),
}

impl From<SessionReport> for SupervisorMsg {
    fn from(report: SessionReport) -> Self {
        Self::Report(report)
    }
}

impl TryFrom<SupervisorMsg> for SessionReport {
    type Error = ();
    fn try_from(msg: SupervisorMsg) -> Result<Self, ()> {
        match msg {
            SupervisorMsg::Report(report) => Ok(report),
            _ => Err(()),
        }
    }
}

struct SessionEntry {
    info: SessionInfo,
    env: Vec<(String, String)>,
    actor: ActorRef<SessionMsg>,
}

impl SessionEntry {
    fn record(&self, order: usize) -> SessionRecord {
        SessionRecord {
            id: self.info.id,
            name: self.info.name.clone(),
            cwd: self.info.cwd.clone(),
            env: self.env.clone(),
            created_at_ms: self.info.created_at_ms,
            order: order as u32,
        }
    }
}

/// Where start-up takes the sessions from.
pub enum Start {
    /// The records; processes a crashed daemon left behind are ended unless
    /// `keep_orphans`.
    Records { loaded: Loaded, keep_orphans: bool },
    /// The daemon this one replaced in place (or this one, taking its state back
    /// after a failed upgrade: `failed` says why).
    Handover {
        from_version: String,
        sessions: Vec<SessionHandover>,
        failed: Option<String>,
    },
}

pub struct SupervisorArgs {
    pub config: Arc<DaemonConfig>,
    pub store: Store,
    /// What clients make the daemon hold (events are charged to it).
    pub memory: Arc<Budget>,
    /// Sandboxed agents' hook sockets, which the daemon's connections serve.
    pub hook_sockets: HookSockets,
    /// The ids fugue's tmux hands out.
    pub tmux_ids: crate::bridge::Ids,
}

pub struct SupervisorState {
    config: Arc<DaemonConfig>,
    store: Store,
    /// What start-up restored, for `daemon status`.
    recovery: String,
    started_at_ms: u64,
    /// In creation order, which is the order `ls` shows.
    sessions: Vec<SessionEntry>,
    pane_sessions: HashMap<PaneId, SessionId>,
    events: EventBus,
    memory: Arc<Budget>,
    hook_sockets: HookSockets,
    tmux_ids: crate::bridge::Ids,
    shutting_down: bool,
    /// Frozen for a live upgrade: sessions are being handed over.
    upgrading: bool,
}

/// How long a session gets to hand back its panes when destroyed.
const SESSION_CALL: Duration = Duration::from_secs(5);
/// How long a session gets to bring back its recorded panes.
const RESTORE_CALL: Duration = Duration::from_secs(30);

/// Has `actor` bring back `panes`; what became of them.
async fn restore_session(actor: &ActorRef<SessionMsg>, panes: Vec<RestoredPane>) -> RestoreCounts {
    match actor
        .call(|reply| SessionMsg::Restore { panes, reply }, Some(RESTORE_CALL))
        .await
    {
        Ok(ractor::rpc::CallResult::Success(counts)) => counts,
        _ => RestoreCounts::default(),
    }
}

/// Whether the process recorded for `pane` is still alive and still the pane's
/// (same start time, `FUGUE_PANE` in its environment).
fn is_orphan(pane: &crate::store::PaneRecord) -> bool {
    let pid = pane.info.pid;
    pid != 0
        && pane.pid_start.is_some()
        && process::start_time(pid) == pane.pid_start
        && process::has_env(pid, "FUGUE_PANE", &pane.info.id.to_string())
}

/// Hangs up and terminates an orphan's process group, then kills it after the
/// grace if the same process is still there.
fn end_orphan(pid: u32, started: Option<u64>, grace: Duration) {
    for signal in [libc::SIGHUP, libc::SIGTERM] {
        process::signal_group(pid as i32, signal);
    }
    tokio::spawn(async move {
        tokio::time::sleep(grace).await;
        if process::start_time(pid) == started {
            process::signal_group(pid as i32, libc::SIGKILL);
        }
    });
}

pub struct SupervisorActor;

impl Actor for SupervisorActor {
    type Msg = SupervisorMsg;
    type State = SupervisorState;
    type Arguments = SupervisorArgs;

    async fn pre_start(
        &self,
        _: ActorRef<SupervisorMsg>,
        args: SupervisorArgs,
    ) -> Result<SupervisorState, ActorProcessingErr> {
        let events = EventBus::new(args.memory.clone());
        Ok(SupervisorState {
            config: args.config,
            store: args.store,
            recovery: String::new(),
            started_at_ms: now_ms(),
            sessions: Vec::new(),
            pane_sessions: HashMap::new(),
            events,
            memory: args.memory,
            hook_sockets: args.hook_sockets,
            tmux_ids: args.tmux_ids,
            shutting_down: false,
            upgrading: false,
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<SupervisorMsg>,
        msg: SupervisorMsg,
        state: &mut SupervisorState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            SupervisorMsg::CreateSession { name, cwd, env, reply } => {
                let _ = reply.send(state.create_session(&myself, name, cwd, env).await);
            }
            SupervisorMsg::DestroySession { target, reply } => {
                let result = match state.find(&target) {
                    Ok(index) => Ok(state.destroy(index).await.0),
                    Err(e) => Err(e),
                };
                let _ = reply.send(result);
            }
            SupervisorMsg::RenameSession { target, name, reply } => {
                let _ = reply.send(state.rename(&target, name));
            }
            SupervisorMsg::ListSessions(reply) => {
                let _ = reply.send(state.sessions.iter().map(|s| s.info.clone()).collect());
            }
            SupervisorMsg::AllSessions(reply) => {
                let _ = reply.send((0..state.sessions.len()).map(|i| state.session_ref(i)).collect());
            }
            SupervisorMsg::ResolveSession { target, reply } => {
                let result = state
                    .serving()
                    .and_then(|_| state.find(&target))
                    .map(|i| state.session_ref(i));
                let _ = reply.send(result);
            }
            SupervisorMsg::ResolvePane { target, reply } => {
                let _ = reply.send(state.serving().and_then(|_| state.resolve_pane(&target)));
            }
            SupervisorMsg::Status(reply) => {
                let _ = reply.send(state.status());
            }
            SupervisorMsg::Subscribe(reply) => {
                let _ = reply.send(state.events.subscribe());
            }
            SupervisorMsg::Events(reply) => {
                let _ = reply.send(state.events.clone());
            }
            SupervisorMsg::Restore { start, reply } => {
                let summary = match start {
                    Start::Records { loaded, keep_orphans } => state.restore(&myself, loaded, keep_orphans).await,
                    Start::Handover {
                        from_version,
                        sessions,
                        failed,
                    } => state.take_over(&myself, from_version, sessions, failed).await,
                };
                state.upgrading = false;
                state.recovery.clone_from(&summary);
                let _ = reply.send(summary);
            }
            SupervisorMsg::Freeze(reply) => {
                state.upgrading = true;
                let _ = reply.send(state.freeze().await);
            }
            SupervisorMsg::Shutdown(reply) => {
                state.shutting_down = true;
                let mut reaped = Vec::new();
                while !state.sessions.is_empty() {
                    reaped.extend(state.destroy(state.sessions.len() - 1).await.1);
                }
                let _ = reply.send(reaped);
            }
            SupervisorMsg::Report(SessionReport::PaneAdded { pane, session }) => {
                state.pane_sessions.insert(pane, session);
            }
            SupervisorMsg::Report(SessionReport::PaneRemoved { pane }) => {
                state.pane_sessions.remove(&pane);
            }
            SupervisorMsg::Report(SessionReport::Counts {
                session,
                panes,
                running,
            }) => {
                if let Some(entry) = state.sessions.iter_mut().find(|s| s.info.id == session) {
                    entry.info.panes = panes;
                    entry.info.running_panes = running;
                }
            }
        }
        Ok(())
    }

    // A session that fails is dropped from the registry; the daemon keeps going.
    async fn handle_supervisor_evt(
        &self,
        _: ActorRef<SupervisorMsg>,
        evt: SupervisionEvent,
        state: &mut SupervisorState,
    ) -> Result<(), ActorProcessingErr> {
        if let SupervisionEvent::ActorFailed(cell, err) = &evt {
            if let Some(index) = state.sessions.iter().position(|s| s.actor.get_id() == cell.get_id()) {
                let entry = state.sessions.remove(index);
                tracing::error!(session = %entry.info.name, reason = %err, "session actor failed");
                state.pane_sessions.retain(|_, s| *s != entry.info.id);
            }
        }
        Ok(())
    }
}

impl SupervisorState {
    /// Refuses new work once shutdown began (sessions are being torn down, so
    /// "not found" would mislead).
    fn serving(&self) -> Result<(), ErrorReply> {
        match (self.shutting_down, self.upgrading) {
            (true, _) => Err(ErrorReply::new(ErrorCode::ShuttingDown, "the daemon is shutting down")),
            (_, true) => Err(ErrorReply::new(
                ErrorCode::ShuttingDown,
                "the daemon is being upgraded; reconnect in a moment",
            )),
            _ => Ok(()),
        }
    }

    async fn create_session(
        &mut self,
        myself: &ActorRef<SupervisorMsg>,
        name: String,
        cwd: PathBuf,
        env: Vec<(String, String)>,
    ) -> Result<SessionInfo, ErrorReply> {
        self.serving()?;
        target::validate_session_name(&name)?;
        if self.sessions.iter().any(|s| s.info.name == name) {
            return Err(ErrorReply::new(
                ErrorCode::NameTaken,
                format!("a session named '{name}' already exists"),
            ));
        }
        crate::terminal::pty::validate_cwd(&cwd)?;
        for (k, v) in &env {
            fugue_protocol::limits::check_env_var(k, v)?;
        }
        let info = SessionInfo {
            id: SessionId::new(),
            name,
            cwd: cwd.display().to_string(),
            panes: 0,
            running_panes: 0,
            created_at_ms: now_ms(),
        };
        let actor = self.spawn_session(myself, &info, cwd, env.clone()).await?;
        self.sessions.push(SessionEntry {
            info: info.clone(),
            env,
            actor,
        });
        self.persist_session(self.sessions.len() - 1);
        self.events.send(Event::SessionCreated(info.clone()));
        Ok(info)
    }

    async fn spawn_session(
        &self,
        myself: &ActorRef<SupervisorMsg>,
        info: &SessionInfo,
        cwd: PathBuf,
        env: Vec<(String, String)>,
    ) -> Result<ActorRef<SessionMsg>, ErrorReply> {
        let args = SessionArgs {
            id: info.id,
            name: info.name.clone(),
            cwd,
            env,
            config: self.config.clone(),
            parent: myself.get_derived(),
            events: self.events.clone(),
            store: self.store.clone(),
            hook_sockets: self.hook_sockets.clone(),
            tmux_ids: self.tmux_ids.clone(),
        };
        let (actor, _) = Actor::spawn_linked(None, SessionActor, args, myself.get_cell())
            .await
            .map_err(|e| ErrorReply::internal(format!("cannot start session actor: {e}")))?;
        Ok(actor)
    }

    fn persist_session(&self, index: usize) {
        if let Some(entry) = self.sessions.get(index) {
            self.store.session(entry.record(index));
        }
    }

    /// Brings back the recorded sessions and their panes. Processes a crashed
    /// daemon left running (recorded pid and start time, still carrying their
    /// `FUGUE_PANE`) are ended unless `keep_orphans`; either way they are counted.
    async fn restore(&mut self, myself: &ActorRef<SupervisorMsg>, loaded: Loaded, keep_orphans: bool) -> String {
        let mut totals = RestoreCounts::default();
        let (mut sessions, mut panes, mut orphans) = (0, 0, 0);
        for (record, records) in loaded.sessions {
            for (pane, _) in &records {
                let was_running = matches!(pane.info.state, PaneState::Running | PaneState::Restarting);
                if was_running && is_orphan(pane) {
                    orphans += 1;
                    tracing::warn!(pane = %pane.info.id, pid = pane.info.pid, kept = keep_orphans, "process left behind by the previous daemon");
                    if !keep_orphans {
                        end_orphan(pane.info.pid, pane.pid_start, self.config.kill_grace);
                    }
                }
            }
            let info = record.info();
            if self
                .sessions
                .iter()
                .any(|s| s.info.name == info.name || s.info.id == info.id)
            {
                continue;
            }
            let Ok(actor) = self
                .spawn_session(myself, &info, PathBuf::from(&record.cwd), record.env.clone())
                .await
            else {
                continue;
            };
            panes += records.len();
            let records = records
                .into_iter()
                .map(|r| RestoredPane::Recorded(Box::new(r)))
                .collect();
            totals.add(restore_session(&actor, records).await);
            sessions += 1;
            self.sessions.push(SessionEntry {
                info,
                env: record.env,
                actor,
            });
        }
        for index in 0..self.sessions.len() {
            self.persist_session(index);
        }
        let mut summary = match (sessions, loaded.moved_aside) {
            (0, None) if orphans == 0 => return String::new(),
            (_, Some(why)) => format!("state database unreadable ({why}); "),
            _ => String::new(),
        };
        summary.push_str(&format!(
            "restored {sessions} sessions, {panes} panes: {} lost, {} restarted, {} exited, {} expired",
            totals.lost, totals.restarted, totals.exited, totals.expired
        ));
        if totals.hibernated > 0 {
            summary.push_str(&format!(", {} hibernated", totals.hibernated));
        }
        if orphans > 0 {
            let what = if keep_orphans { "left running" } else { "ended" };
            summary.push_str(&format!("; {orphans} orphan processes {what}"));
        }
        tracing::info!("{summary}");
        summary
    }

    /// Sessions handed over by the daemon this one replaced, process and all.
    async fn take_over(
        &mut self,
        myself: &ActorRef<SupervisorMsg>,
        from_version: String,
        handed: Vec<SessionHandover>,
        failed: Option<String>,
    ) -> String {
        let mut totals = RestoreCounts::default();
        let mut panes = 0;
        for SessionHandover { record, panes: handed } in handed {
            let info = record.info();
            let actor = match self
                .spawn_session(myself, &info, PathBuf::from(&record.cwd), record.env.clone())
                .await
            {
                Ok(actor) => actor,
                Err(err) => {
                    tracing::error!(session = %info.name, %err, "cannot take over session");
                    continue;
                }
            };
            panes += handed.len();
            let handed = handed.into_iter().map(|p| RestoredPane::Handed(Box::new(p))).collect();
            totals.add(restore_session(&actor, handed).await);
            self.sessions.push(SessionEntry {
                info,
                env: record.env,
                actor,
            });
        }
        let summary = match failed {
            Some(why) => format!("upgrade failed, kept running: {why}"),
            None => format!(
                "upgraded in place from fugued {from_version} to {} (pid {})",
                env!("CARGO_PKG_VERSION"),
                std::process::id()
            ),
        };
        let summary = format!(
            "{summary}: {} sessions, {panes} panes: {} kept running, {} exited, {} lost, {} restarted",
            self.sessions.len(),
            totals.kept,
            totals.exited,
            totals.lost,
            totals.restarted
        );
        tracing::info!("{summary}");
        summary
    }

    /// Lets go of every session for a live upgrade, in order.
    async fn freeze(&mut self) -> (Vec<SessionHandover>, Vec<OwnedFd>) {
        let mut handed = Vec::with_capacity(self.sessions.len());
        let mut fds = Vec::new();
        for (order, entry) in std::mem::take(&mut self.sessions).into_iter().enumerate() {
            let frozen = entry.actor.call(SessionMsg::Freeze, Some(SESSION_CALL)).await;
            let (panes, session_fds) = match frozen {
                Ok(ractor::rpc::CallResult::Success(frozen)) => frozen,
                _ => {
                    tracing::error!(session = %entry.info.name, "session did not hand over its panes");
                    entry.actor.stop(Some("hand-over failed".into()));
                    (Vec::new(), Vec::new())
                }
            };
            fds.extend(session_fds);
            handed.push(SessionHandover {
                record: entry.record(order),
                panes,
            });
        }
        self.pane_sessions.clear();
        (handed, fds)
    }

    fn find(&self, target: &str) -> Result<usize, ErrorReply> {
        let candidates = self.sessions.iter().map(|s| Candidate {
            id: s.info.id.0,
            name: &s.info.name,
        });
        let id = target::resolve(target, candidates, "session", ErrorCode::SessionNotFound)?;
        self.sessions
            .iter()
            .position(|s| s.info.id.0 == id)
            .ok_or_else(|| ErrorReply::internal(format!("session {id} resolved but not listed")))
    }

    fn session_ref(&self, index: usize) -> SessionRef {
        let entry = &self.sessions[index];
        SessionRef {
            actor: entry.actor.clone(),
        }
    }

    fn resolve_pane(&self, target: &str) -> Result<(SessionRef, PaneId), ErrorReply> {
        let candidates = self.pane_sessions.keys().map(|id| Candidate { id: id.0, name: "" });
        let id = match target::resolve(target, candidates, "pane", ErrorCode::PaneNotFound) {
            Ok(id) => PaneId(id),
            Err(e) if e.code == ErrorCode::PaneNotFound => {
                return Err(ErrorReply::new(
                    ErrorCode::PaneNotFound,
                    format!("pane not found: '{target}'; use a pane id, a unique id prefix, or SESSION:INDEX (see `fugue panes`)"),
                ))
            }
            Err(e) => return Err(e),
        };
        let session = self.pane_sessions[&id];
        let index = self
            .sessions
            .iter()
            .position(|s| s.info.id == session)
            .ok_or_else(|| ErrorReply::new(ErrorCode::PaneNotFound, format!("pane not found: {id}")))?;
        Ok((self.session_ref(index), id))
    }

    fn rename(&mut self, target: &str, name: String) -> Result<(SessionInfo, String), ErrorReply> {
        let index = self.find(target)?;
        target::validate_session_name(&name)?;
        if self
            .sessions
            .iter()
            .enumerate()
            .any(|(i, s)| i != index && s.info.name == name)
        {
            return Err(ErrorReply::new(
                ErrorCode::NameTaken,
                format!("a session named '{name}' already exists"),
            ));
        }
        let entry = &mut self.sessions[index];
        let previous = std::mem::replace(&mut entry.info.name, name.clone());
        self.store.session(entry.record(index));
        let _ = entry.actor.cast(SessionMsg::Renamed(name.clone()));
        self.events.send(Event::SessionRenamed {
            id: entry.info.id,
            previous_name: previous.clone(),
            name,
        });
        Ok((entry.info.clone(), previous))
    }

    /// Removes the session at `index` and has it kill its panes.
    async fn destroy(&mut self, index: usize) -> (SessionInfo, Vec<crate::terminal::process::Reaped>) {
        let entry = self.sessions.remove(index);
        self.pane_sessions.retain(|_, s| *s != entry.info.id);
        if !self.shutting_down {
            self.store.delete_session(entry.info.id);
        }
        let keep_records = self.shutting_down;
        let destroy = |reply| SessionMsg::Destroy { keep_records, reply };
        let reaped = match entry.actor.call(destroy, Some(SESSION_CALL)).await {
            Ok(ractor::rpc::CallResult::Success(reaped)) => reaped,
            _ => {
                // Stopping the actor still drops every pane's process guard.
                entry.actor.stop(Some("destroy timed out".into()));
                Vec::new()
            }
        };
        self.events.send(Event::SessionDestroyed {
            id: entry.info.id,
            name: entry.info.name.clone(),
        });
        (entry.info, reaped)
    }

    fn status(&self) -> DaemonInfo {
        DaemonInfo {
            pid: std::process::id(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            protocol_version: PROTOCOL_VERSION,
            socket: self.config.socket.display().to_string(),
            socket_why: self.config.socket_why.clone(),
            started_at_ms: self.started_at_ms,
            sessions: self.sessions.len() as u32,
            panes: self.sessions.iter().map(|s| s.info.panes).sum(),
            running_panes: self.sessions.iter().map(|s| s.info.running_panes).sum(),
            state_path: self.store.path().map(|p| p.display().to_string()).unwrap_or_default(),
            recovery: self.recovery.clone(),
            unpersisted_writes: self.store.failed_writes(),
            client_memory_used: self.memory.used() as u64,
            client_memory_limit: self.memory.limit() as u64,
            agent_looks: crate::agent::tracker::looks_taken(),
        }
    }
}
