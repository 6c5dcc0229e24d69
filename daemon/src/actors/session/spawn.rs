//! Starting a pane's process: the launch (command, environment, size, the
//! agent hooks), the running-pane cap, the pane actor and the watcher of its
//! process, and resuming an agent CLI on its recorded session.

use super::*;
use fugue_protocol::TmuxPlace;

impl SessionState {
    pub(super) async fn resume_agent(
        &mut self,
        myself: &ActorRef<SessionMsg>,
        pane: PaneId,
    ) -> Result<PaneHandle, ErrorReply> {
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
        if !session.conversation {
            return Err(ErrorReply::invalid(format!(
                "pane {pane}'s agent session {} has no conversation (no turn ran in it): nothing to resume",
                session.id
            )));
        }
        let spec = resumed_spec(&entry.spec, &info)
            .ok_or_else(|| ErrorReply::invalid(format!("{} has no resume command", session.agent.as_str())))?;
        // The agent comes back where it was in fugue's tmux.
        let tmux = info.tmux.clone();
        self.create_pane(myself, spec, tmux).await
    }

    /// What a pane runs when its process is started again (its restart policy,
    /// while the daemon runs or when it starts again): an agent CLI that
    /// recorded its session is resumed on it, not started on a fresh one.
    pub(super) fn spec_to_rerun(spec: &SpawnSpec, info: &PaneInfo) -> SpawnSpec {
        resumed_spec(spec, info).unwrap_or_else(|| spec.clone())
    }

