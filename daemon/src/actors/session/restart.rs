//! When a pane's process ends: its restart policy, with a backoff doubling from
//! 1 s to 60 s (reset after a minute of healthy running), or the exited TTL.

use super::*;

impl SessionState {
    pub(super) fn pane_exited(&mut self, myself: &ActorRef<SessionMsg>, id: PaneId) {
        let Some(index) = self.panes.iter().position(|p| p.info.id == id && !p.running()) else {
            return;
        };
        let pane = &mut self.panes[index];
        if pane.info.state == PaneState::Hibernated {
            self.hibernated(index);
            return;
        }
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
            // Its wrapper removes the container unless it was killed outright;
            // then this does (a restart's wrapper removes the old one itself).
            if let Some(engine) = crate::sandbox::engine_of(&pane.info.command) {
                crate::sandbox::remove_left_container(engine, id);
            }
        }
        let info = self.panes[index].info();
        self.persist(index);
        self.report_counts();
        self.args.events.send(Event::PaneExited(info));
    }

    /// Starts a restarting pane's process again, with the same spec (an agent
    /// on its recorded session), on the same output (offsets go on), as the
    /// same pane.
    pub(super) async fn respawn(&mut self, myself: &ActorRef<SessionMsg>, id: PaneId) {
        let Some(index) = self
            .panes
            .iter()
            .position(|p| p.info.id == id && p.info.state == PaneState::Restarting)
        else {
            return;
        };
        let pane = &self.panes[index];
        let spec = Self::spec_to_rerun(&pane.spec, &pane.info());
        let started = match self.launch(&spec) {
            Ok(launch) => {
                self.start(myself, id, &launch, spec.shell, &pane.output, pane.info.tmux.as_ref())
                    .await
            }
            Err(err) => Err(err),
        };
        let pane = &mut self.panes[index];
        match started {
            Ok(started) => {
                pane.info.last_exit = pane.exit.borrow().map(|e| e.status);
                pane.info.restarts += 1;
                pane.run(started, "restarted");
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
}
