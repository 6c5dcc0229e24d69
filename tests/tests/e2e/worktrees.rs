//! A worktree per agent, with a real git: two panes in one repository each get
//! a checkout and branch of their own, `worktrees` and `diff` show each one's
//! work only, and releasing or discarding never loses work nobody asked to lose.

use fugue_tests::{git, wait_for_text, Daemon};
use std::path::PathBuf;

/// A repository with one commit (`a.txt` = `hello`) in the daemon's directory.
pub(crate) fn repository(daemon: &Daemon) -> PathBuf {
    let repo = daemon.dir.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "--quiet", "--initial-branch=main"]);
    std::fs::write(repo.join("a.txt"), "hello\n").unwrap();
    git(&repo, &["add", "a.txt"]);
    git(&repo, &["commit", "--quiet", "-m", "first"]);
    repo
}

/// `fugue --json fanout` of group `race` in `repo`: stand-in agents, each
/// writing `made.txt` with its kind and $PORT before asking about "ship it";
/// the group's test passes for a claude member and fails for the others.
pub(crate) fn fanout_race(daemon: &Daemon, repo: &std::path::Path, agents: &str) -> serde_json::Value {
    let fake = fugue_tests::bin("fake-agent").display().to_string();
    let agent = |kind: &str| format!("{kind}=sh -c 'echo \"{kind} $PORT\" > made.txt; exec {fake} \"$1\"' {kind}");
    let test = "grep -q \"^claude $PORT$\" made.txt || { echo \"not mine: $(cat made.txt)\"; exit 1; }";
    let (claude, codex) = (agent("claude"), agent("codex"));
    let args = ["--json", "fanout", "--agents", agents, "--name", "race", "--cwd"];
    let repo = repo.to_str().expect("a UTF-8 path");
    let rest = [
        "--test",
        test,
        "--agent-command",
        &claude,
        "--agent-command",
        &codex,
        "ship it",
    ];
    let args: Vec<&str> = args.into_iter().chain([repo]).chain(rest).collect();
    daemon.cli(&args).json()
}

/// `fugue --json run` in a worktree; the pane's id and the worktree's path.
pub(crate) fn run_in_worktree(daemon: &Daemon, name: &str, script: &str) -> (String, PathBuf, String) {
    let out = daemon.cli(&[
        "--json",
        "run",
        "-s",
        "w",
        "--worktree",
        name,
        "--no-shell",
        "--",
        "sh",
        "-c",
        script,
    ]);
    let value = out.json();
    let pane = value["id"].as_str().expect("pane id").to_string();
    let path = PathBuf::from(value["worktree"]["path"].as_str().expect("worktree path"));
    (pane, path, out.stderr)
}

