//! Durable records: what comes back after a stop, a crash, a corrupt database;
//! restart policies. Real daemons, real processes, the real SQLite file.

use fugue_client::protocol::{CaptureWhat, EnvVar, PaneInfo, PaneState, ReadMode, RestartPolicy, SpawnSpec};
use fugue_client::Client;
use fugue_tests::{private_dir, sh_spec, wait_for, wait_for_text, Daemon, DEADLINE};
use std::path::Path;

async fn screen(client: &Client, pane: &str) -> String {
    let capture = client
        .capture(pane, CaptureWhat::Screen, (None, None), false, false)
        .await
        .expect("capture");
    capture.lines.join("\n")
}

async fn text(client: &Client, pane: &str) -> Vec<String> {
    let mode = ReadMode::Text {
        lines: 10_000,
        since: None,
    };
    client.read_output(pane, mode).await.expect("read").lines
}

async fn pane(client: &Client, id: &str) -> PaneInfo {
    client.pane_status(id).await.expect("pane status")
}

/// Waits until the records hold `needle` on the saved screen of pane `id`.
async fn wait_checkpointed(db: &Path, id: &str, needle: &str) {
    let what = format!("'{needle}' in the saved screen of {id}");
    let (id, needle) = (id.to_string(), needle.to_string());
    fugue_tests::files::until_recorded(db, &what, move |records| {
        let screen: String = records
            .query_row("SELECT screen FROM pane_output WHERE pane_id = ?1", [&id], |row| {
                row.get(0)
            })
            .ok()?;
        screen.contains(&needle).then_some(())
    })
    .await
}

/// Waits until the records hold the session `name`.
async fn wait_session_recorded(db: &Path, name: &'static str) {
    fugue_tests::files::until_recorded(db, &format!("session {name} to be written"), move |records| {
        let n: i64 = records
            .query_row("SELECT count(*) FROM sessions WHERE name = ?1", [name], |r| r.get(0))
            .ok()?;
        (n == 1).then_some(())
    })
    .await
}

fn alive(pid: u32) -> bool {
    rustix::process::test_kill_process(rustix::process::Pid::from_raw(pid as i32).expect("pid")).is_ok()
}

/// The pid of the orphan's `sh` (the pane's process itself).
async fn start_orphan(client: &Client, session: &str) -> PaneInfo {
    // Ignores the hang-up a closing terminal sends, as nohup'd jobs do.
    let spec = sh_spec(session, "trap '' HUP; echo orphan-ready; while :; do sleep 1; done");
    let info = client.create_pane(spec).await.expect("orphan pane");
    wait_for_text(client, &info.id.to_string(), "orphan-ready").await;
    info
}

#[tokio::test]
async fn stop_and_start_bring_back_sessions_titles_order_and_exits() {
    let mut daemon = Daemon::start();
    let client = daemon.client().await;
    let cwd = daemon.dir.path().to_path_buf();
    let env = vec![EnvVar {
        name: "FROM_SESSION".into(),
        value: "kept".into(),
    }];
    let session = client.create_session("work", Some(&cwd), env).await.unwrap();
    let mut first = sh_spec("work", "echo alpha; exit 3");
    first.title = Some("first".into());
    let first = client.create_pane(first).await.unwrap();
    let second = client
        .create_pane(sh_spec("work", "echo beta; exec sleep 1000"))
        .await
        .unwrap();
    let third = client
        .create_pane(sh_spec("work", "echo gamma; exec sleep 1000"))
        .await
        .unwrap();
    let ids = [&first, &second, &third].map(|p| p.id.to_string());
    client.rename_pane(&ids[1], "renamed").await.unwrap();
    let order = vec![ids[2].clone(), ids[0].clone(), ids[1].clone()];
    client.reorder_panes("work", &order).await.unwrap();
    client.wait_for_exit(&ids[0], Some(DEADLINE)).await.unwrap();
    wait_for_text(&client, &ids[1], "beta").await;
    wait_for_text(&client, &ids[2], "gamma").await;

    client.shutdown(DEADLINE).await.unwrap();
    daemon.wait_exit();
    daemon.restart(&[]);
    let client = daemon.client().await;

    let sessions = client.list_sessions().await.unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!((sessions[0].id, sessions[0].name.as_str()), (session.id, "work"));
    assert_eq!(sessions[0].cwd, session.cwd);
    let panes = client.list_panes(Some("work")).await.unwrap();
    let listed: Vec<String> = panes.iter().map(|p| p.id.to_string()).collect();
    assert_eq!(listed, order, "the order is kept");
    let titles: Vec<&str> = panes.iter().map(|p| p.title.as_str()).collect();
    assert_eq!(titles, vec!["sh", "first", "renamed"]);
    // The exited pane: its exit code and its output.
    let exited = pane(&client, &ids[0]).await;
    assert_eq!(exited.state, PaneState::Exited);
    assert_eq!(exited.exit.and_then(|e| e.code), Some(3));
    assert!(text(&client, &ids[0]).await.contains(&"alpha".to_string()));
    // Running when the daemon stopped: lost, with the last screen and text.
    for (id, word) in [(&ids[1], "beta"), (&ids[2], "gamma")] {
        assert_eq!(pane(&client, id).await.state, PaneState::Lost);
        assert!(screen(&client, id).await.contains(word), "{id} shows {word}");
        assert!(text(&client, id).await.contains(&word.to_string()));
        let refused = client.write_input(id, b"x").await.unwrap_err().to_string();
        assert!(refused.contains("input was not written"), "{refused}");
    }
    let status = client.daemon_status().await.unwrap();
    assert!(
        status
            .recovery
            .starts_with("restored 1 sessions, 3 panes: 2 lost, 0 restarted, 1 exited"),
        "{}",
        status.recovery
    );
    assert!(daemon.cli(&["daemon", "status"]).ok().contains("restored 1 sessions"));
    assert!(daemon.cli(&["panes"]).ok().contains("lost"));
    // The session's environment came back too.
    let probe = client
        .create_pane(sh_spec("work", "echo env=$FROM_SESSION"))
        .await
        .unwrap();
    wait_for_text(&client, &probe.id.to_string(), "env=kept").await;
    // A released pane stays gone after another restart.
    client.release_pane(&ids[1]).await.unwrap();
    client.shutdown(DEADLINE).await.unwrap();
    daemon.wait_exit();
    daemon.restart(&[]);
    let client = daemon.client().await;
    let after: Vec<String> = client
        .list_panes(Some("work"))
        .await
        .unwrap()
        .iter()
        .map(|p| p.id.to_string())
        .collect();
    assert!(!after.contains(&ids[1]), "released panes are not restored");
    assert!(after.contains(&ids[2]), "lost panes stay until their TTL");
}

