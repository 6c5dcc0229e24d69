//! The MCP tools, by group: `sessions`, `terminals` (start, read, write, wait,
//! exec) and `agents` (status, approve/deny, prompts, spawning with a person's
//! confirmation) and `worktrees` (diffs of terminals' worktrees). Each call is its own request on the shared connection, so calls
//! run concurrently. Failures are tool results with `isError` and a message that
//! says what was wrong and what would work; rmcp reports arguments that do not
//! fit a tool's schema the same way. The server around them is [`crate::server`].

pub use delegate::DEFAULT_DELEGATE_MS;

use crate::bridge::{split_terminal, Bridge, ToolError};
use crate::schema::drop_null_unions;
use fugue_client::Client;
use rmcp::handler::server::router::tool::ToolRouter;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

mod agents;
mod confirm;
mod delegate;
mod sessions;
mod terminals;
mod worktrees;

/// The MCP server: every fugue tool, and terminals as resources.
#[derive(Clone)]
pub struct FugueTools {
    pub(crate) bridge: Bridge,
    pub(crate) tool_router: ToolRouter<Self>,
    /// Resources this MCP session watches for `resources/subscribe`: uri ->
    /// what stops its watch.
    pub(crate) watches: Arc<Mutex<HashMap<String, CancellationToken>>>,
    /// The parent of every watch the session starts: cancelled when the last
    /// clone goes (the MCP session ended), through `_alive`.
    pub(crate) session: CancellationToken,
    _alive: Arc<tokio_util::sync::DropGuard>,
}

/// The tools' router, made once: its schemas rewritten to drop `null` (see [`crate::schema`]).
fn router() -> ToolRouter<FugueTools> {
    static ROUTER: std::sync::OnceLock<ToolRouter<FugueTools>> = std::sync::OnceLock::new();
    ROUTER
        .get_or_init(|| {
            let mut router = FugueTools::session_tools()
                + FugueTools::terminal_tools()
                + FugueTools::agent_tools()
                + FugueTools::worktree_tools()
                + FugueTools::delegate_tools();
            for route in router.map.values_mut() {
                let tool = &mut route.attr;
                if let Some(uri) = crate::apps::of_tool(&tool.name) {
                    tool.meta = Some(crate::apps::tool_meta(uri));
                }
                let mut input = (*tool.input_schema).clone();
                drop_null_unions(&mut input);
                tool.input_schema = Arc::new(input);
                if let Some(output) = &tool.output_schema {
                    let mut output = (**output).clone();
                    drop_null_unions(&mut output);
                    tool.output_schema = Some(Arc::new(output));
                }
            }
            router
        })
        .clone()
}

impl FugueTools {
    pub fn new(bridge: Bridge) -> Self {
        let session = CancellationToken::new();
        Self {
            bridge,
            tool_router: router(),
            watches: Arc::default(),
            session: session.clone(),
            _alive: Arc::new(session.drop_guard()),
        }
    }

    async fn client(&self) -> Result<Client, ToolError> {
        self.bridge.client().await
    }

    /// The connection a terminal id (`HOST/ID` or `ID`) lives on, and its id there.
    async fn terminal(&self, terminal_id: &str) -> Result<(Client, String), ToolError> {
        let (host, id) = split_terminal(terminal_id);
        Ok((self.bridge.client_on(host).await?, id.to_string()))
    }
}
