//! Sandboxed panes on the real Docker Engine (`run --sandbox IMAGE`): the
//! pane's program runs in a container of its own, as a non-root user, with the
//! pane's directory and nothing else of this machine's files, within the
//! network and the limits asked for (read back from the engine), and the
//! container goes when the pane does.

use fugue_tests::containers::{docker, engine_or_skip, fugue_image, wait_containers_gone};
use fugue_tests::{Daemon, DEADLINE};
use std::path::Path;

/// The containers the engine holds for pane `pane` (by fugue's label).
fn containers_of(pane: &str) -> Vec<String> {
    let filter = format!("label=fugue.pane={pane}");
    docker(&["ps", "--all", "--quiet", "--filter", &filter])
        .lines()
        .map(str::to_string)
        .collect()
}

/// A project directory a non-root user (1000) owns, as a person's would be.
fn project(daemon: &Daemon, name: &str) -> std::path::PathBuf {
    let dir = daemon.dir.path().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::chown(&dir, Some(1000), Some(1000)).unwrap();
    dir
}

/// What a pane prints about where it runs: its user, whether this machine's
/// loopback answers, whether a file beside the project is visible; then it
/// writes a file into the project and stays.
fn probe(port: u16, beside: &Path) -> String {
    format!(
        "echo user-$(id -u); (echo hi > /dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo loopback-reached || echo loopback-unreachable; \
         test -e {} && echo sees-beside || echo no-beside; echo made > made.txt; echo probed; exec sleep 600",
        beside.display()
    )
}

fn read_until(daemon: &Daemon, pane: &str, what: &str) -> String {
    daemon.wait_text(pane, what)
}

/// Waits until `check` holds, looking again at each Docker event of pane
/// `pane`'s containers.
fn until_container_event<T>(pane: &str, what: &str, check: impl FnMut() -> Option<T>) -> T {
    let label = format!("label=fugue.pane={pane}");
    fugue_tests::containers::until_engine_event("docker", &[&label], what, DEADLINE, check)
}

#[test]
fn a_sandboxed_pane_is_isolated_limited_and_removed_with_its_pane() {
    fugue_tests::require!("docker", "dockerd", "bash");
    if !engine_or_skip() {
        return;
    }
    let image = fugue_image();
    let daemon = Daemon::start();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let beside = daemon.dir.path().join("beside.txt");
    std::fs::write(&beside, "this machine's own").unwrap();
    let boxed_dir = project(&daemon, "boxed");
    let boxed_cwd = boxed_dir.display().to_string();
    let line = probe(port, &beside);
    daemon.cli(&["new-session", "work"]).ok();
    let boxed = daemon
        .cli(&[
            "run",
            "-s",
            "work",
            "--sandbox",
            &image,
            "--network",
            "none",
            "--cpus",
            "0.5",
            "--memory",
            "256m",
            "--cwd",
            &boxed_cwd,
            "--",
            "bash",
            "-c",
            &line,
        ])
        .ok();
    // Beside it, the same probe unsandboxed, and one sandboxed on the host's network.
    let plain_dir = daemon.dir.path().join("plain");
    std::fs::create_dir(&plain_dir).unwrap();
    let plain_cwd = plain_dir.display().to_string();
    let plain = daemon
        .cli(&[
            "run",
            "-s",
            "work",
            "--cwd",
            &plain_cwd,
            "--no-shell",
            "--",
            "bash",
            "-c",
            &line,
        ])
        .ok();
    let host_dir = project(&daemon, "host-net");
    let on_host = daemon
        .cli(&[
            "run",
            "-s",
            "work",
            "--sandbox",
            &image,
            "--network",
            "host",
            "--cwd",
            &host_dir.display().to_string(),
            "--",
            "bash",
            "-c",
            &line,
        ])
        .ok();

    let inside = read_until(&daemon, &boxed, "probed");
    assert!(inside.contains("user-1000"), "{inside}");
    assert!(inside.contains("loopback-unreachable"), "{inside}");
    assert!(inside.contains("no-beside"), "{inside}");
    let outside = read_until(&daemon, &plain, "probed");
    assert!(
        outside.contains("loopback-reached") && outside.contains("sees-beside"),
        "{outside}"
    );
    let host_net = read_until(&daemon, &on_host, "probed");
    assert!(
        host_net.contains("loopback-reached") && host_net.contains("no-beside"),
        "{host_net}"
    );
    // It wrote into the project, as the project's owner.
    use std::os::unix::fs::MetadataExt;
    let made = std::fs::metadata(boxed_dir.join("made.txt")).expect("the sandbox wrote into its directory");
    assert_eq!((made.uid(), made.gid()), (1000, 1000));

    // The engine says what it runs: the limits, the network, one mount, no capability.
    let ids = containers_of(&boxed);
    assert_eq!(ids.len(), 1, "{ids:?}");
    let inspected = docker(&[
        "inspect",
        "--format",
        "{{.HostConfig.NanoCpus}} {{.HostConfig.Memory}} {{.HostConfig.NetworkMode}} {{.Config.User}} {{len .Mounts}} {{range .Mounts}}{{.Source}}{{end}} {{.HostConfig.CapDrop}}",
        &ids[0],
    ]);
    assert_eq!(
        inspected,
        format!("500000000 268435456 none 1000:1000 1 {boxed_cwd} [ALL]")
    );
    // The pane's record shows what runs: the sandbox around bash.
    let status = daemon.cli(&["--json", "status", &boxed]).ok();
    assert!(
        status.contains("sandbox-run") && status.contains("--network"),
        "{status}"
    );

    // Released, the container goes; a program that ends takes its container too.
    daemon.cli(&["release", &boxed]).ok();
    wait_containers_gone(&format!("fugue.pane={boxed}"), "the released pane's container to go");
    let ending = daemon
        .cli(&[
            "run",
            "-s",
            "work",
            "--sandbox",
            &image,
            "--cwd",
            &boxed_cwd,
            "--",
            "sh",
            "-c",
            "exit 3",
        ])
        .ok();
    // `fugue wait` with no condition: until the process exits (the daemon's
    // own reap), then how it ended.
    let _ = daemon.cli(&["wait", &ending, "--timeout", "15"]);
    let ended = daemon.cli(&["--json", "status", &ending]).json();
    assert_eq!(ended["exit_code"], 3, "the program's own exit status: {ended}");
    wait_containers_gone(&format!("fugue.pane={ending}"), "the ended pane's container to go");
    daemon.cli(&["release", &on_host]).ok();
    wait_containers_gone(
        &format!("fugue.pane={on_host}"),
        "the host-network pane's container to go",
    );
}

