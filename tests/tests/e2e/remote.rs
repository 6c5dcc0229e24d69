//! Daemons on other machines over OpenSSH, for real: a real sshd on a loopback
//! port (the test's own keys), `ssh fugue-test fugue proxy` carrying the
//! protocol, the CLI's `--host` and the hosts file, `--all-hosts` listings with
//! a host that cannot be reached, and `fugue attach` over ssh inside tmux.

use fugue_tests::mcp::ok as call;
use fugue_tests::sshd::{free_port, Sshd};
use fugue_tests::{bin, cli_with_env, wait_until, CliOutput, Daemon, Tmux, DEADLINE};

/// A daemon, an sshd, and a hosts file naming the daemon's machine `box` (and
/// `gone`, an ssh port nothing listens on).
/// Fields drop in order: sshd first, so a client still running when the test
/// ends (an MCP bridge is not waited for) cannot reach the host through it and
/// start a daemon there once the test's daemon is gone.
struct Setup {
    sshd: Sshd,
    daemon: Daemon,
    config: std::path::PathBuf,
}

impl Setup {
    /// A daemon, and a host reaching it whose `fugue proxy` starts no daemon.
    fn new() -> Setup {
        Self::with(Sshd::start())
    }

    fn with(sshd: Sshd) -> Setup {
        let daemon = Daemon::start();
        let config = daemon.dir.path().join("config");
        std::fs::create_dir_all(config.join("fugue")).unwrap();
        std::fs::write(
            config.join("fugue/hosts.toml"),
            format!(
                "[hosts.box]\nssh = \"fugue-test\"\nfugue_path = \"{}\"\nsocket = \"{}\"\n\n\
                 [hosts.gone]\nssh = \"127.0.0.1:{}\"\nfugue_path = \"{}\"\n",
                bin("fugue").display(),
                daemon.socket.display(),
                free_port(),
                bin("fugue").display(),
            ),
        )
        .unwrap();
        Setup { daemon, sshd, config }
    }

    /// `fugue ARGS` on "another machine": a socket that does not exist, so
    /// only `--host` can reach the daemon.
    fn fugue(&self, args: &[&str]) -> CliOutput {
        let nowhere = self.daemon.dir.path().join("no-daemon-here.sock");
        let ssh = self.sshd.fugue_ssh();
        let env = [
            ("XDG_CONFIG_HOME", self.config.to_str().unwrap()),
            ("FUGUE_SSH", ssh.as_str()),
        ];
        fugue_tests::cli_with_env(&nowhere, &self.daemon.dir, args, &env)
    }
}

type Mcp = rmcp::service::RunningService<rmcp::RoleClient, ()>;

/// The real `fugue-mcp` with `args`, seeing `setup`'s hosts file and sshd, run
/// from `home`, and an MCP client connected to it.
async fn mcp_bridge(setup: &Setup, args: &[&std::ffi::OsStr], home: &std::path::Path) -> Mcp {
    let mut command = tokio::process::Command::new(bin("fugue-mcp"));
    command
        .args(args)
        .env("XDG_CONFIG_HOME", &setup.config)
        .env("FUGUE_SSH", setup.sshd.fugue_ssh())
        .env("HOME", home)
        .env_remove("FUGUE_SESSION")
        .env_remove("FUGUE_HOST")
        .current_dir(home);
    fugue_tests::mcp::serve_stdio(command).await
}

#[test]
fn every_command_works_on_a_host_over_ssh() {
    fugue_tests::require!("/usr/sbin/sshd", "ssh", "ssh-keygen");
    let setup = Setup::new();
    let on_box = |args: &[&str]| {
        let mut all = vec!["--host", "box"];
        all.extend_from_slice(args);
        setup.fugue(&all)
    };
    on_box(&["new-session", "far"]).ok();
    let pane = on_box(&["run", "-s", "far", "--title", "remote-sh"]).ok();
    on_box(&["write", &pane, "echo far-$((40+2))", "--enter"]).ok();
    // One wait in that daemon (its WaitFor), then the read.
    let _ = on_box(&["wait", &pane, "--pattern", "far-42", "--timeout", "15"]);
    assert!(
        on_box(&["read", &pane]).ok().contains("far-42"),
        "the typed command's output, read over ssh"
    );
    assert!(on_box(&["capture", &pane]).ok().contains("far-42"));
    // It is the daemon on that machine: the local CLI on its socket sees the same.
    assert!(setup.daemon.cli(&["read", &pane]).ok().contains("far-42"));
    let job = on_box(&["run", "-s", "far", "--no-shell", "--", "sh", "-c", "exit 3"]).ok();
    let waited = on_box(&["--json", "wait", &job, "--timeout", "10"]).json();
    assert_eq!(waited["exit_code"], 3, "{waited}");
    let panes = on_box(&["--json", "panes", "far"]).json();
    assert_eq!(panes[0]["title"], "remote-sh");
    on_box(&["kill-session", "far"]).ok();
    assert!(!setup.daemon.cli(&["ls"]).ok().contains("far"));

    // A destination that is not in the hosts file is an ssh destination; its
    // failure says what ssh said, on one line.
    let unknown = setup.fugue(&["--host", "gone", "ls"]).err();
    assert!(
        unknown.starts_with("fugue: cannot connect to fugued at ssh://gone: ssh 127.0.0.1: ")
            && unknown.contains("Connection refused")
            && !unknown.contains('\n'),
        "{unknown}"
    );
    let bad = setup.fugue(&["--host=-oProxyCommand=x", "ls"]).err();
    assert!(bad.contains("expected [user@]host[:port]"), "{bad}");
}