/// SIGKILL: the next daemon shows the panes lost with their last screen; the
/// process that survived the hang-up is ended (or left, with --keep-orphans).
#[tokio::test]
async fn a_killed_daemon_leaves_lost_panes_and_its_orphans_are_handled() {
    for keep in [false, true] {
        let mut daemon = Daemon::start();
        let client = daemon.client().await;
        client.create_session("crash", None, Vec::new()).await.unwrap();
        let spec = sh_spec("crash", "echo last-words; exec sleep 1000");
        let quiet = client.create_pane(spec).await.unwrap();
        let quiet_id = quiet.id.to_string();
        wait_for_text(&client, &quiet_id, "last-words").await;
        let orphan = start_orphan(&client, "crash").await;
        let db = daemon.state_db();
        wait_checkpointed(&db, &quiet_id, "last-words").await;
        wait_checkpointed(&db, &orphan.id.to_string(), "orphan-ready").await;

        daemon.signal_and_wait(libc::SIGKILL);
        // The hang-up ended the pane that did not ignore it; the orphan lives on.
        // Woken by the kernel when it ends (a pidfd), off the runtime.
        let quiet_pid = quiet.pid;
        tokio::task::spawn_blocking(move || {
            fugue_tests::procfs::wait_gone(quiet_pid, "the first pane to end with its terminal")
        })
        .await
        .unwrap();
        assert!(alive(orphan.pid), "the orphan outlived the daemon");

        let args: &[&str] = if keep { &["--keep-orphans"] } else { &[] };
        daemon.restart(args);
        let client = daemon.client().await;
        let lost = pane(&client, &quiet_id).await;
        assert_eq!(lost.state, PaneState::Lost);
        assert!(screen(&client, &quiet_id).await.contains("last-words"));
        let status = client.daemon_status().await.unwrap();
        let what = if keep { "left running" } else { "ended" };
        assert!(
            status.recovery.ends_with(&format!("1 orphan processes {what}")),
            "{}",
            status.recovery
        );
        if keep {
            assert!(alive(orphan.pid), "--keep-orphans leaves it alone");
            fugue_tests::send_signal(orphan.pid, libc::SIGKILL);
        } else {
            let orphan_pid = orphan.pid;
            tokio::task::spawn_blocking(move || fugue_tests::procfs::wait_gone(orphan_pid, "the orphan to be ended"))
                .await
                .unwrap();
        }
    }
}

