//! `--host` addresses other than ssh, for real: `exec:COMMAND` runs a command
//! whose stdio reaches `fugue proxy` (here the real `fugue proxy` of the test's
//! daemon, as a hosted sandbox's CLI would run it), through the CLI, `attach`
//! and the MCP bridge. Each runs from a CLI whose own socket does not exist, so
//! only the address can reach the daemon.

use fugue_tests::{bin, cli_with_env, wait_until, CliOutput, Daemon, Tmux, DEADLINE};

/// `exec:` reaching `daemon`'s proxy.
fn exec_address(daemon: &Daemon) -> String {
    format!(
        "exec:{} --socket {} proxy",
        bin("fugue").display(),
        daemon.socket.display()
    )
}

/// `fugue --host ADDRESS ARGS` from "elsewhere": a socket of its own that does
/// not exist.
fn fugue_at(daemon: &Daemon, address: &str, args: &[&str]) -> CliOutput {
    let nowhere = daemon.dir.path().join("no-daemon-here.sock");
    let mut all = vec!["--host", address];
    all.extend_from_slice(args);
    cli_with_env(&nowhere, &daemon.dir, &all, &[])
}

#[test]
fn exec_carries_every_command_and_says_why_it_failed() {
    let daemon = Daemon::start();
    let address = exec_address(&daemon);
    let at = |args: &[&str]| fugue_at(&daemon, &address, args);
    at(&["new-session", "far"]).ok();
    let pane = at(&["run", "-s", "far", "--title", "through-exec"]).ok();
    at(&["write", &pane, "echo far-$((40+2))", "--enter"]).ok();
    wait_until("the typed command's output, read through exec:", DEADLINE, || {
        at(&["read", &pane]).ok().contains("far-42").then_some(())
    });
    // It is that daemon: its own CLI sees the same pane.
    assert!(daemon.cli(&["read", &pane]).ok().contains("far-42"));
    let job = at(&["run", "-s", "far", "--no-shell", "--", "sh", "-c", "exit 3"]).ok();
    let waited = at(&["--json", "wait", &job, "--timeout", "10"]).json();
    assert_eq!(waited["exit_code"], 3, "{waited}");
    assert_eq!(at(&["--json", "panes", "far"]).json()[0]["title"], "through-exec");

    // A command that fails says what it said, on one line.
    let failed = fugue_at(&daemon, "exec:echo 'no such sandbox: s-1' >&2; exit 1", &["ls"]).err();
    assert!(
        failed.contains("cannot connect to fugued at exec:") && failed.contains("no such sandbox: s-1"),
        "{failed}"
    );
    assert!(!failed.trim_end().contains('\n'), "{failed}");
    // Bad addresses are refused before anything runs, naming the form.
    for (address, form) in [
        ("exec:", "exec:COMMAND"),
        ("docker://-it", "docker://CONTAINER"),
        ("podman://a b", "podman://CONTAINER"),
        ("k8s://just-a-pod", "k8s://[CONTEXT/]NAMESPACE/POD[:CONTAINER]"),
    ] {
        let refused = fugue_at(&daemon, address, &["ls"]).err();
        assert!(
            refused.contains("bad address") && refused.contains(form),
            "{address}: {refused}"
        );
    }
}

/// What starts no daemon locally (`daemon status`, `daemon stop`) starts none
/// through `exec:` either: the command's environment tells its proxy so.
#[test]
fn what_starts_no_daemon_starts_none_through_exec() {
    let mut daemon = Daemon::start();
    let address = exec_address(&daemon);
    fugue_at(&daemon, &address, &["daemon", "stop"]).ok();
    daemon.wait_exit();
    let out = fugue_at(&daemon, &address, &["daemon", "status"]);
    let said = format!("{}{}", out.stdout, out.stderr);
    assert!(said.contains("not running"), "{said}");
    assert!(
        std::os::unix::net::UnixStream::connect(&daemon.socket).is_err(),
        "daemon status through exec: started a daemon"
    );
    let listed = fugue_at(&daemon, &address, &["ls"]).ok();
    assert!(listed.to_lowercase().contains("no sessions"), "{listed}");
    fugue_at(&daemon, &address, &["daemon", "stop"]).ok();
    wait_until("the daemon ls started to stop", DEADLINE, || {
        std::os::unix::net::UnixStream::connect(&daemon.socket)
            .is_err()
            .then_some(())
    });
}

