//! One function per request: resolve the target, ask the actor that owns the answer.
//!
//! This runs on the connection's request tasks, never inside an actor, so a slow
//! request (a wait, a big paste) holds up nobody but its own caller.

mod attach;
pub mod client;
mod hibernate;
mod prompt;
mod resolve;
mod search;
mod tmux;
mod wait;

use crate::actors::pane::PaneMsg;
use crate::actors::session::SessionMsg;
use crate::actors::supervisor::SupervisorMsg;
use crate::budget::Budget;
use client::Client;
use fugue_protocol::limits::clean_label;
use fugue_protocol::requests as rq;
use fugue_protocol::signals::parse_signal;
use fugue_protocol::{
    AgentInfo, CaptureResult, ErrorReply, GrepMatch, GrepResult, OutputChunk, PaneInfo, PaneOverview,
    PermissionAnswered, ReadMode, Request, Response, SessionInfo, SessionRenamed, SpawnSpec,
};
use ractor::ActorRef;
use resolve::{ask, PANE, SESSION, SUPERVISOR};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Runs `work`, which may write the devices' or the subscriptions' files
/// (written whole, with an fsync), off the runtime's workers, one at a time.
async fn kept<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ErrorReply> + Send + 'static,
) -> Result<T, ErrorReply> {
    crate::sync::off_runtime(&crate::sync::KEPT_FILES, work)
        .await
        .unwrap_or_else(|| Err(ErrorReply::internal("keeping a device or a push subscription failed")))
}

pub struct Handler {
    pub supervisor: ActorRef<SupervisorMsg>,
    /// The ids fugue's tmux hands out (`tmux`).
    pub tmux_ids: crate::bridge::Ids,
    /// Browsers and phones paired with fugue-web.
    pub devices: Arc<crate::devices::Devices>,
    /// Web Push: the key, the subscriptions, the action tokens.
    pub push: Arc<crate::push::Push>,
    /// What clients make the daemon hold, all connections together.
    pub memory: Arc<Budget>,
    /// Every connected client (to cut the largest when `memory` runs out).
    pub clients: client::Clients,
    /// Cancelled when the daemon begins to shut down.
    pub shutdown: CancellationToken,
}

