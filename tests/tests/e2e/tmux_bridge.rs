//! fugue speaks tmux (docs/tmux.md): libtmux drives `fugue tmux` as it drives
//! tmux; a bridged pane's `tmux` opens panes beside it that are ordinary fugue
//! panes with their place and parent; tmux's kill commands end only what tmux
//! made; no pane can claim another as its parent; ids stay across a live
//! upgrade; what fugue's tmux does not take is refused in one line.

use fugue_client::protocol::requests as rq;
use fugue_client::protocol::PaneCaller;
use fugue_tests::{bin, Daemon, Tmux};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

/// `fugue --socket OURS tmux ARGS...` (stdout, stderr, exit code).
fn tmux(daemon: &Daemon, args: &[&str]) -> (String, String, i32) {
    let mut all = vec!["tmux"];
    all.extend_from_slice(args);
    let out = daemon.cli(&all);
    (out.stdout, out.stderr, out.status.code().unwrap_or(-1))
}

fn tmux_ok(daemon: &Daemon, args: &[&str]) -> String {
    let (stdout, stderr, code) = tmux(daemon, args);
    assert_eq!(code, 0, "tmux {args:?} failed: {stderr}");
    stdout.trim().to_string()
}

/// The panes of `session`, as `fugue panes --json` shows them.
fn panes(daemon: &Daemon, session: &str) -> Vec<Value> {
    daemon
        .cli(&["--json", "panes", session])
        .json()
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn pane_with_tmux_id<'a>(panes: &'a [Value], id: &str) -> Option<&'a Value> {
    panes.iter().find(|p| p["tmux"]["pane_id"] == id)
}

