//! The browser page in a real browser: each test drives Debian's Chromium
//! through a script of tests/browser (playwright-core) against a real
//! fugue-web, and checks what the script left (its screenshots land under
//! target/browser-artifacts*). They run one at a time (.config/nextest.toml's
//! `browser` group): a Chromium takes a core to itself while it draws.

use crate::web::Web;
use fugue_tests::{bin, private_dir, Daemon, DEADLINE};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

/// The page in a real browser: tests/browser/tabs.mjs drives Debian's chromium
/// through add, type, rename, drag, a refused reorder, close, reload and a second
/// browser; its screenshots land in target/browser-artifacts.
#[test]
fn the_tab_bar_works_in_a_real_browser() {
    fugue_tests::require!("chromium", "node", "tests/browser/node_modules/playwright-core");
    let browser_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("browser");
    assert!(
        Path::new("/usr/bin/chromium").is_file(),
        "/usr/bin/chromium is missing: the README's test command installs it (apt-get install chromium)"
    );
    assert!(
        browser_dir.join("node_modules/playwright-core").is_dir(),
        "playwright-core is missing: run `npm ci` in tests/browser (the README's test command does)"
    );
    let daemon = Daemon::start();
    let web = Web::start(&daemon, &[]);
    let project = private_dir();
    let _ = std::fs::remove_dir_all(Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/browser-artifacts"));
    let (fugue, agent) = (bin("fugue"), bin("fake-agent"));
    let env = [
        ("FUGUE_BIN", fugue.as_os_str()),
        ("FUGUE_SOCKET_PATH", daemon.socket.as_os_str()),
        ("PROJECT", project.path().as_os_str()),
        ("FAKE_AGENT", agent.as_os_str()),
    ];
    let shots = [
        "1-echo",
        "3-refused-reorder",
        "4-second-browser",
        "5-exited",
        "6-agent-needs-you",
    ];
    run_browser_script("tabs", &web, "browser-artifacts", &env, &shots);
}

/// Runs the browser script `tests/browser/SCRIPT.mjs` against `web` with
/// `env` (and FUGUE_WEB_URL, ARTIFACTS: `target/ARTIFACTS`), then checks it
/// ended well and left each of `shots`.
fn run_browser_script(script: &str, web: &Web, artifacts: &str, env: &[(&str, &std::ffi::OsStr)], shots: &[&str]) {
    let browser_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("browser");
    let artifacts = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target").join(artifacts);
    let output = Command::new("node")
        .arg(browser_dir.join(format!("{script}.mjs")))
        .current_dir(&browser_dir)
        .env("FUGUE_WEB_URL", &web.login)
        .env("ARTIFACTS", &artifacts)
        .envs(env.iter().copied())
        .output()
        .expect("run node");
    browser_script_passed(&output, &artifacts, shots);
}

/// A browser script (tests/browser/*.mjs) ended well: exit 0, its last line
/// says every step passed, and each named screenshot is in `artifacts`.
fn browser_script_passed(output: &std::process::Output, artifacts: &Path, shots: &[&str]) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}");
    assert!(output.status.success(), "the browser test failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("all steps passed"), "{stdout}");
    for shot in shots {
        assert!(
            artifacts.join(format!("{shot}.png")).is_file(),
            "screenshot {shot} missing"
        );
    }
}

