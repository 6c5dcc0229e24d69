//! Killing and interrupting: process groups, escalation to SIGKILL, interrupts that
//! leave the shell alive, and destroying sessions.

use fugue_client::protocol::{ReadMode, SpawnSpec};
use fugue_tests::{children, comm, process_gone, wait_for, wait_for_text, wait_until, Daemon, DEADLINE};

#[tokio::test]
async fn kill_escalates_to_sigkill_for_a_process_that_ignores_term() {
    let daemon = Daemon::start_with(&["--kill-grace", "500ms"]);
    let client = daemon.client().await;
    client.create_session("dev", None, vec![]).await.unwrap();
    let spec = fugue_tests::sh_spec("dev", "trap '' TERM; echo armed; while :; do sleep 1; done");
    let pane = client.create_pane(spec).await.unwrap();
    let id = pane.id.to_string();
    wait_for_text(&client, &id, "armed").await;
    client.kill_pane(&id, None).await.unwrap();
    let (info, exited) = client.wait_for_exit(&id, Some(DEADLINE)).await.unwrap();
    assert!(exited);
    assert_eq!(info.exit.unwrap().signal, Some(libc::SIGKILL), "{info:?}");
    // Still readable after the kill.
    let out = client
        .read_output(&id, ReadMode::Text { lines: 10, since: None })
        .await
        .unwrap();
    assert!(out.lines.contains(&"armed".to_string()));
    assert!(process_gone(pane.pid));
}

#[tokio::test]
async fn kill_with_a_named_signal_and_bad_signal_names() {
    let daemon = Daemon::start();
    let client = daemon.client().await;
    client.create_session("dev", None, vec![]).await.unwrap();
    let mut spec = SpawnSpec::new("dev");
    spec.command = Some("sleep".into());
    spec.args = vec!["60".into()];
    spec.shell = false;
    let id = client.create_pane(spec).await.unwrap().id.to_string();
    let err = daemon.cli(&["kill", &id, "--signal", "BOGUS"]).err();
    assert!(err.contains("unknown signal 'BOGUS'"), "{err}");
    daemon.cli(&["kill", &id, "--signal", "INT"]).ok();
    let (info, _) = client.wait_for_exit(&id, Some(DEADLINE)).await.unwrap();
    assert_eq!(info.exit.unwrap().signal, Some(libc::SIGINT));
}

#[tokio::test]
async fn interrupt_stops_the_foreground_job_and_the_shell_survives() {
    let daemon = Daemon::start();
    let client = daemon.client().await;
    client.create_session("dev", None, vec![]).await.unwrap();
    let pane = client.create_pane(SpawnSpec::new("dev")).await.unwrap();
    let id = pane.id.to_string();
    client.write_input(&id, b"sleep 30\r").await.unwrap();
    // Polled: a shell's child starting shows only in /proc.
    let sleeper = wait_for("sleep to run in the shell", DEADLINE, || async {
        children(pane.pid).into_iter().find(|pid| comm(*pid) == "sleep")
    })
    .await;
    daemon.cli(&["interrupt", &id]).ok();
    fugue_tests::procfs::wait_gone(sleeper, "sleep to end");
    // bash reports how its job ended: 130 = 128 + SIGINT.
    client
        .write_input(&id, b"echo status-$? shell-\"\"alive\r")
        .await
        .unwrap();
    wait_for_text(&client, &id, "status-130 shell-alive").await;
    assert!(!process_gone(pane.pid));
}

