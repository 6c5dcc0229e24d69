//! The real agent CLIs (Claude Code, Codex, Gemini CLI, Qwen Code, opencode,
//! aider; pinned versions, offline against the model stub) driven through the real `fugue-mcp` as an agent would:
//! a first prompt that asks to run a command, the CLI's real permission prompt,
//! approve (the command runs), a second prompt through `fugue_send_prompt`, deny
//! (it does not), and the states fugue reported on the way, in order.
//!
//! The states are what the daemon pushed (`AgentStateChanged` events); each test
//! prints how long after the real transition (the stub's timestamps) fugue
//! reported it.

use fugue_client::protocol::Event;
use fugue_tests::agents::{end_processes_with_home, prepare, Cli, ModelStub};
use fugue_tests::mcp::{fails, ok};
use fugue_tests::{Daemon, Tmux, DEADLINE};
use rmcp::service::RunningService;
use rmcp::RoleClient;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

type Mcp = RunningService<RoleClient, ()>;

#[path = "agents/app_server.rs"]
mod app_server;
#[path = "agents/limits.rs"]
mod limits;

async fn bridge(daemon: &Daemon) -> Mcp {
    fugue_tests::mcp::stdio_bridge(daemon).await
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

/// Text a person typed and did not send is seen (`draft`) and a prompt sent
/// meanwhile is refused with it (`draft_present`); once it is erased, nothing
/// of it is left and prompts go through again.
async fn a_draft_blocks_a_prompt(mcp: &Mcp, terminal: &str) {
    const DRAFT: &str = "half a thought";
    ok(mcp, "fugue_write", json!({"terminal_id": terminal, "input": DRAFT})).await;
    wait_draft(mcp, terminal, Some(DRAFT)).await;
    let refused = fails(
        mcp,
        "fugue_send_prompt",
        json!({"terminal_id": terminal, "text": "Not over a draft. FILE=drafted.txt"}),
    )
    .await;
    assert!(
        refused.contains("draft_present") && refused.contains(DRAFT),
        "{refused}"
    );
    let erase = vec!["Backspace"; DRAFT.len()];
    ok(mcp, "fugue_send_keys", json!({"terminal_id": terminal, "keys": erase})).await;
    wait_draft(mcp, terminal, None).await;
}

/// Reads the agent's status until its `draft` is `want` (10 s at most).
async fn wait_draft(mcp: &Mcp, terminal: &str, want: Option<&str>) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let status = ok(mcp, "fugue_agent_status", json!({"terminal_id": terminal})).await;
        if status["draft"].as_str() == want {
            return;
        }
        if tokio::time::Instant::now() >= deadline {
            panic!(
                "draft should be {want:?}: {status}\nscreen:\n{}",
                screen(mcp, terminal).await
            );
        }
        // Polled: a draft shows only in a look (`fugue_agent_status`); no event carries it.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// How long a permission prompt is left open to check that its state holds.
const HOLD: Duration = Duration::from_secs(10);

/// While nobody answers, a permission prompt stays one state with one prompt
/// id, whatever else on the screen animates (a timer, a spinner): read every
/// 250 ms for 10 s, and no change of state pushed meanwhile.
async fn a_waiting_prompt_holds(mcp: &Mcp, seen: &Arc<Mutex<Seen>>, terminal: &str, prompt_id: &str) {
    let pushed_before = seen.lock().unwrap().changes.len();
    let end = tokio::time::Instant::now() + HOLD;
    let mut reads = 0;
    while tokio::time::Instant::now() < end {
        let status = ok(mcp, "fugue_agent_status", json!({"terminal_id": terminal})).await;
        assert_eq!(
            (status["state"].as_str(), status["prompt_id"].as_str()),
            (Some("waiting_for_permission"), Some(prompt_id)),
            "read {reads} of an unanswered prompt: {status}\nscreen:\n{}",
            screen(mcp, terminal).await
        );
        // Every other read is a wait on `needs`: it ends at once on the same prompt.
        if reads % 2 == 1 {
            let waited = ok(
                mcp,
                "fugue_wait",
                json!({"terminal_id": terminal, "needs": "permission", "timeout_ms": 5_000}),
            )
            .await;
            assert_eq!(waited["condition"], "agent_needs", "{waited}");
            assert!(waited["elapsed_ms"].as_u64() < Some(1_000), "{waited}");
        }
        reads += 1;
        // A paced read, not a synchronisation: the state must hold between reads.
        // Paced: reads 250 ms apart, not a synchronisation: the state must hold between them.
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let seen = seen.lock().unwrap();
    assert_eq!(
        &seen.states()[pushed_before..],
        &[] as &[&str],
        "changes pushed while the prompt waited: {:?}",
        &seen.detail[pushed_before..]
    );
}

/// The overview (what `fugue overview` and the browser show a person) puts the
/// waiting agent first, with the same prompt the agent's status names, and a
/// plain shell pane after it with no agent and its last line.
async fn overview_shows_the_prompt(daemon: &Daemon, terminal: &str, prompt_id: &str) {
    let client = daemon.client().await;
    client.create_session("side", None, vec![]).await.unwrap();
    let mut spec = fugue_client::protocol::SpawnSpec::new("side");
    spec.shell = false;
    spec.command = Some("sh".into());
    spec.args = vec!["-c".into(), "echo side-last-line; exec sleep 600".into()];
    let side = client.create_pane(spec).await.unwrap().id.to_string();
    fugue_tests::wait_for_text(&client, &side, "side-last-line").await;
    let overview = daemon.cli(&["--json", "overview"]).json();
    let panes = overview.as_array().expect("a list");
    assert_eq!(panes[0]["pane"]["id"], terminal, "{overview:#}");
    assert_eq!(panes[0]["agent"]["needs"], "permission", "{overview:#}");
    assert_eq!(panes[0]["agent"]["prompt_id"], prompt_id, "{overview:#}");
    let side = panes
        .iter()
        .find(|p| p["pane"]["id"] == side.as_str())
        .expect("the side pane");
    assert_eq!(side["agent"], Value::Null, "{side}");
    assert_eq!(side["last_line"], "side-last-line", "{side}");
    client.release_pane(side["pane"]["id"].as_str().unwrap()).await.unwrap();
}

async fn approve_then_deny(cli: Cli) {
    let daemon = Daemon::start_offline();
    let stub = ModelStub::start(&daemon);
    let mcp = Arc::new(bridge(&daemon).await);
    let launch = prepare(cli, &stub, daemon.dir.path(), "Create a file for me. FILE=approved.txt");
    // Subscribed before the agent starts, so its first state is seen too.
    let (seen, watcher) = watch(&daemon).await;
    let started_at = fugue_client::views::now_ms();
    let started = ok(
        &mcp,
        "fugue_start",
        launch.start_params(&format!("{} under test", cli.name())),
    )
    .await;
    let terminal = started["terminal_id"].as_str().expect("terminal id").to_string();
    if let Some(prompt) = &launch.typed_prompt {
        wait_state(&mcp, &terminal, "idle").await;
        let sent = ok(
            &mcp,
            "fugue_send_prompt",
            json!({"terminal_id": terminal, "text": prompt}),
        )
        .await;
        assert_eq!(sent["went_busy"], true, "{sent}");
    }

    // Turn 1: the first prompt asks to run `touch approved.txt`; approve it.
    wait_state(&mcp, &terminal, "waiting_for_permission").await;
    let status = ok(&mcp, "fugue_agent_status", json!({"terminal_id": terminal})).await;
    assert_eq!(status["agent"], cli.name(), "{status}");
    let prompt_id = status["prompt_id"]
        .as_str()
        .expect("a prompt_id while waiting")
        .to_string();
    overview_shows_the_prompt(&daemon, &terminal, &prompt_id).await;
    // A prompt sent now is refused, and nothing reaches the agent.
    let blocked = fails(
        &mcp,
        "fugue_send_prompt",
        json!({"terminal_id": terminal, "text": "Not now. FILE=blocked.txt"}),
    )
    .await;
    assert!(blocked.contains("agent_blocked"), "{blocked}");
    a_waiting_prompt_holds(&mcp, &seen, &terminal, &prompt_id).await;
    let approved = ok(
        &mcp,
        "fugue_approve",
        json!({"terminal_id": terminal, "prompt_id": prompt_id}),
    )
    .await;
    assert_ne!(
        approved["state"],
        "waiting_for_permission",
        "{approved}; screen:\n{}",
        screen(&mcp, &terminal).await
    );
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

    a_draft_blocks_a_prompt(&mcp, &terminal).await;

    // Turn 2, through fugue_send_prompt (for Codex through `fugue prompt`, the
    // same operation from the CLI): deny the command it asks for.
    let text = "Now another one. FILE=denied.txt";
    let sent = match cli {
        Cli::Codex => tokio::task::block_in_place(|| daemon.cli(&["--json", "prompt", &terminal, text]).json()),
        _ => {
            ok(
                &mcp,
                "fugue_send_prompt",
                json!({"terminal_id": terminal, "text": text}),
            )
            .await
        }
    };
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
    let first_turn = match launch.typed_prompt {
        // At rest until its first prompt was typed: the turn is the first busy
        // after the first idle.
        Some(_) => {
            let rest = states.iter().position(|s| *s == "idle").expect("idle seen");
            rest + states[rest..].iter().position(|s| *s == "busy").expect("busy seen")
        }
        None => 0,
    };
    assert!(
        !states[first_turn..first_wait].contains(&"idle"),
        "{} was reported idle while its first turn ran: {states:?}",
        cli.name()
    );
    assert!(
        states[first_wait..].contains(&"busy") || states[first_wait..].contains(&"idle"),
        "{states:?}"
    );
    // Each of the two prompts was pushed once: a wait or a subscriber on
    // `needs=permission` fires once per prompt.
    let pushed_waiting = states.iter().filter(|s| **s == "waiting_for_permission").count();
    assert_eq!(pushed_waiting, 2, "{}: {states:?}", cli.name());
    // Claude Code gets fugue's hooks from fugue itself (--settings), Gemini CLI
    // from its settings file (tests/src/agents.rs): both must have reported.
    // Codex runs as a client of its own app-server, whose events fugued reads
    // first (tests/tests/agents/app_server.rs).
    // Qwen Code's hooks come from its settings file like Gemini CLI's; opencode
    // and aider offer none fugue can use: their screens decide.
    let expected = match cli {
        Cli::Codex => "app_server: [\"$ ",
        Cli::Claude | Cli::Gemini | Cli::Qwen => "hook",
        Cli::OpenCode | Cli::Aider => "screen",
    };
    assert!(
        seen.detail.iter().any(|d| d.starts_with(expected)),
        "{}: no state came from {expected}: {:?}",
        cli.name(),
        seen.detail
    );
    drop(seen);
    end_processes_with_home(&launch.home);
}

/// How long after the real transitions (the stub's clock) fugue reported them:
/// every turn started (-> busy), tool requested (-> waiting) and turn finished
/// (-> idle) of the run, and their median.
fn report_latency(cli: Cli, stub: &ModelStub, seen: &Seen, started_at: u64) {
    if cli.reports_tool_results() {
        stub.nth("turn_finished", 0);
    }
    let events = stub.events();
    let timeline: Vec<String> = seen
        .changes
        .iter()
        .zip(&seen.detail)
        .map(|((s, since), detail)| format!("{s}@{} {detail}", *since as i64 - started_at as i64))
        .collect();
    let stub_events: Vec<String> = events
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
    let mut all = Vec::new();
    let mut per_kind = Vec::new();
    for (event, state) in [
        ("turn_started", "busy"),
        ("tool_requested", "waiting_for_permission"),
        ("turn_finished", "idle"),
    ] {
        let mut lags: Vec<u64> = events
            .iter()
            .filter(|e| e["event"] == event)
            .filter_map(|e| seen.lag(state, e["at"].as_u64()?))
            .collect();
        all.extend(&lags);
        per_kind.push(format!(
            "{event}->{state} {lags:?} ms (median {} ms)",
            median(&mut lags)
        ));
    }
    eprintln!(
        "{} {}: started->first turn {} ms; {}; median of all {} transitions {} ms",
        cli.name(),
        cli.version(),
        stub.nth("turn_started", 0).saturating_sub(started_at),
        per_kind.join("; "),
        all.len(),
        median(&mut all),
    );
}

fn median(values: &mut [u64]) -> u64 {
    values.sort_unstable();
    match values.len() {
        0 => 0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2,
    }
}

/// The tools a real agent is told to call in `calls_fugue_tools`, in order.
const FUGUE_TOOLS: [&str; 4] = ["fugue_exec", "fugue_wait", "fugue_read", "fugue_kill_session"];

/// Registers fugue-mcp with `launch`'s CLI the way its users do, with the four
/// tools pre-allowed the way that CLI allows tools.
fn register_fugue_mcp(launch: &mut fugue_tests::agents::Launch, daemon: &Daemon) {
    let bridge = fugue_tests::bin("fugue-mcp").display().to_string();
    let socket = daemon.socket.display().to_string();
    match launch.cli {
        Cli::Claude => {
            // `--mcp-config FILE` registers a server for one run, and
            // `--allowedTools=` (one argument, comma-separated: a value after a
            // space would take the prompt too) lets its tools run unasked.
            let config = launch.home.join("fugue-mcp.json");
            let servers = json!({"mcpServers": {"fugue": {"command": bridge, "args": ["--socket", socket]}}});
            std::fs::write(&config, servers.to_string()).expect("write the MCP config");
            let allowed: Vec<String> = FUGUE_TOOLS.iter().map(|t| format!("mcp__fugue__{t}")).collect();
            let prompt_at = launch.args.len() - 1;
            launch.args.splice(
                prompt_at..prompt_at,
                [
                    "--mcp-config".to_string(),
                    config.display().to_string(),
                    format!("--allowedTools={}", allowed.join(",")),
                ],
            );
        }
        Cli::Gemini => {
            // `mcpServers` in its settings.json; `trust: true` is how Gemini CLI
            // lets a server's tools run without asking.
            let path = launch.home.join(".gemini/settings.json");
            let mut settings: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).expect("settings")).expect("settings JSON");
            settings["mcpServers"] = json!({"fugue": {"command": bridge, "args": ["--socket", socket], "trust": true}});
            std::fs::write(&path, settings.to_string()).expect("write settings");
        }
        Cli::Codex => {
            // `[mcp_servers.fugue]` in $CODEX_HOME/config.toml (~/.codex);
            // `default_tools_approval_mode = "approve"` is how Codex 0.169 lets a
            // server's tools run without asking.
            let path = launch.home.join(".codex/config.toml");
            let mut config = std::fs::read_to_string(&path).expect("config.toml");
            config.push_str(&format!(
                "\n[mcp_servers.fugue]\ncommand = {bridge:?}\nargs = [\"--socket\", {socket:?}]\n\
                 default_tools_approval_mode = \"approve\"\n"
            ));
            std::fs::write(&path, config).expect("write config.toml");
        }
        other => panic!("{} has no MCP registration here yet", other.name()),
    }
}

