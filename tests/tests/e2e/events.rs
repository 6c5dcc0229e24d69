//! Pushed events: a subscriber sees the session and pane lifecycle as it happens,
//! and events never take the place of replies.

use fugue_client::protocol::{Event, SpawnSpec};
use fugue_tests::{sh_spec, wait_for_text, Daemon, DEADLINE};
use std::time::Duration;

#[tokio::test]
async fn a_subscriber_sees_the_lifecycle_in_order() {
    let daemon = Daemon::start();
    let watcher = daemon.client().await;
    let mut events = watcher.subscribe().await.unwrap();
    let actor = daemon.client().await;

    let session = actor.create_session("ev", None, vec![]).await.unwrap();
    let mut spec = SpawnSpec::new("ev");
    spec.command = Some("true".into());
    spec.shell = false;
    let pane = actor.create_pane(spec).await.unwrap();
    actor.wait_for_exit(&pane.id.to_string(), Some(DEADLINE)).await.unwrap();
    let mut seen = Vec::new();
    let mut receive = async |seen: &mut Vec<Event>, count: usize| {
        while seen.len() < count {
            let event = tokio::time::timeout(DEADLINE, events.recv())
                .await
                .expect("an event")
                .expect("stream open");
            seen.push(event);
        }
    };
    // The exit is reported by the session's actor, the rename by the supervisor:
    // two actors, so the test takes the exit's event before it renames.
    receive(&mut seen, 3).await;
    actor.rename_session("ev", "ev2").await.unwrap();
    actor.destroy_session("ev2").await.unwrap();
    // Requests on the subscribed connection still get their replies.
    assert!(watcher.list_sessions().await.unwrap().is_empty());
    receive(&mut seen, 6).await;
    assert!(matches!(&seen[0], Event::SessionCreated(s) if s.id == session.id));
    assert!(matches!(&seen[1], Event::PaneCreated(p) if p.id == pane.id));
    assert!(
        matches!(&seen[2], Event::PaneExited(p) if p.id == pane.id && p.exit.unwrap().code == Some(0)),
        "{seen:?}"
    );
    assert!(
        matches!(&seen[3], Event::SessionRenamed { name, previous_name, .. } if name == "ev2" && previous_name == "ev")
    );
    assert!(matches!(&seen[4], Event::PaneRemoved { id, .. } if *id == pane.id));
    assert!(matches!(&seen[5], Event::SessionDestroyed { id, .. } if *id == session.id));
    assert!(
        tokio::time::timeout(Duration::from_millis(100), events.recv())
            .await
            .is_err(),
        "no stray events"
    );
    assert!(watcher.subscribe().await.is_err(), "one subscription per connection");
}

