//! What the agents say about themselves: a usage or rate limit read as the
//! `limited` state (the model stub answers with each API's real 429), the
//! prompt `resume_after_limit` sends once the limit resets, and Claude Code's
//! background sessions (`claude --bg`) as overview rows without a pane.

use super::{start_in_session, wait_agent_state};
use fugue_client::protocol::{AgentState, Attention, Event, StateSource};
use fugue_tests::agents::{end_processes_with_home, prepare, Cli, ModelStub};
use fugue_tests::{bin, Daemon, Tmux};
use serde_json::Value;
use std::time::Duration;

/// `cli`, asked a prompt the stub refuses with its API's 429 (a limit that
/// resets in an hour), reads `limited`, with the CLI's lines as evidence and
/// the reset time where the CLI shows one. A new prompt (no limit) runs a
/// turn, which clears it; once that turn ends, the session's token totals
/// (from the CLI's transcript) count the stub's usage.
async fn is_limited_by_a_429(cli: Cli) {
    let daemon = Daemon::start_offline();
    let stub = ModelStub::start(&daemon);
    let launch = prepare(
        cli,
        &stub,
        daemon.dir.path(),
        "LIMIT=3600 Create a file. FILE=limited.txt",
    );
    let client = daemon.client().await;
    let pane = start_in_session(&client, launch.spec("agents")).await;
    let id = pane.id.to_string();
    stub.until("the stub's 429", fugue_tests::DEADLINE * 4, |e| {
        (e["event"] == "limit_sent").then_some(())
    })
    .await;
    wait_agent_state(&client, &id, AgentState::Limited).await;
    let status = client.agent_status(&id).await.expect("status");
    println!(
        "{}: limited: {:?} (resets {:?})",
        cli.name(),
        status.evidence,
        status.resets_at_ms
    );
    assert_eq!(status.needs, Attention::Nothing, "a limit needs nobody: {status:?}");
    assert_eq!(status.state.turn(), fugue_client::protocol::TurnState::NotRunning);
    let said = status.evidence.join(" ").to_lowercase();
    let (words, resets) = match cli {
        Cli::Claude => ("request rejected (429)", false),
        Cli::Codex => ("hit your usage limit", true),
        _ => ("usage limit reached", true),
    };
    assert!(said.contains(words), "{said}");
    match resets {
        // The CLI shows a clock time (minutes): the end of that minute, an
        // hour from now give or take one.
        true => {
            let at = status.resets_at_ms.expect("a reset time") as i64;
            let hour = fugue_client::protocol::now_ms() as i64 + 3_600_000;
            assert!((at - hour).abs() <= 120_000, "resets at {at}, an hour is {hour}");
        }
        false => assert_eq!(status.resets_at_ms, None),
    }
    let overview = fugue_cli(&daemon, &["overview", "--json"]);
    let row = overview
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["pane"]["id"] == id.as_str()))
        .cloned()
        .expect("the pane's row");
    assert_eq!(row["agent"]["state"], "limited");
    assert_eq!(row["origin"], "pane");
    let text = daemon.cli(&["overview"]).ok();
    match resets {
        true => assert!(text.contains("limited until "), "{text}"),
        false => assert!(text.contains("limited"), "{text}"),
    }
    if cli == Cli::Gemini {
        // Its quota dialog (keep trying, or stop) is the limit itself.
        end_processes_with_home(&launch.home);
        return;
    }
    // A new turn: no longer limited.
    let sent = fugue_client::ops::send_prompt(&client, &id, "Try once more. FILE=limited.txt", None)
        .await
        .expect("a prompt to a limited agent");
    assert!(sent.went_busy, "{sent:?}");
    wait_agent_state(&client, &id, AgentState::WaitingForPermission).await;
    // Approved, the turn ends: the tokens its transcript counts.
    client.send_keys(&id, &["Enter".to_string()]).await.expect("approve");
    wait_agent_state(&client, &id, AgentState::Idle).await;
    let done = client.agent_status(&id).await.expect("status");
    let tokens = done
        .tokens
        .unwrap_or_else(|| panic!("{}: no token totals: {done:?}", cli.name()));
    println!("{}: tokens {tokens:?}", cli.name());
    assert!(tokens.input >= 12 && tokens.output >= 1, "{tokens:?}");
    end_processes_with_home(&launch.home);
}

