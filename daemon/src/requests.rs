//! One function per request: resolve the target, ask the actor that owns the answer.
//!
//! This runs on the connection's request tasks, never inside an actor, so a slow
//! request (a wait, a big paste) holds up nobody but its own caller.

use crate::connection::{Attachment, ConnectionState};
use crate::pane::{PaneMsg, INPUT_CHUNK};
use crate::pane_output::Subscription;
use crate::session::{PaneHandle, PaneLookup, SessionMsg};
use crate::supervisor::{SessionRef, SupervisorMsg};
use fugue_protocol::keys::encode_key;
use fugue_protocol::signals::parse_signal;
use fugue_protocol::target::PaneTarget;
use fugue_protocol::{
    CaptureResult, CaptureWhat, ErrorCode, ErrorReply, Event, MatchOn, OutputChunk, PaneId, PaneSize, ReadMode,
    Request, Response, ServerFrame, SpawnSpec, WaitCondition, WaitOutcome, WaitUntil,
};
use ractor::rpc::CallResult;
use ractor::{ActorRef, Message, RpcReplyPort};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Longest an actor may take to answer before the request fails.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Asks `actor` and waits for the answer; `gone` names what vanished if it stopped.
async fn ask<M: Message, T: Send + 'static>(
    actor: &ActorRef<M>,
    build: impl FnOnce(RpcReplyPort<T>) -> M,
    gone: (ErrorCode, &str),
) -> Result<T, ErrorReply> {
    match actor.call(build, Some(CALL_TIMEOUT)).await {
        Ok(CallResult::Success(value)) => Ok(value),
        Ok(CallResult::Timeout) => Err(ErrorReply::internal(format!(
            "{} did not answer within {}s",
            gone.1,
            CALL_TIMEOUT.as_secs()
        ))),
        Ok(CallResult::SenderError) | Err(_) => Err(ErrorReply::new(
            gone.0,
            format!("{} went away during the request", gone.1),
        )),
    }
}

const SUPERVISOR: (ErrorCode, &str) = (ErrorCode::ShuttingDown, "the daemon");
const SESSION: (ErrorCode, &str) = (ErrorCode::SessionNotFound, "the session");
const PANE: (ErrorCode, &str) = (ErrorCode::PaneNotFound, "the pane");

pub struct Handler {
    pub supervisor: ActorRef<SupervisorMsg>,
    /// Cancelled when the daemon begins to shut down.
    pub shutdown: CancellationToken,
}

