//! Pushed events: a subscriber sees the session and pane lifecycle as it happens,
//! and events never take the place of replies.

use fugue_client::protocol::{Event, SpawnSpec};
use fugue_tests::{Daemon, DEADLINE};
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
    use std::io::BufRead;
    let daemon = Daemon::start();
    daemon.cli(&["ls"]).ok();
    for json in [false, true] {
        let mut command = std::process::Command::new(fugue_tests::bin("fugue"));
        command.arg("--socket").arg(&daemon.socket);
        if json {
            command.arg("--json");
        }
        let mut child = command
            .arg("events")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
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
    use std::io::BufRead;
    let daemon = Daemon::start();
    let bin_dir = daemon.dir.path().join("agent-bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    std::os::unix::fs::symlink(fugue_tests::bin("fake-agent"), bin_dir.join("claude")).unwrap();
    let mut cli = std::process::Command::new(fugue_tests::bin("fugue"))
        .arg("--socket")
        .arg(&daemon.socket)
        .args(["--json", "events"])
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
    let watcher = daemon.client().await;
    let mut events = watcher.subscribe().await.unwrap();
    let actor = daemon.client().await;
    // `fugue events` is subscribed once it prints: create sessions until it does.
    let mut made = 0;
    loop {
        made += 1;
        actor
            .create_session(&format!("agents{made}"), None, vec![])
            .await
            .unwrap();
        if lines.recv_timeout(Duration::from_millis(200)).is_ok() {
            break;
        }
        assert!(made < 50, "fugue events printed nothing");
    }

    let mut spec = SpawnSpec::new(format!("agents{made}"));
    spec.command = Some(bin_dir.join("claude").display().to_string());
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
    // Started with a prompt: never idle before its first turn showed.
    assert_eq!(states[0], AgentState::Starting, "{states:?}");
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
    let bin_dir = daemon.dir.path().join("agent-bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    std::os::unix::fs::symlink(fugue_tests::bin("fake-agent"), bin_dir.join("claude")).unwrap();
    let watcher = daemon.client().await;
    let mut events = watcher.subscribe().await.unwrap();
    let actor = daemon.client().await;
    actor.create_session("again", None, vec![]).await.unwrap();
    let mut spec = SpawnSpec::new("again");
    spec.command = Some(bin_dir.join("claude").display().to_string());
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
    // Restarted after its backoff: the new process is starting, then asks again.
    assert_eq!(next_state(&mut states).await, AgentState::Starting, "{states:?}");
    while next_state(&mut states).await != AgentState::WaitingForPermission {}
    actor.destroy_session("again").await.unwrap();
}