/// `fugue --host exec:... attach`, typed into inside tmux.
#[test]
fn attach_works_through_exec() {
    fugue_tests::require!("tmux");
    let daemon = Daemon::start();
    daemon.cli(&["new-session", "far"]).ok();
    let pane = daemon.cli(&["run", "-s", "far"]).ok();
    daemon.cli(&["write", &pane, "echo before-$((1+1))", "--enter"]).ok();
    let tmux = Tmux::start(daemon.dir.path(), 100, 20);
    let address = exec_address(&daemon);
    let command = format!(
        "{} --socket /nonexistent/s --host '{address}' attach {pane}",
        bin("fugue").display()
    );
    tmux.type_line("main", &command);
    tmux.wait_for("main", "before-2");
    tmux.type_line("main", "echo typed-$((6*7))");
    tmux.wait_for("main", "typed-42");
    assert!(daemon.cli(&["read", &pane]).ok().contains("typed-42"));
    tmux.send_keys("main", &["C-\\"]);
    tmux.wait_for("main", "[detached from pane");
}

/// `fugue-mcp --host exec:...`: an agent runs and waits on a terminal of the
/// daemon behind the command, through the real bridge and a real MCP client.
#[tokio::test]
async fn the_mcp_bridge_runs_terminals_through_exec() {
    let daemon = Daemon::start();
    let mut command = tokio::process::Command::new(bin("fugue-mcp"));
    command
        .args(["--host", &exec_address(&daemon), "--socket", "/nonexistent/s"])
        .env("HOME", daemon.dir.path())
        .env_remove("FUGUE_SESSION")
        .env_remove("FUGUE_HOST")
        .current_dir(daemon.dir.path());
    let mcp = fugue_tests::mcp::serve_stdio(command).await;
    let id = fugue_tests::mcp::start_echo_and_wait(&mcp).await;
    assert!(daemon.cli(&["read", &id]).ok().contains("from-42"));
    mcp.cancel().await.unwrap();
}

/// `docker://CONTAINER` against the real Docker Engine: the first command
/// starts fugued inside the container (through `docker exec -i ... fugue
/// proxy`), a pane runs there and is read from here; a container that is
/// gone is reported with what docker said, on one line.
#[test]
fn docker_reaches_a_daemon_in_a_container() {
    fugue_tests::require!("docker", "dockerd");
    if !fugue_tests::containers::engine_or_skip() {
        return;
    }
    let daemon = Daemon::start();
    let container = fugue_tests::containers::Container::start(&["--network", "none"]);
    let address = container.address();
    let at = |args: &[&str]| fugue_at(&daemon, &address, args);
    // Nothing runs there yet: status starts nothing.
    let status = at(&["daemon", "status"]);
    let said = format!("{}{}", status.stdout, status.stderr);
    assert!(said.contains("not running"), "{said}");
    at(&["new-session", "boxed"]).ok();
    let pane = at(&[
        "run",
        "-s",
        "boxed",
        "--no-shell",
        "--",
        "sh",
        "-c",
        "echo inside-$((6*7)); exec sleep 600",
    ])
    .ok();
    wait_until("the pane's output, read through docker exec", DEADLINE, || {
        at(&["read", &pane]).ok().contains("inside-42").then_some(())
    });
    // It runs in the container: the engine sees fugued and the pane's sleep there.
    let processes = fugue_tests::containers::docker(&["top", &container.name]);
    assert!(processes.contains("fugued"), "{processes}");
    assert!(processes.contains("sleep 600"), "{processes}");
    // And this machine's daemon has no such session.
    assert!(!daemon.cli(&["ls"]).ok().contains("boxed"));

    let gone = fugue_at(&daemon, "docker://fugue-test-no-such-container", &["ls"]).err();
    assert!(
        gone.contains("cannot connect to fugued at docker://fugue-test-no-such-container: docker exec fugue-test-no-such-container:")
            && gone.contains("No such container"),
        "{gone}"
    );
    assert!(!gone.trim_end().contains('\n'), "{gone}");
}