#[tokio::test]
async fn two_agents_work_in_worktrees_of_their_own() {
    let daemon = Daemon::start();
    let client = daemon.client().await;
    let repo = repository(&daemon);
    daemon.cli(&["new", "w", "--cwd", repo.to_str().unwrap()]).ok();
    // Uncommitted work in the main checkout: not carried, never touched.
    std::fs::write(repo.join("a.txt"), "hello\nmain's own edit\n").unwrap();

    let commit = "git -c user.name=t -c user.email=t@t.invalid commit --quiet -m alpha";
    let alpha_script = format!(
        "echo A > alpha.txt && git add alpha.txt && {commit} && sed -i s/hello/from-alpha/ a.txt && echo alpha-done; exec sleep 600"
    );
    let (alpha, alpha_dir, said) = run_in_worktree(&daemon, "alpha", &alpha_script);
    assert!(
        said.contains("1 uncommitted change(s) in") && said.contains("are not carried"),
        "{said}"
    );
    let (beta, beta_dir, _) = run_in_worktree(&daemon, "beta", "echo B > beta.txt && echo beta-done; exec sleep 600");
    wait_for_text(&client, &alpha, "alpha-done").await;
    wait_for_text(&client, &beta, "beta-done").await;

    // Outside the working tree, on branches of their own, from main's commit.
    let state = daemon.dir.path().join("state");
    assert!(
        alpha_dir.starts_with(&state) && !alpha_dir.starts_with(&repo),
        "{}",
        alpha_dir.display()
    );
    assert_eq!(
        std::fs::read_to_string(alpha_dir.join("a.txt")).unwrap(),
        "from-alpha\n"
    );
    assert_eq!(std::fs::read_to_string(beta_dir.join("a.txt")).unwrap(), "hello\n");
    let branches = git(&repo, &["branch", "--list", "fugue/*"]);
    assert!(
        branches.contains("fugue/alpha") && branches.contains("fugue/beta"),
        "{branches}"
    );

    let listed = daemon.cli(&["--json", "worktrees"]).json();
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 2, "{listed:?}");
    let (a, b) = (&listed[0], &listed[1]);
    assert_eq!(
        (a["name"].as_str(), a["pane"].as_str()),
        (Some("alpha"), Some(alpha.as_str()))
    );
    assert_eq!(
        (a["ahead"].as_u64(), a["behind"].as_u64(), a["base_ref"].as_str()),
        (Some(1), Some(0), Some("main"))
    );
    assert_eq!(a["dirty"], serde_json::json!(["a.txt"]));
    assert_eq!((b["name"].as_str(), b["ahead"].as_u64()), (Some("beta"), Some(0)));
    assert_eq!(b["dirty"], serde_json::json!(["beta.txt"]));
    assert_eq!(b["pane_state"], "running");
    let table = daemon.cli(&["worktrees"]).ok();
    assert!(
        table.starts_with("NAME") && table.contains("fugue/alpha") && table.contains("main ("),
        "{table}"
    );

    // Each one's changes, committed or not, and only its own.
    let diff = daemon.cli(&["--json", "diff", &alpha]).json();
    let files: Vec<(&str, &str)> = diff["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap(), f["status"].as_str().unwrap()))
        .collect();
    assert_eq!(files, [("a.txt", "modified"), ("alpha.txt", "added")]);
    assert_eq!(
        diff["files"][0]["hunks"][0]["lines"],
        serde_json::json!(["-hello", "+from-alpha"])
    );
    assert_eq!((diff["added"].as_u64(), diff["removed"].as_u64()), (Some(2), Some(1)));
    let stat = daemon.cli(&["diff", &beta, "--stat"]).ok();
    assert!(
        stat.contains("added") && stat.contains("beta.txt") && !stat.contains("alpha"),
        "{stat}"
    );
    let patch = daemon.cli(&["diff", &beta]).ok();
    assert!(patch.contains("@@ -0,0 +1 @@") && patch.contains("+B"), "{patch}");
    // The diff left the worktree's own index alone: beta.txt is still untracked.
    assert_eq!(git(&beta_dir, &["status", "--porcelain"]), "?? beta.txt\n");

    // Releasing a pane keeps a worktree with work in it, and says what it holds.
    let kept = daemon.cli(&["--json", "release", &alpha]).json();
    assert_eq!(kept["outcome"], "kept", "{kept}");
    assert_eq!(
        kept["holds"],
        serde_json::json!(["1 uncommitted file(s)", "1 commit(s) not in main"])
    );
    assert_eq!(
        std::fs::read_to_string(alpha_dir.join("a.txt")).unwrap(),
        "from-alpha\n"
    );
    // Discarding asks first; nobody at a terminal to answer is an error.
    let refused = daemon.cli(&["discard", "alpha"]).err();
    assert!(refused.contains("add --yes"), "{refused}");
    assert!(alpha_dir.join("alpha.txt").exists());
    let discarded = daemon.cli(&["--json", "discard", "alpha", "--yes"]).json();
    assert_eq!(discarded["outcome"], "removed");
    assert!(!alpha_dir.exists());
    assert!(!git(&repo, &["branch", "--list", "fugue/*"]).contains("fugue/alpha"));

    // Asked by name: the work goes with it.
    let removed = daemon.cli(&["--json", "release", &beta, "--discard"]).json();
    assert_eq!(removed["outcome"], "removed", "{removed}");
    assert!(!beta_dir.exists());
    assert_eq!(daemon.cli(&["--json", "worktrees"]).json(), serde_json::json!([]));
    // The main checkout's own uncommitted edit is as it was.
    assert_eq!(
        std::fs::read_to_string(repo.join("a.txt")).unwrap(),
        "hello\nmain's own edit\n"
    );
}

#[tokio::test]
async fn bad_worktree_requests_say_what_and_change_nothing() {
    let daemon = Daemon::start();
    let repo = repository(&daemon);
    daemon.cli(&["new", "w", "--cwd", repo.to_str().unwrap()]).ok();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "-s", "w"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--", "true"]);
        daemon.cli(&args).err()
    };
    let plain = daemon.dir.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    let outside = run(&["--worktree", "x", "--cwd", plain.to_str().unwrap()]);
    assert!(outside.ends_with("plain is not in a git repository"), "{outside}");
    let dots = run(&["--worktree", "a..b"]);
    assert!(
        dots.contains("worktree name 'a..b' is not one") && dots.contains("no '..'"),
        "{dots}"
    );
    let control = run(&["--worktree", "x\u{1b}[2Jy"]);
    assert!(
        control.contains("is not one") && !control.contains('\u{1b}'),
        "{control:?}"
    );
    git(&repo, &["branch", "fugue/taken"]);
    let taken = run(&["--worktree", "taken"]);
    assert!(
        taken.contains("branch fugue/taken exists in") && taken.contains("pick another name"),
        "{taken}"
    );
    let base = run(&["--worktree", "x", "--base", "nope"]);
    assert!(base.contains("base 'nope' is no commit in"), "{base}");
    // None of that made a pane, a branch or a worktree.
    assert_eq!(daemon.cli(&["--json", "panes", "w"]).json(), serde_json::json!([]));
    assert_eq!(git(&repo, &["worktree", "list"]).lines().count(), 1);
    assert_eq!(daemon.cli(&["--json", "worktrees"]).json(), serde_json::json!([]));

    // A pane without a worktree has no diff.
    let shell = daemon.cli(&["run", "-s", "w", "--no-shell", "--", "sleep", "600"]).ok();
    let none = daemon.cli(&["diff", &shell]).err();
    assert!(none.contains("works in no worktree of fugue's"), "{none}");
    let no_discard = daemon.cli(&["release", &shell, "--discard"]).err();
    assert!(no_discard.contains("has no worktree to discard"), "{no_discard}");

    // A worktree removed behind fugue's back: listed as gone, said plainly.
    let (pane, dir, _) = run_in_worktree(&daemon, "lost", "exec sleep 600");
    std::fs::remove_dir_all(&dir).unwrap();
    let listed = daemon.cli(&["--json", "worktrees"]).json();
    assert_eq!(listed[0]["exists"], false, "{listed}");
    let gone = daemon.cli(&["diff", &pane]).err();
    assert!(gone.contains("is gone (removed outside fugue)"), "{gone}");
    let released = daemon.cli(&["--json", "release", &pane]).json();
    assert_eq!(released["outcome"], "gone");
    // The other pane was never touched.
    assert_eq!(daemon.cli(&["--json", "status", &shell]).json()["status"], "running");

    // Its base branch renamed away: its commits still count as work, kept.
    let commit = "git -c user.name=t -c user.email=t@t.invalid commit --quiet --allow-empty -m kept";
    let (moved, moved_dir, _) = run_in_worktree(
        &daemon,
        "moved",
        &format!("{commit} && echo moved-done; exec sleep 600"),
    );
    wait_for_text(&daemon.client().await, &moved, "moved-done").await;
    git(&repo, &["branch", "-m", "main", "trunk"]);
    let kept = daemon.cli(&["--json", "release", &moved]).json();
    assert_eq!(kept["outcome"], "kept", "{kept}");
    assert_eq!(kept["holds"], serde_json::json!(["1 commit(s) not in main"]));
    assert!(moved_dir.exists());
}