impl Handler {
    /// Answers one request from the connection `conn`. Each arm wraps its answer
    /// in the reply variant of its own request, so the compiler checks that every
    /// request is answered, and with the reply type `requests.rs` names.
    pub async fn handle(&self, conn: &Arc<Client>, request: Request) -> Result<Response, ErrorReply> {
        use Request as Rq;
        Ok(match request {
            Rq::Ping(_) => Response::Ping(()),
            Rq::DaemonStatus(_) => {
                Response::DaemonStatus(ask(&self.supervisor, SupervisorMsg::Status, SUPERVISOR).await?)
            }
            // The connection starts the shutdown once this reply is written.
            Rq::Shutdown(_) => Response::Shutdown(()),
            // The connection starts the upgrade once this reply is written.
            Rq::UpgradeDaemon(_) => Response::UpgradeDaemon(()),
            Rq::Subscribe(_) => Response::Subscribe(self.subscribe(conn).await?),
            Rq::CreateSession(r) => Response::CreateSession(self.create_session(r).await?),
            Rq::DestroySession(r) => Response::DestroySession(
                ask(
                    &self.supervisor,
                    |reply| SupervisorMsg::DestroySession {
                        target: r.session,
                        reply,
                    },
                    SUPERVISOR,
                )
                .await??,
            ),
            Rq::ListSessions(_) => {
                Response::ListSessions(ask(&self.supervisor, SupervisorMsg::ListSessions, SUPERVISOR).await?)
            }
            Rq::RenameSession(r) => Response::RenameSession(self.rename_session(r).await?),
            Rq::CreatePane(r) => Response::CreatePane(self.create_pane(r.spec).await?),
            Rq::ListPanes(r) => Response::ListPanes(self.list_panes(r.session).await?),
            Rq::Overview(r) => Response::Overview(self.overview(r.session).await?),
            Rq::BackgroundAgents(_) => Response::BackgroundAgents(self.background_agents().await?),
            Rq::Grep(r) => Response::Grep(self.grep(conn, r).await?),
            Rq::PaneStatus(r) => Response::PaneStatus(self.pane(&r.pane).await?.current_info()),
            Rq::WriteInput(r) => Response::WriteInput(self.write_input(conn, r).await?),
            Rq::SendKeys(r) => Response::SendKeys(self.send_keys(conn, r).await?),
            Rq::Capture(r) => Response::Capture(capture(&self.pane(&r.pane).await?, &r).await),
            Rq::Attach(r) => Response::Attach(self.attach(conn, &r.pane, r.read_only, r.size).await?),
            Rq::Detach(r) => Response::Detach(self.detach(conn, &r.pane).await?),
            Rq::ClientResize(r) => Response::ClientResize(self.client_resize(conn, r).await?),
            Rq::WaitFor(r) => Response::WaitFor(self.wait_until(conn, &r.pane, r.until, r.timeout_ms).await?),
            Rq::AgentStatus(r) => Response::AgentStatus(self.agent_status(&r.pane).await?),
            Rq::ReportHook(r) => Response::ReportHook(self.report_hook(r).await?),
            Rq::AnswerPermission(r) => Response::AnswerPermission(self.answer_permission(r).await?),
            Rq::ResumeAgent(r) => Response::ResumeAgent(self.resume_agent(&r.pane).await?),
            Rq::SendPrompt(r) => Response::SendPrompt(self.send_prompt(r).await?),
            Rq::HibernatePane(r) => Response::HibernatePane(self.hibernate_pane(&r.pane).await?),
            Rq::WakePane(r) => Response::WakePane(self.wake_pane(&r.pane).await?),
            Rq::Tmux(r) => Response::Tmux(self.tmux(conn, r).await?),
            Rq::PushKey(_) => Response::PushKey(self.push.key()?),
            Rq::AddPushSubscription(r) => Response::AddPushSubscription(self.add_push_subscription(r).await?),
            Rq::RemovePushSubscription(r) => {
                let push = self.push.clone();
                Response::RemovePushSubscription(kept(move || Ok(push.unsubscribe(&r.endpoint))).await?)
            }
            Rq::AnswerFromPush(r) => Response::AnswerFromPush(self.answer_from_push(&r.token).await?),
            Rq::AddDevice(r) => {
                let devices = self.devices.clone();
                Response::AddDevice(kept(move || devices.add(&r.name)).await?)
            }
            Rq::ListDevices(_) => Response::ListDevices(self.devices.list(|id| self.push.count_of(id))),
            Rq::RevokeDevice(r) => {
                let (devices, push) = (self.devices.clone(), self.push.clone());
                Response::RevokeDevice(
                    kept(move || {
                        let revoked = devices.revoke(&r.device)?;
                        push.forget_device(&revoked.id);
                        Ok(revoked)
                    })
                    .await?,
                )
            }
            Rq::CheckDevice(r) => {
                let devices = self.devices.clone();
                Response::CheckDevice(kept(move || devices.check(&r.credential)).await?)
            }
            // Answered by the connection itself, which knows its requests.
            Rq::Cancel(_) => return Err(ErrorReply::internal("cancel is handled by the connection")),
            Rq::SetSizePolicy(r) => {
                let pane = self.pane(&r.pane).await?;
                let policy = r.policy;
                ask(&pane.actor, |reply| PaneMsg::SetSizePolicy { policy, reply }, PANE).await?;
                Response::SetSizePolicy(())
            }
            Rq::Interrupt(r) => {
                let pane = self.pane(&r.pane).await?;
                ask(&pane.actor, PaneMsg::Interrupt, PANE).await??;
                Response::Interrupt(())
            }
            Rq::KillPane(r) => {
                let signal = parse_signal(r.signal.as_deref().unwrap_or("TERM")).map_err(ErrorReply::invalid)?;
                let pane = self.pane(&r.pane).await?;
                ask(&pane.actor, |reply| PaneMsg::Kill { signal, reply }, PANE).await?;
                Response::KillPane(pane.current_info())
            }
            Rq::ReleasePane(r) => {
                let pane = self.pane(&r.pane).await?;
                let id = pane.info.id;
                ask(&pane.session, |reply| SessionMsg::ReleasePane { id, reply }, SESSION).await??;
                Response::ReleasePane(())
            }
            Rq::ResizePane(r) => {
                let pane = self.pane(&r.pane).await?;
                let size = r.size;
                ask(&pane.actor, |reply| PaneMsg::Resize { size, reply }, PANE).await??;
                Response::ResizePane(())
            }
            Rq::RenamePane(r) => {
                let pane = self.pane(&r.pane).await?;
                let (id, title) = (pane.info.id, r.title);
                Response::RenamePane(
                    ask(
                        &pane.session,
                        |reply| SessionMsg::RenamePane { id, title, reply },
                        SESSION,
                    )
                    .await??,
                )
            }
            Rq::ReorderPanes(r) => {
                let session = self.session(&r.session).await?;
                let targets = r.panes;
                Response::ReorderPanes(
                    ask(&session.actor, |reply| SessionMsg::Reorder { targets, reply }, SESSION).await??,
                )
            }
            Rq::ReadOutput(r) => Response::ReadOutput(self.read_output(&r.pane, r.mode).await?),
            Rq::WaitForExit(r) => Response::WaitForExit(self.wait_for_exit(&r.pane, r.timeout_ms).await?),
        })
    }

