//! The agent tools: list and status, approve and deny, prompts, hibernate and
//! wake, and spawning an
//! agent once a person confirmed it (by elicitation, or by an input request from
//! protocol 2026-07-28 on).

use super::confirm::Guard;
use super::FugueTools;
use crate::bridge::describe;
use crate::params::*;
use fugue_protocol::{PermissionAnswer, SpawnSpec};
use rmcp::handler::server::tool::{InputResponses, RequestState};
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::CallToolResponse;
use rmcp::service::RequestContext;
use rmcp::{tool, tool_router, Peer, RoleServer};
use std::time::Duration;

#[tool_router(router = agent_tools, vis = "pub(super)")]
impl FugueTools {
    #[tool(
        description = "Every terminal and agent at a glance, needs-you first: each row's origin (`pane`, or `claude_background` for a `claude --bg` session running outside any terminal, which `fugue attach bg:ID` opens), its agent's state (`limited` with `resets_at` when a usage limit stopped it; token totals where the CLI records them), what it needs from a person, and its last line.",
        annotations(read_only_hint = true)
    )]
    async fn fugue_overview(&self) -> Result<Json<OverviewList>, String> {
        let client = self.client().await?;
        let mut rows = client.overview_rows(None).await.map_err(describe)?;
        rows.sort_by_key(|row| !row.needs_you);
        Ok(Json(OverviewList { rows }))
    }

    #[tool(
        description = "List agent CLIs (Claude Code, Codex, Gemini CLI, Qwen Code, opencode, aider) running in terminals of every session, with what they are doing.",
        annotations(read_only_hint = true)
    )]
    async fn fugue_list_agents(&self) -> Result<Json<AgentList>, String> {
        let client = self.client().await?;
        let panes = client.list_panes(None).await.map_err(describe)?;
        let statuses = futures::future::join_all(panes.iter().map(|p| {
            let client = client.clone();
            let id = p.id.to_string();
            async move { client.agent_status(&id).await }
        }))
        .await;
        let agents = panes
            .iter()
            .zip(statuses)
            .filter_map(|(pane, status)| {
                let status = status.ok()?;
                Some(AgentView {
                    terminal_id: pane.id.to_string(),
                    session: pane.session_name.clone(),
                    cwd: pane.cwd.clone(),
                    agent: status.agent?,
                    state: status.state,
                })
            })
            .collect();
        Ok(Json(AgentList { agents }))
    }

    #[tool(
        description = "What the agent CLI in a terminal is doing: state (starting, busy, waiting_for_permission, waiting_for_answer, idle, unknown, exited or hibernated), the two axes behind it (turn: running / not_running / unknown; needs: nothing / permission / question / finished_unseen), where that was read (source: hook, terminal, session_file or screen), its version, its session_id, since when, what decided, and while it waits for permission the prompt_id that fugue_approve / fugue_deny take.",
        annotations(read_only_hint = true)
    )]
    async fn fugue_agent_status(
        &self,
        Parameters(p): Parameters<TerminalParams>,
    ) -> Result<Json<AgentStatusView>, String> {
        let (client, terminal) = self.terminal(&p.terminal_id).await?;
        let status = client.agent_status(&terminal).await.map_err(describe)?;
        Ok(Json(agent_view(p.terminal_id, status, None)))
    }

    #[tool(
        description = "Approve the permission request an agent CLI is waiting on (presses Enter), given the prompt_id \
fugue_agent_status returned for it: nothing is sent unless that same prompt is still on screen, and answering it again \
sends nothing. Returns the agent's state after."
    )]
    async fn fugue_approve(&self, Parameters(p): Parameters<AnswerParams>) -> Result<Json<AgentStatusView>, String> {
        self.answer_permission(&p.terminal_id, &p.prompt_id, PermissionAnswer::Approve)
            .await
    }

    #[tool(
        description = "Deny the permission request an agent CLI is waiting on (presses Escape), given the prompt_id \
fugue_agent_status returned for it: nothing is sent unless that same prompt is still on screen, and answering it again \
sends nothing. Returns the agent's state after."
    )]
    async fn fugue_deny(&self, Parameters(p): Parameters<AnswerParams>) -> Result<Json<AgentStatusView>, String> {
        self.answer_permission(&p.terminal_id, &p.prompt_id, PermissionAnswer::Deny)
            .await
    }

    async fn answer_permission(
        &self,
        terminal_id: &str,
        prompt_id: &str,
        answer: PermissionAnswer,
    ) -> Result<Json<AgentStatusView>, String> {
        let (client, terminal) = self.terminal(terminal_id).await?;
        let terminal = terminal.as_str();
        let before = fugue_client::ops::output_end(&client, terminal)
            .await
            .map_err(describe)?;
        // The daemon checks the prompt and sends the key in one step.
        let answered = client
            .answer_permission(terminal, prompt_id, answer)
            .await
            .map_err(describe)?;
        if !answered.already {
            // Let the agent react: its first output after the key, then quiet.
            fugue_client::ops::wait_reaction(&client, terminal, before, 500, Duration::from_secs(5))
                .await
                .map_err(describe)?;
        }
        let after = client.agent_status(terminal).await.map_err(describe)?;
        let already = answered.already.then(|| answered.answer.past().to_string());
        Ok(Json(agent_view(terminal_id.to_string(), after, already)))
    }

    #[tool(
        description = "Give an agent CLI a prompt: the text is pasted, then Enter is sent separately. Refused \
(agent_blocked) while the agent waits for a permission or an answer, and (draft_present, with the text) while a \
person's unsent text sits in its input box. Returns a receipt: outcome started (with the \
evidence and when) or prompt_stalled. With idempotency_key a retry sends nothing and returns the first receipt."
    )]
    async fn fugue_send_prompt(&self, Parameters(p): Parameters<PromptParams>) -> Result<Json<PromptResult>, String> {
        let (client, terminal) = self.terminal(&p.terminal_id).await?;
        let sent = fugue_client::ops::send_prompt(&client, &terminal, &p.text, p.idempotency_key.as_deref())
            .await
            .map_err(describe)?;
        Ok(Json(PromptResult {
            terminal_id: p.terminal_id,
            sent,
        }))
    }

    #[tool(
        description = "Put an idle agent CLI to rest to free its memory: its program ends (its own quit keys, then \
signals), the terminal stays in place with its screen and scrollback, and its state reads hibernated. \
fugue_send_prompt, an approve, an attach or fugue_wake resumes it in the same terminal on its recorded session. \
Refused while the agent is busy, waits for a person (agent_blocked) or holds a draft (draft_present). Returns the \
agent's state after."
    )]
    async fn fugue_hibernate(
        &self,
        Parameters(p): Parameters<TerminalParams>,
    ) -> Result<Json<AgentStatusView>, String> {
        let (client, terminal) = self.terminal(&p.terminal_id).await?;
        client.hibernate(&terminal).await.map_err(describe)?;
        let status = client.agent_status(&terminal).await.map_err(describe)?;
        Ok(Json(agent_view(p.terminal_id, status, None)))
    }

    #[tool(
        description = "Resume a hibernated agent CLI in its terminal, on its recorded session, same directory and \
environment; returns once it is ready for a prompt (fugue_send_prompt wakes it by itself). A running agent is left \
as it is. Returns the agent's state after."
    )]
    async fn fugue_wake(&self, Parameters(p): Parameters<TerminalParams>) -> Result<Json<AgentStatusView>, String> {
        let (client, terminal) = self.terminal(&p.terminal_id).await?;
        let woken = client.wake(&terminal).await.map_err(describe)?;
        let status = client.agent_status(&terminal).await.map_err(describe)?;
        let mut view = agent_view(p.terminal_id, status, None);
        view.started_fresh = woken.started_fresh;
        Ok(Json(view))
    }

    #[tool(
        description = "Start a new agent CLI (claude by default) in a new session with a first prompt. A person is asked \
to confirm first (MCP elicitation); nothing starts unless they accept.",
        output_schema = rmcp::handler::server::common::schema_for_output::<SpawnAgentResult>()
    )]
    async fn fugue_spawn_agent(
        &self,
        Parameters(p): Parameters<SpawnAgentParams>,
        peer: Peer<RoleServer>,
        context: RequestContext<RoleServer>,
        RequestState(request_state): RequestState,
        InputResponses(responses): InputResponses,
    ) -> Result<CallToolResponse, String> {
        let agent = p.agent.unwrap_or_else(|| "claude".into());
        let Some(command) = self.bridge.config.agent_commands.get(&agent).cloned() else {
            let known: Vec<&str> = self.bridge.config.agent_commands.keys().map(String::as_str).collect();
            return Err(format!("unknown agent '{agent}'; agents: {}", known.join(", ")));
        };
        let client = self.client().await?;
        let name = p.name.unwrap_or_else(|| format!("agent-{}", &uuid_suffix()));
        fugue_protocol::target::validate_session_name(&name).map_err(|e| e.message)?;
        if client
            .list_sessions()
            .await
            .map_err(describe)?
            .iter()
            .any(|s| s.name == name)
        {
            return Err(format!("a session named '{name}' already exists; choose another name"));
        }
        if p.worktree.is_some() && self.bridge.remote(None) {
            return Err("worktrees are made on this machine only, and this bridge's daemon is on another".into());
        }
        let dir = self.bridge.new_session_dir(p.working_dir.as_deref())?;
        let place = dir.as_deref().unwrap_or("its daemon's default directory");

        let question = match &p.worktree {
            Some(name) => format!(
                "Start {agent} in a new git worktree{} of the repository of {place}, with prompt {:?}?",
                Some(name)
                    .filter(|n| !n.is_empty())
                    .map(|n| format!(" fugue/{n}"))
                    .unwrap_or_default(),
                p.prompt
            ),
            None => format!("Start {agent} in {place} with prompt {:?}?", p.prompt),
        };
        let guard = Guard {
            question,
            declined: "the agent was not started",
            allowed: self.bridge.config.allow_spawn,
            flag: "--allow-spawn",
        };
        if let Some(ask) = self.confirm(guard, &peer, &context, request_state, responses).await? {
            // The client asks the person, then calls again with the answer.
            return Ok(ask.into());
        }

        client
            .create_session(&name, dir.as_deref().map(std::path::Path::new), vec![])
            .await
            .map_err(describe)?;
        let mut words = command.split_whitespace().map(String::from);
        let mut spec = SpawnSpec::new(&name);
        spec.command = words.next();
        spec.args = words.chain(std::iter::once(p.prompt)).collect();
        spec.shell = false;
        spec.title = Some(agent.clone());
        spec.purpose = Some(format!("{agent} agent"));
        let created = match p.worktree {
            None => client.create_pane(spec).await.map(|info| (info, None)),
            Some(worktree) => {
                let new = fugue_client::worktree::NewWorktree {
                    dir: dir.clone().map(Into::into).unwrap_or_else(|| ".".into()),
                    name: Some(worktree).filter(|n| !n.is_empty()),
                    base: p.base,
                };
                fugue_client::worktree::start_in_worktree(&new, spec, |spec| client.create_pane(spec))
                    .await
                    .map(|started| (started.pane, Some(started.worktree)))
            }
        };
        let (info, worktree) = match created {
            Ok(created) => created,
            Err(err) => {
                let _ = client.destroy_session(&name).await;
                return Err(describe(err));
            }
        };
        let result = SpawnAgentResult {
            terminal_id: info.id.to_string(),
            session: name,
            pid: info.pid,
            agent,
            branch: worktree.as_ref().map(|w| w.branch.clone()),
            worktree: worktree.map(|w| w.path),
        };
        let value = serde_json::to_value(result).map_err(|e| e.to_string())?;
        Ok(rmcp::model::CallToolResult::structured(value).into())
    }
}

/// What fugue_agent_status, fugue_approve and fugue_deny return.
fn agent_view(
    terminal_id: String,
    status: fugue_protocol::AgentInfo,
    already_answered: Option<String>,
) -> AgentStatusView {
    AgentStatusView {
        terminal_id,
        status: (&status).into(),
        already_answered,
        started_fresh: None,
    }
}

fn uuid_suffix() -> String {
    fugue_protocol::SessionId::new().simple()[..8].to_string()
}
