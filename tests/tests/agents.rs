//! The real Claude Code, Codex and Gemini CLIs (pinned npm versions, offline
//! against the model stub) driven through the real `fugue-mcp` as an agent would:
//! a first prompt that asks to run a command, the CLI's real permission prompt,
//! approve (the command runs), a second prompt through `fugue_send_prompt`, deny
//! (it does not), and the states fugue reported on the way, in order.
//!
//! The states are what the daemon pushed (`AgentStateChanged` events); each test
//! prints how long after the real transition (the stub's timestamps) fugue
//! reported it.

use fugue_client::protocol::Event;
use fugue_tests::agents::{end_processes_with_home, prepare, Cli, ModelStub};
use fugue_tests::mcp::ok;
use fugue_tests::{bin, Daemon};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::process::Stdio;
use std::sync::{Arc, Mutex};

type Mcp = RunningService<RoleClient, ()>;

async fn bridge(daemon: &Daemon) -> Mcp {
    let mut cmd = tokio::process::Command::new(bin("fugue-mcp"));
    cmd.arg("--socket")
        .arg(&daemon.socket)
        .env("HOME", daemon.dir.path())
        .env_remove("FUGUE_SESSION")
        .current_dir(daemon.dir.path());
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn fugue-mcp");
    ().serve(transport).await.expect("MCP startup")
}

fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Every change of the reported state, with when fugue says it began (`since`).
#[derive(Default)]
struct Seen {
    changes: Vec<(String, u64)>,
    /// Where each change was read, and what decided it.
    detail: Vec<String>,
}

impl Seen {
    fn states(&self) -> Vec<&str> {
        self.changes.iter().map(|(s, _)| s.as_str()).collect()
    }

    /// How long after `at` (Unix ms) fugue began reporting `state`: 0 when it
    /// already did at `at`, `None` when it never did after.
    fn lag(&self, state: &str, at: u64) -> Option<u64> {
        let current = self.changes.iter().rev().find(|(_, since)| *since <= at);
        if current.is_some_and(|(s, _)| s == state) {
            return Some(0);
        }
        self.changes
            .iter()
            .find(|(s, since)| s == state && *since > at)
            .map(|(_, since)| since - at)
    }
}

/// Records every agent-state change the daemon pushes (its `AgentStateChanged`
/// events, each with the state's `since`) until aborted. Each test's daemon runs
/// one agent, so every such event is about it.
async fn watch(daemon: &Daemon) -> (Arc<Mutex<Seen>>, tokio::task::JoinHandle<()>) {
    let client = daemon.client().await;
    let mut events = client.subscribe().await.expect("subscribe");
    let seen = Arc::new(Mutex::new(Seen::default()));
    let record = seen.clone();
    let task = tokio::spawn(async move {
        let _client = client;
        while let Some(event) = events.recv().await {
            let Event::AgentStateChanged { agent, .. } = event else {
                continue;
            };
            let mut seen = record.lock().unwrap();
            seen.changes.push((agent.state.as_str().to_string(), agent.since_ms));
            seen.detail
                .push(format!("{}: {:?}", agent.source.as_str(), agent.evidence));
        }
    });
    (seen, task)
}

async fn wait_state(mcp: &Mcp, terminal: &str, state: &str) -> Value {
    let waited = ok(
        mcp,
        "fugue_wait",
        json!({"terminal_id": terminal, "agent_state": state, "timeout_ms": 90_000}),
    )
    .await;
    if waited["condition"] != "agent_state" {
        let status = ok(mcp, "fugue_agent_status", json!({"terminal_id": terminal})).await;
        panic!(
            "waiting for {state}: {waited}\nstatus: {status}\nscreen:\n{}",
            screen(mcp, terminal).await
        );
    }
    waited
}

async fn screen(mcp: &Mcp, terminal: &str) -> String {
    let captured = ok(mcp, "fugue_capture", json!({"terminal_id": terminal})).await;
    let lines = captured["lines"].as_array().cloned().unwrap_or_default();
    let lines: Vec<&str> = lines.iter().filter_map(Value::as_str).collect();
    lines.join("\n")
}

