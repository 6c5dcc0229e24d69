//! `--host` addresses other than ssh, for real: `exec:COMMAND` runs a command
//! whose stdio reaches `fugue proxy` (here the real `fugue proxy` of the test's
//! daemon, as a hosted sandbox's CLI would run it), through the CLI, `attach`
//! and the MCP bridge. Each runs from a CLI whose own socket does not exist, so
//! only the address can reach the daemon.

use fugue_tests::{bin, cli_with_env, CliOutput, Daemon, Tmux};

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
    // One wait in that daemon (its WaitFor), then the read.
    let _ = at(&["wait", &pane, "--pattern", "far-42", "--timeout", "15"]);
    assert!(
        at(&["read", &pane]).ok().contains("far-42"),
        "the typed command's output, read through exec:"
    );
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
    let started = fugue_at(&daemon, &address, &["--json", "daemon", "status"]).json()["pid"]
        .as_u64()
        .expect("the pid of the daemon ls started");
    fugue_at(&daemon, &address, &["daemon", "stop"]).ok();
    fugue_tests::procfs::wait_gone(started as u32, "the daemon ls started to stop");
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
    // One wait in that daemon (its WaitFor), then the read.
    let _ = at(&["wait", &pane, "--pattern", "inside-42", "--timeout", "15"]);
    assert!(
        at(&["read", &pane]).ok().contains("inside-42"),
        "the pane's output, read through docker exec"
    );
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
    let later = tmux.wait_for("main", "host hole: did not answer within 10 s");
    assert!(later.contains("far/yonder:0") && later.contains("here:0"), "{later}");
    tmux.send_keys("main", &["q"]);
}

/// `k8s://NAMESPACE/POD:CONTAINER` with the real kubectl (1.32, WebSocket
/// exec `v5.channel.k8s.io`) against the test's API server, whose exec runs
/// `fugue proxy` reaching this test's daemon: commands and `attach` work
/// through it; a pod that is gone and a pod without fugue are each one line.
#[test]
fn kubernetes_exec_carries_commands_and_attach() {
    fugue_tests::require!("kubectl", "tmux");
    let daemon = Daemon::start();
    let server = fugue_tests::kube::FakeApiServer::start(1);
    server.exec_into(&daemon.socket);
    let kubeconfig = server.kubeconfig(daemon.dir.path());
    let home = daemon.dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let env = [
        ("KUBECONFIG", kubeconfig.to_str().unwrap()),
        ("HOME", home.to_str().unwrap()),
    ];
    let nowhere = daemon.dir.path().join("no-daemon-here.sock");
    let at = |address: &str, args: &[&str]| {
        let mut all = vec!["--host", address];
        all.extend_from_slice(args);
        cli_with_env(&nowhere, &daemon.dir, &all, &env)
    };
    let pod = "k8s://agents/worker-0:main";
    at(pod, &["new-session", "podded"]).ok();
    let pane = at(
        pod,
        &[
            "run",
            "-s",
            "podded",
            "--no-shell",
            "--",
            "sh",
            "-c",
            "echo in-pod-$((6*7)); exec sleep 600",
        ],
    )
    .ok();
    // One wait in that daemon (its WaitFor), then the read.
    let _ = at(pod, &["wait", &pane, "--pattern", "in-pod-42", "--timeout", "15"]);
    assert!(
        at(pod, &["read", &pane]).ok().contains("in-pod-42"),
        "the pane's output, read through kubectl exec"
    );
    assert!(
        daemon.cli(&["ls"]).ok().contains("podded"),
        "the pod's fugue is the test daemon"
    );
    let execs = server.execs.lock().unwrap().clone();
    assert!(
        execs
            .iter()
            .all(|c| c.ends_with(&["fugue".to_string(), "proxy".to_string()])),
        "{execs:?}"
    );

    // attach, typed into as a person would, through kubectl exec -i.
    let shell = daemon.cli(&["run", "-s", "podded"]).ok();
    daemon.cli(&["write", &shell, "echo before-$((1+1))", "--enter"]).ok();
    let tmux = Tmux::start(daemon.dir.path(), 100, 20);
    let command = format!(
        "KUBECONFIG={} HOME={} {} --socket /nonexistent/s --host {pod} attach {shell}",
        kubeconfig.display(),
        home.display(),
        bin("fugue").display()
    );
    tmux.type_line("main", &command);
    tmux.wait_for("main", "before-2");
    tmux.type_line("main", "echo typed-$((6*7))");
    tmux.wait_for("main", "typed-42");
    tmux.send_keys("main", &["C-\\"]);
    tmux.wait_for("main", "[detached from pane");

    let gone = at("k8s://agents/gone-0", &["ls"]).err();
    assert!(
        gone.contains("cannot connect to fugued at k8s://agents/gone-0") && gone.contains("not found"),
        "{gone}"
    );
    assert!(!gone.trim_end().contains('\n'), "{gone}");
    let bare = at("k8s://agents/no-fugue-0", &["ls"]).err();
    assert!(
        bare.contains("k8s://agents/no-fugue-0") && bare.contains("is fugue installed there, on its PATH?"),
        "{bare}"
    );
    assert!(!bare.trim_end().contains('\n'), "{bare}");
    eprintln!("a pod without fugue: {bare}");
}

