//! Panes from before: restored from the records after a restart or crash, taken
//! over from the previous daemon in a live upgrade, and frozen for the next one.

use super::*;

impl SessionState {
    /// Brings back panes: handed over by the daemon this one replaced (running
    /// ones keep their process), or recorded (see [`SessionState::restore_pane`]).
    pub(super) async fn restore(&mut self, myself: &ActorRef<SessionMsg>, panes: Vec<RestoredPane>) -> RestoreCounts {
        let mut counts = RestoreCounts::default();
        for pane in panes {
            let place = match &pane {
                RestoredPane::Recorded(recorded) => recorded.0.info.tmux.as_ref(),
                RestoredPane::Handed(handed) => handed.info.tmux.as_ref(),
            };
            if let Some(place) = place {
                // Its tmux ids are never handed out again.
                self.args.tmux_ids.observe(self.args.id, place);
            }
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
    pub(super) fn recorded_output(&self, record: &PaneRecord, saved: Option<&SavedOutput>) -> PaneOutput {
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
    pub(super) async fn take_over(
        &mut self,
        myself: &ActorRef<SessionMsg>,
        handed: PaneHandover,
        counts: &mut RestoreCounts,
    ) {
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
    pub(super) async fn restore_pane(
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
        if info.state == PaneState::Hibernated {
            // It stays at rest (never expiring) until a prompt or a person wakes it.
            return self.restore_hibernated(myself, info, spec, output, counts).await;
        }
        if !was_running && info.exited_at_ms.unwrap_or(0) + ttl < now_ms() {
            counts.expired += 1;
            self.args.store.delete_pane(id);
            return;
        }
        let restart = was_running && spec.restart != fugue_protocol::RestartPolicy::Never;
        let started = match restart {
            // An agent CLI that recorded its session comes back on it.
            true => match self.launch(&Self::spec_to_rerun(&spec, &info)) {
                Ok(launch) => {
                    self.start(myself, id, &launch, spec.shell, &output, info.tmux.as_ref())
                        .await
                }
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

    async fn restore_hibernated(
        &mut self,
        myself: &ActorRef<SessionMsg>,
        info: PaneInfo,
        spec: SpawnSpec,
        output: Arc<PaneOutput>,
        counts: &mut RestoreCounts,
    ) {
        let id = info.id;
        let mut started = match self.start_actor(myself, id, spec.shell, &output, None, (&[], 0)).await {
            Ok(started) => started,
            Err(err) => {
                tracing::warn!(pane = %id, %err, "cannot restore pane");
                return;
            }
        };
        let ended = info.exit.unwrap_or(fugue_protocol::ExitStatus {
            code: None,
            signal: None,
        });
        let at_ms = info.exited_at_ms.unwrap_or_else(now_ms);
        started.exit = watch::channel(Some(Exited { status: ended, at_ms })).1;
        started.agent.set_hibernating(true);
        counts.hibernated += 1;
        self.add_restored(info, spec, started, output, None);
    }

    pub(super) fn add_restored(
        &mut self,
        mut info: PaneInfo,
        spec: SpawnSpec,
        started: Started,
        output: Arc<PaneOutput>,
        pid_start: Option<u64>,
    ) {
        info.session_id = self.args.id;
        info.session_name = self.args.name.clone();
        self.add_pane(info, spec, started, output, pid_start);
    }

    /// Lets go of every pane for a live upgrade, in order, without touching the
    /// records: what the next daemon needs, and the PTY masters it inherits.
    pub(super) async fn freeze(&mut self) -> (Vec<PaneHandover>, Vec<OwnedFd>) {
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
}
