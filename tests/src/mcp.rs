//! Calling MCP tools from a test's client: any rmcp client, in-process or the
//! real fugue-mcp over stdio (a `RunningService` derefs to its `Peer`).

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::Peer;
use rmcp::RoleClient;
use serde_json::Value;

/// A JSON object as a tool's arguments (anything else: none).
pub fn arguments(value: Value) -> serde_json::Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

/// Calls `tool`; a tool failure is a result (`is_error`), a JSON-RPC error panics.
pub async fn call(mcp: &Peer<RoleClient>, tool: &str, value: Value) -> CallToolResult {
    mcp.call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(arguments(value)))
        .await
        .expect("a tool result, not a JSON-RPC error")
}

/// The text of a result's first content block.
pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .unwrap_or_default()
}

/// The structured result of a call that must succeed; its text twin must be the
/// same JSON.
pub async fn ok(mcp: &Peer<RoleClient>, tool: &str, arguments: Value) -> Value {
    let result = call(mcp, tool, arguments).await;
    let text = text(&result);
    assert_ne!(result.is_error, Some(true), "{tool} failed: {text}");
    let structured = result.structured_content.expect("structuredContent");
    assert_eq!(
        serde_json::from_str::<Value>(&text).expect("text is the same JSON"),
        structured
    );
    structured
}

/// The message of a call that must fail.
pub async fn fails(mcp: &Peer<RoleClient>, tool: &str, arguments: Value) -> String {
    let result = call(mcp, tool, arguments).await;
    assert_eq!(result.is_error, Some(true), "{tool} should fail: {result:?}");
    text(&result)
}

/// Calls `tool` as an application would: through the running client, which in
/// the 2026-07-28 era answers a server's "input required" (asking its handler,
/// say for an elicitation) and calls again, until the tool completes.
pub async fn call_as_client<S: rmcp::ClientHandler>(
    mcp: &rmcp::service::RunningService<RoleClient, S>,
    tool: &str,
    value: Value,
) -> CallToolResult {
    mcp.call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(arguments(value)))
        .await
        .expect("a tool result, not a JSON-RPC error")
}

/// The real `fugue-mcp` for `daemon`, as an agent's MCP client starts it: run
/// in the test's directory (its HOME), with no `FUGUE_SESSION` from the test's
/// own environment. Callers add arguments and variables.
pub fn bridge_command(daemon: &crate::Daemon) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(crate::bin("fugue-mcp"));
    command
        .arg("--socket")
        .arg(&daemon.socket)
        .env("HOME", daemon.dir.path())
        .env_remove("FUGUE_SESSION")
        .current_dir(daemon.dir.path());
    command
}

/// An MCP client of the real `fugue-mcp` (see [`bridge_command`]) over stdio.
pub async fn stdio_bridge(daemon: &crate::Daemon) -> rmcp::service::RunningService<RoleClient, ()> {
    use rmcp::ServiceExt;
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(bridge_command(daemon))
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn fugue-mcp");
    ().serve(transport).await.expect("MCP startup")
}