/// Against a real cluster, when one is named: `FUGUE_TEST_KUBECONFIG` (its
/// kubeconfig) and `FUGUE_TEST_K8S_POD` (a `k8s://` address of a pod whose
/// image has fugue on its PATH). A session and a pane are made there, read
/// back and removed. Without them it says it is skipped (docs/remote.md).
#[test]
fn a_real_cluster_when_one_is_named() {
    let (Some(kubeconfig), Some(pod)) = (
        std::env::var_os("FUGUE_TEST_KUBECONFIG"),
        std::env::var("FUGUE_TEST_K8S_POD").ok(),
    ) else {
        eprintln!("skipped: FUGUE_TEST_KUBECONFIG and FUGUE_TEST_K8S_POD name no cluster");
        return;
    };
    fugue_tests::require!("kubectl");
    let daemon = Daemon::start();
    let nowhere = daemon.dir.path().join("no-daemon-here.sock");
    let env = [("KUBECONFIG", kubeconfig.to_str().unwrap())];
    let at = |args: &[&str]| {
        let mut all = vec!["--host", pod.as_str()];
        all.extend_from_slice(args);
        cli_with_env(&nowhere, &daemon.dir, &all, &env)
    };
    let session = format!("fugue-test-{}", std::process::id());
    at(&["new-session", &session]).ok();
    let pane = at(&[
        "run",
        "-s",
        &session,
        "--no-shell",
        "--",
        "sh",
        "-c",
        "echo in-cluster-$((6*7)); exec sleep 60",
    ])
    .ok();
    // One wait in that daemon (its WaitFor), then the read.
    let _ = at(&["wait", &pane, "--pattern", "in-cluster-42", "--timeout", "15"]);
    assert!(
        at(&["read", &pane]).ok().contains("in-cluster-42"),
        "the pane's output from the cluster"
    );
    at(&["kill-session", &session]).ok();
}

/// `podman://CONTAINER` against the real podman: the first command starts
/// fugued inside (through `podman exec -i ... fugue proxy`), a pane runs there
/// and is read from here; a container that is gone is one line.
#[test]
fn podman_reaches_a_daemon_in_a_container() {
    fugue_tests::require!("podman");
    if !fugue_tests::containers::podman_or_skip() {
        return;
    }
    let daemon = Daemon::start();
    let container = fugue_tests::containers::Container::start_on("podman", &["--network", "none"], "exec sleep 3600");
    let address = container.address();
    let conf = fugue_tests::containers::podman_conf();
    let env = [("CONTAINERS_CONF", conf.to_str().unwrap())];
    let nowhere = daemon.dir.path().join("no-daemon-here.sock");
    let at = |address: &str, args: &[&str]| {
        let mut all = vec!["--host", address];
        all.extend_from_slice(args);
        cli_with_env(&nowhere, &daemon.dir, &all, &env)
    };
    at(&address, &["new-session", "podded"]).ok();
    let pane = at(
        &address,
        &[
            "run",
            "-s",
            "podded",
            "--no-shell",
            "--",
            "sh",
            "-c",
            "echo in-podman-$((6*7)); exec sleep 600",
        ],
    )
    .ok();
    // One wait in that daemon (its WaitFor), then the read.
    let _ = at(
        &address,
        &["wait", &pane, "--pattern", "in-podman-42", "--timeout", "15"],
    );
    assert!(
        at(&address, &["read", &pane]).ok().contains("in-podman-42"),
        "the pane's output, read through podman exec"
    );
    let processes = fugue_tests::containers::podman(&["top", &container.name, "args"]);
    assert!(
        processes.contains("fugued") && processes.contains("sleep 600"),
        "{processes}"
    );
    assert!(!daemon.cli(&["ls"]).ok().contains("podded"));
    let gone = at("podman://fugue-test-no-such-container", &["ls"]).err();
    assert!(
        gone.contains("cannot connect to fugued at podman://fugue-test-no-such-container"),
        "{gone}"
    );
    assert!(!gone.trim_end().contains('\n'), "{gone}");
    eprintln!("a podman container that is gone: {gone}");
}