/// Each bad request is one line naming what was wrong, and makes no pane.
#[test]
fn bad_sandboxes_are_refused_before_any_pane() {
    fugue_tests::require!("docker", "dockerd");
    if !engine_or_skip() {
        return;
    }
    let image = fugue_image();
    let daemon = Daemon::start();
    daemon.cli(&["new-session", "work"]).ok();
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);
    let cases: [Case; 5] = [
        (
            &["--sandbox", "fugue-test:no-such-image"],
            &[],
            "no image 'fugue-test:no-such-image' on the docker engine",
        ),
        (&["--sandbox", &image, "--cpus", "lots"], &[], "bad --cpus 'lots'"),
        (&["--sandbox", &image, "--memory", "2gb"], &[], "bad --memory '2gb'"),
        (&["--sandbox=--privileged"], &[], "bad sandbox image"),
        (
            &["--sandbox", &image],
            &[("DOCKER_HOST", "unix:///nonexistent/docker.sock")],
            "the docker engine does not answer",
        ),
    ];
    for (flags, env, said) in cases {
        let mut args = vec!["run", "-s", "work"];
        args.extend_from_slice(flags);
        args.extend(["--", "true"]);
        let err = daemon.cli_with_env(&args, env).err();
        assert!(err.contains(said), "{flags:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{flags:?}: {err}");
    }
    let wide = daemon
        .cli(&[
            "run",
            "-s",
            "work",
            "--sandbox",
            &image,
            "--network",
            "wide",
            "--",
            "true",
        ])
        .err();
    assert!(wide.contains("use one of none, bridge, host"), "{wide}");
    let panes = daemon.cli(&["--json", "panes"]).ok();
    assert_eq!(panes.trim(), "[]", "a refused sandbox made a pane");
}