    async fn rename_session(&self, request: rq::RenameSession) -> Result<SessionRenamed, ErrorReply> {
        let rq::RenameSession { session, name } = request;
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
        Ok(SessionRenamed { session, previous_name })
    }

    async fn write_input(&self, conn: &Arc<Client>, request: rq::WriteInput) -> Result<(), ErrorReply> {
        let rq::WriteInput { pane, data, paste } = request;
        let pane = self.pane(&pane).await?;
        pane.agent.typed();
        match conn.attachments.typed(&pane) {
            // Keystrokes from a terminal attached to the pane.
            Some(id) if !paste => {
                if let Some(focused) = pane.input.typed(data).await? {
                    let _ = pane.actor.cast(PaneMsg::ClientFocus { id, focused });
                }
            }
            _ => pane.input.write(data, paste).await?,
        }
        Ok(())
    }

    async fn send_keys(&self, conn: &Arc<Client>, request: rq::SendKeys) -> Result<(), ErrorReply> {
        let pane = self.pane(&request.pane).await?;
        pane.agent.typed();
        conn.attachments.typed(&pane);
        pane.input.send_keys(&request.keys).await
    }

    fn not_attached(pane: &crate::actors::session::PaneHandle) -> ErrorReply {
        ErrorReply::invalid(format!("this client is not attached to pane {}", pane.info.id))
    }

    async fn detach(&self, conn: &Arc<Client>, target: &str) -> Result<(), ErrorReply> {
        let pane = self.pane(target).await?;
        match conn.attachments.detach(pane.info.id) {
            true => Ok(()),
            false => Err(Self::not_attached(&pane)),
        }
    }

    async fn client_resize(&self, conn: &Arc<Client>, request: rq::ClientResize) -> Result<(), ErrorReply> {
        let pane = self.pane(&request.pane).await?;
        let Some(id) = conn.attachments.id(pane.info.id) else {
            return Err(Self::not_attached(&pane));
        };
        let _ = pane.actor.cast(PaneMsg::ClientResize { id, size: request.size });
        Ok(())
    }

    async fn agent_status(&self, target: &str) -> Result<AgentInfo, ErrorReply> {
        Ok(self.pane(target).await?.agent_status().await)
    }

    /// Pane `target`, when `token` is the `FUGUE_PANE_TOKEN` its process was
    /// given: only that process (and what it starts) speaks for the pane.
    /// `what` and `only` say what was refused ("this hook report", "can
    /// report for it").
    async fn proven_pane(
        &self,
        target: &str,
        token: &str,
        (what, only): (&str, &str),
    ) -> Result<(crate::actors::session::PaneHandle, PaneInfo), ErrorReply> {
        let pane = self.pane(target).await?;
        let info = pane.current_info();
        if !pane.agent.check_hook_token(info.pid, token) {
            return Err(ErrorReply::invalid(format!(
                "{what}'s FUGUE_PANE_TOKEN is not pane {}'s: only the process in that pane {only}",
                info.id
            )));
        }
        Ok((pane, info))
    }

    async fn report_hook(&self, request: rq::ReportHook) -> Result<(), ErrorReply> {
        let rq::ReportHook { pane, token, hook } = request;
        let refused = ("this hook report", "(and its hooks) can report for it");
        let (pane, info) = self.proven_pane(&pane, &token, refused).await?;
        let kind = hook.agent.or_else(|| crate::agent::detect_kind(&info.command, &[]));
        pane.agent.record_hook(info.pid, kind, &hook);
        Ok(())
    }

