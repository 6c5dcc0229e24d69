//! Codex through its app-server: the Rust types fugued reads it with are
//! generated from the pinned Codex's own schema and kept fresh here.

use fugue_tests::agents::Cli;
use std::path::Path;

/// `daemon/src/agent/codex_protocol.rs` is what the pinned Codex's schema
/// generates now (with `FUGUE_WRITE_CODEX_TYPES=1`, writes it).
#[test]
fn codex_app_server_types_are_fresh() {
    fugue_tests::require!("tests/agents/node_modules/.fugue-installed-lock.json");
    let out = tempfile::tempdir().expect("a directory for the schema");
    let home = tempfile::tempdir().expect("a HOME for Codex");
    let ran = std::process::Command::new(Cli::Codex.executable())
        .args(["app-server", "generate-json-schema", "--out"])
        .arg(out.path())
        .env("HOME", home.path())
        .output()
        .expect("codex app-server generate-json-schema");
    assert!(ran.status.success(), "{}", String::from_utf8_lossy(&ran.stderr));
    let generated = fugue_tests::codex_schema::generate(out.path(), &Cli::Codex.version()).expect("the types");
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../daemon/src/agent/codex_protocol.rs");
    if std::env::var_os("FUGUE_WRITE_CODEX_TYPES").is_some() {
        std::fs::write(&committed, &generated).expect("write codex_protocol.rs");
    }
    let now = std::fs::read_to_string(&committed).unwrap_or_default();
    assert!(
        now == generated,
        "daemon/src/agent/codex_protocol.rs is not what Codex {}'s schema gives: run this test with FUGUE_WRITE_CODEX_TYPES=1",
        Cli::Codex.version()
    );
}

