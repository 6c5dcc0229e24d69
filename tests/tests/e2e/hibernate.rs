//! Hibernation with the fake Claude Code (the real CLIs: tests/agents.rs): an
//! idle agent is put to rest, its process ends and its pane stays readable and
//! `hibernated` everywhere; a prompt resumes it in the same pane on its recorded
//! session and the turn runs; `fugue wake` does the same; an agent that is busy,
//! waits for a person or holds a draft is refused, saying why.

use fugue_client::protocol::{AgentState, Event};
use fugue_tests::{bin, Daemon, Tmux, DEADLINE};

fn agent_state(daemon: &Daemon, pane: &str) -> String {
    daemon.cli(&["--json", "agent", pane]).json()["state"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn wait_agent(daemon: &Daemon, pane: &str, state: &str) {
    daemon
        .cli(&["wait", pane, "--agent-state", state, "--timeout", "30"])
        .ok();
}

fn cmdline(pid: u64) -> String {
    String::from_utf8_lossy(&std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default()).replace('\0', " ")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_agent_hibernates_and_a_prompt_resumes_it_in_place() {
    let daemon = Daemon::start();
    let events_client = daemon.client().await;
    let mut events = events_client.subscribe().await.unwrap();
    daemon.cli(&["new-session", "rest"]).ok();
    let pane = daemon.run_fake_claude_keeping_status("rest", &["FAKE_AGENT_WORK_MS=3000"]);
    wait_agent(&daemon, &pane, "idle");
    let first = daemon.cli(&["--json", "status", &pane]).json();
    let session = daemon.agent_session_id(&pane);

    // A draft in its input box: refused, nothing ends.
    daemon.cli(&["write", &pane, "hello"]).ok();
    daemon.wait_screen(&pane, "hello");
    // (`fugue agent` looks afresh: the draft on the screen is read now.)
    let drafted = daemon.cli(&["--json", "agent", &pane]).json();
    assert!(drafted["draft"].as_str().is_some(), "{drafted}");
    let refused = daemon.cli(&["hibernate", &pane]).err();
    assert!(refused.contains("draft"), "{refused}");
    // Busy with a turn: refused.
    daemon.cli(&["send-keys", &pane, "Enter"]).ok();
    wait_agent(&daemon, &pane, "busy");
    let refused = daemon.cli(&["hibernate", &pane]).err();
    assert!(refused.contains("busy"), "{refused}");
    // Waiting for a person: refused.
    wait_agent(&daemon, &pane, "waiting_for_permission");
    let refused = daemon.cli(&["hibernate", &pane]).err();
    assert!(refused.contains("waits for a person"), "{refused}");
    daemon.cli(&["send-keys", &pane, "Enter"]).ok();
    wait_agent(&daemon, &pane, "idle");
    assert_eq!(
        daemon.cli(&["--json", "status", &pane]).json()["pid"],
        first["pid"],
        "a refusal ended nothing"
    );

    // At rest: it hibernates; the process ends, the pane and its screen stay.
    let slept = daemon.cli(&["--json", "hibernate", &pane]).json();
    assert_eq!(slept["status"], "hibernated", "{slept}");
    let pid = first["pid"].as_u64().unwrap();
    fugue_tests::procfs::wait_gone(pid as u32, "the agent's process to end");
    assert_eq!(agent_state(&daemon, &pane), "hibernated");
    assert!(daemon.cli(&["panes", "rest"]).ok().contains("hibernated"));
    assert!(daemon.cli(&["capture", &pane]).ok().contains("approved: hello"));
    let overview = daemon.cli(&["--json", "overview"]).json();
    assert_eq!(overview[0]["agent"]["state"], "hibernated", "{overview}");
    let pushed = tokio::time::timeout(DEADLINE, async {
        while let Some(event) = events.recv().await {
            if let Event::AgentStateChanged { agent, .. } = event {
                if agent.state == AgentState::Hibernated {
                    return;
                }
            }
        }
    })
    .await;
    assert!(pushed.is_ok(), "no hibernated event was pushed");
    // It counts against no limit and does not expire: hibernated again is a no-op.
    assert_eq!(
        daemon.cli(&["--json", "hibernate", &pane]).json()["status"],
        "hibernated"
    );

    // A prompt wakes it in the same pane on its session, and the turn runs.
    let receipt = daemon.cli(&["--json", "prompt", &pane, "after the rest"]).json();
    assert_eq!(receipt["went_busy"], true, "{receipt}");
    let woken = daemon.cli(&["--json", "status", &pane]).json();
    assert_eq!(woken["status"], "running");
    assert_eq!(woken["index"], first["index"]);
    let new_pid = woken["pid"].as_u64().unwrap();
    assert_ne!(new_pid, pid);
    let line = cmdline(new_pid);
    assert!(
        line.contains(&format!("--resume {session}")),
        "not resumed on its session: {line}"
    );
    wait_agent(&daemon, &pane, "waiting_for_permission");
    daemon.cli(&["send-keys", &pane, "Enter"]).ok();
    wait_agent(&daemon, &pane, "idle");
    assert!(daemon
        .cli(&["capture", &pane])
        .ok()
        .contains("approved: after the rest"));

    // `fugue wake` after another rest: ready when it returns.
    daemon.cli(&["hibernate", &pane]).ok();
    let awake = daemon.cli(&["--json", "wake", &pane]).json();
    assert_eq!(awake["status"], "running", "{awake}");
    assert_eq!(agent_state(&daemon, &pane), "idle");
    assert!(daemon
        .cli(&["capture", &pane])
        .ok()
        .contains(&format!("resumed session {session}")));
    // A shell is no agent: refused.
    let shell = daemon
        .cli(&["run", "-s", "rest", "--no-shell", "--", "sleep", "60"])
        .ok();
    let refused = daemon.cli(&["hibernate", shell.trim()]).err();
    assert!(refused.contains("no agent CLI"), "{refused}");
}

/// `hibernate_after` in the config: an idle agent goes to rest by itself once
/// its idle spell lasts that long, and a prompt wakes it as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_policy_puts_an_idle_agent_to_rest() {
    let config_dir = tempfile::tempdir().unwrap();
    let config_file = config_dir.path().join("config.toml");
    std::fs::write(&config_file, "[agents.claude]\nhibernate_after = \"2s\"\n").unwrap();
    let daemon = Daemon::start_with(&["--config", config_file.to_str().unwrap()]);
    daemon.cli(&["new-session", "rest"]).ok();
    let pane = daemon.run_fake_claude_keeping_status("rest", &[]);
    // A person attached: the agent is not put to rest under them.
    let person = daemon.client().await;
    person.attach(&pane, true, None).await.unwrap();
    daemon
        .until_logged_async("not hibernated by policy: a person is attached")
        .await;
    assert_eq!(daemon.cli(&["--json", "status", &pane]).json()["status"], "running");
    assert_eq!(agent_state(&daemon, &pane), "idle");
    person.detach(&pane).await.unwrap();
    let started = std::time::Instant::now();
    daemon.until_event_blocking("the policy to hibernate the idle agent", DEADLINE, || {
        let info = daemon.cli(&["--json", "status", &pane]).json();
        (info["status"] == "hibernated").then_some(())
    });
    // Looked at again a policy period after it passed over the person.
    assert!(
        started.elapsed() >= std::time::Duration::from_millis(500),
        "put to rest at once after the detach"
    );
    // The agent reads hibernated from the moment the pane does (before, its
    // tracker said `idle` until the program had ended: a loaded CI run read
    // it in between).
    assert_eq!(agent_state(&daemon, &pane), "hibernated");
    let receipt = daemon.cli(&["--json", "prompt", &pane, "after the policy"]).json();
    assert_eq!(receipt["went_busy"], true, "{receipt}");
}

/// A person attaching to a hibernated agent wakes it, and what they type while
/// it wakes (seconds for a CLI loading its conversation) reaches the agent once
/// it is ready: not echoed by their own terminal meanwhile, and Ctrl-C
/// included, which before ended the attach itself (its terminal was not yet
/// in raw mode).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_typed_while_an_attach_wakes_the_agent_reach_it() {
    fugue_tests::require!("tmux");
    let daemon = Daemon::start();
    daemon.cli(&["new-session", "rest"]).ok();
    let pane = daemon.run_fake_claude_keeping_status("rest", &["FAKE_AGENT_RESUME_MS=3000", "FAKE_AGENT_NO_SIGNALS=1"]);
    wait_agent(&daemon, &pane, "idle");
    // A turn, so that there is a conversation for the wake to resume.
    daemon.run_a_turn(&pane, "hello");
    daemon.cli(&["hibernate", &pane]).ok();

    let tmux = Tmux::start(daemon.dir.path(), 100, 30);
    let attach = format!(
        "{} --socket {} attach {pane}",
        bin("fugue").display(),
        daemon.socket.display()
    );
    tmux.type_line("main", &attach);
    tmux.wait_for("main", "waking the agent");
    // Typed while the agent loads its conversation: held, not echoed here, and
    // Ctrl-C is a key for the agent (it clears the draft), not a signal that
    // ends the attach.
    tmux.run(&["send-keys", "-t", "main", "-l", "typed while waking"]);
    tmux.send_keys("main", &["C-c"]);
    tmux.run(&["send-keys", "-t", "main", "-l", "kept"]);
    let screen = tmux.capture("main");
    assert!(
        !screen.contains("typed while waking"),
        "echoed by the person's terminal during the wake:\n{screen}"
    );
    assert!(
        !daemon.cli(&["capture", &pane]).ok().contains("resumed session"),
        "the keys were typed after the wake, not during it"
    );
    tmux.wait_for("main", "resumed session");
    daemon.wait_screen(&pane, "kept");
    // (`fugue agent` looks afresh at the screen that shows it.)
    let agent = daemon.cli(&["--json", "agent", &pane]).json();
    assert_eq!(
        agent["draft"],
        "kept",
        "the held keys did not reach the agent as typed: {agent}\nthe person's terminal:\n{}",
        tmux.capture("main")
    );
    // The attach goes on: what is typed now reaches the agent too.
    tmux.run(&["send-keys", "-t", "main", "-l", " and after"]);
    tmux.wait_for("main", "kept and after");
    tmux.send_keys("main", &["C-\\"]);
    tmux.wait_for("main", "[detached from pane");
}

/// An agent that never ran a turn has no conversation to resume: it
/// hibernates, and a wake starts it afresh in the same pane with the pane's
/// own command, ready, the reply saying so (a resume would have ended it:
/// "No conversation found"). Once a turn has run, a wake resumes again.
#[test]
fn an_agent_without_a_turn_wakes_afresh_and_one_with_a_turn_resumes() {
    let daemon = Daemon::start();
    daemon.cli(&["new-session", "rest"]).ok();
    let pane = daemon.run_fake_claude_keeping_status("rest", &[]);
    wait_agent(&daemon, &pane, "idle");
    let first = daemon.agent_session_id(&pane);
    let status = daemon.cli(&["--json", "status", &pane]).json();
    assert_eq!(status["agent_session"]["conversation"], false, "{status}");
    daemon.cli(&["hibernate", &pane]).ok();
    let woken = daemon.cli(&["--json", "wake", &pane]).json();
    let why = woken["started_fresh"].as_str().unwrap_or_default();
    assert!(why.contains("no turn ran") && why.contains(&first), "{woken}");
    assert_eq!(
        (woken["id"].as_str(), woken["status"].as_str()),
        (Some(pane.as_str()), Some("running"))
    );
    assert!(
        !cmdline(woken["pid"].as_u64().unwrap()).contains(&first),
        "resumed the empty session"
    );
    assert_eq!(agent_state(&daemon, &pane), "idle");
    let said = daemon.cli(&["hibernate", &pane]);
    assert!(said.status.success(), "{}", said.stderr);
    let plain = daemon.cli(&["wake", &pane]).ok();
    assert!(plain.contains("started afresh: no turn ran"), "{plain}");

    // A turn: the session has a conversation now, and a wake resumes it.
    daemon.run_a_turn(&pane, "hello");
    let session = daemon.cli(&["--json", "status", &pane]).json()["agent_session"]["id"]
        .as_str()
        .expect("the session")
        .to_string();
    daemon.cli(&["hibernate", &pane]).ok();
    let woken = daemon.cli(&["--json", "wake", &pane]).json();
    assert!(woken["started_fresh"].is_null(), "{woken}");
    assert!(
        cmdline(woken["pid"].as_u64().unwrap()).contains(&session),
        "not resumed on {session}"
    );
}