    async fn answer_permission(&self, request: rq::AnswerPermission) -> Result<PermissionAnswered, ErrorReply> {
        let rq::AnswerPermission {
            pane,
            prompt_id,
            answer,
        } = request;
        self.wake_if_hibernated(&pane).await?;
        let pane = self.pane(&pane).await?;
        let shown = pane.agent_status().await;
        if let Some(earlier) = pane.agent.claim_prompt(&shown, &prompt_id, answer)? {
            return Ok(PermissionAnswered {
                answer: earlier,
                already: true,
            });
        }
        pane.agent.looked_at();
        // Read from Codex's app-server: answered in its protocol, that
        // request, once; no keystroke.
        if shown.source == fugue_protocol::StateSource::AppServer {
            let server = pane
                .agent
                .app_server()
                .ok_or_else(|| ErrorReply::internal("the agent was read from an app-server this pane no longer has"))?;
            server.answer(&prompt_id, answer)?;
            return Ok(PermissionAnswered { answer, already: false });
        }
        let keys = crate::agent::answer_keys(shown.agent, answer);
        pane.input.send_keys(&keys).await?;
        Ok(PermissionAnswered { answer, already: false })
    }

    async fn add_push_subscription(
        &self,
        request: rq::AddPushSubscription,
    ) -> Result<fugue_protocol::devices::PushSubscribed, ErrorReply> {
        let rq::AddPushSubscription {
            subscription,
            device,
            content_free,
        } = request;
        if let Some(device) = &device {
            if !self.devices.list(|_| 0).iter().any(|d| &d.id == device) {
                return Err(ErrorReply::invalid(format!("no paired device '{device}'")));
            }
        }
        // The endpoint's host is resolved: off the runtime's workers.
        let push = self.push.clone();
        crate::sync::off_runtime(&crate::sync::PUSH_LOOKUPS, move || {
            push.subscribe(subscription, device, content_free)
        })
        .await
        .ok_or_else(|| ErrorReply::internal("a push subscription's check failed"))?
    }

    /// Answers with the grant a push's action token carries, once, under the
    /// guards of [`Self::answer_permission`] (that prompt on screen, one answer).
    async fn answer_from_push(&self, token: &str) -> Result<fugue_protocol::devices::PushAnswered, ErrorReply> {
        let grant = self.push.take_grant(token)?;
        let answered = self
            .answer_permission(rq::AnswerPermission {
                pane: grant.pane.to_string(),
                prompt_id: grant.prompt_id.clone(),
                answer: grant.answer,
            })
            .await?;
        tracing::info!(pane = %grant.pane, answer = grant.answer.past(), "answered from a push");
        Ok(fugue_protocol::devices::PushAnswered {
            pane: grant.pane,
            prompt_id: grant.prompt_id,
            answered,
        })
    }

    async fn resume_agent(&self, target: &str) -> Result<PaneInfo, ErrorReply> {
        let pane = self.pane(target).await?;
        let id = pane.info.id;
        let handle = ask(
            &pane.session,
            |reply| SessionMsg::ResumeAgent { pane: id, reply },
            SESSION,
        )
        .await??;
        Ok(handle.info)
    }

