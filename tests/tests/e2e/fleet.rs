//! A fleet found where it runs, on the real Docker Engine: `[[fleet]]`
//! sources of the hosts file find running containers by label; `fugue fleet`
//! says which answer, `panes --fleet` lists theirs, and `fleet --watch`
//! follows the engine's events as labelled containers start and stop.

use fugue_tests::containers::{docker, engine_or_skip, Container};
use fugue_tests::kube::FakeApiServer;
use fugue_tests::{bin, cli_with_env, wait_until, Daemon, DEADLINE};
use std::io::BufRead;
use std::time::Duration;

/// A label no other test's containers carry.
fn test_label(daemon: &Daemon) -> String {
    let tag = daemon.dir.path().file_name().unwrap().to_string_lossy().to_lowercase();
    format!("fugue.test.fleet={tag}")
}

/// A hosts file holding `text`; the environment that makes the CLI read it.
fn hosts_file(daemon: &Daemon, text: &str) -> String {
    let config = daemon.dir.path().join("config");
    std::fs::create_dir_all(config.join("fugue")).unwrap();
    std::fs::write(config.join("fugue/hosts.toml"), text).unwrap();
    config.display().to_string()
}

#[test]
fn a_fleet_is_found_by_label_and_followed_as_containers_come_and_go() {
    fugue_tests::require!("docker", "dockerd", "tmux");
    if !engine_or_skip() {
        return;
    }
    let daemon = Daemon::start();
    let label = test_label(&daemon);
    let config = hosts_file(&daemon, &format!("[[fleet]]\nkind = \"docker\"\nlabel = \"{label}\"\n"));
    let env = [("XDG_CONFIG_HOME", config.as_str())];
    let fugue = |args: &[&str]| cli_with_env(&daemon.socket, &daemon.dir, args, &env);

    let working = Container::start(&["--network", "none", "--label", &label]);
    let idle = Container::start(&["--network", "none", "--label", &label]);
    let unlabelled = Container::start(&["--network", "none"]);
    // A daemon with a pane in one of them (the first command there starts it).
    let working_address = working.address();
    let at_working = |args: &[&str]| {
        let mut all = vec!["--host", working_address.as_str()];
        all.extend_from_slice(args);
        cli_with_env(&daemon.socket, &daemon.dir, &all, &[])
    };
    at_working(&["new-session", "boxed"]).ok();
    at_working(&["run", "-s", "boxed", "--no-shell", "--", "sleep", "600"]).ok();

    let listed: serde_json::Value = serde_json::from_str(&fugue(&["--json", "fleet"]).ok()).unwrap();
    let endpoints = listed["endpoints"].as_array().unwrap();
    let find = |c: &Container| endpoints.iter().find(|e| e["endpoint"] == c.address()).cloned();
    let answering = find(&working).unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(
        (&answering["answers"], &answering["sessions"], &answering["panes"]),
        (&serde_json::json!(true), &serde_json::json!(1), &serde_json::json!(1)),
        "{listed}"
    );
    assert_eq!(answering["source"], format!("docker label {label}"));
    let silent = find(&idle).unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(silent["answers"], false, "{listed}");
    assert!(
        find(&unlabelled).is_none(),
        "an unlabelled container was found: {listed}"
    );
    assert_eq!(endpoints.len(), 2, "{listed}");
    // Looking started no daemon in the idle one.
    let processes = docker(&["top", &idle.name]);
    assert!(!processes.contains("fugued"), "{processes}");

    // The panes of the fleet, with this machine's.
    daemon.cli(&["new-session", "here"]).ok();
    daemon
        .cli(&["run", "-s", "here", "--no-shell", "--", "sleep", "600"])
        .ok();
    let panes = fugue(&["panes", "--fleet"]);
    assert!(
        panes.stdout.contains(&working.address()) && panes.stdout.contains("boxed"),
        "{}",
        panes.stdout
    );
    assert!(panes.stderr.contains(&idle.address()), "{}", panes.stderr);

    // And in top: the container's panes under its address, the one without a
    // daemon said in the status line.
    {
        let tmux = fugue_tests::Tmux::start(daemon.dir.path(), 160, 24);
        let command = format!(
            "XDG_CONFIG_HOME={config} {} --socket {} top --fleet",
            bin("fugue").display(),
            daemon.socket.display()
        );
        tmux.type_line("main", &command);
        let screen = tmux.wait_for("main", &format!("{}/boxed:0", working.address()));
        assert!(screen.contains("here:0"), "{screen}");
        tmux.wait_for("main", &format!("host {}", idle.address()));
        // A labelled container that starts now, its fugued and a pane made
        // by its own command, joins the open view (followed through docker
        // events; its daemon asked again while it starts).
        let late = Container::start_running(
            &["--network", "none", "--label", &label],
            "fugue new-session late && fugue run -s late --no-shell -- sleep 600 && exec sleep 3600",
        );
        tmux.wait_for("main", &format!("{}/late:0", late.address()));
        tmux.send_keys("main", &["q"]);
    }

    // Followed: a labelled container that starts is added, one that stops removed.
    let mut watch = std::process::Command::new(bin("fugue"))
        .args([
            "--socket",
            daemon.socket.to_str().unwrap(),
            "--json",
            "fleet",
            "--watch",
        ])
        .env("XDG_CONFIG_HOME", &config)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let (lines_tx, lines) = std::sync::mpsc::channel::<String>();
    let stdout = watch.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines_tx.send(line).is_err() {
                return;
            }
        }
    });
    // The first line is the listing; then events.
    let first = lines.recv_timeout(DEADLINE).expect("the listing");
    assert!(first.contains(&working.address()), "{first}");
    let next_event = |want: &str, name: &str| {
        let end = std::time::Instant::now() + DEADLINE;
        loop {
            let left = end.saturating_duration_since(std::time::Instant::now());
            let line = lines
                .recv_timeout(left.max(Duration::from_millis(1)))
                .unwrap_or_else(|_| panic!("no '{want}' event for {name}"));
            let event: serde_json::Value = serde_json::from_str(&line).unwrap();
            if event["event"] == want && event["endpoint"] == format!("docker://{name}") {
                return;
            }
        }
    };
    // The watch is up once the engine streams to it; a container started
    // before that would be missed, so start one until the watch sees it.
    // Polled: the engine says nothing when a watch's stream is up; containers are started until one is seen.
    let late = wait_until("the watch to see a labelled container start", DEADLINE, || {
        let late = Container::start(&["--network", "none", "--label", &label]);
        let seen = {
            let end = std::time::Instant::now() + Duration::from_secs(3);
            let mut seen = false;
            while let Ok(line) = lines.recv_timeout(end.saturating_duration_since(std::time::Instant::now())) {
                let event: serde_json::Value = serde_json::from_str(&line).unwrap();
                if event["event"] == "added" && event["endpoint"] == late.address() {
                    seen = true;
                    break;
                }
            }
            seen
        };
        seen.then_some(late)
    });
    docker(&["stop", "--time", "0", &late.name]);
    next_event("removed", &late.name);
    let _ = watch.kill();
    let _ = watch.wait();
}

