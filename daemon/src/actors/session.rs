//! `SessionActor`: one session. It spawns and supervises its panes, keeps their
//! metadata (order, titles, status) so lists are answered without asking each pane,
//! enforces the running-pane cap, and removes exited panes after their TTL.

use crate::actors::pane::{Exited, FrozenPane, PaneActor, PaneArgs, PaneInput, PaneMsg, PaneProcess};
use crate::agent::{self, watch as agent_watch, Tracker};
use crate::config::{now_ms, DaemonConfig};
use crate::event_bus::EventBus;
use crate::handover::{self, PaneHandover};
use crate::store::{PaneRecord, RecordedPane, SavedOutput, Store, SAVED_TEXT_LINES};
use crate::terminal::pane_output::{OutputLimits, PaneOutput, SavedText, HOOK_TOKEN_VAR};
use crate::terminal::process::{self, ExitWatch, Reaped};
use crate::terminal::pty::{self, Launch, LaunchRequest};
use crate::terminal::raw_log::OutputLog;
use fugue_protocol::target::{self, Candidate};
use fugue_protocol::{
    ErrorCode, ErrorReply, Event, ExitStatus, PaneId, PaneInfo, PaneState, SessionId, SizePolicy, SpawnSpec,
};
use ractor::{Actor, ActorProcessingErr, ActorRef, DerivedActorRef, RpcReplyPort, SupervisionEvent};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// How often the screens of busy panes are written to the store.
const CHECKPOINT: Duration = Duration::from_secs(2);
/// First wait before a restart; it doubles up to [`RESTART_MAX_BACKOFF`].
const RESTART_BACKOFF: Duration = Duration::from_secs(1);
const RESTART_MAX_BACKOFF: Duration = Duration::from_secs(60);
/// A run this long counts as healthy: the restart count and backoff start over.
const HEALTHY_RUN: Duration = Duration::from_secs(60);

/// Everything a request needs to act on one pane without going through its session.
#[derive(Clone)]
pub struct PaneHandle {
    pub info: PaneInfo,
    pub session: ActorRef<SessionMsg>,
    pub actor: ActorRef<PaneMsg>,
    pub input: PaneInput,
    pub exit: watch::Receiver<Option<Exited>>,
    pub output: Arc<PaneOutput>,
    /// What its agent CLI is doing (see [`crate::agent`]).
    pub agent: Arc<Tracker>,
}

impl PaneHandle {
    /// The info as of now: the snapshot's names with the pane's live state.
    pub fn current_info(&self) -> PaneInfo {
        live_info(&self.info, &self.exit, &self.output)
    }

    /// What the agent CLI in the pane is doing now (see [`Tracker::status`]).
    pub async fn agent_status(&self) -> fugue_protocol::AgentInfo {
        let proc = agent::Proc::of(&self.current_info());
        self.agent.status(&self.output, proc).await
    }

    /// What it was last seen doing: the watcher's last look, or (for a pane
    /// no watcher looks at) a look now, off the runtime.
    pub async fn agent_seen(&self) -> fugue_protocol::AgentInfo {
        match self.agent.published() {
            Some(info) => info,
            None => {
                let proc = agent::Proc::of(&self.current_info());
                self.agent.look_off_runtime(&self.output, proc).await
            }
        }
    }
}

/// `info` with the state, exit and size the pane itself records (the one place
/// each is kept).
/// A lost pane (restored without a process) keeps its state and has no exit; a
/// restarting one shows the exit it is restarting after.
fn live_info(info: &PaneInfo, exit: &watch::Receiver<Option<Exited>>, output: &PaneOutput) -> PaneInfo {
    let mut info = info.clone();
    info.size = output.size();
    if info.state == PaneState::Lost {
        return info;
    }
    if let Some(exited) = *exit.borrow() {
        if info.state == PaneState::Running {
            info.state = PaneState::Exited;
        }
        info.exit = Some(exited.status);
        info.exited_at_ms = Some(exited.at_ms);
    }
    info
}

/// How a request names a pane inside one session.
pub enum PaneLookup {
    Id(PaneId),
    /// An id prefix, an index or a title, as after `SESSION:`.
    Target(String),
}