/// A Codex under `config_toml` (fugued's config.toml), whose first prompt
/// the stub refuses with a usage limit resetting `seconds` ahead, read
/// `limited`: its daemon (and config directory), stub, launch, client, pane
/// and when the limit resets.
struct Limited {
    _config: tempfile::TempDir,
    daemon: Daemon,
    stub: ModelStub,
    launch: fugue_tests::agents::Launch,
    client: fugue_client::Client,
    id: String,
    resets: u64,
}

async fn codex_limited(config_toml: &str, seconds: u64, file: &str) -> Limited {
    let config = tempfile::tempdir().expect("config dir");
    let fugue_dir = config.path().join("fugue");
    std::fs::create_dir_all(&fugue_dir).expect("fugue config dir");
    std::fs::write(fugue_dir.join("config.toml"), config_toml).expect("config.toml");
    let daemon = Daemon::start_offline_with_env(&[("XDG_CONFIG_HOME", config.path().to_str().expect("utf-8"))]);
    let stub = ModelStub::start(&daemon);
    let prompt = format!("LIMIT={seconds} Create a file. FILE={file}");
    let launch = prepare(Cli::Codex, &stub, daemon.dir.path(), &prompt);
    let client = daemon.client().await;
    let pane = start_in_session(&client, launch.spec("agents")).await;
    let id = pane.id.to_string();
    wait_agent_state(&client, &id, AgentState::Limited).await;
    let status = client.agent_status(&id).await.expect("status");
    let resets = status.resets_at_ms.expect("Codex says when it resets");
    Limited {
        _config: config,
        daemon,
        stub,
        launch,
        client,
        id,
        resets,
    }
}

/// Codex stopped by a usage limit that resets a few seconds ahead, with
/// `resume_after_limit` on: fugue sends one "continue" when it resets (the
/// end of the minute Codex shows), the turn runs, and the prompt's receipt
/// is kept under its key. Nobody typed, so nothing holds it back.
async fn codex_resumes_after_its_limit() {
    let config = "[agents.codex]\nresume_after_limit = true\nresume_prompt = \"continue\"\n";
    let Limited {
        daemon,
        stub,
        launch,
        client,
        id,
        resets,
        ..
    } = codex_limited(config, 3, "resumed.txt").await;
    // The turn `continue` starts asks to make the file.
    wait_agent_state(&client, &id, AgentState::WaitingForPermission).await;
    let started = stub
        .events()
        .into_iter()
        .filter(|e| e["event"] == "turn_started")
        .filter_map(|e| e["at"].as_u64())
        .next_back()
        .expect("the turn after the reset reached the stub");
    assert!(
        started + 1000 >= resets,
        "resumed at {started}, before the reset at {resets}"
    );
    let log = std::fs::read_to_string(daemon.dir.path().join("fugued.stderr")).unwrap_or_default();
    let resumed: Vec<&str> = log.lines().filter(|l| l.contains("resumed after its limit")).collect();
    assert_eq!(resumed.len(), 1, "one continue, not {}: {resumed:?}", resumed.len());
    assert!(resumed[0].contains("outcome=started"), "{}", resumed[0]);
    end_processes_with_home(&launch.home);
}