impl Handler {
    /// Answers one request from the connection `conn`.
    pub async fn handle(&self, conn: &Arc<ConnectionState>, request: Request) -> Result<Response, ErrorReply> {
        match request {
            Request::Ping => Ok(Response::Pong),
            Request::DaemonStatus => Ok(Response::Daemon(
                ask(&self.supervisor, SupervisorMsg::Status, SUPERVISOR).await?,
            )),
            // The connection starts the shutdown once this reply is written.
            Request::Shutdown => Ok(Response::ShuttingDown),
            Request::Subscribe => self.subscribe(conn).await,
            Request::CreateSession { name, cwd, env } => self.create_session(name, cwd, env).await,
            Request::DestroySession { session } => {
                let info = ask(
                    &self.supervisor,
                    |reply| SupervisorMsg::DestroySession { target: session, reply },
                    SUPERVISOR,
                )
                .await??;
                Ok(Response::Session(info))
            }
            Request::ListSessions => Ok(Response::Sessions(
                ask(&self.supervisor, SupervisorMsg::ListSessions, SUPERVISOR).await?,
            )),
            Request::RenameSession { session, name } => {
                let (session, previous_name) = ask(
                    &self.supervisor,
                    |reply| SupervisorMsg::RenameSession {
                        target: session,
                        name,
                        reply,
                    },
                    SUPERVISOR,
                )
                .await??;
                Ok(Response::SessionRenamed { session, previous_name })
            }
            Request::CreatePane(spec) => self.create_pane(spec).await,
            Request::ListPanes { session } => self.list_panes(session).await,
            Request::PaneStatus { pane } => Ok(Response::Pane(self.pane(&pane).await?.current_info())),
            Request::WriteInput { pane, data, paste } => {
                let pane = self.pane(&pane).await?;
                let data = match paste && pane.output.bracketed_paste() {
                    true => [&b"\x1b[200~"[..], &data, b"\x1b[201~"].concat(),
                    false => data,
                };
                conn.typed(&pane);
                write_input(&pane, data).await
            }
            Request::SendKeys { pane, keys } => {
                let pane = self.pane(&pane).await?;
                let app_cursor = pane.output.application_cursor();
                let mut data = Vec::new();
                for key in &keys {
                    data.extend(encode_key(key, app_cursor).map_err(ErrorReply::invalid)?);
                }
                conn.typed(&pane);
                write_input(&pane, data).await
            }
            Request::Capture {
                pane,
                what,
                start,
                end,
                ansi,
                join_wrapped,
            } => {
                let pane = self.pane(&pane).await?;
                Ok(Response::Captured(capture(&pane, what, start, end, ansi, join_wrapped)))
            }
            Request::Attach { pane, read_only, size } => self.attach(conn, &pane, read_only, size).await,
            Request::Detach { pane } => {
                let pane = self.pane(&pane).await?;
                match conn.detach(pane.info.id) {
                    true => Ok(Response::Ok),
                    false => Err(ErrorReply::invalid(format!(
                        "this client is not attached to pane {}",
                        pane.info.id
                    ))),
                }
            }
            Request::ClientResize { pane, size } => {
                let pane = self.pane(&pane).await?;
                let Some(id) = conn.attachment_id(pane.info.id) else {
                    return Err(ErrorReply::invalid(format!(
                        "this client is not attached to pane {}",
                        pane.info.id
                    )));
                };
                let _ = pane.actor.cast(PaneMsg::ClientResize { id, size });
                Ok(Response::Ok)
            }
            Request::WaitFor {
                pane,
                until,
                timeout_ms,
            } => self.wait_until(&pane, until, timeout_ms).await,
            Request::AgentStatus { pane } => {
                let pane = self.pane(&pane).await?;
                let info = pane.current_info();
                let status = pane.output.agent_status(&info.command, info.exit.is_some());
                Ok(Response::Agent(status))
            }
            // Answered by the connection itself, which knows its requests.
            Request::Cancel { .. } => Err(ErrorReply::internal("cancel is handled by the connection")),
            Request::SetSizePolicy { pane, policy } => {
                let pane = self.pane(&pane).await?;
                ask(&pane.actor, |reply| PaneMsg::SetSizePolicy { policy, reply }, PANE).await?;
                Ok(Response::Ok)
            }
            Request::Interrupt { pane } => {
                let pane = self.pane(&pane).await?;
                ask(&pane.actor, PaneMsg::Interrupt, PANE).await??;
                Ok(Response::Ok)
            }
            Request::KillPane { pane, signal } => {
                let signal = parse_signal(signal.as_deref().unwrap_or("TERM")).map_err(ErrorReply::invalid)?;
                let pane = self.pane(&pane).await?;
                ask(&pane.actor, |reply| PaneMsg::Kill { signal, reply }, PANE).await?;
                Ok(Response::Pane(pane.current_info()))
            }
            Request::ReleasePane { pane } => {
                let pane = self.pane(&pane).await?;
                let id = pane.info.id;
                ask(&pane.session, |reply| SessionMsg::ReleasePane { id, reply }, SESSION).await??;
                Ok(Response::Ok)
            }
            Request::ResizePane { pane, size } => {
                let pane = self.pane(&pane).await?;
                ask(&pane.actor, |reply| PaneMsg::Resize { size, reply }, PANE).await??;
                Ok(Response::Ok)
            }
            Request::RenamePane { pane, title } => {
                let pane = self.pane(&pane).await?;
                let id = pane.info.id;
                let info = ask(
                    &pane.session,
                    |reply| SessionMsg::RenamePane { id, title, reply },
                    SESSION,
                )
                .await??;
                Ok(Response::Pane(info))
            }
            Request::ReorderPanes { session, panes } => {
                let session = self.session(&session).await?;
                let infos = ask(
                    &session.actor,
                    |reply| SessionMsg::Reorder { targets: panes, reply },
                    SESSION,
                )
                .await??;
                Ok(Response::Panes(infos))
            }
            Request::ReadOutput { pane, mode } => self.read_output(&pane, mode).await,
            Request::WaitForExit { pane, timeout_ms } => self.wait_for_exit(&pane, timeout_ms).await,
        }
    }

    async fn session(&self, target: &str) -> Result<SessionRef, ErrorReply> {
        let target = target.to_string();
        ask(
            &self.supervisor,
            |reply| SupervisorMsg::ResolveSession { target, reply },
            SUPERVISOR,
        )
        .await?
    }