/// The test's git identity, for the commits `fugue merge` makes.
const IDENTITY: [(&str, &str); 4] = [
    ("GIT_AUTHOR_NAME", "fugue test"),
    ("GIT_AUTHOR_EMAIL", "test@fugue.invalid"),
    ("GIT_COMMITTER_NAME", "fugue test"),
    ("GIT_COMMITTER_EMAIL", "test@fugue.invalid"),
];

/// A worktree pane that commits `text` as a.txt, then waits.
async fn committed(daemon: &Daemon, name: &str, text: &str) -> String {
    let commit = "git -c user.name=t -c user.email=t@t.invalid commit --quiet -am work";
    let script = format!("echo {text} > a.txt && {commit} && echo {name}-done; exec sleep 600");
    let (pane, _, _) = run_in_worktree(daemon, name, &script);
    wait_for_text(&daemon.client().await, &pane, &format!("{name}-done")).await;
    pane
}

#[tokio::test]
async fn merges_land_clean_work_and_change_nothing_on_a_conflict() {
    let daemon = Daemon::start();
    let repo = repository(&daemon);
    std::fs::write(repo.join("b.txt"), "b\n").unwrap();
    git(&repo, &["add", "b.txt"]);
    git(&repo, &["commit", "--quiet", "-m", "b"]);
    git(&repo, &["branch", "side"]);
    daemon.cli(&["new", "w", "--cwd", repo.to_str().unwrap()]).ok();
    let alpha = committed(&daemon, "alpha", "from-alpha").await;
    committed(&daemon, "beta", "from-beta").await;
    committed(&daemon, "delta", "from-delta").await;
    // The person's own uncommitted edit in the main checkout, in another file.
    std::fs::write(repo.join("b.txt"), "b, edited by hand\n").unwrap();

    let merged = daemon.cli_with_env(&["--json", "merge", &alpha], &IDENTITY).json();
    assert_eq!(
        (merged["into"].as_str(), merged["commits"].as_u64()),
        (Some("main"), Some(1)),
        "{merged}"
    );
    assert_eq!(std::fs::read_to_string(repo.join("a.txt")).unwrap(), "from-alpha\n");
    assert_eq!(
        std::fs::read_to_string(repo.join("b.txt")).unwrap(),
        "b, edited by hand\n"
    );
    assert_eq!(
        git(&repo, &["rev-parse", "HEAD"]).trim(),
        merged["commit"].as_str().unwrap()
    );
    assert_eq!(git(&repo, &["rev-list", "--count", "--merges", "HEAD"]).trim(), "1");

    // beta changed the same line: found before anything changes.
    let head = git(&repo, &["rev-parse", "HEAD"]);
    let conflict = daemon.cli_with_env(&["merge", "beta"], &IDENTITY).err();
    assert!(
        conflict.contains("merging fugue/beta into main conflicts in a.txt; nothing was merged"),
        "{conflict}"
    );
    assert_eq!(git(&repo, &["rev-parse", "HEAD"]), head);
    assert_eq!(git(&repo, &["status", "--porcelain"]), " M b.txt\n");

    // Squashed into a branch no checkout has: it moves, no working tree does.
    let squashed = daemon
        .cli_with_env(&["--json", "merge", "delta", "--squash", "--into", "side"], &IDENTITY)
        .json();
    let side = git(&repo, &["rev-parse", "side"]);
    assert_eq!(side.trim(), squashed["commit"].as_str().unwrap());
    assert_eq!(
        git(&repo, &["rev-list", "--parents", "-n", "1", "side"])
            .split_whitespace()
            .count(),
        2
    );
    assert_eq!(git(&repo, &["show", "side:a.txt"]), "from-delta\n");
    assert_eq!(git(&repo, &["rev-parse", "HEAD"]), head);

    // Uncommitted work, a branch with nothing new, a target that is no branch.
    let (gamma, gamma_dir, _) = run_in_worktree(&daemon, "gamma", "echo x > c.txt && echo gamma-done; exec sleep 600");
    wait_for_text(&daemon.client().await, &gamma, "gamma-done").await;
    let dirty = daemon.cli_with_env(&["merge", "gamma"], &IDENTITY).err();
    assert!(
        dirty.contains("fugue/gamma has 1 uncommitted file(s) (c.txt); commit them first"),
        "{dirty}"
    );
    std::fs::remove_file(gamma_dir.join("c.txt")).unwrap();
    let empty = daemon.cli_with_env(&["merge", "gamma"], &IDENTITY).err();
    assert!(empty.contains("fugue/gamma has no commits that main lacks"), "{empty}");
    let nowhere = daemon
        .cli_with_env(&["merge", "delta", "--into", "nope"], &IDENTITY)
        .err();
    assert!(nowhere.contains("'nope' is no branch of"), "{nowhere}");
    assert_eq!(git(&repo, &["rev-parse", "HEAD"]), head);
}