#[tokio::test]
async fn killing_a_shell_pane_ends_the_shell_and_its_job() {
    let daemon = Daemon::start_with(&["--kill-grace", "5s"]);
    let client = daemon.client().await;
    client.create_session("dev", None, vec![]).await.unwrap();
    let pane = client.create_pane(SpawnSpec::new("dev")).await.unwrap();
    let id = pane.id.to_string();
    client.write_input(&id, b"sleep 300\r").await.unwrap();
    // Polled: a shell's child starting shows only in /proc.
    let sleeper = wait_for("sleep to run", DEADLINE, || async {
        children(pane.pid).into_iter().find(|p| comm(*p) == "sleep")
    })
    .await;
    client.kill_pane(&id, None).await.unwrap();
    let (info, exited) = client.wait_for_exit(&id, Some(DEADLINE)).await.unwrap();
    assert!(exited);
    // An interactive shell ignores TERM; it must end by the hang-up, not by the
    // SIGKILL 5 s later.
    assert_ne!(info.exit.unwrap().signal, Some(libc::SIGKILL), "{info:?}");
    fugue_tests::procfs::wait_gone(sleeper, "the job to end");
}

#[test]
fn destroying_a_session_kills_its_processes() {
    let daemon = Daemon::start_with(&["--kill-grace", "500ms"]);
    daemon.cli(&["new-session", "dev"]).ok();
    let mut pids = Vec::new();
    for args in [
        &["--no-shell", "--", "sleep", "300"][..],
        &[
            "--no-shell",
            "--",
            "sh",
            "-c",
            "trap '' TERM HUP; echo armed; while :; do sleep 1; done",
        ],
        &[],
    ] {
        let mut full = vec!["run", "-s", "dev"];
        full.extend_from_slice(args);
        let pane = daemon.cli(&full).ok();
        pids.push(daemon.cli(&["--json", "status", &pane]).json()["pid"].as_u64().unwrap() as u32);
        if args.last().is_some_and(|a| a.contains("armed")) {
            daemon
                .cli(&["wait", &pane, "--pattern", "armed", "--timeout", "60"])
                .ok();
        }
    }
    daemon.cli(&["kill-session", "dev"]).ok();
    assert_eq!(daemon.cli(&["--json", "panes"]).json(), serde_json::json!([]));
    for pid in pids {
        fugue_tests::procfs::wait_gone(pid, &format!("pid {pid} to end"));
    }
}

/// Panes cost no threads: the daemon's thread count with 60 panes that print and
/// echo input is what it was with one, and releasing them all leaves no process
/// and no zombie behind.
#[tokio::test]
async fn panes_cost_no_threads_and_leave_no_zombies() {
    let daemon = Daemon::start();
    let client = daemon.client().await;
    client.create_session("s0", None, vec![]).await.unwrap();
    let first = client
        .create_pane(fugue_tests::sh_spec("s0", "echo ready; exec cat"))
        .await
        .unwrap();
    wait_for_text(&client, &first.id.to_string(), "ready").await;
    let baseline = fugue_tests::threads(daemon.pid());
    let mut panes = vec![first];
    for s in 0..6 {
        let session = format!("t{s}");
        client.create_session(&session, None, vec![]).await.unwrap();
        for _ in 0..10 {
            let spec = fugue_tests::sh_spec(&session, "echo ready; exec cat");
            panes.push(client.create_pane(spec).await.unwrap());
        }
    }
    for pane in &panes {
        let id = pane.id.to_string();
        wait_for_text(&client, &id, "ready").await;
        client.write_input(&id, b"echo-back\r").await.unwrap();
        wait_for_text(&client, &id, "echo-back").await;
    }
    let with_panes = fugue_tests::threads(daemon.pid());
    // The emulation pool starts one thread per core with the first output, and the
    // runtime may add a blocking thread; neither depends on the number of panes.
    assert!(
        with_panes <= baseline + 2,
        "{} panes took the daemon from {baseline} to {with_panes} threads",
        panes.len()
    );
    for pane in &panes {
        client.release_pane(&pane.id.to_string()).await.unwrap();
    }
    // Polled: a zombie being reaped is seen only in /proc (a pidfd wakes at the exit, not the reaping).
    wait_until("every pane process to be reaped", DEADLINE, || {
        (children(daemon.pid()).is_empty() && panes.iter().all(|p| process_gone(p.pid))).then_some(())
    });
}