/// A `tmux` for programs outside any pane: this test's daemon's `fugue tmux`.
fn tmux_bin(daemon: &Daemon) -> PathBuf {
    let path = daemon.dir.path().join("tmux");
    let script = format!(
        "#!/bin/sh\nexec '{}' --socket '{}' tmux \"$@\"\n",
        bin("fugue").display(),
        daemon.socket.display()
    );
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn libtmux_drives_fugue_tmux_as_it_drives_tmux() {
    fugue_tests::require!("tests/tmux-clients/venv/bin/python");
    let daemon = Daemon::start();
    let clients = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tmux-clients");
    let out = Command::new(clients.join("venv/bin/python"))
        .arg(clients.join("libtmux_flow.py"))
        .arg(tmux_bin(&daemon))
        .arg("fuguetest")
        .env("HOME", daemon.dir.path())
        .env_remove("TMUX")
        .env_remove("FUGUE_PANE")
        .current_dir(daemon.dir.path())
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "libtmux failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap();
    assert_eq!(
        seen["version"], "3.6",
        "libtmux reads `tmux -V` (3.6a) as its version: {seen}"
    );
    assert_eq!(seen["sessions"], serde_json::json!(["work"]), "{seen}");
    assert_eq!(seen["windows"], serde_json::json!(["main", "second"]), "{seen}");
    assert_eq!(seen["window_panes"].as_array().map(Vec::len), Some(2), "{seen}");
    let captured = seen["captured"].as_array().unwrap();
    assert!(captured.iter().any(|l| l == "hello-from-libtmux"), "{seen}");
    assert_eq!(seen["after_kill_pane"].as_array().map(Vec::len), Some(1), "{seen}");
    assert_eq!(seen["after_kill_window"], serde_json::json!(["main"]), "{seen}");
    assert_eq!(seen["has_session_after_kill"], false, "{seen}");
    // The panes were fugue panes of the server's own session, and are gone.
    assert!(
        panes(&daemon, "tmux-fuguetest").is_empty(),
        "kill-server left panes behind"
    );
}

/// A bridged pane (`FUGUE_TMUX_BRIDGE=1`) running `script` in session `session`.
fn bridged(daemon: &Daemon, session: &str, script: &str) -> String {
    daemon
        .cli(&[
            "run",
            "-s",
            session,
            "-e",
            "FUGUE_TMUX_BRIDGE=1",
            "--no-shell",
            "--",
            "sh",
            "-c",
            script,
        ])
        .ok()
}

#[test]
fn a_bridged_panes_tmux_opens_panes_beside_it_and_kills_only_its_own() {
    let daemon = Daemon::start();
    daemon.cli(&["new-session", "work"]).ok();
    // A person's pane in the same session, without the bridge (not an agent).
    let person = daemon
        .cli(&["run", "-s", "work", "--no-shell", "--", "sleep", "600"])
        .ok();
    let lead = bridged(
        &daemon,
        "work",
        r#"echo "shim=$(command -v tmux) pane=$TMUX_PANE"
tmux display -p 'me=#{pane_id} session=#{session_name} window=#{window_id}'
child=$(tmux split-window -d -h -P -F '#{pane_id}' -- 'sleep 600')
echo "child=$child"
tmux list-panes -F 'listed #{pane_id} #{pane_width}x#{pane_height}'
tmux kill-pane -t "$TMUX_PANE" 2>&1; echo "kill-own=$?"
echo step-one
read go
tmux kill-server; echo "kill-server=$?"
tmux list-panes -F 'left #{pane_id}'
echo step-two
sleep 600"#,
    );
    let text = daemon.wait_text(&lead, "step-one");
    let field = |name: &str| -> String {
        text.lines()
            .find_map(|l| l.split_whitespace().find_map(|w| w.strip_prefix(&format!("{name}="))))
            .unwrap_or_else(|| panic!("no {name}= in:\n{text}"))
            .to_string()
    };
    assert!(field("shim").ends_with("/tmux-bridge/tmux"), "{text}");
    let (me, child) = (field("pane"), field("child"));
    assert_eq!(field("me"), me, "TMUX_PANE is the pane's own id: {text}");
    assert_eq!(field("session"), "work", "{text}");
    assert!(
        text.contains(&format!("listed {me} 59x40")),
        "the lead gave up half its 120 columns: {text}"
    );
    assert!(text.contains(&format!("listed {child} 60x40")), "{text}");
    assert!(
        text.contains("fugue started it") && text.contains("kill-own=1"),
        "{text}"
    );

    let listed = panes(&daemon, "work");
    let lead_view = pane_with_tmux_id(&listed, &me).expect("the lead has a place");
    let child_view = pane_with_tmux_id(&listed, &child).expect("the child is a fugue pane of the lead's session");
    assert_eq!(lead_view["tmux"]["made_by_tmux"], false);
    assert_eq!(child_view["tmux"]["made_by_tmux"], true);
    assert_eq!(
        child_view["tmux"]["parent"], lead_view["id"],
        "the child's parent is the lead"
    );
    assert_eq!(
        child_view["tmux"]["window_id"], lead_view["tmux"]["window_id"],
        "side by side"
    );
    assert_eq!(
        child_view["command"],
        serde_json::json!(["sleep", "600"]),
        "started directly"
    );
    let person_view = listed
        .iter()
        .find(|p| p["id"].as_str().unwrap().starts_with(&person))
        .unwrap();
    assert!(
        person_view.get("tmux").is_none(),
        "no bridge for a person's pane: {person_view}"
    );

    daemon.cli(&["write", &lead, "go\n"]).ok();
    let text = daemon.wait_text(&lead, "step-two");
    assert!(text.contains("kill-server=0"), "{text}");
    assert!(
        text.contains(&format!("left {me}")) && !text.contains(&format!("left {child}")),
        "{text}"
    );
    let listed = panes(&daemon, "work");
    assert!(pane_with_tmux_id(&listed, &child).is_none(), "the child was ended");
    let person_view = listed
        .iter()
        .find(|p| p["id"].as_str().unwrap().starts_with(&person))
        .unwrap();
    assert_eq!(person_view["status"], "running", "a person's pane is untouched");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_pane_can_claim_another_as_its_parent() {
    let daemon = Daemon::start();
    daemon.cli(&["new-session", "work"]).ok();
    let lead = bridged(&daemon, "work", "echo lead-ready; sleep 600");
    daemon.wait_text(&lead, "lead-ready");
    let lead_id = daemon.cli(&["--json", "status", &lead]).json()["id"]
        .as_str()
        .unwrap()
        .to_string();
    // Another bridged pane names the lead as its own pane: its token is not the lead's.
    let script = format!("FUGUE_PANE={lead_id} tmux split-window -d -- sleep 600; echo rc=$?; sleep 600");
    let other = bridged(&daemon, "work", &script);
    let text = daemon.wait_text(&other, "rc=");
    assert!(
        text.contains("FUGUE_PANE_TOKEN is not pane") && text.contains("rc=1"),
        "{text}"
    );
    // And a client that guesses a token.
    let client = daemon.client().await;
    let forged = client
        .call(rq::Tmux {
            argv: vec!["split-window".into(), "-d".into()],
            caller: Some(PaneCaller {
                pane: lead_id.clone(),
                token: "0".repeat(32),
            }),
            cwd: "/".into(),
            env: Vec::new(),
        })
        .await
        .unwrap_err();
    assert!(forged.to_string().contains("FUGUE_PANE_TOKEN"), "{forged}");
    assert_eq!(panes(&daemon, "work").len(), 2, "nothing was made");
}

#[test]
fn tmux_ids_stay_across_a_live_upgrade() {
    let daemon = Daemon::start();
    let made = tmux_ok(&daemon, &["new-session", "-d", "-s", "keep", "-P", "-F", "#{pane_id}"]);
    let split = tmux_ok(
        &daemon,
        &[
            "split-window",
            "-t",
            "keep",
            "-P",
            "-F",
            "#{pane_id}",
            "--",
            "sleep 600",
        ],
    );
    let format = [
        "list-panes",
        "-a",
        "-F",
        "#{session_id} #{window_id} #{pane_id} #{pane_index}",
    ];
    let before = tmux_ok(&daemon, &format);
    assert!(before.contains(&made) && before.contains(&split), "{before}");
    let upgraded = daemon.cli(&["daemon", "upgrade"]).ok();
    assert!(upgraded.starts_with("upgraded in place"), "{upgraded}");
    assert_eq!(tmux_ok(&daemon, &format), before, "same sessions, windows and panes");
    // No id is handed out twice.
    let next = tmux_ok(&daemon, &["split-window", "-t", &split, "-P", "-F", "#{pane_id}"]);
    let number = |id: &str| id.trim_start_matches('%').parse::<u32>().unwrap();
    assert!(number(&next) > number(&split), "{next} after {split}");
}

#[test]
fn what_fugues_tmux_does_not_take_is_refused_in_one_line() {
    let daemon = Daemon::start();
    assert_eq!(tmux_ok(&daemon, &["-V"]), "tmux 3.6a");
    let (_, err, code) = tmux(&daemon, &["pipe-pane", "-t", "x", "cat"]);
    assert_eq!(code, 1);
    assert!(
        err.starts_with("unknown command: pipe-pane") && err.contains("split-window"),
        "{err}"
    );
    let (_, err, code) = tmux(&daemon, &["new-session", "-d", "-Z"]);
    assert!(code == 1 && err.contains("-Z is not supported"), "{err}");
    let (_, err, code) = tmux(&daemon, &["-C", "ls"]);
    assert!(code == 1 && err.contains("control mode"), "{err}");
    let (_, err, code) = tmux(&daemon, &["ls"]);
    assert!(code == 1 && err.starts_with("no server running"), "{err}");
    // A name tmux allows and fugue does not: mapped, not refused.
    tmux_ok(&daemon, &["new-session", "-d", "-s", "my app.v2"]);
    assert_eq!(tmux_ok(&daemon, &["ls", "-F", "#{session_name}"]), "my_app_v2");
    let (_, err, code) = tmux(&daemon, &["has-session", "-t", "nope"]);
    assert_eq!((err.trim(), code), ("can't find session: nope", 1));
    let (_, err, code) = tmux(&daemon, &["capture-pane", "-t", "my_app_v2"]);
    assert!(code == 1 && err.contains("only -p"), "{err}");
    // The first failing command ends the chain, as in tmux.
    let (out, _, code) = tmux(&daemon, &["has-session", "-t", "nope", ";", "display", "-p", "after"]);
    assert_eq!((out.as_str(), code), ("", 1));
    tmux_ok(&daemon, &["kill-server"]);
}

/// A program that believes it runs in tmux wraps its notifications (and
/// clipboard writes) in tmux's passthrough: fugue reads the notification as if
/// sent plainly, and `fugue attach` (on a real PTY, kept by script(1)) never
/// writes the passthrough to the person's terminal, `--clipboard` or not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_programs_wrap_in_tmux_passthrough_is_read_and_kept_from_terminals() {
    use fugue_client::protocol::Event;
    fugue_tests::require!("script");
    let daemon = Daemon::start();
    daemon.cli(&["new-session", "wrap"]).ok();
    let client = daemon.client().await;
    let mut events = client.subscribe().await.unwrap();
    let script = r"read go; printf 'before\033Ptmux;\033\033]9;built in tmux\007\033\\\033Ptmux;\033\033]52;c;aGk=\007\033\\after\n'; sleep 600";
    let pane = bridged(&daemon, "wrap", script);
    // A person's terminal attached, from before the program prints.
    let typescript = daemon.dir.path().join("typescript");
    let attach = format!(
        "{} --socket {} attach --clipboard {pane}",
        bin("fugue").display(),
        daemon.socket.display()
    );
    let mut terminal = Command::new("script")
        .args(["-q", "-f", "-c", &attach])
        .arg(&typescript)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("script");
    fugue_tests::files::until_file_holds(&typescript, "\x1b[?25h");
    daemon.cli(&["write", &pane, "go\n"]).ok();
    let notice = tokio::time::timeout(fugue_tests::DEADLINE, async {
        loop {
            if let Some(Event::Notification { body, .. }) = events.recv().await {
                return body;
            }
        }
    })
    .await
    .expect("a notification event");
    assert_eq!(notice, "built in tmux");
    let shown = fugue_tests::files::until_file_holds(&typescript, "after");
    let _ = terminal.kill();
    let _ = terminal.wait();
    assert!(shown.contains("beforeafter"), "{shown:?}");
    assert!(!shown.contains("tmux;") && !shown.contains("]52"), "{shown:?}");
}

/// `fugue attach @N`, run in a real terminal (tmux): the window's panes side
/// by side by its layout, each sized to its tile; keys go to the focused pane
/// and prefix `o` moves the focus on; prefix `z` zooms it; the detach key
/// leaves.
#[test]
fn attach_shows_a_windows_panes_side_by_side() {
    fugue_tests::require!("tmux");
    let daemon = Daemon::start();
    let shell = "bash --norc --noprofile";
    let left = tmux_ok(
        &daemon,
        &["new-session", "-d", "-s", "w", "-P", "-F", "#{pane_id}", "--", shell],
    );
    let right = tmux_ok(
        &daemon,
        &["split-window", "-h", "-t", "w", "-P", "-F", "#{pane_id}", "--", shell],
    );
    tmux_ok(&daemon, &["select-layout", "-t", "w", "even-horizontal"]);
    let window = tmux_ok(&daemon, &["display", "-p", "-t", "w", "#{window_id}"]);
    let terminal = Tmux::start(daemon.dir.path(), 121, 30);
    terminal.type_line(
        "main",
        &format!(
            "{} --socket {} attach {window}",
            bin("fugue").display(),
            daemon.socket.display()
        ),
    );
    terminal.wait_for("main", "even-horizontal");
    let widths = tmux_ok(
        &daemon,
        &["list-panes", "-t", "w", "-F", "#{pane_width}x#{pane_height}"],
    );
    assert_eq!(
        widths, "60x29\n60x29",
        "121 columns: two tiles and a border; a status row"
    );

    terminal.type_line("main", "echo left-$((1+1))");
    terminal.wait_for("main", "left-2");
    terminal.send_keys("main", &["C-b", "o"]);
    terminal.wait_for("main", "(2/2)");
    terminal.type_line("main", "echo right-$((2+2))");
    let screen = terminal.wait_for("main", "right-4");
    let row = screen.lines().find(|l| l.contains("left-2")).unwrap_or_default();
    assert!(row.contains("right-4") && row.contains('│'), "side by side:\n{screen}");
    let pane_text = |id: &str| tmux_ok(&daemon, &["capture-pane", "-p", "-t", id]);
    assert!(pane_text(&left).contains("left-2") && !pane_text(&left).contains("right-4"));
    assert!(pane_text(&right).contains("right-4") && !pane_text(&right).contains("left-2"));

    terminal.send_keys("main", &["C-b", "z"]);
    terminal.wait_for("main", "zoomed");
    let zoomed = tmux_ok(&daemon, &["display", "-p", "-t", &right, "#{pane_width}"]);
    assert_eq!(zoomed, "121", "the zoomed pane takes the terminal");
    terminal.send_keys("main", &["C-\\"]);
    terminal.wait_for("main", "[detached from window");
}

/// A pane whose parent ends without ending it keeps running, and says its
/// parent exited.
#[test]
fn a_pane_outliving_its_parent_says_so() {
    let daemon = Daemon::start();
    daemon.cli(&["new-session", "work"]).ok();
    let lead = bridged(
        &daemon,
        "work",
        "child=$(tmux split-window -d -P -F '#{pane_id}' -- 'sleep 600'); echo \"child=$child\"; sleep 600",
    );
    let text = daemon.wait_text(&lead, "child=%");
    let child = text
        .lines()
        .find_map(|l| l.strip_prefix("child="))
        .unwrap()
        .trim()
        .to_string();
    let child_view = || {
        pane_with_tmux_id(&panes(&daemon, "work"), &child)
            .cloned()
            .expect("the child")
    };
    assert_eq!(child_view()["tmux"]["parent_exited"], false);
    daemon.cli(&["kill", &lead, "--signal", "KILL"]).ok();
    daemon.cli(&["wait", &lead, "--timeout", "15"]);
    let outlived = child_view();
    assert_eq!(outlived["status"], "running", "{outlived}");
    assert_eq!(outlived["tmux"]["parent_exited"], true, "{outlived}");
    let overview = daemon.cli(&["--json", "overview", "work"]).json();
    assert!(overview.to_string().contains("\"parent_exited\":true"), "{overview}");
}

/// Servers are labels: `-S PATH` makes no file there, each server lists only
/// its own sessions, and one server's `kill-server` leaves another's panes.
#[test]
fn servers_are_labels_and_kill_server_stays_on_its_own() {
    let daemon = Daemon::start();
    let path = daemon.dir.path().join("agent.sock");
    let path = path.to_str().unwrap();
    tmux_ok(
        &daemon,
        &["-S", path, "new-session", "-d", "-s", "mine", "--", "sleep 600"],
    );
    tmux_ok(
        &daemon,
        &["-L", "other", "new-session", "-d", "-s", "theirs", "--", "sleep 600"],
    );
    assert!(!std::path::Path::new(path).exists(), "no file at the -S path");
    assert_eq!(tmux_ok(&daemon, &["-S", path, "ls", "-F", "#{session_name}"]), "mine");
    assert_eq!(
        tmux_ok(&daemon, &["-L", "other", "ls", "-F", "#{session_name}"]),
        "theirs"
    );
    tmux_ok(&daemon, &["-S", path, "kill-server"]);
    let (_, err, code) = tmux(&daemon, &["-S", path, "ls"]);
    assert!(code == 1 && err.starts_with("no server running"), "{err}");
    assert_eq!(
        tmux_ok(&daemon, &["-L", "other", "ls", "-F", "#{session_name}"]),
        "theirs"
    );
    assert!(!std::path::Path::new(path).exists(), "nor after");
}

/// The daemon's log says which tmux commands ran on what, never what
/// `send-keys` typed (it may be a password), even at debug.
#[test]
fn what_send_keys_types_stays_out_of_the_log() {
    let daemon = Daemon::start();
    let pane = tmux_ok(
        &daemon,
        &[
            "new-session",
            "-d",
            "-s",
            "keys",
            "-P",
            "-F",
            "#{fugue_pane}",
            "--",
            "cat",
        ],
    );
    tmux_ok(&daemon, &["send-keys", "-t", "keys", "hunter2-secret", "Enter"]);
    daemon.wait_text(&pane, "hunter2-secret");
    // The log is written as it comes: wait for the line of the call.
    let log = daemon.until_logged("\"send-keys -t keys\"");
    assert!(!log.contains("hunter2"), "what it typed is not logged:\n{log}");
}