#[tokio::test]
async fn a_failing_command_is_restarted_with_backoff_until_it_succeeds() {
    let daemon = Daemon::start();
    let client = daemon.client().await;
    client.create_session("svc", None, Vec::new()).await.unwrap();
    let count = daemon.dir.path().join("runs");
    let script = format!(
        "n=$(cat {0} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {0}; echo run $n at $(date +%s%N); \
         [ $n -ge 3 ] && {{ echo healthy; exec sleep 1000; }}; exit 1",
        count.display()
    );
    let mut spec = sh_spec("svc", script);
    spec.restart = RestartPolicy::OnFailure;
    let info = client.create_pane(spec).await.unwrap();
    let id = info.id.to_string();
    wait_for_text(&client, &id, "healthy").await;
    // Started at 1 s, then 2 s after each failure.
    let starts: Vec<u64> = text(&client, &id)
        .await
        .iter()
        .filter_map(|l| l.strip_prefix("run ").and_then(|l| l.split(" at ").nth(1)))
        .filter_map(|ns| ns.trim().parse::<u64>().ok())
        .collect();
    assert_eq!(starts.len(), 3, "three runs");
    let gaps: Vec<u64> = starts.windows(2).map(|w| (w[1] - w[0]) / 1_000_000).collect();
    assert!(gaps[0] >= 1000 && gaps[1] >= 2000, "backoff 1 s then 2 s: {gaps:?} ms");
    let now = pane(&client, &id).await;
    assert_eq!(now.state, PaneState::Running);
    assert_eq!(now.restarts, 2);
    assert_eq!(now.last_exit.and_then(|e| e.code), Some(1));
    assert_ne!(now.pid, info.pid, "a new process");
    let listed = daemon.cli(&["panes", "svc"]).ok();
    assert!(listed.contains("running (restarts 2)"), "{listed}");

    // With a cap it gives up.
    let mut capped = sh_spec("svc", "exit 7");
    capped.restart = RestartPolicy::Always;
    capped.max_restarts = Some(1);
    let capped = client.create_pane(capped).await.unwrap();
    let capped_id = capped.id.to_string();
    daemon
        .until_event("the capped pane to give up", DEADLINE, || async {
            let info = pane(&client, &capped_id).await;
            (info.state == PaneState::Exited && info.restarts == 1).then_some(())
        })
        .await;
}

#[tokio::test]
async fn an_always_pane_comes_back_when_the_daemon_starts_again() {
    let mut daemon = Daemon::start();
    let client = daemon.client().await;
    client.create_session("dev", None, Vec::new()).await.unwrap();
    let mut spec = SpawnSpec::new("dev");
    spec.command = Some("sh".into());
    spec.args = vec!["-c".into(), "echo serving on 8080 as $$; exec sleep 1000".into()];
    spec.shell = false;
    spec.restart = RestartPolicy::Always;
    let server = client.create_pane(spec).await.unwrap();
    let id = server.id.to_string();
    wait_for_text(&client, &id, "serving").await;
    client.shutdown(DEADLINE).await.unwrap();
    daemon.wait_exit();
    assert!(!alive(server.pid), "stopping the daemon ended the server");

    daemon.restart(&[]);
    let client = daemon.client().await;
    let back = pane(&client, &id).await;
    assert_eq!(back.state, PaneState::Running);
    assert_ne!(back.pid, server.pid);
    assert_eq!(back.restarts, 1);
    assert!(alive(back.pid));
    wait_for_text(&client, &id, &format!("serving on 8080 as {}", back.pid)).await;
    let lines = text(&client, &id).await;
    assert_eq!(lines.iter().filter(|l| l.contains("serving")).count(), 2, "{lines:?}");
    let status = client.daemon_status().await.unwrap();
    assert!(status.recovery.contains("1 restarted"), "{}", status.recovery);
}