/// The overview in a real browser at a phone's viewport (390x844): every
/// session's panes, one made through the real MCP bridge and one agent made from
/// the CLI, its prompt shown and approved from the page (by its prompt_id), and
/// a pane of another session opened as a tab. tests/browser/overview.mjs drives
/// it; its screenshots land in target/browser-artifacts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overview_shows_every_session_and_approves_at_a_phone_viewport() {
    fugue_tests::require!("chromium", "node", "tests/browser/node_modules/playwright-core");
    let daemon = Daemon::start();
    // A pane made by an agent, through the real fugue-mcp over stdio.
    let mcp = fugue_tests::mcp::stdio_bridge(&daemon).await;
    let started = fugue_tests::mcp::ok(
        &mcp,
        "fugue_start",
        json!({"purpose": "made by an agent", "title": "mcp-made", "command": "sh",
               "args": ["-c", "echo from-mcp; exec sleep 600"], "shell": false}),
    )
    .await;
    let mcp_label = format!("{}:0", started["session"].as_str().expect("session"));
    // An agent started from the CLI that asks for permission at once.
    let agent = tokio::task::block_in_place(|| {
        daemon.cli(&["new-session", "cli"]).ok();
        let fake = bin("fake-agent").display().to_string();
        daemon
            .cli(&[
                "run",
                "-s",
                "cli",
                "--title",
                "agent",
                "--no-shell",
                "--",
                &fake,
                "ship it",
            ])
            .ok()
    });
    let web = Web::start(&daemon, &[]);
    // Its own directory: the tab bar's test, in parallel, empties its own.
    let mcp_pane = started["terminal_id"].as_str().expect("terminal id");
    let env = [
        ("MCP_LABEL", std::ffi::OsStr::new(&mcp_label)),
        ("MCP_PANE", std::ffi::OsStr::new(mcp_pane)),
        ("AGENT_LABEL", std::ffi::OsStr::new("cli:0")),
    ];
    let shots = ["7-overview-phone", "8-approved-phone", "9-opened-phone"];
    tokio::task::block_in_place(|| run_browser_script("overview", &web, "browser-artifacts-overview", &env, &shots));
    // The approval reached the agent: it ran what it asked for.
    tokio::task::block_in_place(|| daemon.wait_screen(&agent, "approved: ship it"));
    let _ = mcp.cancel().await;
}

/// The Changes view in a real browser at a desktop's and a phone's size: one
/// agent's uncommitted changes reviewed (a comment on a line and one on the
/// whole change reach the agent as one prompt, which starts its turn) and
/// discarded after a question; another worktree's commit merged after one.
/// tests/browser/changes.mjs drives it; its screenshots land in
/// target/browser-artifacts-changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_changes_view_reviews_merges_and_discards() {
    fugue_tests::require!("chromium", "node", "tests/browser/node_modules/playwright-core");
    let daemon = Daemon::start();
    let repo = crate::worktrees::repository(&daemon);
    let (review, reviewed, merging) = tokio::task::block_in_place(|| {
        daemon.cli(&["new", "w", "--cwd", repo.to_str().unwrap()]).ok();
        let agent = format!(
            "printf 'hello\\nworld\\n' > a.txt && echo 'new file' > b.txt && \
export FAKE_AGENT_PASTE_GUARD_MS=50 && exec {}",
            bin("fake-agent").display()
        );
        let (review, reviewed, _) = crate::worktrees::run_in_worktree(&daemon, "review", &agent);
        let commit = "echo other > c.txt && git add c.txt && \
git -c user.name=t -c user.email=t@t.invalid commit -qm other && echo other-done; exec sleep 600";
        let (merging, _, _) = crate::worktrees::run_in_worktree(&daemon, "other", commit);
        (review, reviewed, merging)
    });
    let client = daemon.client().await;
    fugue_tests::wait_for_text(&client, &review, "? for shortcuts").await;
    fugue_tests::wait_for_text(&client, &merging, "other-done").await;
    let web = Web::start(&daemon, &[]);
    let env = [
        ("REVIEW_PANE", std::ffi::OsStr::new(&review)),
        ("MERGE_PANE", std::ffi::OsStr::new(&merging)),
    ];
    let shots = [
        "10-changes-desktop",
        "11-comments-desktop",
        "12-changes-phone",
        "13-merged-phone",
    ];
    tokio::task::block_in_place(|| run_browser_script("changes", &web, "browser-artifacts-changes", &env, &shots));
    // Discarded: the worktree is gone; merged: main has the commit, and the
    // main checkout's own file is as it was.
    assert!(!reviewed.exists());
    assert_eq!(std::fs::read_to_string(repo.join("c.txt")).unwrap(), "other\n");
    assert_eq!(std::fs::read_to_string(repo.join("a.txt")).unwrap(), "hello\n");
}