#[test]
fn all_hosts_lists_every_machine_and_reports_the_one_that_cannot_be_reached() {
    fugue_tests::require!("/usr/sbin/sshd", "ssh", "ssh-keygen");
    let setup = Setup::new();
    setup.fugue(&["--host", "box", "new-session", "on-box"]).ok();
    let listed = setup.fugue(&["ls", "--all-hosts"]);
    let table = listed.ok();
    let header = table.lines().next().unwrap_or_default();
    assert!(header.starts_with("HOST") && header.contains("NAME"), "{table}");
    assert!(
        table.lines().any(|l| l.starts_with("box ") && l.contains("on-box")),
        "{table}"
    );
    assert!(
        listed
            .stderr
            .contains("fugue: host gone: cannot connect to fugued at ssh://gone"),
        "{}",
        listed.stderr
    );

    let json = setup.fugue(&["--json", "panes", "--all-hosts"]).json();
    let hosts: Vec<&str> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["host"].as_str().unwrap())
        .collect();
    assert_eq!(hosts, ["local", "box", "gone"]);
    // No daemon runs on "this machine" (its socket does not exist): reported, not started.
    assert!(
        json[0]["error"].as_str().unwrap().contains("no-daemon-here.sock"),
        "{json}"
    );
    assert!(json[1]["panes"].is_array() && json[2]["error"].is_string(), "{json}");
}

/// What starts no daemon here starts none on a host either: after the host's
/// daemon stops, `daemon status` and `daemon stop` over ssh say it is not
/// running, and no daemon comes up on its socket. (The proxy used to start one
/// for any connection, so `daemon status` started the daemon it asked about,
/// and a client reconnecting over ssh brought back a daemon that was stopped.)
/// What starts one here does there: `ls` over ssh brings the daemon up.
#[test]
fn what_starts_no_daemon_here_starts_none_on_a_host() {
    fugue_tests::require!("/usr/sbin/sshd", "ssh", "ssh-keygen");
    let mut setup = Setup::with(Sshd::start_autostarting());
    setup.fugue(&["--host", "box", "daemon", "stop"]).ok();
    setup.daemon.wait_exit();
    for args in [["daemon", "status"], ["daemon", "stop"]] {
        let mut all = vec!["--host", "box"];
        all.extend_from_slice(&args);
        let out = setup.fugue(&all);
        let said = format!("{}{}", out.stdout, out.stderr);
        assert!(said.contains("not running"), "{args:?}: {said}");
    }
    assert!(
        std::os::unix::net::UnixStream::connect(&setup.daemon.socket).is_err(),
        "a daemon answers on the host's socket"
    );

    let listed = setup.fugue(&["--host", "box", "ls"]).ok();
    assert!(listed.to_lowercase().contains("no sessions"), "{listed}");
    assert!(
        std::os::unix::net::UnixStream::connect(&setup.daemon.socket).is_ok(),
        "ls over ssh started no daemon on the host"
    );
    let started = setup.fugue(&["--host", "box", "--json", "daemon", "status"]).json()["pid"]
        .as_u64()
        .expect("the pid of the daemon ls started");
    setup.fugue(&["--host", "box", "daemon", "stop"]).ok();
    fugue_tests::procfs::wait_gone(started as u32, "the host's daemon to stop");
}

