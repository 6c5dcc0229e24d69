//! `SessionActor`: one session. It spawns and supervises its panes, keeps their
//! metadata (order, titles, status) so lists are answered without asking each pane,
//! enforces the running-pane cap, and removes exited panes after their TTL.

use crate::actors::pane::{Exited, PaneActor, PaneArgs, PaneInput, PaneMsg};
use crate::config::{now_ms, DaemonConfig};
use crate::terminal::pane_output::{OutputLimits, PaneOutput};
use crate::terminal::process::{self, Reaped};
use crate::terminal::pty::{self, LaunchRequest};
use fugue_protocol::target::{self, Candidate};
use fugue_protocol::{ErrorCode, ErrorReply, Event, PaneId, PaneInfo, PaneState, SessionId, SpawnSpec};
use ractor::{Actor, ActorProcessingErr, ActorRef, DerivedActorRef, RpcReplyPort, SupervisionEvent};
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::{broadcast, watch};

/// Everything a request needs to act on one pane without going through its session.
#[derive(Clone)]
pub struct PaneHandle {
    pub info: PaneInfo,
    pub session: ActorRef<SessionMsg>,
    pub actor: ActorRef<PaneMsg>,
    pub input: PaneInput,
    pub exit: watch::Receiver<Option<Exited>>,
    pub output: Arc<PaneOutput>,
}

impl PaneHandle {
    /// The info as of now: the snapshot's names with the pane's live state.
    pub fn current_info(&self) -> PaneInfo {
        live_info(&self.info, &self.exit, &self.output)
    }
}