/// hosts.toml names addresses too; `ls --all-hosts` asks them together, and
/// one that never answers (black-holed: its command hangs) is reported once
/// its deadline passes while the others are listed.
#[test]
fn a_black_holed_host_delays_no_other() {
    let daemon = Daemon::start();
    daemon.cli(&["new-session", "near-work"]).ok();
    let config = daemon.dir.path().join("config");
    std::fs::create_dir_all(config.join("fugue")).unwrap();
    std::fs::write(
        config.join("fugue/hosts.toml"),
        format!(
            "[hosts.near]\naddress = \"{}\"\n\n[hosts.hole]\naddress = \"exec:sleep 600\"\n\n\
             [hosts.typo]\naddress = \"dokcer://x\"\n",
            exec_address(&daemon)
        ),
    )
    .unwrap();
    let env = [("XDG_CONFIG_HOME", config.to_str().unwrap())];
    let nowhere = daemon.dir.path().join("no-daemon-here.sock");
    // A hosts file with a bad entry is refused whole, naming it.
    let refused = cli_with_env(&nowhere, &daemon.dir, &["ls", "--all-hosts"], &env).err();
    assert!(
        refused.contains("host 'typo'") && refused.contains("dokcer://x"),
        "{refused}"
    );
    std::fs::write(
        config.join("fugue/hosts.toml"),
        format!(
            "[hosts.near]\naddress = \"{}\"\n\n[hosts.hole]\naddress = \"exec:sleep 600\"\n",
            exec_address(&daemon)
        ),
    )
    .unwrap();
    let started = std::time::Instant::now();
    let out = cli_with_env(&nowhere, &daemon.dir, &["ls", "--all-hosts"], &env);
    let took = started.elapsed();
    assert!(
        out.stdout.contains("near") && out.stdout.contains("near-work"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr.contains("host hole: did not answer within 10 s"),
        "{}",
        out.stderr
    );
    assert!(took < std::time::Duration::from_secs(20), "the listing took {took:?}");
}

/// `top --all-hosts` opens at once: this machine's panes and a quick host's
/// show while a black-holed host is still being asked, which is said in the
/// status line once its deadline passes.
#[test]
fn top_shows_what_answers_while_a_black_holed_host_is_asked() {
    fugue_tests::require!("tmux");
    let daemon = Daemon::start();
    let far = Daemon::start();
    daemon.cli(&["new-session", "here"]).ok();
    daemon
        .cli(&["run", "-s", "here", "--no-shell", "--", "sleep", "600"])
        .ok();
    far.cli(&["new-session", "yonder"]).ok();
    far.cli(&["run", "-s", "yonder", "--no-shell", "--", "sleep", "600"])
        .ok();
    let config = daemon.dir.path().join("config");
    std::fs::create_dir_all(config.join("fugue")).unwrap();
    std::fs::write(
        config.join("fugue/hosts.toml"),
        format!(
            "[hosts.hole]\naddress = \"exec:sleep 600\"\n\n[hosts.far]\naddress = \"{}\"\n",
            exec_address(&far)
        ),
    )
    .unwrap();
    let tmux = Tmux::start(daemon.dir.path(), 150, 24);
    let started = std::time::Instant::now();
    tmux.type_line(
        "main",
        &format!(
            "XDG_CONFIG_HOME={} {} --socket {} top --all-hosts",
            config.display(),
            bin("fugue").display(),
            daemon.socket.display()
        ),
    );
    tmux.wait_for("main", "far/yonder:0");
    let screen = tmux.wait_for("main", "here:0");
    let shown_after = started.elapsed();
    assert!(
        shown_after < std::time::Duration::from_secs(8),
        "top waited for the black-holed host: {shown_after:?}\n{screen}"
    );
    assert!(!screen.contains("host hole"), "{screen}");
    let later = wait_until("the black-holed host said", std::time::Duration::from_secs(20), || {
        let screen = tmux.capture("main");
        screen
            .contains("host hole: did not answer within 10 s")
            .then_some(screen)
    });
    assert!(later.contains("far/yonder:0") && later.contains("here:0"), "{later}");
    tmux.send_keys("main", &["q"]);
}