/// An agent CLI in a sandbox is an agent as any other: its state read from its
/// screen, a prompt delivered, its permission prompt approved through fugue.
#[test]
fn an_agent_in_a_sandbox_is_prompted_and_approved() {
    fugue_tests::require!("docker", "dockerd");
    if !engine_or_skip() {
        return;
    }
    let image = fugue_image();
    let daemon = Daemon::start();
    let dir = project(&daemon, "agent");
    daemon.cli(&["new-session", "work"]).ok();
    // The image's `claude` is the fake agent; --network none holds.
    let pane = daemon
        .cli(&[
            "run",
            "-s",
            "work",
            "--sandbox",
            &image,
            "--cwd",
            &dir.display().to_string(),
            "--",
            "claude",
        ])
        .ok();
    let state = |want: &str| daemon.wait_agent_state(&pane, want);
    let idle = state("idle");
    assert_eq!(idle["agent"], "claude", "{idle}");
    let receipt = daemon.cli(&["prompt", &pane, "build it"]).ok();
    assert!(receipt.contains("prompt submitted"), "{receipt}");
    let waiting = state("waiting_for_permission");
    let prompt_id = waiting["prompt_id"].as_str().expect("a prompt id").to_string();
    daemon.cli(&["approve", &pane, &prompt_id]).ok();
    state("idle");
    let screen = daemon.cli(&["capture", &pane]).ok();
    assert!(screen.contains("approved: build it"), "{screen}");
    assert_eq!(containers_of(&pane).len(), 1);
    daemon.cli(&["release", &pane]).ok();
    wait_containers_gone(&format!("fugue.pane={pane}"), "the agent's container to go");
}

/// A wrapper killed outright (SIGKILL: no clean-up) leaves its container; the
/// next wrapper of the same pane (here its restart) removes it by name before
/// it starts its own, so a pane never has two.
#[test]
fn a_container_left_by_a_killed_wrapper_is_removed_by_the_next() {
    fugue_tests::require!("docker", "dockerd");
    if !engine_or_skip() {
        return;
    }
    let image = fugue_image();
    let daemon = Daemon::start();
    let dir = project(&daemon, "restarted");
    daemon.cli(&["new-session", "work"]).ok();
    let pane = daemon
        .cli(&[
            "run",
            "-s",
            "work",
            "--sandbox",
            &image,
            "--restart",
            "always",
            "--cwd",
            &dir.display().to_string(),
            "--",
            "sleep",
            "600",
        ])
        .ok();
    let pid_of = || {
        let json = daemon.cli(&["--json", "status", &pane]).ok();
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        (
            value["pid"].as_u64().unwrap_or(0),
            value["restarts"].as_u64().unwrap_or(0),
        )
    };
    let first = until_container_event(&pane, "the first container", || containers_of(&pane).first().cloned());
    let (wrapper, _) = pid_of();
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(wrapper as i32).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    let second = until_container_event(&pane, "the restarted pane's own container", || {
        let ids = containers_of(&pane);
        (pid_of().1 == 1 && ids.len() == 1 && !first.starts_with(&ids[0]) && !ids[0].starts_with(&first))
            .then(|| ids[0].clone())
    });
    assert_ne!(first, second);
    daemon.cli(&["release", &pane]).ok();
    wait_containers_gone(&format!("fugue.pane={pane}"), "the container to go");
}

/// Through the MCP bridge (the official SDK's client validates): fugue_start
/// with a sandbox runs the command in a container; a bad one is one error
/// naming what was wrong.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_bridge_starts_a_sandboxed_terminal() {
    use fugue_tests::mcp::{fails, ok, stdio_bridge};
    use serde_json::json;
    fugue_tests::require!("docker", "dockerd");
    if !engine_or_skip() {
        return;
    }
    let image = fugue_image();
    let daemon = Daemon::start();
    let dir = project(&daemon, "mcp");
    let mcp = stdio_bridge(&daemon).await;
    let started = ok(
        &mcp,
        "fugue_start",
        json!({"purpose": "sandboxed probe", "command": "sh", "args": ["-c", "echo in-$(id -u); exec sleep 600"],
               "cwd": dir, "env": {"GREETING": "hello"},
               "sandbox": {"image": image, "network": "none", "memory": "128m"}}),
    )
    .await;
    let id = started["terminal_id"].as_str().unwrap().to_string();
    read_until(&daemon, &id, "in-1000");
    let ids = containers_of(&id);
    assert_eq!(ids.len(), 1, "{ids:?}");
    let env = docker(&[
        "inspect",
        "--format",
        "{{.HostConfig.Memory}} {{range .Config.Env}}{{.}} {{end}}",
        &ids[0],
    ]);
    assert!(env.starts_with("134217728 ") && env.contains("GREETING=hello"), "{env}");
    assert!(
        !env.contains("FUGUE_"),
        "fugue's socket or token went into the sandbox: {env}"
    );
    let bad = fails(
        &mcp,
        "fugue_start",
        json!({"purpose": "p", "command": "true", "sandbox": {"image": image, "network": "wide"}}),
    )
    .await;
    assert!(bad.contains("unknown sandbox network 'wide'"), "{bad}");
    ok(&mcp, "fugue_release", json!({"terminal_id": id})).await;
    wait_containers_gone(&format!("fugue.pane={id}"), "the terminal's container to go");
    let _ = mcp.cancel().await;
}

