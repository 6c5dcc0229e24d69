//! One function per request: resolve the target, ask the actor that owns the answer.
//!
//! This runs on the connection's request tasks, never inside an actor, so a slow
//! request (a wait, a big paste) holds up nobody but its own caller.

mod attach;
pub mod client;
mod resolve;
mod search;
mod wait;

use crate::actors::pane::PaneMsg;
use crate::actors::session::SessionMsg;
use crate::actors::supervisor::SupervisorMsg;
use crate::budget::Budget;
use client::Client;
use fugue_protocol::signals::parse_signal;
use fugue_protocol::{
    CaptureResult, CaptureWhat, ErrorReply, OutputChunk, PermissionAnswered, ReadMode, Request, Response, SpawnSpec,
};
use ractor::ActorRef;
use resolve::{ask, PANE, SESSION, SUPERVISOR};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

pub struct Handler {
    pub supervisor: ActorRef<SupervisorMsg>,
    /// What clients make the daemon hold, all connections together.
    pub memory: Arc<Budget>,
    /// Every connected client (to cut the largest when `memory` runs out).
    pub clients: client::Clients,
    /// Cancelled when the daemon begins to shut down.
    pub shutdown: CancellationToken,
}

impl Handler {
    /// Answers one request from the connection `conn`.
    pub async fn handle(&self, conn: &Arc<Client>, request: Request) -> Result<Response, ErrorReply> {
        match request {
            Request::Ping => Ok(Response::Pong),
            Request::DaemonStatus => Ok(Response::Daemon(
                ask(&self.supervisor, SupervisorMsg::Status, SUPERVISOR).await?,
            )),
            // The connection starts the shutdown once this reply is written.
            Request::Shutdown => Ok(Response::ShuttingDown),
            // The connection starts the upgrade once this reply is written.
            Request::UpgradeDaemon => Ok(Response::Upgrading),
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
                pane.output.looked_at();
                match conn.attachments.typed(&pane) {
                    // Keystrokes from a terminal attached to the pane.
                    Some(id) if !paste => {
                        if let Some(focused) = pane.input.typed(data).await? {
                            let _ = pane.actor.cast(PaneMsg::ClientFocus { id, focused });
                        }
                    }
                    _ => pane.input.write(data, paste).await?,
                }
                Ok(Response::Ok)
            }
            Request::SendKeys { pane, keys } => {
                let pane = self.pane(&pane).await?;
                pane.output.looked_at();
                conn.attachments.typed(&pane);
                pane.input.send_keys(&keys).await?;
                Ok(Response::Ok)
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
                match conn.attachments.detach(pane.info.id) {
                    true => Ok(Response::Ok),
                    false => Err(ErrorReply::invalid(format!(
                        "this client is not attached to pane {}",
                        pane.info.id
                    ))),
                }
            }
            Request::ClientResize { pane, size } => {
                let pane = self.pane(&pane).await?;
                let Some(id) = conn.attachments.id(pane.info.id) else {
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
            } => self.wait_until(conn, &pane, until, timeout_ms).await,
            Request::AgentStatus { pane } => {
                let pane = self.pane(&pane).await?;
                let info = pane.current_info();
                let status = pane
                    .output
                    .agent_status(&info.command, info.pid, info.started_at_ms, info.exit.is_some());
                Ok(Response::Agent(status))
            }
            Request::AgentHook { pane, token, hook } => {
                let pane = self.pane(&pane).await?;
                let info = pane.current_info();
                if !pane.output.check_hook_token(info.pid, &token) {
                    return Err(ErrorReply::invalid(format!(
                        "this hook report's FUGUE_PANE_TOKEN is not pane {}'s: only the process in that pane (and its hooks) can report for it",
                        info.id
                    )));
                }
                let kind = hook
                    .agent
                    .or_else(|| crate::terminal::agent::detect_kind(&info.command, &[]));
                pane.output.record_agent_hook(info.pid, kind, &hook);
                Ok(Response::Ok)
            }
            Request::AnswerPermission {
                pane,
                prompt_id,
                answer,
            } => {
                let pane = self.pane(&pane).await?;
                let info = pane.current_info();
                let shown = pane
                    .output
                    .agent_status(&info.command, info.pid, info.started_at_ms, info.exit.is_some());
                if let Some(earlier) = pane.output.claim_prompt(&shown, &prompt_id, answer)? {
                    return Ok(Response::PermissionAnswered(PermissionAnswered {
                        answer: earlier,
                        already: true,
                    }));
                }
                pane.output.looked_at();
                let keys = crate::terminal::agent::answer_keys(shown.agent, answer);
                pane.input.send_keys(&keys).await?;
                Ok(Response::PermissionAnswered(PermissionAnswered {
                    answer,
                    already: false,
                }))
            }
            Request::ResumeAgent { pane } => {
                let pane = self.pane(&pane).await?;
                let id = pane.info.id;
                let handle = ask(
                    &pane.session,
                    |reply| SessionMsg::ResumeAgent { pane: id, reply },
                    SESSION,
                )
                .await??;
                Ok(Response::Pane(handle.info))
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

    async fn subscribe(&self, conn: &Arc<Client>) -> Result<Response, ErrorReply> {
        if conn.subscribed.swap(true, Ordering::AcqRel) {
            return Err(ErrorReply::invalid("this connection is already subscribed"));
        }
        let events = ask(&self.supervisor, SupervisorMsg::Subscribe, SUPERVISOR).await?;
        tokio::spawn(client::forward_events(events, conn.out.clone(), conn.cancel.clone()));
        Ok(Response::Ok)
    }
}

fn capture(
    pane: &crate::actors::session::PaneHandle,
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
