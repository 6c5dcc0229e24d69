//! The MCP bridge, in-process over a duplex pipe against a real daemon: every tool,
//! the error paths, and agents (a fake Claude-like CLI) steered through it.

use fugue_mcp::bridge::{Bridge, BridgeConfig};
use fugue_mcp::tools::FugueTools;
use fugue_tests::mcp::{call_as_client, fails, ok, text};
use fugue_tests::{bin, wait_for, wait_until, Daemon, DEADLINE};
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction, Implementation,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::json;
use std::collections::BTreeMap;

/// A test MCP client; `elicitation` None means it cannot ask a person.
#[derive(Clone, Default)]
struct TestClient {
    elicitation: Option<bool>,
    /// Where `notifications/resources/updated` uris go (initialize era).
    updates: Option<tokio::sync::mpsc::UnboundedSender<String>>,
    /// Declares the tasks extension: long calls may answer with a task.
    tasks: bool,
}

impl ClientHandler for TestClient {
    fn get_info(&self) -> ClientConfig {
        let mut caps = match self.elicitation {
            Some(_) => ClientCapabilities::builder().enable_elicitation().build(),
            None => ClientCapabilities::default(),
        };
        if self.tasks {
            caps.extensions = ClientCapabilities::builder().enable_tasks().build().extensions;
        }
        ClientConfig::new(caps, Implementation::new("fugue-tests", "0"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams { message, .. } = request else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        assert!(message.starts_with("Start claude in "), "{message}");
        Ok(match self.elicitation {
            Some(true) => ElicitResult::new(ElicitationAction::Accept).with_content(json!({"confirm": true})),
            _ => ElicitResult::new(ElicitationAction::Decline),
        })
    }

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _: rmcp::service::NotificationContext<RoleClient>,
    ) {
        if let Some(updates) = &self.updates {
            let _ = updates.send(params.uri);
        }
    }
}

type Mcp = RunningService<RoleClient, TestClient>;

async fn connect(via: Via, daemon: &Daemon, client: TestClient, allow_spawn: bool) -> Mcp {
    connect_in(via, Era::Initialize, daemon, client, allow_spawn).await
}

/// How a test's client reaches the bridge: every test here runs both ways
/// (see `over_both_transports!` at the end).
#[derive(Clone, Copy, Debug)]
enum Via {
    /// In-process, over a pipe: what fugue-mcp does on stdio.
    Pipe,
    /// Streamable HTTP on loopback, with a token: what `fugue-mcp --http` does.
    Http,
}

/// The MCP protocol era a test client speaks.
#[derive(Clone, Copy, Debug)]
enum Era {
    /// `initialize` first (2025-11-25 and before): the server may call the client.
    Initialize,
    /// 2026-07-28: no handshake, and a server asks its client for input by
    /// answering a call with "input required".
    Stateless,
}

/// Serves `bridge` over HTTP on a free loopback port, with a token; a client
/// transport to it.
async fn http_bridge(bridge: Bridge) -> rmcp::transport::StreamableHttpClientTransport<reqwest::Client> {
    let listener = fugue_mcp::http::bind("127.0.0.1:0".parse().unwrap())
        .await
        .expect("bind");
    let url = format!("http://{}{}", listener.local_addr().unwrap(), fugue_mcp::http::PATH);
    let token = fugue_client::token::generate().unwrap();
    let security = fugue_mcp::http::HttpSecurity {
        token: Some(token.clone()),
        allow_hosts: vec![],
        max_sessions: fugue_mcp::http::MAX_SESSIONS,
    };
    let shutdown = tokio_util::sync::CancellationToken::new();
    tokio::spawn(fugue_mcp::http::serve(listener, bridge, security, shutdown));
    fugue_tests::mcp::http_client(&url, Some(&token))
}

async fn connect_in(via: Via, era: Era, daemon: &Daemon, client: TestClient, allow_spawn: bool) -> Mcp {
    let mut agents = BTreeMap::new();
    agents.insert("claude".to_string(), bin("fake-agent").display().to_string());
    let config = BridgeConfig {
        host: None,
        socket: Some(daemon.socket.clone()),
        default_session: "mcp".into(),
        cwd: daemon.dir.path().to_path_buf(),
        allow_spawn,
        allow_merge: false,
        allow_discard: false,
        agent_commands: agents,
    };
    let mode = match era {
        Era::Initialize => rmcp::service::ClientLifecycleMode::Initialize,
        Era::Stateless => rmcp::service::ClientLifecycleMode::Discover {
            preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
        },
    };
    let mcp = match via {
        Via::Pipe => {
            let (server_io, client_io) = tokio::io::duplex(1 << 16);
            tokio::spawn(async move {
                let server = FugueTools::new(Bridge::new(config))
                    .serve(server_io)
                    .await
                    .expect("serve");
                let _ = server.waiting().await;
            });
            rmcp::service::ClientServiceExt::serve_with_lifecycle(client, client_io, mode).await
        }
        Via::Http => {
            let transport = http_bridge(Bridge::new(config)).await;
            rmcp::service::ClientServiceExt::serve_with_lifecycle(client, transport, mode).await
        }
    }
    .expect("MCP handshake");
    if let Era::Stateless = era {
        let version = mcp.peer_info().map(|i| i.protocol_version.clone());
        assert_eq!(version, Some(rmcp::model::ProtocolVersion::V_2026_07_28));
    }
    mcp
}

async fn tools_are_listed_with_described_parameters_and_annotations(via: Via) {
    let daemon = Daemon::start();
    let mcp = connect(via, &daemon, TestClient::default(), false).await;
    let tools = mcp.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for expected in [
        "fugue_list_sessions",
        "fugue_create_session",
        "fugue_kill_session",
        "fugue_rename_session",
        "fugue_start",
        "fugue_list",
        "fugue_read",
        "fugue_write",
        "fugue_send_keys",
        "fugue_interrupt",
        "fugue_kill",
        "fugue_release",
        "fugue_capture",
        "fugue_wait",
        "fugue_exec",
        "fugue_list_agents",
        "fugue_agent_status",
        "fugue_approve",
        "fugue_deny",
        "fugue_send_prompt",
        "fugue_spawn_agent",
        "fugue_grep",
    ] {
        assert!(names.contains(&expected), "{expected} missing from {names:?}");
    }
    for tool in &tools {
        let annotations = tool.annotations.clone().unwrap_or_default();
        let read_only = [
            "fugue_list_sessions",
            "fugue_list",
            "fugue_read",
            "fugue_capture",
            "fugue_agent_status",
            "fugue_wait",
            "fugue_list_agents",
            "fugue_grep",
        ];
        if read_only.contains(&tool.name.as_ref()) {
            assert_eq!(annotations.read_only_hint, Some(true), "{}", tool.name);
        }
        if ["fugue_kill", "fugue_release", "fugue_kill_session"].contains(&tool.name.as_ref()) {
            assert_eq!(annotations.destructive_hint, Some(true), "{}", tool.name);
        }
        assert!(tool.output_schema.is_some(), "{} has an output schema", tool.name);
        let schema = serde_json::to_value(&tool.input_schema).unwrap();
        for (param, spec) in schema["properties"].as_object().cloned().unwrap_or_default() {
            assert!(
                spec.get("description").is_some(),
                "{}.{param} has no description",
                tool.name
            );
        }
    }
    let start = tools.iter().find(|t| t.name == "fugue_start").unwrap();
    assert!(start.description.as_deref().unwrap().contains("Call fugue_list first"));
}

async fn sessions_by_name_and_uuid(via: Via) {
    let daemon = Daemon::start();
    let mcp = connect(via, &daemon, TestClient::default(), false).await;
    let api = ok(&mcp, "fugue_create_session", json!({"name": "api", "env": {"A": "1"}})).await;
    ok(
        &mcp,
        "fugue_create_session",
        json!({"name": "web", "cwd": "/tmp", "env": [{"name": "B", "value": "2"}]}),
    )
    .await;
    let list = ok(&mcp, "fugue_list_sessions", json!({})).await;
    assert_eq!(list["sessions"].as_array().unwrap().len(), 2);
    assert_eq!(list["sessions"][1]["cwd"], "/tmp");
    let renamed = ok(&mcp, "fugue_rename_session", json!({"session": "web", "name": "www"})).await;
    assert_eq!(
        renamed,
        json!({"success": true, "session_id": renamed["session_id"], "previous_name": "web", "new_name": "www"})
    );
    let killed = ok(&mcp, "fugue_kill_session", json!({"session": api["id"]})).await;
    assert_eq!(
        killed,
        json!({"success": true, "message": "Session killed", "session_id": api["id"], "session_name": "api"})
    );
    let killed = ok(&mcp, "fugue_kill_session", json!({"session": "www"})).await;
    assert_eq!(killed["session_name"], "www");
    ok(&mcp, "fugue_create_session", json!({"name": "left"})).await;
    let err = fails(&mcp, "fugue_kill_session", json!({"session": "dev"})).await;
    assert_eq!(err, "session not found: 'dev'; sessions: left");
    let err = fails(&mcp, "fugue_create_session", json!({"name": "bad name"})).await;
    assert!(err.contains("may not contain"), "{err}");
    let err = fails(&mcp, "fugue_create_session", json!({"name": "x", "cwd": "no/such"})).await;
    assert!(err.contains("directory does not exist"), "{err}");
}

async fn terminal_lifecycle_through_the_tools(via: Via) {
    let daemon = Daemon::start();
    let mcp = connect(via, &daemon, TestClient::default(), false).await;
    // Default session "mcp" is created on first use; a CLI-started pane shows up too.
    let started = ok(
        &mcp,
        "fugue_start",
        json!({"purpose": "echo server", "command": "cat", "shell": false, "title": "echo"}),
    )
    .await;
    assert_eq!(started["session"], "mcp");
    let id = started["terminal_id"].as_str().unwrap().to_string();
    daemon.cli(&["run", "-s", "mcp", "--title", "human", "--", "true"]).ok();
    let list = ok(&mcp, "fugue_list", json!({})).await;
    let titles: Vec<&str> = list["terminals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["echo", "human"]);
    assert_eq!(list["terminals"][0]["purpose"], "echo server");

    ok(
        &mcp,
        "fugue_write",
        json!({"terminal_id": id, "input": "first line", "submit": true}),
    )
    .await;
    let waited = ok(
        &mcp,
        "fugue_wait",
        json!({"terminal_id": id, "pattern": "first l\\w+e", "timeout_ms": 10000}),
    )
    .await;
    assert_eq!(waited["condition"], "pattern");
    assert_eq!(waited["matched"], "first line");
    // The pattern may match the terminal's echo before cat's copy arrives: let the
    // output settle before taking the offset.
    let settled = ok(
        &mcp,
        "fugue_wait",
        json!({"terminal_id": id, "idle_ms": 300, "timeout_ms": 10000}),
    )
    .await;
    assert_eq!(settled["condition"], "idle");
    let read = ok(&mcp, "fugue_read", json!({"terminal_id": id})).await;
    assert!(read["text"].as_str().unwrap().contains("first line"));
    assert_eq!(read["status"], "running");
    // Only what is new since the last read; a second reader is not disturbed.
    let offset = read["next_offset"].clone();
    ok(
        &mcp,
        "fugue_send_keys",
        json!({"terminal_id": id, "keys": ["s", "e", "c", "o", "n", "d", "Enter"]}),
    )
    .await;
    ok(
        &mcp,
        "fugue_wait",
        json!({"terminal_id": id, "pattern": "second", "since_offset": offset, "timeout_ms": 10000}),
    )
    .await;
    // As above: the echo may match before cat's copy; the cursor row below
    // counts both.
    ok(
        &mcp,
        "fugue_wait",
        json!({"terminal_id": id, "idle_ms": 300, "timeout_ms": 10000}),
    )
    .await;
    let newer = ok(&mcp, "fugue_read", json!({"terminal_id": id, "since_offset": offset})).await;
    assert!(!newer["text"].as_str().unwrap().contains("first line"), "{newer}");
    assert!(newer["text"].as_str().unwrap().contains("second"));
    let again = ok(&mcp, "fugue_read", json!({"terminal_id": id, "lines": 2})).await;
    assert!(again["text"].as_str().unwrap().contains("second"));
    let raw = ok(
        &mcp,
        "fugue_read",
        json!({"terminal_id": id, "raw": true, "max_bytes": 4}),
    )
    .await;
    assert_eq!(raw["text"].as_str().unwrap().len(), 4);
    assert_eq!(raw["truncated"], true);

    let screen = ok(&mcp, "fugue_capture", json!({"terminal_id": id})).await;
    assert_eq!(screen["lines"][0], "first line");
    assert_eq!(
        (screen["cols"].as_u64(), screen["rows"].as_u64()),
        (Some(120), Some(40))
    );
    assert_eq!(screen["cursor"]["row"], 4);

    let idle = ok(
        &mcp,
        "fugue_wait",
        json!({"terminal_id": id, "idle_ms": 200, "timeout_ms": 10000}),
    )
    .await;
    assert_eq!(idle["condition"], "idle");
    let timeout = ok(
        &mcp,
        "fugue_wait",
        json!({"terminal_id": id, "pattern": "never", "timeout_ms": 200}),
    )
    .await;
    assert_eq!(timeout["condition"], "timeout");

    let killed = ok(&mcp, "fugue_kill", json!({"terminal_id": id, "signal": "KILL"})).await;
    assert_eq!(
        (killed["status"].as_str(), killed["signal"].as_str()),
        (Some("exited"), Some("SIGKILL"))
    );
    // Still readable after the kill, then released and gone.
    ok(&mcp, "fugue_read", json!({"terminal_id": id})).await;
    ok(&mcp, "fugue_release", json!({"terminal_id": id})).await;
    let err = fails(&mcp, "fugue_read", json!({"terminal_id": id})).await;
    assert!(err.contains("pane not found"), "{err}");
}

async fn interrupt_exec_and_waiting_for_exit(via: Via) {
    let daemon = Daemon::start();
    let mcp = connect(via, &daemon, TestClient::default(), false).await;
    let shell = ok(&mcp, "fugue_start", json!({"purpose": "shell"})).await;
    let id = shell["terminal_id"].as_str().unwrap();
    ok(
        &mcp,
        "fugue_write",
        json!({"terminal_id": id, "input": "sleep 30; echo after-$?", "submit": true}),
    )
    .await;
    // Polled: a shell's child starting shows only in /proc.
    wait_until("sleep to start", DEADLINE, || {
        let pid = daemon.cli(&["--json", "status", id]).json()["pid"].as_u64().unwrap() as u32;
        fugue_tests::children(pid)
            .into_iter()
            .find(|p| fugue_tests::comm(*p) == "sleep")
    });
    ok(&mcp, "fugue_interrupt", json!({"terminal_id": id})).await;
    ok(
        &mcp,
        "fugue_write",
        json!({"terminal_id": id, "input": "echo alive-$((1+1))", "submit": true}),
    )
    .await;
    ok(
        &mcp,
        "fugue_wait",
        json!({"terminal_id": id, "pattern": "^alive-2", "timeout_ms": 10000}),
    )
    .await;

    let done = ok(
        &mcp,
        "fugue_exec",
        json!({"command": "sh", "args": ["-c", "echo out; exit 4"]}),
    )
    .await;
    assert_eq!(
        (done["finished"].as_bool(), done["exit_code"].as_i64()),
        (Some(true), Some(4))
    );
    assert_eq!(done["output"], "out");
    let line = ok(&mcp, "fugue_exec", json!({"command": "echo a b | tr a-z A-Z"})).await;
    assert_eq!(line["output"], "A B");
    let slow = ok(
        &mcp,
        "fugue_exec",
        json!({"command": "sleep", "args": ["30"], "timeout_ms": 200}),
    )
    .await;
    assert_eq!(slow["finished"], false);
    let slow_id = slow["terminal_id"].as_str().unwrap();
    ok(&mcp, "fugue_kill", json!({"terminal_id": slow_id})).await;
    let exited = ok(
        &mcp,
        "fugue_wait",
        json!({"terminal_id": slow_id, "exit": true, "timeout_ms": 10000}),
    )
    .await;
    assert_eq!(
        (exited["condition"].as_str(), exited["signal"].as_str()),
        (Some("exit"), Some("SIGTERM"))
    );
}

async fn error_paths_are_tool_errors_that_say_what_would_work(via: Via) {
    let daemon = Daemon::start_with(&["--max-panes", "2"]);
    let mcp = connect(via, &daemon, TestClient::default(), false).await;
    // A missing required argument is a tool error, not a JSON-RPC error.
    let err = fails(&mcp, "fugue_start", json!({"command": "true"})).await;
    assert!(err.contains("missing field `purpose`"), "{err}");
    let err = fails(&mcp, "fugue_start", json!({"purpose": "x", "cwd": "does/not/exist"})).await;
    assert!(err.contains("directory does not exist: does/not/exist"), "{err}");
    let err = fails(
        &mcp,
        "fugue_start",
        json!({"purpose": "x", "command": "no-such-program", "shell": false}),
    )
    .await;
    assert!(err.contains("command not found: no-such-program"), "{err}");
    let err = fails(&mcp, "fugue_start", json!({"purpose": "x", "session": "nope"})).await;
    assert!(err.contains("session not found: 'nope'"), "{err}");
    for n in 0..2 {
        ok(
            &mcp,
            "fugue_start",
            json!({"purpose": format!("server {n}"), "command": "cat", "shell": false}),
        )
        .await;
    }
    let err = fails(
        &mcp,
        "fugue_start",
        json!({"purpose": "third", "command": "cat", "shell": false}),
    )
    .await;
    assert!(
        err.contains("the limit is 2")
            && err.contains("server 0")
            && err.contains("server 1")
            && err.contains("fugue_release"),
        "{err}"
    );
    let err = fails(&mcp, "fugue_read", json!({"terminal_id": "ffffffff"})).await;
    assert!(err.contains("pane not found"), "{err}");
    let err = fails(
        &mcp,
        "fugue_wait",
        json!({"terminal_id": "mcp:0", "pattern": "(unclosed"}),
    )
    .await;
    assert!(err.contains("bad pattern"), "{err}");
    let err = fails(&mcp, "fugue_wait", json!({"terminal_id": "mcp:0", "on": "sky"})).await;
    assert!(
        err.contains("unknown variant `sky`, expected `output` or `screen`"),
        "{err}"
    );
    let err = fails(
        &mcp,
        "fugue_wait",
        json!({"terminal_id": "mcp:0", "agent_state": "asleep"}),
    )
    .await;
    assert!(err.contains("unknown agent state"), "{err}");
    let err = fails(
        &mcp,
        "fugue_wait",
        json!({"terminal_id": "mcp:0", "needs": "coffee|any"}),
    )
    .await;
    assert!(err.contains("unknown need 'coffee'"), "{err}");
    let err = fails(
        &mcp,
        "fugue_send_keys",
        json!({"terminal_id": "mcp:0", "keys": ["Hyper-X"]}),
    )
    .await;
    assert!(err.contains("unknown key"), "{err}");
    let err = fails(
        &mcp,
        "fugue_approve",
        json!({"terminal_id": "mcp:0", "prompt_id": "0123456789abcdef"}),
    )
    .await;
    assert!(err.contains("not waiting for permission (it is"), "{err}");
    let err = fails(&mcp, "fugue_spawn_agent", json!({"prompt": "hi", "agent": "hal"})).await;
    assert!(err.contains("unknown agent 'hal'; agents: claude"), "{err}");
    // Hostile sizes, titles and timeouts are refused by the daemon's one check.
    let err = fails(
        &mcp,
        "fugue_start",
        json!({"purpose": "x", "cols": 65535, "rows": 65535, "session": "other"}),
    )
    .await;
    assert!(
        err.contains("size 65535x65535 exceeds the maximum 10000x10000"),
        "{err}"
    );
    let err = fails(
        &mcp,
        "fugue_start",
        json!({"purpose": "x", "title": "a\u{1b}[2Jb", "session": "other"}),
    )
    .await;
    assert!(err.contains("control character"), "{err}");
    let keys: Vec<String> = vec![format!("{}a", "M-".repeat(20_000))];
    let err = fails(&mcp, "fugue_send_keys", json!({"terminal_id": "mcp:0", "keys": keys})).await;
    assert!(err.contains("the maximum is 32"), "{err}");
    ok(&mcp, "fugue_list", json!({})).await;
}

async fn wait_state(mcp: &Mcp, id: &str, state: &str) {
    let waited = ok(
        mcp,
        "fugue_wait",
        json!({"terminal_id": id, "agent_state": state, "timeout_ms": 15000}),
    )
    .await;
    assert_eq!(waited["condition"], "agent_state", "waiting for {state}: {waited}");
}

async fn agents_are_detected_prompted_approved_and_denied(via: Via) {
    let daemon = Daemon::start();
    let mcp = connect(via, &daemon, TestClient::default(), false).await;
    let agent = ok(
        &mcp,
        "fugue_start",
        json!({"purpose": "agent", "command": bin("fake-agent"), "shell": false}),
    )
    .await;
    let id = agent["terminal_id"].as_str().unwrap().to_string();
    wait_state(&mcp, &id, "idle").await;
    let status = ok(&mcp, "fugue_agent_status", json!({"terminal_id": id})).await;
    assert_eq!(
        (status["agent"].as_str(), status["state"].as_str()),
        (Some("claude"), Some("idle"))
    );
    let agents = ok(&mcp, "fugue_list_agents", json!({})).await;
    assert_eq!(agents["agents"][0]["terminal_id"], id.as_str());
    assert_eq!(agents["agents"][0]["state"], "idle");

    let prompted = ok(
        &mcp,
        "fugue_send_prompt",
        json!({"terminal_id": id, "text": "build it"}),
    )
    .await;
    assert_eq!(prompted["went_busy"], true);
    // "Until it needs me or its turn ends", in one wait.
    let needs = ok(
        &mcp,
        "fugue_wait",
        json!({"terminal_id": id, "needs": "any", "agent_state": "idle|exited", "timeout_ms": 15000}),
    )
    .await;
    assert_eq!(needs["condition"], "agent_needs", "{needs}");
    let status = ok(&mcp, "fugue_agent_status", json!({"terminal_id": id})).await;
    assert_eq!(status["needs"], "permission", "{status}");
    assert!(
        status["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l == "Do you want to proceed?"),
        "{status}"
    );
    // Explained: the deciding signal is among the signals read, meaning the state.
    let decided = status["signals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["source"] == status["source"])
        .unwrap_or_else(|| panic!("no signal of the deciding source: {status}"));
    assert_eq!(decided["means"], "waiting_for_permission", "{status}");
    assert!(
        decided["since"].as_u64().unwrap() <= status["since"].as_u64().unwrap() + 1000,
        "{status}"
    );
    let explained = daemon.cli(&["agent", &id, "--explain"]).ok();
    assert!(
        explained.contains("signals (* decided):")
            && explained.contains("* screen")
            && explained.contains("Do you want to proceed?"),
        "{explained}"
    );
    // A prompt sent now is refused: the agent waits for a person.
    let blocked = fails(&mcp, "fugue_send_prompt", json!({"terminal_id": id, "text": "another"})).await;
    assert!(
        blocked.contains("agent_blocked") && blocked.contains("waiting_for_permission"),
        "{blocked}"
    );
    let prompt = status["prompt_id"]
        .as_str()
        .expect("a prompt_id while waiting")
        .to_string();
    // An answer meant for another prompt is refused and nothing is sent.
    let err = fails(
        &mcp,
        "fugue_approve",
        json!({"terminal_id": id, "prompt_id": "0123456789abcdef"}),
    )
    .await;
    assert!(
        err.contains("now shows another permission prompt") && err.contains(&prompt),
        "{err}"
    );
    let still = ok(&mcp, "fugue_agent_status", json!({"terminal_id": id})).await;
    assert_eq!(still["state"], "waiting_for_permission");
    let after = ok(&mcp, "fugue_approve", json!({"terminal_id": id, "prompt_id": prompt})).await;
    assert_ne!(after["state"], "waiting_for_permission");
    assert!(after.get("already_answered").is_none(), "{after}");
    // The same approval again: "already answered", nothing sent.
    let again = ok(&mcp, "fugue_approve", json!({"terminal_id": id, "prompt_id": prompt})).await;
    assert_eq!(again["already_answered"], "approved", "{again}");
    wait_state(&mcp, &id, "idle").await;
    let screen = ok(&mcp, "fugue_capture", json!({"terminal_id": id})).await;
    assert!(
        screen["lines"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l.as_str().unwrap().contains("approved: build it")),
        "{screen}"
    );

    ok(
        &mcp,
        "fugue_send_prompt",
        json!({"terminal_id": id, "text": "delete it"}),
    )
    .await;
    wait_state(&mcp, &id, "waiting_for_permission").await;
    let status = ok(&mcp, "fugue_agent_status", json!({"terminal_id": id})).await;
    let second = status["prompt_id"].as_str().unwrap().to_string();
    assert_ne!(second, prompt, "a new prompt has a new id");
    ok(&mcp, "fugue_deny", json!({"terminal_id": id, "prompt_id": second})).await;
    wait_state(&mcp, &id, "idle").await;
    let screen = ok(&mcp, "fugue_capture", json!({"terminal_id": id})).await;
    assert!(
        screen["lines"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l.as_str().unwrap().contains("denied: delete it")),
        "{screen}"
    );
    let err = fails(
        &mcp,
        "fugue_deny",
        json!({"terminal_id": id, "prompt_id": "0123456789abcdef"}),
    )
    .await;
    assert!(err.contains("it is idle"), "{err}");
}

/// An agent CLI that ignores an Enter right after a bracketed paste (Gemini CLI
/// 0.61 does; fake-agent copies it here) still gets its prompt submitted: the
/// bridge waits for the paste to settle before Enter. And when no turn starts,
/// the result says so instead of claiming the agent went busy.
/// fugue_hibernate puts an idle agent to rest (its state reads hibernated),
/// fugue_wake brings it back ready, and a prompt to a hibernated agent wakes it
/// and runs its turn: one fugue_send_prompt. Refusals: tests/e2e/hibernate.rs.
async fn an_agent_hibernates_and_wakes_through_the_tools(via: Via) {
    let daemon = Daemon::start();
    let mcp = connect(via, &daemon, TestClient::default(), false).await;
    let config = daemon.dir.path().join("claude-config");
    let env = json!({"CLAUDE_CONFIG_DIR": config, "FUGUE_AGENT_HOOKS": "0"});
    let start = json!({"purpose": "agent", "command": daemon.fake_claude(), "shell": false, "env": env});
    let agent = ok(&mcp, "fugue_start", start).await;
    let id = agent["terminal_id"].as_str().unwrap().to_string();
    wait_state(&mcp, &id, "idle").await;
    daemon.agent_session(&id).await;
    let slept = ok(&mcp, "fugue_hibernate", json!({"terminal_id": id})).await;
    assert_eq!(slept["state"], "hibernated", "{slept}");
    let woke = ok(&mcp, "fugue_wake", json!({"terminal_id": id})).await;
    assert_eq!(woke["state"], "idle", "{woke}");
    ok(&mcp, "fugue_hibernate", json!({"terminal_id": id})).await;
    let sent = ok(&mcp, "fugue_send_prompt", json!({"terminal_id": id, "text": "wake up"})).await;
    assert_eq!(sent["outcome"], "started", "{sent}");
    wait_state(&mcp, &id, "waiting_for_permission").await;
}

async fn a_prompt_is_submitted_where_enter_right_after_a_paste_is_ignored(via: Via) {
    let daemon = Daemon::start();
    let mcp = connect(via, &daemon, TestClient::default(), false).await;
    let start = |guard_ms: u32| {
        json!({"purpose": "agent", "command": bin("fake-agent"), "shell": false,
               "env": {"FAKE_AGENT_PASTE_GUARD_MS": guard_ms.to_string()}})
    };
    let agent = ok(&mcp, "fugue_start", start(50)).await;
    let id = agent["terminal_id"].as_str().unwrap().to_string();
    wait_state(&mcp, &id, "idle").await;
    let send = json!({"terminal_id": id, "text": "build it", "idempotency_key": "build-1"});
    let prompted = ok(&mcp, "fugue_send_prompt", send.clone()).await;
    assert_eq!(
        (prompted["went_busy"].as_bool(), prompted["outcome"].as_str()),
        (Some(true), Some("started")),
        "{prompted}"
    );
    assert!(
        prompted["at"].as_u64() > Some(0) && prompted.get("repeated").is_none(),
        "{prompted}"
    );
    wait_state(&mcp, &id, "waiting_for_permission").await;
    // The same key again: the first receipt, nothing sent (a send now would be
    // refused: the agent waits for permission).
    let again = ok(&mcp, "fugue_send_prompt", send).await;
    assert_eq!(again["repeated"], true, "{again}");
    assert_eq!(
        (&again["at"], &again["key"]),
        (&prompted["at"], &json!("build-1")),
        "{again}"
    );
    let other_key = json!({"terminal_id": id, "text": "build it", "idempotency_key": "build-2"});
    let blocked = fails(&mcp, "fugue_send_prompt", other_key.clone()).await;
    assert!(blocked.contains("agent_blocked"), "{blocked}");
    // A refused send gives its key up: the same key works once the agent is free.
    ok(&mcp, "fugue_send_keys", json!({"terminal_id": id, "keys": ["Enter"]})).await;
    wait_state(&mcp, &id, "idle").await;
    let later = ok(&mcp, "fugue_send_prompt", other_key).await;
    assert_eq!(
        (later["outcome"].as_str(), later.get("repeated")),
        (Some("started"), None),
        "{later}"
    );
    wait_state(&mcp, &id, "waiting_for_permission").await;

    // An agent that takes no Enter for a second after a paste (Gemini CLI's
    // 40 ms on a loaded machine): the prompt still in its box gets Enter again.
    let slow = ok(&mcp, "fugue_start", start(1000)).await;
    let slow_id = slow["terminal_id"].as_str().unwrap().to_string();
    wait_state(&mcp, &slow_id, "idle").await;
    let prompted = ok(
        &mcp,
        "fugue_send_prompt",
        json!({"terminal_id": slow_id, "text": "build it"}),
    )
    .await;
    assert_eq!(prompted["outcome"], "started", "{prompted}");
    assert!(
        prompted["evidence"][0]
            .as_str()
            .unwrap_or("")
            .contains("Enter sent again"),
        "{prompted}"
    );
    wait_state(&mcp, &slow_id, "waiting_for_permission").await;

    // An agent whose input box drops the first paste (a woken CLI not yet
    // listening): the box still empty, the prompt is pasted again.
    let drop_first = json!({"purpose": "agent", "command": bin("fake-agent"), "shell": false,
                            "env": {"FAKE_AGENT_DROP_FIRST_INPUT": "1"}});
    let deafened = ok(&mcp, "fugue_start", drop_first).await;
    let deafened_id = deafened["terminal_id"].as_str().unwrap().to_string();
    wait_state(&mcp, &deafened_id, "idle").await;
    let prompted = ok(
        &mcp,
        "fugue_send_prompt",
        json!({"terminal_id": deafened_id, "text": "build it"}),
    )
    .await;
    assert_eq!(prompted["outcome"], "started", "{prompted}");
    assert!(
        prompted["evidence"][0].as_str().unwrap_or("").contains("pasted again"),
        "{prompted}"
    );
    let screen = ok(&mcp, "fugue_capture", json!({"terminal_id": deafened_id})).await;
    assert!(
        !screen.to_string().contains("build itbuild it"),
        "the prompt went in twice: {screen}"
    );

    // An agent that takes no Enter for a minute after a paste: nothing starts.
    let deaf = ok(&mcp, "fugue_start", start(60_000)).await;
    let deaf_id = deaf["terminal_id"].as_str().unwrap().to_string();
    wait_state(&mcp, &deaf_id, "idle").await;
    let prompted = ok(
        &mcp,
        "fugue_send_prompt",
        json!({"terminal_id": deaf_id, "text": "build it"}),
    )
    .await;
    assert_eq!(prompted["went_busy"], false, "{prompted}");
    assert_eq!(prompted["outcome"], "prompt_stalled", "{prompted}");
    assert!(
        prompted["message"].as_str().unwrap().contains("no turn started"),
        "{prompted}"
    );
    assert!(
        prompted["evidence"][0]
            .as_str()
            .unwrap_or("")
            .contains("Enter sent again"),
        "{prompted}"
    );
}

async fn spawning_an_agent_needs_a_person_or_allow_spawn(via: Via) {
    let daemon = Daemon::start();
    let workdir = daemon.dir.path().join("project");
    std::fs::create_dir(&workdir).unwrap();
    // Both eras: a person who says no, a client that cannot ask, a person who says yes.
    for (n, era) in [Era::Initialize, Era::Stateless].into_iter().enumerate() {
        let args = json!({"prompt": "fix the tests", "name": format!("fix{n}"), "working_dir": "project"});
        let ask = |elicitation| TestClient {
            elicitation,
            ..TestClient::default()
        };
        let declining = connect_in(via, era, &daemon, ask(Some(false)), false).await;
        let result = call_as_client(&declining, "fugue_spawn_agent", args.clone()).await;
        assert!(text(&result).contains("declined"), "{era:?}: {result:?}");
        let no_ui = connect_in(via, era, &daemon, ask(None), false).await;
        let result = call_as_client(&no_ui, "fugue_spawn_agent", args.clone()).await;
        assert!(text(&result).contains("--allow-spawn"), "{era:?}: {result:?}");
        let sessions = ok(&no_ui, "fugue_list_sessions", json!({})).await;
        assert!(
            sessions["sessions"].as_array().unwrap().is_empty(),
            "{era:?}: {sessions}"
        );
        let accepting = connect_in(via, era, &daemon, ask(Some(true)), false).await;
        let result = call_as_client(&accepting, "fugue_spawn_agent", args.clone()).await;
        let spawned = result.structured_content.clone().unwrap_or_default();
        assert_eq!(spawned["session"], format!("fix{n}"), "{era:?}: {result:?}");
        if let Era::Stateless = era {
            // An answer the bridge never asked for (a forged or replayed request
            // state) starts nothing.
            let forged = rmcp::model::CallToolRequestParams::new("fugue_spawn_agent")
                .with_arguments(fugue_tests::mcp::arguments(json!({"prompt": "x", "name": "forged"})))
                .with_request_state("0123456789abcdef".to_string())
                .with_input_responses(
                    [(
                        "confirm".to_string(),
                        json!({"action": "accept", "content": {"confirm": true}}),
                    )]
                    .into(),
                );
            let refused = accepting.peer().call_tool_once(forged).await.expect("a tool result");
            let rmcp::model::CallToolResponse::Complete(refused) = refused else {
                panic!("asked again instead of refusing: {refused:?}");
            };
            assert!(text(&refused).contains("no question still open"), "{refused:?}");
        }
        ok(&accepting, "fugue_kill_session", json!({"session": format!("fix{n}")})).await;
    }
    let args = json!({"prompt": "fix the tests", "name": "fixer", "working_dir": "project"});

    let declining = connect(
        via,
        &daemon,
        TestClient {
            elicitation: Some(false),
            ..TestClient::default()
        },
        false,
    )
    .await;
    let err = fails(&declining, "fugue_spawn_agent", args.clone()).await;
    assert!(err.contains("declined"), "{err}");
    let no_ui = connect(via, &daemon, TestClient::default(), false).await;
    let err = fails(&no_ui, "fugue_spawn_agent", args.clone()).await;
    assert!(
        err.contains("does not support MCP elicitation") && err.contains("--allow-spawn"),
        "{err}"
    );
    assert!(
        ok(&no_ui, "fugue_list_sessions", json!({})).await["sessions"]
            .as_array()
            .unwrap()
            .is_empty(),
        "nothing started"
    );

    let accepting = connect(
        via,
        &daemon,
        TestClient {
            elicitation: Some(true),
            ..TestClient::default()
        },
        false,
    )
    .await;
    let spawned = ok(&accepting, "fugue_spawn_agent", args.clone()).await;
    assert_eq!(
        (spawned["session"].as_str(), spawned["agent"].as_str()),
        (Some("fixer"), Some("claude"))
    );
    let id = spawned["terminal_id"].as_str().unwrap();
    // The prompt went to the agent, which now asks for permission.
    wait_state(&accepting, id, "waiting_for_permission").await;
    let sessions = ok(&accepting, "fugue_list_sessions", json!({})).await;
    assert_eq!(
        sessions["sessions"][0]["cwd"],
        workdir.canonicalize().unwrap().display().to_string()
    );
    let err = fails(&accepting, "fugue_spawn_agent", args.clone()).await;
    assert!(err.contains("already exists"), "{err}");
    let err = fails(
        &accepting,
        "fugue_spawn_agent",
        json!({"prompt": "x", "working_dir": "nowhere"}),
    )
    .await;
    assert!(err.contains("directory does not exist"), "{err}");

    let allowed = connect(via, &daemon, TestClient::default(), true).await;
    let spawned = ok(&allowed, "fugue_spawn_agent", json!({"prompt": "go", "name": "auto"})).await;
    assert_eq!(spawned["session"], "auto");
}

async fn a_terminal_started_with_a_restart_policy_comes_back(via: Via) {
    let daemon = Daemon::start();
    let mcp = connect(via, &daemon, TestClient::default(), false).await;
    let err = fails(
        &mcp,
        "fugue_start",
        json!({"purpose": "x", "command": "true", "restart": "sometimes"}),
    )
    .await;
    assert!(
        err.contains("unknown restart policy 'sometimes'; use one of never, on-failure, always"),
        "{err}"
    );
    let started = ok(
        &mcp,
        "fugue_start",
        json!({"purpose": "flaky", "command": "sh", "args": ["-c", "exit 4"], "shell": false,
               "restart": "on-failure", "max_restarts": 1}),
    )
    .await;
    let id = started["terminal_id"].as_str().unwrap().to_string();
    let list = daemon
        .until_event("the restart to be tried and given up", DEADLINE, || async {
            let list = ok(&mcp, "fugue_list", json!({})).await;
            let terminal = list["terminals"]
                .as_array()?
                .iter()
                .find(|t| t["id"] == id.as_str())?
                .clone();
            (terminal["restarts"] == 1 && terminal["status"] == "exited").then_some(terminal)
        })
        .await;
    assert_eq!(list["restart"], "on-failure", "{list}");
    assert_eq!(list["last_exit"], "exited with code 4", "{list}");
}

/// A pane whose program's file name holds an OSC title sequence and a bidi
/// override is listed by MCP under a clean title (the daemon cleans names
/// once, for every front end; issue 27).
async fn names_reach_agents_clean(via: Via) {
    let daemon = Daemon::start();
    let client = daemon.client().await;
    client.create_session("mcp", None, vec![]).await.unwrap();
    let spec = fugue_tests::evil_program_spec(daemon.dir.path(), "mcp");
    client.create_pane(spec).await.unwrap();
    let mcp = connect(via, &daemon, TestClient::default(), false).await;
    let listed = ok(&mcp, "fugue_list", json!({})).await;
    assert_eq!(listed["terminals"][0]["title"], fugue_tests::EVIL_TITLE, "{listed}");
}

/// An agent finds which terminal printed a line: in its own session by default,
/// in every session with all_sessions, each match with its terminal_id.
async fn grep_says_which_terminal_printed_it(via: Via) {
    let daemon = Daemon::start();
    let mcp = connect(via, &daemon, TestClient::default(), false).await;
    let started = ok(
        &mcp,
        "fugue_start",
        json!({"purpose": "tests", "command": "sh", "args": ["-c", "echo 'panic: index out of range'; exec sleep 600"], "shell": false}),
    )
    .await;
    let id = started["terminal_id"].as_str().unwrap().to_string();
    daemon.cli(&["new-session", "people"]).ok();
    let other = daemon
        .cli(&[
            "run",
            "-s",
            "people",
            "--no-shell",
            "--",
            "sh",
            "-c",
            "echo 'panic: out of memory'; exec sleep 600",
        ])
        .ok();
    daemon.wait_text(&id, "panic: index");
    daemon.wait_text(other.trim(), "panic: out of");
    let both = daemon.cli(&["--json", "grep", "panic"]).json();
    assert_eq!(both["matches"].as_array().map(Vec::len), Some(2), "{both}");
    assert_eq!(both["panes_searched"], 2, "{both}");
    let own = ok(&mcp, "fugue_grep", json!({"pattern": "^panic: "})).await;
    assert_eq!(own["matches"].as_array().unwrap().len(), 1, "{own}");
    assert_eq!(own["matches"][0]["pane"], id.as_str(), "{own}");
    assert_eq!(own["matches"][0]["text"], "panic: index out of range", "{own}");
    assert_eq!(own["matches"][0]["line"], 1, "{own}");
    let all = ok(&mcp, "fugue_grep", json!({"pattern": "^panic: ", "all_sessions": true})).await;
    let labels: Vec<&str> = all["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels.len(), 2, "{all}");
    assert!(labels.contains(&"people:0"), "{all}");
    let bad = fails(&mcp, "fugue_grep", json!({"pattern": "x", "max_matches": 5000})).await;
    assert!(bad.contains("max_matches must be 1 to 1000"), "{bad}");
}

/// The JSON-RPC error code of a failed request.
fn error_code(err: rmcp::service::ServiceError) -> i32 {
    match err {
        rmcp::service::ServiceError::McpError(e) => e.code.0,
        other => panic!("not an MCP error: {other}"),
    }
}

async fn only_what_fugue_serves_is_declared_and_answered(via: Via) {
    let daemon = Daemon::start();
    for era in [Era::Initialize, Era::Stateless] {
        let mcp = connect_in(via, era, &daemon, TestClient::default(), false).await;
        let capabilities = mcp.peer_info().unwrap().capabilities.clone();
        assert!(capabilities.tools.is_some(), "{era:?}");
        let resources = capabilities.resources.clone().expect("resources");
        assert_eq!((resources.subscribe, resources.list_changed), (Some(true), Some(true)));
        assert!(
            capabilities.prompts.is_none() && capabilities.completions.is_none(),
            "{era:?}: {capabilities:?}"
        );
        assert!(
            capabilities.supports_tasks(),
            "{era:?}: the tasks extension: {capabilities:?}"
        );
        // Undeclared methods are not there: "method not found", not empty lists.
        let prompts = mcp.list_prompts(None).await.expect_err("prompts/list");
        assert_eq!(error_code(prompts), -32601, "{era:?}");
        let reference = rmcp::model::Reference::for_prompt("x");
        let argument = rmcp::model::ArgumentInfo::new("a", "b");
        let complete = mcp
            .complete(rmcp::model::CompleteRequestParams::new(reference, argument))
            .await
            .expect_err("completion/complete");
        assert_eq!(error_code(complete), -32601, "{era:?}");
        // An unknown resource names itself; the code is the era's.
        let unknown = mcp
            .read_resource(rmcp::model::ReadResourceRequestParams::new("fugue://pane/nope/screen"))
            .await
            .expect_err("no such pane");
        let rmcp::service::ServiceError::McpError(unknown) = unknown else {
            panic!()
        };
        let expected = match era {
            Era::Initialize => -32002,
            Era::Stateless => -32602,
        };
        assert_eq!(unknown.code.0, expected, "{era:?}: {unknown:?}");
        assert_eq!(unknown.data.unwrap()["uri"], "fugue://pane/nope/screen");
    }
}

async fn tool_schemas_name_no_null(via: Via) {
    let daemon = Daemon::start();
    let mcp = connect(via, &daemon, TestClient::default(), false).await;
    let tools = mcp.list_all_tools().await.unwrap();
    assert!(tools.len() >= 22);
    for tool in tools {
        let input = serde_json::Value::Object((*tool.input_schema).clone());
        assert!(!fugue_mcp::schema::mentions_null(&input), "{}: {input}", tool.name);
        let output = serde_json::Value::Object((*tool.output_schema.clone().unwrap()).clone());
        assert!(!fugue_mcp::schema::mentions_null(&output), "{}: {output}", tool.name);
    }
}

async fn terminals_are_resources_and_subscribers_hear_of_changes(via: Via) {
    let daemon = Daemon::start();
    for era in [Era::Initialize, Era::Stateless] {
        let (updates_tx, mut updates) = tokio::sync::mpsc::unbounded_channel();
        let client = TestClient {
            updates: Some(updates_tx),
            ..TestClient::default()
        };
        let mcp = connect_in(via, era, &daemon, client, false).await;
        let started = ok(
            &mcp,
            "fugue_start",
            json!({"purpose": "echo", "command": "cat", "shell": false, "title": format!("cat-{era:?}")}),
        )
        .await;
        let id = started["terminal_id"].as_str().unwrap().to_string();
        let screen = format!("fugue://pane/{id}/screen");
        let output = format!("fugue://pane/{id}/output");
        let listed = mcp.list_all_resources().await.unwrap();
        let uris: Vec<&str> = listed.iter().map(|r| r.uri.as_str()).collect();
        for uri in ["fugue://panes", "fugue://agents", &screen, &output] {
            assert!(uris.contains(&uri), "{era:?}: {uri} not in {uris:?}");
        }
        let templates = mcp.list_all_resource_templates().await.unwrap();
        assert_eq!(templates.len(), 2, "{templates:?}");

        // Subscribed before anything is written: each write is told, unasked.
        let mut subscription = match era {
            Era::Initialize => {
                #[allow(deprecated)]
                mcp.subscribe(rmcp::model::SubscribeRequestParams::new(&screen))
                    .await
                    .unwrap();
                None
            }
            Era::Stateless => {
                let filter = rmcp::model::SubscriptionFilter::builder()
                    .resource_subscription(&screen)
                    .build();
                Some(mcp.listen(filter).await.expect("subscriptions/listen"))
            }
        };
        for n in 0..3 {
            let line = format!("line-{n}");
            ok(
                &mcp,
                "fugue_write",
                json!({"terminal_id": id, "input": line, "submit": true}),
            )
            .await;
            let sent = std::time::Instant::now();
            let uri = match subscription.as_mut() {
                None => tokio::time::timeout(DEADLINE, updates.recv())
                    .await
                    .expect("told in time")
                    .unwrap(),
                Some(subscription) => loop {
                    let next = tokio::time::timeout(DEADLINE, subscription.next())
                        .await
                        .expect("told in time");
                    if let Some(rmcp::model::ServerNotification::ResourceUpdatedNotification(n)) = next.unwrap() {
                        break n.params.uri;
                    }
                },
            };
            assert_eq!(uri, screen, "{era:?}");
            eprintln!("{via:?} {era:?}: told of a screen change in {:?}", sent.elapsed());
            // What the client reads then shows the change.
            ok(
                &mcp,
                "fugue_wait",
                json!({"terminal_id": id, "pattern": line, "on": "screen", "timeout_ms": 10000}),
            )
            .await;
            let read = mcp
                .read_resource(rmcp::model::ReadResourceRequestParams::new(&screen))
                .await
                .unwrap();
            let rmcp::model::ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
                panic!("text contents")
            };
            assert!(text.contains(&line), "{era:?}: {text}");
            // Drain what the echo's own redraws told meanwhile.
            while updates.try_recv().is_ok() {}
        }
        let agents = mcp
            .read_resource(rmcp::model::ReadResourceRequestParams::new("fugue://agents"))
            .await
            .unwrap();
        let rmcp::model::ResourceContents::TextResourceContents { text, mime_type, .. } = &agents.contents[0] else {
            panic!("text contents")
        };
        assert_eq!(mime_type.as_deref(), Some("application/json"));
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(text).unwrap(),
            json!([]),
            "no agents run"
        );
        let read = mcp
            .read_resource(rmcp::model::ReadResourceRequestParams::new(&output))
            .await
            .unwrap();
        let rmcp::model::ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
            panic!("text contents")
        };
        assert!(text.contains("line-0") && text.contains("line-2"), "{text}");

        // Unsubscribed: the next write tells nothing.
        match subscription {
            None => {
                #[allow(deprecated)]
                mcp.unsubscribe(rmcp::model::UnsubscribeRequestParams::new(&screen))
                    .await
                    .unwrap();
                // The output resource, still subscribed, is the yardstick: the
                // screen's watch would wake on the same output, and have told of
                // the first write before the second write's update comes.
                #[allow(deprecated)]
                mcp.subscribe(rmcp::model::SubscribeRequestParams::new(&output))
                    .await
                    .unwrap();
                while updates.try_recv().is_ok() {}
                let mut told = Vec::new();
                for line in ["after-1", "after-2"] {
                    ok(
                        &mcp,
                        "fugue_write",
                        json!({"terminal_id": id, "input": line, "submit": true}),
                    )
                    .await;
                    loop {
                        let uri = tokio::time::timeout(DEADLINE, updates.recv())
                            .await
                            .expect("told")
                            .unwrap();
                        let done = uri == output;
                        told.push(uri);
                        if done {
                            break;
                        }
                    }
                }
                assert!(!told.contains(&screen), "{era:?}: told after unsubscribing: {told:?}");
            }
            Some(subscription) => drop(subscription),
        }
        ok(&mcp, "fugue_kill", json!({"terminal_id": id})).await;
    }
}

/// Each test, once over a pipe and once over HTTP.
/// Polls a task, at the interval the server suggests, until it ended.
async fn task_end(mcp: &Mcp, id: &str) -> rmcp::model::DetailedTask {
    let deadline = std::time::Instant::now() + DEADLINE;
    loop {
        let got = mcp
            .get_task(rmcp::model::GetTaskParams::new(id))
            .await
            .expect("tasks/get")
            .task;
        if got.status().is_terminal() {
            return got;
        }
        assert!(std::time::Instant::now() < deadline, "task {id} did not end: {got:?}");
        let every = got.task.poll_interval_ms.unwrap_or(100).min(500);
        // Polled: MCP tasks are polled by design (`tasks/get` at the server's `pollInterval`).
        tokio::time::sleep(std::time::Duration::from_millis(every)).await;
    }
}

/// The task a call answered with (panics on a direct answer).
async fn call_for_task(mcp: &Mcp, tool: &str, arguments: serde_json::Value) -> rmcp::model::Task {
    let params = rmcp::model::CallToolRequestParams::new(tool.to_string())
        .with_arguments(arguments.as_object().unwrap().clone());
    match mcp.call_tool_once(params).await.expect(tool) {
        rmcp::model::CallToolResponse::Task(created) => created.task,
        other => panic!("{tool}: expected a task, got {other:?}"),
    }
}

/// fugue_delegate as a task: its status says when the child waits for a
/// person; once approved and its turn over, the result holds the child's
/// final message (read from its screen: the stand-in agent keeps no
/// transcript, and the result says so).
async fn delegation_returns_the_child_s_result_as_a_task(via: Via) {
    let daemon = Daemon::start();
    let client = TestClient {
        tasks: true,
        ..TestClient::default()
    };
    let mcp = connect(via, &daemon, client, true).await;
    let task = call_for_task(
        &mcp,
        "fugue_delegate",
        json!({"prompt": "ship it", "shared_checkout": true, "name": "child"}),
    )
    .await;
    // Polled: MCP tasks are polled by design (`tasks/get`); the bridge pushes no status.
    let asked = wait_for("the task says the child waits for a person", DEADLINE, || async {
        let got = mcp
            .get_task(rmcp::model::GetTaskParams::new(&task.task_id))
            .await
            .expect("tasks/get")
            .task;
        got.task.status_message.filter(|m| m.contains("waits for a person"))
    })
    .await;
    assert!(asked.contains("prompt_id"), "{asked}");
    let listed = ok(&mcp, "fugue_list", json!({"session": "child"})).await;
    let child = listed["terminals"][0]["id"].as_str().unwrap().to_string();
    let status = ok(&mcp, "fugue_agent_status", json!({"terminal_id": child})).await;
    ok(
        &mcp,
        "fugue_approve",
        json!({"terminal_id": child, "prompt_id": status["prompt_id"]}),
    )
    .await;
    let ended = task_end(&mcp, &task.task_id).await;
    let rmcp::model::TaskPayload::Completed { result } = &ended.payload else {
        panic!("{ended:?}")
    };
    let result = &result["structuredContent"];
    assert_eq!(
        (&result["terminal_id"], &result["state"], &result["timed_out"]),
        (&json!(child), &json!("idle"), &json!(false)),
        "{result}"
    );
    assert_eq!(result["final_message"]["source"], "screen", "{result}");
    assert!(
        result["final_message"]["text"]
            .as_str()
            .unwrap()
            .contains("approved: ship it"),
        "{result}"
    );
    assert!(result.get("diff").is_none(), "no worktree, no diff: {result}");
    assert!(
        result["next"].as_str().unwrap().contains("fugue_send_prompt"),
        "{result}"
    );
}

async fn long_calls_become_tasks_for_clients_that_declare_them(via: Via) {
    let daemon = Daemon::start();
    for era in [Era::Initialize, Era::Stateless] {
        let client = TestClient {
            tasks: true,
            ..TestClient::default()
        };
        let mcp = connect_in(via, era, &daemon, client, false).await;
        let started = ok(
            &mcp,
            "fugue_start",
            json!({"purpose": "echo", "command": "cat", "shell": false}),
        )
        .await;
        let id = started["terminal_id"].as_str().unwrap().to_string();

        // A wait that is not over within the grace: a task, readable at once.
        let task = call_for_task(
            &mcp,
            "fugue_wait",
            json!({"terminal_id": id, "pattern": "task-done", "timeout_ms": 30000}),
        )
        .await;
        assert_eq!(task.status, rmcp::model::TaskStatus::Working, "{era:?}");
        assert_eq!(task.ttl_ms, Some(30_000 + fugue_mcp::tasks::RETAIN.as_millis() as u64));
        let now = mcp
            .get_task(rmcp::model::GetTaskParams::new(&task.task_id))
            .await
            .unwrap()
            .task;
        assert_eq!(now.status(), rmcp::model::TaskStatus::Working, "{era:?}");
        ok(
            &mcp,
            "fugue_write",
            json!({"terminal_id": id, "input": "task-done", "submit": true}),
        )
        .await;
        let ended = task_end(&mcp, &task.task_id).await;
        let rmcp::model::TaskPayload::Completed { result } = &ended.payload else {
            panic!("{era:?}: {ended:?}")
        };
        assert_eq!(
            result["structuredContent"]["condition"], "pattern",
            "{era:?}: {result:?}"
        );
        assert_eq!(result["structuredContent"]["matched"], "task-done");
        assert!(!result.contains_key("isError") || result["isError"] == false);

        // Over within the grace: the result itself, no task.
        let params = rmcp::model::CallToolRequestParams::new("fugue_wait").with_arguments(
            json!({"terminal_id": id, "pattern": "task-done", "timeout_ms": 30000})
                .as_object()
                .unwrap()
                .clone(),
        );
        let direct = mcp.call_tool_once(params).await.unwrap();
        let rmcp::model::CallToolResponse::Complete(direct) = direct else {
            panic!("{era:?}: a quick wait answers directly: {direct:?}")
        };
        assert_eq!(direct.structured_content.unwrap()["condition"], "pattern");

        // Cancelled: the task says so, and the daemon's wait ended with it:
        // what the daemon holds for its clients (a wait in flight and its
        // compiled pattern count) comes back to where it was.
        let watcher = daemon.client().await;
        let held = || async { watcher.daemon_status().await.unwrap().client_memory_used };
        let before = held().await;
        let task = call_for_task(
            &mcp,
            "fugue_wait",
            json!({"terminal_id": id, "pattern": "never-printed", "timeout_ms": 60000}),
        )
        .await;
        // Polled: the daemon's count of held waits is a figure of `daemon status`, pushed nowhere.
        wait_for("the daemon holds the wait", DEADLINE, || async {
            (held().await > before).then_some(())
        })
        .await;
        mcp.cancel_task(rmcp::model::CancelTaskParams::new(&task.task_id))
            .await
            .expect("tasks/cancel");
        let ended = task_end(&mcp, &task.task_id).await;
        assert_eq!(ended.status(), rmcp::model::TaskStatus::Cancelled, "{era:?}");
        // Polled: the daemon's count of held waits is a figure of `daemon status`, pushed nowhere.
        wait_for("the daemon lets the cancelled wait go", DEADLINE, || async {
            (held().await <= before).then_some(())
        })
        .await;
        // Cancelling again changes nothing and still acknowledges.
        mcp.cancel_task(rmcp::model::CancelTaskParams::new(&task.task_id))
            .await
            .expect("tasks/cancel again");
        assert_eq!(
            task_end(&mcp, &task.task_id).await.status(),
            rmcp::model::TaskStatus::Cancelled
        );

        // An exec that outlives the grace reports its output as a task's result.
        let task = call_for_task(
            &mcp,
            "fugue_exec",
            json!({"command": "sh -c 'sleep 1; echo exec-finished'", "timeout_ms": 20000}),
        )
        .await;
        let ended = task_end(&mcp, &task.task_id).await;
        let rmcp::model::TaskPayload::Completed { result } = &ended.payload else {
            panic!("{era:?}: {ended:?}")
        };
        assert_eq!(result["structuredContent"]["finished"], true, "{result:?}");
        assert!(result["structuredContent"]["output"]
            .as_str()
            .unwrap()
            .contains("exec-finished"));

        // A task nobody made.
        let unknown = mcp
            .get_task(rmcp::model::GetTaskParams::new("no-such-task"))
            .await
            .unwrap_err();
        let rmcp::ServiceError::McpError(unknown) = unknown else {
            panic!("{unknown:?}")
        };
        assert_eq!(unknown.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert!(
            unknown.message.contains("no task \"no-such-task\""),
            "{}",
            unknown.message
        );
    }

    // A client that did not declare tasks blocks as before, and may not ask
    // after tasks.
    let mcp = connect(via, &daemon, TestClient::default(), false).await;
    let slow = ok(
        &mcp,
        "fugue_exec",
        json!({"command": "sh -c 'sleep 1; echo blocked-to-the-end'", "timeout_ms": 20000}),
    )
    .await;
    assert!(slow["output"].as_str().unwrap().contains("blocked-to-the-end"));
    let refused = mcp.get_task(rmcp::model::GetTaskParams::new("any")).await.unwrap_err();
    let rmcp::ServiceError::McpError(refused) = refused else {
        panic!("{refused:?}")
    };
    assert_eq!(refused.code.0, -32021, "{}", refused.message);
}

/// The enums' values are in the schemas (not in sentences kept by hand): the
/// agent's state in fugue_agent_status's output, and fugue_wait's lists as
/// arrays of them. A list still reads as the joined string of earlier
/// releases, and a bad name is a tool error naming it and every good one.
async fn tool_schemas_list_their_values(via: Via) {
    use fugue_client::protocol::{AgentState, MatchOn};
    use strum::VariantNames;
    let daemon = Daemon::start();
    let mcp = connect(via, &daemon, TestClient::default(), false).await;
    let tools = mcp.list_all_tools().await.unwrap();
    let tool = |name: &str| {
        tools
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("no {name}"))
    };
    let states = json!(AgentState::VARIANTS);
    let status = serde_json::Value::Object((*tool("fugue_agent_status").output_schema.clone().unwrap()).clone());
    assert_eq!(status["properties"]["state"]["enum"], states, "{status}");
    assert_eq!(
        status["properties"]["agent"]["enum"],
        json!(["claude", "codex", "gemini", "qwen", "opencode", "aider"]),
        "{status}"
    );
    let wait = serde_json::Value::Object((*tool("fugue_wait").input_schema).clone());
    let properties = &wait["properties"];
    assert_eq!(properties["agent_state"]["type"], "array", "{wait}");
    assert_eq!(properties["agent_state"]["items"]["enum"], states, "{wait}");
    assert_eq!(
        properties["needs"]["items"]["enum"],
        json!(["permission", "question", "finished_unseen", "any"]),
        "{wait}"
    );
    assert_eq!(properties["on"]["enum"], json!(MatchOn::VARIANTS), "{wait}");
    // Only the terminal is required: Gemini CLI refuses a call that leaves
    // out a property the schema requires.
    assert_eq!(wait["required"], json!(["terminal_id"]), "{wait}");

    let started = ok(
        &mcp,
        "fugue_start",
        json!({"purpose": "values", "command": "sh", "args": ["-c", "echo said-it; exec sleep 600"], "shell": false}),
    )
    .await;
    let id = started["terminal_id"].as_str().unwrap();
    for agent_state in [json!(["idle", "waiting_for_answer"]), json!("idle|waiting_for_answer")] {
        let ended = ok(
            &mcp,
            "fugue_wait",
            json!({"terminal_id": id, "pattern": "said-it", "agent_state": agent_state, "timeout_ms": 10000}),
        )
        .await;
        assert_eq!(ended["condition"], "pattern", "{agent_state}: {ended}");
    }
    let refused = fugue_tests::mcp::call(
        &mcp,
        "fugue_wait",
        json!({"terminal_id": id, "agent_state": ["idle", "sleepy"], "timeout_ms": 1000}),
    )
    .await;
    let said = fugue_tests::mcp::text(&refused);
    assert_eq!(refused.is_error, Some(true), "{said}");
    assert!(said.contains("'sleepy'") && said.contains("hibernated"), "{said}");
}

macro_rules! over_both_transports {
    ($($name:ident),* $(,)?) => {
        mod over_pipe {
            $(#[tokio::test]
            async fn $name() {
                super::$name(super::Via::Pipe).await
            })*
        }
        mod over_http {
            $(#[tokio::test]
            async fn $name() {
                super::$name(super::Via::Http).await
            })*
        }
    };
}

over_both_transports!(
    long_calls_become_tasks_for_clients_that_declare_them,
    delegation_returns_the_child_s_result_as_a_task,
    only_what_fugue_serves_is_declared_and_answered,
    tool_schemas_name_no_null,
    tool_schemas_list_their_values,
    terminals_are_resources_and_subscribers_hear_of_changes,
    tools_are_listed_with_described_parameters_and_annotations,
    sessions_by_name_and_uuid,
    terminal_lifecycle_through_the_tools,
    interrupt_exec_and_waiting_for_exit,
    error_paths_are_tool_errors_that_say_what_would_work,
    agents_are_detected_prompted_approved_and_denied,
    a_prompt_is_submitted_where_enter_right_after_a_paste_is_ignored,
    an_agent_hibernates_and_wakes_through_the_tools,
    spawning_an_agent_needs_a_person_or_allow_spawn,
    a_terminal_started_with_a_restart_policy_comes_back,
    names_reach_agents_clean,
    grep_says_which_terminal_printed_it,
);