    async fn create_session(&self, request: rq::CreateSession) -> Result<SessionInfo, ErrorReply> {
        let rq::CreateSession { name, cwd, env } = request;
        let cwd = match cwd {
            Some(cwd) => PathBuf::from(cwd),
            None => std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("/")),
        };
        let env = env.into_iter().map(|v| (v.name, v.value)).collect();
        ask(
            &self.supervisor,
            |reply| SupervisorMsg::CreateSession { name, cwd, env, reply },
            SUPERVISOR,
        )
        .await?
    }

    async fn create_pane(&self, spec: SpawnSpec) -> Result<PaneInfo, ErrorReply> {
        let session = self.session(&spec.session).await?;
        let handle = ask(
            &session.actor,
            |reply| SessionMsg::CreatePane {
                spec,
                tmux: None,
                reply,
            },
            SESSION,
        )
        .await??;
        Ok(handle.info)
    }

    /// The ids of the panes whose process runs or is about to run again.
    pub(crate) async fn running_panes(&self) -> std::collections::HashSet<String> {
        let panes = self.list_panes(None).await.unwrap_or_default();
        panes
            .into_iter()
            .filter(|p| {
                matches!(
                    p.state,
                    fugue_protocol::PaneState::Running | fugue_protocol::PaneState::Restarting
                )
            })
            .map(|p| p.id.to_string())
            .collect()
    }

    async fn list_panes(&self, session: Option<String>) -> Result<Vec<PaneInfo>, ErrorReply> {
        let sessions = match session {
            Some(target) => vec![self.session(&target).await?],
            None => ask(&self.supervisor, SupervisorMsg::AllSessions, SUPERVISOR).await?,
        };
        let lists =
            futures::future::join_all(sessions.iter().map(|s| ask(&s.actor, SessionMsg::ListPanes, SESSION))).await;
        // A session destroyed meanwhile simply has no panes to show.
        let mut panes: Vec<PaneInfo> = lists.into_iter().filter_map(Result::ok).flatten().collect();
        mark_exited_parents(&mut panes);
        Ok(panes)
    }

    /// Every pane with its agent's state and last line. The panes of each session
    /// come from its actor in one message; what each shows is read from the pane's
    /// shared output, not by asking its actor.
    async fn overview(&self, session: Option<String>) -> Result<Vec<PaneOverview>, ErrorReply> {
        let sessions = match session {
            Some(target) => vec![self.session(&target).await?],
            None => ask(&self.supervisor, SupervisorMsg::AllSessions, SUPERVISOR).await?,
        };
        let lists =
            futures::future::join_all(sessions.iter().map(|s| ask(&s.actor, SessionMsg::PaneHandles, SESSION))).await;
        let panes: Vec<_> = lists.into_iter().filter_map(Result::ok).flatten().collect();
        let mut rows = futures::future::join_all(panes.iter().map(overview_of)).await;
        let mut infos: Vec<PaneInfo> = rows.iter().map(|r| r.pane.clone()).collect();
        mark_exited_parents(&mut infos);
        for (row, info) in rows.iter_mut().zip(infos) {
            row.pane = info;
        }
        Ok(rows)
    }

    /// The agent sessions outside any pane (`claude --bg`), read now.
    async fn background_agents(&self) -> Result<Vec<fugue_protocol::BackgroundAgent>, ErrorReply> {
        let Some(dir) = crate::agent::background::sessions_dir() else {
            return Ok(Vec::new());
        };
        let served = served_dirs(&self.supervisor).await;
        let rows = tokio::task::spawn_blocking(move || crate::agent::background::read(&dir, &served))
            .await
            .map_err(|e| ErrorReply::internal(format!("reading background sessions failed: {e}")))?;
        Ok(rows.into_values().collect())
    }

    /// The matching lines of every pane's kept text, pane by pane (in the
    /// overview's order), each pane searched off the runtime; the pattern is
    /// charged to the connection like a wait's.
    async fn grep(&self, conn: &Arc<Client>, request: rq::Grep) -> Result<GrepResult, ErrorReply> {
        use fugue_protocol::limits::{MAX_GREP_LINE_BYTES, MAX_GREP_REPLY_BYTES};
        let pattern = search::Pattern::compile(&request.pattern, &conn.patterns)?;
        let sessions = match &request.session {
            Some(target) => vec![self.session(target).await?],
            None => ask(&self.supervisor, SupervisorMsg::AllSessions, SUPERVISOR).await?,
        };
        let lists =
            futures::future::join_all(sessions.iter().map(|s| ask(&s.actor, SessionMsg::PaneHandles, SESSION))).await;
        let panes: Vec<_> = lists.into_iter().filter_map(Result::ok).flatten().collect();
        let deadline = std::time::Instant::now() + GREP_TIME;
        let max = request.max_matches as usize;
        let mut result = GrepResult {
            matches: Vec::new(),
            panes_searched: 0,
            truncated: false,
            timed_out: false,
        };
        let mut bytes = 0;
        for pane in &panes {
            // One more than wanted tells whether there were more.
            let want = max + 1 - result.matches.len();
            let limits = search::GrepLimits {
                lines: want,
                bytes: MAX_GREP_REPLY_BYTES.saturating_sub(bytes),
                line_bytes: MAX_GREP_LINE_BYTES,
            };
            let grepped = search::grep_output(&pattern, &pane.output, limits, deadline).await;
            result.panes_searched += 1;
            let info = pane.current_info();
            for (seq, text) in grepped.lines {
                bytes += text.len() + info.title.len() + info.session_name.len() + 64;
                if result.matches.len() == max || bytes > MAX_GREP_REPLY_BYTES {
                    result.truncated = true;
                    break;
                }
                result.matches.push(GrepMatch {
                    pane: info.id,
                    session_name: info.session_name.clone(),
                    index: info.index,
                    title: info.title.clone(),
                    line: seq + 1,
                    text,
                });
            }
            if grepped.out_of_time {
                result.timed_out = true;
            }
            if result.truncated || result.timed_out {
                break;
            }
        }
        Ok(result)
    }

    async fn read_output(&self, target: &str, mode: ReadMode) -> Result<OutputChunk, ErrorReply> {
        let pane = self.pane(target).await?;
        let read = pane.output.read(mode);
        Ok(OutputChunk {
            pane: pane.current_info(),
            data: read.data,
            lines: read.lines,
            start_offset: read.start_offset,
            next_offset: read.next_offset,
            truncated: read.truncated,
        })
    }

    async fn subscribe(&self, conn: &Arc<Client>) -> Result<(), ErrorReply> {
        if conn.subscribed.swap(true, Ordering::AcqRel) {
            return Err(ErrorReply::invalid("this connection is already subscribed"));
        }
        let events = ask(&self.supervisor, SupervisorMsg::Subscribe, SUPERVISOR).await?;
        tokio::spawn(client::forward_events(events, conn.out.clone(), conn.cancel.clone()));
        Ok(())
    }
}

