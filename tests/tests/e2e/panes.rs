//! Panes on real PTYs: spawn modes, env/cwd/args, reading, truncation, input, keys,
//! targets, order, and the limits.

use fugue_client::protocol::{PaneState, SpawnSpec};
use fugue_tests::{wait_for, wait_for_text, Daemon, DEADLINE};
use std::time::Duration;

fn spec(session: &str, command: &str, args: &[&str], shell: bool) -> SpawnSpec {
    let mut spec = SpawnSpec::new(session);
    spec.command = Some(command.into());
    spec.args = args.iter().map(|a| a.to_string()).collect();
    spec.shell = shell;
    spec
}

#[test]
fn run_no_shell_with_args_env_and_cwd() {
    let daemon = Daemon::start();
    let work = daemon.dir.path().join("work dir");
    std::fs::create_dir(&work).unwrap();
    daemon.cli(&["new-session", "dev", "-e", "FROM_SESSION=s1"]).ok();
    let pane = daemon
        .cli(&[
            "run", "-s", "dev", "--no-shell", "--cwd", work.to_str().unwrap(), "-e", "GREETING=hello world",
            "--title", "probe", "--purpose", "check env", "--", "sh", "-c",
            r#"printf 'args=[%s][%s]\n' "$0" "$1"; echo "env=$GREETING/$FROM_SESSION/$TERM"; echo "cwd=$(pwd)"; exit 7"#,
            "one two", "3",
        ])
        .ok();
    let waited = daemon.cli(&["--json", "wait", &pane, "--timeout", "10"]).json();
    assert_eq!(waited["exit_code"], 7);
    assert_eq!(waited["status"], "exited");
    let out = daemon.cli(&["read", &pane]).ok();
    assert!(out.contains("args=[one two][3]"), "{out}");
    assert!(out.contains("env=hello world/s1/xterm-256color"), "{out}");
    assert!(out.contains(&format!("cwd={}", work.display())), "{out}");
    let panes = daemon.cli(&["--json", "panes", "dev"]).json();
    assert_eq!(panes[0]["title"], "probe");
    assert_eq!(panes[0]["purpose"], "check env");
    assert_eq!(panes[0]["exit_code"], 7);
    assert_eq!(panes[0]["index"], 0);
}

#[tokio::test]
async fn shell_mode_keeps_the_shell_after_the_command() {
    let daemon = Daemon::start();
    let client = daemon.client().await;
    client.create_session("dev", None, vec![]).await.unwrap();
    let pane = client
        .create_pane(spec("dev", "echo", &["it's", "a b"], true))
        .await
        .unwrap();
    let id = pane.id.to_string();
    wait_for_text(&client, &id, "it's a b").await;
    // The command ended, the shell did not: it still runs commands.
    client.write_input(&id, b"echo still-\"\"alive\r").await.unwrap();
    wait_for_text(&client, &id, "still-alive").await;
    assert_eq!(client.pane_status(&id).await.unwrap().state, PaneState::Running);
}