pub enum SessionMsg {
    CreatePane {
        spec: SpawnSpec,
        reply: RpcReplyPort<Result<PaneHandle, ErrorReply>>,
    },
    /// Start the agent pane `pane` ran again on its recorded session, as a new pane.
    ResumeAgent {
        pane: PaneId,
        reply: RpcReplyPort<Result<PaneHandle, ErrorReply>>,
    },
    GetPane {
        lookup: PaneLookup,
        reply: RpcReplyPort<Result<PaneHandle, ErrorReply>>,
    },
    ListPanes(RpcReplyPort<Vec<PaneInfo>>),
    /// Every pane as a handle, in order (for answers that read each pane).
    PaneHandles(RpcReplyPort<Vec<PaneHandle>>),
    RenamePane {
        id: PaneId,
        title: String,
        reply: RpcReplyPort<Result<PaneInfo, ErrorReply>>,
    },
    Reorder {
        targets: Vec<String>,
        reply: RpcReplyPort<Result<Vec<PaneInfo>, ErrorReply>>,
    },
    ReleasePane {
        id: PaneId,
        reply: RpcReplyPort<Result<(), ErrorReply>>,
    },
    /// The supervisor renamed the session.
    Renamed(String),
    /// Kill and remove every pane, then stop. Replies with a receiver per process
    /// that turns `Some` when it has been reaped. With `keep_records` (the daemon
    /// is stopping) the records stay as they are, with the latest screens, so the
    /// next daemon brings the panes back.
    Destroy {
        keep_records: bool,
        reply: RpcReplyPort<Vec<Reaped>>,
    },
    /// A pane's process ended and its output is drained.
    PaneExited(PaneId),
    /// The agent CLI in a pane made itself known: recorded, to resume it.
    AgentSession {
        pane: PaneId,
        agent_session: fugue_protocol::AgentSession,
    },
    /// Timer: the pane's exited TTL passed.
    ExpirePane(PaneId),
    /// Timer: start a restarting pane's process again.
    Respawn(PaneId),
    /// Timer: record the screens of panes that changed.
    Checkpoint,
    /// Bring back panes (at start-up); replies with what became of them.
    Restore {
        panes: Vec<RestoredPane>,
        reply: RpcReplyPort<RestoreCounts>,
    },
    /// Let go of every pane for a live upgrade, then stop (see [`crate::handover`]).
    Freeze(RpcReplyPort<(Vec<PaneHandover>, Vec<OwnedFd>)>),
}

/// A pane to bring back at start-up.
pub enum RestoredPane {
    /// From the records.
    Recorded(Box<RecordedPane>),
    /// From the daemon this one replaced, process and all.
    Handed(Box<PaneHandover>),
}

/// How long a pane gets to let go of its process for a live upgrade.
const FREEZE_CALL: Duration = Duration::from_secs(5);

/// What [`SessionMsg::Restore`] did with the panes.
#[derive(Debug, Default, Clone, Copy)]
pub struct RestoreCounts {
    /// Handed over running, process and all.
    pub kept: u32,
    pub lost: u32,
    pub restarted: u32,
    pub exited: u32,
    /// Exited too long ago to keep.
    pub expired: u32,
}

impl RestoreCounts {
    pub fn add(&mut self, other: RestoreCounts) {
        self.kept += other.kept;
        self.lost += other.lost;
        self.restarted += other.restarted;
        self.exited += other.exited;
        self.expired += other.expired;
    }
}

/// What a session tells its parent (the supervisor's registry and pane index).
pub enum SessionReport {
    PaneAdded {
        pane: PaneId,
        session: SessionId,
    },
    PaneRemoved {
        pane: PaneId,
    },
    Counts {
        session: SessionId,
        panes: u32,
        running: u32,
    },
}

pub struct SessionArgs {
    pub id: SessionId,
    pub name: String,
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
    pub config: Arc<DaemonConfig>,
    pub parent: DerivedActorRef<SessionReport>,
    pub events: EventBus,
    pub store: Store,
}

struct PaneEntry {
    /// Names and spawn facts; exit and size come from the pane ([`live_info`]);
    /// the state here is `Running` unless the pane is restarting or lost.
    info: PaneInfo,
    /// As the client asked, for restarts and the records.
    spec: SpawnSpec,
    actor: ActorRef<PaneMsg>,
    input: PaneInput,
    exit: watch::Receiver<Option<Exited>>,
    reaped: Reaped,
    output: Arc<PaneOutput>,
    agent: Arc<Tracker>,
    /// When the current process started (clock ticks after boot, from /proc), to
    /// recognise it after a crash.
    pid_start: Option<u64>,
    /// When the current process started, for the healthy-run reset.
    run_started: Instant,
    backoff: Duration,
    /// The output's change count when its screen was last recorded.
    checkpointed: u64,
}

impl PaneEntry {
    fn info(&self) -> PaneInfo {
        live_info(&self.info, &self.exit, &self.output)
    }

    fn running(&self) -> bool {
        self.exit.borrow().is_none()
    }

    /// Running, or about to run again: what the running-pane cap counts.
    fn active(&self) -> bool {
        self.running() || self.info.state == PaneState::Restarting
    }

    fn record(&self) -> PaneRecord {
        PaneRecord {
            info: self.info(),
            spec: self.spec.clone(),
            pid_start: self.pid_start,
        }
    }

    fn saved_output(&self) -> SavedOutput {
        let (screen, text, fed) = self.output.saved(SAVED_TEXT_LINES);
        SavedOutput {
            size: self.output.size(),
            screen,
            text,
            fed,
        }
    }
}

/// A pane's process as started: its actor and the ends the session keeps.
struct Started {
    actor: ActorRef<PaneMsg>,
    /// The agent of this process (a new process starts with nothing known of it).
    agent: Arc<Tracker>,
    input: PaneInput,
    exit: watch::Receiver<Option<Exited>>,
    reaped: Reaped,
    pid: u32,
}

pub struct SessionState {
    args: SessionArgs,
    /// In the session's order; a pane's index is its position here.
    panes: Vec<PaneEntry>,
}

pub struct SessionActor;