/// A real agent calls fugue's own tools through fugue-mcp, registered as its
/// users register it: `fugue_exec` of an echo in a session the test made (never
/// the agent's own), `fugue_wait` for its exit, `fugue_read` of it and
/// `fugue_kill_session`. What reached the model for each call (the tool result
/// in the stub's next request) is read from the stub: no error, and the text the
/// pane printed.
async fn calls_fugue_tools(cli: Cli) {
    let daemon = Daemon::start_offline();
    let stub = ModelStub::start(&daemon);
    let target = "mcp-target";
    tokio::task::block_in_place(|| daemon.cli(&["new-session", target]).ok());
    let mut launch = prepare(
        cli,
        &stub,
        daemon.dir.path(),
        &format!("Use fugue's tools. MCP={target}"),
    );
    register_fugue_mcp(&mut launch, &daemon);
    let mcp = bridge(&daemon).await;
    let started = ok(
        &mcp,
        "fugue_start",
        launch.start_params(&format!("{} calling fugue", cli.name())),
    )
    .await;
    let terminal = started["terminal_id"].as_str().expect("terminal id").to_string();
    assert_ne!(started["session"], target, "the agent runs in a session of its own");
    let deadline = std::time::Instant::now() + DEADLINE * 6;
    let results = loop {
        let events = stub.events();
        let results: Vec<Value> = events
            .iter()
            .filter(|e| e["event"] == "mcp_result")
            .map(|e| e["detail"].clone())
            .collect();
        if results.len() >= FUGUE_TOOLS.len() {
            break results;
        }
        if std::time::Instant::now() > deadline {
            let seen: Vec<String> = events
                .iter()
                .filter(|e| e["event"] != "request")
                .map(|e| format!("{} {}", e["event"], e["detail"]))
                .collect();
            panic!(
                "{}: not every fugue tool result reached the model; the stub saw {seen:#?}\nscreen:\n{}",
                cli.name(),
                screen(&mcp, &terminal).await
            );
        }
        // Polled: the stub's log, with the CLI's screen for the failure (a real agent's pace).
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let screen = screen(&mcp, &terminal).await;
    let marker = format!("fugue-mcp-said-{target}");
    for (tool, result) in FUGUE_TOOLS.iter().zip(&results) {
        let text = result["text"].as_str().unwrap_or_default();
        assert_eq!(result["tool"], *tool, "calls out of order: {results:?}");
        assert_eq!(
            result["is_error"], false,
            "{tool} reached the model as an error: {text}\n{screen}"
        );
        println!(
            "{}: {tool} -> {}",
            cli.name(),
            text.chars().take(160).collect::<String>()
        );
        let wanted = match *tool {
            "fugue_exec" | "fugue_read" => marker.as_str(),
            "fugue_wait" => "exit",
            _ => "Session killed",
        };
        assert!(text.contains(wanted), "{tool}'s result lacks {wanted:?}: {text}");
    }
    stub.nth("turn_finished", 0);
    let sessions = tokio::task::block_in_place(|| daemon.cli(&["ls"]).ok());
    assert!(
        !sessions.contains(target),
        "fugue_kill_session left {target}: {sessions}"
    );
    let _ = mcp.cancel().await;
    end_processes_with_home(&launch.home);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_calls_fugue_tools() {
    fugue_tests::require!(
        "unshare",
        "nsenter",
        "ip",
        "tests/agents/node_modules/.fugue-installed-lock.json"
    );
    calls_fugue_tools(Cli::Claude).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_cli_calls_fugue_tools() {
    fugue_tests::require!(
        "unshare",
        "nsenter",
        "ip",
        "tests/agents/node_modules/.fugue-installed-lock.json"
    );
    calls_fugue_tools(Cli::Gemini).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_calls_fugue_tools() {
    fugue_tests::require!(
        "unshare",
        "nsenter",
        "ip",
        "tests/agents/node_modules/.fugue-installed-lock.json"
    );
    calls_fugue_tools(Cli::Codex).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_approve_then_deny() {
    fugue_tests::require!(
        "unshare",
        "nsenter",
        "ip",
        "tests/agents/node_modules/.fugue-installed-lock.json"
    );
    approve_then_deny(Cli::Claude).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_approve_then_deny() {
    fugue_tests::require!(
        "unshare",
        "nsenter",
        "ip",
        "tests/agents/node_modules/.fugue-installed-lock.json"
    );
    approve_then_deny(Cli::Codex).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_cli_approve_then_deny() {
    fugue_tests::require!(
        "unshare",
        "nsenter",
        "ip",
        "tests/agents/node_modules/.fugue-installed-lock.json"
    );
    approve_then_deny(Cli::Gemini).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qwen_code_approve_then_deny() {
    fugue_tests::require!(
        "unshare",
        "nsenter",
        "ip",
        "tests/agents/node_modules/.fugue-installed-lock.json"
    );
    approve_then_deny(Cli::Qwen).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opencode_approve_then_deny() {
    fugue_tests::require!(
        "unshare",
        "nsenter",
        "ip",
        "tests/agents/node_modules/.fugue-installed-lock.json"
    );
    approve_then_deny(Cli::OpenCode).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aider_approve_then_deny() {
    fugue_tests::require!(
        "unshare",
        "nsenter",
        "ip",
        "tests/agents/venv/.fugue-installed-requirements.txt"
    );
    approve_then_deny(Cli::Aider).await;
}

/// Claude Code asks a person a question (its AskUserQuestion tool): fugue says it
/// needs an answer (never an approval), a wait for `needs` ends there, approve is
/// refused, and the answer a person types reaches the model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_asks_a_question() {
    fugue_tests::require!(
        "unshare",
        "nsenter",
        "ip",
        "tests/agents/node_modules/.fugue-installed-lock.json"
    );
    let daemon = Daemon::start_offline();
    let stub = ModelStub::start(&daemon);
    let mcp = Arc::new(bridge(&daemon).await);
    let launch = prepare(Cli::Claude, &stub, daemon.dir.path(), "Ask me first. ASK=colour");
    let (seen, watcher) = watch(&daemon).await;
    let started = ok(&mcp, "fugue_start", launch.start_params("claude asking")).await;
    let terminal = started["terminal_id"].as_str().expect("terminal id").to_string();

    let waited = ok(
        &mcp,
        "fugue_wait",
        json!({"terminal_id": terminal, "needs": "any", "agent_state": "idle|exited", "timeout_ms": 90_000}),
    )
    .await;
    let status = ok(&mcp, "fugue_agent_status", json!({"terminal_id": terminal})).await;
    assert_eq!(
        (
            waited["condition"].as_str(),
            status["state"].as_str(),
            status["needs"].as_str()
        ),
        (Some("agent_needs"), Some("waiting_for_answer"), Some("question")),
        "{waited}\n{status}\nscreen:\n{}",
        screen(&mcp, &terminal).await
    );
    assert!(status["prompt_id"].is_null(), "{status}");
    let refused = fails(
        &mcp,
        "fugue_approve",
        json!({"terminal_id": terminal, "prompt_id": "0123456789abcdef"}),
    )
    .await;
    assert!(refused.contains("waiting_for_answer"), "{refused}");
    assert!(
        stub.events().iter().all(|e| e["event"] != "question_answered"),
        "the question was answered by itself"
    );

    // A person picks the first option (highlighted) with Enter.
    ok(
        &mcp,
        "fugue_send_keys",
        json!({"terminal_id": terminal, "keys": ["Enter"]}),
    )
    .await;
    stub.nth("question_answered", 0);
    let answer = stub
        .events()
        .into_iter()
        .find(|e| e["event"] == "question_answered")
        .map(|e| e["detail"]["answer"].as_str().unwrap_or_default().to_string())
        .unwrap_or_default();
    assert!(answer.contains("Blue"), "the model got {answer:?}");
    wait_state(&mcp, &terminal, "idle").await;
    watcher.abort();
    let _ = watcher.await;
    let asked = stub.nth("question_asked", 0);
    let lag = seen.lock().unwrap().lag("waiting_for_answer", asked);
    eprintln!("claude (question): question asked -> waiting_for_answer {lag:?} ms");
    let states = seen.lock().unwrap().states().join(" ");
    eprintln!("claude (question): states reported in order: {states}");
    assert!(states.contains("waiting_for_answer"), "{states}");
    end_processes_with_home(&launch.home);
}

/// A daemon killed outright loses its panes' processes; the pane of an agent
/// whose session was recorded (Claude Code's status file, Codex's open
/// transcript, Gemini CLI's hooks) comes back with `fugue resume`: the same
/// agent, directory and conversation.
async fn resumes_after_the_daemon_is_killed(cli: Cli) {
    resumes_after_a_crash(cli, false).await
}

/// As above, for a pane with a restart policy: the new daemon starts the agent
/// again by itself, on its recorded session, in the same pane.
async fn resumes_by_itself_after_the_daemon_is_killed(cli: Cli) {
    resumes_after_a_crash(cli, true).await
}

async fn resumes_after_a_crash(cli: Cli, by_itself: bool) {
    let mut daemon = Daemon::start_offline();
    let stub = ModelStub::start(&daemon);
    let launch = prepare(cli, &stub, daemon.dir.path(), "Create a file for me. FILE=first.txt");
    let client = daemon.client().await;
    let mut spec = launch.spec("agents");
    if by_itself {
        spec.restart = fugue_client::protocol::RestartPolicy::Always;
    }
    let pane = start_in_session(&client, spec).await;
    let id = pane.id.to_string();
    let recorded = first_turn_approved(&daemon, &client, &id, &launch).await;
    assert_eq!(recorded.agent.as_str(), cli.name());
    drop(client);

    daemon.signal_and_wait(libc::SIGKILL);
    // Its PTYs closed with it: the agent ends.
    fugue_tests::procfs::wait_gone(pane.pid, "the agent to end with the daemon");
    daemon.restart_in_netns_of(stub.pid());
    let client = daemon.client().await;
    if by_itself {
        // Started again at once, in the same pane, on the recorded session. (A
        // run that ends at once is started again by the pane's restart policy,
        // on the same session: that counts too.)
        let started = std::time::Instant::now();
        let (back, cmdline) = loop {
            let back = client.pane_status(&id).await.expect("the pane");
            let cmdline = std::fs::read(format!("/proc/{}/cmdline", back.pid)).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if back.state == fugue_client::protocol::PaneState::Running && cmdline.contains(recorded.id.as_str()) {
                break (back, cmdline);
            }
            if started.elapsed() > DEADLINE {
                // Say what the pane ran and printed: an empty command line means
                // the process had already ended when it was read.
                let text = client
                    .read_output(&id, fugue_client::protocol::ReadMode::Text { lines: 40, since: None })
                    .await
                    .map(|chunk| chunk.lines.join("\n"));
                panic!("not resumed: {cmdline:?}\npane: {back:?}\noutput: {text:?}");
            }
            // Polled: /proc shows the resumed command line only once the restarted process has exec'd.
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        };
        assert!(!cmdline.contains("FILE=first.txt"), "the first prompt again: {cmdline}");
        fugue_tests::wait_for_screen_within(&client, &id, "FILE=first.txt", std::time::Duration::from_secs(90)).await;
        let again = daemon
            .until_event("the session recorded again", DEADLINE * 4, || async {
                let info = client.pane_status(&id).await.ok()?;
                info.agent_session.filter(|_| info.pid == back.pid)
            })
            .await;
        assert_eq!(again, recorded, "another session than the one resumed");
        end_processes_with_home(&launch.home);
        return;
    }
    let lost = client.pane_status(&id).await.expect("the pane's record");
    assert_eq!(lost.state, fugue_client::protocol::PaneState::Lost);
    assert_eq!(lost.agent_session.as_ref(), Some(&recorded));

    let resumed = daemon.cli(&["--json", "resume", &id]).json();
    let command: Vec<&str> = resumed["command"]
        .as_array()
        .expect("command")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let resume_flag = match cli {
        Cli::Codex => "resume",
        _ => "--resume",
    };
    assert!(
        command.windows(2).any(|w| w == [resume_flag, recorded.id.as_str()]),
        "{command:?}"
    );
    assert!(
        !command.iter().any(|a| a.contains("FILE=first.txt")),
        "the first prompt again: {command:?}"
    );
    assert_eq!(resumed["cwd"], launch.project.display().to_string());
    // The same conversation: its first prompt is on screen again (the command
    // line has none). Claude Code 2.1.332 folds the command it ran into "Ran 1
    // shell command", so the prompt is what every version shows.
    let new_id = resumed["id"].as_str().expect("new pane id").to_string();
    // As long as the agent waits above: a Node CLI loading its history under CI load.
    fugue_tests::wait_for_screen_within(&client, &new_id, "FILE=first.txt", std::time::Duration::from_secs(90)).await;
    // Resuming a pane that runs is refused, saying why.
    let refused = daemon.cli(&["resume", &new_id]).err();
    assert!(refused.contains("still runs"), "{refused}");
    end_processes_with_home(&launch.home);
}

/// Waits (90 s at most: a Node CLI under CI load) until the agent in pane `id`
/// is in `state`.
async fn wait_agent_state(client: &fugue_client::Client, id: &str, state: fugue_client::protocol::AgentState) {
    use fugue_client::protocol::{WaitCondition, WaitUntil};
    let until = WaitUntil {
        agent_states: vec![state],
        ..WaitUntil::default()
    };
    let done = client.wait_for(id, until, Duration::from_secs(90)).await.expect("wait");
    if done.condition != WaitCondition::AgentState {
        let now = client.agent_status(id).await;
        panic!("{state:?} never came: {done:?}\nthe agent now: {now:?}");
    }
}

/// Session `agents` made, and the agent `spec` starts in a pane of it.
async fn start_in_session(
    client: &fugue_client::Client,
    spec: fugue_client::protocol::SpawnSpec,
) -> fugue_client::protocol::PaneInfo {
    client
        .create_session("agents", None, Vec::new())
        .await
        .expect("session");
    client.create_pane(spec).await.expect("start the agent")
}

/// The first turn (its prompt asks for first.txt): approved at its permission
/// prompt, the file made, the agent idle and its session recorded, which it
/// returns.
async fn first_turn_approved(
    daemon: &Daemon,
    client: &fugue_client::Client,
    id: &str,
    launch: &fugue_tests::agents::Launch,
) -> fugue_client::protocol::AgentSession {
    use fugue_client::protocol::AgentState;
    wait_agent_state(client, id, AgentState::WaitingForPermission).await;
    client.send_keys(id, &["Enter".to_string()]).await.expect("approve");
    wait_agent_state(client, id, AgentState::Idle).await;
    assert!(launch.project.join("first.txt").exists());
    daemon.agent_session(id).await
}

/// An idle agent hibernates: its process ends, its state reads hibernated;
/// a prompt wakes it in the same pane on its recorded session, the turn runs,
/// and it is the same conversation: the stub sees the first prompt's file in
/// the history the woken CLI sends with the second.
async fn hibernates_and_a_prompt_wakes_it(cli: Cli) {
    use fugue_client::protocol::{AgentState, PaneState};
    let daemon = Daemon::start_offline();
    let stub = ModelStub::start(&daemon);
    let launch = prepare(cli, &stub, daemon.dir.path(), "Create a file for me. FILE=first.txt");
    let client = daemon.client().await;
    let pane = start_in_session(&client, launch.spec("agents")).await;
    let id = pane.id.to_string();
    let recorded = first_turn_approved(&daemon, &client, &id, &launch).await;

    let slept = client.hibernate(&id).await.expect("hibernate");
    assert_eq!(slept.state, PaneState::Hibernated);
    fugue_tests::procfs::wait_gone(pane.pid, "the agent's process to end");
    assert_eq!(client.agent_status(&id).await.unwrap().state, AgentState::Hibernated);

    let woken_at = std::time::Instant::now();
    let sent = fugue_client::ops::send_prompt(&client, &id, "Now one more. FILE=second.txt", None)
        .await
        .expect("the prompt that wakes it");
    println!(
        "{}: woken and prompted in {} ms",
        cli.name(),
        woken_at.elapsed().as_millis()
    );
    if !sent.went_busy {
        let screen = client
            .capture(
                &id,
                fugue_client::protocol::CaptureWhat::Screen,
                (None, None),
                false,
                false,
            )
            .await
            .map(|c| c.lines.join("\n"))
            .unwrap_or_default();
        panic!("{sent:?}\nthe screen:\n{screen}");
    }
    let back = client.pane_status(&id).await.unwrap();
    assert_eq!((back.state, back.index), (PaneState::Running, pane.index));
    let cmdline = String::from_utf8_lossy(&std::fs::read(format!("/proc/{}/cmdline", back.pid)).unwrap_or_default())
        .replace('\0', " ");
    assert!(
        cmdline.contains(recorded.id.as_str()),
        "not resumed on its session: {cmdline}"
    );
    wait_agent_state(&client, &id, AgentState::WaitingForPermission).await;
    client.send_keys(&id, &["Enter".to_string()]).await.expect("approve");
    wait_agent_state(&client, &id, AgentState::Idle).await;
    assert!(launch.project.join("second.txt").exists());
    let second = stub
        .events()
        .into_iter()
        .find(|e| e["event"] == "turn_started" && e["detail"]["command"] == "touch second.txt")
        .expect("the second turn reached the stub");
    let files = &second["detail"]["files"];
    assert!(
        files.as_array().is_some_and(|f| f.iter().any(|f| f == "first.txt")),
        "another conversation: the woken CLI sent {files}"
    );
    end_processes_with_home(&launch.home);
}

/// A test of each real agent CLI, offline against the model stub: `$test`
/// run with `$cli`.
macro_rules! offline_agent_test {
    ($name:ident, $test:ident, $cli:expr) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            fugue_tests::require!(
                "unshare",
                "nsenter",
                "ip",
                "tests/agents/node_modules/.fugue-installed-lock.json"
            );
            $test($cli).await;
        }
    };
}

offline_agent_test!(
    claude_code_hibernates_and_a_prompt_wakes_it,
    hibernates_and_a_prompt_wakes_it,
    Cli::Claude
);
offline_agent_test!(
    codex_hibernates_and_a_prompt_wakes_it,
    hibernates_and_a_prompt_wakes_it,
    Cli::Codex
);
offline_agent_test!(
    gemini_cli_hibernates_and_a_prompt_wakes_it,
    hibernates_and_a_prompt_wakes_it,
    Cli::Gemini
);
offline_agent_test!(
    qwen_code_hibernates_and_a_prompt_wakes_it,
    hibernates_and_a_prompt_wakes_it,
    Cli::Qwen
);

/// An agent left at its empty prompt (no turn ran: its recorded session has
/// no conversation) comes back ready in the same pane: a wake starts it
/// afresh with the pane's own command and says so (a resume answered "No
/// conversation found" and the pane ended). A CLI that records its session
/// only with a turn cannot hibernate yet, and says so. Prints the outcome.
async fn wakes_afresh_when_no_turn_ran(cli: Cli) {
    use fugue_client::protocol::{AgentState, PaneState};
    let daemon = Daemon::start_offline();
    let stub = ModelStub::start(&daemon);
    let launch = prepare(cli, &stub, daemon.dir.path(), "unused").without_prompt();
    let client = daemon.client().await;
    let pane = start_in_session(&client, launch.spec("agents")).await;
    let id = pane.id.to_string();
    wait_agent_state(&client, &id, AgentState::Idle).await;
    let slept = match client.hibernate(&id).await {
        Ok(slept) => slept,
        Err(refused) => {
            let refused = refused.to_string();
            println!("{}: at its empty prompt, hibernation refused: {refused}", cli.name());
            assert!(refused.contains("no agent session is recorded"), "{refused}");
            end_processes_with_home(&launch.home);
            return;
        }
    };
    assert_eq!(slept.state, PaneState::Hibernated);
    let recorded = slept.agent_session.expect("the recorded session");
    assert!(!recorded.conversation, "a conversation without a turn: {recorded:?}");
    fugue_tests::procfs::wait_gone(pane.pid, "the agent's process to end");
    let woken = client.wake(&id).await.expect("the wake");
    println!("{}: at its empty prompt, woken: {:?}", cli.name(), woken.started_fresh);
    let why = woken.started_fresh.expect("started afresh, and why");
    assert!(why.contains("no turn ran"), "{why}");
    assert_eq!((woken.pane.state, woken.pane.index), (PaneState::Running, pane.index));
    let cmdline =
        String::from_utf8_lossy(&std::fs::read(format!("/proc/{}/cmdline", woken.pane.pid)).unwrap_or_default())
            .replace('\0', " ");
    assert!(
        !cmdline.contains(recorded.id.as_str()),
        "resumed the empty session: {cmdline}"
    );
    assert_eq!(client.agent_status(&id).await.unwrap().state, AgentState::Idle);
    // Ready: a prompt runs a turn.
    let sent = fugue_client::ops::send_prompt(&client, &id, "Create a file for me. FILE=first.txt", None)
        .await
        .expect("a prompt after the wake");
    assert!(sent.went_busy, "{sent:?}");
    end_processes_with_home(&launch.home);
}

offline_agent_test!(
    claude_code_wakes_afresh_when_no_turn_ran,
    wakes_afresh_when_no_turn_ran,
    Cli::Claude
);
offline_agent_test!(
    codex_wakes_afresh_when_no_turn_ran,
    wakes_afresh_when_no_turn_ran,
    Cli::Codex
);
offline_agent_test!(
    gemini_cli_wakes_afresh_when_no_turn_ran,
    wakes_afresh_when_no_turn_ran,
    Cli::Gemini
);
offline_agent_test!(
    qwen_code_wakes_afresh_when_no_turn_ran,
    wakes_afresh_when_no_turn_ran,
    Cli::Qwen
);

/// Claude Code's `/clear` starts a new session: the one recorded follows it
/// (its SessionStart hook), with no conversation until a turn runs in it, so
/// a wake never lands in the conversation that was cleared.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_clear_is_recorded_as_a_new_session() {
    fugue_tests::require!(
        "unshare",
        "nsenter",
        "ip",
        "tests/agents/node_modules/.fugue-installed-lock.json"
    );
    let daemon = Daemon::start_offline();
    let stub = ModelStub::start(&daemon);
    let launch = prepare(
        Cli::Claude,
        &stub,
        daemon.dir.path(),
        "Create a file for me. FILE=first.txt",
    );
    let client = daemon.client().await;
    let pane = start_in_session(&client, launch.spec("agents")).await;
    let id = pane.id.to_string();
    let first = first_turn_approved(&daemon, &client, &id, &launch).await;
    let first = daemon
        .until_event("the turn recorded", DEADLINE, || async {
            let session = client.pane_status(&id).await.ok()?.agent_session?;
            (session.id == first.id && session.conversation).then_some(session)
        })
        .await;
    client.write_input(&id, b"/clear").await.expect("type /clear");
    client.send_keys(&id, &["Enter".to_string()]).await.expect("send it");
    let cleared = daemon
        .until_event("the session /clear started", DEADLINE * 2, || async {
            let session = client.pane_status(&id).await.ok()?.agent_session?;
            (session.id != first.id).then_some(session)
        })
        .await;
    println!(
        "claude: /clear: {} -> {} (conversation: {})",
        first.id, cleared.id, cleared.conversation
    );
    assert!(
        !cleared.conversation,
        "the cleared session kept the old one's conversation"
    );
    end_processes_with_home(&launch.home);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_resumes_after_the_daemon_is_killed() {
    fugue_tests::require!(
        "unshare",
        "nsenter",
        "ip",
        "tests/agents/node_modules/.fugue-installed-lock.json"
    );
    resumes_after_the_daemon_is_killed(Cli::Claude).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_resumes_after_the_daemon_is_killed() {
    fugue_tests::require!(
        "unshare",
        "nsenter",
        "ip",
        "tests/agents/node_modules/.fugue-installed-lock.json"
    );
    resumes_after_the_daemon_is_killed(Cli::Codex).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_cli_resumes_after_the_daemon_is_killed() {
    fugue_tests::require!(
        "unshare",
        "nsenter",
        "ip",
        "tests/agents/node_modules/.fugue-installed-lock.json"
    );
    resumes_after_the_daemon_is_killed(Cli::Gemini).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qwen_code_resumes_after_the_daemon_is_killed() {
    fugue_tests::require!(
        "unshare",
        "nsenter",
        "ip",
        "tests/agents/node_modules/.fugue-installed-lock.json"
    );
    resumes_after_the_daemon_is_killed(Cli::Qwen).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_resumes_by_itself_after_the_daemon_is_killed() {
    fugue_tests::require!(
        "unshare",
        "nsenter",
        "ip",
        "tests/agents/node_modules/.fugue-installed-lock.json"
    );
    resumes_by_itself_after_the_daemon_is_killed(Cli::Claude).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_resumes_by_itself_after_the_daemon_is_killed() {
    fugue_tests::require!(
        "unshare",
        "nsenter",
        "ip",
        "tests/agents/node_modules/.fugue-installed-lock.json"
    );
    resumes_by_itself_after_the_daemon_is_killed(Cli::Codex).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_cli_resumes_by_itself_after_the_daemon_is_killed() {
    fugue_tests::require!(
        "unshare",
        "nsenter",
        "ip",
        "tests/agents/node_modules/.fugue-installed-lock.json"
    );
    resumes_by_itself_after_the_daemon_is_killed(Cli::Gemini).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qwen_code_resumes_by_itself_after_the_daemon_is_killed() {
    fugue_tests::require!(
        "unshare",
        "nsenter",
        "ip",
        "tests/agents/node_modules/.fugue-installed-lock.json"
    );
    resumes_by_itself_after_the_daemon_is_killed(Cli::Qwen).await;
}

/// Runs `fugue ARGS` with the test's git identity (a merge commits).
fn fugue_cli(daemon: &Daemon, args: &[&str]) -> fugue_tests::CliOutput {
    let identity = [
        ("GIT_AUTHOR_NAME", "fugue test"),
        ("GIT_AUTHOR_EMAIL", "test@fugue.invalid"),
        ("GIT_COMMITTER_NAME", "fugue test"),
        ("GIT_COMMITTER_EMAIL", "test@fugue.invalid"),
    ];
    tokio::task::block_in_place(|| daemon.cli_with_env(args, &identity))
}

/// Starts `launch`'s CLI with `fugue run --worktree NAME` in session `w`
/// (the repository's); its pane's id.
fn run_in_worktree(daemon: &Daemon, launch: &fugue_tests::agents::Launch, name: &str) -> String {
    let mut args: Vec<String> = [
        "--json",
        "run",
        "-s",
        "w",
        "--worktree",
        name,
        "--size",
        "120x40",
        "--no-shell",
    ]
    .map(String::from)
    .to_vec();
    for (key, value) in &launch.env {
        args.extend(["-e".to_string(), format!("{key}={value}")]);
    }
    args.push("--".into());
    args.push(launch.program.display().to_string());
    args.extend(launch.args.iter().cloned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    fugue_cli(daemon, &args).json()["id"]
        .as_str()
        .expect("pane id")
        .to_string()
}

/// Approves the permission prompts `terminal`'s agent shows (it may ask more
/// than once in a turn) until its turn is over.
async fn approve_and_finish(mcp: &Mcp, terminal: &str) {
    wait_state(mcp, terminal, "waiting_for_permission").await;
    for _ in 0..4 {
        let status = ok(mcp, "fugue_agent_status", json!({"terminal_id": terminal})).await;
        if status["state"] == "idle" {
            return;
        }
        if let Some(prompt_id) = status["prompt_id"].as_str() {
            ok(
                mcp,
                "fugue_approve",
                json!({"terminal_id": terminal, "prompt_id": prompt_id}),
            )
            .await;
        }
        ok(
            mcp,
            "fugue_wait",
            json!({"terminal_id": terminal, "agent_state": "idle|waiting_for_permission", "timeout_ms": 90_000}),
        )
        .await;
    }
    wait_state(mcp, terminal, "idle").await;
}

/// Two real agents (Claude Code and Codex) in one repository, each in a
/// worktree of its own, edit files through the stub: `fugue worktrees` lists
/// both, `fugue diff` shows each one's change only, a review comment through
/// MCP reaches Claude Code as a prompt and starts its turn (it makes the file
/// the comment asks for), `merge --commit` lands its work, and the other is
/// discarded only when asked with --yes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_real_agents_work_and_are_reviewed_in_worktrees() {
    let daemon = Daemon::start_offline();
    let stub = ModelStub::start(&daemon);
    let root = daemon.dir.path();
    let claude = prepare(Cli::Claude, &stub, root, "Create a file for me. FILE=alpha.txt");
    let codex = prepare(Cli::Codex, &stub, root, "Create a file for me. FILE=beta.txt");
    // One repository (Claude's project directory) for both.
    let repo = claude.project.clone();
    let git = |args: &[&str]| fugue_tests::git(&repo, args);
    git(&["init", "--quiet", "--initial-branch=main"]);
    std::fs::write(repo.join("README"), "the repository\n").unwrap();
    git(&["add", "README"]);
    git(&["commit", "--quiet", "-m", "first"]);
    // Each CLI trusts the worktree it will work in, as it trusts its project.
    let worktrees = root
        .join("state/fugue/worktrees")
        .join(fugue_client::worktree::repo_key(&repo));
    let (alpha_dir, beta_dir) = (worktrees.join("alpha"), worktrees.join("beta"));
    let config = claude.home.join(".claude.json");
    let mut trusted: Value = serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    trusted["projects"][alpha_dir.display().to_string()] =
        json!({"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true});
    std::fs::write(&config, trusted.to_string()).unwrap();
    let codex_config = codex.home.join(".codex/config.toml");
    let mut text = std::fs::read_to_string(&codex_config).unwrap();
    text.push_str(&format!(
        "\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
        beta_dir.display()
    ));
    std::fs::write(&codex_config, text).unwrap();

    fugue_cli(&daemon, &["new", "w", "--cwd", repo.to_str().unwrap()]).ok();
    let alpha = run_in_worktree(&daemon, &claude, "alpha");
    let beta = run_in_worktree(&daemon, &codex, "beta");
    // The bridge keeps its worktree records where the CLI does.
    let mut command = fugue_tests::mcp::bridge_command(&daemon);
    command.env("XDG_STATE_HOME", root.join("state"));
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(command)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn fugue-mcp");
    let mcp: Mcp = rmcp::ServiceExt::serve((), transport).await.expect("MCP startup");
    approve_and_finish(&mcp, &alpha).await;
    approve_and_finish(&mcp, &beta).await;
    assert!(alpha_dir.join("alpha.txt").exists() && beta_dir.join("beta.txt").exists());
    assert!(!repo.join("alpha.txt").exists() && !repo.join("beta.txt").exists());

    let listed = fugue_cli(&daemon, &["--json", "worktrees"]).json();
    let mut names: Vec<(String, String)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (w["name"].as_str().unwrap().into(), w["pane"].as_str().unwrap().into()))
        .collect();
    names.sort();
    assert_eq!(
        names,
        [("alpha".to_string(), alpha.clone()), ("beta".to_string(), beta.clone())]
    );
    for (pane, file) in [(&alpha, "alpha.txt"), (&beta, "beta.txt")] {
        let diff = fugue_cli(&daemon, &["--json", "diff", pane]).json();
        let files: Vec<&str> = diff["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap())
            .collect();
        assert_eq!(files, [file], "{diff}");
    }

    // A review comment through MCP: one prompt, a turn started.
    let turns = stub.events().iter().filter(|e| e["event"] == "turn_started").count();
    let reviewed = ok(
        &mcp,
        "fugue_review",
        json!({"terminal_id": alpha, "comments": [{"path": "alpha.txt", "comment": "Also make FILE=gamma.txt"}]}),
    )
    .await;
    assert_eq!(reviewed["receipt"]["went_busy"], true, "{reviewed}");
    stub.nth("turn_started", turns);
    approve_and_finish(&mcp, &alpha).await;
    assert!(alpha_dir.join("gamma.txt").exists(), "the review's request was done");

    // Merge lands Claude Code's work; the other is discarded only with --yes.
    let merged = fugue_cli(&daemon, &["--json", "merge", "alpha", "--commit"]).json();
    assert_eq!(merged["into"], "main", "{merged}");
    assert!(repo.join("alpha.txt").exists() && repo.join("gamma.txt").exists());
    let refused = fugue_cli(&daemon, &["discard", "beta"]).err();
    assert!(refused.contains("add --yes"), "{refused}");
    assert!(beta_dir.join("beta.txt").exists(), "nothing is lost without a yes");
    fugue_cli(&daemon, &["discard", "beta", "--yes"]).ok();
    assert!(!beta_dir.exists());
    end_processes_with_home(&claude.home);
    end_processes_with_home(&codex.home);
}

/// A real agent (Claude Code) delegates through fugue-mcp: its model calls
/// `fugue_delegate`; a child Claude Code starts in a worktree of the parent's
/// repository, is given the prompt, asks for permission (approved here, as a
/// person would), makes its file and ends its turn; the parent's model gets
/// the child's final message, read from the child's own transcript, and the
/// diff with the file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_delegates_and_gets_the_result() {
    let daemon = Daemon::start_offline();
    let stub = ModelStub::start(&daemon);
    let root = daemon.dir.path();
    let mut launch = prepare(Cli::Claude, &stub, root, "Delegate it.");
    let repo = launch.project.clone();
    let git = |args: &[&str]| fugue_tests::git(&repo, args);
    git(&["init", "--quiet", "--initial-branch=main"]);
    std::fs::write(repo.join("README"), "the repository\n").unwrap();
    git(&["add", "README"]);
    git(&["commit", "--quiet", "-m", "first"]);
    // The parent's prompt names the repository; the child works in a worktree
    // of it, which its Claude Code trusts as the parent's trusts the project.
    let prompt_at = launch.args.len() - 1;
    launch.args[prompt_at] = format!("Delegate it. DELEGATE={}", repo.display());
    let worktrees = root.join("worktrees");
    let child_dir = worktrees.join(fugue_client::worktree::repo_key(&repo)).join("child");
    let config = launch.home.join(".claude.json");
    let mut trusted: Value = serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    trusted["projects"][child_dir.display().to_string()] =
        json!({"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true});
    std::fs::write(&config, trusted.to_string()).unwrap();
    // The child starts as `claude` with the parent's configuration (a script
    // of that name, so fugue knows it by name).
    let bin_dir = root.join("child-bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let exports: String = launch.env.iter().map(|(k, v)| format!("export {k}='{v}'\n")).collect();
    let script = bin_dir.join("claude");
    std::fs::write(
        &script,
        format!("#!/bin/sh\n{exports}exec '{}' \"$@\"\n", launch.program.display()),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    register_fugue_mcp(&mut launch, &daemon);
    // fugue-mcp as this test's parent runs it: spawning allowed (Claude Code
    // cannot ask), the child's command, the worktree root; fugue_delegate allowed.
    let servers = launch.home.join("fugue-mcp.json");
    let mut registered: Value = serde_json::from_str(&std::fs::read_to_string(&servers).unwrap()).unwrap();
    let args = registered["mcpServers"]["fugue"]["args"].as_array_mut().unwrap();
    args.extend([
        json!("--allow-spawn"),
        json!("--agent-command"),
        json!(format!("claude={} --permission-mode default", script.display())),
        json!("--worktree-root"),
        json!(worktrees.display().to_string()),
    ]);
    std::fs::write(&servers, registered.to_string()).unwrap();
    for arg in launch.args.iter_mut() {
        if arg.starts_with("--allowedTools=") {
            arg.push_str(",mcp__fugue__fugue_delegate");
        }
    }

    let mcp = bridge(&daemon).await;
    let parent = ok(&mcp, "fugue_start", launch.start_params("claude delegating")).await;
    let parent = parent["terminal_id"].as_str().expect("terminal id").to_string();
    // Claude Code asks its person to confirm the delegation (fugue-mcp's
    // question, through MCP elicitation): they tick it and submit.
    let asked = ok(
        &mcp,
        "fugue_wait",
        json!({"terminal_id": parent, "pattern": "requests your input", "on": "screen", "timeout_ms": 90_000}),
    )
    .await;
    assert_eq!(
        asked["condition"],
        "pattern",
        "{asked}\n{}",
        screen(&mcp, &parent).await
    );
    let question = screen(&mcp, &parent).await;
    assert!(
        question.contains("Delegate to claude in a new git worktree"),
        "{question}"
    );
    ok(
        &mcp,
        "fugue_send_keys",
        json!({"terminal_id": parent, "keys": ["Space"]}),
    )
    .await;
    let ticked = ok(
        &mcp,
        "fugue_wait",
        json!({"terminal_id": parent, "pattern": "confirm: [☒☑✔✓]", "on": "screen", "timeout_ms": 10_000}),
    )
    .await;
    assert_eq!(
        ticked["condition"],
        "pattern",
        "{ticked}\n{}",
        screen(&mcp, &parent).await
    );
    ok(
        &mcp,
        "fugue_send_keys",
        json!({"terminal_id": parent, "keys": ["Enter"]}),
    )
    .await;
    // Then the Accept button. A key that comes before the form listens is
    // lost, so it is pressed again (at most 5 times) until the form is gone.
    for _ in 0..5 {
        let accept = ok(
            &mcp,
            "fugue_wait",
            json!({"terminal_id": parent, "pattern": "❯ Accept", "on": "screen", "timeout_ms": 3_000}),
        )
        .await;
        if accept["condition"] != "pattern" {
            break;
        }
        ok(
            &mcp,
            "fugue_send_keys",
            json!({"terminal_id": parent, "keys": ["Enter"]}),
        )
        .await;
        // The form redraws (or not) at once; then it is there, or gone.
        ok(
            &mcp,
            "fugue_wait",
            json!({"terminal_id": parent, "idle_ms": 300, "timeout_ms": 3_000}),
        )
        .await;
        if !screen(&mcp, &parent).await.contains("requests your input") {
            break;
        }
    }
    // The child shows up in its own session and asks; a person approves.
    let deadline = std::time::Instant::now() + DEADLINE * 6;
    let child = loop {
        let listed = fugue_tests::mcp::call(&mcp, "fugue_list", json!({"session": "child"})).await;
        let found = listed
            .structured_content
            .and_then(|v| v["terminals"][0]["id"].as_str().map(String::from));
        if let Some(child) = found {
            break child;
        }
        if std::time::Instant::now() > deadline {
            let seen: Vec<String> = stub
                .events()
                .iter()
                .filter(|e| e["event"] != "request")
                .map(|e| format!("{} {}", e["event"], e["detail"]))
                .collect();
            panic!(
                "no child started; the stub saw {seen:#?}\nthe parent's screen:\n{}",
                screen(&mcp, &parent).await
            );
        }
        // Polled: the child's session, through the parent's MCP, with the stub's log for the failure.
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    approve_and_finish(&mcp, &child).await;
    // Claude Code declares MCP tasks: the call becomes one at once (the model
    // is told so), and its result reaches the model when the child is done.
    let started = stub
        .until(
            "the delegation's first answer at the parent's model",
            DEADLINE * 6,
            |e| (e["event"] == "mcp_result" && e["detail"]["tool"] == "fugue_delegate").then(|| e["detail"].clone()),
        )
        .await;
    assert_eq!(started["is_error"], false, "{started}");
    println!("fugue_delegate -> {}", started["text"]);
    let result = stub
        .until("the delegation's result at the parent's model", DEADLINE * 6, |e| {
            (e["event"] == "task_result").then(|| e["detail"]["text"].as_str().unwrap_or_default().to_string())
        })
        .await;
    println!("task result -> {}", result.chars().take(800).collect::<String>());
    // The result as the model read it: the tool's JSON in the CLI's note
    // (`<task-notification>... <result>JSON</result>`).
    let text = result
        .split("<result>")
        .nth(1)
        .and_then(|r| r.split("</result>").next())
        .unwrap_or(&result)
        .trim();
    let value: Value = serde_json::from_str(text).unwrap_or_else(|_| json!({"raw": text}));
    assert_eq!(value["final_message"]["source"], "transcript", "{result}");
    assert!(
        value["final_message"]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("Done: the file is there."),
        "{result}"
    );
    assert_eq!(value["diff"]["files"][0]["path"], "child.txt", "{text}");
    assert_eq!(value["branch"], "fugue/child", "{text}");
    assert!(child_dir.join("child.txt").exists());
    let _ = mcp.cancel().await;
    end_processes_with_home(&launch.home);
}

/// A real Claude Code sandboxed with no network, its model stub in the same
/// container: its hooks reach fugued through a socket of its pane's own (the
/// state it reports is read from a hook), its permission prompt is approved
/// through fugue-mcp, and the file the approved command makes lands in the
/// mounted directory, owned by the directory's user. The hook socket answers
/// nothing but that pane's hook reports, and goes with the pane. Hibernated,
/// its container goes; a prompt wakes it in a new one on the same
/// conversation (its HOME is in the mounted directory).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_in_a_sandbox_reports_hooks_is_approved_and_hibernates() {
    use fugue_tests::containers;
    if !containers::engine_or_skip() {
        return;
    }
    let image = tokio::task::block_in_place(|| containers::agent_image(&Cli::Claude.executable()));
    let daemon = Daemon::start();
    let project = daemon.dir.path().join("sandboxed");
    let home = project.join(".home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join(".claude.json"),
        fugue_tests::agents::claude_config(&project).to_string(),
    )
    .unwrap();
    let stub_log = project.join(".model-stub.log");
    // The sandbox runs as the directory's owner (fugued runs as root here).
    for path in [&project, &home, &home.join(".claude.json")] {
        rustix::fs::chown(
            path,
            Some(rustix::process::Uid::from_raw(1000)),
            Some(rustix::process::Gid::from_raw(1000)),
        )
        .unwrap();
    }
    let base = format!("http://127.0.0.1:{}", containers::AGENT_STUB_PORT);
    let mut env = fugue_tests::agents::claude_env(&base);
    env.extend([
        ("HOME".to_string(), home.display().to_string()),
        ("MODEL_STUB_LOG".to_string(), stub_log.display().to_string()),
    ]);
    let mut args: Vec<String> = ["--json", "run", "-s", "sb", "--size", "120x40", "--no-shell"]
        .map(String::from)
        .to_vec();
    args.extend(["--cwd".into(), project.display().to_string()]);
    args.extend(["--sandbox".into(), image, "--network".into(), "none".into()]);
    for (key, value) in &env {
        args.extend(["-e".to_string(), format!("{key}={value}")]);
    }
    args.extend(
        [
            "--",
            "claude",
            "--permission-mode",
            "default",
            "Create a file for me. FILE=boxed.txt",
        ]
        .map(String::from),
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    fugue_cli(&daemon, &["new", "sb", "--cwd", project.to_str().unwrap()]).ok();
    let pane = fugue_cli(&daemon, &args).json()["id"]
        .as_str()
        .expect("pane id")
        .to_string();

    let mcp = bridge(&daemon).await;
    wait_state(&mcp, &pane, "waiting_for_permission").await;
    let status = ok(&mcp, "fugue_agent_status", json!({"terminal_id": pane})).await;
    let client = daemon.client().await;
    let explained = client.agent_status(&pane).await.expect("agent status");
    let hooks: Vec<&str> = explained
        .signals
        .iter()
        .filter(|s| s.source == fugue_client::protocol::StateSource::Hook)
        .map(|s| s.reading.as_str())
        .collect();
    assert!(
        !hooks.is_empty(),
        "a hook reached fugued from the sandbox: {status}\nsignals: {:?}",
        explained.signals
    );

    // The pane's hook socket: a hook report of its own pane's, nothing else.
    let sockets = daemon.socket.parent().unwrap().join("sandbox-hooks");
    let hook_dir = std::fs::read_dir(&sockets)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with(&pane))
        .expect("the pane's hook directory");
    // (The directory is the sandbox user's, so the client's own checks would
    // refuse it to root: the stream is made here.)
    let socket = hook_dir.join("hook.sock");
    let stream = tokio::net::UnixStream::connect(&socket)
        .await
        .expect("connect to the hook socket");
    let scoped = fugue_client::Client::handshake(stream, socket, "fugue-tests")
        .await
        .expect("handshake on the hook socket");
    let refused = scoped.list_sessions().await.expect_err("a list on the hook socket");
    assert!(
        refused.to_string().contains("takes only pane") && refused.to_string().contains("hook reports"),
        "{refused}"
    );
    // Another pane's hook report is refused too, whatever token it carries.
    let other = fugue_client::protocol::AgentHook {
        event: "Stop".into(),
        ..Default::default()
    };
    let refused = scoped
        .agent_hook("00000000-0000-0000-0000-000000000000", "token", other)
        .await
        .expect_err("another pane's hook report on this pane's hook socket");
    assert!(refused.to_string().contains("takes only pane"), "{refused}");

    approve_and_finish(&mcp, &pane).await;
    let made = project.join("boxed.txt");
    assert!(made.exists(), "the approved command ran in the sandbox");
    assert_eq!(
        std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(&made).unwrap()),
        1000
    );
    let events = fugue_tests::agents::events_in(&stub_log);
    assert!(events.iter().any(|e| e["event"] == "tool_result"), "{events:?}");

    // Hibernated: the container goes (its HOME, with the conversation, is in
    // the mounted directory); a prompt wakes it in a new container on the
    // same conversation, which the stub sees in what the CLI sends.
    let container = fugue_client::sandbox::container_name(&pane);
    let container_args = || {
        let out = std::process::Command::new("docker")
            .args(["inspect", "--format", "{{json .Args}}", &container])
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).to_string())
    };
    let recorded = daemon.agent_session(&pane).await;
    let started = std::time::Instant::now();
    let slept = client.hibernate(&pane).await.expect("hibernate the sandboxed agent");
    let hibernated_in = started.elapsed();
    assert_eq!(slept.state, fugue_client::protocol::PaneState::Hibernated);
    let container_filter = format!("container={container}");
    let container_gone = |what: &str| {
        containers::until_engine_event("docker", &[&container_filter, "event=destroy"], what, DEADLINE, || {
            container_args().is_none().then_some(())
        })
    };
    container_gone("the hibernated agent's container to go");
    let sent = fugue_client::ops::send_prompt(&client, &pane, "Now one more. FILE=second.txt", None)
        .await
        .expect("the prompt that wakes it");
    assert!(sent.went_busy, "{sent:?}");
    println!(
        "sandboxed claude: hibernated in {} ms, woken and prompted in {} ms",
        hibernated_in.as_millis(),
        (started.elapsed() - hibernated_in).as_millis()
    );
    let args = container_args().expect("a container again");
    assert!(args.contains(&recorded.id), "not resumed on its session: {args}");
    approve_and_finish(&mcp, &pane).await;
    assert!(project.join("second.txt").exists());
    let second = fugue_tests::agents::events_in(&stub_log)
        .into_iter()
        .find(|e| e["event"] == "turn_started" && e["detail"]["command"] == "touch second.txt")
        .expect("the second turn reached the stub");
    let files = &second["detail"]["files"];
    assert!(
        files.as_array().is_some_and(|f| f.iter().any(|f| f == "boxed.txt")),
        "another conversation: the woken CLI sent {files}"
    );

    let hook_dir = std::fs::read_dir(&sockets)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with(&pane))
        .expect("the woken agent's hook directory");
    fugue_cli(&daemon, &["release", &pane]).ok();
    fugue_tests::files::until_changed(&sockets, "the hook socket's directory to go", DEADLINE, || {
        (!hook_dir.exists()).then_some(())
    });
    container_gone("the sandbox container to go");
}

/// Claude Code's TUI skill's flow, through fugue's tmux: the model (the stub)
/// has Claude Code's Bash tool run `tmux new-session -d`, `send-keys` a program
/// that waits for a line, `capture-pane -p` again and again until the screen
/// shows it ready, and `kill-session`. Claude Code runs in a fugue pane (the
/// bridge is on for agent CLIs): the session it opens is a fugue pane of the
/// agent's session, its parent the agent, in the overview (what `fugue top`
/// shows) while it runs; the person types the line the program waits for, the
/// model's poll loop sees it, and the pane is gone with the session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_drives_a_tui_through_fugues_tmux() {
    fugue_tests::require!(
        "unshare",
        "nsenter",
        "ip",
        "tests/agents/node_modules/.fugue-installed-lock.json"
    );
    let daemon = Daemon::start_offline();
    let stub = ModelStub::start(&daemon);
    let mut launch = prepare(Cli::Claude, &stub, daemon.dir.path(), "Drive the app for me. TMUX=app");
    // The person lets it run tmux (as the skill's users do), nothing else.
    let prompt = launch.args.pop().expect("the prompt");
    launch.args.extend(["--allowedTools=Bash(tmux:*)".into(), prompt]);
    let client = daemon.client().await;
    let lead = start_in_session(&client, launch.spec("agents")).await;
    assert!(lead.tmux.is_some(), "an agent CLI's pane is bridged");
    let lead_id = lead.id.to_string();
    let _shown = ShownOnFailure(&daemon, &lead_id, &stub);

    let opened = daemon
        .until_event(
            "the pane Claude Code opens through tmux",
            Duration::from_secs(90),
            || async {
                let panes = client.list_panes(Some("agents")).await.ok()?;
                panes
                    .into_iter()
                    .find(|p| p.tmux.as_ref().is_some_and(|t| t.made_by_tmux && t.session == "app"))
            },
        )
        .await;
    let place = opened.tmux.clone().expect("a place");
    assert_eq!(place.parent, Some(lead.id), "its parent is the agent");
    assert_eq!(opened.size.cols, 120, "-x 120");
    let id = opened.id.to_string();
    // What the person sees in `fugue top`: the overview lists it, by the agent.
    let overview = daemon.cli(&["--json", "overview", "agents"]).json();
    let listed = overview
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["id"] == id.as_str() || row["pane"]["id"] == id.as_str())
        .unwrap_or_else(|| panic!("not in the overview: {overview}"));
    assert!(listed.to_string().contains("\"session\":\"app\""), "{listed}");

    // The program waits for a line; the model polls its screen meanwhile: a
    // capture came back without the program ready, and it looks again.
    daemon.wait_text(&id, "read line");
    stub.until("a capture of the program not ready yet", DEADLINE * 6, |e| {
        let text = e["detail"]["text"].as_str()?;
        (e["event"] == "tmux_result" && text.contains("read line") && !text.contains("ready-go")).then_some(())
    })
    .await;
    daemon.cli(&["write", &id, "go\n"]).ok();
    let seen = stub
        .until("the model to see the program ready", DEADLINE * 6, |e| {
            let text = e["detail"]["text"].as_str()?;
            (e["event"] == "tmux_result" && text.contains("ready-go")).then(|| text.to_string())
        })
        .await;
    assert!(seen.lines().any(|l| l.trim() == "ready-go"), "{seen}");
    stub.until("the turn to end", DEADLINE * 6, |e| {
        (e["event"] == "turn_finished").then_some(())
    })
    .await;
    let panes = client.list_panes(Some("agents")).await.unwrap();
    assert!(
        panes.iter().all(|p| p.id != opened.id),
        "kill-session ended the pane: {panes:?}"
    );
    let calls: Vec<String> = stub
        .events()
        .iter()
        .filter(|e| e["event"] == "tmux_call")
        .filter_map(|e| e["detail"]["command"].as_str().map(str::to_string))
        .collect();
    eprintln!("claude (tmux skill): {} tmux calls: {calls:?}", calls.len());
    let captures = calls.iter().filter(|c| c.contains("capture-pane")).count();
    assert!(captures >= 2, "the model polled the screen: {calls:?}");
    let failed: Vec<Value> = stub
        .events()
        .into_iter()
        .filter(|e| e["event"] == "tmux_result" && e["detail"]["text"].as_str().unwrap_or("").contains("Error"))
        .collect();
    assert!(failed.is_empty(), "a tmux call failed: {failed:?}");
    end_processes_with_home(&launch.home);
}

/// Prints an agent's screen and the stub's events when a test fails.
struct ShownOnFailure<'a>(&'a Daemon, &'a str, &'a ModelStub);

impl Drop for ShownOnFailure<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let screen = self.0.cli(&["capture", self.1]);
            eprintln!("screen of {}:\n{}{}", self.1, screen.stdout, screen.stderr);
            eprintln!("the stub's events: {:?}", self.2.events());
            let log = self.0.log();
            let calls: Vec<&str> = log.lines().filter(|l| l.contains("tmux call")).collect();
            eprintln!("tmux calls:\n{}", calls.join("\n"));
        }
    }
}

/// Claude Code's agent teams for real, through fugue's tmux: a real Claude
/// Code lead (agent teams on, `--teammate-mode tmux`) in a fugue pane spawns
/// two teammates (its `Agent` tool with `name`); each is a fugue pane beside
/// the lead (its child, in its window) running Claude Code with fugue's
/// hooks. A teammate's permission request goes to its lead, and a person
/// answers it from fugue (`fugue top`'s keys, and MCP's `fugue_approve`). The
/// lead's message reaches a teammate. Told to end, the lead ends its
/// teammates' panes with its own `tmux kill-pane`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_teammates_are_fugue_panes_beside_the_lead() {
    fugue_tests::require!(
        "tmux",
        "unshare",
        "nsenter",
        "ip",
        "tests/agents/node_modules/.fugue-installed-lock.json"
    );
    let daemon = Daemon::start_offline();
    let stub = ModelStub::start(&daemon);
    let mut launch = prepare(
        Cli::Claude,
        &stub,
        daemon.dir.path(),
        "Start a team. TEAM=mate-a,mate-b",
    );
    let prompt = launch.args.pop().expect("the prompt");
    launch.args.extend(["--teammate-mode".into(), "tmux".into(), prompt]);
    launch
        .env
        .push(("CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS".into(), "1".into()));
    let client = daemon.client().await;
    let lead = start_in_session(&client, launch.spec("agents")).await;
    let lead_id = lead.id.to_string();
    let _shown = ShownOnFailure(&daemon, &lead_id, &stub);
    let teammates = daemon
        .until_event("two teammates beside the lead", Duration::from_secs(90), || async {
            let panes = client.list_panes(Some("agents")).await.ok()?;
            let mates: Vec<_> = panes
                .into_iter()
                .filter(|p| p.tmux.as_ref().is_some_and(|t| t.parent == Some(lead.id)))
                .filter(|p| p.command.first().is_some_and(|c| c.contains("claude")))
                .collect();
            (mates.len() == 2).then_some(mates)
        })
        .await;
    for mate in &teammates {
        let command = mate.command.join(" ");
        // Started directly (the bridge read the command line), with the
        // hooks fugue gave the lead, which Claude Code passes on.
        assert!(
            command.contains("--agent-name") && command.contains("claude-hooks.json"),
            "{command}"
        );
        let place = mate.tmux.as_ref().unwrap();
        assert_eq!(
            place.window_id,
            lead.tmux.as_ref().unwrap().window_id,
            "beside the lead"
        );
        assert!(place.made_by_tmux);
    }
    // A teammate asks its lead for permission: the lead's pane waits for a
    // person, who answers from fugue: the first from `fugue top` (jump to
    // the pane that needs them, read the prompt, approve), the second
    // through MCP.
    let mcp = Arc::new(bridge(&daemon).await);
    let top = Tmux::start(daemon.dir.path(), 160, 30);
    top.type_line(
        "main",
        &format!(
            "{} --socket {} top agents",
            fugue_tests::bin("fugue").display(),
            daemon.socket.display()
        ),
    );
    for n in 0..2 {
        let asked = daemon.wait_agent_state(&lead_id, "waiting_for_permission");
        let prompt_id = asked["prompt_id"].as_str().expect("a prompt id").to_string();
        match n {
            0 => {
                top.wait_for("main", "1 need you");
                top.send_keys("main", &["n"]);
                top.send_keys("main", &["a"]);
                let screen = top.wait_for("main", "y: approve");
                assert!(screen.contains("Do you want to proceed?"), "{screen}");
                top.send_keys("main", &["y"]);
                top.wait_for("main", "approved");
            }
            _ => {
                ok(
                    &mcp,
                    "fugue_approve",
                    json!({"terminal_id": lead_id, "prompt_id": prompt_id}),
                )
                .await;
            }
        }
        stub.until("a teammate's turn to end", DEADLINE * 6, move |e| {
            (e["event"] == "turn_finished").then_some(())
        })
        .await;
    }
    for name in ["mate-a", "mate-b"] {
        assert!(
            launch.project.join(format!("teammate-{name}.txt")).exists(),
            "{name}'s file"
        );
    }
    // The lead, told to end (SIGTERM), ends its teammates itself with
    // `tmux kill-pane`: their panes go with it.
    daemon.cli(&["kill", &lead_id]).ok();
    daemon.cli(&["wait", &lead_id, "--timeout", "30"]);
    let gone = daemon
        .until_event("the teammates' panes to go", DEADLINE, || async {
            let panes = client.list_panes(Some("agents")).await.ok()?;
            teammates
                .iter()
                .all(|mate| panes.iter().all(|p| p.id != mate.id))
                .then_some(panes)
        })
        .await;
    assert!(
        gone.iter().any(|p| p.id == lead.id),
        "the lead's own pane stays readable"
    );
    let log = daemon.until_logged("\"kill-pane -t %2\"");
    let kills = log
        .lines()
        .filter(|l| l.contains("tmux call") && l.contains(&lead_id) && l.contains("\"kill-pane -t %"))
        .count();
    assert_eq!(kills, 2, "the lead ended each teammate through tmux");
    end_processes_with_home(&launch.home);
}

/// A real Claude Code, prompted from the page, asks for permission and is
/// approved from fugued's push in the page's service worker: the same
/// tests/browser/push.mjs as the fake agent's test, with fugue-web, the push
/// service and Chromium in the daemon's network namespace (where the model
/// stub is). The command it asked for runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_is_approved_from_a_push_in_the_service_worker() {
    fugue_tests::require!(
        "unshare",
        "nsenter",
        "ip",
        "chromium",
        "node",
        "tests/agents/node_modules/.fugue-installed-lock.json",
        "tests/browser/node_modules/playwright-core",
        "tests/browser/node_modules/web-push-testing"
    );
    use std::io::BufRead;
    let daemon = Daemon::start_offline_with_env(&[("FUGUE_TEST_PUSH_LOOPBACK", "1")]);
    let stub = ModelStub::start(&daemon);
    let mcp = Arc::new(bridge(&daemon).await);
    let prompt = "Create a file for me. FILE=approved.txt";
    let launch = prepare(Cli::Claude, &stub, daemon.dir.path(), prompt).without_prompt();
    let started = ok(&mcp, "fugue_start", launch.start_params("claude pushed")).await;
    let terminal = started["terminal_id"].as_str().expect("terminal id").to_string();
    wait_state(&mcp, &terminal, "idle").await;
    let pane = daemon.cli(&["--json", "status", &terminal]).json();
    let label = format!("{}:{}", pane["session"].as_str().unwrap(), pane["index"]);
    let net = format!("--net=/proc/{}/ns/net", daemon.pid());
    let mut web = std::process::Command::new("nsenter")
        .args([net.as_str(), "--"])
        .arg(fugue_tests::bin("fugue-web"))
        .args(["--listen", "127.0.0.1:0", "--socket"])
        .arg(&daemon.socket)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start fugue-web in the namespace");
    let mut login = String::new();
    std::io::BufReader::new(web.stdout.take().unwrap())
        .read_line(&mut login)
        .expect("fugue-web's URL");
    let browser_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("browser");
    let artifacts = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/browser-artifacts-push-claude");
    let output = tokio::task::block_in_place(|| {
        std::process::Command::new("nsenter")
            .args([net.as_str(), "--", "node"])
            .arg(browser_dir.join("push.mjs"))
            .current_dir(&browser_dir)
            .env("FUGUE_WEB_URL", login.trim())
            .env("ARTIFACTS", &artifacts)
            .env("AGENT_LABEL", &label)
            .env("AGENT_PANE", &terminal)
            .env("PROMPT", prompt)
            .env("DEADLINE_MS", "60000")
            .output()
            .expect("run node")
    });
    let _ = web.kill();
    let _ = web.wait();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("all steps passed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for shot in ["1-needs-you-phone", "2-notification-target-phone", "3-offline-phone"] {
        assert!(artifacts.join(format!("{shot}.png")).is_file(), "{shot}");
    }
    // Approved in the service worker: Claude Code ran what it asked for.
    wait_state(&mcp, &terminal, "idle").await;
    assert!(launch.project.join("approved.txt").exists(), "{stdout}");
    end_processes_with_home(&launch.home);
}