#[test]
fn spawn_validation_leaves_nothing_behind() {
    let daemon = Daemon::start();
    daemon.cli(&["new-session", "dev"]).ok();
    let plain = daemon.dir.path().join("plain.txt");
    std::fs::write(&plain, "not a program").unwrap();
    let plain = plain.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["--no-shell", "--", "no-such-command-xyz"],
            "command not found: no-such-command-xyz",
        ),
        (&["--no-shell", "--", plain], "is not executable"),
        (&["--no-shell"], "empty command with shell=false"),
        (
            &["--cwd", "/no/such/dir", "--", "true"],
            "cwd /no/such/dir does not exist",
        ),
        (&["--cwd", plain, "--", "true"], "is not a directory"),
        (&["-e", "=x", "--", "true"], "bad environment variable"),
        (&["--size", "0x10", "--", "true"], "bad size"),
        (&["--limit", "0", "--", "true"], "output_byte_limit must be at least 1"),
    ];
    for (args, expected) in cases {
        let mut full = vec!["run", "-s", "dev"];
        full.extend_from_slice(args);
        let err = daemon.cli(&full).err();
        assert!(err.starts_with("fugue: ") && err.contains(expected), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    assert_eq!(daemon.cli(&["--json", "panes"]).json(), serde_json::json!([]));
    let err = daemon.cli(&["run", "-s", "nope", "--", "true"]).err();
    assert_eq!(err, "fugue: session not found: 'nope'; sessions: dev");
}

#[tokio::test]
async fn exit_code_and_signal_are_recorded() {
    let daemon = Daemon::start();
    let client = daemon.client().await;
    client.create_session("dev", None, vec![]).await.unwrap();
    let code = client
        .create_pane(spec("dev", "sh", &["-c", "exit 42"], false))
        .await
        .unwrap();
    let (info, exited) = client
        .wait_for_exit(&code.id.to_string(), Some(DEADLINE))
        .await
        .unwrap();
    assert!(exited);
    assert_eq!((info.exit.unwrap().code, info.exit.unwrap().signal), (Some(42), None));

    let sig = client
        .create_pane(spec("dev", "sh", &["-c", "kill -USR1 $$"], false))
        .await
        .unwrap();
    let (info, _) = client.wait_for_exit(&sig.id.to_string(), Some(DEADLINE)).await.unwrap();
    assert_eq!(info.exit.unwrap().signal, Some(libc::SIGUSR1));
    assert_eq!(info.exit.unwrap().signal_name().as_deref(), Some("SIGUSR1"));
    let out = daemon.cli(&["--json", "status", &sig.id.to_string()]).json();
    assert_eq!(out["signal"], "SIGUSR1");
    assert_eq!(out["exit_code"], serde_json::Value::Null);
}

#[test]
fn small_limit_truncates_at_a_character_boundary() {
    let daemon = Daemon::start();
    daemon.cli(&["new-session", "dev"]).ok();
    // 'é' is two bytes; 101 bytes of output into a 50-byte log.
    let pane = daemon
        .cli(&[
            "run",
            "-s",
            "dev",
            "--no-shell",
            "--limit",
            "51",
            "--",
            "printf",
            "x%s",
            &"é".repeat(50),
        ])
        .ok();
    daemon.cli(&["wait", &pane, "--timeout", "10"]).ok();
    let out = daemon.cli(&["--json", "read", &pane, "--raw"]).json();
    assert_eq!(out["truncated"], true);
    let text = out["text"].as_str().unwrap();
    assert!(
        !text.contains('\u{FFFD}'),
        "raw log must start at a character boundary: {text:?}"
    );
    assert_eq!(text, "é".repeat(25));
    assert_eq!(out["next_offset"], 101);
    // --since pages from an offset.
    let since = daemon.cli(&["--json", "read", &pane, "--raw", "--since", "97"]).json();
    assert_eq!(since["text"], "éé");
    assert_eq!(since["truncated"], false);
    let old = daemon.cli(&["--json", "read", &pane, "--raw", "--since", "0"]).json();
    assert_eq!(old["truncated"], true);
}

#[test]
fn a_line_written_in_two_pieces_reads_back_whole() {
    let daemon = Daemon::start();
    daemon.cli(&["new-session", "dev"]).ok();
    // The program pauses between the halves, so they arrive in separate reads.
    let script = "printf 'first-'; sleep 0.3; printf 'half\\nnext\\n'";
    let pane = daemon
        .cli(&["run", "-s", "dev", "--no-shell", "--", "sh", "-c", script])
        .ok();
    daemon.cli(&["wait", &pane, "--timeout", "10"]).ok();
    let out = daemon.cli(&["--json", "read", &pane]).json();
    assert_eq!(out["lines"], serde_json::json!(["first-half", "next"]));
    // Text reads since an offset return only newer lines.
    let offset = out["next_offset"].as_u64().unwrap();
    let again = daemon
        .cli(&["--json", "read", &pane, "--since", &offset.to_string()])
        .json();
    assert_eq!(again["lines"], serde_json::json!([]));
}

#[tokio::test]
async fn write_send_keys_and_targets() {
    let daemon = Daemon::start();
    let client = daemon.client().await;
    client.create_session("dev", None, vec![]).await.unwrap();
    let mut cat = spec("dev", "cat", &[], false);
    cat.title = Some("echoer".into());
    let pane = client.create_pane(cat).await.unwrap();
    let id = pane.id.to_string();
    // The same pane by id, prefix, SESSION:INDEX and SESSION:TITLE.
    for target in [id.clone(), id[..6].to_string(), "dev:0".into(), "dev:echoer".into()] {
        assert_eq!(client.pane_status(&target).await.unwrap().id, pane.id, "{target}");
    }
    let out = daemon.cli(&["write", "dev:echoer", "typed text", "--enter"]);
    out.ok();
    wait_for_text(&client, &id, "typed text").await;
    daemon.cli(&["send-keys", "dev:0", "a", "b", "Enter"]).ok();
    wait_for_text(&client, &id, "ab").await;
    let err = daemon.cli(&["send-keys", "dev:0", "NoSuchKey"]).err();
    assert!(err.contains("unknown key 'NoSuchKey'"), "{err}");
    // C-d at the start of a line ends cat.
    daemon.cli(&["send-keys", "dev:0", "C-d"]).ok();
    let (info, exited) = client.wait_for_exit(&id, Some(DEADLINE)).await.unwrap();
    assert!(exited && info.exit.unwrap().code == Some(0));
    let err = daemon.cli(&["write", &id, "late"]).err();
    assert!(err.contains("has exited with code 0; input was not written"), "{err}");

    for (target, expected) in [
        ("dev:5", "pane not found: 'dev:5'"),
        ("dev:nope", "pane not found: 'nope'"),
        ("zzzz", "pane not found: 'zzzz'"),
        ("nope:0", "session not found: 'nope'"),
    ] {
        let err = client.pane_status(target).await.unwrap_err().to_string();
        assert!(err.contains(expected), "{target}: {err}");
    }
}

#[tokio::test]
async fn a_large_paste_is_written_whole() {
    let daemon = Daemon::start();
    let client = daemon.client().await;
    client.create_session("dev", None, vec![]).await.unwrap();
    let sink = daemon.dir.path().join("paste.out");
    let pane = client
        .create_pane(spec(
            "dev",
            "sh",
            &["-c", &format!("stty raw -echo; head -c 3000000 > '{}'", sink.display())],
            false,
        ))
        .await
        .unwrap();
    let id = pane.id.to_string();
    // stty must run before the paste, or the line discipline edits it.
    // Polled: a shell's child starting shows only in /proc.
    wait_for("stty raw to apply", DEADLINE, || async {
        let kids = fugue_tests::children(pane.pid);
        kids.iter().any(|k| fugue_tests::comm(*k) == "head").then_some(())
    })
    .await;
    let paste: Vec<u8> = (0..3_000_000u32).map(|i| b'a' + (i % 26) as u8).collect();
    client.write_input(&id, &paste).await.unwrap();
    let (info, exited) = client.wait_for_exit(&id, Some(Duration::from_secs(60))).await.unwrap();
    assert!(exited, "{info:?}");
    assert_eq!(std::fs::read(&sink).unwrap(), paste);
}

#[tokio::test]
async fn rename_and_reorder_panes() {
    let daemon = Daemon::start();
    let client = daemon.client().await;
    client.create_session("dev", None, vec![]).await.unwrap();
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(
            client
                .create_pane(spec("dev", "cat", &[], false))
                .await
                .unwrap()
                .id
                .to_string(),
        );
    }
    daemon.cli(&["rename-pane", &ids[2], "third"]).ok();
    // A prefix with its hyphen: eight hex digits can all be decimal digits
    // (one id in 43), and a bare number in a reorder is an index.
    daemon.cli(&["reorder", "dev", &ids[2], "dev:0", &ids[1][..9]]).ok();
    let panes = client.list_panes(Some("dev")).await.unwrap();
    let order: Vec<String> = panes.iter().map(|p| p.id.to_string()).collect();
    assert_eq!(order, [ids[2].clone(), ids[0].clone(), ids[1].clone()]);
    assert_eq!(panes[0].title, "third");
    assert_eq!(client.pane_status("dev:third").await.unwrap().index, 0);

    let before = order.clone();
    for (args, expected) in [
        (vec![ids[0].as_str(), ids[1].as_str()], "must name all 3 panes"),
        (vec![ids[0].as_str(), ids[0].as_str(), ids[1].as_str()], "named twice"),
        (
            vec![ids[0].as_str(), ids[1].as_str(), ids[2].as_str(), "dev:7"],
            "pane not found",
        ),
        (vec![ids[0].as_str(), ids[1].as_str(), "ffffffff"], "pane not found"),
    ] {
        let mut full = vec!["reorder", "dev"];
        full.extend(args);
        let err = daemon.cli(&full).err();
        assert!(err.contains(expected), "{err}");
    }
    let after: Vec<String> = client
        .list_panes(Some("dev"))
        .await
        .unwrap()
        .iter()
        .map(|p| p.id.to_string())
        .collect();
    assert_eq!(after, before, "a refused reorder changes nothing");
}