/// `fugue --host box attach`, typed into as a person would (inside tmux):
/// the redraw, typing, output and detaching all go through ssh, and a dropped
/// ssh connection is reconnected with a redraw.
#[test]
fn attach_works_over_ssh() {
    fugue_tests::require!("tmux", "/usr/sbin/sshd", "ssh", "ssh-keygen");
    let setup = Setup::new();
    setup.daemon.cli(&["new-session", "far"]).ok();
    let pane = setup.daemon.cli(&["run", "-s", "far"]).ok();
    setup
        .daemon
        .cli(&["write", &pane, "echo before-$((1+1))", "--enter"])
        .ok();
    let tmux = Tmux::start(setup.daemon.dir.path(), 90, 20);
    let command = format!(
        "XDG_CONFIG_HOME={} FUGUE_SSH='{}' {} --socket /nonexistent/s --host box attach {pane}",
        setup.config.display(),
        setup.sshd.fugue_ssh(),
        bin("fugue").display()
    );
    tmux.type_line("main", &command);
    tmux.wait_for("main", "before-2");
    tmux.type_line("main", "echo typed-$((6*7))");
    tmux.wait_for("main", "typed-42");
    setup.daemon.wait_text(&pane, "typed-42");
    // The ssh connection drops (killed here): attach reconnects through a new
    // one and redraws, and typing goes on.
    let ssh = format!("ssh -F {}", setup.sshd.client_config.display());
    let ssh_pids = || {
        let out = std::process::Command::new("pgrep").args(["-f", &ssh]).output().unwrap();
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(String::from)
            .collect::<Vec<_>>()
    };
    let before = ssh_pids();
    assert!(!before.is_empty(), "no ssh process behind the attachment");
    let killed = std::process::Command::new("pkill")
        .args(["-KILL", "-f", &ssh])
        .status()
        .unwrap();
    assert!(killed.success());
    // A new ssh means the client noticed and is reconnecting; what is typed
    // from then on waits for the new connection.
    // Polled: a new ssh process shows only in /proc.
    wait_until("attach to reconnect through a new ssh", DEADLINE, || {
        ssh_pids().iter().any(|pid| !before.contains(pid)).then_some(())
    });
    tmux.type_line("main", "echo again-$((5+5))");
    tmux.wait_for("main", "again-10");
    tmux.send_keys("main", &["C-\\"]);
    tmux.wait_for("main", "[detached from pane");
    assert_eq!(
        setup.daemon.cli(&["--json", "status", &pane]).json()["status"],
        "running"
    );
}

/// The proxy refuses to point elsewhere: it serves its own machine's daemon.
#[test]
fn proxy_takes_no_host() {
    let daemon = Daemon::start();
    let err = cli_with_env(&daemon.socket, &daemon.dir, &["--host", "box", "proxy"], &[]).err();
    assert!(err.contains("proxy serves this machine's daemon"), "{err}");
}

/// `fugue-mcp --host box`: an agent here runs and watches a terminal on the
/// other machine, through the real bridge and a real MCP client.
#[tokio::test]
async fn the_mcp_bridge_runs_terminals_on_a_host() {
    fugue_tests::require!("/usr/sbin/sshd", "ssh", "ssh-keygen");
    let setup = Setup::new();
    let args = ["--host", "box", "--socket", "/nonexistent/s"].map(std::ffi::OsStr::new);
    let mcp = mcp_bridge(&setup, &args, setup.daemon.dir.path()).await;
    let id = fugue_tests::mcp::start_echo_and_wait(&mcp).await;
    // The terminal runs in the daemon behind ssh.
    assert!(setup.daemon.cli(&["read", &id]).ok().contains("from-42"));
    let listed = call(&mcp, "fugue_list", serde_json::json!({})).await;
    assert!(listed.to_string().contains(&id), "{listed}");
    mcp.cancel().await.unwrap();
}