/// A fan-out group compared in a real browser: two stand-in agents started
/// with `fugue fanout`, both done, the group's test passing for one and
/// failing for the other; at a phone's size the comparison fits, at a
/// desktop's the passing one is picked (merged) and the other discarded after
/// the person's yes. tests/browser/compare.mjs drives it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fan_out_group_is_compared_and_picked_in_the_browser() {
    fugue_tests::require!("chromium", "node", "tests/browser/node_modules/playwright-core");
    let daemon = Daemon::start();
    let repo = crate::worktrees::repository(&daemon);
    let started = tokio::task::block_in_place(|| crate::worktrees::fanout_race(&daemon, &repo, "claude:1,codex:1"));
    let panes: Vec<String> = started["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["pane"].as_str().unwrap().to_string())
        .collect();
    let client = daemon.client().await;
    for pane in &panes {
        fugue_tests::wait_for_text(&client, pane, "Do you want to proceed?").await;
        let asking = tokio::task::block_in_place(|| {
            let agent = daemon.wait_agent_state(pane, "waiting_for_permission");
            agent["prompt_id"].as_str().expect("the prompt's id").to_string()
        });
        tokio::task::block_in_place(|| daemon.cli(&["approve", pane, &asking]).ok());
        let idle = fugue_client::protocol::WaitUntil {
            agent_states: vec![fugue_client::protocol::AgentState::Idle],
            ..Default::default()
        };
        client.wait_for(pane, idle, DEADLINE).await.unwrap();
    }
    let web = Web::start(&daemon, &[]);
    let env = [("MEMBER_PANE", std::ffi::OsStr::new(&panes[0]))];
    let shots = ["14-compare-phone", "15-compare-desktop", "16-picked-desktop"];
    tokio::task::block_in_place(|| run_browser_script("compare", &web, "browser-artifacts-compare", &env, &shots));
    let made = std::fs::read_to_string(repo.join("made.txt")).unwrap();
    assert_eq!(made, format!("claude {}\n", started["members"][0]["port"]));
}

/// A fresh `fugue web` (no `--project`, no query string) opens on the overview
/// of every session, at a phone's and a desktop's size, while the CLI runs panes
/// in two sessions; a project's tab view says how many run elsewhere and opens
/// the overview in one click. tests/browser/first-view.mjs drives it; its
/// screenshots land in target/browser-artifacts-first-view.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_page_opens_on_what_runs() {
    fugue_tests::require!("chromium", "node", "tests/browser/node_modules/playwright-core");
    let daemon = Daemon::start();
    tokio::task::block_in_place(|| {
        for session in ["alpha", "beta"] {
            daemon.cli(&["new-session", session]).ok();
            daemon
                .cli(&[
                    "run",
                    "-s",
                    session,
                    "--title",
                    session,
                    "--no-shell",
                    "--",
                    "sleep",
                    "600",
                ])
                .ok();
        }
    });
    let web = Web::start(&daemon, &[]);
    let project = fugue_tests::private_dir();
    web.new_tab(project.path(), "main").await;
    let env = [
        ("LABELS", std::ffi::OsStr::new("alpha:0,beta:0")),
        ("PROJECT", project.path().as_os_str()),
        ("ELSEWHERE", std::ffi::OsStr::new("2 panes run elsewhere")),
    ];
    let shots = [
        "1-first-view-phone",
        "1-first-view-desktop",
        "2-tabs-elsewhere-phone",
        "2-tabs-elsewhere-desktop",
    ];
    tokio::task::block_in_place(|| {
        run_browser_script("first-view", &web, "browser-artifacts-first-view", &env, &shots)
    });
}

