//! The worktree tools: what a terminal started in a worktree changed, review
//! comments back to its agent, merging or discarding the work (each after a
//! person's yes), and every worktree fugue made. Git runs in this process (the
//! user's), through the client library's `worktree`, `diff` and `review`
//! operations.

use super::confirm::Guard;
use super::FugueTools;
use crate::bridge::{describe, split_terminal};
use crate::params::*;
use fugue_client::diff::DiffView;
use fugue_client::review::{self, ReviewSent};
use fugue_client::worktree::{self, WorktreeRecord};
use fugue_client::Client;
use rmcp::handler::server::tool::{InputResponses, RequestState};
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::CallToolResponse;
use rmcp::service::RequestContext;
use rmcp::{tool, tool_router, Peer, RoleServer};

#[tool_router(router = worktree_tools, vis = "pub(super)")]
impl FugueTools {
    #[tool(
        description = "What a terminal started with a worktree changed there against the commit it started from, \
committed or not (untracked files included): files with lines added and removed, and each file's hunks (unless \
stat_only). The patch is read up to 8 MiB (truncated says so; counts stay whole). format: patch gives instead a \
git patch (patch) that git apply takes on the base commit, untracked and binary files included; one over 8 MiB is \
refused, never cut.",
        annotations(read_only_hint = true)
    )]
    async fn fugue_diff(&self, Parameters(p): Parameters<DiffParams>) -> Result<Json<DiffView>, String> {
        if split_terminal(&p.terminal_id).0.is_some() {
            return Err("worktrees are on this machine only: no diff for a terminal on another host".into());
        }
        let (client, terminal) = self.terminal(&p.terminal_id).await?;
        let format = p.format.unwrap_or_default();
        let view = worktree::pane_diff_as(&client, &terminal, p.stat_only.unwrap_or(false), format)
            .await
            .map_err(describe)?;
        Ok(Json(view))
    }

    #[tool(
        description = "Send review comments on what a terminal's agent changed in its worktree, as one prompt: \
each comment names a file the change touches and a line (line: as the file is now; old_line: a removed line), or \
only a file, or neither (the change as a whole); the prompt quotes the code each is about. Sent like \
fugue_send_prompt: refused (agent_blocked, draft_present) while the agent waits on a dialog or holds a draft; \
returns the prompt sent and the receipt."
    )]
    async fn fugue_review(&self, Parameters(p): Parameters<ReviewParams>) -> Result<Json<ReviewSent>, String> {
        if split_terminal(&p.terminal_id).0.is_some() {
            return Err("worktrees are on this machine only: no review for a terminal on another host".into());
        }
        let (client, terminal) = self.terminal(&p.terminal_id).await?;
        let sent = review::send_review(&client, &terminal, &p.comments, p.idempotency_key.as_deref())
            .await
            .map_err(describe)?;
        Ok(Json(sent))
    }

    #[tool(
        description = "Merge a worktree's branch into the branch it started from (or into): a person is asked to \
confirm first (MCP elicitation, or fugue-mcp --allow-merge). Refused with nothing changed while the worktree has \
uncommitted files or the merge would conflict (the files named).",
        output_schema = rmcp::handler::server::common::schema_for_output::<worktree::Merged>()
    )]
    async fn fugue_merge(
        &self,
        Parameters(p): Parameters<FinishParams>,
        peer: Peer<RoleServer>,
        context: RequestContext<RoleServer>,
        RequestState(request_state): RequestState,
        InputResponses(responses): InputResponses,
    ) -> Result<CallToolResponse, String> {
        let record = self.worktree_record(&p.worktree).await?;
        let into = p.into.as_deref().unwrap_or(&record.base_ref);
        let commit = p.commit.unwrap_or(false);
        let first = if commit {
            "Commit its uncommitted files, then merge"
        } else {
            "Merge"
        };
        let how = if p.squash.unwrap_or(false) {
            " as one commit"
        } else {
            ""
        };
        let guard = Guard {
            question: format!("{first} {}{how} into {into} in {}?", record.branch, record.repo),
            declined: "nothing was merged",
            allowed: self.bridge.config.allow_merge,
            flag: "--allow-merge",
        };
        if let Some(ask) = self.confirm(guard, &peer, &context, request_state, responses).await? {
            return Ok(ask.into());
        }
        if commit {
            worktree::commit_all(&record, &format!("fugue: the work of {}", record.name))
                .await
                .map_err(|e| e.to_string())?;
        }
        let merged = worktree::merge(&record, p.into.as_deref(), p.squash.unwrap_or(false))
            .await
            .map_err(|e| e.to_string())?;
        structured(&merged)
    }

    #[tool(
        description = "Discard a worktree fugue made: its terminal is released, then the worktree and its branch are \
removed with whatever work they hold. A person is asked to confirm first, told what would be lost (MCP elicitation, \
or fugue-mcp --allow-discard).",
        annotations(destructive_hint = true),
        output_schema = rmcp::handler::server::common::schema_for_output::<DiscardResult>()
    )]
    async fn fugue_discard(
        &self,
        Parameters(p): Parameters<FinishParams>,
        peer: Peer<RoleServer>,
        context: RequestContext<RoleServer>,
        RequestState(request_state): RequestState,
        InputResponses(responses): InputResponses,
    ) -> Result<CallToolResponse, String> {
        let record = self.worktree_record(&p.worktree).await?;
        let holds = worktree::holdings(&record).await.map_err(|e| e.to_string())?;
        let guard = Guard {
            question: format!(
                "Discard worktree {} and branch {}, with {holds}? This cannot be undone.",
                record.path, record.branch
            ),
            declined: "nothing was discarded",
            allowed: self.bridge.config.allow_discard,
            flag: "--allow-discard",
        };
        if let Some(ask) = self.confirm(guard, &peer, &context, request_state, responses).await? {
            return Ok(ask.into());
        }
        let client = self.local_client().await?;
        let released = worktree::discard(&client, &record).await.map_err(describe)?;
        structured(&DiscardResult {
            worktree: record.path,
            branch: record.branch,
            outcome: released.outcome().into(),
            notes: released.notes().to_vec(),
        })
    }

    #[tool(
        description = "List the git worktrees fugue made for terminals: branch, base, commits ahead and behind its \
base ref, uncommitted files, and the terminal's and its agent's state.",
        annotations(read_only_hint = true)
    )]
    async fn fugue_worktrees(&self) -> Result<Json<WorktreesResult>, String> {
        let client = self.client().await?;
        let worktrees = worktree::views(&client).await.map_err(describe)?;
        Ok(Json(WorktreesResult { worktrees }))
    }
}

impl FugueTools {
    /// This machine's daemon: worktrees are made here only.
    async fn local_client(&self) -> Result<Client, String> {
        if self.bridge.remote(None) {
            return Err("worktrees are on this machine only, and this bridge's daemon is on another".into());
        }
        self.client().await
    }

    /// The worktree a tool's `worktree` names (its name, or its terminal's id).
    async fn worktree_record(&self, target: &str) -> Result<WorktreeRecord, String> {
        if split_terminal(target).0.is_some() {
            return Err("worktrees are on this machine only: name one of this machine's".into());
        }
        let client = self.local_client().await?;
        worktree::find_target(&client, target).await.map_err(describe)
    }
}

fn structured(value: &impl serde::Serialize) -> Result<CallToolResponse, String> {
    let value = serde_json::to_value(value).map_err(|e| e.to_string())?;
    Ok(rmcp::model::CallToolResult::structured(value).into())
}
