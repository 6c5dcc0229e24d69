//! Hibernation: an idle agent's pane keeps its place, screen and records while
//! its program is gone, and its agent comes back in the same pane on its
//! recorded session. [`put_to_rest`] checks the agent is at rest, has the
//! session mark the pane and ends the program as a person would (Ctrl-C twice,
//! which Claude Code, Codex, Gemini CLI and Qwen Code take at an empty prompt),
//! then by signals. The session's part only changes the pane's state and
//! starts the process again; the wake request waits until it is ready.

use super::spawn::{can_come_back, fresh_spec, resumed_spec};
use super::*;
use fugue_protocol::{AgentInfo, AgentState};
use tokio::time::timeout;

/// How long the program gets to quit by its own keys before it is signalled.
const QUIT_BY_KEYS: Duration = Duration::from_secs(3);
/// How long an actor gets to answer.
const CALL: Duration = Duration::from_secs(10);

/// Puts the agent of `pane` to rest: refused unless it is idle with no draft;
/// else the pane is marked hibernated and its program ended.
pub async fn put_to_rest(pane: &PaneHandle) -> Result<(), ErrorReply> {
    refuse_unless_at_rest(&pane.current_info(), &pane.agent_status().await)?;
    let id = pane.info.id;
    let marked = pane
        .session
        .call(|reply| SessionMsg::Hibernate { pane: id, reply }, Some(CALL))
        .await;
    let pane = match marked {
        Ok(ractor::rpc::CallResult::Success(marked)) => marked?,
        _ => return Err(ErrorReply::new(ErrorCode::SessionNotFound, "the session went away")),
    };
    end_program(&pane).await
}

impl SessionState {
    /// Marks a running agent pane hibernated, before its program is ended, so
    /// its end is no exit: no restart, no expiry. Refused for a pane that does
    /// not run or whose agent cannot be resumed.
    pub(super) fn hibernate(&mut self, myself: &ActorRef<SessionMsg>, id: PaneId) -> Result<PaneHandle, ErrorReply> {
        let index = self.index_of(id)?;
        let pane = &self.panes[index];
        let info = pane.info();
        if info.state != PaneState::Running || !pane.running() {
            return Err(ErrorReply::invalid(format!(
                "pane {id} is {}; only a running agent can hibernate",
                info.state.as_str()
            )));
        }
        if !can_come_back(&info) {
            let why = match &info.agent_session {
                None => "no agent session is recorded for it yet (Claude Code reports one within a second of starting; Codex, Gemini CLI and Qwen Code through their hooks)".to_string(),
                Some(session) => format!("{} cannot be resumed", session.agent.as_str()),
            };
            return Err(ErrorReply::invalid(format!("pane {id} cannot hibernate: {why}")));
        }
        self.panes[index].info.state = PaneState::Hibernated;
        self.panes[index].agent.set_hibernating(true);
        self.persist(index);
        Ok(self.handle(index, myself))
    }

    /// The policy's time came for the pane's idle agent: it is put to rest, unless
    /// it is no longer at rest (then the next idle spell counts again).
    pub(super) fn rest_due(&mut self, myself: &ActorRef<SessionMsg>, id: PaneId) {
        let Ok(index) = self.index_of(id) else { return };
        if self.panes[index].info.state != PaneState::Running || !self.panes[index].running() {
            return;
        }
        let pane = self.handle(index, myself);
        tokio::spawn(async move {
            match put_to_rest(&pane).await {
                Ok(()) => tracing::info!(pane = %id, "hibernated by policy"),
                Err(err) => tracing::info!(pane = %id, why = %err.message, "not hibernated by policy"),
            }
        });
    }

    /// A hibernated pane's program ended: its screen is recorded, and it stays.
    pub(super) fn hibernated(&mut self, index: usize) {
        let id = self.panes[index].info.id;
        let saved = self.panes[index].saved_output();
        self.args.store.output(id, saved);
        self.persist(index);
        self.report_counts();
        let info = self.panes[index].info();
        tracing::info!(pane = %id, "hibernated");
        self.args.events.send(Event::PaneExited(info));
    }

