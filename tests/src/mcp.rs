//! Calling MCP tools from a test's client: any rmcp client, in-process or the
//! real fugue-mcp over stdio or HTTP (a `RunningService` derefs to its `Peer`).

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
    assert!(
        !has_null(&structured),
        "{tool}: results leave out what they lack, as their schemas say: {structured}"
    );
    assert_eq!(
        serde_json::from_str::<Value>(&text).expect("text is the same JSON"),
        structured
    );
    structured
}

/// Whether `value` holds a `null` anywhere.
fn has_null(value: &Value) -> bool {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Null => return true,
            Value::Object(object) => stack.extend(object.values()),
            Value::Array(items) => stack.extend(items.iter()),
            _ => {}
        }
    }
    false
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
    serve_stdio(bridge_command(daemon)).await
}

/// An MCP client of the bridge `command` starts, over its stdio.
pub async fn serve_stdio(command: tokio::process::Command) -> rmcp::service::RunningService<RoleClient, ()> {
    use rmcp::ServiceExt;
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(command)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn fugue-mcp");
    ().serve(transport).await.expect("MCP startup")
}

/// Starts `echo from-$((2*21))` through `fugue_start` and waits for its
/// output with `fugue_wait`; returns the terminal's id.
pub async fn start_echo_and_wait(mcp: &Peer<RoleClient>) -> String {
    let started = ok(
        mcp,
        "fugue_start",
        serde_json::json!({"purpose": "echo", "command": "echo from-$((2*21))"}),
    )
    .await;
    let id = started["terminal_id"].as_str().expect("a terminal id").to_string();
    ok(
        mcp,
        "fugue_wait",
        serde_json::json!({"terminal_id": id, "pattern": "from-42", "timeout_ms": 10000}),
    )
    .await;
    id
}

/// A client transport to an MCP server over Streamable HTTP at `url`, sending
/// `token` as `Authorization: Bearer`.
pub fn http_client(url: &str, token: Option<&str>) -> rmcp::transport::StreamableHttpClientTransport<reqwest::Client> {
    let mut config = rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(url);
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    rmcp::transport::StreamableHttpClientTransport::from_config(config)
}

/// The real `fugue-mcp --http` (see [`bridge_command`]) on a free loopback port.
pub struct HttpBridge {
    pub child: tokio::process::Child,
    /// Where it serves MCP (`http://127.0.0.1:PORT/mcp`).
    pub url: String,
    /// The token it printed (`None` with `--no-auth` or `--token-file`).
    pub token: Option<String>,
}

impl HttpBridge {
    /// Starts it with `args` after `--http 127.0.0.1:0`, and reads where it
    /// listens and its token from its first lines.
    pub async fn start(daemon: &crate::Daemon, args: &[&str]) -> HttpBridge {
        use tokio::io::AsyncBufReadExt;
        let mut command = bridge_command(daemon);
        command
            .args(["--http", "127.0.0.1:0"])
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().expect("spawn fugue-mcp --http");
        let stderr = child.stderr.take().expect("stderr");
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        // Where it listens, then how to authenticate (log lines may come first).
        let (mut url, mut token) = (None, None);
        let deadline = tokio::time::Instant::now() + crate::DEADLINE;
        loop {
            let line = tokio::time::timeout_at(deadline, lines.next_line())
                .await
                .expect("fugue-mcp --http says where it listens")
                .expect("read stderr")
                .expect("fugue-mcp --http exited before it listened");
            if let Some(at) = line.strip_prefix("fugue-mcp: MCP at ") {
                url = Some(at.to_string());
            } else if let Some(bearer) = line.strip_prefix("fugue-mcp: send Authorization: Bearer ") {
                token = (!bearer.starts_with('<')).then(|| bearer.to_string());
                break;
            } else if line.starts_with("fugue-mcp: --no-auth") {
                break;
            }
        }
        // Its later log lines go nowhere; the pipe must not fill.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        HttpBridge {
            child,
            url: url.expect("url"),
            token,
        }
    }

    /// An MCP client of it (the `initialize` era), with its token.
    pub async fn client(&self) -> rmcp::service::RunningService<RoleClient, ()> {
        use rmcp::ServiceExt;
        ().serve(http_client(&self.url, self.token.as_deref()))
            .await
            .expect("MCP startup over HTTP")
    }
}
