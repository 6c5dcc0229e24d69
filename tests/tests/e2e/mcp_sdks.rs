//! The official MCP SDK clients against the real `fugue-mcp`, over stdio and
//! Streamable HTTP, in every era each speaks: the TypeScript SDK 1.x
//! (`@modelcontextprotocol/sdk`, 2025-11-25), its 2.x client
//! (`@modelcontextprotocol/client`, both eras) and the Python SDK (`mcp` 2.3, both
//! eras). Each validates every tool's `structuredContent` against its
//! `outputSchema` and fails the call when they disagree, as the agents built on
//! them do; a hand-rolled client would not notice. They run
//! `tests/mcp-clients/scenario.json`: every tool, success and error paths.

use fugue_tests::{available, bin, Daemon, DEADLINE};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn clients_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("mcp-clients")
}

/// The programs and installs the clients need (scripts/test makes them).
fn ready() -> bool {
    available(&[
        "node",
        "tests/mcp-clients/node_modules/@modelcontextprotocol/sdk",
        "tests/mcp-clients/node_modules/@modelcontextprotocol/client",
        "tests/mcp-clients/venv/bin/python",
    ])
}

/// What a client of the scenario is, as its script takes it.
fn client_command(client: &str) -> Command {
    let dir = clients_dir();
    let mut command = match client {
        "python" => {
            let mut c = Command::new(dir.join("venv/bin/python"));
            c.arg(dir.join("py_client.py"));
            c
        }
        sdk => {
            let mut c = Command::new("node");
            c.arg(dir.join("ts-client.mjs")).arg(sdk);
            c
        }
    };
    command.env("FAKE_AGENT", bin("fake-agent")).current_dir(&dir);
    command
}

/// The bridge's own arguments: this daemon, spawning, merging and discarding
/// allowed (the SDK clients here declare no elicitation), and the stand-in agent as `claude`.
fn bridge_args(daemon: &Daemon) -> Vec<String> {
    vec![
        "--socket".into(),
        daemon.socket.display().to_string(),
        "--allow-spawn".into(),
        "--allow-merge".into(),
        "--allow-discard".into(),
        "--agent-command".into(),
        format!("claude={}", bin("fake-agent").display()),
        "--worktree-root".into(),
        daemon.dir.path().join("worktrees").display().to_string(),
    ]
}

/// A git repository with one commit, for the run's worktree steps.
fn repository() -> tempfile::TempDir {
    let repo = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| fugue_tests::git(repo.path(), args);
    git(&["init", "--quiet"]);
    std::fs::write(repo.path().join("a.txt"), "hello\n").unwrap();
    git(&["add", "a.txt"]);
    git(&["commit", "--quiet", "-m", "first"]);
    repo
}

/// Runs one client in one era; fails with what the client printed (the tool,
/// the step and the SDK's validation message) unless every step passed.
fn run_scenario(mut command: Command, label: &str, session: &str) {
    let repo = repository();
    let out = command
        .env("SESSION", session)
        .env("REPO", repo.path())
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{label}: cannot run the client: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let verdict = stdout.lines().rfind(|l| l.starts_with("PASS") || l.starts_with("FAIL"));
    match verdict {
        Some(line) if line.starts_with("PASS") && out.status.success() => {
            let steps = scenario_steps();
            assert!(line.ends_with(&format!("{steps} steps")), "{label}: {line}");
        }
        _ => panic!(
            "{label} failed:\n{stdout}\n--- stderr (tail) ---\n{}",
            tail(&stderr, 40)
        ),
    }
}

fn scenario_steps() -> usize {
    let text = std::fs::read_to_string(clients_dir().join("scenario.json")).unwrap();
    let scenario: serde_json::Value = serde_json::from_str(&text).unwrap();
    scenario["steps"].as_array().unwrap().len()
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Waits for every client run; the first that failed fails the test.
fn join_all(runs: Vec<std::thread::JoinHandle<()>>) {
    for run in runs {
        if let Err(panic) = run.join() {
            std::panic::resume_unwind(panic);
        }
    }
}

/// (client, era) pairs: every era each official client speaks.
const CLIENTS: [(&str, &str); 5] = [
    ("v1", "legacy"),
    ("v2", "legacy"),
    ("v2", "2026-07-28"),
    ("python", "legacy"),
    ("python", "2026-07-28"),
];

#[test]
fn the_official_sdk_clients_accept_every_tool_over_stdio() {
    if !ready() {
        return;
    }
    let daemon = Daemon::start();
    let runs: Vec<_> = CLIENTS
        .iter()
        .enumerate()
        .map(|(n, (client, era))| {
            let mut command = client_command(client);
            command
                .arg(era)
                .arg("stdio")
                .arg(bin("fugue-mcp"))
                .args(bridge_args(&daemon));
            let label = format!("{client} {era} stdio");
            std::thread::spawn(move || run_scenario(command, &label, &format!("stdio{n}")))
        })
        .collect();
    join_all(runs);
}

/// `fugue-mcp --http` on a loopback port, ended when dropped.
struct HttpBridge {
    child: std::process::Child,
    url: String,
}

impl HttpBridge {
    fn start(daemon: &Daemon) -> Self {
        let mut child = Command::new(bin("fugue-mcp"))
            .args(bridge_args(daemon))
            // The SDK clients here send no Authorization header; the token is
            // tested in mcp_http.rs.
            .args(["--http", "127.0.0.1:0", "--no-auth"])
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("fugue-mcp --http");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("fugue-mcp: MCP at ") {
                    let _ = tx.send(url.trim().to_string());
                }
            }
        });
        let url = rx.recv_timeout(DEADLINE).expect("fugue-mcp says where it listens");
        Self { child, url }
    }
}

impl Drop for HttpBridge {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_official_sdk_clients_accept_every_tool_over_http() {
    if !ready() {
        return;
    }
    let daemon = Daemon::start();
    let bridge = HttpBridge::start(&daemon);
    let runs: Vec<_> = CLIENTS
        .iter()
        .enumerate()
        .map(|(n, (client, era))| {
            let mut command = client_command(client);
            command.arg(era).arg("http").arg(&bridge.url);
            let label = format!("{client} {era} http");
            std::thread::spawn(move || run_scenario(command, &label, &format!("http{n}")))
        })
        .collect();
    join_all(runs);
}

/// The official Inspector's schema lint (`--cli --strict`, what flags
/// `["T", "null"]` and other types some clients cannot map) finds nothing in
/// fugue-mcp's tools.
#[test]
fn the_inspector_finds_no_unportable_schema() {
    if !available(&["node", "tests/mcp-clients/node_modules/@modelcontextprotocol/inspector"]) {
        return;
    }
    let daemon = Daemon::start();
    let launcher = clients_dir().join("node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js");
    let out = Command::new("node")
        .arg(launcher)
        .args(["--cli", "--strict"])
        .arg(bin("fugue-mcp"))
        .args(bridge_args(&daemon))
        .args(["--method", "tools/list"])
        .env("FUGUE_LOG", "error")
        .stdin(Stdio::null())
        .output()
        .expect("run the inspector");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the inspector failed:\n{stderr}");
    assert!(
        !stderr.to_lowercase().contains("portab"),
        "the inspector warns:\n{stderr}"
    );
    let listed: serde_json::Value = serde_json::from_str(&stdout).expect("tools/list as JSON");
    assert!(listed["tools"].as_array().is_some_and(|t| t.len() >= 23), "{stdout}");
}