#[test]
fn the_running_pane_cap_counts_only_running_panes() {
    let daemon = Daemon::start();
    daemon.cli(&["new-session", "dev"]).ok();
    let mut panes = Vec::new();
    for i in 0..10 {
        panes.push(
            daemon
                .cli(&[
                    "run",
                    "-s",
                    "dev",
                    "--no-shell",
                    "--title",
                    &format!("p{i}"),
                    "--",
                    "cat",
                ])
                .ok(),
        );
    }
    let err = daemon.cli(&["run", "-s", "dev", "--no-shell", "--", "cat"]).err();
    assert!(err.contains("already runs 10 panes, the limit is 10"), "{err}");
    assert!(err.contains("p9"), "the error lists running panes: {err}");
    // An exited pane frees a slot but stays readable.
    daemon.cli(&["kill", &panes[0], "--signal", "KILL"]).ok();
    daemon.cli(&["wait", &panes[0], "--timeout", "10"]).ok();
    daemon.cli(&["run", "-s", "dev", "--no-shell", "--", "cat"]).ok();
    assert_eq!(daemon.cli(&["--json", "status", &panes[0]]).json()["signal"], "SIGKILL");
    // Another session has its own cap.
    daemon.cli(&["new-session", "other"]).ok();
    daemon.cli(&["run", "-s", "other", "--no-shell", "--", "cat"]).ok();
}