impl Actor for SessionActor {
    type Msg = SessionMsg;
    type State = SessionState;
    type Arguments = SessionArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<SessionMsg>,
        args: SessionArgs,
    ) -> Result<SessionState, ActorProcessingErr> {
        myself.send_interval(CHECKPOINT, || SessionMsg::Checkpoint);
        Ok(SessionState {
            args,
            panes: Vec::new(),
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<SessionMsg>,
        msg: SessionMsg,
        state: &mut SessionState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            SessionMsg::CreatePane { spec, reply } => {
                let result = state.create_pane(&myself, spec).await;
                let _ = reply.send(result);
            }
            SessionMsg::ResumeAgent { pane, reply } => {
                let result = state.resume_agent(&myself, pane).await;
                let _ = reply.send(result);
            }
            SessionMsg::GetPane { lookup, reply } => {
                let result = state.find(&lookup).map(|i| state.handle(i, &myself));
                let _ = reply.send(result);
            }
            SessionMsg::ListPanes(reply) => {
                let _ = reply.send(state.panes.iter().map(PaneEntry::info).collect());
            }
            SessionMsg::PaneHandles(reply) => {
                let _ = reply.send((0..state.panes.len()).map(|i| state.handle(i, &myself)).collect());
            }
            SessionMsg::RenamePane { id, title, reply } => {
                let _ = reply.send(state.rename_pane(id, title));
            }
            SessionMsg::Respawn(id) => state.respawn(&myself, id).await,
            SessionMsg::Checkpoint => state.checkpoint(),
            SessionMsg::Restore { panes, reply } => {
                let _ = reply.send(state.restore(&myself, panes).await);
            }
            SessionMsg::Freeze(reply) => {
                let _ = reply.send(state.freeze().await);
                myself.stop(Some("handed over".into()));
            }
            SessionMsg::Reorder { targets, reply } => {
                let _ = reply.send(state.reorder(&targets));
            }
            SessionMsg::ReleasePane { id, reply } => {
                let result = match state.find(&PaneLookup::Id(id)) {
                    Ok(index) => {
                        state.remove(index);
                        Ok(())
                    }
                    Err(e) => Err(e),
                };
                let _ = reply.send(result);
            }
            SessionMsg::Renamed(name) => {
                for pane in &mut state.panes {
                    pane.info.session_name = name.clone();
                }
                state.args.name = name;
                state.persist_all();
            }
            SessionMsg::Destroy { keep_records, reply } => {
                let reaped = state.panes.iter().map(|p| p.reaped.clone()).collect();
                if keep_records {
                    for pane in state.panes.iter().filter(|p| p.running()) {
                        state.args.store.output(pane.info.id, pane.saved_output());
                    }
                    state.args.store = Store::disabled();
                }
                while !state.panes.is_empty() {
                    state.remove(state.panes.len() - 1);
                }
                let _ = reply.send(reaped);
                myself.stop(Some("destroyed".into()));
            }
            SessionMsg::PaneExited(id) => state.pane_exited(&myself, id),
            SessionMsg::AgentSession { pane, agent_session } => {
                let index = state.panes.iter().position(|p| p.info.id == pane);
                if let Some(index) = index {
                    if state.panes[index].info.agent_session.as_ref() != Some(&agent_session) {
                        state.panes[index].info.agent_session = Some(agent_session);
                        state.persist(index);
                    }
                }
            }
            SessionMsg::ExpirePane(id) => {
                let expired = state.panes.iter().position(|p| p.info.id == id && !p.active());
                if let Some(index) = expired {
                    state.remove(index);
                }
            }
        }
        Ok(())
    }

    // Panes are linked to the session so they stop with it, but one pane ending must
    // not end the session (ractor's default would).
    async fn handle_supervisor_evt(
        &self,
        _: ActorRef<SessionMsg>,
        evt: SupervisionEvent,
        state: &mut SessionState,
    ) -> Result<(), ActorProcessingErr> {
        if let SupervisionEvent::ActorFailed(cell, err) = evt {
            tracing::error!(session = %state.args.name, %err, "pane actor failed");
            if let Some(index) = state.panes.iter().position(|p| p.actor.get_id() == cell.get_id()) {
                state.remove(index);
            }
        }
        Ok(())
    }
}

impl SessionState {
    async fn resume_agent(&mut self, myself: &ActorRef<SessionMsg>, pane: PaneId) -> Result<PaneHandle, ErrorReply> {
        let Some(entry) = self.panes.iter().find(|p| p.info.id == pane) else {
            return Err(ErrorReply::new(ErrorCode::PaneNotFound, format!("no pane {pane}")));
        };
        let info = entry.info();
        if entry.active() {
            return Err(ErrorReply::invalid(format!(
                "pane {pane} still runs its agent (pid {}); resume a pane whose agent ended (exited or lost), \
or attach to this one",
                info.pid
            )));
        }
        let Some(session) = info.agent_session.clone() else {
            return Err(ErrorReply::invalid(format!(
                "pane {pane} recorded no agent session to resume (Claude Code reports one within a second of \
starting; Codex and Gemini CLI through their hooks)"
            )));
        };
        let line = agent::resume_command(session.agent, &info.command, &session.id)
            .ok_or_else(|| ErrorReply::invalid(format!("{} has no resume command", session.agent.as_str())))?;
        let mut spec = entry.spec.clone();
        spec.command = line.first().cloned();
        spec.args = line[1..].to_vec();
        spec.cwd = Some(info.cwd.clone());
        spec.title = Some(info.title.clone());
        self.create_pane(myself, spec).await
    }

