//! `SessionActor`: one session. It spawns and supervises its panes, keeps their
//! metadata (order, titles, status) so lists are answered without asking each pane,
//! enforces the running-pane cap, and removes exited panes after their TTL.

mod hibernate;
pub use hibernate::put_to_rest;
mod persist;
pub mod prompt;
mod registry;
mod restart;
mod restore;
mod spawn;

use crate::actors::pane::{Exited, FrozenPane, PaneActor, PaneArgs, PaneInput, PaneMsg, PaneProcess};
use crate::agent::hook_socket::{HookSocket, HookSockets};
use crate::agent::{self, hooks, watch as agent_watch, Tracker};
use crate::config::DaemonConfig;
use crate::event_bus::EventBus;
use crate::handover::{self, PaneHandover};
use crate::store::{PaneRecord, RecordedPane, SavedOutput, Store, SAVED_TEXT_LINES};
use crate::terminal::pane_output::{OutputLimits, PaneOutput, Replayable, SavedText};
use crate::terminal::process::{self, ExitWatch, Reaped};
use crate::terminal::pty::{self, Launch, LaunchRequest};
use crate::terminal::raw_log::OutputLog;
use fugue_protocol::now_ms;
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
/// The longest a changed pane goes unrecorded (see `SessionState::checkpoint`).
const RECORD_AT_LEAST: Duration = Duration::from_secs(30);
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
        self.agent.status(&self.output, self.process()).await
    }

    /// What it was last seen doing: the watcher's last look, or (for a pane
    /// no watcher looks at, or one put to rest) a look now, off the runtime.
    pub async fn agent_seen(&self) -> fugue_protocol::AgentInfo {
        let process = self.process();
        match self.agent.published().filter(|_| !process.exited) {
            Some(info) => info,
            None => self.agent.look_off_runtime(&self.output, process).await,
        }
    }

    /// The pane's process as the agent's tracker takes it. A pane marked
    /// hibernated counts as ended, whatever its program is still doing on its
    /// way out: its agent reads `hibernated` from that moment, as the pane
    /// does (one fact, the pane's state; `status` and `agent` disagreed for
    /// a moment before).
    fn process(&self) -> agent::Proc {
        let info = self.current_info();
        let mut process = agent::Proc::of(&info);
        process.exited |= info.state == PaneState::Hibernated;
        process
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
        /// Where fugue's tmux places it; `None`: a place of its own when the
        /// bridge is on for it.
        tmux: Option<fugue_protocol::TmuxPlace>,
        reply: RpcReplyPort<Result<PaneHandle, ErrorReply>>,
    },
    /// Start the agent pane `pane` ran again on its recorded session, as a new pane.
    ResumeAgent {
        pane: PaneId,
        reply: RpcReplyPort<Result<PaneHandle, ErrorReply>>,
    },
    /// Mark a running agent pane hibernated before its program is ended.
    Hibernate {
        pane: PaneId,
        reply: RpcReplyPort<Result<PaneHandle, ErrorReply>>,
    },
    /// Its agent has been idle for its `hibernate_after`: put it to rest.
    RestDue(PaneId),
    /// The limit that stopped its agent reset (`resume_after_limit`): send
    /// `prompt`, once.
    LimitReset {
        pane: PaneId,
        prompt: String,
        resets_at_ms: u64,
    },
    /// Resume a hibernated pane's agent in the same pane.
    Wake {
        pane: PaneId,
        reply: RpcReplyPort<Result<(PaneHandle, Option<String>), ErrorReply>>,
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
    /// Fugue's tmux moved a pane, renamed its window or session, or changed
    /// its window's layout.
    SetTmux {
        id: PaneId,
        place: fugue_protocol::TmuxPlace,
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
        /// The command line of the process that reported it.
        process_command: Vec<String>,
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
    /// Hibernated, and still at rest.
    pub hibernated: u32,
}

impl RestoreCounts {
    pub fn add(&mut self, other: RestoreCounts) {
        self.kept += other.kept;
        self.lost += other.lost;
        self.restarted += other.restarted;
        self.exited += other.exited;
        self.expired += other.expired;
        self.hibernated += other.hibernated;
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
    pub hook_sockets: HookSockets,
    /// The ids fugue's tmux hands out (one set for the daemon).
    pub tmux_ids: crate::bridge::Ids,
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
    /// A sandboxed agent's hook socket (see [`crate::agent::hook_socket`]).
    hook_socket: Option<HookSocket>,
    /// When the current process started (clock ticks after boot, from /proc), to
    /// recognise it after a crash.
    pid_start: Option<u64>,
    /// When the current process started, for the healthy-run reset.
    run_started: Instant,
    backoff: Duration,
    /// The output's change count when its screen was last recorded.
    checkpointed: u64,
    /// When it was last recorded, and the log offset the record reached.
    recorded: Option<(Instant, u64)>,
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

    /// Takes over a new process of this pane (restarted, or woken from
    /// hibernation): the old actor stops (`why`), the pane runs again.
    fn run(&mut self, started: Started, why: &str) {
        self.actor.stop(Some(why.into()));
        self.info.state = PaneState::Running;
        self.info.pid = started.pid;
        self.info.started_at_ms = now_ms();
        self.info.exit = None;
        self.info.exited_at_ms = None;
        self.pid_start = None;
        self.run_started = Instant::now();
        self.actor = started.actor;
        self.agent = started.agent;
        self.input = started.input;
        self.exit = started.exit;
        self.reaped = started.reaped;
        self.hook_socket = started.hook_socket;
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
    /// A sandboxed agent's own hook socket, open while this process is the pane's.
    hook_socket: Option<HookSocket>,
}

pub struct SessionState {
    args: SessionArgs,
    /// In the session's order; a pane's index is its position here.
    panes: Vec<PaneEntry>,
    /// Told by the panes when output arrives; a checkpoint follows
    /// [`CHECKPOINT`] later, so a quiet session runs no timer.
    output_arrived: Arc<tokio::sync::Notify>,
    checkpoints: tokio::task::JoinHandle<()>,
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
        let output_arrived = Arc::new(tokio::sync::Notify::new());
        let checkpoints = tokio::spawn({
            let (arrived, session) = (output_arrived.clone(), myself.clone());
            async move {
                loop {
                    arrived.notified().await;
                    tokio::time::sleep(CHECKPOINT).await;
                    if session.cast(SessionMsg::Checkpoint).is_err() {
                        return;
                    }
                }
            }
        });
        Ok(SessionState {
            args,
            panes: Vec::new(),
            output_arrived,
            checkpoints,
        })
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<SessionMsg>,
        state: &mut SessionState,
    ) -> Result<(), ActorProcessingErr> {
        state.checkpoints.abort();
        Ok(())
    }

    async fn handle(
        &self,
        myself: ActorRef<SessionMsg>,
        msg: SessionMsg,
        state: &mut SessionState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            SessionMsg::CreatePane { spec, tmux, reply } => {
                let result = state.create_pane(&myself, spec, tmux).await;
                let _ = reply.send(result);
            }
            SessionMsg::ResumeAgent { pane, reply } => {
                let result = state.resume_agent(&myself, pane).await;
                let _ = reply.send(result);
            }
            SessionMsg::Hibernate { pane, reply } => {
                let _ = reply.send(state.hibernate(&myself, pane));
            }
            SessionMsg::RestDue(pane) => state.rest_due(&myself, pane),
            SessionMsg::LimitReset {
                pane,
                prompt,
                resets_at_ms,
            } => state.limit_reset(&myself, pane, prompt, resets_at_ms),
            SessionMsg::Wake { pane, reply } => {
                let result = state.wake(&myself, pane).await;
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
            SessionMsg::SetTmux { id, place, reply } => {
                let _ = reply.send(state.set_tmux(id, place));
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
            SessionMsg::AgentSession {
                pane,
                agent_session,
                process_command,
            } => {
                let index = state.panes.iter().position(|p| p.info.id == pane);
                if let Some(index) = index {
                    let recorded = state.panes[index].info.agent_session.as_ref();
                    let agent_session = with_recorded_conversation(agent_session, recorded, &process_command);
                    if state.panes[index].info.agent_session.as_ref() != Some(&agent_session) {
                        state.panes[index].info.agent_session = Some(agent_session);
                        state.persist(index);
                        let info = state.panes[index].info.clone();
                        state.args.events.send(Event::AgentSessionRecorded(info));
                    }
                }
            }
            SessionMsg::ExpirePane(id) => {
                let expired = state
                    .panes
                    .iter()
                    .position(|p| p.info.id == id && !p.active() && p.info.state != PaneState::Hibernated);
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
    /// Appends a pane whose process (if any) was just started, and tells the
    /// supervisor.
    fn add_pane(
        &mut self,
        info: PaneInfo,
        spec: SpawnSpec,
        started: Started,
        output: Arc<PaneOutput>,
        pid_start: Option<u64>,
    ) {
        let pane = info.id;
        self.panes.push(PaneEntry {
            info,
            spec,
            actor: started.actor,
            agent: started.agent,
            input: started.input,
            exit: started.exit,
            reaped: started.reaped,
            hook_socket: started.hook_socket,
            output,
            pid_start,
            run_started: Instant::now(),
            backoff: RESTART_BACKOFF,
            checkpointed: 0,
            recorded: None,
        });
        let _ = self.args.parent.cast(SessionReport::PaneAdded {
            pane,
            session: self.args.id,
        });
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

/// The agent session a pane's watch reported, with what was recorded of it:
/// a turn that ran in it before (its process was restarted, the daemon too),
/// or in the session this process resumed, whatever id the agent gives it now
/// (its command line names the one resumed).
fn with_recorded_conversation(
    mut reported: fugue_protocol::AgentSession,
    recorded: Option<&fugue_protocol::AgentSession>,
    process_command: &[String],
) -> fugue_protocol::AgentSession {
    if let Some(recorded) = recorded {
        let resumed = process_command.iter().any(|arg| arg.contains(recorded.id.as_str()));
        if recorded.id == reported.id || resumed {
            reported.conversation |= recorded.conversation;
        }
    }
    reported
}

#[cfg(test)]
mod tests;