/// The fleet in the overview (`GET /api/fleet` and the page, in a real
/// browser): the hosts file's docker source finds two labelled containers,
/// one whose fugued has a pane (shown under its endpoint, with how to attach
/// to it) and one with no daemon (shown with why, and none started there);
/// an unlabelled container is not in it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overview_shows_the_fleet_by_endpoint() {
    use fugue_tests::containers::{engine_or_skip, Container};
    fugue_tests::require!(
        "docker",
        "dockerd",
        "chromium",
        "node",
        "tests/browser/node_modules/playwright-core"
    );
    if !engine_or_skip() {
        return;
    }
    let daemon = Daemon::start();
    let label = format!("fugue.test-fleet={}", std::process::id());
    let config = daemon.dir.path().join("config");
    std::fs::create_dir_all(config.join("fugue")).unwrap();
    std::fs::write(
        config.join("fugue/hosts.toml"),
        format!("[[fleet]]\nkind = \"docker\"\nlabel = \"{label}\"\n"),
    )
    .unwrap();
    let (working, idle, unlabelled) = tokio::task::block_in_place(|| {
        let working = Container::start(&["--network", "none", "--label", &label]);
        let idle = Container::start(&["--network", "none", "--label", &label]);
        let unlabelled = Container::start(&["--network", "none"]);
        let address = working.address();
        let at = |args: &[&str]| {
            let mut all = vec!["--host", address.as_str()];
            all.extend_from_slice(args);
            fugue_tests::cli_with_env(&daemon.socket, &daemon.dir, &all, &[])
        };
        at(&["new-session", "boxed"]).ok();
        at(&[
            "run",
            "-s",
            "boxed",
            "--title",
            "in-a-box",
            "--no-shell",
            "--",
            "sleep",
            "600",
        ])
        .ok();
        (working, idle, unlabelled)
    });
    let web = Web::start_with_env(&daemon, &[], &[("XDG_CONFIG_HOME", config.to_str().unwrap())]);
    let (status, fleet) = web.call(Method::GET, "/api/fleet", None).await;
    assert_eq!(status, StatusCode::OK, "{fleet}");
    let endpoints = fleet["endpoints"].as_array().expect("endpoints");
    let find = |c: &Container| endpoints.iter().find(|e| e["endpoint"] == c.address()).cloned();
    let boxed = find(&working).unwrap_or_else(|| panic!("{fleet}"));
    assert_eq!(boxed["error"], Value::Null, "{fleet}");
    assert_eq!(boxed["source"], format!("docker label {label}"));
    assert_eq!(boxed["panes"][0]["pane"]["title"], "in-a-box", "{fleet}");
    assert_eq!(boxed["panes"][0]["pane"]["session"], "boxed", "{fleet}");
    let silent = find(&idle).unwrap_or_else(|| panic!("{fleet}"));
    assert!(silent["error"].is_string(), "{fleet}");
    assert!(find(&unlabelled).is_none(), "{fleet}");
    assert_eq!(endpoints.len(), 2, "{fleet}");

    let (endpoint, silent) = (working.address(), idle.address());
    let env = [
        ("ENDPOINT", std::ffi::OsStr::new(&endpoint)),
        ("SILENT", std::ffi::OsStr::new(&silent)),
        ("LABEL", std::ffi::OsStr::new("boxed:0")),
    ];
    let shots = ["1-fleet-desktop"];
    tokio::task::block_in_place(|| run_browser_script("fleet", &web, "browser-artifacts-fleet", &env, &shots));
    let processes = fugue_tests::containers::docker(&["top", &idle.name]);
    assert!(!processes.contains("fugued"), "looking started a daemon: {processes}");
}

