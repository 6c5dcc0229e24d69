//! fugued started at login: the systemd units `fugue daemon install` writes pass
//! `systemd-analyze verify`, no launchd agent is offered (fugued is Linux-only), and
//! socket activation works for real: `systemd-socket-activate` holds the socket,
//! starts fugued on the first connection and hands it the listening socket, and
//! fugued tells a service manager when it is ready.

use fugue_tests::{bin, cli, cli_with_env, private_dir, send_signal, wait_until, DEADLINE};
use std::os::unix::net::UnixDatagram;
use std::path::Path;
use std::process::{Command, Stdio};

#[test]
fn the_systemd_units_verify_and_uninstall_removes_them() {
    fugue_tests::require!("systemd-analyze");
    let dir = private_dir();
    let socket = dir.path().join("fugue.sock");
    let config = dir.path().join("config");
    let env = [("XDG_CONFIG_HOME", config.to_str().unwrap())];
    let install = |args: &[&str]| {
        let mut all = vec!["daemon"];
        all.extend_from_slice(args);
        cli_with_env(&socket, &dir, &all, &env)
    };

    // --print changes nothing and shows the files and the commands it would run.
    let printed = install(&["install", "--print", "--manager", "systemd"]).ok();
    assert!(
        printed.contains("systemctl --user enable --now fugued.socket fugued.service"),
        "{printed}"
    );
    let units = config.join("systemd/user");
    assert!(!units.exists());

    let said = install(&["install", "--no-enable", "--manager", "systemd"]).ok();
    assert!(said.starts_with("installed "), "{said}");
    let service = std::fs::read_to_string(units.join("fugued.service")).unwrap();
    let fugued = std::fs::canonicalize(bin("fugued")).unwrap();
    assert!(
        service.contains(&format!(
            "ExecStart={} --foreground --socket {}",
            fugued.display(),
            socket.display()
        )),
        "{service}"
    );
    let verify = Command::new("systemd-analyze")
        .arg("verify")
        .arg(units.join("fugued.socket"))
        .arg(units.join("fugued.service"))
        .output()
        .expect("systemd-analyze (Debian's systemd package; scripts/test installs it)");
    let complaints = String::from_utf8_lossy(&verify.stderr);
    assert!(
        verify.status.success() && complaints.trim().is_empty(),
        "systemd-analyze verify: {complaints}"
    );

    install(&["uninstall", "--no-enable", "--manager", "systemd"]).ok();
    assert!(!units.join("fugued.socket").exists() && !units.join("fugued.service").exists());
}

/// fugued is Linux-only (pidfd, /proc): no launchd agent is offered, and
/// asking for one is a one-line usage error.
#[test]
fn only_systemd_is_offered() {
    let dir = private_dir();
    let socket = dir.path().join("fugue.sock");
    let said = cli(&socket, &dir, &["daemon", "install", "--print", "--manager", "launchd"]).err();
    assert!(said.contains("invalid value 'launchd'"), "{said}");
    assert_eq!(said.trim().lines().count(), 1, "{said}");
}