/// A person typing into the pane holds `resume_after_limit` back: keys
/// typed (and taken back, so no draft is left) 3 s before the reset put the
/// "continue" 10 s after them, and still only one.
async fn codex_resume_waits_for_a_person_typing() {
    let Limited {
        daemon,
        stub,
        launch,
        client,
        id,
        resets,
        ..
    } = codex_limited("[agents.codex]\nresume_after_limit = true\n", 8, "typed.txt").await;
    let typing_at = resets.saturating_sub(3000);
    let wait = typing_at.saturating_sub(fugue_client::protocol::now_ms());
    // Paced: a person types 3 s before the limit resets.
    tokio::time::sleep(Duration::from_millis(wait)).await;
    let typed_at = fugue_client::protocol::now_ms();
    client.write_input(&id, b"x").await.expect("a key");
    client
        .send_keys(&id, &["Backspace".to_string()])
        .await
        .expect("taken back");
    wait_agent_state(&client, &id, AgentState::WaitingForPermission).await;
    let resumed = stub
        .events()
        .into_iter()
        .filter(|e| e["event"] == "turn_started")
        .filter_map(|e| e["at"].as_u64())
        .next_back()
        .expect("the resumed turn reached the stub");
    assert!(
        resumed >= typed_at + 9_500,
        "resumed {} ms after the person typed, not 10 s",
        resumed.saturating_sub(typed_at)
    );
    let log = std::fs::read_to_string(daemon.dir.path().join("fugued.stderr")).unwrap_or_default();
    assert_eq!(log.matches("resumed after its limit").count(), 1, "one continue");
    end_processes_with_home(&launch.home);
}

/// The CLI's `--json` output, parsed.
fn fugue_cli(daemon: &Daemon, args: &[&str]) -> Value {
    serde_json::from_str(&daemon.cli(args).ok()).expect("JSON")
}