/// An MCP client whose person answers every confirmation with `yes` (None:
/// it declares no elicitation), and the questions it was asked.
#[derive(Clone)]
struct Person {
    yes: Option<bool>,
    asked: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    /// The progress notifications' messages heard.
    progress: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl rmcp::ClientHandler for Person {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let caps = match self.yes {
            Some(_) => rmcp::model::ClientCapabilities::builder().enable_elicitation().build(),
            None => rmcp::model::ClientCapabilities::default(),
        };
        rmcp::model::ClientConfig::new(caps, rmcp::model::Implementation::new("fugue-tests", "0"))
    }

    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        if let Some(message) = params.message {
            self.progress.lock().unwrap().push(message);
        }
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _: rmcp::service::RequestContext<rmcp::RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
        if let ElicitRequestParams::FormElicitationParams { message, .. } = request {
            self.asked.lock().unwrap().push(message);
        }
        Ok(match self.yes {
            Some(true) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(serde_json::json!({"confirm": true}))
            }
            _ => ElicitResult::new(ElicitationAction::Decline),
        })
    }
}

/// The real `fugue-mcp` over stdio, sharing the CLI's worktree records.
async fn bridge_for(
    daemon: &Daemon,
    person: Person,
    mode: rmcp::service::ClientLifecycleMode,
    args: &[&str],
) -> rmcp::service::RunningService<rmcp::RoleClient, Person> {
    let mut command = fugue_tests::mcp::bridge_command(daemon);
    command
        .args(args)
        .env("XDG_STATE_HOME", daemon.dir.path().join("state"))
        .envs(IDENTITY);
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(command)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn fugue-mcp");
    rmcp::service::ClientServiceExt::serve_with_lifecycle(person, transport, mode)
        .await
        .expect("MCP startup")
}

#[tokio::test]
async fn merging_and_discarding_over_mcp_need_a_person() {
    use fugue_tests::mcp::{call_as_client, text};
    use rmcp::service::ClientLifecycleMode;
    let daemon = Daemon::start();
    let repo = repository(&daemon);
    daemon.cli(&["new", "w", "--cwd", repo.to_str().unwrap()]).ok();
    let script = "echo more >> a.txt && git -c user.name=t -c user.email=t@t.invalid commit -qam more && echo done; \
exec sleep 600";
    let (pane, path, _) = run_in_worktree(&daemon, "mcpwt", script);
    fugue_tests::wait_for_text(&daemon.client().await, &pane, "done").await;
    let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let person = |yes| Person {
        yes,
        asked: asked.clone(),
        progress: Default::default(),
    };
    let merge = serde_json::json!({"worktree": "mcpwt"});
    let discard = serde_json::json!({"worktree": pane});

    let declining = bridge_for(&daemon, person(Some(false)), ClientLifecycleMode::Initialize, &[]).await;
    let refused = text(&call_as_client(&declining, "fugue_merge", merge.clone()).await);
    assert!(refused.contains("declined: nothing was merged"), "{refused}");
    let refused = text(&call_as_client(&declining, "fugue_discard", discard.clone()).await);
    assert!(refused.contains("declined: nothing was discarded"), "{refused}");
    let cannot = bridge_for(&daemon, person(None), ClientLifecycleMode::Initialize, &[]).await;
    let refused = text(&call_as_client(&cannot, "fugue_discard", discard.clone()).await);
    assert!(refused.contains("--allow-discard"), "{refused}");
    let refused = text(&call_as_client(&cannot, "fugue_merge", merge.clone()).await);
    assert!(refused.contains("--allow-merge"), "{refused}");
    assert!(path.join("a.txt").exists());
    assert_eq!(std::fs::read_to_string(repo.join("a.txt")).unwrap(), "hello\n");

    // The 2026-07-28 era: the call answers "input required", the client asks
    // its person and calls again.
    let modern = ClientLifecycleMode::Discover {
        preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
    };
    let accepting = bridge_for(&daemon, person(Some(true)), modern, &[]).await;
    let merged = call_as_client(&accepting, "fugue_merge", merge).await;
    assert_eq!(merged.is_error, Some(false), "{merged:?}");
    assert_eq!(merged.structured_content.as_ref().unwrap()["commits"], 1, "{merged:?}");
    assert_eq!(std::fs::read_to_string(repo.join("a.txt")).unwrap(), "hello\nmore\n");
    std::fs::write(path.join("notes.txt"), "unsaved thoughts\n").unwrap();
    let discarded = call_as_client(&accepting, "fugue_discard", discard).await;
    assert_eq!(discarded.is_error, Some(false), "{discarded:?}");
    assert!(!path.exists());
    assert_eq!(git(&repo, &["branch", "--list", "fugue/mcpwt"]), "");
    let asked = asked.lock().unwrap().clone();
    assert!(asked[0].starts_with("Merge fugue/mcpwt into main in "), "{asked:?}");
    assert!(
        asked
            .last()
            .unwrap()
            .contains("with 1 uncommitted file(s), 0 commit(s) not in main"),
        "{asked:?}"
    );
}

