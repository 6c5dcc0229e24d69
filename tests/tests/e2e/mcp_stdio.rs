//! The real `fugue-mcp` binary as a child process over stdio, driven by an MCP
//! client against a real daemon: both protocol eras, concurrency, cancellation,
//! a daemon restart, and exiting when stdin closes.

use fugue_tests::mcp::{arguments, call, ok, text};
use fugue_tests::{bin, Daemon, DEADLINE};
use rmcp::model::{CallToolRequestParams, ClientRequest, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, PeerRequestOptions, RunningService, ServiceError};
use rmcp::transport::TokioChildProcess;
use rmcp::RoleClient;
use serde_json::json;
use std::process::Stdio;
use std::time::Duration;

type Mcp = RunningService<RoleClient, ()>;

async fn bridge(daemon: &Daemon, mode: ClientLifecycleMode) -> (Mcp, u32) {
    let mut cmd = fugue_tests::mcp::bridge_command(daemon);
    cmd.arg("--agent-command")
        .arg(format!("claude={}", bin("fake-agent").display()))
        .env("FUGUE_LOG", "info");
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn fugue-mcp");
    let pid = transport.id().expect("pid");
    let mcp = ().serve_with_lifecycle(transport, mode).await.expect("MCP startup");
    (mcp, pid)
}