/// One bridge, several machines: terminals on a host are `HOST/ID`, started
/// with `host`, read and waited on like local ones, and `fugue_list(all_hosts)`
/// shows every host's (an unreachable one under `unreachable`).
#[tokio::test]
async fn the_mcp_bridge_addresses_terminals_on_every_host() {
    fugue_tests::require!("/usr/sbin/sshd", "ssh", "ssh-keygen");
    let setup = Setup::new();
    let here = Daemon::start();
    let mcp = mcp_bridge(&setup, &["--socket".as_ref(), here.socket.as_os_str()], here.dir.path()).await;
    let far = call(
        &mcp,
        "fugue_start",
        serde_json::json!({"purpose": "on box", "command": "echo on-box-$((3*3))", "host": "box"}),
    )
    .await;
    let far_id = far["terminal_id"].as_str().unwrap().to_string();
    let uuid = far_id.strip_prefix("box/").expect("a HOST/ID terminal id").to_string();
    call(
        &mcp,
        "fugue_wait",
        serde_json::json!({"terminal_id": far_id, "pattern": "on-box-9", "timeout_ms": 10000}),
    )
    .await;
    let read = call(&mcp, "fugue_read", serde_json::json!({"terminal_id": far_id})).await;
    assert!(read["text"].as_str().unwrap().contains("on-box-9"));
    assert!(setup.daemon.cli(&["read", &uuid]).ok().contains("on-box-9"));

    let near = call(
        &mcp,
        "fugue_start",
        serde_json::json!({"purpose": "here", "command": "sleep 30"}),
    )
    .await;
    let near_id = near["terminal_id"].as_str().unwrap().to_string();
    assert!(!near_id.contains('/'), "{near_id}");
    assert!(here.cli(&["status", &near_id]).ok().contains("running"));

    let listed = call(&mcp, "fugue_list", serde_json::json!({"all_hosts": true})).await;
    let terminals = listed["terminals"].as_array().unwrap();
    let find = |id: &str| terminals.iter().find(|t| t["id"] == id).cloned();
    assert_eq!(find(&far_id).map(|t| t["host"].clone()), Some("box".into()), "{listed}");
    assert!(find(&near_id).is_some_and(|t| t.get("host").is_none()), "{listed}");
    assert_eq!(listed["unreachable"][0]["host"], "gone", "{listed}");
    // Asked again soon, the host that failed is not dialled again yet (the
    // wait doubles from 1 s on each failure, so a slow machine's next call
    // still lands within one).
    let mut said = Vec::new();
    for _ in 0..4 {
        let again = call(&mcp, "fugue_list", serde_json::json!({"all_hosts": true})).await;
        let error = again["unreachable"][0]["error"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if error.contains("(not tried again for ") {
            break;
        }
        said.push(error);
    }
    assert!(said.len() < 4, "never backed off: {said:?}");
    mcp.cancel().await.unwrap();
}

/// `fugue top --all-hosts` in tmux: a host's panes as HOST/SESSION:INDEX, the
/// machines that cannot be reached said in the status line, and a host's pane
/// attached (over ssh) and killed from the overview.
#[test]
fn top_shows_every_host_and_acts_on_a_host_pane() {
    fugue_tests::require!("tmux", "/usr/sbin/sshd", "ssh", "ssh-keygen");
    let setup = Setup::new();
    setup.daemon.cli(&["new-session", "far"]).ok();
    let pane = setup
        .daemon
        .cli(&[
            "run",
            "-s",
            "far",
            "--no-shell",
            "--",
            "sh",
            "-c",
            "echo far-away-$((2*3)); exec sleep 600",
        ])
        .ok();
    let tmux = Tmux::start(setup.daemon.dir.path(), 150, 24);
    let command = format!(
        "XDG_CONFIG_HOME={} FUGUE_SSH='{}' {} --socket /nonexistent/s top --all-hosts",
        setup.config.display(),
        setup.sshd.fugue_ssh(),
        bin("fugue").display()
    );
    tmux.type_line("main", &command);
    let screen = tmux.wait_for("main", "box/far:0");
    assert!(screen.contains("host gone"), "{screen}");
    tmux.wait_for("main", "far-away-6");
    // Enter attaches to it through ssh; the detach key comes back.
    tmux.send_keys("main", &["/"]);
    tmux.run(&["send-keys", "-t", "main", "-l", "box/far"]);
    tmux.send_keys("main", &["Enter", "Enter"]);
    let attached = tmux.until("main", "attached over ssh", |screen| {
        (!screen.contains("fugue top ") && screen.contains("far-away-6")).then(|| screen.to_string())
    });
    assert!(!attached.contains("LAST LINE"), "{attached}");
    tmux.send_keys("main", &["C-\\"]);
    tmux.wait_for("main", "fugue top");
    // x then y kills it on the host.
    tmux.send_keys("main", &["x"]);
    tmux.wait_for("main", "Kill box/far:0?");
    tmux.send_keys("main", &["y"]);
    // `fugue wait` with no condition: until the process exits.
    let _ = setup.daemon.cli(&["wait", &pane, "--timeout", "15"]);
    let status = setup.daemon.cli(&["--json", "status", &pane]).json();
    assert_eq!(status["status"], "exited", "the host's pane ended: {status}");
    tmux.send_keys("main", &["q"]);
}