/// `fugue review` as a person uses it: the diff in vim, a comment typed under
/// the changed line, saved; the agent gets it as one prompt and starts a turn.
#[tokio::test]
async fn a_review_written_in_the_editor_reaches_the_agent() {
    fugue_tests::require!("tmux");
    fugue_tests::require!("vim");
    let daemon = Daemon::start();
    let client = daemon.client().await;
    let repo = repository(&daemon);
    daemon.cli(&["new", "w", "--cwd", repo.to_str().unwrap()]).ok();
    // The stand-in agent takes a bracketed paste as one prompt, as real ones do.
    let agent = fugue_tests::bin("fake-agent");
    let script = format!(
        "echo changed > a.txt && export FAKE_AGENT_PASTE_GUARD_MS=50 && exec {}",
        agent.display()
    );
    let (pane, _, _) = run_in_worktree(&daemon, "rev", &script);
    wait_for_text(&client, &pane, "? for shortcuts").await;

    let tmux = fugue_tests::Tmux::start(daemon.dir.path(), 100, 30);
    let root = daemon.dir.path().join("state/fugue/worktrees");
    tmux.type_line(
        "main",
        &format!(
            "FUGUE_WORKTREE_ROOT={} EDITOR='vim -u NONE -N' {} --socket {} review {pane}",
            root.display(),
            fugue_tests::bin("fugue").display(),
            daemon.socket.display()
        ),
    );
    tmux.wait_for("main", "+changed");
    tmux.send_keys("main", &["/^+changed", "Enter"]);
    tmux.send_keys("main", &["o"]);
    tmux.send_keys("main", &["-l", "Say hello instead."]);
    tmux.send_keys("main", &["Escape"]);
    tmux.type_line("main", ":wq");
    let screen = tmux.wait_for("main", "sent 1 comment(s)");
    assert!(screen.contains("prompt submitted"), "{screen}");
    wait_for_text(
        &client,
        &pane,
        "Working on: Review comments on your changes (branch fugue/rev)",
    )
    .await;

    // Nothing written: nothing sent, and the person is told.
    tmux.type_line("main", "clear");
    tmux.type_line(
        "main",
        &format!(
            "FUGUE_WORKTREE_ROOT={} EDITOR=true {} --socket {} review {pane}",
            root.display(),
            fugue_tests::bin("fugue").display(),
            daemon.socket.display()
        ),
    );
    tmux.wait_for("main", "no comment written: nothing sent");
}

/// Writes the user's config (`[[worktree]]` entries) where the CLI reads it.
fn user_config(daemon: &Daemon, text: &str) {
    let dir = daemon.dir.path().join("config/fugue");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), text).unwrap();
}

