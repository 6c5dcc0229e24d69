//! Sessions through the CLI and the library: create, list, rename, kill by name,
//! UUID and prefix; name rules; target errors.

use fugue_protocol::ErrorCode;
use fugue_tests::Daemon;

#[test]
fn session_lifecycle_by_name_uuid_and_prefix() {
    let daemon = Daemon::start();
    let id = daemon.cli(&["new-session", "api"]).ok();
    assert!(
        uuid::Uuid::parse_str(&id).is_ok(),
        "new-session prints the id, got {id:?}"
    );
    // `new` is what tmux users type.
    let web = daemon.cli(&["new", "web", "--cwd", "/tmp", "-e", "A=1"]).ok();

    let list = daemon.cli(&["--json", "ls"]).json();
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["api", "web"]);
    assert_eq!(list[1]["cwd"], "/tmp");
    let table = daemon.cli(&["ls"]).ok();
    assert!(
        table.starts_with("ID") && table.contains("api") && table.contains("web"),
        "{table}"
    );

    // Rename by full UUID, then by prefix.
    daemon.cli(&["rename-session", &id, "backend"]).ok();
    let renamed = daemon.cli(&["--json", "rename-session", &id[..6], "core"]).json();
    assert_eq!(renamed["previous_name"], "backend");
    assert_eq!(renamed["name"], "core");

    // Kill by name and by prefix.
    daemon.cli(&["kill-session", "core"]).ok();
    daemon.cli(&["kill-session", &web[..8]]).ok();
    assert_eq!(daemon.cli(&["--json", "ls"]).json(), serde_json::json!([]));
}

#[test]
fn session_errors_are_one_clear_line() {
    let daemon = Daemon::start();
    daemon.cli(&["new-session", "api"]).ok();
    daemon.cli(&["new-session", "web"]).ok();

    let err = daemon.cli(&["kill-session", "dev"]).err();
    assert_eq!(err, "fugue: session not found: 'dev'; sessions: api, web");
    let err = daemon.cli(&["new-session", "api"]).err();
    assert_eq!(err, "fugue: a session named 'api' already exists");
    for bad in ["a.b", "a:b", "a/b", "a b", ""] {
        let err = daemon.cli(&["new-session", bad]).err();
        assert!(err.starts_with("fugue: session name"), "{bad:?}: {err}");
        assert_eq!(err.lines().count(), 1);
    }
    let err = daemon.cli(&["new-session", "x", "--cwd", "/no/such/dir"]).err();
    assert!(err.contains("/no/such/dir does not exist"), "{err}");
    let err = daemon.cli(&["new-session", "x", "-e", "NOEQUALS"]).err();
    assert!(err.contains("use KEY=VALUE"), "{err}");
    let err = daemon.cli(&["rename-session", "api", "web"]).err();
    assert!(err.contains("already exists"), "{err}");
}

#[tokio::test]
async fn ambiguous_prefix_lists_candidates() {
    let daemon = Daemon::start();
    let client = daemon.client().await;
    // Create sessions until two share a first hex digit; 17 guarantee it.
    let mut ids = Vec::new();
    for i in 0..17 {
        ids.push(
            client
                .create_session(&format!("s{i}"), None, vec![])
                .await
                .unwrap()
                .id
                .to_string(),
        );
    }
    let (a, b) = ids
        .iter()
        .enumerate()
        .find_map(|(i, a)| {
            ids[i + 1..]
                .iter()
                .find(|b| b[..1] == a[..1])
                .map(|b| (a.clone(), b.clone()))
        })
        .unwrap();
    let common = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    if common >= 4 {
        let err = client.destroy_session(&a[..4]).await.unwrap_err();
        assert_eq!(err.code(), Some(ErrorCode::Ambiguous));
        assert!(err.to_string().contains(&a) && err.to_string().contains(&b), "{err}");
    }
    // Three hex digits are not a prefix target: a plain not-found.
    let err = client.destroy_session(&a[..3]).await.unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::SessionNotFound));
    // A unique prefix works.
    let unique = (4..36)
        .map(|n| &a[..n])
        .find(|p| ids.iter().filter(|id| id.starts_with(p)).count() == 1)
        .unwrap();
    assert_eq!(client.destroy_session(unique).await.unwrap().id.to_string(), a);
}

/// Habits from tmux: `fugue run` without `-s` goes to `$FUGUE_SESSION` or to a
/// `default` session created on first use; usage errors keep their detail.
#[test]
fn run_without_a_session_uses_fugue_session_or_default() {
    let daemon = fugue_tests::Daemon::start();
    let pane = daemon.cli(&["run", "--no-shell", "--", "sleep", "30"]).ok();
    let status = daemon.cli(&["--json", "status", &pane]).json();
    assert_eq!(status["session"], "default", "{status}");
    // A second run finds the session the first created.
    daemon.cli(&["run", "--no-shell", "--", "sleep", "30"]).ok();
    assert_eq!(
        daemon
            .cli(&["--json", "panes", "default"])
            .json()
            .as_array()
            .unwrap()
            .len(),
        2
    );

    daemon.cli(&["new-session", "work"]).ok();
    let pane = daemon
        .cli_with_env(
            &["run", "--no-shell", "--", "sleep", "30"],
            &[("FUGUE_SESSION", "work")],
        )
        .ok();
    assert_eq!(daemon.cli(&["--json", "status", &pane]).json()["session"], "work");
    // Only the default session is created on demand: a named one must exist.
    let err = daemon
        .cli_with_env(&["run", "--", "true"], &[("FUGUE_SESSION", "nosuch")])
        .err();
    assert!(err.contains("nosuch"), "{err}");
}

#[test]
fn usage_errors_say_what_is_missing_in_one_line() {
    let daemon = fugue_tests::Daemon::start();
    let out = daemon.cli(&["wait"]);
    let err = out.err();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("required arguments were not provided") && err.contains("<PANE>"),
        "{err}"
    );
    assert_eq!(out.status.code(), Some(2));
    let err = daemon.cli(&["resize", "x"]).err();
    assert!(err.contains("<SIZE>"), "{err}");
}

/// Completions and man pages come from the same definitions as the parser.
#[test]
fn completions_and_man_pages_cover_every_command() {
    let daemon = fugue_tests::Daemon::start();
    for shell in ["bash", "zsh", "fish"] {
        let script = daemon.cli(&["completions", shell]).ok();
        for command in ["new-session", "run", "attach", "send-keys", "completions"] {
            assert!(script.contains(command), "{shell} completions lack {command}");
        }
    }
    let err = daemon.cli(&["completions", "tcsh"]).err();
    assert!(err.contains("tcsh") && err.contains("bash"), "{err}");

    let dir = daemon.dir.path().join("man");
    let said = daemon.cli(&["man", dir.to_str().unwrap()]).ok();
    assert!(said.starts_with("wrote "), "{said}");
    let page = std::process::Command::new("man")
        .args(["-l", "-P", "cat"])
        .arg(dir.join("fugue-run.1"))
        .env("MANWIDTH", "80")
        .output()
        .expect("man runs");
    let text = String::from_utf8_lossy(&page.stdout);
    assert!(text.contains("fugue-run") && text.contains("--no-shell"), "{text}");
    assert!(dir.join("fugue.1").exists());
}
