//! Delegation with the result returned: `fugue_delegate` starts a child agent
//! (after a person's yes, as `fugue_spawn_agent` asks), gives it the prompt,
//! and answers when its turn ends with its final message and what it changed.
//! A long call: a task for clients that declare tasks (its status message says
//! how the child goes, a person being needed included), progress
//! notifications for the others.

use super::confirm::Guard;
use super::FugueTools;
use crate::bridge::describe;
use crate::params::*;
use crate::tasks::StatusNote;
use fugue_client::delegate::{self, DelegateResult, Delegation};
use rmcp::handler::server::tool::{InputResponses, RequestState};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResponse, ProgressNotificationParam};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_router, Peer, RoleServer};
use std::time::Duration;

/// A child's turn may take this long unless the call says.
pub const DEFAULT_DELEGATE_MS: u64 = 30 * 60 * 1000;
/// ... and at most this long.
const MAX_DELEGATE_MS: u64 = 4 * 60 * 60 * 1000;

#[tool_router(router = delegate_tools, vis = "pub(super)")]
impl FugueTools {
    #[tool(
        description = "Delegate a task to a new child agent and get its result back: a person is asked to confirm \
first (as for fugue_spawn_agent); the child starts in a git worktree of its own (unless shared_checkout), is given \
the prompt, and when its turn ends this returns its final message (from the agent's own transcript, or its screen, \
said in final_message.source), what it changed (diff: files, lines added and removed) and how to go on \
(fugue_send_prompt to the child). Clients that declare tasks get a task whose status says how the child goes, \
including when it waits for a person (approve or deny it); others get progress notifications.",
        output_schema = rmcp::handler::server::common::schema_for_output::<DelegateResult>()
    )]
    async fn fugue_delegate(
        &self,
        Parameters(p): Parameters<DelegateParams>,
        peer: Peer<RoleServer>,
        context: RequestContext<RoleServer>,
        RequestState(request_state): RequestState,
        InputResponses(responses): InputResponses,
    ) -> Result<CallToolResponse, String> {
        let agent = p.agent.clone().unwrap_or_else(|| "claude".into());
        let Some(command) = self.bridge.config.agent_commands.get(&agent).cloned() else {
            let known: Vec<&str> = self.bridge.config.agent_commands.keys().map(String::as_str).collect();
            return Err(format!("unknown agent '{agent}'; agents: {}", known.join(", ")));
        };
        if self.bridge.remote(None) {
            return Err(
                "fugue_delegate runs children on this machine only, and this bridge's daemon is on another".into(),
            );
        }
        let timeout_ms = p.timeout_ms.unwrap_or(DEFAULT_DELEGATE_MS);
        if timeout_ms == 0 || timeout_ms > MAX_DELEGATE_MS {
            return Err(format!("timeout_ms must be 1-{MAX_DELEGATE_MS}, got {timeout_ms}"));
        }
        let client = self.client().await?;
        let session = p.name.clone().unwrap_or_else(|| format!("delegate-{}", uuid_suffix()));
        fugue_protocol::target::validate_session_name(&session).map_err(|e| e.message)?;
        if client
            .list_sessions()
            .await
            .map_err(describe)?
            .iter()
            .any(|s| s.name == session)
        {
            return Err(format!(
                "a session named '{session}' already exists; choose another name"
            ));
        }
        let dir = self
            .bridge
            .new_session_dir(p.working_dir.as_deref())?
            .unwrap_or_else(|| ".".into());
        let worktree = match p.shared_checkout.unwrap_or(false) {
            true => None,
            false => Some(p.worktree.clone().unwrap_or_default()),
        };
        let place = match &worktree {
            Some(_) => format!("a new git worktree of the repository of {dir}"),
            None => dir.clone(),
        };
        let guard = Guard {
            question: format!("Delegate to {agent} in {place}, with prompt {:?}?", p.prompt),
            declined: "no agent was started",
            allowed: self.bridge.config.allow_spawn,
            flag: "--allow-spawn",
        };
        if let Some(ask) = self.confirm(guard, &peer, &context, request_state, responses).await? {
            return Ok(ask.into());
        }
        let job = Delegation {
            agent,
            command,
            prompt: p.prompt,
            dir: dir.into(),
            worktree,
            base: p.base,
            session,
            timeout: Duration::from_millis(timeout_ms),
        };
        let child = delegate::start_child(&client, &job).await.map_err(describe)?;
        let report = Reporter::new(&context, peer);
        let result = delegate::run_turn(&client, &job, &child, |said| report.say(said))
            .await
            .map_err(|e| format!("{} (the child is terminal {})", describe(e), child.pane))?;
        let value = serde_json::to_value(result).map_err(|e| e.to_string())?;
        Ok(rmcp::model::CallToolResult::structured(value).into())
    }
}

/// Where a delegation's progress goes: its task's status (a client that
/// declared tasks), or progress notifications (one that sent a token), sent
/// in order by a task of their own so none holds the delegation up.
struct Reporter {
    note: Option<StatusNote>,
    progress: Option<tokio::sync::mpsc::Sender<String>>,
}

impl Reporter {
    fn new(context: &RequestContext<RoleServer>, peer: Peer<RoleServer>) -> Self {
        let progress = context.meta.get_progress_token().map(|token| {
            let (tx, mut rx) = tokio::sync::mpsc::channel::<String>(16);
            tokio::spawn(async move {
                let mut n = 0u32;
                while let Some(text) = rx.recv().await {
                    n += 1;
                    let param = ProgressNotificationParam::new(token.clone(), f64::from(n)).with_message(text);
                    if peer.notify_progress(param).await.is_err() {
                        return;
                    }
                }
            });
            tx
        });
        Reporter {
            note: context.extensions.get::<StatusNote>().cloned(),
            progress,
        }
    }

    fn say(&self, text: String) {
        if let Some(note) = &self.note {
            note.set(text.clone());
        }
        if let Some(progress) = &self.progress {
            // A client slower than the child's news misses some: never a backlog.
            let _ = progress.try_send(text);
        }
    }
}

fn uuid_suffix() -> String {
    fugue_protocol::SessionId::new().simple()[..8].to_string()
}