/// Setup commands from the user's config run in the pane before its program
/// (their output the pane's; a failure or a hang ends it with the reason);
/// the repository's own file runs only once trusted, and not once changed;
/// teardown runs before a removal, and its failure is said.
#[tokio::test]
async fn setup_and_teardown_run_as_configured_and_trusted() {
    let daemon = Daemon::start();
    let client = daemon.client().await;
    let repo = repository(&daemon);
    daemon.cli(&["new", "w", "--cwd", repo.to_str().unwrap()]).ok();
    // Not committed: a worktree has no .env of its own.
    std::fs::write(repo.join(".env"), "SECRET=1\n").unwrap();
    std::fs::create_dir(repo.join(".fugue")).unwrap();
    std::fs::write(
        repo.join(".fugue/worktree.toml"),
        "setup = [\"echo from-the-repo > repo-file-ran\"]\n",
    )
    .unwrap();
    git(&repo, &["add", ".fugue"]);
    git(&repo, &["commit", "--quiet", "-m", "worktree commands"]);
    let config = format!(
        "[[worktree]]\nrepo = \"{}\"\nsetup = [\"cp \\\"$FUGUE_WORKTREE_REPO/.env\\\" .env\"]\n\
teardown = [\"echo torn > \\\"$FUGUE_WORKTREE_REPO/torn-$FUGUE_WORKTREE_NAME\\\"\"]\n",
        repo.display()
    );
    user_config(&daemon, &config);
    let listing = "cat .env; ls; echo listed; exec sleep 600";

    // The config's setup ran; the repository's file, untrusted, did not.
    let (a, a_path, said) = run_in_worktree(&daemon, "a", listing);
    assert!(said.contains("fugue worktree trust"), "{said}");
    let text = wait_for_text(&client, &a, "listed").await;
    assert!(text.contains("fugue setup: cp") && text.contains("SECRET=1"), "{text}");
    assert!(!a_path.join("repo-file-ran").exists(), "{text}");

    // Trusted, it runs; changed afterwards, it does not, and the person is told.
    let trusted = daemon.cli(&["worktree", "trust", repo.to_str().unwrap()]).ok();
    assert!(
        trusted.contains("setup: echo from-the-repo > repo-file-ran"),
        "{trusted}"
    );
    let (b, b_path, _) = run_in_worktree(&daemon, "b", listing);
    wait_for_text(&client, &b, "listed").await;
    assert_eq!(
        std::fs::read_to_string(b_path.join("repo-file-ran")).unwrap(),
        "from-the-repo\n"
    );
    std::fs::write(repo.join(".fugue/worktree.toml"), "setup = [\"touch changed-ran\"]\n").unwrap();
    let (c, c_path, said) = run_in_worktree(&daemon, "c", listing);
    assert!(said.contains("changed since you trusted it"), "{said}");
    wait_for_text(&client, &c, "listed").await;
    assert!(!c_path.join("changed-ran").exists());
    let untrusted = daemon.cli(&["worktree", "untrust", repo.to_str().unwrap()]).ok();
    assert!(untrusted.contains("no longer trusted"), "{untrusted}");

    // A failing setup command and a hanging one: the pane ends saying which
    // and why; the program never starts.
    user_config(
        &daemon,
        &format!(
            "[[worktree]]\nrepo = \"{}\"\nsetup = [\"echo one\", \"exit 3\"]\n",
            repo.display()
        ),
    );
    let (d, _, _) = run_in_worktree(&daemon, "d", "echo program-ran; exec sleep 600");
    let text = wait_for_text(&client, &d, "fugue: setup command failed (exit 3): exit 3").await;
    assert!(text.contains("one") && !text.contains("program-ran"), "{text}");
    let exit = fugue_client::protocol::WaitUntil {
        exit: true,
        ..Default::default()
    };
    client.wait_for(&d, exit, fugue_tests::DEADLINE).await.unwrap();
    let status = client.pane_status(&d).await.unwrap();
    assert_eq!(status.exit.and_then(|e| e.code), Some(3), "{status:?}");
    user_config(
        &daemon,
        "[[worktree]]\nrepo = \"*\"\nsetup = [\"sleep 30\"]\nsetup_timeout_s = 1\n",
    );
    let (hung, _, _) = run_in_worktree(&daemon, "h", "echo program-ran; exec sleep 600");
    let text = wait_for_text(&client, &hung, "fugue: setup command timed out after 1 s: sleep 30").await;
    assert!(!text.contains("program-ran"), "{text}");

    // Teardown: run before the removal; a failing one is said, and the
    // removal the person asked for goes on.
    user_config(&daemon, &config);
    let released = daemon.cli(&["release", &a, "--discard"]);
    assert!(released.ok().contains("removed worktree"));
    assert_eq!(std::fs::read_to_string(repo.join("torn-a")).unwrap(), "torn\n");
    user_config(
        &daemon,
        &format!(
            "[[worktree]]\nrepo = \"{}\"\nteardown = [\"echo stack busy >&2; exit 5\"]\n",
            repo.display()
        ),
    );
    let released = daemon.cli(&["release", &b, "--discard"]);
    assert!(
        released
            .stderr
            .contains("teardown command failed (exit status: 5): echo stack busy >&2; exit 5: stack busy"),
        "{}",
        released.stderr
    );
    assert!(!b_path.exists());

    // A config that does not parse: a one-line error naming the file; nothing made.
    user_config(&daemon, "[[worktree]]\nrepo = 3\n");
    let err = daemon
        .cli(&["run", "-s", "w", "--worktree", "e", "--no-shell", "--", "true"])
        .err();
    assert!(err.contains("config.toml: [[worktree]]"), "{err}");
    assert!(!git(&repo, &["branch", "--list", "fugue/e"]).contains("fugue/e"));
}