/// A sandbox in a worktree: the worktree is its directory, and the
/// repository's git directory is there too (a worktree's `.git` points into
/// it), with its hooks and config read-only.
#[test]
fn a_sandbox_in_a_worktree_sees_its_git_directory_but_cannot_write_hooks() {
    fugue_tests::require!("docker", "dockerd", "git", "bash");
    if !engine_or_skip() {
        return;
    }
    let image = fugue_image();
    let daemon = Daemon::start();
    let repo = daemon.dir.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@e", "-C"])
            .arg(&repo)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    git(&["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("a.txt"), "a\n").unwrap();
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "first"]);
    let root = daemon.dir.path().join("worktrees").display().to_string();
    let line = "read -r _ gd < .git; read -r head < \"$gd/HEAD\"; echo \"$head\"; echo probed; exec sleep 600";
    let out = daemon.cli_with_env(
        &[
            "run",
            "--sandbox",
            &image,
            "--worktree",
            "boxed",
            "--cwd",
            &repo.display().to_string(),
            "--",
            "bash",
            "-c",
            line,
        ],
        &[("FUGUE_WORKTREE_ROOT", &root)],
    );
    let pane = out.ok();
    let shown = read_until(&daemon, &pane, "probed");
    assert!(shown.contains("ref: refs/heads/fugue/boxed"), "{shown}");
    let ids = containers_of(&pane);
    let mounts = docker(&[
        "inspect",
        "--format",
        "{{range .Mounts}}{{.Destination}}={{.RW}} {{end}}",
        &ids[0],
    ]);
    let common = repo.join(".git").canonicalize().unwrap().display().to_string();
    let mounts: std::collections::BTreeSet<&str> = mounts.split_whitespace().collect();
    for want in [
        format!("{common}=true"),
        format!("{common}/hooks=false"),
        format!("{common}/config=false"),
    ] {
        assert!(mounts.contains(want.as_str()), "{want} not in {mounts:?}");
    }
    let worktrees = daemon.dir.path().join("worktrees").display().to_string();
    assert!(
        mounts.iter().any(|m| m.starts_with(&worktrees) && m.ends_with("=true")),
        "{mounts:?}"
    );
    assert_eq!(
        mounts.len(),
        4,
        "the worktree, the git directory, its hooks and config: {mounts:?}"
    );
    daemon
        .cli_with_env(&["release", &pane, "--discard"], &[("FUGUE_WORKTREE_ROOT", &root)])
        .ok();
    wait_containers_gone(&format!("fugue.pane={pane}"), "the container to go");
}

