//! The daemon process: socket rules, one daemon per socket, auto-start, signals.

use fugue_tests::{cli, private_dir, send_signal, wait_until, Daemon, DEADLINE};
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};

#[test]
fn a_second_daemon_is_refused_with_the_first_ones_pid() {
    let daemon = Daemon::start();
    let out = Command::new(fugue_tests::bin("fugued"))
        .args(["--foreground", "--socket"])
        .arg(&daemon.socket)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.trim(), format!("fugued: already running (pid {})", daemon.pid()));
    // The first one is untouched.
    assert!(daemon.cli(&["ls"]).status.success());
}

#[test]
fn a_stale_socket_is_replaced() {
    let dir = private_dir();
    let socket = dir.path().join("fugue.sock");
    // A socket file nobody listens on, as a crashed daemon leaves behind.
    drop(std::os::unix::net::UnixListener::bind(&socket).unwrap());
    assert!(socket.exists());
    let mut command = Command::new(fugue_tests::bin("fugued"));
    command
        .args(["--foreground", "--socket"])
        .arg(&socket)
        .env("XDG_STATE_HOME", dir.path())
        .stderr(std::fs::File::create(dir.path().join("fugued.log")).unwrap());
    let (mut child, _ready) = fugue_tests::spawn_ready(dir.path(), &mut command);
    // `daemon status` never starts a daemon: an `ls` here could auto-start a
    // second one that races this one for the socket.
    let status = cli(&socket, &dir, &["--json", "daemon", "status"]);
    assert_eq!(status.json()["pid"], child.id(), "{}", status.stdout);
    send_signal(child.id(), libc::SIGTERM);
    let status = fugue_tests::procfs::wait_child(&mut child, "fugued to exit");
    let log = std::fs::read_to_string(dir.path().join("fugued.log")).unwrap_or_default();
    assert!(
        status.success(),
        "fugued ended with {status} after SIGTERM; its log:\n{log}"
    );
    assert!(!socket.exists(), "the socket is removed on shutdown");
}

#[test]
fn a_socket_directory_open_to_others_is_refused() {
    let dir = private_dir();
    let open = dir.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = Command::new(fugue_tests::bin("fugued"))
        .args(["--foreground", "--socket"])
        .arg(open.join("s.sock"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("is open to group/others (mode 755)"), "{stderr}");
    // A missing directory is created private.
    let fresh = dir.path().join("new/sub/s.sock");
    let out = cli(&fresh, &dir, &["daemon", "start"]);
    out.ok();
    assert_eq!(
        std::fs::metadata(fresh.parent().unwrap()).unwrap().permissions().mode() & 0o777,
        0o700
    );
    cli(&fresh, &dir, &["daemon", "stop"]).ok();
}

/// A symlink to a private directory is refused by the daemon and by the client
/// (the check is on the link itself, as tmux's lstat).
#[test]
fn a_symlinked_socket_directory_is_refused_by_daemon_and_client() {
    let dir = private_dir();
    let real = dir.path().join("real");
    std::fs::create_dir(&real).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o700)).unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let out = Command::new(fugue_tests::bin("fugued"))
        .args(["--foreground", "--socket"])
        .arg(link.join("s.sock"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("is a symbolic link; refusing it"), "{stderr}");
    // A daemon on the real path; the client refuses to reach it through the link.
    let daemon_socket = real.join("s.sock");
    cli(&daemon_socket, &dir, &["daemon", "start"]).ok();
    let err = cli(&link.join("s.sock"), &dir, &["ls"]).err();
    assert!(err.contains("is a symbolic link"), "{err}");
    cli(&daemon_socket, &dir, &["daemon", "stop"]).ok();
}