/// How long a grep may search, all panes together.
const GREP_TIME: std::time::Duration = std::time::Duration::from_secs(5);

/// Characters of a pane's last line an overview shows.
const OVERVIEW_LINE_CHARS: usize = 200;
/// Lines read back to find the last one with text in it.
const OVERVIEW_LINES_BACK: u32 = 8;

/// A pane at a glance: its agent as last seen (no new look for a pane whose
/// watcher looks: an overview of 1000 panes reads what is published).
/// Marks the panes whose parent (the pane whose program made them through
/// tmux, always of the same session) no longer runs.
fn mark_exited_parents(panes: &mut [PaneInfo]) {
    use fugue_protocol::PaneState;
    let running: std::collections::HashSet<fugue_protocol::PaneId> = panes
        .iter()
        .filter(|p| {
            matches!(
                p.state,
                PaneState::Running | PaneState::Restarting | PaneState::Hibernated
            )
        })
        .map(|p| p.id)
        .collect();
    for pane in panes.iter_mut() {
        if let Some(place) = pane.tmux.as_mut() {
            place.parent_exited = place.parent.is_some_and(|parent| !running.contains(&parent));
        }
    }
}

/// The directories fugue's panes use (their working directories): agent
/// sessions outside any pane are shown when they run in one of them or below.
pub async fn served_dirs(supervisor: &ActorRef<SupervisorMsg>) -> Vec<PathBuf> {
    let Ok(sessions) = ask(supervisor, SupervisorMsg::AllSessions, SUPERVISOR).await else {
        return Vec::new();
    };
    let lists = futures::future::join_all(sessions.iter().map(|s| ask(&s.actor, SessionMsg::ListPanes, SESSION))).await;
    let mut dirs: Vec<PathBuf> = lists
        .into_iter()
        .filter_map(Result::ok)
        .flatten()
        .map(|pane| PathBuf::from(pane.cwd))
        .filter(|dir| dir.is_absolute() && dir != std::path::Path::new("/"))
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

async fn overview_of(pane: &crate::actors::session::PaneHandle) -> PaneOverview {
    let info = pane.current_info();
    let agent = pane.agent_seen().await;
    let text = pane.output.read(ReadMode::Text {
        lines: OVERVIEW_LINES_BACK,
        since: None,
    });
    let last_line = text
        .lines
        .iter()
        .rev()
        .find(|line| !line.trim().is_empty())
        .map(|line| clean_label(line.trim_end(), OVERVIEW_LINE_CHARS))
        .unwrap_or_default();
    PaneOverview {
        pane: info,
        agent: agent.agent.is_some().then_some(agent),
        last_line,
    }
}

/// How long a capture waits for the screen to take in output the text view
/// already has (a flood can keep it that far behind).
const CAPTURE_CATCH_UP: std::time::Duration = std::time::Duration::from_millis(500);

async fn capture(pane: &crate::actors::session::PaneHandle, request: &rq::Capture) -> CaptureResult {
    let rq::Capture {
        what,
        start,
        end,
        ansi,
        join_wrapped,
        ..
    } = *request;
    pane.output.screen_catch_up(CAPTURE_CATCH_UP).await;
    let capture = pane.output.capture(what, start, end, ansi, join_wrapped);
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