#[test]
fn exited_panes_expire_after_the_ttl_and_release_removes_at_once() {
    let daemon = Daemon::start_with(&["--exited-ttl", "500ms"]);
    daemon.cli(&["new-session", "dev"]).ok();
    let done = daemon
        .cli(&["run", "-s", "dev", "--no-shell", "--", "echo", "bye"])
        .ok();
    daemon.cli(&["wait", &done, "--timeout", "10"]).ok();
    // Readable right after exit...
    assert!(daemon.cli(&["read", &done]).ok().contains("bye"));
    // ...and gone once the TTL passed.
    daemon.until_event_blocking("the exited pane to expire", fugue_tests::DEADLINE, || {
        daemon
            .cli(&["status", &done])
            .status
            .success()
            .then_some(())
            .xor(Some(()))
    });
    assert!(daemon.cli(&["status", &done]).err().contains("pane not found"));

    let running = daemon.cli(&["run", "-s", "dev", "--no-shell", "--", "cat"]).ok();
    let pid = daemon.cli(&["--json", "status", &running]).json()["pid"]
        .as_u64()
        .unwrap() as u32;
    daemon.cli(&["release", &running]).ok();
    assert!(daemon.cli(&["status", &running]).err().contains("pane not found"));
    fugue_tests::procfs::wait_gone(pid, "the released pane's process to end");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ten_megabyte_paste_into_a_busy_pane_blocks_nothing_else() {
    let daemon = Daemon::start();
    let client = daemon.client().await;
    client.create_session("dev", None, vec![]).await.unwrap();
    // This pane never reads its input: the paste can only wait.
    let stuck = client
        .create_pane(spec("dev", "sleep", &["300"], false))
        .await
        .unwrap()
        .id
        .to_string();
    let echo = client
        .create_pane(spec("dev", "cat", &[], false))
        .await
        .unwrap()
        .id
        .to_string();
    let paste = {
        let client = client.clone();
        let stuck = stuck.clone();
        tokio::spawn(async move { client.write_input(&stuck, &vec![b'x'; 10 << 20]).await })
    };
    // Other panes and requests go on meanwhile.
    client.write_input(&echo, b"still-working\r").await.unwrap();
    wait_for_text(&client, &echo, "still-working").await;
    assert_eq!(client.list_panes(Some("dev")).await.unwrap().len(), 2);
    assert!(!paste.is_finished());
    // Releasing the pane ends the paste with an error, not a hang or a crash.
    client.release_pane(&stuck).await.unwrap();
    let result = tokio::time::timeout(DEADLINE, paste)
        .await
        .expect("the paste returns")
        .unwrap();
    assert!(result.is_err());
    client.ping().await.unwrap();
}

#[test]
fn overview_shows_every_pane_with_its_last_line() {
    let daemon = Daemon::start();
    daemon.cli(&["new-session", "one"]).ok();
    daemon.cli(&["new-session", "two"]).ok();
    let script = "printf 'first\\nlast-of-%s\\n\\n' \"$0\"; exec sleep 600";
    let a = daemon
        .cli(&["run", "-s", "one", "--no-shell", "--", "sh", "-c", script, "a"])
        .ok();
    let b = daemon
        .cli(&["run", "-s", "two", "--no-shell", "--", "sh", "-c", script, "b"])
        .ok();
    for pane in [&a, &b] {
        daemon
            .cli(&["wait", pane, "--pattern", "last-of", "--timeout", "10"])
            .ok();
    }
    let all = daemon.cli(&["--json", "overview"]).json();
    let rows = all.as_array().unwrap();
    assert_eq!(rows.len(), 2, "{all:#}");
    for (row, pane, name) in [(&rows[0], &a, "a"), (&rows[1], &b, "b")] {
        assert_eq!(row["pane"]["id"], pane.as_str());
        assert_eq!(row["last_line"], format!("last-of-{name}"), "{row}");
        assert_eq!(row["agent"], serde_json::Value::Null, "{row}");
    }
    let one = daemon.cli(&["--json", "overview", "one"]).json();
    assert_eq!(one.as_array().unwrap().len(), 1, "{one:#}");
    let table = daemon.cli(&["overview"]).ok();
    assert!(table.starts_with("ID"), "{table}");
    assert!(table.contains("one:0") && table.contains("last-of-b"), "{table}");
    let missing = daemon.cli(&["overview", "nope"]).err();
    assert!(missing.contains("nope"), "{missing}");
}

/// `fugue grep` finds which pane printed a line, across sessions and far back
/// in the scrollback, with its line number; `--session`, `--max`, `--json`
/// and a pattern that cannot compile behave as a person expects.
#[test]
fn grep_finds_the_pane_and_line_across_sessions() {
    let daemon = Daemon::start();
    for session in ["build", "net"] {
        daemon.cli(&["new-session", session]).ok();
    }
    // 3000 lines of noise first: the match is in the scrollback, far off screen.
    let build = daemon
        .cli(&[
            "run",
            "-s",
            "build",
            "--no-shell",
            "--",
            "sh",
            "-c",
            "seq 1 3000; echo 'ERROR: disk full'; echo done-build; exec sleep 600",
        ])
        .ok();
    daemon
        .cli(&[
            "run",
            "-s",
            "net",
            "--no-shell",
            "--",
            "sh",
            "-c",
            "echo 'ERROR: network down'; echo done-net; exec sleep 600",
        ])
        .ok();
    daemon.wait_text("build:0", "done-build");
    daemon.wait_text("net:0", "done-net");

    let found = daemon.cli(&["grep", "^ERROR"]).ok();
    let lines: Vec<&str> = found.lines().collect();
    assert_eq!(
        lines,
        vec!["build:0:3001:ERROR: disk full", "net:0:1:ERROR: network down"],
        "{found}"
    );
    let only = daemon.cli(&["grep", "ERROR", "--session", "net"]).ok();
    assert_eq!(only, "net:0:1:ERROR: network down");
    let json = daemon.cli(&["--json", "grep", "disk"]).json();
    assert_eq!(json["matches"][0]["pane"], build.as_str(), "{json}");
    assert_eq!(json["matches"][0]["line"], 3001, "{json}");
    assert_eq!(json["panes_searched"], 2, "{json}");
    assert_eq!(json["truncated"], false, "{json}");

    // --max: what was cut is said, on stderr.
    let capped = daemon.cli(&["grep", "^[0-9]+$", "--max", "5"]);
    assert!(capped.status.success());
    assert_eq!(capped.stdout.lines().count(), 5, "{}", capped.stdout);
    assert!(capped.stderr.contains("more lines matched"), "{}", capped.stderr);
    // Nothing found: exit status 1, like grep; a bad pattern: one clear line.
    let none = daemon.cli(&["grep", "no such text anywhere"]);
    assert_eq!(none.status.code(), Some(1), "{}", none.stderr);
    let bad = daemon.cli(&["grep", "(unclosed"]).err();
    assert!(bad.contains("pattern"), "{bad}");
    let zero = daemon.cli(&["grep", "x", "--max", "0"]).err();
    assert!(zero.contains("max_matches must be 1 to 1000"), "{zero}");
}