    /// Resolves a pane target to a handle for acting on the pane directly.
    pub async fn pane(&self, target: &str) -> Result<PaneHandle, ErrorReply> {
        let (session, lookup) = match PaneTarget::parse(target)? {
            PaneTarget::Id(_) => {
                let target = target.to_string();
                let (session, id) = ask(
                    &self.supervisor,
                    |reply| SupervisorMsg::ResolvePane { target, reply },
                    SUPERVISOR,
                )
                .await??;
                (session, PaneLookup::Id(id))
            }
            PaneTarget::InSession { session, .. } => {
                let pane = target[session.len() + 1..].to_string();
                (self.session(session).await?, PaneLookup::Target(pane))
            }
        };
        ask(&session.actor, |reply| SessionMsg::GetPane { lookup, reply }, SESSION).await?
    }

    async fn create_session(
        &self,
        name: String,
        cwd: Option<String>,
        env: Vec<fugue_protocol::EnvVar>,
    ) -> Result<Response, ErrorReply> {
        let cwd = match cwd {
            Some(cwd) => PathBuf::from(cwd),
            None => std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("/")),
        };
        let env = env.into_iter().map(|v| (v.name, v.value)).collect();
        let info = ask(
            &self.supervisor,
            |reply| SupervisorMsg::CreateSession { name, cwd, env, reply },
            SUPERVISOR,
        )
        .await??;
        Ok(Response::Session(info))
    }

    async fn create_pane(&self, spec: SpawnSpec) -> Result<Response, ErrorReply> {
        let session = self.session(&spec.session).await?;
        let handle = ask(&session.actor, |reply| SessionMsg::CreatePane { spec, reply }, SESSION).await??;
        Ok(Response::Pane(handle.info))
    }

    async fn list_panes(&self, session: Option<String>) -> Result<Response, ErrorReply> {
        let sessions = match session {
            Some(target) => vec![self.session(&target).await?],
            None => ask(&self.supervisor, SupervisorMsg::AllSessions, SUPERVISOR).await?,
        };
        let lists =
            futures::future::join_all(sessions.iter().map(|s| ask(&s.actor, SessionMsg::ListPanes, SESSION))).await;
        // A session destroyed meanwhile simply has no panes to show.
        Ok(Response::Panes(
            lists.into_iter().filter_map(Result::ok).flatten().collect(),
        ))
    }

    async fn read_output(&self, target: &str, mode: ReadMode) -> Result<Response, ErrorReply> {
        let pane = self.pane(target).await?;
        let read = pane.output.read(mode);
        Ok(Response::Output(OutputChunk {
            pane: pane.current_info(),
            data: read.data,
            lines: read.lines,
            start_offset: read.start_offset,
            next_offset: read.next_offset,
            truncated: read.truncated,
        }))
    }

    async fn wait_for_exit(&self, target: &str, timeout_ms: Option<u64>) -> Result<Response, ErrorReply> {
        let pane = self.pane(target).await?;
        let mut exit = pane.exit.clone();
        let exited = exit.wait_for(|e| e.is_some());
        let outcome = match timeout_ms {
            Some(ms) => tokio::time::timeout(Duration::from_millis(ms), exited).await.ok(),
            None => Some(exited.await),
        }
        .map(|waited| waited.map(|_| ()));
        match outcome {
            None => Ok(Response::Waited {
                pane: pane.current_info(),
                exited: false,
            }),
            Some(Err(_)) => Err(self.released(&pane)),
            Some(Ok(_)) => Ok(Response::Waited {
                pane: pane.current_info(),
                exited: true,
            }),
        }
    }

    async fn subscribe(&self, conn: &Arc<ConnectionState>) -> Result<Response, ErrorReply> {
        if conn.subscribed.swap(true, Ordering::AcqRel) {
            return Err(ErrorReply::invalid("this connection is already subscribed"));
        }
        let events = ask(&self.supervisor, SupervisorMsg::Subscribe, SUPERVISOR).await?;
        tokio::spawn(crate::connection::forward_events(
            events,
            conn.out.clone(),
            conn.cancel.clone(),
        ));
        Ok(Response::Ok)
    }

    async fn attach(
        &self,
        conn: &Arc<ConnectionState>,
        target: &str,
        read_only: bool,
        size: Option<PaneSize>,
    ) -> Result<Response, ErrorReply> {
        let pane = self.pane(target).await?;
        let info = pane.current_info();
        if let Some(status) = info.exit {
            return Err(ErrorReply::invalid(format!(
                "pane {} has {status}; nothing to attach to",
                info.id
            )));
        }
        if conn.attachment_id(info.id).is_some() {
            return Err(ErrorReply::invalid(format!(
                "this client is already attached to pane {}",
                info.id
            )));
        }
        let (subscription, redraw) = ask(&pane.actor, |reply| PaneMsg::Attach { read_only, size, reply }, PANE).await?;
        let stop = conn.cancel.child_token();
        conn.attach(
            info.id,
            Attachment {
                id: subscription.id,
                actor: pane.actor.clone(),
                stop: stop.clone(),
            },
        );
        let follow = Follow {
            conn: conn.clone(),
            pane: info.id,
            subscription,
            output: pane.output.clone(),
            exit: pane.exit.clone(),
            stop,
        };
        tokio::spawn(follow.run(redraw));
        Ok(Response::Attached(info))
    }

    /// Waits for the first condition of `until` to hold. Every check runs under the
    /// pane's output lock; between checks the task sleeps until output arrives, the
    /// process exits, or a quiet-time threshold or the deadline comes due.
    async fn wait_until(&self, target: &str, until: WaitUntil, timeout_ms: u64) -> Result<Response, ErrorReply> {
        let pattern = until
            .pattern
            .as_deref()
            .map(fugue_protocol::limits::compile_pattern)
            .transpose()?;
        let pane = self.pane(target).await?;
        let started = Instant::now();
        let deadline = started + Duration::from_millis(timeout_ms);
        let mut changes = pane.output.changes();
        let mut exit = pane.exit.clone();
        let mut searched = until.since.unwrap_or(0);
        let finish = |condition, matched, output: &crate::pane_output::PaneOutput| WaitOutcome {
            condition,
            matched,
            elapsed_ms: started.elapsed().as_millis() as u64,
            pane: pane.current_info(),
            next_offset: output.end_offset(),
        };
        loop {
            changes.borrow_and_update();
            let exited = exit.borrow_and_update().is_some();
            let mut recheck_in = None;
            {
                let output = &pane.output;
                if let Some(pattern) = &pattern {
                    let found = match until.on {
                        MatchOn::Output => {
                            let (found, upto) = output.find_in_output(pattern, searched);
                            searched = upto;
                            found
                        }
                        MatchOn::Screen => output.find_on_screen(pattern),
                    };
                    if found.is_some() {
                        return Ok(Response::WaitDone(finish(WaitCondition::Pattern, found, output)));
                    }
                }
                if let Some(want) = until.agent_state {
                    let status = output.agent_status(&pane.info.command, exited);
                    if status.state == want {
                        return Ok(Response::WaitDone(finish(WaitCondition::AgentState, None, output)));
                    }
                    // Detection depends on how long the screen has been quiet.
                    recheck_in = settle_due(output.quiet_for());
                }
                if exited {
                    return Ok(Response::WaitDone(finish(WaitCondition::Exit, None, output)));
                }
                if let Some(idle) = until.idle_ms.map(Duration::from_millis) {
                    let quiet = output.quiet_for();
                    if quiet >= idle {
                        return Ok(Response::WaitDone(finish(WaitCondition::Idle, None, output)));
                    }
                    recheck_in = Some(recheck_in.map_or(idle - quiet, |r: Duration| r.min(idle - quiet)));
                }
                if Instant::now() >= deadline {
                    return Ok(Response::WaitDone(finish(WaitCondition::Timeout, None, output)));
                }
            }
            let wake = recheck_in.map_or(deadline, |r| (Instant::now() + r).min(deadline));
            tokio::select! {
                changed = changes.changed() => if changed.is_err() { return Err(self.released(&pane)) },
                changed = exit.changed() => if changed.is_err() { return Err(self.released(&pane)) },
                _ = tokio::time::sleep_until(wake.into()) => {}
            }
        }
    }

    /// Why a pane vanished under a waiting request.
    fn released(&self, pane: &PaneHandle) -> ErrorReply {
        match self.shutdown.is_cancelled() {
            true => ErrorReply::new(ErrorCode::ShuttingDown, "the daemon is shutting down"),
            false => ErrorReply::new(
                ErrorCode::PaneNotFound,
                format!("pane {} was released while waiting", pane.info.id),
            ),
        }
    }
}

