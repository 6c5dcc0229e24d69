//! The session tools: list, create, kill, rename.

use super::FugueTools;
use crate::bridge::describe;
use crate::params::*;
use fugue_client::views::SessionView;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::{tool, tool_router};

#[tool_router(router = session_tools, vis = "pub(super)")]
impl FugueTools {
    #[tool(
        description = "List fugue sessions: id, name, cwd, number of terminals, creation time.",
        annotations(read_only_hint = true)
    )]
    async fn fugue_list_sessions(&self) -> Result<Json<SessionList>, String> {
        let client = self.client().await?;
        let sessions = client.list_sessions().await.map_err(describe)?;
        Ok(Json(SessionList {
            sessions: sessions.into_iter().map(|s| SessionView::from(&s)).collect(),
        }))
    }

    #[tool(
        description = "Create a session: a named group of terminals with its own working directory and environment."
    )]
    async fn fugue_create_session(
        &self,
        Parameters(p): Parameters<CreateSessionParams>,
    ) -> Result<Json<SessionView>, String> {
        let client = self.client().await?;
        let cwd = self.bridge.new_session_dir(p.cwd.as_deref())?;
        let env = p.env.map(EnvInput::into_vars).unwrap_or_default();
        let s = client
            .create_session(&p.name, cwd.as_deref().map(std::path::Path::new), env)
            .await
            .map_err(describe)?;
        Ok(Json(SessionView::from(&s)))
    }

    #[tool(
        description = "Kill a session by name or UUID: every terminal in it is terminated and it is removed.",
        annotations(destructive_hint = true)
    )]
    async fn fugue_kill_session(
        &self,
        Parameters(p): Parameters<SessionParams>,
    ) -> Result<Json<KillSessionResult>, String> {
        let client = self.client().await?;
        let s = client.destroy_session(&p.session).await.map_err(describe)?;
        Ok(Json(KillSessionResult {
            success: true,
            message: "Session killed".into(),
            session_id: s.id.to_string(),
            session_name: s.name,
        }))
    }

    #[tool(description = "Rename a session.")]
    async fn fugue_rename_session(
        &self,
        Parameters(p): Parameters<RenameSessionParams>,
    ) -> Result<Json<RenameSessionResult>, String> {
        let client = self.client().await?;
        let (s, previous) = client.rename_session(&p.session, &p.name).await.map_err(describe)?;
        Ok(Json(RenameSessionResult {
            success: true,
            session_id: s.id.to_string(),
            previous_name: previous,
            new_name: s.name,
        }))
    }
}