#[tokio::test]
async fn an_unreadable_database_is_moved_aside_and_the_daemon_starts_fresh() {
    type MakeBad = fn(&Path);
    let cases: [(&str, MakeBad); 3] = [
        ("random bytes", |path| {
            let noise: Vec<u8> = (0..20_000u32)
                .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
                .collect();
            std::fs::write(path, noise).unwrap();
        }),
        ("truncated", |path| {
            let conn = rusqlite::Connection::open(path).unwrap();
            conn.execute_batch("CREATE TABLE t (x TEXT); PRAGMA user_version = 1;")
                .unwrap();
            for i in 0..3000 {
                conn.execute("INSERT INTO t VALUES (?1)", [format!("{i:0>200}")])
                    .unwrap();
            }
            drop(conn);
            let bytes = std::fs::read(path).unwrap();
            std::fs::write(path, &bytes[..bytes.len() / 2]).unwrap();
        }),
        ("newer schema", |path| {
            let conn = rusqlite::Connection::open(path).unwrap();
            conn.pragma_update(None, "user_version", 99).unwrap();
        }),
    ];
    for (name, make) in cases {
        let state = private_dir();
        let db = state.path().join("state.db");
        make(&db);
        let state_arg = db.display().to_string();
        let mut daemon = Daemon::start_with(&["--state", &state_arg]);
        let client = daemon.client().await;
        let status = client.daemon_status().await.unwrap();
        assert!(
            status.recovery.starts_with("state database unreadable") && status.recovery.contains(".corrupt-"),
            "{name}: {}",
            status.recovery
        );
        assert_eq!(status.state_path, state_arg, "{name}: a fresh database is in use");
        let aside = std::fs::read_dir(state.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .any(|e| e.file_name().to_string_lossy().starts_with("state.db.corrupt-"));
        assert!(aside, "{name}: the unreadable file is kept beside it");
        // The fresh database works: a session survives a restart.
        client.create_session("fresh", None, Vec::new()).await.unwrap();
        client.shutdown(DEADLINE).await.unwrap();
        daemon.wait_exit();
        daemon.restart(&["--state", &state_arg]);
        let names = daemon.session_names().await;
        assert_eq!(names, vec!["fresh".to_string()], "{name}");
    }
}

#[tokio::test]
async fn without_a_state_file_nothing_is_kept() {
    let mut daemon = Daemon::start_with(&["--state", "none"]);
    let client = daemon.client().await;
    client.create_session("gone", None, Vec::new()).await.unwrap();
    assert_eq!(client.daemon_status().await.unwrap().state_path, "");
    client.shutdown(DEADLINE).await.unwrap();
    daemon.wait_exit();
    daemon.restart(&["--state", "none"]);
    let client = daemon.client().await;
    assert!(client.list_sessions().await.unwrap().is_empty());
    assert!(daemon.cli(&["daemon", "status"]).ok().contains("not persisted"));
}

/// The records' disk fills up: writes fail, are counted and logged, and nothing
/// else is affected (panes run, output flows, requests answer); once there is
/// room again records are written again, and a restart brings back what was
/// written before and after.
#[tokio::test]
async fn a_full_disk_costs_only_the_records_it_could_not_write() {
    fugue_tests::require!("mount");
    struct Mount(std::path::PathBuf);
    impl Drop for Mount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
    let outer = private_dir();
    let state = outer.path().join("state");
    std::fs::create_dir(&state).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs"])
        .arg(&state)
        .status()
        .expect("mount");
    assert!(
        mounted.success(),
        "mounting a small tmpfs for the records (tests run as root)"
    );
    let _mount = Mount(state.clone());
    let mut daemon = Daemon::start_with_state_home(&state);
    let client = daemon.client().await;
    client.create_session("before", None, vec![]).await.unwrap();
    let first = client
        .create_pane(sh_spec("before", "echo first; exec sleep 60"))
        .await
        .unwrap();
    wait_for_text(&client, &first.id.to_string(), "first").await;
    let db = daemon.state_db();
    // A session's record is on disk (the writer gathers 20 ms of changes first).
    let written = |name: &'static str| wait_session_recorded(&db, name);
    written("before").await;

    // Fill the filesystem to the last byte.
    let filler = state.join("filler");
    {
        use std::io::Write;
        let mut file = std::fs::File::create(&filler).unwrap();
        let block = vec![0u8; 64 * 1024];
        while file.write_all(&block).is_ok() {}
        while file.write_all(&[0]).is_ok() {}
        let _ = file.sync_all();
    }
    client.create_session("while-full", None, vec![]).await.unwrap();
    let spec = sh_spec(
        "while-full",
        "for i in $(seq 1 3000); do echo line $i of a full disk; done; exec sleep 60",
    );
    let busy = client.create_pane(spec).await.unwrap().id.to_string();
    wait_for_text(&client, &busy, "line 3000 of a full disk").await;
    // Polled: failed writes are a figure of `daemon status`, pushed nowhere.
    let failed = wait_for("records to fail on the full disk", DEADLINE, || async {
        let status = client.daemon_status().await.ok()?;
        (status.unpersisted_writes > 0).then_some(status.unpersisted_writes)
    })
    .await;
    // Everything else goes on.
    let echo = client
        .create_pane(sh_spec("while-full", "cat"))
        .await
        .unwrap()
        .id
        .to_string();
    client.write_input(&echo, b"still typing\n").await.unwrap();
    wait_for_text(&client, &echo, "still typing").await;
    assert!(daemon.log().contains("records not persisted"), "{}", daemon.log());

    // Room again: new records are written.
    std::fs::remove_file(&filler).unwrap();
    client.create_session("after", None, vec![]).await.unwrap();
    let last = client
        .create_pane(sh_spec("after", "echo last; exec sleep 60"))
        .await
        .unwrap();
    wait_for_text(&client, &last.id.to_string(), "last").await;
    written("after").await;
    drop(client);
    daemon.signal_and_wait(libc::SIGKILL);
    daemon.restart(&[]);
    let names = daemon.session_names().await;
    assert!(
        names.contains(&"before".to_string()) && names.contains(&"after".to_string()),
        "{names:?} ({failed} records failed); log:\n{}",
        daemon.log()
    );
}