/// When an agent detection that depends on quiet time could next change.
fn settle_due(quiet: Duration) -> Option<Duration> {
    [crate::agent::WAITING_SETTLE, crate::agent::IDLE_SETTLE]
        .into_iter()
        .filter(|t| *t > quiet)
        .map(|t| t - quiet)
        .min()
}

fn capture(
    pane: &PaneHandle,
    what: CaptureWhat,
    start: Option<i64>,
    end: Option<i64>,
    ansi: bool,
    join: bool,
) -> CaptureResult {
    let capture = pane.output.capture(what, start, end, ansi, join);
    let (cursor_row, cursor_col, cursor_visible) = capture.state.cursor;
    CaptureResult {
        lines: capture.captured.lines,
        first_line: capture.captured.first_line,
        cursor_row,
        cursor_col,
        cursor_visible,
        size: capture.state.size,
        alternate_screen: capture.state.alternate_screen,
        title: capture.state.title,
        scrollback_lines: capture.state.scrollback_lines as u32,
    }
}

/// Streams one attached pane to its client: a redraw, then output, title and bell
/// events, then its exit. A client that lagged gets a fresh redraw instead of the
/// output it missed.
struct Follow {
    conn: Arc<ConnectionState>,
    pane: PaneId,
    subscription: Subscription,
    output: Arc<crate::pane_output::PaneOutput>,
    exit: watch::Receiver<Option<crate::pane::Exited>>,
    stop: CancellationToken,
}