async fn approve_then_deny(cli: Cli) {
    let daemon = Daemon::start_offline();
    let stub = ModelStub::start(&daemon);
    let mcp = Arc::new(bridge(&daemon).await);
    let launch = prepare(cli, &stub, daemon.dir.path(), "Create a file for me. FILE=approved.txt");
    // Subscribed before the agent starts, so its first state is seen too.
    let (seen, watcher) = watch(&daemon).await;
    let started_at = unix_ms();
    let started = ok(
        &mcp,
        "fugue_start",
        launch.start_params(&format!("{} under test", cli.name())),
    )
    .await;
    let terminal = started["terminal_id"].as_str().expect("terminal id").to_string();

    // Turn 1: the first prompt asks to run `touch approved.txt`; approve it.
    wait_state(&mcp, &terminal, "waiting_for_permission").await;
    let status = ok(&mcp, "fugue_agent_status", json!({"terminal_id": terminal})).await;
    assert_eq!(status["agent"], cli.name(), "{status}");
    let prompt_id = status["prompt_id"]
        .as_str()
        .expect("a prompt_id while waiting")
        .to_string();
    let approved = ok(
        &mcp,
        "fugue_approve",
        json!({"terminal_id": terminal, "prompt_id": prompt_id}),
    )
    .await;
    assert_ne!(approved["state"], "waiting_for_permission", "{approved}");
    wait_state(&mcp, &terminal, "idle").await;
    assert!(
        launch.project.join("approved.txt").exists(),
        "approve did not run the command; screen:\n{}",
        screen(&mcp, &terminal).await
    );
    // The same approval again sends nothing and says so.
    let again = ok(
        &mcp,
        "fugue_approve",
        json!({"terminal_id": terminal, "prompt_id": prompt_id}),
    )
    .await;
    assert_eq!(again["already_answered"], "approved", "{again}");

    // Turn 2, through fugue_send_prompt: deny the command it asks for.
    let sent = ok(
        &mcp,
        "fugue_send_prompt",
        json!({"terminal_id": terminal, "text": "Now another one. FILE=denied.txt"}),
    )
    .await;
    assert_eq!(
        sent["went_busy"],
        true,
        "{sent}; screen:\n{}",
        screen(&mcp, &terminal).await
    );
    wait_state(&mcp, &terminal, "waiting_for_permission").await;
    let status = ok(&mcp, "fugue_agent_status", json!({"terminal_id": terminal})).await;
    let prompt_id = status["prompt_id"]
        .as_str()
        .expect("a prompt_id while waiting")
        .to_string();
    ok(
        &mcp,
        "fugue_deny",
        json!({"terminal_id": terminal, "prompt_id": prompt_id}),
    )
    .await;
    let denied = ok(&mcp, "fugue_agent_status", json!({"terminal_id": terminal})).await;
    assert_ne!(denied["state"], "waiting_for_permission", "{denied}");
    // The stub heard that the tool did not run (a result saying so, or a new turn
    // the CLI started on its own), or the CLI went back to its prompt.
    assert!(
        !launch.project.join("denied.txt").exists(),
        "deny ran the command anyway"
    );
    watcher.abort();
    let _ = watcher.await;

    let seen = seen.lock().unwrap();
    report_latency(cli, &stub, &seen, started_at);
    let states = seen.states();
    eprintln!("{}: states reported in order: {states:?}", cli.name());
    // Nothing said idle before the first turn reached its prompt, nor waiting before it.
    let first_wait = states
        .iter()
        .position(|s| *s == "waiting_for_permission")
        .expect("waiting seen");
    assert!(
        !states[..first_wait].contains(&"idle"),
        "{} was reported idle while its first turn ran: {states:?}",
        cli.name()
    );
    assert!(
        states[first_wait..].contains(&"busy") || states[first_wait..].contains(&"idle"),
        "{states:?}"
    );
    drop(seen);
    end_processes_with_home(&launch.home);
}

/// How long after the real transitions (the stub's clock) fugue reported them.
fn report_latency(cli: Cli, stub: &ModelStub, seen: &Seen, started_at: u64) {
    let turn = stub.nth("turn_started", 0);
    let asked = stub.nth("tool_requested", 0);
    let finished = stub.nth("turn_finished", 0);
    let lag = |state: &str, at: u64| {
        seen.lag(state, at)
            .map(|ms| format!("{ms} ms"))
            .unwrap_or_else(|| "not seen".into())
    };
    let timeline: Vec<String> = seen
        .changes
        .iter()
        .zip(&seen.detail)
        .map(|((s, since), detail)| format!("{s}@{} {detail}", *since as i64 - started_at as i64))
        .collect();
    let stub_events: Vec<String> = stub
        .events()
        .iter()
        .filter(|e| e["event"] != "request")
        .map(|e| {
            format!(
                "{}@{}",
                e["event"].as_str().unwrap_or("?"),
                e["at"].as_i64().unwrap_or(0) - started_at as i64
            )
        })
        .collect();
    eprintln!(
        "{}: fugue {timeline:?}\n{}: stub {stub_events:?}",
        cli.name(),
        cli.name()
    );
    eprintln!(
        "{} {}: started->first turn {} ms; turn started->busy {}; tool requested->waiting {}; turn finished->idle {}",
        cli.name(),
        cli.version(),
        turn.saturating_sub(started_at),
        lag("busy", turn),
        lag("waiting_for_permission", asked),
        lag("idle", finished),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_approve_then_deny() {
    approve_then_deny(Cli::Claude).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_approve_then_deny() {
    approve_then_deny(Cli::Codex).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_cli_approve_then_deny() {
    approve_then_deny(Cli::Gemini).await;
}