/// A tmux window's panes (made through `fugue tmux`) side by side in a real
/// browser: at a desktop's size in a grid from the overview's Window button,
/// at a phone's one at a time with a switcher, from a link to the window.
/// tests/browser/window.mjs drives it; its screenshots land in
/// target/browser-artifacts-window.
#[test]
fn a_windows_panes_show_side_by_side_and_one_at_a_time_on_a_phone() {
    fugue_tests::require!("chromium", "node", "tests/browser/node_modules/playwright-core");
    let daemon = Daemon::start();
    let tmux = |args: &[&str]| {
        let mut all = vec!["tmux"];
        all.extend_from_slice(args);
        daemon.cli(&all).ok()
    };
    let lead = tmux(&[
        "new-session",
        "-d",
        "-s",
        "team",
        "-P",
        "-F",
        "#{pane_id}",
        "--",
        "sh -c 'echo lead-here; exec sleep 600'",
    ]);
    let mate = tmux(&[
        "split-window",
        "-h",
        "-t",
        &lead,
        "-P",
        "-F",
        "#{pane_id}",
        "--",
        "sh -c 'echo mate-here; exec sleep 600'",
    ]);
    let window = tmux(&["display", "-p", "-t", &lead, "#{window_id}"]);
    for (id, text) in [(&lead, "lead-here"), (&mate, "mate-here")] {
        let pane = tmux(&["display", "-p", "-t", id, "#{fugue_pane}"]);
        daemon.wait_screen(&pane, text);
    }
    let web = Web::start(&daemon, &[]);
    let env = [("WINDOW", std::ffi::OsStr::new(&window))];
    let shots = ["13-window-desktop", "14-window-phone", "15-window-phone-switched"];
    run_browser_script("window", &web, "browser-artifacts-window", &env, &shots);
}

/// The installable page on a phone (390x844) with a push service: the page
/// subscribes with fugued's key and prompts a fake agent, which asks for
/// permission; "needs you" comes first; fugued's push (as web-push-testing
/// decrypted it) is delivered to the page's service worker, its Approve run
/// there answers the prompt (the agent goes on), the same push again answers
/// nothing, a tap opens the pane, and the page works offline.
/// tests/browser/push.mjs drives it; its screenshots land in
/// target/browser-artifacts-push. (tests/tests/agents.rs runs the same script
/// with a real Claude Code.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_approves_from_the_service_worker_once() {
    fugue_tests::require!(
        "chromium",
        "node",
        "tests/browser/node_modules/playwright-core",
        "tests/browser/node_modules/web-push-testing"
    );
    let daemon = Daemon::start_with_env(&[("FUGUE_TEST_PUSH_LOOPBACK", "1")]);
    let web = Web::start(&daemon, &[]);
    daemon.cli(&["new-session", "ag"]).ok();
    let agent = daemon.run_fake_claude("ag");
    daemon.wait_agent_state(&agent, "idle");
    let env = [
        ("AGENT_LABEL", std::ffi::OsStr::new("ag:0")),
        ("AGENT_PANE", std::ffi::OsStr::new(&agent)),
        ("PROMPT", std::ffi::OsStr::new("ship it")),
        ("AFTER_APPROVE", std::ffi::OsStr::new("approved: ship it")),
    ];
    let shots = ["1-needs-you-phone", "2-notification-target-phone", "3-offline-phone"];
    tokio::task::block_in_place(|| run_browser_script("push", &web, "browser-artifacts-push", &env, &shots));
    tokio::task::block_in_place(|| daemon.wait_screen(&agent, "approved: ship it"));
}