impl Follow {
    async fn run(mut self, redraw: Vec<u8>) {
        let pane = self.pane;
        if self.send(Event::Redraw { pane, data: redraw }).await {
            self.follow().await;
        }
        self.conn.detach(pane);
    }

    async fn follow(&mut self) {
        loop {
            let mut exit = self.exit.clone();
            // None when the pane was released: nothing more will come.
            let exited = async move {
                exit.wait_for(|e| e.is_some())
                    .await
                    .ok()
                    .and_then(|exited| exited.map(|e| e.status))
            };
            tokio::select! {
                biased;
                _ = self.stop.cancelled() => return,
                event = self.subscription.events.recv() => {
                    let Some(event) = event else { return };
                    if !self.deliver(event).await {
                        return;
                    }
                }
                status = exited => {
                    let Some(status) = status else { return };
                    // Everything the pane printed was queued before its exit was published.
                    while let Ok(event) = self.subscription.events.try_recv() {
                        if !self.deliver(event).await {
                            return;
                        }
                    }
                    self.send(Event::Exited { pane: self.pane, status }).await;
                    return;
                }
            }
        }
    }

    /// Sends one event, or a redraw if the subscriber lagged. False when the
    /// client is gone.
    async fn deliver(&mut self, event: crate::pane_output::PaneEvent) -> bool {
        use crate::pane_output::PaneEvent;
        let pane = self.pane;
        self.subscription.took(&event);
        if self.subscription.lagged.load(Ordering::Acquire) {
            while let Ok(dropped) = self.subscription.events.try_recv() {
                self.subscription.took(&dropped);
            }
            let data = self.output.resync(&self.subscription.lagged);
            return self.send(Event::Redraw { pane, data }).await;
        }
        let event = match event {
            PaneEvent::Output(data) => Event::Output {
                pane,
                data: data.to_vec(),
            },
            PaneEvent::Title(title) => Event::Title { pane, title },
            PaneEvent::Bell => Event::Bell { pane },
        };
        self.send(event).await
    }

    async fn send(&self, event: Event) -> bool {
        tokio::select! {
            sent = self.conn.out.send(ServerFrame::Event(event)) => sent.is_ok(),
            _ = self.stop.cancelled() => false,
        }
    }
}

/// Queues input for the pane's writer thread in chunks; waits (this request only)
/// while the pane is not reading.
async fn write_input(pane: &PaneHandle, data: Vec<u8>) -> Result<Response, ErrorReply> {
    let exited = *pane.exit.borrow();
    if let Some(crate::pane::Exited { status, .. }) = exited {
        return Err(ErrorReply::invalid(format!(
            "pane {} has {status}; input was not written",
            pane.info.id
        )));
    }
    for chunk in data.chunks(INPUT_CHUNK) {
        if pane.input.send(chunk.to_vec()).await.is_err() {
            return Err(ErrorReply::invalid(format!(
                "pane {} no longer takes input",
                pane.info.id
            )));
        }
    }
    Ok(Response::Ok)
}