/// Profiles in sandbox.toml: what `run --sandbox` leaves out comes from the
/// profile of the agent it starts, else `[default]`; a flag wins over both.
#[test]
fn sandbox_profiles_fill_in_what_was_not_given() {
    fugue_tests::require!("docker", "dockerd");
    if !engine_or_skip() {
        return;
    }
    let image = fugue_image();
    let daemon = Daemon::start();
    let dir = project(&daemon, "profiled");
    let cwd = dir.display().to_string();
    let config = daemon.dir.path().join("config");
    std::fs::create_dir_all(config.join("fugue")).unwrap();
    let config_env = config.display().to_string();
    let env = [("XDG_CONFIG_HOME", config_env.as_str())];
    daemon.cli(&["new-session", "work"]).ok();
    // No profile and no image: said, no pane.
    let none = daemon
        .cli_with_env(&["run", "-s", "work", "--sandbox", "--cwd", &cwd, "--", "claude"], &env)
        .err();
    assert!(
        none.contains("no sandbox image given, and no [claude] or [default] profile with an image"),
        "{none}"
    );
    std::fs::write(
        config.join("fugue/sandbox.toml"),
        format!(
            "[default]\nimage = \"{image}\"\nmemory = \"64m\"\n\n[claude]\nimage = \"{image}\"\ncpus = \"0.25\"\nmemory = \"96m\"\n"
        ),
    )
    .unwrap();
    let limits = |pane: &str| {
        let ids = until_container_event(pane, "the pane's container", || containers_of(pane).first().cloned());
        docker(&[
            "inspect",
            "--format",
            "{{.HostConfig.NanoCpus}} {{.HostConfig.Memory}}",
            &ids,
        ])
    };
    let agent = daemon
        .cli_with_env(&["run", "-s", "work", "--sandbox", "--cwd", &cwd, "--", "claude"], &env)
        .ok();
    assert_eq!(limits(&agent), "250000000 100663296", "the [claude] profile");
    let other = daemon
        .cli_with_env(
            &[
                "run",
                "-s",
                "work",
                "--sandbox",
                "--memory",
                "128m",
                "--cwd",
                &cwd,
                "--",
                "sleep",
                "600",
            ],
            &env,
        )
        .ok();
    assert_eq!(limits(&other), "0 134217728", "[default], --memory over it");
    std::fs::write(config.join("fugue/sandbox.toml"), "[nomad]\nimage = \"x\"\n").unwrap();
    let bad = daemon
        .cli_with_env(&["run", "-s", "work", "--sandbox", "--", "sleep", "1"], &env)
        .err();
    assert!(bad.contains("unknown profile [nomad]"), "{bad}");
    assert_eq!(bad.lines().count(), 1, "{bad}");
    for pane in [&agent, &other] {
        daemon.cli(&["release", pane]).ok();
    }
    for pane in [&agent, &other] {
        wait_containers_gone(&format!("fugue.pane={pane}"), "the containers to go");
    }
}

/// What a wrapper killed outright leaves, fugued removes: the container of a
/// pane that ended for good (no restart to remove it), and, after fugued
/// itself was killed with its wrappers (here fugued stopped, so it cannot see
/// the wrapper end, the wrapper killed, then fugued), every container labelled with
/// its socket whose pane no longer runs, when it starts again. A container of
/// another daemon's (another socket's label) is left alone.
#[test]
fn containers_left_by_killed_wrappers_are_reconciled_by_fugued() {
    fugue_tests::require!("docker", "dockerd");
    if !engine_or_skip() {
        return;
    }
    use rustix::process::{kill_process, Pid, Signal};
    let signal = |pid: u64, signal: Signal| {
        let _ = kill_process(Pid::from_raw(pid as i32).unwrap(), signal);
    };
    let image = fugue_image();
    let mut daemon = Daemon::start();
    let dir = project(&daemon, "reconciled");
    daemon.cli(&["new-session", "work"]).ok();
    let run = || {
        let cwd = dir.display().to_string();
        daemon
            .cli(&[
                "run",
                "-s",
                "work",
                "--sandbox",
                &image,
                "--cwd",
                &cwd,
                "--",
                "sleep",
                "600",
            ])
            .ok()
    };
    let wrapper_of = |pane: &str| {
        let json = daemon.cli(&["--json", "status", pane]).ok();
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        value["pid"].as_u64().unwrap_or(0)
    };
    let running = |pane: &str| {
        let filter = format!("label=fugue.pane={pane}");
        !docker(&["ps", "--quiet", "--filter", &filter]).is_empty()
    };
    // Another daemon's container, by its labels: never fugued's to remove.
    let foreign = fugue_tests::containers::Container::start(&[
        "--label",
        "fugue.pane=00000000-0000-0000-0000-000000000000",
        "--label",
        "fugue.socket=/elsewhere/fugue.sock",
    ]);

    // A pane that ends for good, its wrapper killed: its container goes.
    let ended = run();
    until_container_event(&ended, "the first sandbox to run", || running(&ended).then_some(()));
    signal(wrapper_of(&ended), Signal::KILL);
    wait_containers_gone(
        &format!("fugue.pane={ended}"),
        "the ended pane's container to be removed by fugued",
    );

    // A crash that takes fugued and a wrapper (neither can clean up).
    let lost = run();
    until_container_event(&lost, "the second sandbox to run", || running(&lost).then_some(()));
    let wrapper = wrapper_of(&lost);
    signal(u64::from(daemon.pid()), Signal::STOP);
    signal(wrapper, Signal::KILL);
    // (A zombie until fugued, stopped, reaps it.)
    fugue_tests::procfs::wait_gone(wrapper as u32, "the wrapper to be dead");
    daemon.signal_and_wait(libc::SIGKILL);
    assert!(running(&lost), "the container outlived its wrapper and fugued");
    daemon.restart(&[]);
    wait_containers_gone(
        &format!("fugue.pane={lost}"),
        "the lost pane's container to be removed at start",
    );
    assert!(
        !containers_of("00000000-0000-0000-0000-000000000000").is_empty(),
        "another daemon's container stays"
    );
    drop(foreign);
}