/// A `claude --bg` session in a directory a pane of fugue's uses is a row
/// of origin `claude_background` (fugued reads Claude Code's status files
/// under its own `CLAUDE_CONFIG_DIR`): events carry its states as its turn
/// runs (busy, then waiting for permission), `fugue overview --json` lists
/// it with its directory and id, and `fugue attach bg:ID`, typed in a
/// terminal, opens it in a new pane whose agent fugue reads like any other:
/// approved there, the session's turn finishes and its row goes idle.
async fn background_session_in_every_view() {
    let shared = tempfile::tempdir().expect("a directory for Claude Code's config");
    let config_dir = shared.path().join("claude");
    std::fs::create_dir_all(&config_dir).expect("config dir");
    let config = config_dir.to_str().expect("utf-8").to_string();
    let daemon = Daemon::start_offline_with_env(&[("CLAUDE_CONFIG_DIR", &config)]);
    let stub = ModelStub::start(&daemon);
    let launch = prepare(Cli::Claude, &stub, daemon.dir.path(), "unused");
    std::fs::write(
        config_dir.join(".claude.json"),
        fugue_tests::agents::claude_config(&launch.project).to_string(),
    )
    .expect(".claude.json");
    let client = daemon.client().await;
    // A pane in the project: its directory is one fugue serves.
    let mut shell = fugue_client::protocol::SpawnSpec::new("work");
    shell.command = Some("cat".into());
    shell.shell = false;
    shell.cwd = Some(launch.project.display().to_string());
    client.create_session("work", None, Vec::new()).await.expect("session");
    client.create_pane(shell).await.expect("a pane in the project");
    let mut events = client.subscribe().await.expect("subscribe");

    let started = std::process::Command::new("nsenter")
        .arg(format!("--net=/proc/{}/ns/net", daemon.pid()))
        .arg("--")
        .arg(&launch.program)
        .args(["--bg", "--permission-mode", "default", "Create a file. FILE=bg.txt"])
        .envs(launch.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .env("CLAUDE_CONFIG_DIR", &config)
        .current_dir(&launch.project)
        .output()
        .expect("claude --bg");
    let said = String::from_utf8_lossy(&started.stdout).into_owned();
    let bg_id = said
        .split("backgrounded · ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| {
            panic!(
                "claude --bg said {said:?} {:?}",
                String::from_utf8_lossy(&started.stderr)
            )
        })
        .to_string();

    // Its states, as events, until it asks for permission.
    let mut states = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
    while states.last() != Some(&AgentState::WaitingForPermission) {
        let Ok(event) = tokio::time::timeout_at(deadline, events.recv()).await else {
            let files: Vec<String> = std::fs::read_dir(config_dir.join("sessions"))
                .into_iter()
                .flatten()
                .flatten()
                .map(|f| std::fs::read_to_string(f.path()).unwrap_or_default())
                .collect();
            panic!(
                "no permission request from the background session; states: {states:?}\nstatus files: {files:?}\nthe stub saw: {:?}",
                stub.events()
            );
        };
        let event = event.expect("events");
        if let Event::BackgroundAgentChanged(row) = event {
            assert_eq!(row.id, bg_id);
            assert_eq!(row.cwd, launch.project.display().to_string());
            assert_eq!(row.agent.source, StateSource::SessionFile);
            states.push(row.agent.state);
        }
    }
    assert!(states.contains(&AgentState::Busy), "its turn ran first: {states:?}");
    let overview = fugue_cli(&daemon, &["overview", "--json"]);
    let row = overview
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["origin"] == "claude_background"))
        .cloned()
        .unwrap_or_else(|| panic!("no background row: {overview}"));
    assert_eq!(row["background"]["id"], bg_id.as_str());
    assert_eq!(row["background"]["target"], format!("bg:{bg_id}"));
    assert_eq!(row["pane"], Value::Null);
    assert_eq!(row["agent"]["state"], "waiting_for_permission");
    assert_eq!(row["needs_you"], true);

    // Opened in a pane by `fugue attach bg:ID`, as a person types it.
    let tmux = Tmux::start(daemon.dir.path(), 120, 40);
    tmux.type_line(
        "main",
        &format!(
            "{} --socket {} attach bg:{bg_id}",
            bin("fugue").display(),
            daemon.socket.display()
        ),
    );
    let opened = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            match events.recv().await {
                Some(Event::PaneCreated(pane)) if pane.session_name == "bg" => return pane,
                Some(_) => {}
                None => panic!("the events ended"),
            }
        }
    })
    .await
    .expect("a pane in session bg");
    assert_eq!(
        opened.command.get(1..),
        Some(&["attach".to_string(), bg_id.clone()][..])
    );
    let attached = opened.id.to_string();
    wait_agent_state(&client, &attached, AgentState::WaitingForPermission).await;
    let asked = client.agent_status(&attached).await.expect("status");
    let prompt_id = asked.prompt_id.clone().expect("a prompt id");
    client
        .answer_permission(&attached, &prompt_id, fugue_client::protocol::PermissionAnswer::Approve)
        .await
        .expect("approve");
    // The background session finishes its turn: its row goes idle.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
    loop {
        let event = tokio::time::timeout_at(deadline, events.recv())
            .await
            .expect("the background session never went idle")
            .expect("events");
        if let Event::BackgroundAgentChanged(row) = event {
            if row.agent.state == AgentState::Idle {
                break;
            }
        }
    }
    assert!(launch.project.join("bg.txt").exists(), "the approved command ran");
    // Claude Code's service runs on after the session (it has the
    // launch's HOME): stop it.
    end_processes_with_home(&launch.home);
}

macro_rules! offline {
    ($name:ident, $body:expr) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            fugue_tests::require!(
                "unshare",
                "nsenter",
                "ip",
                "tests/agents/node_modules/.fugue-installed-lock.json"
            );
            $body.await;
        }
    };
}

offline!(claude_code_is_limited_by_a_429, is_limited_by_a_429(Cli::Claude));
offline!(codex_is_limited_by_a_429, is_limited_by_a_429(Cli::Codex));
offline!(gemini_cli_is_limited_by_a_429, is_limited_by_a_429(Cli::Gemini));
offline!(codex_resumes_after_its_limit_resets, codex_resumes_after_its_limit());
offline!(
    codex_resume_after_a_limit_waits_for_a_person_typing,
    codex_resume_waits_for_a_person_typing()
);
offline!(
    claude_background_session_in_every_view,
    background_session_in_every_view()
);
