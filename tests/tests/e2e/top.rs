//! `fugue top` driven as a person would: inside tmux, keys in, screens out,
//! against a real daemon with panes in three sessions and fake-agent (drawn
//! like Claude Code) asking for permission.

use fugue_tests::{bin, Daemon, Tmux};

fn top_command(daemon: &Daemon, extra: &str) -> String {
    format!(
        "{} --socket {} top {extra}",
        bin("fugue").display(),
        daemon.socket.display()
    )
}

/// The row of `label` as top draws it (the selected row starts with "▶").
fn row<'a>(screen: &'a str, label: &str) -> Option<&'a str> {
    screen
        .lines()
        .find(|l| l.trim_start_matches(['▶', ' ']).starts_with(label))
}

#[test]
fn top_lists_every_session_and_answers_a_waiting_agent() {
    fugue_tests::require!("tmux");
    let daemon = Daemon::start();
    for session in ["alpha", "beta", "gamma"] {
        daemon.cli(&["new-session", session]).ok();
    }
    daemon.cli(&["run", "-s", "alpha", "--", "echo", "alpha-says-hi"]).ok();
    daemon
        .cli(&[
            "run",
            "-s",
            "beta",
            "--no-shell",
            "--",
            "sh",
            "-c",
            "echo beta-works; exec sleep 600",
        ])
        .ok();
    let agent = daemon.run_fake_claude("gamma");
    let tmux = Tmux::start(daemon.dir.path(), 160, 30);
    tmux.type_line("main", &top_command(&daemon, ""));
    let screen = tmux.wait_for("main", "gamma:0");
    for label in ["alpha:0", "beta:0"] {
        assert!(row(&screen, label).is_some(), "{label} missing:\n{screen}");
    }
    // Live: the agent at rest shows as idle, its last line as the program drew it.
    tmux.until("main", "gamma idle in top", |screen| {
        row(screen, "gamma:0")
            .filter(|r| r.contains("claude") && r.contains("idle"))
            .map(|_| ())
    });
    let screen = tmux.wait_for("main", "beta-works");
    assert!(screen.contains("0 need you"), "{screen}");
    // Selection starts on the first row (needs-first, then by session: alpha).
    assert!(row(&screen, "alpha:0").unwrap().starts_with('▶'), "{screen}");

    // The agent is given work and asks for permission: top shows it needs the
    // person, with no key pressed.
    let sent = daemon.cli(&["--json", "prompt", &agent, "ship it"]).json();
    assert_eq!(sent["outcome"], "started", "{sent}");
    let screen = tmux.wait_for("main", "1 need you");
    let gamma = row(&screen, "gamma:0").expect("gamma row");
    assert!(gamma.contains("PERMISSION"), "{screen}");
    // Needs-first: its row is now on top, the selection stayed on alpha.
    let first_row = screen.lines().nth(2).unwrap_or_default();
    assert!(first_row.contains("gamma:0"), "{screen}");
    assert!(row(&screen, "alpha:0").unwrap().starts_with('▶'), "{screen}");

    // "n" jumps to the pane that needs the person; "a" shows the prompt first.
    tmux.send_keys("main", &["n"]);
    tmux.until("main", "selection on gamma", |screen| {
        row(screen, "gamma:0").filter(|r| r.starts_with('▶')).map(|_| ())
    });
    tmux.send_keys("main", &["a"]);
    let screen = tmux.wait_for("main", "Approve gamma:0?");
    assert!(screen.contains("Do you want to proceed?"), "{screen}");
    assert!(screen.contains("y: approve"), "{screen}");
    // Nothing was sent yet: the agent still waits.
    let status = daemon.cli(&["--json", "agent", &agent]).json();
    assert_eq!(status["state"], "waiting_for_permission", "{status}");
    tmux.send_keys("main", &["y"]);
    tmux.wait_for("main", "approved");
    // The agent proceeds: fake-agent reports what it was allowed to do.
    daemon.wait_screen(&agent, "approved: ship it");
    // The permission is gone from top. The turn it allowed may end unseen (a
    // look that caught it busy makes it a turn nobody saw end: "finished", a
    // need of its own) or too fast to be seen running; either is right.
    tmux.until("main", "the permission answered in top", |screen| {
        row(screen, "gamma:0")
            .filter(|r| !r.contains("PERMISSION") && (screen.contains("0 need you") || r.contains("finished")))
            .map(|_| ())
    });

    // Enter attaches to the selected pane; the detach key comes back to top.
    tmux.send_keys("main", &["Enter"]);
    tmux.wait_for("main", "approved: ship it");
    tmux.send_keys("main", &["C-\\"]);
    tmux.wait_for("main", "fugue top");

    // "/" filters on any column; "q" quits back to the shell.
    tmux.send_keys("main", &["/"]);
    tmux.run(&["send-keys", "-t", "main", "-l", "beta"]);
    tmux.send_keys("main", &["Enter"]);
    let screen = tmux.until("main", "filtered to beta", |screen| {
        (row(screen, "alpha:0").is_none() && row(screen, "gamma:0").is_none()).then(|| screen.to_string())
    });
    assert!(row(&screen, "beta:0").is_some(), "{screen}");
    tmux.send_keys("main", &["q"]);
    tmux.until("main", "top quit", |screen| {
        (!screen.contains("fugue top ")).then_some(())
    });
}