/// `--engine podman` on the real podman (runc; the tests' containers.conf
/// bounds its ulimits, see `containers::podman_conf`): the program runs in a
/// podman container as the directory's owner, with the limits and network
/// asked for (read back from `podman inspect`), writing the mounted
/// directory; the container goes with the pane.
#[test]
fn a_sandbox_runs_on_podman() {
    fugue_tests::require!("podman");
    if !fugue_tests::containers::podman_or_skip() {
        return;
    }
    use fugue_tests::containers::{podman, podman_conf};
    let daemon = Daemon::start();
    let dir = project(&daemon, "podman");
    let script = "id -u > made.txt; echo podman-ran-$(id -u); exec sleep 600";
    let limits = ["--cpus", "0.5", "--memory", "256m"];
    let pane = run_on_podman(&daemon, &dir, &podman_conf(), &limits, script);
    read_until(&daemon, &pane, "podman-ran-1000");
    let made = dir.join("made.txt");
    assert_eq!(std::fs::read_to_string(&made).unwrap().trim(), "1000");
    assert_eq!(
        std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(&made).unwrap()),
        1000
    );
    let name = fugue_client::sandbox::container_name(&pane);
    let inspected = podman(&[
        "inspect",
        "--format",
        "{{.HostConfig.NanoCpus}} {{.HostConfig.Memory}} {{.HostConfig.NetworkMode}} {{.Config.User}}",
        &name,
    ]);
    assert_eq!(inspected, "500000000 268435456 none 1000:1000", "{inspected}");
    let labelled = podman(&[
        "ps",
        "--filter",
        &format!("label=fugue.pane={pane}"),
        "--format",
        "{{.Names}}",
    ]);
    assert_eq!(labelled, name);
    release_from_podman(&daemon, &pane);
}

/// Where the open-file limit is below podman's default (1048576, which the
/// runtime cannot set: "error setting rlimit type 7"), a sandbox still
/// starts: the container gets fugued's own limits (`--ulimit`), here a
/// daemon started with 2048 open files.
#[test]
fn a_podman_sandbox_starts_under_a_low_open_file_limit() {
    fugue_tests::require!("podman");
    if !fugue_tests::containers::podman_or_skip() {
        return;
    }
    let daemon = Daemon::start_with_rlimit_nofile(2048);
    let dir = project(&daemon, "podman-limits");
    let conf = fugue_tests::containers::podman_conf_with_engine_limits();
    let pane = run_on_podman(
        &daemon,
        &dir,
        &conf,
        &[],
        "echo open-files-$(ulimit -n); exec sleep 600",
    );
    read_until(&daemon, &pane, "open-files-2048");
    release_from_podman(&daemon, &pane);
}

/// `script` in a podman sandbox (podman configured by `conf`) in `dir`, with
/// `flags` (`--cpus`, ...), in session `work`; the pane's id.
fn run_on_podman(
    daemon: &Daemon,
    dir: &std::path::Path,
    conf: &std::path::Path,
    flags: &[&str],
    script: &str,
) -> String {
    let image = fugue_tests::containers::podman_image();
    let conf = format!("CONTAINERS_CONF={}", conf.display());
    let dir = dir.display().to_string();
    daemon.cli(&["new-session", "work"]).ok();
    let mut args = vec!["run", "-s", "work", "--sandbox", &image, "--engine", "podman"];
    args.extend_from_slice(flags);
    args.extend(["-e", &conf, "--cwd", &dir, "--", "sh", "-c", script]);
    daemon.cli(&args).ok()
}

/// Releases a podman sandbox's pane and waits until its container is gone.
fn release_from_podman(daemon: &Daemon, pane: &str) {
    let name = fugue_client::sandbox::container_name(pane);
    daemon.cli(&["release", pane]).ok();
    let named = format!("container={name}");
    fugue_tests::containers::until_engine_event("podman", &[&named], "the podman container to go", DEADLINE, || {
        fugue_tests::containers::podman(&["ps", "--all", "--quiet", "--filter", &format!("name=^{name}$")])
            .is_empty()
            .then_some(())
    });
}