    pub(super) async fn create_pane(
        &mut self,
        myself: &ActorRef<SessionMsg>,
        spec: SpawnSpec,
        tmux: Option<TmuxPlace>,
    ) -> Result<PaneHandle, ErrorReply> {
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
            let work = move || output.keep_log_in(&path);
            tokio::spawn(crate::sync::off_runtime(&crate::sync::FILE_WORK, work));
        }
        let title = spec
            .title
            .clone()
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| default_title(&launch.display_command));
        let tmux = tmux.or_else(|| {
            crate::bridge::wants_bridge(&launch, config.tmux_bridge).then(|| {
                crate::bridge::root_place(&self.args.tmux_ids, self.args.id, &self.args.name, &title, launch.size)
            })
        });
        let started = self
            .start(myself, id, &launch, spec.shell, &output, tmux.as_ref())
            .await?;
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
            tmux,
        };
        // pid_start is read by the store's writer, off the request path.
        self.add_pane(info.clone(), spec, started, output, None);
        self.report_counts();
        self.persist(self.panes.len() - 1);
        self.args.events.send(Event::PaneCreated(info));
        Ok(self.handle(self.panes.len() - 1, myself))
    }

    pub(super) fn check_running_cap(&self) -> Result<(), ErrorReply> {
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
    pub(super) fn launch(&self, spec: &SpawnSpec) -> Result<Launch, ErrorReply> {
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
    pub(super) async fn start(
        &self,
        myself: &ActorRef<SessionMsg>,
        id: PaneId,
        launch: &Launch,
        shell: bool,
        output: &Arc<PaneOutput>,
        tmux: Option<&TmuxPlace>,
    ) -> Result<Started, ErrorReply> {
        let config = &self.args.config;
        let hook_token = hooks::new_hook_token();
        output.process_starting();
        let mut extra_env = vec![
            ("FUGUE_SOCKET".to_string(), config.socket.display().to_string()),
            ("FUGUE_SESSION".to_string(), self.args.name.clone()),
            ("FUGUE_PANE".to_string(), id.to_string()),
            (hooks::HOOK_TOKEN_VAR.to_string(), hook_token.clone()),
        ];
        if let (Some(place), Some(runtime)) = (tmux, config.socket.parent()) {
            if !crate::agent::detect::is_sandboxed(&launch.display_command) {
                extra_env.extend(crate::bridge::bridge_env(runtime, place, launch));
            }
        }
        let typed = pty::typed_input(launch);
        let size = output.size();
        let command = launch.display_command.clone();
        let mut launch = launch.clone();
        launch.size = size;
        if let Some(dir) = config.socket.parent() {
            hooks::wire(&mut launch, dir);
            if config.hibernate_after.app_server(fugue_protocol::AgentKind::Codex) {
                crate::agent::app_server::wire(&mut launch, dir, id);
            }
        }
        let hook_socket = self.sandbox_hook_socket(&mut launch, id);
        let spawned = pty::spawn(launch, extra_env).await?;
        let pid = spawned.pid;
        let exit_watch = process::watch_exit(pid, spawned.pidfd);
        let started = self
            .start_actor(
                myself,
                id,
                shell,
                output,
                Some((spawned.master, pid, exit_watch, typed)),
                (&command, now_ms()),
            )
            .await?;
        started.agent.set_hook_token(hook_token);
        Ok(Started { hook_socket, ..started })
    }

    /// A sandboxed agent's hook socket, with its hooks wired to it; `None`
    /// for any other launch, or when the socket cannot be made (the agent then
    /// runs without hooks, its state read from its screen, and the log says why).
    fn sandbox_hook_socket(&self, launch: &mut Launch, id: PaneId) -> Option<HookSocket> {
        if !hooks::wants_sandbox_hooks(launch) {
            return None;
        }
        let runtime = self.args.config.socket.parent()?;
        // Named for the process too: a restart's socket is made before the
        // one it replaces is closed.
        let unique = uuid::Uuid::new_v4().simple().to_string();
        let dir = runtime.join("sandbox-hooks").join(format!("{id}-{}", &unique[..8]));
        let opened = self
            .args
            .hook_sockets
            .open(&dir, &id.to_string())
            .and_then(|socket| hooks::wire_sandboxed(launch, socket.dir()).map(|()| socket));
        match opened {
            Ok(socket) => Some(socket),
            Err(err) => {
                tracing::warn!(%err, dir = %dir.display(), pane = %id, "cannot make a sandboxed agent's hook socket; its hooks are off");
                None
            }
        }
    }

    /// The pane actor for pane `id`, with its process if it has one.
    pub(super) async fn start_actor(
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
            output_arrived: self.output_arrived.clone(),
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
        // A Codex TUI's app-server (started beside it, or kept across a live
        // upgrade): its events read the agent first.
        let runtime = self.args.config.socket.parent();
        if let Some(runtime) = runtime.filter(|_| pid != 0 && crate::agent::app_server::is_codex_tui(command)) {
            let server = Arc::new(crate::agent::app_server::AppServer::default());
            agent.set_app_server(server.clone());
            let tracker = agent.clone();
            crate::agent::app_server::follow(
                crate::agent::app_server::socket_of(runtime, id),
                server,
                Arc::new(move || tracker.app_server_changed()),
                exit_rx.clone(),
            );
        }
        if pid != 0 {
            let watched = agent_watch::Watched {
                pane: id,
                session_id: self.args.id,
                command: command.to_vec(),
                pid,
                started_at_ms,
                rest_after: agent::detect_kind(command, &[]).and_then(|kind| self.args.config.hibernate_after.of(kind)),
                resume_prompt: agent::detect_kind(command, &[])
                    .and_then(|kind| self.args.config.hibernate_after.resume_after_limit(kind)),
            };
            let session = myself.clone();
            let process_command = command.to_vec();
            let on_session = Box::new(move |agent_session| {
                let _ = session.cast(SessionMsg::AgentSession {
                    pane: id,
                    agent_session,
                    process_command: process_command.clone(),
                });
            });
            let session = myself.clone();
            let on_rest = Box::new(move || {
                let _ = session.cast(SessionMsg::RestDue(id));
            });
            let session = myself.clone();
            let on_reset = Box::new(move |prompt, resets_at_ms| {
                let _ = session.cast(SessionMsg::LimitReset {
                    pane: id,
                    prompt,
                    resets_at_ms,
                });
            });
            agent_watch::spawn(
                watched,
                output.clone(),
                agent.clone(),
                exit_rx.clone(),
                self.args.events.clone(),
                agent_watch::Told {
                    on_session,
                    on_rest,
                    on_reset,
                },
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
            hook_socket: None,
        })
    }
}

/// `spec` turned into its agent's resume command on the session `info`
/// recorded (`claude --resume ID`, `codex resume ID`, ...), in the pane's
/// directory with its title; `None` without a recorded session with a
/// conversation in it (nothing to resume) or a resume command for that agent.
pub(super) fn resumed_spec(spec: &SpawnSpec, info: &PaneInfo) -> Option<SpawnSpec> {
    let session = info.agent_session.as_ref().filter(|s| s.conversation)?;
    let line = agent::resume_command(session.agent, &info.command, &session.id)?;
    Some(in_place(spec, info, line))
}

/// Whether the agent of `info` can come back in its pane: resumed on its
/// recorded session, or, when no turn ran in that session, started afresh.
pub(super) fn can_come_back(info: &PaneInfo) -> bool {
    info.agent_session
        .as_ref()
        .is_some_and(|s| agent::resume_command(s.agent, &info.command, &s.id).is_some())
}

/// The pane's own command (`spec`, as it was first started) again, for an
/// agent whose recorded session has nothing to resume; with why.
pub(super) fn fresh_spec(spec: &SpawnSpec, info: &PaneInfo) -> Option<(SpawnSpec, String)> {
    let session = info.agent_session.as_ref().filter(|s| !s.conversation)?;
    let why = format!(
        "no turn ran in its recorded session {}: {} started afresh, as the pane first ran it",
        session.id,
        session.agent.as_str()
    );
    let mut fresh = spec.clone();
    fresh.cwd = Some(info.cwd.clone());
    fresh.title = Some(info.title.clone());
    Some((fresh, why))
}

/// `spec` running `line` in the pane's directory, with its title.
fn in_place(spec: &SpawnSpec, info: &PaneInfo, line: Vec<String>) -> SpawnSpec {
    let mut spec = spec.clone();
    spec.command = line.first().cloned();
    spec.args = line[1..].to_vec();
    spec.cwd = Some(info.cwd.clone());
    spec.title = Some(info.title.clone());
    spec
}