/// `fugue fanout` with three agents (the stand-in agent, each writing a file
/// with its kind and $PORT), then `fugue compare` in tmux: side by side, the
/// test run in each done worktree (two pass, one fails), and picking one
/// merges it and, once the person says yes, discards the others.
#[tokio::test]
async fn fanout_and_compare_three_agents_in_tmux() {
    fugue_tests::require!("tmux");
    let daemon = Daemon::start();
    let client = daemon.client().await;
    let repo = repository(&daemon);
    let started = fanout_race(&daemon, &repo, "claude:2,codex:1");
    let members = started["members"].as_array().unwrap().clone();
    let names: Vec<&str> = members.iter().map(|m| m["worktree"].as_str().unwrap()).collect();
    assert_eq!(names, ["race-claude-1", "race-claude-2", "race-codex-1"]);
    let mut ports: Vec<u64> = members.iter().map(|m| m["port"].as_u64().unwrap()).collect();
    ports.dedup();
    assert_eq!(ports.len(), 3, "distinct ports: {members:?}");
    // Each asks for permission for its prompt; approved, its turn ends.
    for member in &members {
        let pane = member["pane"].as_str().unwrap();
        fugue_tests::wait_for_text(&client, pane, "Do you want to proceed?").await;
        let asking = daemon.wait_agent_state(pane, "waiting_for_permission")["prompt_id"]
            .as_str()
            .expect("a permission prompt's id")
            .to_string();
        daemon.cli(&["approve", pane, &asking]).ok();
        fugue_tests::wait_for_text(&client, pane, "approved: ship it").await;
        let idle = fugue_client::protocol::WaitUntil {
            agent_states: vec![fugue_client::protocol::AgentState::Idle],
            ..Default::default()
        };
        client.wait_for(pane, idle, fugue_tests::DEADLINE).await.unwrap();
    }

    let tmux = fugue_tests::Tmux::start(daemon.dir.path(), 140, 30);
    let fugue = format!(
        "XDG_STATE_HOME={} GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t.invalid GIT_COMMITTER_NAME=t \
GIT_COMMITTER_EMAIL=t@t.invalid {} --socket {}",
        daemon.dir.path().join("state").display(),
        fugue_tests::bin("fugue").display(),
        daemon.socket.display()
    );
    tmux.type_line("main", &format!("{fugue} compare race"));
    let screen = tmux.wait_for("main", "race-codex-1");
    tmux.wait_for("main", "race-codex-1 test output (end):");
    let screen = tmux.capture("main").to_string() + &screen;
    let row = |name: &str| {
        screen
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_default()
            .to_string()
    };
    for name in ["race-claude-1", "race-claude-2"] {
        let row = row(name);
        assert!(
            row.contains("idle") && row.contains("+1") && row.contains("passed"),
            "{row}\n{screen}"
        );
    }
    let codex = row("race-codex-1");
    assert!(codex.contains("failed (exit 1"), "{codex}\n{screen}");
    assert!(screen.contains("not mine: codex"), "{screen}");

    // The same comparison in `top`, from any member's row.
    tmux.type_line("main", "clear");
    tmux.type_line("main", &format!("{fugue} top"));
    tmux.wait_for("main", "race:0");
    tmux.send_keys("main", &["C"]);
    let shown = tmux.wait_for("main", "fugue compare race");
    assert!(shown.contains("race-claude-2") && shown.contains("passed"), "{shown}");
    assert!(!shown.contains("m merge"), "a comparison has no merge key: {shown}");
    tmux.send_keys("main", &["q"]);
    tmux.wait_for("main", "D diff");
    tmux.send_keys("main", &["q"]);
    // Typed before top has ended, the next line would be top's keys (CI saw
    // it lost): wait for the shell's prompt on a screen without top.
    tmux.until("main", "the shell's prompt after top", |screen| {
        let last = screen.lines().rev().find(|line| !line.trim().is_empty())?;
        let prompt = last.trim_end().ends_with('#') || last.trim_end().ends_with('$');
        (prompt && !screen.contains("D diff")).then_some(())
    });

    // Pick the first: its work committed and merged; the others discarded
    // once the person says yes.
    tmux.type_line("main", "clear");
    tmux.type_line("main", &format!("{fugue} compare race --pick race-claude-1"));
    tmux.wait_for(
        "main",
        "discard the other 2 worktree(s) (race-claude-2, race-codex-1), with their work? [y/N]",
    );
    tmux.type_line("main", "y");
    tmux.wait_for(
        "main",
        "merged fugue/race-claude-1; discarded race-claude-2, race-codex-1",
    );
    let made = std::fs::read_to_string(repo.join("made.txt")).unwrap();
    assert_eq!(made, format!("claude {}\n", members[0]["port"]));
    let listed = daemon.cli(&["--json", "worktrees"]).json();
    let left: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].as_str().unwrap())
        .collect();
    assert_eq!(left, ["race-claude-1"]);
    assert!(client.pane_status(members[2]["pane"].as_str().unwrap()).await.is_err());
}

/// fugue_delegate through the real fugue-mcp, blocking (no tasks declared),
/// after the person said yes: the child starts in a worktree of its own, edits
/// a file, asks for permission (said in a progress notification), is
/// approved, and the call returns its final message and what it changed.
// Two workers: the call runs (and its client answers the bridge) while the
// test's own blocking CLI calls wait for the child.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delegation_blocks_with_progress_and_returns_the_diff() {
    use rmcp::model::{CallToolRequestParams, ProgressToken, RequestMetaObject};
    let daemon = Daemon::start();
    let repo = repository(&daemon);
    let fake = fugue_tests::bin("fake-agent").display().to_string();
    let agent = format!("claude=sh -c 'echo delegated > work.txt; exec {fake}'");
    let person = Person {
        yes: Some(true),
        asked: Default::default(),
        progress: Default::default(),
    };
    let mcp = bridge_for(
        &daemon,
        person.clone(),
        rmcp::service::ClientLifecycleMode::Initialize,
        &["--agent-command", &agent],
    )
    .await;
    let arguments = serde_json::json!({"prompt": "write it", "working_dir": repo, "worktree": "helper",
        "name": "helper"});
    let mut call = CallToolRequestParams::new("fugue_delegate").with_arguments(fugue_tests::mcp::arguments(arguments));
    call.meta = Some(RequestMetaObject::with_progress_token(ProgressToken(
        rmcp::model::NumberOrString::Number(7),
    )));
    let calling = tokio::spawn({
        let peer = mcp.peer().clone();
        async move { peer.call_tool(call).await }
    });
    // The child asks; the person approves it from the CLI.
    let child = daemon.until_event_blocking("the child's pane", fugue_tests::DEADLINE, || {
        let status = daemon.cli(&["--json", "status", "helper:0"]);
        status
            .status
            .success()
            .then(|| status.json()["id"].as_str().map(String::from))
            .flatten()
    });
    let client = daemon.client().await;
    wait_for_text(&client, &child, "Do you want to proceed?").await;
    let prompt_id = daemon.wait_agent_state(&child, "waiting_for_permission")["prompt_id"]
        .as_str()
        .expect("a permission prompt's id")
        .to_string();
    daemon.cli(&["approve", &child, &prompt_id]).ok();
    let result = calling.await.unwrap().expect("a tool result");
    let result = result.structured_content.expect("structured");
    assert_eq!(
        (&result["state"], &result["branch"]),
        (&serde_json::json!("idle"), &serde_json::json!("fugue/helper")),
        "{result}"
    );
    assert!(
        result["final_message"]["text"]
            .as_str()
            .unwrap()
            .contains("approved: write it"),
        "{result}"
    );
    let files = &result["diff"]["files"];
    assert_eq!(
        (&files[0]["path"], &files[0]["status"]),
        (&serde_json::json!("work.txt"), &serde_json::json!("added")),
        "{result}"
    );
    assert_eq!(result["diff"]["added"], 1);
    let asked = person.asked.lock().unwrap().clone();
    assert!(
        asked[0].starts_with("Delegate to claude in a new git worktree"),
        "{asked:?}"
    );
    let heard = person.progress.lock().unwrap().clone();
    assert!(heard.iter().any(|m| m.contains("waits for a person")), "{heard:?}");
}