/// Codex in a pane runs as a client of its own app-server, and fugued reads
/// the agent from that server's events first (`source` `app_server`): the
/// turn's states, then the permission prompt with the exact command read
/// from the protocol, approved through the protocol (the daemon logs that no
/// key was sent: the answer is the JSON-RPC response), the turn finishing
/// and its token totals. Across a live upgrade the new fugued connects again
/// and the next prompt is read and approved the same way. Then the
/// app-server is killed: the connection's end is logged, the screen reads
/// the agent again, and no state is made up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_is_read_and_approved_through_its_app_server() {
    use fugue_client::protocol::{AgentState, Event, PermissionAnswer, StateSource};
    use fugue_tests::agents::{end_processes_with_home, prepare, ModelStub};
    fugue_tests::require!(
        "unshare",
        "nsenter",
        "ip",
        "tests/agents/node_modules/.fugue-installed-lock.json"
    );
    let daemon = fugue_tests::Daemon::start_offline();
    let stub = ModelStub::start(&daemon);
    let launch = prepare(
        Cli::Codex,
        &stub,
        daemon.dir.path(),
        "Create a file. FILE=through-server.txt",
    );
    let client = daemon.client().await;
    let mut events = client.subscribe().await.expect("subscribe");
    let pane = super::start_in_session(&client, launch.spec("agents")).await;
    let id = pane.id.to_string();
    assert_eq!(
        pane.command[0],
        launch.program.display().to_string(),
        "the pane shows Codex's own command"
    );
    super::wait_agent_state(&client, &id, AgentState::WaitingForPermission).await;
    let asked = client.agent_status(&id).await.expect("status");
    assert_eq!(asked.source, StateSource::AppServer, "{asked:?}");
    assert!(
        asked.evidence[0].starts_with("$ ") && asked.evidence[0].contains("touch through-server.txt"),
        "the exact command: {:?}",
        asked.evidence
    );
    // The turn ran before it asked, as the app-server said.
    let mut seen = Vec::new();
    while let Ok(Some(event)) = tokio::time::timeout(std::time::Duration::from_millis(10), events.recv()).await {
        if let Event::AgentStateChanged { agent, .. } = event {
            seen.push((agent.state, agent.source));
        }
    }
    assert!(
        seen.contains(&(AgentState::Busy, StateSource::AppServer)),
        "no busy turn from the app-server: {seen:?}"
    );
    let prompt_id = asked.prompt_id.clone().expect("a prompt id");
    client
        .answer_permission(&id, &prompt_id, PermissionAnswer::Approve)
        .await
        .expect("approve");
    daemon
        .until_logged_async("approval answered through codex's app-server")
        .await;
    super::wait_agent_state(&client, &id, AgentState::Idle).await;
    assert!(
        launch.project.join("through-server.txt").exists(),
        "the approved command ran"
    );
    let done = client.agent_status(&id).await.expect("status");
    assert_eq!(done.source, StateSource::AppServer);
    let tokens = done.tokens.expect("token totals from the app-server");
    assert!(tokens.input > 0 && tokens.output > 0, "{tokens:?}");
    // Answering it again: nothing pending any more.
    let again = client
        .answer_permission(&id, &prompt_id, PermissionAnswer::Approve)
        .await;
    assert!(again.is_err() || again.as_ref().is_ok_and(|a| a.already), "{again:?}");

    // A live upgrade keeps the pane's processes; the new fugued connects to
    // the same app-server again and learns the thread from its next status.
    let upgraded = daemon.cli(&["daemon", "upgrade"]).ok();
    assert!(upgraded.starts_with("upgraded in place"), "{upgraded}");
    let client = daemon.client().await;
    let sent = fugue_client::ops::send_prompt(&client, &id, "Once more. FILE=after-upgrade.txt", None)
        .await
        .expect("a prompt after the upgrade");
    assert!(sent.went_busy, "{sent:?}");
    super::wait_agent_state(&client, &id, AgentState::WaitingForPermission).await;
    let asked = client.agent_status(&id).await.expect("status");
    assert_eq!(asked.source, StateSource::AppServer, "after the upgrade: {asked:?}");
    let prompt_id = asked.prompt_id.clone().expect("a prompt id");
    client
        .answer_permission(&id, &prompt_id, PermissionAnswer::Approve)
        .await
        .expect("approve after the upgrade");
    super::wait_agent_state(&client, &id, AgentState::Idle).await;
    assert!(launch.project.join("after-upgrade.txt").exists());
    let log = std::fs::read_to_string(daemon.dir.path().join("fugued.stderr")).unwrap_or_default();
    assert_eq!(
        log.matches("approval answered through codex's app-server").count(),
        2,
        "both answers went through the protocol"
    );

    // The app-server dies: the screen reads Codex again, with no state made up.
    // Its end is one more logged than before.
    let log = daemon.dir.path().join("fugued.stderr");
    let ends = |log: &Path| {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        text.matches("Codex app-server connection ended").count()
    };
    let before = ends(&log);
    let server = fugue_tests::procfs::children(pane.pid)
        .into_iter()
        .find(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            String::from_utf8_lossy(&cmdline).contains("app-server")
        })
        .expect("the pane's app-server");
    // npm's `codex` is a Node launcher of the Rust binary: end both.
    let mut doomed = vec![server];
    let mut at = 0;
    while at < doomed.len() {
        doomed.extend(fugue_tests::procfs::children(doomed[at]));
        at += 1;
    }
    for pid in doomed.into_iter().rev() {
        fugue_tests::send_signal(pid, libc::SIGKILL);
    }
    let watched = log.clone();
    fugue_tests::files::until_changed_async(
        &watched,
        "the connection's end logged",
        fugue_tests::DEADLINE,
        move || (ends(&log) > before).then_some(()),
    )
    .await;
    // A look under way when it ended may still have read it: the next one.
    client.agent_status(&id).await.expect("status");
    let after = client.agent_status(&id).await.expect("status");
    assert_ne!(after.source, StateSource::AppServer, "{after:?}");
    assert!(
        matches!(after.state, AgentState::Idle | AgentState::Exited | AgentState::Unknown),
        "a made-up state after the app-server died: {after:?}"
    );
    println!("after the app-server died: {} from {}", after.state, after.source);
    end_processes_with_home(&launch.home);
}