/// `info` with the state, exit and size the pane itself records (the one place
/// each is kept).
fn live_info(info: &PaneInfo, exit: &watch::Receiver<Option<Exited>>, output: &PaneOutput) -> PaneInfo {
    let mut info = info.clone();
    info.size = output.size();
    if let Some(exited) = *exit.borrow() {
        info.state = PaneState::Exited;
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
    GetPane {
        lookup: PaneLookup,
        reply: RpcReplyPort<Result<PaneHandle, ErrorReply>>,
    },
    ListPanes(RpcReplyPort<Vec<PaneInfo>>),
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
    /// that turns `Some` when it has been reaped.
    Destroy(RpcReplyPort<Vec<Reaped>>),
    /// A pane's process ended and its output is drained.
    PaneExited(PaneId),
    /// Timer: the pane's exited TTL passed.
    ExpirePane(PaneId),
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
    pub events: broadcast::Sender<Event>,
}

struct PaneEntry {
    /// Names and spawn facts; state, exit and size come from the pane ([`live_info`]).
    info: PaneInfo,
    actor: ActorRef<PaneMsg>,
    input: PaneInput,
    exit: watch::Receiver<Option<Exited>>,
    reaped: Reaped,
    output: Arc<PaneOutput>,
}

impl PaneEntry {
    fn info(&self) -> PaneInfo {
        live_info(&self.info, &self.exit, &self.output)
    }

    fn running(&self) -> bool {
        self.exit.borrow().is_none()
    }
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

    async fn pre_start(&self, _: ActorRef<SessionMsg>, args: SessionArgs) -> Result<SessionState, ActorProcessingErr> {
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
            SessionMsg::GetPane { lookup, reply } => {
                let result = state.find(&lookup).map(|i| state.handle(i, &myself));
                let _ = reply.send(result);
            }
            SessionMsg::ListPanes(reply) => {
                let _ = reply.send(state.panes.iter().map(PaneEntry::info).collect());
            }
            SessionMsg::RenamePane { id, title, reply } => {
                let _ = reply.send(state.rename_pane(id, title));
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
            }
            SessionMsg::Destroy(reply) => {
                let reaped = state.panes.iter().map(|p| p.reaped.clone()).collect();
                while !state.panes.is_empty() {
                    state.remove(state.panes.len() - 1);
                }
                let _ = reply.send(reaped);
                myself.stop(Some("destroyed".into()));
            }
            SessionMsg::PaneExited(id) => state.pane_exited(&myself, id),
            SessionMsg::ExpirePane(id) => {
                let expired = state.panes.iter().position(|p| p.info.id == id && !p.running());
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
    async fn create_pane(&mut self, myself: &ActorRef<SessionMsg>, spec: SpawnSpec) -> Result<PaneHandle, ErrorReply> {
        let config = self.args.config.clone();
        let running = self.running();
        if running >= config.max_running_panes {
            let names: Vec<String> = self
                .panes
                .iter()
                .filter(|p| p.running())
                .map(|p| format!("{} ({})", p.info.index, p.info.title))
                .collect();
            return Err(ErrorReply::new(
                ErrorCode::LimitReached,
                format!(
                    "session '{}' already runs {running} panes, the limit is {}; release or kill one first. running: {}",
                    self.args.name,
                    config.max_running_panes,
                    names.join(", ")
                ),
            ));
        }
        let byte_limit = match spec.output_byte_limit {
            Some(0) => return Err(ErrorReply::invalid("output_byte_limit must be at least 1")),
            Some(n) => usize::try_from(n).map_err(|_| ErrorReply::invalid("output_byte_limit is too large"))?,
            None => crate::terminal::output::DEFAULT_BYTE_LIMIT,
        };
        let mut env = self.args.env.clone();
        env.extend(spec.env.iter().map(|v| (v.name.clone(), v.value.clone())));
        let cwd = spec
            .cwd
            .as_deref()
            .map(PathBuf::from)
            .unwrap_or_else(|| self.args.cwd.clone());
        let launch = pty::validate(LaunchRequest {
            command: spec.command.as_deref(),
            args: &spec.args,
            env,
            cwd: &cwd,
            shell: spec.shell,
            size: spec.size.unwrap_or_default(),
        })?;

        let id = PaneId::new();
        let extra_env = vec![
            ("FUGUE_SOCKET".to_string(), config.socket.display().to_string()),
            ("FUGUE_SESSION".to_string(), self.args.name.clone()),
            ("FUGUE_PANE".to_string(), id.to_string()),
        ];
        let typed = pty::typed_input(&launch);
        let spawned = pty::spawn(launch.clone(), extra_env).await?;
        let pid = spawned.pid;
        let (exit_tx, exit_rx) = watch::channel(None);
        let limits = OutputLimits {
            log_bytes: byte_limit,
            text_lines: config.text_lines,
            text_bytes: config.text_bytes,
            scrollback_lines: config.scrollback_lines,
            scrollback_bytes: config.scrollback_bytes,
        };
        let output = Arc::new(PaneOutput::new(limits, launch.size));
        let (input, input_rx) = PaneInput::channel(id, exit_rx.clone(), output.clone());
        let title = spec
            .title
            .clone()
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| default_title(&launch.display_command));
        let reaped = process::watch_exit(pid, spawned.pidfd);
        let args = PaneArgs {
            id,
            master: spawned.master,
            pid,
            reaped: reaped.clone(),
            output: output.clone(),
            input: input_rx,
            replies: input.replies(),
            typed,
            exit: exit_tx,
            shell: spec.shell,
            kill_grace: config.kill_grace,
        };
        let (actor, _) = Actor::spawn_linked(None, PaneActor, args, myself.get_cell())
            .await
            .map_err(|e| {
                // The pane actor owns the process guard; if it never started, make sure
                // the process does not outlive the failed request.
                process::signal_group(pid as i32, libc::SIGKILL);
                ErrorReply::internal(format!("cannot start pane actor: {e}"))
            })?;
        tokio::spawn({
            let session = myself.clone();
            let mut exit = exit_rx.clone();
            async move {
                if exit.wait_for(|e| e.is_some()).await.is_ok() {
                    let _ = session.cast(SessionMsg::PaneExited(id));
                }
            }
        });
        let info = PaneInfo {
            id,
            session_id: self.args.id,
            session_name: self.args.name.clone(),
            index: self.panes.len() as u32,
            title,
            purpose: spec.purpose.clone().unwrap_or_default(),
            command: launch.display_command.clone(),
            shell: spec.shell,
            cwd: cwd.display().to_string(),
            state: PaneState::Running,
            pid,
            exit: None,
            size: launch.size,
            started_at_ms: now_ms(),
            exited_at_ms: None,
        };
        self.panes.push(PaneEntry {
            info: info.clone(),
            actor,
            input,
            exit: exit_rx,
            reaped,
            output,
        });
        let _ = self.args.parent.cast(SessionReport::PaneAdded {
            pane: id,
            session: self.args.id,
        });
        self.report_counts();
        let _ = self.args.events.send(Event::PaneCreated(info));
        Ok(self.handle(self.panes.len() - 1, myself))
    }

    fn running(&self) -> usize {
        self.panes.iter().filter(|p| p.running()).count()
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
        let info = self.panes[index].info();
        let _ = self.args.events.send(Event::PaneRenamed(info.clone()));
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
        let _ = self.args.events.send(Event::PanesReordered {
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
        let Some(pane) = self.panes.iter().find(|p| p.info.id == id) else {
            return;
        };
        let info = pane.info();
        myself.send_after(self.args.config.exited_ttl, move || SessionMsg::ExpirePane(id));
        self.report_counts();
        let _ = self.args.events.send(Event::PaneExited(info));
    }

    /// Removes a pane: its actor stops, and dropping its process guard hangs up and
    /// (after the grace) kills anything still running.
    fn remove(&mut self, index: usize) {
        let entry = self.panes.remove(index);
        entry.actor.stop(Some("removed".into()));
        self.renumber();
        let _ = self
            .args
            .parent
            .cast(SessionReport::PaneRemoved { pane: entry.info.id });
        self.report_counts();
        let _ = self.args.events.send(Event::PaneRemoved {
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

fn default_title(command: &[String]) -> String {
    let program = command.first().map(String::as_str).unwrap_or("shell");
    let first_word = program.split_whitespace().next().unwrap_or(program);
    first_word.rsplit('/').next().unwrap_or(first_word).to_string()
}