/// Pairing in the browser: a desktop page shows a pairing code from its Phone
/// panel, a phone's browser (390x844, a context of its own) opens it and asks,
/// the desktop page confirms, the phone is in with an HttpOnly credential of
/// its own (400 days), and once the desktop page revokes it the phone is out.
/// tests/browser/pair.mjs drives it; its screenshots land in
/// target/browser-artifacts-pair.
#[test]
fn a_phone_pairs_from_a_code_the_page_shows_and_is_revoked() {
    fugue_tests::require!("chromium", "node", "tests/browser/node_modules/playwright-core");
    let daemon = Daemon::start();
    let web = Web::start(&daemon, &[]);
    let shots = [
        "1-pairing-code-desktop",
        "2-pairing-waits-phone",
        "3-paired-phone",
        "4-devices-desktop",
    ];
    run_browser_script("pair", &web, "browser-artifacts-pair", &[], &shots);
    let devices = daemon.cli(&["web", "devices", "--json"]).json();
    assert_eq!(devices, json!([]), "revoked");
}

/// fugue-mcp's MCP Apps rendered by the official host bridge (ext-apps 2.0.4's
/// AppBridge) in sandboxed iframes in Chromium at 390x844, their tool calls
/// sent to the real fugue-mcp through the official MCP client: a pane that
/// printed HTML shows it as text in the screen app (which calls nothing but
/// fugue_capture), the permission card approves a waiting agent (it goes on),
/// and the diff app shows a worktree's change. tests/browser/apps.mjs drives
/// it; its screenshots land in target/browser-artifacts-apps.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_apps_render_in_the_official_host_bridge() {
    fugue_tests::require!(
        "chromium",
        "node",
        "tests/browser/node_modules/playwright-core",
        "tests/browser/node_modules/@modelcontextprotocol/ext-apps"
    );
    let daemon = Daemon::start();
    let repo = crate::worktrees::repository(&daemon);
    let (html, changed) = tokio::task::block_in_place(|| {
        daemon.cli(&["new-session", "apps"]).ok();
        let html = daemon
            .cli(&[
                "run", "-s", "apps", "--no-shell", "--", "sh", "-c",
                r#"printf '<img src=x onerror="parent.postMessage(1)"><button id="pwn">Approve</button><script>alert(1)</script>\n'; exec sleep 600"#,
            ])
            .ok()
            .trim()
            .to_string();
        daemon.cli(&["new", "w", "--cwd", repo.to_str().unwrap()]).ok();
        let (changed, _, _) = crate::worktrees::run_in_worktree(
            &daemon,
            "apps",
            "printf 'hello\\n' >> a.txt && echo changed; exec sleep 600",
        );
        (html, changed)
    });
    let client = daemon.client().await;
    fugue_tests::wait_for_text(&client, &html, "pwn").await;
    fugue_tests::wait_for_text(&client, &changed, "changed").await;
    daemon.cli(&["new-session", "ag"]).ok();
    let agent = daemon.run_fake_claude("ag");
    daemon.wait_agent_state(&agent, "idle");
    let sent = daemon.cli(&["--json", "prompt", &agent, "ship it"]).json();
    assert_eq!(sent["outcome"], "started", "{sent}");
    daemon.wait_agent_state(&agent, "waiting_for_permission");
    let browser_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("browser");
    let artifacts = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/browser-artifacts-apps");
    let output = tokio::task::block_in_place(|| {
        Command::new("node")
            .arg(browser_dir.join("apps.mjs"))
            .current_dir(&browser_dir)
            .env("ARTIFACTS", &artifacts)
            .env("MCP_BIN", bin("fugue-mcp"))
            .env("FUGUE_SOCKET_PATH", &daemon.socket)
            .env("HOME", daemon.dir.path())
            // The bridge finds the worktree's record where the CLI made it.
            .env("XDG_STATE_HOME", daemon.dir.path().join("state"))
            .env("HTML_PANE", &html)
            .env("AGENT_PANE", &agent)
            .env("DIFF_PANE", &changed)
            .output()
            .expect("run node")
    });
    browser_script_passed(
        &output,
        &artifacts,
        &["1-app-screen", "2-app-permission", "3-app-approved", "4-app-diff"],
    );
    tokio::task::block_in_place(|| daemon.wait_screen(&agent, "approved: ship it"));
}