#[test]
fn wait_timeout_has_its_own_exit_status() {
    let daemon = Daemon::start();
    daemon.cli(&["new-session", "dev"]).ok();
    let pane = daemon.cli(&["run", "-s", "dev", "--no-shell", "--", "cat"]).ok();
    let out = daemon.cli(&["wait", &pane, "--timeout", "0.2"]);
    assert_eq!(out.status.code(), Some(124));
    assert!(
        out.stderr.contains("timed out after 0.2s waiting for pane"),
        "{}",
        out.stderr
    );
    // With a condition: which one held; 124 on timeout, 1 when the process exits first.
    let out = daemon.cli(&["wait", &pane, "--pattern", "never", "--timeout", "0.2"]);
    assert_eq!(out.status.code(), Some(124), "{}", out.stderr);
    daemon.cli(&["send-keys", &pane, "r", "e", "a", "d", "y", "Enter"]).ok();
    let out = daemon
        .cli(&["wait", &pane, "--pattern", "^rea.y$", "--timeout", "10"])
        .ok();
    assert!(out.starts_with("pattern after "), "{out}");
    assert!(out.trim_end().ends_with(": ready"), "{out}");
    let quick = daemon.cli(&["run", "-s", "dev", "--no-shell", "--", "true"]).ok();
    let out = daemon.cli(&[
        "wait",
        &quick,
        "--pattern",
        "never",
        "--idle",
        "60000",
        "--timeout",
        "10",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", out.stderr);
    assert!(out.stderr.contains("ended the wait with exit"), "{}", out.stderr);
    let err = daemon.cli(&["wait", &pane, "--needs", "sleep"]).err();
    assert!(err.contains("unknown need 'sleep'"), "{err}");
    let err = daemon.cli(&["wait", &pane, "--timeout=-1"]).err();
    assert!(err.contains("--timeout must be a number of seconds"), "{err}");
    // Usage errors are one line too.
    let err = daemon.cli(&["wait", &pane, "--timeout", "-1"]).err();
    assert_eq!(err, "fugue: unexpected argument '-1' found; see fugue --help");
    let err = daemon.cli(&["frobnicate"]).err();
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// `fugue events` prints lifecycle events as they happen, whoever causes them:
/// a line each, or one JSON object per line with --json (what fugue-web's events
/// socket sends), flushed at once so a pipe reader sees each without waiting.
#[test]
fn fugue_events_prints_lifecycle_events_as_lines_or_json() {
    let daemon = Daemon::start();
    daemon.cli(&["ls"]).ok();
    for json in [false, true] {
        let (mut child, lines) = fugue_events(&daemon, json);
        // Subscribed once its first event arrives: create sessions until one does.
        let session = format!("ev{}", json as u8);
        let mut seen = Vec::new();
        let deadline = std::time::Instant::now() + DEADLINE;
        let mut made = 0;
        while !seen.iter().any(|l: &String| l.contains(&session)) {
            assert!(std::time::Instant::now() < deadline, "no event line: {seen:?}");
            daemon.cli(&["new-session", &format!("{session}-{made}")]).ok();
            made += 1;
            if let Ok(line) = lines.recv_timeout(Duration::from_millis(200)) {
                seen.push(line);
            }
        }
        let pane = daemon
            .cli(&[
                "run",
                "-s",
                &format!("{session}-0"),
                "--no-shell",
                "--",
                "sh",
                "-c",
                "exit 3",
            ])
            .ok();
        let want = |line: &str| match json {
            false => line.starts_with("pane_exited ") && line.contains("exited with code 3"),
            true => line.contains("\"type\":\"pane_exited\"") && line.contains(&pane),
        };
        while !seen.iter().any(|l| want(l)) {
            let line = lines
                .recv_timeout(DEADLINE)
                .unwrap_or_else(|_| panic!("no pane_exited: {seen:?}"));
            seen.push(line);
        }
        if json {
            for line in &seen {
                let value: serde_json::Value = serde_json::from_str(line).expect("one JSON object per line");
                assert!(value["type"].is_string(), "{line}");
            }
        } else {
            assert!(seen.iter().any(|l| l.starts_with("session_created ")), "{seen:?}");
            assert!(seen.iter().any(|l| l.starts_with("pane_created ")), "{seen:?}");
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// An agent CLI's state changes are pushed as they happen, in order, from
/// `starting` to `exited` (fake-agent under the name `claude`, so the daemon
/// watches it as it would the real one), and `fugue events --json` prints them.
#[tokio::test]
async fn agent_state_changes_are_pushed_in_order() {
    use fugue_client::protocol::AgentState;
    let daemon = Daemon::start();
    let claude = daemon.fake_claude();
    let (mut cli, lines) = fugue_events(&daemon, true);
    let watcher = daemon.client().await;
    let mut events = watcher.subscribe().await.unwrap();
    let actor = daemon.client().await;
    let session = until_printing(&actor, "agents", &lines).await;

    let mut spec = SpawnSpec::new(session);
    spec.command = Some(claude);
    spec.args = vec!["first prompt".into()];
    spec.shell = false;
    let pane = actor.create_pane(spec).await.unwrap();
    let id = pane.id.to_string();
    let mut states = Vec::new();
    let mut next_state = async |states: &mut Vec<AgentState>| loop {
        let event = tokio::time::timeout(DEADLINE, events.recv())
            .await
            .unwrap_or_else(|_| panic!("no agent state after {states:?}"))
            .expect("subscribed");
        if let Event::AgentStateChanged { pane: p, agent, .. } = event {
            if p == pane.id {
                states.push(agent.state);
                return agent.state;
            }
        }
    };
    while next_state(&mut states).await != AgentState::WaitingForPermission {}
    actor.send_keys(&id, &["Enter".into()]).await.unwrap();
    while next_state(&mut states).await != AgentState::Idle {}
    actor.send_keys(&id, &["C-c".into()]).await.unwrap();
    while next_state(&mut states).await != AgentState::Exited {}
    // Started with a prompt: never idle before its first turn showed. The
    // first push is `starting`, or `busy` when fake-agent (which draws its turn
    // at once) drew before the watcher's first look (seen under CI load).
    assert!(
        matches!(states[0], AgentState::Starting | AgentState::Busy),
        "{states:?}"
    );
    let waiting = states
        .iter()
        .position(|s| *s == AgentState::WaitingForPermission)
        .unwrap();
    assert!(!states[..waiting].contains(&AgentState::Idle), "{states:?}");
    assert!(states[..waiting].contains(&AgentState::Busy), "{states:?}");

    // The same changes, as JSON lines of `fugue events`.
    let mut printed = Vec::new();
    while !printed
        .iter()
        .any(|v: &serde_json::Value| v["agent"]["state"] == "exited")
    {
        let line = lines
            .recv_timeout(DEADLINE)
            .unwrap_or_else(|_| panic!("fugue events printed no more: {printed:?}"));
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        if value["type"] == "agent_state" && value["pane_id"] == id.as_str() {
            assert_eq!(value["agent"]["agent"], "claude", "{value}");
            printed.push(value);
        }
    }
    let printed: Vec<&str> = printed.iter().filter_map(|v| v["agent"]["state"].as_str()).collect();
    let expected: Vec<&str> = states.iter().map(|s| s.as_str()).collect();
    assert_eq!(printed, expected);
    let _ = cli.kill();
    let _ = cli.wait();
}

/// A restarted agent pane's new process is a new agent: `starting` again, not the
/// old process's last state.
#[tokio::test]
async fn a_restarted_agent_starts_again() {
    use fugue_client::protocol::{AgentState, RestartPolicy};
    let daemon = Daemon::start();
    let claude = daemon.fake_claude();
    let watcher = daemon.client().await;
    let mut events = watcher.subscribe().await.unwrap();
    let actor = daemon.client().await;
    actor.create_session("again", None, vec![]).await.unwrap();
    let mut spec = SpawnSpec::new("again");
    spec.command = Some(claude);
    spec.args = vec!["first prompt".into()];
    spec.shell = false;
    spec.restart = RestartPolicy::Always;
    let pane = actor.create_pane(spec).await.unwrap();
    let id = pane.id.to_string();
    let mut states = Vec::new();
    let mut next_state = async |states: &mut Vec<AgentState>| loop {
        let event = tokio::time::timeout(DEADLINE, events.recv())
            .await
            .unwrap_or_else(|_| panic!("no agent state after {states:?}"))
            .expect("subscribed");
        if let Event::AgentStateChanged { pane: p, agent, .. } = event {
            if p == pane.id {
                states.push(agent.state);
                return agent.state;
            }
        }
    };
    while next_state(&mut states).await != AgentState::WaitingForPermission {}
    actor.send_keys(&id, &["C-c".into()]).await.unwrap();
    while next_state(&mut states).await != AgentState::Exited {}
    // Restarted after its backoff: the new process is starting (or already busy
    // with its first prompt, when its first frame shows the busy marker), never
    // waiting on the old process's prompt; then it asks again.
    let first = next_state(&mut states).await;
    assert!(matches!(first, AgentState::Starting | AgentState::Busy), "{states:?}");
    while next_state(&mut states).await != AgentState::WaitingForPermission {}
    actor.destroy_session("again").await.unwrap();
}

/// A turn that ends while nobody watches the pane leaves the agent needing a
/// person (`finished_unseen`) until someone attaches to it or types into it.
#[tokio::test]
async fn a_turn_finished_unwatched_is_unseen_until_someone_looks() {
    use fugue_client::protocol::{AgentState, Attention};
    let daemon = Daemon::start();
    let claude = daemon.fake_claude();
    let watcher = daemon.client().await;
    let mut events = watcher.subscribe().await.unwrap();
    let actor = daemon.client().await;
    actor.create_session("unseen", None, vec![]).await.unwrap();
    let mut spec = SpawnSpec::new("unseen");
    spec.command = Some(claude);
    spec.args = vec!["first prompt".into()];
    spec.shell = false;
    let pane = actor.create_pane(spec).await.unwrap();
    let id = pane.id.to_string();
    let mut next = async || loop {
        let event = tokio::time::timeout(DEADLINE, events.recv())
            .await
            .expect("an agent event in time")
            .expect("subscribed");
        if let Event::AgentStateChanged { pane: p, agent, .. } = event {
            if p == pane.id {
                return (agent.state, agent.needs);
            }
        }
    };
    while next().await.0 != AgentState::WaitingForPermission {}
    // Approved by an orchestrator through send-keys: a look at the pane.
    actor.send_keys(&id, &["Enter".into()]).await.unwrap();
    let mut seen = next().await;
    while seen.0 != AgentState::Idle {
        seen = next().await;
    }
    // The turn ended after that look, with nobody attached.
    while seen.1 != Attention::FinishedUnseen {
        seen = next().await;
        assert_eq!(seen.0, AgentState::Idle);
    }
    let status = actor.agent_status(&id).await.unwrap();
    assert_eq!(status.needs, Attention::FinishedUnseen);
    // A person attaches (read-only is enough): seen.
    let person = daemon.client().await;
    person.attach(&id, true, None).await.unwrap();
    assert_eq!(next().await, (AgentState::Idle, Attention::Nothing));
    assert_eq!(actor.agent_status(&id).await.unwrap().needs, Attention::Nothing);
}

/// What a program asks its terminal to notify (OSC 9, OSC 777, OSC 99) becomes
/// an event, in `fugue events` too; a terminal title (OSC 0) and a progress
/// report (OSC 9;4) do not.
#[tokio::test]
async fn notifications_a_program_prints_are_events() {
    let daemon = Daemon::start();
    let (mut cli, lines) = fugue_events(&daemon, false);
    let watcher = daemon.client().await;
    let mut events = watcher.subscribe().await.unwrap();
    let actor = daemon.client().await;
    let session = until_printing(&actor, "n", &lines).await;
    let script = r"printf '\033]0;a title\007\033]9;4;1;50\007\033]9;Build done\007'; \
printf '\033]777;notify;Claude;Needs your approval\033\\'; \
printf '\033]99;i=1:d=0;Kitty title\033\\\033]99;i=1:p=body;Kitty body\033\\'; sleep 30";
    let pane = actor.create_pane(sh_spec(&session, script)).await.unwrap();
    let mut got = Vec::new();
    while got.len() < 3 {
        let event = tokio::time::timeout(DEADLINE, events.recv())
            .await
            .unwrap_or_else(|_| panic!("only {got:?}"))
            .expect("subscribed");
        if let Event::Notification {
            pane: p, title, body, ..
        } = event
        {
            assert_eq!(p, pane.id);
            got.push((title, body));
        }
    }
    let pairs: Vec<(&str, &str)> = got.iter().map(|(t, b)| (t.as_str(), b.as_str())).collect();
    assert_eq!(
        pairs,
        [
            ("", "Build done"),
            ("Claude", "Needs your approval"),
            ("Kitty title", "Kitty body")
        ]
    );
    let short = &pane.id.to_string()[..8];
    let expected = format!("notification {short} Claude: Needs your approval");
    let end = std::time::Instant::now() + DEADLINE;
    let mut printed = Vec::new();
    while !printed.contains(&expected) {
        let left = end.saturating_duration_since(std::time::Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => printed.push(line),
            Err(_) => panic!("fugue events did not print {expected:?} within {DEADLINE:?}: {printed:?}"),
        }
    }
    let _ = cli.kill();
    let _ = cli.wait();
}

/// `fugue events` (with `--json` if asked) on `daemon`, its lines as they come.
fn fugue_events(daemon: &Daemon, json: bool) -> (std::process::Child, std::sync::mpsc::Receiver<String>) {
    use std::io::BufRead;
    let mut cli = std::process::Command::new(fugue_tests::bin("fugue"));
    cli.arg("--socket").arg(&daemon.socket);
    if json {
        cli.arg("--json");
    }
    let mut cli = cli
        .arg("events")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = cli.stdout.take().unwrap();
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    (cli, lines)
}

/// Creates sessions `{prefix}1`, `{prefix}2`, ... until `fugue events` prints
/// (then it is subscribed); returns the last one's name.
async fn until_printing(
    actor: &fugue_client::Client,
    prefix: &str,
    lines: &std::sync::mpsc::Receiver<String>,
) -> String {
    for made in 1..50 {
        let name = format!("{prefix}{made}");
        actor.create_session(&name, None, vec![]).await.unwrap();
        if lines.recv_timeout(Duration::from_millis(200)).is_ok() {
            return name;
        }
    }
    panic!("fugue events printed nothing");
}

/// Two clients answer the same permission prompt at once (two people, or an
/// agent and a person): the daemon checks and sends in one step, so exactly one
/// answer is sent and the other is told it was already answered. An answer to a
/// prompt that is gone is refused, saying so, with nothing sent. Through the CLI
/// (`fugue agent`, `fugue approve`, `fugue deny`).
#[tokio::test]
async fn one_prompt_takes_one_answer_from_two_clients() {
    let daemon = Daemon::start();
    let claude = daemon.fake_claude();
    let client = daemon.client().await;
    client.create_session("answers", None, vec![]).await.unwrap();
    let mut spec = SpawnSpec::new("answers");
    spec.command = Some(claude);
    spec.args = vec!["build it".into()];
    spec.shell = false;
    // Without fugue's hook settings, which fake-agent would take for its prompt.
    spec.env = vec![fugue_client::protocol::EnvVar {
        name: "FUGUE_AGENT_HOOKS".into(),
        value: "0".into(),
    }];
    let pane = client.create_pane(spec).await.unwrap().id.to_string();
    // `fugue wait` for the agent to need a person (as a script would).
    let waited = daemon
        .cli(&[
            "--json",
            "wait",
            &pane,
            "--needs",
            "question|permission",
            "--timeout",
            "30",
        ])
        .json();
    assert_eq!(waited["condition"], "agent_needs", "{waited}");
    let status = daemon.cli(&["--json", "agent", &pane]).json();
    assert_eq!(status["state"], "waiting_for_permission", "{status}");
    let prompt = status["prompt_id"].as_str().expect("a prompt id").to_string();
    let text = daemon.cli(&["agent", &pane]).ok();
    assert!(text.contains(&format!("prompt_id  {prompt}")), "{text}");

    let answers: Vec<serde_json::Value> = std::thread::scope(|scope| {
        let both = [0, 1].map(|_| scope.spawn(|| daemon.cli(&["--json", "approve", &pane, &prompt]).json()));
        both.map(|answer| answer.join().unwrap()).to_vec()
    });
    let sent = answers.iter().filter(|a| a["already"] == false).count();
    assert_eq!(sent, 1, "{answers:?}");
    assert!(answers.iter().all(|a| a["answer"] == "approved"), "{answers:?}");
    wait_for_text(&client, &pane, "approved: build it").await;
    // Later, again: nothing is sent, in words too.
    assert_eq!(
        daemon.cli(&["approve", &pane, &prompt]).ok().trim(),
        "already approved: nothing sent"
    );
    // A deny of the same prompt says how it was answered.
    assert_eq!(
        daemon.cli(&["--json", "deny", &pane, &prompt]).json()["answer"],
        "approved"
    );
    // A prompt id that is not on screen: refused with its code, nothing sent.
    let refused = daemon.cli(&["deny", &pane, "0123456789abcdef"]).err();
    assert!(refused.contains("not waiting for permission"), "{refused}");
    let text = client
        .read_output(
            &pane,
            fugue_client::protocol::ReadMode::Text {
                lines: 100,
                since: None,
            },
        )
        .await
        .unwrap()
        .lines
        .join("\n");
    assert_eq!(text.matches("approved: build it").count(), 1, "{text}");
    assert!(!text.contains("denied"), "{text}");
}