    async fn create_pane(&mut self, myself: &ActorRef<SessionMsg>, spec: SpawnSpec) -> Result<PaneHandle, ErrorReply> {
        self.check_running_cap()?;
        let config = self.args.config.clone();
        let byte_limit = match spec.output_byte_limit {
            Some(0) => return Err(ErrorReply::invalid("output_byte_limit must be at least 1")),
            Some(n) => usize::try_from(n).map_err(|_| ErrorReply::invalid("output_byte_limit is too large"))?,
            None => crate::terminal::output::DEFAULT_BYTE_LIMIT,
        };
        let launch = self.launch(&spec)?;
        let id = PaneId::new();
        let output = Arc::new(PaneOutput::new(limits(&config, byte_limit), launch.size));
        if let Some(path) = self.args.store.output_log(id) {
            // Making the file is file system work (open, size, reserve, map:
            // ~0.8 ms here): not on the request's path. The log starts in memory
            // and moves to the file moments later.
            let output = output.clone();
            tokio::task::spawn_blocking(move || output.keep_log_in(&path));
        }
        let started = self.start(myself, id, &launch, spec.shell, &output).await?;
        let title = spec
            .title
            .clone()
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| default_title(&launch.display_command));
        let info = PaneInfo {
            id,
            session_id: self.args.id,
            session_name: self.args.name.clone(),
            index: self.panes.len() as u32,
            title,
            purpose: spec.purpose.clone().unwrap_or_default(),
            command: launch.display_command.clone(),
            shell: spec.shell,
            cwd: launch.cwd.display().to_string(),
            state: PaneState::Running,
            pid: started.pid,
            exit: None,
            size: launch.size,
            started_at_ms: now_ms(),
            exited_at_ms: None,
            restart: spec.restart,
            restarts: 0,
            last_exit: None,
            agent_session: None,
        };
        self.panes.push(PaneEntry {
            info: info.clone(),
            spec,
            actor: started.actor,
            agent: started.agent,
            input: started.input,
            exit: started.exit,
            reaped: started.reaped,
            // Read by the store's writer, off the request path.
            pid_start: None,
            run_started: Instant::now(),
            backoff: RESTART_BACKOFF,
            checkpointed: 0,
            output,
        });
        let _ = self.args.parent.cast(SessionReport::PaneAdded {
            pane: id,
            session: self.args.id,
        });
        self.report_counts();
        self.persist(self.panes.len() - 1);
        self.args.events.send(Event::PaneCreated(info));
        Ok(self.handle(self.panes.len() - 1, myself))
    }

    fn check_running_cap(&self) -> Result<(), ErrorReply> {
        let config = &self.args.config;
        let running = self.running();
        if running < config.max_running_panes {
            return Ok(());
        }
        let names: Vec<String> = self
            .panes
            .iter()
            .filter(|p| p.active())
            .map(|p| format!("{} ({})", p.info.index, p.info.title))
            .collect();
        Err(ErrorReply::new(
            ErrorCode::LimitReached,
            format!(
                "session '{}' already runs {running} panes, the limit is {}; release or kill one first. running: {}",
                self.args.name,
                config.max_running_panes,
                names.join(", ")
            ),
        ))
    }

    /// The checked launch for `spec` in this session (its env and cwd).
    fn launch(&self, spec: &SpawnSpec) -> Result<Launch, ErrorReply> {
        let mut env = self.args.env.clone();
        env.extend(spec.env.iter().map(|v| (v.name.clone(), v.value.clone())));
        let cwd = spec
            .cwd
            .as_deref()
            .map(PathBuf::from)
            .unwrap_or_else(|| self.args.cwd.clone());
        pty::validate(LaunchRequest {
            command: spec.command.as_deref(),
            args: &spec.args,
            env,
            cwd: &cwd,
            shell: spec.shell,
            size: spec.size.unwrap_or_default(),
        })
    }

    /// Starts `launch` on a new PTY as pane `id`, writing to `output`.
    async fn start(
        &self,
        myself: &ActorRef<SessionMsg>,
        id: PaneId,
        launch: &Launch,
        shell: bool,
        output: &Arc<PaneOutput>,
    ) -> Result<Started, ErrorReply> {
        let config = &self.args.config;
        let hook_token = output.process_starting();
        let extra_env = vec![
            ("FUGUE_SOCKET".to_string(), config.socket.display().to_string()),
            ("FUGUE_SESSION".to_string(), self.args.name.clone()),
            ("FUGUE_PANE".to_string(), id.to_string()),
            (HOOK_TOKEN_VAR.to_string(), hook_token),
        ];
        let typed = pty::typed_input(launch);
        let size = output.size();
        let command = launch.display_command.clone();
        let mut launch = launch.clone();
        launch.size = size;
        if let Some(dir) = config.socket.parent() {
            crate::agent::hooks::wire(&mut launch, dir);
        }
        let spawned = pty::spawn(launch, extra_env).await?;
        let pid = spawned.pid;
        let exit_watch = process::watch_exit(pid, spawned.pidfd);
        self.start_actor(
            myself,
            id,
            shell,
            output,
            Some((spawned.master, pid, exit_watch, typed)),
            (&command, now_ms()),
        )
        .await
    }

    /// The pane actor for pane `id`, with its process if it has one.
    async fn start_actor(
        &self,
        myself: &ActorRef<SessionMsg>,
        id: PaneId,
        shell: bool,
        output: &Arc<PaneOutput>,
        process: Option<(OwnedFd, u32, ExitWatch, Option<Vec<u8>>)>,
        (command, started_at_ms): (&[String], u64),
    ) -> Result<Started, ErrorReply> {
        let no_process = ExitStatus {
            code: None,
            signal: None,
        };
        let (exit_tx, exit_rx) = match process {
            Some(_) => watch::channel(None),
            None => watch::channel(Some(Exited {
                status: no_process,
                at_ms: now_ms(),
            })),
        };
        let (input, input_rx) = PaneInput::channel(id, exit_rx.clone(), output.clone());
        let (pid, reaped, process) = match process {
            Some((master, pid, exit_watch, typed)) => (
                pid,
                exit_watch.reaped.clone(),
                Some(PaneProcess {
                    master,
                    pid,
                    exit_watch,
                    input: input_rx,
                    replies: input.replies(),
                    typed,
                }),
            ),
            None => (0, watch::channel(Some(no_process)).1, None),
        };
        let args = PaneArgs {
            id,
            output: output.clone(),
            exit: exit_tx,
            shell,
            kill_grace: self.args.config.kill_grace,
            process,
        };
        let (actor, _) = Actor::spawn_linked(None, PaneActor, args, myself.get_cell())
            .await
            .map_err(|e| {
                // The pane actor owns the process guard; if it never started, make sure
                // the process does not outlive the failed request.
                process::signal_group(pid as i32, libc::SIGKILL);
                ErrorReply::internal(format!("cannot start pane actor: {e}"))
            })?;
        let agent = Arc::new(Tracker::default());
        if pid != 0 {
            let watched = agent_watch::Watched {
                pane: id,
                session_id: self.args.id,
                command: command.to_vec(),
                pid,
                started_at_ms,
            };
            let session = myself.clone();
            let on_session = Box::new(move |agent_session| {
                let _ = session.cast(SessionMsg::AgentSession {
                    pane: id,
                    agent_session,
                });
            });
            agent_watch::spawn(
                watched,
                output.clone(),
                agent.clone(),
                exit_rx.clone(),
                self.args.events.clone(),
                on_session,
            );
            tokio::spawn({
                let session = myself.clone();
                let mut exit = exit_rx.clone();
                async move {
                    if exit.wait_for(|e| e.is_some()).await.is_ok() {
                        let _ = session.cast(SessionMsg::PaneExited(id));
                    }
                }
            });
        }
        Ok(Started {
            actor,
            agent,
            input,
            exit: exit_rx,
            reaped,
            pid,
        })
    }

    fn running(&self) -> usize {
        self.panes.iter().filter(|p| p.active()).count()
    }

    fn handle(&self, index: usize, myself: &ActorRef<SessionMsg>) -> PaneHandle {
        let entry = &self.panes[index];
        PaneHandle {
            info: entry.info(),
            session: myself.clone(),
            actor: entry.actor.clone(),
            input: entry.input.clone(),
            exit: entry.exit.clone(),
            output: entry.output.clone(),
            agent: entry.agent.clone(),
        }
    }

    fn find(&self, lookup: &PaneLookup) -> Result<usize, ErrorReply> {
        match lookup {
            PaneLookup::Id(id) => self
                .panes
                .iter()
                .position(|p| p.info.id == *id)
                .ok_or_else(|| ErrorReply::new(ErrorCode::PaneNotFound, format!("pane not found: {id}"))),
            PaneLookup::Target(text) => self.find_target(text),
        }
    }

    /// An index, a title, or an id prefix within this session, optionally written
    /// as `SESSION:PANE` with this session's name.
    fn find_target(&self, text: &str) -> Result<usize, ErrorReply> {
        let name = &self.args.name;
        if let Some((session, pane)) = text.split_once(':') {
            if session != name && !self.args.id.to_string().starts_with(session) {
                return Err(ErrorReply::invalid(format!("pane '{text}' is not in session '{name}'")));
            }
            return self.find_target(pane);
        }
        if let Ok(index) = text.parse::<usize>() {
            return match index < self.panes.len() {
                true => Ok(index),
                false => Err(ErrorReply::new(
                    ErrorCode::PaneNotFound,
                    format!(
                        "pane not found: '{name}:{index}'; session '{name}' has {} panes (0-{})",
                        self.panes.len(),
                        self.panes.len().saturating_sub(1)
                    ),
                )),
            };
        }
        let candidates = self.panes.iter().map(|p| Candidate {
            id: p.info.id.0,
            name: &p.info.title,
        });
        let id = target::resolve(text, candidates, "pane", ErrorCode::PaneNotFound)?;
        self.find(&PaneLookup::Id(PaneId(id)))
    }

    fn rename_pane(&mut self, id: PaneId, title: String) -> Result<PaneInfo, ErrorReply> {
        let index = self.find(&PaneLookup::Id(id))?;
        self.panes[index].info.title = title;
        self.persist(index);
        let info = self.panes[index].info();
        self.args.events.send(Event::PaneRenamed(info.clone()));
        Ok(info)
    }

    /// Applies a new order only if it names every pane exactly once.
    fn reorder(&mut self, targets: &[String]) -> Result<Vec<PaneInfo>, ErrorReply> {
        let mut order = Vec::with_capacity(targets.len());
        for target in targets {
            let index = self.find_target(target)?;
            if order.contains(&index) {
                return Err(ErrorReply::invalid(format!(
                    "pane '{target}' is named twice; name every pane exactly once"
                )));
            }
            order.push(index);
        }
        if order.len() != self.panes.len() {
            let missing: Vec<String> = (0..self.panes.len())
                .filter(|i| !order.contains(i))
                .map(|i| format!("{} ({})", self.panes[i].info.id, self.panes[i].info.title))
                .collect();
            return Err(ErrorReply::invalid(format!(
                "reorder must name all {} panes of session '{}'; missing: {}",
                self.panes.len(),
                self.args.name,
                missing.join(", ")
            )));
        }
        let mut slots: Vec<Option<PaneEntry>> = self.panes.drain(..).map(Some).collect();
        self.panes = order.iter().filter_map(|i| slots[*i].take()).collect();
        self.renumber();
        self.persist_all();
        self.args.events.send(Event::PanesReordered {
            session_id: self.args.id,
            panes: self.panes.iter().map(|p| p.info.id).collect(),
        });
        Ok(self.panes.iter().map(PaneEntry::info).collect())
    }

    fn renumber(&mut self) {
        for (i, pane) in self.panes.iter_mut().enumerate() {
            pane.info.index = i as u32;
        }
    }

    fn pane_exited(&mut self, myself: &ActorRef<SessionMsg>, id: PaneId) {
        let Some(index) = self.panes.iter().position(|p| p.info.id == id && !p.running()) else {
            return;
        };
        let pane = &mut self.panes[index];
        if pane.info.state != PaneState::Running {
            return;
        }
        let status = pane.exit.borrow().map(|e| e.status);
        let healthy = pane.run_started.elapsed() >= HEALTHY_RUN;
        if healthy {
            pane.info.restarts = 0;
            pane.backoff = RESTART_BACKOFF;
        }
        let allowed = pane.spec.max_restarts.is_none_or(|max| pane.info.restarts < max);
        let restart = status.is_some_and(|s| pane.info.restart.restarts_after(&s)) && allowed;
        let saved = pane.saved_output();
        self.args.store.output(id, saved);
        let pane = &mut self.panes[index];
        if restart {
            pane.info.state = PaneState::Restarting;
            let wait = pane.backoff;
            pane.backoff = (pane.backoff * 2).min(RESTART_MAX_BACKOFF);
            myself.send_after(wait, move || SessionMsg::Respawn(id));
            tracing::info!(pane = %id, ?status, after = ?wait, "restarting pane");
        } else {
            myself.send_after(self.args.config.exited_ttl, move || SessionMsg::ExpirePane(id));
        }
        let info = self.panes[index].info();
        self.persist(index);
        self.report_counts();
        self.args.events.send(Event::PaneExited(info));
    }

    /// Starts a restarting pane's process again, with the same spec, on the same
    /// output (offsets go on), as the same pane.
    async fn respawn(&mut self, myself: &ActorRef<SessionMsg>, id: PaneId) {
        let Some(index) = self
            .panes
            .iter()
            .position(|p| p.info.id == id && p.info.state == PaneState::Restarting)
        else {
            return;
        };
        let pane = &self.panes[index];
        let started = match self.launch(&pane.spec) {
            Ok(launch) => self.start(myself, id, &launch, pane.spec.shell, &pane.output).await,
            Err(err) => Err(err),
        };
        let pane = &mut self.panes[index];
        match started {
            Ok(started) => {
                pane.actor.stop(Some("restarted".into()));
                pane.info.last_exit = pane.exit.borrow().map(|e| e.status);
                pane.info.restarts += 1;
                pane.info.state = PaneState::Running;
                pane.info.pid = started.pid;
                pane.info.started_at_ms = now_ms();
                pane.info.exit = None;
                pane.info.exited_at_ms = None;
                pane.pid_start = None;
                pane.run_started = Instant::now();
                pane.actor = started.actor;
                pane.agent = started.agent;
                pane.input = started.input;
                pane.exit = started.exit;
                pane.reaped = started.reaped;
                let info = pane.info();
                self.args.events.send(Event::PaneRestarted(info));
            }
            Err(err) => {
                tracing::warn!(pane = %id, %err, "restart failed; the pane stays exited");
                pane.info.state = PaneState::Running;
                myself.send_after(self.args.config.exited_ttl, move || SessionMsg::ExpirePane(id));
            }
        }
        self.persist(index);
        self.report_counts();
    }

    /// Records the screens of panes whose output changed since the last time.
    fn checkpoint(&mut self) {
        for pane in &mut self.panes {
            let changes = *pane.output.changes().borrow();
            if changes == pane.checkpointed || !pane.running() {
                continue;
            }
            pane.checkpointed = changes;
            self.args.store.output(pane.info.id, pane.saved_output());
        }
    }

    fn persist(&self, index: usize) {
        if let Some(pane) = self.panes.get(index) {
            self.args.store.pane(pane.record());
        }
    }

    fn persist_all(&self) {
        for index in 0..self.panes.len() {
            self.persist(index);
        }
    }

    /// Brings back panes: handed over by the daemon this one replaced (running
    /// ones keep their process), or recorded (see [`SessionState::restore_pane`]).
    async fn restore(&mut self, myself: &ActorRef<SessionMsg>, panes: Vec<RestoredPane>) -> RestoreCounts {
        let mut counts = RestoreCounts::default();
        for pane in panes {
            match pane {
                RestoredPane::Recorded(recorded) => {
                    let (record, saved) = *recorded;
                    let output = self.recorded_output(&record, saved.as_ref());
                    self.restore_pane(myself, record, Arc::new(output), &mut counts).await;
                }
                RestoredPane::Handed(handed) => self.take_over(myself, *handed, &mut counts).await,
            }
        }
        self.renumber();
        self.persist_all();
        self.report_counts();
        counts
    }

    /// A recorded pane's output: its raw log as the daemon before this one left
    /// it (every byte read, even through a crash) on top of the last
    /// checkpoint, or the checkpoint alone when the log cannot be read.
    fn recorded_output(&self, record: &PaneRecord, saved: Option<&SavedOutput>) -> PaneOutput {
        let limits = spec_limits(&self.args.config, &record.spec);
        let Some(path) = self.args.store.output_log(record.info.id) else {
            return PaneOutput::new(limits, record.info.size);
        };
        match OutputLog::open_kept(&path) {
            Ok(log) => {
                let size = saved.map_or(record.info.size, |s| s.size);
                let text = saved.map(|s| SavedText {
                    lines: s.text.clone(),
                    fed: s.fed,
                });
                return PaneOutput::recover(limits, size, text.as_ref(), log);
            }
            Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
                tracing::warn!(pane = %record.info.id, %err, "the pane's output log is unreadable; its last checkpoint is shown");
            }
            Err(_) => {}
        }
        let output = match saved {
            Some(saved) => PaneOutput::from_saved(limits, saved.size, &saved.screen, &saved.text),
            None => PaneOutput::new(limits, record.info.size),
        };
        output.keep_log_in(&path);
        output
    }

    /// A pane handed over by the previous daemon: a running one goes on with its
    /// process and PTY; any other is restored like a recorded one.
    async fn take_over(&mut self, myself: &ActorRef<SessionMsg>, handed: PaneHandover, counts: &mut RestoreCounts) {
        let PaneHandover {
            mut info,
            spec,
            pid_start,
            master_fd,
            exit,
            output,
            policy,
        } = handed;
        let limits = spec_limits(&self.args.config, &spec);
        let output =
            Arc::new(PaneOutput::from_snapshot(limits, output).unwrap_or_else(|| PaneOutput::new(limits, info.size)));
        if let Some(path) = self.args.store.output_log(info.id) {
            output.keep_log_in(&path);
        }
        let master = master_fd.and_then(handover::inherited);
        let live = match (master, exit, info.state) {
            (Some(master), None, PaneState::Running) => match process::open_pidfd(info.pid) {
                Ok(pidfd) => Some((master, info.pid, process::watch_exit(info.pid, pidfd), None)),
                Err(err) => {
                    tracing::warn!(pane = %info.id, pid = info.pid, %err, "handed-over process is gone");
                    None
                }
            },
            _ => None,
        };
        let Some(process) = live else {
            if let (Some((status, at_ms)), PaneState::Running) = (exit, info.state) {
                // It ended while the handover was made.
                info.state = PaneState::Exited;
                info.exit = Some(status);
                info.exited_at_ms = Some(at_ms);
            }
            let record = PaneRecord { info, spec, pid_start };
            return self.restore_pane(myself, record, output, counts).await;
        };
        let id = info.id;
        match self
            .start_actor(
                myself,
                id,
                spec.shell,
                &output,
                Some(process),
                (&info.command, info.started_at_ms),
            )
            .await
        {
            Ok(started) => {
                counts.kept += 1;
                let _ = started.actor.cast(PaneMsg::SetSizePolicy {
                    policy,
                    reply: ractor::concurrency::oneshot().0.into(),
                });
                self.add_restored(info, spec, started, output, pid_start);
            }
            Err(err) => tracing::warn!(pane = %id, %err, "cannot take over pane"),
        }
    }

    /// A pane as recorded: an exited one as it was (until its TTL), one that was
    /// running started again if its policy says so, otherwise `lost` with its last
    /// screen and text.
    async fn restore_pane(
        &mut self,
        myself: &ActorRef<SessionMsg>,
        record: PaneRecord,
        output: Arc<PaneOutput>,
        counts: &mut RestoreCounts,
    ) {
        let ttl = self.args.config.exited_ttl.as_millis() as u64;
        let PaneRecord { mut info, spec, .. } = record;
        let id = info.id;
        let was_running = matches!(info.state, PaneState::Running | PaneState::Restarting);
        if !was_running && info.exited_at_ms.unwrap_or(0) + ttl < now_ms() {
            counts.expired += 1;
            self.args.store.delete_pane(id);
            return;
        }
        let restart = was_running && spec.restart != fugue_protocol::RestartPolicy::Never;
        let started = match restart {
            true => match self.launch(&spec) {
                Ok(launch) => self.start(myself, id, &launch, spec.shell, &output).await,
                Err(err) => Err(err),
            },
            false => Err(ErrorReply::internal("not restarted")),
        };
        if let Ok(started) = started {
            counts.restarted += 1;
            info.state = PaneState::Running;
            info.pid = started.pid;
            info.restarts += 1;
            info.started_at_ms = now_ms();
            info.exit = None;
            info.exited_at_ms = None;
            let pid_start = None;
            self.add_restored(info, spec, started, output, pid_start);
            return;
        }
        let remaining = match (was_running, info.state) {
            (true, _) => {
                counts.lost += 1;
                info.state = PaneState::Lost;
                info.exited_at_ms = Some(now_ms());
                ttl
            }
            // Lost before the last restart: still lost, until its TTL.
            (false, PaneState::Lost) => {
                counts.lost += 1;
                (info.exited_at_ms.unwrap_or(0) + ttl).saturating_sub(now_ms())
            }
            (false, _) => {
                counts.exited += 1;
                info.state = PaneState::Running;
                (info.exited_at_ms.unwrap_or(0) + ttl).saturating_sub(now_ms())
            }
        };
        let mut started = match self.start_actor(myself, id, spec.shell, &output, None, (&[], 0)).await {
            Ok(started) => started,
            Err(err) => {
                tracing::warn!(pane = %id, %err, "cannot restore pane");
                return;
            }
        };
        // An exited pane's exit is the recorded one, not the restore's.
        if let Some((status, at_ms)) = info.exit.zip(info.exited_at_ms) {
            started.exit = watch::channel(Some(Exited { status, at_ms })).1;
        }
        myself.send_after(Duration::from_millis(remaining), move || SessionMsg::ExpirePane(id));
        self.add_restored(info, spec, started, output, None);
    }

    fn add_restored(
        &mut self,
        mut info: PaneInfo,
        spec: SpawnSpec,
        started: Started,
        output: Arc<PaneOutput>,
        pid_start: Option<u64>,
    ) {
        let id = info.id;
        info.session_id = self.args.id;
        info.session_name = self.args.name.clone();
        self.panes.push(PaneEntry {
            info,
            spec,
            actor: started.actor,
            agent: started.agent,
            input: started.input,
            exit: started.exit,
            reaped: started.reaped,
            output,
            pid_start,
            run_started: Instant::now(),
            backoff: RESTART_BACKOFF,
            checkpointed: 0,
        });
        let _ = self.args.parent.cast(SessionReport::PaneAdded {
            pane: id,
            session: self.args.id,
        });
    }

    /// Lets go of every pane for a live upgrade, in order, without touching the
    /// records: what the next daemon needs, and the PTY masters it inherits.
    async fn freeze(&mut self) -> (Vec<PaneHandover>, Vec<OwnedFd>) {
        let mut handed = Vec::with_capacity(self.panes.len());
        let mut fds = Vec::new();
        for pane in std::mem::take(&mut self.panes) {
            let info = pane.info();
            let frozen = match pane.actor.call(PaneMsg::Freeze, Some(FREEZE_CALL)).await {
                Ok(ractor::rpc::CallResult::Success(frozen)) => frozen,
                _ => {
                    tracing::warn!(pane = %info.id, "pane did not hand over; the next daemon shows it lost");
                    FrozenPane {
                        master: None,
                        exit: None,
                        policy: SizePolicy::Latest,
                    }
                }
            };
            let exit = match frozen.exit {
                Some(status) => Some((status, now_ms())),
                None => info.exit.zip(info.exited_at_ms),
            };
            let master_fd = frozen.master.as_ref().map(|m| m.as_raw_fd());
            fds.extend(frozen.master);
            handed.push(PaneHandover {
                info,
                spec: pane.spec,
                pid_start: pane.pid_start,
                master_fd,
                exit,
                output: pane.output.snapshot(),
                policy: frozen.policy,
            });
        }
        (handed, fds)
    }

    /// Removes a pane: its actor stops, and dropping its process guard hangs up and
    /// (after the grace) kills anything still running.
    fn remove(&mut self, index: usize) {
        let entry = self.panes.remove(index);
        entry.actor.stop(Some("removed".into()));
        self.args.store.delete_pane(entry.info.id);
        self.renumber();
        // The panes after it moved up one.
        for later in index..self.panes.len() {
            self.persist(later);
        }
        let _ = self
            .args
            .parent
            .cast(SessionReport::PaneRemoved { pane: entry.info.id });
        self.report_counts();
        self.args.events.send(Event::PaneRemoved {
            id: entry.info.id,
            session_id: self.args.id,
        });
    }

    fn report_counts(&self) {
        let _ = self.args.parent.cast(SessionReport::Counts {
            session: self.args.id,
            panes: self.panes.len() as u32,
            running: self.running() as u32,
        });
    }
}

/// The buffer sizes of a pane started from `spec`.
fn spec_limits(config: &DaemonConfig, spec: &SpawnSpec) -> OutputLimits {
    let log_bytes = spec
        .output_byte_limit
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(crate::terminal::output::DEFAULT_BYTE_LIMIT);
    limits(config, log_bytes)
}

fn limits(config: &DaemonConfig, log_bytes: usize) -> OutputLimits {
    OutputLimits {
        log_bytes,
        text_lines: config.text_lines,
        text_bytes: config.text_bytes,
        scrollback_lines: config.scrollback_lines,
        scrollback_bytes: config.scrollback_bytes,
    }
}

/// A pane's title when none was given: its program's file name, cleaned like
/// every name the daemon hands out (a program may be named anything).
fn default_title(command: &[String]) -> String {
    let program = command.first().map(String::as_str).unwrap_or("shell");
    let first_word = program.split_whitespace().next().unwrap_or(program);
    let name = first_word.rsplit('/').next().unwrap_or(first_word);
    match fugue_protocol::limits::clean_label(name, fugue_protocol::limits::MAX_TITLE_CHARS) {
        clean if clean.is_empty() => "program".into(),
        clean => clean,
    }
}
