//! Live upgrade: the daemon re-executes the binary now on disk in place, and
//! every pane, process, screen and offset goes on. Real daemons run from a copy
//! of fugued the test replaces, so the swap is real and can be checked.

use fugue_client::protocol::{
    CaptureWhat, PaneInfo, PaneSize, PaneState, ReadMode, SpawnSpec, WaitCondition, WaitUntil,
};
use fugue_client::Client;
use fugue_tests::{bin, sh_spec, wait_for_text, Daemon, Tmux, DEADLINE};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

/// Replaces the daemon's binary (rename over it, as installers do) with `bytes`;
/// returns the new file's inode.
fn replace_binary(exe: &Path, bytes: &[u8]) -> u64 {
    let staged = exe.with_extension("new");
    std::fs::write(&staged, bytes).unwrap();
    std::fs::set_permissions(&staged, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::rename(&staged, exe).unwrap();
    std::fs::metadata(exe).unwrap().ino()
}

/// The build's fugued with bytes appended (ignored by the loader): the same
/// program in a different file, so the test can tell which one runs.
fn marked_fugued(mark: &str) -> Vec<u8> {
    let mut bytes = std::fs::read(bin("fugued")).unwrap();
    bytes.extend_from_slice(mark.as_bytes());
    bytes
}

/// The inode of the file process `pid` runs.
fn running_inode(pid: u32) -> u64 {
    std::fs::metadata(format!("/proc/{pid}/exe")).unwrap().ino()
}

async fn ansi_screen(client: &Client, pane: &str) -> (Vec<String>, u16, u16) {
    let c = client
        .capture(pane, CaptureWhat::All, (None, None), true, false)
        .await
        .unwrap();
    (c.lines, c.cursor_row, c.cursor_col)
}

async fn pids(client: &Client) -> Vec<(String, u32, PaneState)> {
    client
        .list_panes(None)
        .await
        .unwrap()
        .into_iter()
        .map(|p| (p.id.to_string(), p.pid, p.state))
        .collect()
}

/// The counter's numbers, in order, from its whole text view.
async fn counted(client: &Client, pane: &str) -> Vec<u64> {
    let mode = ReadMode::Text {
        lines: 100_000,
        since: None,
    };
    let lines = client.read_output(pane, mode).await.unwrap().lines;
    lines.iter().filter_map(|l| l.trim().parse().ok()).collect()
}

async fn start(client: &Client, spec: SpawnSpec) -> PaneInfo {
    client.create_pane(spec).await.expect("create pane")
}

#[tokio::test]
async fn a_live_upgrade_keeps_every_pane_and_process() {
    fugue_tests::require!("tmux");
    let daemon = Daemon::start_copy(&[]);
    let client = daemon.client().await;
    client.create_session("up", None, Vec::new()).await.unwrap();
    let counter = start(
        &client,
        sh_spec("up", "i=0; while :; do i=$((i+1)); echo $i; sleep 0.01; done"),
    )
    .await;
    let counter_id = counter.id.to_string();
    let file = daemon.dir.path().join("notes.txt");
    std::fs::write(&file, "first line\nsecond line\n\tindented third\n").unwrap();
    let mut vim = SpawnSpec::new("up");
    vim.command = Some("vim".into());
    vim.args = vec![
        "-u".into(),
        "NONE".into(),
        "-N".into(),
        "--cmd".into(),
        "set t_RB=".into(),
        file.display().to_string(),
    ];
    vim.shell = false;
    vim.size = Some(PaneSize { cols: 80, rows: 24 });
    let vim = start(&client, vim).await;
    let vim_id = vim.id.to_string();
    let shell = start(&client, SpawnSpec::new("up")).await;
    let shell_id = shell.id.to_string();
    for _ in 0..7 {
        start(&client, sh_spec("up", "echo idle; exec sleep 1000")).await;
    }
    fugue_tests::wait_for_screen(&client, &vim_id, "indented third").await;
    client.write_input(&shell_id, b"echo one-$((1+1))\n").await.unwrap();
    wait_for_text(&client, &shell_id, "one-2").await;
    // A person attached to the shell, in a real terminal.
    let tmux = Tmux::start(daemon.dir.path(), 100, 30);
    let fugue = bin("fugue");
    let attach = format!(
        "{} --socket {} attach {shell_id}",
        fugue.display(),
        daemon.socket.display()
    );
    tmux.type_line("main", &attach);
    tmux.wait_for("main", "one-2");
    // (The first number holding `51` is 51 itself.)
    wait_for_text(&client, &counter_id, "51").await;

    let vim_before = ansi_screen(&client, &vim_id).await;
    let before = pids(&client).await;
    assert_eq!(before.len(), 10);
    let old_inode = running_inode(daemon.pid());
    let new_inode = replace_binary(&daemon.exe, &marked_fugued("upgrade-test-build-2"));
    assert_ne!(old_inode, new_inode);

    let upgraded = daemon.cli(&["daemon", "upgrade"]).ok();
    assert!(
        upgraded.starts_with("upgraded in place") && upgraded.contains("10 kept running"),
        "{upgraded}"
    );
    // The same process, now running the new file.
    assert_eq!(running_inode(daemon.pid()), new_inode, "the daemon runs the new binary");
    let client = daemon.client().await;
    assert_eq!(client.welcome().pid, daemon.pid());
    assert_eq!(pids(&client).await, before, "same panes, same pids, all running");
    assert_eq!(
        ansi_screen(&client, &vim_id).await,
        vim_before,
        "vim's screen is identical"
    );

    // The counter: every number once, in order, across the upgrade.
    let passed = counted(&client, &counter_id).await.last().copied().unwrap_or(0) + 100;
    wait_for_text(&client, &counter_id, &(passed + 1).to_string()).await;
    let numbers = counted(&client, &counter_id).await;
    let first = numbers[0];
    let expected: Vec<u64> = (first..first + numbers.len() as u64).collect();
    assert_eq!(numbers, expected, "no gap and no duplicate");

    // The attached client reconnected by itself and works both ways.
    tmux.type_line("main", "echo after-$((2+3))");
    tmux.wait_for("main", "after-5");
    wait_for_text(&client, &shell_id, "after-5").await;
    // The shell is the same process: its history is there.
    let mode = ReadMode::Text { lines: 1, since: None };
    let from = client.read_output(&shell_id, mode).await.unwrap().next_offset;
    client
        .send_keys(&shell_id, &["Up".into(), "Up".into(), "Enter".into()])
        .await
        .unwrap();
    let again = WaitUntil {
        pattern: Some(r"^\s*one-2\s*$".into()),
        since: Some(from),
        ..Default::default()
    };
    let recalled = client.wait_for(&shell_id, again, DEADLINE).await.unwrap();
    assert_eq!(
        recalled.condition,
        WaitCondition::Pattern,
        "the recalled command did not run again: {recalled:?}"
    );
    // vim still edits its file.
    client.send_keys(&vim_id, &["Escape".into()]).await.unwrap();
    client.write_input(&vim_id, b":wq\r").await.unwrap();
    let (exited, done) = client.wait_for_exit(&vim_id, Some(DEADLINE)).await.unwrap();
    assert!(done && exited.exit.and_then(|e| e.code) == Some(0), "{exited:?}");
    let status = client.daemon_status().await.unwrap();
    assert!(status.recovery.starts_with("upgraded in place"), "{}", status.recovery);
}

#[tokio::test]
async fn a_binary_that_cannot_take_over_leaves_the_old_daemon_running() {
    let mut daemon = Daemon::start_copy(&[]);
    let client = daemon.client().await;
    client.create_session("keep", None, Vec::new()).await.unwrap();
    let counter = start(
        &client,
        sh_spec("keep", "i=0; while :; do i=$((i+1)); echo $i; sleep 0.01; done"),
    )
    .await;
    let counter_id = counter.id.to_string();
    wait_for_text(&client, &counter_id, "20").await;
    let original = running_inode(daemon.pid());
    // A binary that reads another handover layout refuses it.
    let refuses = "#!/bin/sh\necho 'handover layout 99, this fugued reads layout 99' >&2\nexit 1\n";
    replace_binary(&daemon.exe, refuses.as_bytes());

    let failed = daemon.cli(&["daemon", "upgrade"]);
    assert!(!failed.status.success());
    assert!(
        failed.stdout.contains("upgrade failed, kept running") && failed.stdout.contains("handover layout 99"),
        "{} {}",
        failed.stdout,
        failed.stderr
    );
    assert!(!daemon.has_exited());
    assert_eq!(running_inode(daemon.pid()), original, "the old binary still runs");
    let client = daemon.client().await;
    let pane = client.pane_status(&counter_id).await.unwrap();
    assert_eq!((pane.state, pane.pid), (PaneState::Running, counter.pid));
    let seen = counted(&client, &counter_id).await.last().copied().unwrap_or(0);
    wait_for_text(&client, &counter_id, &(seen + 21).to_string()).await;

    // A missing binary: the same.
    std::fs::remove_file(&daemon.exe).unwrap();
    let missing = daemon.cli(&["daemon", "upgrade"]);
    assert!(!missing.status.success());
    assert!(missing.stdout.contains("cannot run"), "{}", missing.stdout);

    // SIGUSR2 upgrades as the command does, once a good binary is there.
    let good = replace_binary(&daemon.exe, &marked_fugued("upgrade-test-build-3"));
    let pid = daemon.pid();
    daemon.ready_again_after(|| fugue_tests::send_signal(pid, libc::SIGUSR2));
    assert_eq!(running_inode(daemon.pid()), good, "the daemon runs the new binary");
    let client = daemon.client().await;
    let status = client.daemon_status().await.unwrap();
    assert!(status.recovery.starts_with("upgraded in place"), "{}", status.recovery);
    let pane = client.pane_status(&counter_id).await.unwrap();
    assert_eq!((pane.state, pane.pid), (PaneState::Running, counter.pid));
    let numbers = counted(&client, &counter_id).await;
    let first = numbers[0];
    assert_eq!(numbers, (first..first + numbers.len() as u64).collect::<Vec<_>>());
}