#[tokio::test]
async fn both_protocol_eras_run_the_terminal_tools() {
    let daemon = Daemon::start();
    let modes = [
        ClientLifecycleMode::Initialize,
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    ];
    for (n, mode) in modes.into_iter().enumerate() {
        let (mcp, pid) = bridge(&daemon, mode).await;
        let version = mcp.peer_info().expect("server info").protocol_version.clone();
        match n {
            0 => assert!(version <= ProtocolVersion::V_2025_11_25, "{version:?}"),
            _ => assert_eq!(version, ProtocolVersion::V_2026_07_28),
        }
        let tools = mcp.list_all_tools().await.unwrap();
        assert!(tools.len() >= 21, "{} tools", tools.len());

        let session = format!("era{n}");
        ok(&mcp, "fugue_create_session", json!({"name": session})).await;
        let started = ok(
            &mcp,
            "fugue_start",
            json!({"purpose": "echo", "command": "cat", "shell": false, "session": session}),
        )
        .await;
        let id = started["terminal_id"].as_str().unwrap().to_string();
        ok(
            &mcp,
            "fugue_write",
            json!({"terminal_id": id, "input": format!("hello era {n}"), "submit": true}),
        )
        .await;
        let waited = ok(
            &mcp,
            "fugue_wait",
            json!({"terminal_id": id, "pattern": format!("hello era {n}"), "timeout_ms": 10000}),
        )
        .await;
        assert_eq!(waited["condition"], "pattern");
        let read = ok(&mcp, "fugue_read", json!({"terminal_id": id})).await;
        assert!(read["text"].as_str().unwrap().contains(&format!("hello era {n}")));
        let killed = ok(&mcp, "fugue_kill", json!({"terminal_id": id})).await;
        assert_eq!(killed["status"], "exited");
        ok(&mcp, "fugue_release", json!({"terminal_id": id})).await;
        // kill_session by name and by UUID.
        let by_name = ok(&mcp, "fugue_kill_session", json!({"session": session})).await;
        assert_eq!(by_name["message"], "Session killed");
        let other = ok(&mcp, "fugue_create_session", json!({"name": format!("uuid{n}")})).await;
        let by_id = ok(&mcp, "fugue_kill_session", json!({"session": other["id"]})).await;
        assert_eq!(by_id["session_name"], format!("uuid{n}"));
        let missing = call(&mcp, "fugue_kill_session", json!({"session": other["id"]})).await;
        assert_eq!(missing.is_error, Some(true));
        assert!(text(&missing).contains("session not found"), "{}", text(&missing));

        // Closing stdin ends the bridge.
        mcp.cancel().await.unwrap();
        fugue_tests::procfs::wait_gone(pid, "fugue-mcp to exit");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_concurrent_calls_each_get_their_own_result() {
    let daemon = Daemon::start();
    let (mcp, _) = bridge(&daemon, ClientLifecycleMode::Initialize).await;
    let calls = (0..10).map(|i| {
        let mcp = &mcp;
        async move {
            let out = ok(
                mcp,
                "fugue_exec",
                json!({"command": "sh", "args": ["-c", format!("sleep 0.{i}; echo marker-{i}")]}),
            )
            .await;
            (i, out)
        }
    });
    for (i, out) in futures::future::join_all(calls).await {
        assert_eq!(
            out["output"],
            format!("marker-{i}"),
            "call {i} got someone else's result"
        );
        assert_eq!(out["exit_code"], 0);
    }
    mcp.cancel().await.unwrap();
}

#[tokio::test]
async fn a_cancelled_wait_stops_in_the_daemon() {
    let daemon = Daemon::start();
    let (mcp, _) = bridge(&daemon, ClientLifecycleMode::Initialize).await;
    let started = ok(
        &mcp,
        "fugue_start",
        json!({"purpose": "idle", "command": "cat", "shell": false}),
    )
    .await;
    let id = started["terminal_id"].as_str().unwrap();
    let request = ClientRequest::CallToolRequest(rmcp::model::Request::new(
        CallToolRequestParams::new("fugue_wait").with_arguments(arguments(
            json!({"terminal_id": id, "pattern": "never", "timeout_ms": 60000}),
        )),
    ));
    // The client gives up after 300 ms and sends notifications/cancelled.
    let handle = mcp
        .send_cancellable_request(request, PeerRequestOptions::with_timeout(Duration::from_millis(300)))
        .await
        .unwrap();
    match handle.await_response().await {
        Err(ServiceError::Timeout { .. }) => {}
        other => panic!("expected the client-side timeout, got {other:?}"),
    }
    // The cancellation travels bridge -> daemon.
    daemon.until_logged_async("request cancelled by the client").await;
    let still = ok(&mcp, "fugue_list", json!({})).await;
    assert_eq!(still["terminals"][0]["status"], "running");
    mcp.cancel().await.unwrap();
}

#[tokio::test]
async fn the_bridge_survives_a_daemon_restart() {
    let mut daemon = Daemon::start();
    let (mcp, _) = bridge(&daemon, ClientLifecycleMode::Initialize).await;
    let started = ok(
        &mcp,
        "fugue_start",
        json!({"purpose": "before", "command": "cat", "shell": false}),
    )
    .await;
    let id = started["terminal_id"].as_str().unwrap().to_string();
    // A call in flight when the daemon goes away says so.
    let waiting = {
        let peer = mcp.peer().clone();
        let id = id.clone();
        tokio::spawn(async move {
            peer.call_tool(CallToolRequestParams::new("fugue_wait").with_arguments(arguments(
                json!({"terminal_id": id, "pattern": "never", "timeout_ms": 60000}),
            )))
            .await
        })
    };
    daemon.until_logged_async("request=\"WaitFor\"").await;
    let status = daemon.signal_and_wait(libc::SIGTERM);
    assert!(status.success());
    let failed = tokio::time::timeout(DEADLINE, waiting)
        .await
        .expect("the wait ends")
        .unwrap()
        .unwrap();
    assert_eq!(failed.is_error, Some(true));
    let message = text(&failed);
    assert!(
        message.contains("the daemon is shutting down") || message.contains("lost the connection to fugued"),
        "{message}"
    );

    daemon.restart(&[]);
    // The next call reconnects; the new daemon brought back the session, and the
    // terminal that was running when the daemon stopped is `lost`.
    let list = ok(&mcp, "fugue_list_sessions", json!({})).await;
    assert_eq!(list["sessions"][0]["name"], "mcp", "{list}");
    let terminals = ok(&mcp, "fugue_list", json!({})).await;
    assert_eq!(terminals["terminals"][0]["id"], id.as_str(), "{terminals}");
    assert_eq!(terminals["terminals"][0]["status"], "lost", "{terminals}");
    let again = ok(
        &mcp,
        "fugue_start",
        json!({"purpose": "after", "command": "cat", "shell": false}),
    )
    .await;
    assert_eq!(again["session"], "mcp");
    mcp.cancel().await.unwrap();
}

/// An MCP client that strips the environment (the SDKs' stdio clients pass
/// HOME, LOGNAME, PATH, SHELL, TERM and USER; no XDG_RUNTIME_DIR) still puts
/// fugue-mcp on the person's daemon, whose socket is in their runtime directory
/// (/run/user/$UID), instead of starting a second daemon under /tmp. Before,
/// fugue-mcp fell back to /tmp/fugue-$UID and the agent saw none of the
/// person's terminals (issue 31).
#[tokio::test]
async fn a_stripped_environment_reaches_the_persons_daemon() {
    let uid = rustix::process::getuid().as_raw();
    let run_user = std::path::PathBuf::from(format!("/run/user/{uid}"));
    // A login session's runtime directory (systemd makes it; tests run as
    // root and make it where the machine has none, and take it away after).
    struct Made(Option<std::path::PathBuf>);
    impl Drop for Made {
        fn drop(&mut self) {
            if let Some(dir) = &self.0 {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
    }
    let _made = match run_user.exists() {
        true => Made(None),
        false => {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&run_user)
                .unwrap();
            Made(Some(run_user.clone()))
        }
    };
    let socket = run_user.join("fugue").join("fugue.sock");
    assert!(
        std::os::unix::net::UnixStream::connect(&socket).is_err(),
        "a daemon already listens on {}: stop it to run this test",
        socket.display()
    );
    let daemon = Daemon::start_on(&socket);
    let client = daemon.client().await;
    client.create_session("person", None, vec![]).await.unwrap();
    let mut spec = fugue_client::protocol::SpawnSpec::new("person");
    spec.title = Some("the-persons-pane".into());
    client.create_pane(spec).await.unwrap();

    // Exactly what the MCP SDKs' stdio clients pass on.
    let mut cmd = tokio::process::Command::new(bin("fugue-mcp"));
    cmd.env_clear()
        .env("HOME", daemon.dir.path())
        .env("LOGNAME", "root")
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("SHELL", "/bin/sh")
        .env("TERM", "xterm-256color")
        .env("USER", "root")
        .current_dir(daemon.dir.path());
    let (transport, stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn fugue-mcp");
    let mcp = ().serve_with_lifecycle(transport, ClientLifecycleMode::Initialize).await.expect("MCP startup");
    let listed = ok(&mcp, "fugue_list", json!({"all_sessions": true})).await;
    let titles: Vec<&str> = listed["terminals"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["title"].as_str())
        .collect();
    assert_eq!(titles, vec!["the-persons-pane"], "{listed}");
    mcp.cancel().await.unwrap();
    // Its log says which daemon and why.
    let mut said = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut stderr.expect("stderr"), &mut said)
        .await
        .unwrap();
    assert!(said.contains(&socket.display().to_string()), "{said}");
    assert!(
        said.contains("in /run/user/$UID ($XDG_RUNTIME_DIR is not set)"),
        "{said}"
    );
    // And the daemon's own status says the same of itself.
    let status = daemon.cli(&["daemon", "status"]).ok();
    assert!(
        status.contains(&format!("socket   {} (given with --socket)", socket.display())),
        "{status}"
    );
}

/// rmcp answers a ping before the first request whatever era it declares; the
/// 2026-07-28 revision has no ping, so fugue-mcp refuses one that declares it.
#[tokio::test]
async fn a_ping_of_the_2026_era_is_not_found_and_an_older_one_answered() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let daemon = Daemon::start();
    let mut child = fugue_tests::mcp::bridge_command(&daemon)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {}});
    let modern = json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"_meta": meta}});
    let older = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(format!("{modern}\n{older}\n").as_bytes())
        .await
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut answers = Vec::new();
    for _ in 0..2 {
        let line = tokio::time::timeout(DEADLINE, lines.next_line())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        answers.push(serde_json::from_str::<serde_json::Value>(&line).unwrap());
    }
    let (first, second) = (&answers[0], &answers[1]);
    assert_eq!(
        (first["id"].clone(), first["error"]["code"].clone()),
        (json!(1), json!(-32601)),
        "{first}"
    );
    assert_eq!(
        (second["id"].clone(), second["result"].clone()),
        (json!(2), json!({})),
        "{second}"
    );
}