    /// Starts a hibernated pane's agent again on its recorded session, in the
    /// same pane (same id, output and place), as a restart does; with why, if
    /// it was started afresh (its session had nothing to resume).
    pub(super) async fn wake(
        &mut self,
        myself: &ActorRef<SessionMsg>,
        id: PaneId,
    ) -> Result<(PaneHandle, Option<String>), ErrorReply> {
        let index = self.index_of(id)?;
        if self.panes[index].info.state != PaneState::Hibernated {
            return Ok((self.handle(index, myself), None));
        }
        if self.panes[index].running() {
            return Err(ErrorReply::invalid(format!(
                "pane {id} is still going to rest; wake it once its program has ended"
            )));
        }
        self.check_running_cap()?;
        let pane = &self.panes[index];
        let info = pane.info();
        let (spec, fresh) = match (resumed_spec(&pane.spec, &info), fresh_spec(&pane.spec, &info)) {
            (Some(resumed), _) => (resumed, None),
            (None, Some((fresh, why))) => (fresh, Some(why)),
            (None, None) => return Err(ErrorReply::invalid(format!("pane {id} has no agent session to resume"))),
        };
        let launch = self.launch(&spec)?;
        let started = self
            .start(myself, id, &launch, spec.shell, &pane.output, pane.info.tmux.as_ref())
            .await?;
        let pane = &mut self.panes[index];
        pane.run(started, "woken");
        let info = pane.info();
        tracing::info!(pane = %id, pid = info.pid, fresh = fresh.as_deref().unwrap_or("no"), "woken");
        self.args.events.send(Event::PaneRestarted(info));
        self.persist(index);
        self.report_counts();
        Ok((self.handle(index, myself), fresh))
    }

    pub(super) fn index_of(&self, id: PaneId) -> Result<usize, ErrorReply> {
        self.panes
            .iter()
            .position(|p| p.info.id == id)
            .ok_or_else(|| ErrorReply::new(ErrorCode::PaneNotFound, format!("no pane {id}")))
    }
}

/// An agent may hibernate only at rest: idle, nobody's draft in its input box.
fn refuse_unless_at_rest(info: &PaneInfo, agent: &AgentInfo) -> Result<(), ErrorReply> {
    let id = info.id;
    let Some(kind) = agent.agent else {
        return Err(ErrorReply::invalid(format!(
            "pane {id} runs no agent CLI fugue recognises; only an agent can hibernate"
        )));
    };
    let kind = kind.as_str();
    match agent.state {
        AgentState::Idle | AgentState::Limited => {}
        AgentState::WaitingForPermission | AgentState::WaitingForAnswer => {
            return Err(ErrorReply::new(
                ErrorCode::AgentBlocked,
                format!(
                    "pane {id}: {kind} waits for a person ({}); answer it first",
                    agent.state.as_str()
                ),
            ))
        }
        AgentState::Busy => {
            return Err(ErrorReply::invalid(format!(
                "pane {id}: {kind} is busy (a turn runs); hibernate it once it is idle"
            )))
        }
        other => {
            return Err(ErrorReply::invalid(format!(
                "pane {id}: {kind} is {}, not idle; hibernate it once it is idle",
                other.as_str()
            )))
        }
    }
    if let Some(draft) = &agent.draft {
        return Err(ErrorReply::new(
            ErrorCode::DraftPresent,
            format!(
                "pane {id}: a draft sits in {kind}'s input box ({} characters); send or clear it first",
                draft.chars().count()
            ),
        ));
    }
    Ok(())
}

/// Ends the pane's program: Ctrl-C twice (the second once the first was
/// drawn), then TERM and, after the pane's grace, KILL.
async fn end_program(pane: &PaneHandle) -> Result<(), ErrorReply> {
    let mut exit = pane.exit.clone();
    let mut changes = pane.output.changes();
    changes.borrow_and_update();
    pane.input.send_keys(&["C-c".to_string()]).await?;
    // The first Ctrl-C draws "press again to exit", or ends the program at once.
    let first_taken = async {
        tokio::select! {
            _ = changes.changed() => {}
            _ = exit.wait_for(Option::is_some) => {}
        }
    };
    let _ = timeout(Duration::from_secs(1), first_taken).await;
    if exit.borrow().is_none() {
        pane.input.send_keys(&["C-c".to_string()]).await?;
    }
    if timeout(QUIT_BY_KEYS, exit.wait_for(Option::is_some)).await.is_err() {
        tracing::info!(pane = %pane.info.id, "did not quit by its keys; signalled");
        let kill = |reply| PaneMsg::Kill {
            signal: libc::SIGTERM,
            reply,
        };
        let _ = pane.actor.call(kill, Some(CALL)).await;
    }
    // TERM escalates to KILL after the grace; the exit is published after that.
    timeout(Duration::from_secs(30), exit.wait_for(Option::is_some))
        .await
        .map_err(|_| ErrorReply::internal("the agent's program did not end within 30 s of KILL"))?
        .map_err(|_| ErrorReply::new(ErrorCode::PaneNotFound, "the pane was released while it went to rest"))?;
    Ok(())
}