#[test]
fn a_bad_fleet_source_is_one_line_naming_it() {
    let daemon = Daemon::start();
    let config = hosts_file(&daemon, "[[fleet]]\nkind = \"docker\"\nlabel = \"--all\"\n");
    let err = cli_with_env(&daemon.socket, &daemon.dir, &["fleet"], &[("XDG_CONFIG_HOME", &config)]).err();
    assert!(err.contains("bad fleet label '--all'"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let config = hosts_file(&daemon, "[[fleet]]\nkind = \"nomad\"\n");
    let err = cli_with_env(&daemon.socket, &daemon.dir, &["fleet"], &[("XDG_CONFIG_HOME", &config)]).err();
    assert!(err.contains("hosts.toml") && err.contains("nomad"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// A Kubernetes source, against the real kubectl and a small API server:
/// running pods that match the selector are the fleet (a pending one is not),
/// reached as k8s://NAMESPACE/POD:CONTAINER; a selector that matches 10 000
/// is listed up to the bound and the rest counted, never dialled.
#[test]
fn kubernetes_pods_are_found_by_selector_and_bounded() {
    fugue_tests::require!("kubectl");
    let daemon = Daemon::start();
    let config = hosts_file(
        &daemon,
        "[[fleet]]\nkind = \"kubernetes\"\nselector = \"app=agent\"\nnamespaces = [\"agents\"]\ncontainer = \"main\"\n",
    );
    let home = daemon.dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let run = |server: &FakeApiServer| {
        let kubeconfig = server.kubeconfig(daemon.dir.path());
        let env = [
            ("XDG_CONFIG_HOME", config.as_str()),
            ("KUBECONFIG", kubeconfig.to_str().unwrap()),
            ("HOME", home.to_str().unwrap()),
        ];
        let out = cli_with_env(&daemon.socket, &daemon.dir, &["--json", "fleet"], &env);
        serde_json::from_str::<serde_json::Value>(&out.ok()).unwrap()
    };
    let few = FakeApiServer::start(3);
    let listed = run(&few);
    let names: Vec<&str> = listed["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["endpoint"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "k8s://agents/worker-0:main",
            "k8s://agents/worker-1:main",
            "k8s://agents/worker-2:main"
        ],
        "{listed}"
    );
    assert!(listed["endpoints"][0]["answers"] == false, "{listed}");
    assert_eq!(listed["endpoints"][0]["source"], "pods app=agent");
    let queries = few.queries.lock().unwrap().clone();
    assert!(
        queries.iter().any(|q| q.contains("labelSelector=app%3Dagent")),
        "{queries:?}"
    );

    let many = FakeApiServer::start(10_000);
    let started = std::time::Instant::now();
    let listed = run(&many);
    assert_eq!(listed["endpoints"].as_array().unwrap().len(), 500, "bounded");
    assert_eq!(listed["over"], 9_500, "the rest counted");
    eprintln!("10 000 pods listed, 500 asked, in {:?}", started.elapsed());
}

/// A Kubernetes source is followed with a watch (the real kubectl's): a pod
/// that turns Running joins the fleet, a deleted one leaves it, a pending one
/// does not count, and a pod already listed is not added twice.
#[test]
fn kubernetes_pods_are_followed_with_a_watch() {
    fugue_tests::require!("kubectl");
    let daemon = Daemon::start();
    let config = hosts_file(
        &daemon,
        "[[fleet]]\nkind = \"kubernetes\"\nselector = \"app=agent\"\nnamespaces = [\"agents\"]\ncontainer = \"main\"\n",
    );
    let home = daemon.dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let server = FakeApiServer::start(1);
    let kubeconfig = server.kubeconfig(daemon.dir.path());
    let mut watch = std::process::Command::new(bin("fugue"))
        .args([
            "--socket",
            daemon.socket.to_str().unwrap(),
            "--json",
            "fleet",
            "--watch",
        ])
        .env("XDG_CONFIG_HOME", &config)
        .env("KUBECONFIG", &kubeconfig)
        .env("HOME", &home)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let (lines, said) = std::sync::mpsc::channel();
    let stdout = watch.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                return;
            }
        }
    });
    let next = || -> serde_json::Value {
        let line = said.recv_timeout(DEADLINE).expect("a line from fleet --watch");
        serde_json::from_str(&line).unwrap_or_else(|_| panic!("{line}"))
    };
    let listing = next();
    assert_eq!(
        listing["endpoints"][0]["endpoint"], "k8s://agents/worker-0:main",
        "{listing}"
    );
    server.wait_watching();
    // As a real API server does for a watch from the list's version: the pods
    // there now, as ADDED.
    server.event("ADDED", "worker-0", "Running");
    server.event("ADDED", "worker-7", "Pending");
    server.event("MODIFIED", "worker-7", "Running");
    let added = next();
    assert_eq!(added["event"], "added", "{added}");
    assert_eq!(added["endpoint"], "k8s://agents/worker-7:main", "{added}");
    assert_eq!(added["source"], "pods app=agent");
    server.event("MODIFIED", "worker-7", "Running");
    server.event("DELETED", "worker-0", "Running");
    let removed = next();
    assert_eq!(removed["event"], "removed", "{removed}");
    assert_eq!(removed["endpoint"], "k8s://agents/worker-0:main", "{removed}");
    let queries = server.queries.lock().unwrap().clone();
    assert!(
        queries
            .iter()
            .any(|q| q.contains("watch=") && q.contains("labelSelector=app%3Dagent")),
        "{queries:?}"
    );
    let _ = watch.kill();
    let _ = watch.wait();
}