/// `fugue diff --patch` is a git patch that `git apply` takes on the base
/// commit, whatever the change: an edit, a deletion (committed), an
/// executable bit, a new text file and a new binary file (neither added).
/// HTTP (`format=patch`) and MCP (`format: patch`) give the same text. A
/// patch over 8 MiB is refused, never cut.
#[tokio::test]
async fn a_patch_applies_on_the_base_commit() {
    let daemon = Daemon::start();
    let client = daemon.client().await;
    let repo = repository(&daemon);
    std::fs::write(repo.join("gone.txt"), "bye\n").unwrap();
    std::fs::write(repo.join("run.sh"), "echo hi\n").unwrap();
    git(&repo, &["add", "gone.txt", "run.sh"]);
    git(&repo, &["commit", "--quiet", "-m", "second"]);
    daemon.cli(&["new", "w", "--cwd", repo.to_str().unwrap()]).ok();
    let commit = "git -c user.name=t -c user.email=t@t.invalid commit --quiet -m work";
    let script = format!(
        "echo more >> a.txt && git rm --quiet gone.txt && {commit} && chmod +x run.sh && echo new > new.txt && \
         head -c 3000 /dev/urandom > blob.bin && echo patch-ready; exec sleep 600"
    );
    let (pane, dir, _) = run_in_worktree(&daemon, "p", &script);
    wait_for_text(&client, &pane, "patch-ready").await;

    let out = daemon.cli(&["diff", &pane, "--patch"]);
    assert!(out.status.success(), "{}", out.stderr);
    let patch = out.stdout;
    for part in [
        "diff --git a/blob.bin b/blob.bin",
        "GIT binary patch",
        "new file mode 100644",
        "deleted file mode 100644",
        "old mode 100644\nnew mode 100755",
    ] {
        assert!(patch.contains(part), "no {part:?} in:\n{patch}");
    }
    // On a checkout of the base commit, it applies and gives the worktree's files.
    let base = daemon.cli(&["--json", "diff", &pane]).json()["base"]
        .as_str()
        .expect("the base commit")
        .to_string();
    let check = daemon.dir.path().join("check");
    git(
        &repo,
        &["worktree", "add", "--quiet", "--detach", check.to_str().unwrap(), &base],
    );
    let file = daemon.dir.path().join("work.patch");
    std::fs::write(&file, &patch).unwrap();
    git(&check, &["apply", "--check", file.to_str().unwrap()]);
    git(&check, &["apply", file.to_str().unwrap()]);
    for name in ["a.txt", "new.txt", "blob.bin", "run.sh"] {
        assert_eq!(
            std::fs::read(check.join(name)).unwrap(),
            std::fs::read(dir.join(name)).unwrap(),
            "{name}"
        );
    }
    assert!(!check.join("gone.txt").exists());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(check.join("run.sh")).unwrap().permissions().mode();
    assert_eq!(mode & 0o111, 0o111, "run.sh is not executable: {mode:o}");

    // The same patch over MCP and HTTP.
    // (The bridge finds the worktree's record where the CLI made it.)
    let mut bridge = fugue_tests::mcp::bridge_command(&daemon);
    bridge.env("XDG_STATE_HOME", daemon.dir.path().join("state"));
    let mcp = fugue_tests::mcp::serve_stdio(bridge).await;
    let over_mcp = fugue_tests::mcp::ok(
        &mcp,
        "fugue_diff",
        serde_json::json!({"terminal_id": pane, "format": "patch"}),
    )
    .await;
    assert_eq!(over_mcp["patch"], patch.as_str());
    assert!(
        over_mcp["files"][0]["hunks"].as_array().unwrap().is_empty(),
        "{over_mcp}"
    );
    let web = crate::web::Web::start(&daemon, &[]);
    let response = web
        .request(reqwest::Method::GET, &format!("/api/panes/{pane}/diff?format=patch"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["content-type"], "text/x-diff");
    assert_eq!(response.text().await.unwrap(), patch);

    // Past the cap: refused, with nothing printed.
    let line = "x".repeat(99) + "\n";
    std::fs::write(dir.join("huge.txt"), line.repeat(90_000)).unwrap();
    let refused = daemon.cli(&["diff", &pane, "--patch"]);
    assert!(!refused.status.success());
    assert!(refused.stdout.is_empty(), "a cut patch was printed");
    assert!(refused.stderr.contains("longer than 8 MiB"), "{}", refused.stderr);
    let _ = mcp.cancel().await;
}