#[test]
fn top_kills_after_confirming_and_starts_a_pane() {
    fugue_tests::require!("tmux");
    let daemon = Daemon::start();
    daemon.cli(&["new-session", "work"]).ok();
    let pane = daemon
        .cli(&["run", "-s", "work", "--no-shell", "--", "sleep", "600"])
        .ok();
    let tmux = Tmux::start(daemon.dir.path(), 140, 24);
    tmux.type_line("main", &top_command(&daemon, "work"));
    tmux.wait_for("main", "work:0");
    // x asks first; any other key cancels and nothing happens.
    tmux.send_keys("main", &["x"]);
    tmux.wait_for("main", "Kill work:0?");
    tmux.send_keys("main", &["n"]);
    tmux.wait_for("main", "cancelled");
    let status = daemon.cli(&["--json", "status", &pane]).json();
    assert_eq!(status["status"], "running", "{status}");
    tmux.send_keys("main", &["x"]);
    tmux.wait_for("main", "Kill work:0?");
    tmux.send_keys("main", &["y"]);
    tmux.until("main", "work:0 exited", |screen| {
        row(screen, "work:0").filter(|r| r.contains("exited")).map(|_| ())
    });
    // c starts a pane in the selected pane's session with the typed command.
    tmux.send_keys("main", &["c"]);
    tmux.wait_for("main", "Command for a new pane");
    tmux.run(&["send-keys", "-t", "main", "-l", "echo made-in-top"]);
    tmux.send_keys("main", &["Enter"]);
    tmux.wait_for("main", "started work:1");
    daemon.wait_text("work:1", "made-in-top");
    // A prompt for a pane with no agent CLI: refused, said in the status line.
    tmux.send_keys("main", &["a"]);
    tmux.wait_for("main", "no permission prompt to answer");
    tmux.send_keys("main", &["q"]);
}

#[tokio::test]
async fn top_shows_a_worktree_pane_s_diff() {
    fugue_tests::require!("tmux");
    let daemon = Daemon::start();
    let repo = crate::worktrees::repository(&daemon);
    daemon.cli(&["new", "w", "--cwd", repo.to_str().unwrap()]).ok();
    let script = "echo from-top > a.txt && echo top-done; exec sleep 600";
    let (pane, path, _) = crate::worktrees::run_in_worktree(&daemon, "topdiff", script);
    fugue_tests::wait_for_text(&daemon.client().await, &pane, "top-done").await;
    let tmux = Tmux::start(daemon.dir.path(), 120, 30);
    // The root the CLI made it under (XDG_STATE_HOME in the daemon's dir).
    let root = daemon.dir.path().join("state/fugue/worktrees");
    let command = format!("FUGUE_WORKTREE_ROOT={} {}", root.display(), top_command(&daemon, ""));
    tmux.type_line("main", &command);
    tmux.wait_for("main", "w:0");
    tmux.send_keys("main", &["D"]);
    let screen = tmux.wait_for("main", "+from-top");
    assert!(
        screen.contains("fugue/topdiff") && screen.contains("-hello"),
        "{screen}"
    );
    assert!(screen.contains("a.txt (modified)"), "{screen}");
    tmux.send_keys("main", &["q"]);
    let screen = tmux.wait_for("main", "D diff");
    assert!(row(&screen, "w:0").is_some(), "{screen}");

    // From the diff: a merge of uncommitted work is refused and said; a
    // discard asks what the worktree holds, then removes it.
    tmux.send_keys("main", &["D"]);
    tmux.wait_for("main", "m merge · x discard");
    tmux.send_keys("main", &["m"]);
    tmux.wait_for("main", "y: merge");
    tmux.send_keys("main", &["y"]);
    tmux.wait_for(
        "main",
        "uncommitted file(s) (a.txt); commit them first; nothing was merged",
    );
    tmux.send_keys("main", &["D"]);
    tmux.wait_for("main", "m merge · x discard");
    tmux.send_keys("main", &["x"]);
    let asked = tmux.wait_for("main", "y: discard");
    assert!(
        asked.contains("Discard w:0 · fugue/topdiff?") && asked.contains("1 changed file(s) (+1 -1)"),
        "{asked}"
    );
    tmux.send_keys("main", &["y"]);
    tmux.wait_for("main", "discarded worktree");
    assert!(!path.exists());
}

/// `h` puts the selected pane's idle agent to rest and `w` wakes it; a refusal
/// (a pane with no agent) is said in the status line.
#[test]
fn top_hibernates_and_wakes_an_idle_agent() {
    fugue_tests::require!("tmux");
    let daemon = Daemon::start();
    daemon.cli(&["new-session", "rest"]).ok();
    let pane = daemon.run_fake_claude_keeping_status("rest", &[]);
    daemon
        .cli(&["wait", &pane, "--agent-state", "idle", "--timeout", "30"])
        .ok();
    daemon.agent_session_id(&pane);
    let tmux = Tmux::start(daemon.dir.path(), 160, 24);
    tmux.type_line("main", &top_command(&daemon, "rest"));
    tmux.wait_for("main", "rest:0");
    tmux.send_keys("main", &["h"]);
    tmux.wait_for("main", "hibernated: its memory is freed");
    tmux.until("main", "rest:0 shown hibernated", |screen| {
        row(screen, "rest:0").filter(|r| r.contains("hibernated")).map(|_| ())
    });
    assert_eq!(daemon.cli(&["--json", "status", &pane]).json()["status"], "hibernated");
    tmux.send_keys("main", &["w"]);
    // (No turn ran: it starts afresh, and says so.)
    tmux.wait_for("main", "awake: no turn ran in its recorded session");
    let status = daemon.cli(&["--json", "status", &pane]).json();
    assert_eq!(status["status"], "running", "{status}");
    // A pane with no agent: refused, said.
    daemon
        .cli(&["run", "-s", "rest", "--no-shell", "--", "sleep", "600"])
        .ok();
    tmux.wait_for("main", "rest:1");
    tmux.send_keys("main", &["j"]);
    tmux.send_keys("main", &["h"]);
    tmux.wait_for("main", "no agent CLI");
    tmux.send_keys("main", &["q"]);
}
