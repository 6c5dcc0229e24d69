//! Hibernation: an idle agent's pane keeps its place, screen and records while
//! its program is gone, and its agent comes back in the same pane on its
//! recorded session. The session only changes the pane's state and starts the
//! process; the request (`requests::hibernate`) checks the agent is at rest,
//! ends the program and waits for it to be ready again.

use super::spawn::resumed_spec;
use super::*;

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
        if resumed_spec(&pane.spec, &info).is_none() {
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
    /// same pane (same id, output and place), as a restart does.
    pub(super) async fn wake(&mut self, myself: &ActorRef<SessionMsg>, id: PaneId) -> Result<PaneHandle, ErrorReply> {
        let index = self.index_of(id)?;
        if self.panes[index].info.state != PaneState::Hibernated {
            return Ok(self.handle(index, myself));
        }
        if self.panes[index].running() {
            return Err(ErrorReply::invalid(format!(
                "pane {id} is still going to rest; wake it once its program has ended"
            )));
        }
        self.check_running_cap()?;
        let pane = &self.panes[index];
        let spec = resumed_spec(&pane.spec, &pane.info())
            .ok_or_else(|| ErrorReply::invalid(format!("pane {id} has no agent session to resume")))?;
        let launch = self.launch(&spec)?;
        let started = self.start(myself, id, &launch, spec.shell, &pane.output).await?;
        let pane = &mut self.panes[index];
        pane.actor.stop(Some("woken".into()));
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
        tracing::info!(pane = %id, pid = info.pid, "woken");
        self.args.events.send(Event::PaneRestarted(info));
        self.persist(index);
        self.report_counts();
        Ok(self.handle(index, myself))
    }

    fn index_of(&self, id: PaneId) -> Result<usize, ErrorReply> {
        self.panes
            .iter()
            .position(|p| p.info.id == id)
            .ok_or_else(|| ErrorReply::new(ErrorCode::PaneNotFound, format!("no pane {id}")))
    }
}