/// `systemd-socket-activate` does what systemd's socket unit does: it listens,
/// and on the first connection runs fugued with the listening socket as
/// descriptor 3 (`LISTEN_FDS`). The CLI's connection is served by that fugued
/// (same pid: the activator execs it), which says READY=1 on `NOTIFY_SOCKET`,
/// and stopping it, even after a live upgrade, leaves the socket file to its owner.
#[test]
fn socket_activation_hands_fugued_its_socket_and_fugued_says_when_ready() {
    fugue_tests::require!("systemd-socket-activate");
    let dir = private_dir();
    let socket = dir.path().join("fugue.sock");
    let notify_path = dir.path().join("notify");
    let notify = UnixDatagram::bind(&notify_path).unwrap();
    notify.set_read_timeout(Some(DEADLINE)).unwrap();
    let state = dir.path().join("state");
    let mut activator = Command::new("systemd-socket-activate")
        .arg("--listen")
        .arg(&socket)
        .arg(format!("--setenv=NOTIFY_SOCKET={}", notify_path.display()))
        .arg(format!("--setenv=XDG_STATE_HOME={}", state.display()))
        .arg(format!("--setenv=HOME={}", dir.path().display()))
        .arg("--setenv=PATH")
        .arg(bin("fugued"))
        .arg("--foreground")
        .arg("--socket")
        .arg(&socket)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("systemd-socket-activate (Debian's systemd package; scripts/test installs it)");
    // Polled: systemd-socket-activate says nothing when it listens.
    wait_until("the activator to listen", DEADLINE, || {
        socket_exists(&socket).then_some(())
    });

    // The first connection starts fugued; nothing else could have (the CLI only
    // starts a daemon when nothing listens).
    let status = cli(&socket, &dir, &["--json", "daemon", "status"]).json();
    assert_eq!(
        status["pid"],
        activator.id(),
        "served by the activated fugued: {status}"
    );
    let mut ready = [0u8; 256];
    let n = notify.recv(&mut ready).expect("a readiness message");
    assert!(
        String::from_utf8_lossy(&ready[..n]).lines().any(|l| l == "READY=1"),
        "{:?}",
        String::from_utf8_lossy(&ready[..n])
    );
    // It serves for real, and its panes do not inherit the activation variables.
    cli(&socket, &dir, &["new-session", "dev"]).ok();
    let pane = cli(
        &socket,
        &dir,
        &["run", "-s", "dev", "--no-shell", "--", "sh", "-c", "env; echo env-done"],
    )
    .ok();
    // One wait in the daemon for the pane's last line, then the read.
    let _ = cli(
        &socket,
        &dir,
        &["wait", &pane, "--pattern", "env-done", "--timeout", "15"],
    );
    let env = cli(&socket, &dir, &["read", &pane]).ok();
    assert!(env.contains("env-done"), "the pane's environment: {env}");
    for variable in ["LISTEN_FDS=", "LISTEN_PID=", "NOTIFY_SOCKET="] {
        assert!(
            !env.lines().any(|l| l.starts_with(variable)),
            "{variable} leaked:\n{env}"
        );
    }

    // A live upgrade keeps the service manager's socket, and knows it is not its own.
    cli(&socket, &dir, &["daemon", "upgrade"]).ok();
    let status = cli(&socket, &dir, &["--json", "daemon", "status"]).json();
    assert_eq!(status["pid"], activator.id(), "{status}");

    cli(&socket, &dir, &["daemon", "stop"]).ok();
    fugue_tests::procfs::wait_gone(activator.id(), "fugued to exit");
    assert!(socket_exists(&socket), "the service manager's socket file was removed");
    if activator.try_wait().unwrap().is_none() {
        send_signal(activator.id(), libc::SIGKILL);
    }
}

fn socket_exists(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_socket())
}

/// A unit whose socket and `--socket` disagree is refused with what to change,
/// rather than served on a socket no client looks for.
#[test]
fn an_activated_socket_elsewhere_than_the_daemons_is_refused_clearly() {
    fugue_tests::require!("systemd-socket-activate");
    let dir = private_dir();
    let listening = dir.path().join("a.sock");
    let mut activator = Command::new("systemd-socket-activate")
        .arg("--listen")
        .arg(&listening)
        .arg(format!(
            "--setenv=XDG_STATE_HOME={}",
            dir.path().join("state").display()
        ))
        .arg(bin("fugued"))
        .arg("--foreground")
        .arg("--socket")
        .arg(dir.path().join("b.sock"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("systemd-socket-activate");
    // The file appears at bind(), a moment before listen(): connecting is the test.
    // Polled: systemd-socket-activate says nothing when it listens.
    let _trigger = wait_until("the activator to listen", DEADLINE, || {
        std::os::unix::net::UnixStream::connect(&listening).ok()
    });
    fugue_tests::procfs::wait_gone(activator.id(), "fugued to give up");
    let status = activator.wait().unwrap();
    assert!(!status.success());
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut activator.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(
        stderr.contains(&format!("but fugued serves {}", dir.path().join("b.sock").display()))
            && stderr.contains(&format!("give it --socket {}", listening.display())),
        "{stderr}"
    );
}
