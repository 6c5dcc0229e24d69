//! The real `fugue-mcp --http` binary against a real daemon: who may talk to it
//! (token, Host, Origin, loopback only) and an MCP client doing real work over it.
//! The whole MCP suite also runs over HTTP in-process (mcp.rs, `over_http`), and
//! the official conformance suite against this binary (scripts/mcp-conformance).

use fugue_tests::mcp::{ok, HttpBridge};
use fugue_tests::Daemon;
use serde_json::json;

/// An `initialize` request as raw JSON-RPC, with these headers.
async fn initialize(url: &str, headers: &[(&str, &str)]) -> reqwest::Response {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.expect("an HTTP answer")
}

#[tokio::test]
async fn the_token_host_and_origin_are_checked_on_every_request() {
    let daemon = Daemon::start();
    let bridge = HttpBridge::start(&daemon, &[]).await;
    let token = bridge.token.clone().expect("a token was printed");
    assert_eq!(token.len(), 64);
    let bearer = format!("Bearer {token}");
    let port = bridge
        .url
        .split(':')
        .nth(2)
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .to_string();

    // No token, a wrong one, the token in the URL: 401, saying what to send.
    let missing = initialize(&bridge.url, &[]).await;
    assert_eq!(missing.status(), 401);
    assert_eq!(missing.headers()["www-authenticate"], "Bearer");
    assert!(missing.text().await.unwrap().contains("Authorization: Bearer"));
    let wrong = initialize(&bridge.url, &[("authorization", "Bearer 0123456789abcdef")]).await;
    assert_eq!(wrong.status(), 401);
    let in_url = initialize(&format!("{}?token={token}", bridge.url), &[]).await;
    assert_eq!(in_url.status(), 401);

    // DNS rebinding: a foreign Host, or our name with another port: 403 even with the token.
    for host in ["evil.example", &format!("evil.example:{port}"), "127.0.0.1:1"] {
        let rebound = initialize(&bridge.url, &[("authorization", &bearer), ("host", host)]).await;
        assert_eq!(rebound.status(), 403, "Host {host}");
    }
    // A page of another origin: 403; our own origin (a page we served) passes.
    let foreign = initialize(
        &bridge.url,
        &[("authorization", &bearer), ("origin", "http://evil.example")],
    )
    .await;
    assert_eq!(foreign.status(), 403);
    let own_origin = format!("http://localhost:{port}");
    let own = initialize(
        &bridge.url.replace("127.0.0.1", "localhost"),
        &[("authorization", &bearer), ("origin", &own_origin)],
    )
    .await;
    assert_eq!(own.status(), 200);
    assert!(own.headers().contains_key("mcp-session-id"));

    // With the token, a real client does real work.
    let mcp = bridge.client().await;
    let started = ok(&mcp, "fugue_start", json!({"purpose": "echo", "command": "cat"})).await;
    let id = started["terminal_id"].as_str().unwrap();
    ok(
        &mcp,
        "fugue_write",
        json!({"terminal_id": id, "input": "over http", "submit": true}),
    )
    .await;
    let waited = ok(
        &mcp,
        "fugue_wait",
        json!({"terminal_id": id, "pattern": "over http", "timeout_ms": 10000}),
    )
    .await;
    assert_eq!(waited["condition"], "pattern");
    // The person's CLI sees the agent's terminal: the same daemon.
    let listed = daemon.cli(&["panes", "--json"]).ok();
    assert!(listed.contains(id), "{listed}");
}

#[tokio::test]
async fn a_token_file_and_no_auth_and_loopback_only() {
    use std::os::unix::fs::PermissionsExt;
    let daemon = Daemon::start();
    let path = daemon.dir.path().join("mcp-token");
    std::fs::write(&path, "a-token-of-my-own-0123\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut bridge = HttpBridge::start(&daemon, &["--token-file", path.to_str().unwrap()]).await;
    assert_eq!(bridge.token, None, "a token from a file is not printed");
    assert_eq!(initialize(&bridge.url, &[]).await.status(), 401);
    bridge.token = Some("a-token-of-my-own-0123".into());
    let mcp = bridge.client().await;
    ok(&mcp, "fugue_list_sessions", json!({})).await;

    let open = HttpBridge::start(&daemon, &["--no-auth"]).await;
    assert_eq!(initialize(&open.url, &[]).await.status(), 200);

    // Anything but loopback is refused, saying why, before it listens.
    let refused = std::process::Command::new(fugue_tests::bin("fugue-mcp"))
        .args(["--socket", daemon.socket.to_str().unwrap(), "--http", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("0.0.0.0:0 is not a loopback address"), "{said}");
    // A token file others can read is refused too.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let refused = std::process::Command::new(fugue_tests::bin("fugue-mcp"))
        .args([
            "--socket",
            daemon.socket.to_str().unwrap(),
            "--http",
            "127.0.0.1:0",
            "--token-file",
        ])
        .arg(&path)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&refused.stderr).contains("readable by others"));
}

/// Sessions held at once are bounded: one more `initialize` gets 503 saying
/// what to do; ending a session makes room; stateless requests are not counted.
#[tokio::test]
async fn open_sessions_are_bounded() {
    let daemon = Daemon::start();
    let bridge = HttpBridge::start(&daemon, &["--no-auth", "--max-sessions", "2"]).await;
    let mut ids = Vec::new();
    for _ in 0..2 {
        let opened = initialize(&bridge.url, &[]).await;
        assert_eq!(opened.status(), 200);
        ids.push(opened.headers()["mcp-session-id"].to_str().unwrap().to_string());
    }
    let refused = initialize(&bridge.url, &[]).await;
    assert_eq!(refused.status(), 503);
    assert_eq!(refused.headers()["retry-after"], "60");
    let reason = refused.text().await.unwrap();
    assert!(
        reason.contains("2 MCP sessions are open") && reason.contains("--max-sessions") && reason.lines().count() == 1,
        "{reason}"
    );

    // A stateless (2026-07-28) request opens no session and is served.
    let listed = reqwest::Client::new()
        .post(&bridge.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/list")
        .body(
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"}}}})
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(listed.status(), 200, "{}", listed.text().await.unwrap());

    // Ending a session makes room for a new one.
    let ended = reqwest::Client::new()
        .delete(&bridge.url)
        .header("mcp-session-id", &ids[0])
        .send()
        .await
        .unwrap();
    assert!(ended.status().is_success(), "{}", ended.status());
    let reopened = initialize(&bridge.url, &[]).await;
    assert_eq!(reopened.status(), 200);
}