#[test]
fn sigterm_leaves_no_child_process_alive() {
    let mut daemon = Daemon::start_with(&["--kill-grace", "500ms"]);
    daemon.cli(&["new-session", "dev"]).ok();
    let mut pids = Vec::new();
    let stubborn = "trap '' TERM HUP; echo armed; while :; do sleep 1; done";
    for args in [
        &["--", "sleep", "300"][..],
        &["--no-shell", "--", "sh", "-c", stubborn],
        &["--no-shell", "--", "sleep", "300"],
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
    // Grandchildren too: the shell pane's sleep.
    // Polled: a shell's child starting shows only in /proc.
    pids.extend(wait_until("the shell to start sleep", DEADLINE, || {
        let kids = fugue_tests::children(pids[0]);
        (!kids.is_empty()).then_some(kids)
    }));
    let socket = daemon.socket.clone();
    let status = daemon.signal_and_wait(libc::SIGTERM);
    assert!(status.success(), "fugued exits 0 on SIGTERM: {status:?}");
    for pid in &pids {
        fugue_tests::procfs::wait_gone(*pid, &format!("pid {pid} to be gone"));
    }
    assert!(!socket.exists());
}

#[test]
fn sighup_is_ignored_and_daemon_stop_shuts_down() {
    let mut daemon = Daemon::start();
    send_signal(daemon.pid(), libc::SIGHUP);
    daemon.cli(&["new-session", "after-hup"]).ok();
    let out = daemon.cli(&["daemon", "stop"]).ok();
    assert_eq!(out, format!("fugued stopped (pid {})", daemon.pid()));
    assert!(daemon.wait_exit().success());
    assert!(daemon.cli(&["daemon", "stop"]).ok().contains("not running"));
    let err = daemon.cli(&["daemon", "status"]).err();
    assert!(err.contains("fugued is not running"), "{err}");
}

#[test]
fn the_cli_starts_one_daemon_on_first_use_even_when_racing() {
    let dir = private_dir();
    let socket = dir.path().join("auto.sock");
    let runs: Vec<_> = (0..4)
        .map(|i| {
            let socket = socket.clone();
            let state = dir.path().join("state");
            std::thread::spawn(move || {
                Command::new(fugue_tests::bin("fugue"))
                    .arg("--socket")
                    .arg(&socket)
                    .args(["new-session", &format!("race{i}")])
                    .env("XDG_STATE_HOME", state)
                    .output()
                    .unwrap()
            })
        })
        .collect();
    for run in runs {
        let out = run.join().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let status = cli(&socket, &dir, &["--json", "daemon", "status"]).json();
    assert_eq!(status["sessions"], 4, "all four sessions live in one daemon");
    let pid = status["pid"].as_u64().unwrap() as u32;
    let daemons = || -> Vec<u32> {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                let cmdline = String::from_utf8_lossy(&cmdline);
                cmdline.contains("fugued") && cmdline.contains(socket.to_str().unwrap())
            })
            .collect()
    };
    // A daemon another CLI started may still be ending, having lost the
    // socket to the first: it ends by itself (CI saw one still there).
    for other in daemons().into_iter().filter(|other| *other != pid) {
        fugue_tests::procfs::wait_gone(other, "a daemon that lost the race to end by itself");
    }
    assert_eq!(daemons(), vec![pid]);
    let started = cli(&socket, &dir, &["daemon", "start"]).ok();
    assert_eq!(started, format!("fugued already running (pid {pid})"));
    cli(&socket, &dir, &["daemon", "stop"]).ok();
    fugue_tests::procfs::wait_gone(pid, "the daemon to exit");
}

/// The harness fails a test that leaves a fugued running after it ends, naming
/// the test, and ends that daemon: here one started with `fugue daemon start`
/// on a second socket in the test's directory.
#[test]
fn a_daemon_left_running_fails_its_test() {
    let daemon = Daemon::start();
    let other = daemon.dir.path().join("other.sock");
    let started = std::process::Command::new(fugue_tests::bin("fugue"))
        .arg("--socket")
        .arg(&other)
        .args(["daemon", "start"])
        .env("XDG_STATE_HOME", daemon.dir.path().join("other-state"))
        .output()
        .unwrap();
    assert!(started.status.success(), "{}", String::from_utf8_lossy(&started.stderr));
    let own = daemon.pid();
    let left: Vec<u32> = fugue_tests::daemons_under(daemon.dir.path())
        .into_iter()
        .filter(|pid| *pid != own)
        .collect();
    assert_eq!(left.len(), 1, "the second daemon runs: {left:?}");
    let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(daemon)));
    let message = dropped
        .expect_err("dropping the daemon fails the test")
        .downcast::<String>()
        .map(|m| *m)
        .unwrap_or_default();
    assert!(
        message.contains("a_daemon_left_running_fails_its_test left fugued running"),
        "{message}"
    );
    assert!(fugue_tests::process_gone(left[0]), "the leftover daemon was ended");
}
