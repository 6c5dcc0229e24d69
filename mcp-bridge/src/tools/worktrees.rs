//! The worktree tools: what a terminal started in a worktree changed, and every
//! worktree fugue made. Git runs in this process (the user's), through the
//! client library's `worktree` and `diff` operations.

use super::FugueTools;
use crate::bridge::{describe, split_terminal};
use crate::params::*;
use fugue_client::diff::DiffView;
use fugue_client::worktree;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::{tool, tool_router};

#[tool_router(router = worktree_tools, vis = "pub(super)")]
impl FugueTools {
    #[tool(
        description = "What a terminal started with a worktree changed there against the commit it started from, \
committed or not (untracked files included): files with lines added and removed, and each file's hunks (unless \
stat_only). The patch is read up to 8 MiB (truncated says so; counts stay whole).",
        annotations(read_only_hint = true)
    )]
    async fn fugue_diff(&self, Parameters(p): Parameters<DiffParams>) -> Result<Json<DiffView>, String> {
        if split_terminal(&p.terminal_id).0.is_some() {
            return Err("worktrees are on this machine only: no diff for a terminal on another host".into());
        }
        let (client, terminal) = self.terminal(&p.terminal_id).await?;
        let view = worktree::pane_diff(&client, &terminal, p.stat_only.unwrap_or(false))
            .await
            .map_err(describe)?;
        Ok(Json(view))
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
