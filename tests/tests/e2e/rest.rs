//! Many agents at almost no cost: an agent whose pane is quiet is not looked at
//! on a timer. Its state is looked at again when something that can change it
//! happens (here: its status file changes), which `fugue daemon status` counts
//! as looks. Run by root and, with the daemon and its clients as `nobody`, by a
//! user without privileges (pidfds and inotify need none).

use fugue_tests::{bin, wait_until, Daemon, DEADLINE};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a quiet pane is watched for looks.
const WINDOW: Duration = Duration::from_secs(5);

/// The daemon's count of looks at agents.
fn looks(cli: &dyn Fn(&[&str]) -> String) -> u64 {
    let status: serde_json::Value = serde_json::from_str(&cli(&["daemon", "status", "--json"])).expect("status JSON");
    status["agent_looks"].as_u64().expect("agent_looks")
}

/// The fake Claude Code (`claude`, keeping its status file in `config`) goes
/// quiet at its prompt; then no look is taken for [`WINDOW`]; then its status
/// file changes with nothing printed, and a look follows within the deadline.
fn quiet_agent_is_looked_at_only_on_change(cli: &dyn Fn(&[&str]) -> String, claude: &str, config: &Path) {
    cli(&["new-session", "rest"]);
    let config_var = format!("CLAUDE_CONFIG_DIR={}", config.display());
    let pane = cli(&[
        "run",
        "-s",
        "rest",
        "-e",
        "FUGUE_AGENT_HOOKS=0",
        "-e",
        &config_var,
        "--no-shell",
        "--",
        claude,
    ]);
    let pane = pane.trim();
    cli(&["wait", pane, "--agent-state", "idle", "--timeout", "20"]);
    // Output has stopped; the looks it caused (and their settle thresholds) end.
    let mut last = (looks(cli), Instant::now());
    // Polled: the measure is the absence of looks for 2 s (looks are counted, not pushed).
    let settled = wait_until("the looks to settle", Duration::from_secs(30), || {
        let now = looks(cli);
        if now != last.0 {
            last = (now, Instant::now());
        }
        (last.1.elapsed() >= Duration::from_secs(2)).then_some(now)
    });
    let until = Instant::now() + WINDOW;
    while Instant::now() < until {
        // Paced: the test is that nothing happens in WINDOW; it looks every 500 ms.
        std::thread::sleep(Duration::from_millis(500));
        let now = looks(cli);
        assert_eq!(now, settled, "a quiet agent pane was looked at {} times", now - settled);
    }
    // Its status file changes with no output: that alone brings a look.
    let status: serde_json::Value = serde_json::from_str(&cli(&["status", pane, "--json"])).expect("pane JSON");
    let pid = status["pid"].as_u64().expect("pid");
    let file = config.join(format!("sessions/{pid}.json"));
    let text = std::fs::read_to_string(&file).expect("the fake agent's status file");
    std::fs::write(&file, text.replace("\"idle\"", "\"busy\"")).unwrap();
    // Polled: a look that changes nothing pushes no event; the daemon's look counter is read.
    wait_until("a look after the status file changed", DEADLINE, || {
        (looks(cli) > settled).then_some(())
    });
}

#[test]
fn a_quiet_agent_pane_is_not_looked_at_on_a_timer() {
    let daemon = Daemon::start();
    let config = daemon.dir.path().join("claude-config");
    let claude = daemon.fake_claude();
    let cli = |args: &[&str]| daemon.cli(args).ok();
    quiet_agent_is_looked_at_only_on_change(&cli, &claude, &config);
}

/// The same, with fugued and every client run by `nobody`, in a directory of
/// its own: no privilege is needed to be told of changes. Needs root to become
/// `nobody` (CI runs as root); says so and skips otherwise.
#[test]
fn a_quiet_agent_pane_is_not_looked_at_without_privileges() {
    fugue_tests::require!("setpriv");
    if !rustix::process::geteuid().is_root() {
        println!("SKIPPED a_quiet_agent_pane_is_not_looked_at_without_privileges: needs root to become nobody");
        return;
    }
    let dir = tempfile::Builder::new()
        .prefix("fugue-nobody-")
        .tempdir_in("/tmp")
        .unwrap();
    let home = dir.path();
    // Binaries where `nobody` may run them (the build may sit under /root).
    for name in ["fugued", "fugue", "fake-agent"] {
        std::fs::copy(bin(name), home.join(name)).unwrap();
    }
    let agent_bin = home.join("agent-bin");
    std::fs::create_dir(&agent_bin).unwrap();
    std::os::unix::fs::symlink(home.join("fake-agent"), agent_bin.join("claude")).unwrap();
    chown_tree(home);
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(home, std::fs::Permissions::from_mode(0o700)).unwrap();
    let socket = home.join("fugue.sock");
    let as_nobody = |program: &Path| {
        let mut command = Command::new("setpriv");
        command
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(program)
            .env_clear()
            .env("HOME", home)
            .env("PATH", "/usr/bin:/bin")
            .env("XDG_RUNTIME_DIR", home)
            .env("XDG_STATE_HOME", home.join("state"))
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("SHELL", "/bin/sh");
        command
    };
    let log = home.join("fugued.log");
    let daemon = DaemonAsNobody(
        as_nobody(&home.join("fugued"))
            .arg("--socket")
            .arg(&socket)
            .args(["--state", "none", "--foreground"])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("start fugued as nobody"),
    );
    let dir = socket.parent().expect("the socket's directory");
    fugue_tests::files::until_changed(dir, "fugued as nobody to listen", DEADLINE, || {
        socket.exists().then_some(())
    });
    let cli = |args: &[&str]| {
        let out = as_nobody(&home.join("fugue"))
            .arg("--socket")
            .arg(&socket)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run fugue as nobody");
        assert!(
            out.status.success(),
            "fugue {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let config = home.join("claude-config");
    std::fs::create_dir(&config).unwrap();
    chown_tree(&config);
    let claude = agent_bin.join("claude");
    quiet_agent_is_looked_at_only_on_change(&cli, &claude.display().to_string(), &config);
    drop(daemon);
}

/// Gives `dir` and what is in it to `nobody`.
fn chown_tree(dir: &Path) {
    let status = Command::new("chown")
        .args(["-R", "65534:65534"])
        .arg(dir)
        .status()
        .unwrap();
    assert!(status.success());
}

/// fugued run by `nobody`, killed at the end of the test.
struct DaemonAsNobody(Child);

impl Drop for DaemonAsNobody {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
