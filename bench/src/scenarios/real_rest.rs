//! Scenario 18: real agent CLIs at rest (Claude Code, Codex, Gemini CLI, the
//! pinned versions of tests/agents, offline against the model stub). Each got
//! a prompt whose turn asks for permission; every other one was approved and
//! sits idle, the rest wait at the permission prompt. fugued's CPU per second
//! against tmux holding the same programs (left at their prompts) in the same
//! network namespace, over the same stretch; then per CLI, the memory one
//! hibernation frees (its process tree's RSS) and the time its wake takes.

use super::{row, spread_specs, Sizes};
use crate::env::{self, poll, Daemon, Error, Tmux};
use crate::Row;
use fugue_protocol::{AgentState, PaneInfo, WaitCondition, WaitUntil};
use fugue_tests::agents::{end_processes_with_home, prepare, Cli, Launch, ModelStub};
use std::path::Path;
use std::time::{Duration, Instant};

const CLIS: [Cli; 3] = [Cli::Claude, Cli::Codex, Cli::Gemini];
/// A Node CLI starting on a busy machine takes seconds; twenty at once, more.
const READY: Duration = Duration::from_secs(240);

pub(super) async fn run(dir: &Path, sizes: &Sizes) -> Result<Vec<Row>, Error> {
    let installed =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/agents/node_modules/.fugue-installed-lock.json");
    if !installed.is_file() || !rustix::process::geteuid().is_root() {
        let why = "skipped: needs root (a network namespace) and tests/agents installed (scripts/test does)";
        return Ok(vec![row(
            "18 real agents at rest",
            why,
            String::new(),
            String::new(),
            "",
            None,
        )]);
    }
    let count = sizes.real_agents;
    let daemon = Daemon::start_offline(dir, "real").await?;
    let stub = ModelStub::start_in(daemon.pid(), dir, &env::bin("model-stub")?);
    let client = daemon.client().await?;
    let launches: Vec<Launch> = (0..count)
        .map(|i| {
            let root = dir.join(format!("real-{i}"));
            prepare(
                CLIS[i % CLIS.len()],
                &stub,
                &root,
                &format!("Create a file for me. FILE=f{i}.txt"),
            )
        })
        .collect();
    let panes = spread_specs(&client, dir, "real", count, |session, i| launches[i].spec(session)).await?;
    let tmux = Tmux::start_in(dir, 120, 40, 2000, Some(daemon.pid()))?;
    // tmux's copies get homes of their own: Codex shares one app server per
    // home, which would then hold fugue's pane's transcript outside its pane.
    let tmux_launches: Vec<Launch> = launches
        .iter()
        .enumerate()
        .map(|(i, l)| {
            prepare(
                l.cli,
                &stub,
                &dir.join(format!("real-{i}-tmux")),
                &format!("Create a file for me. FILE=t{i}.txt"),
            )
        })
        .collect();
    for launch in &tmux_launches {
        let mut args = vec![
            "new-window".to_string(),
            "-d".into(),
            "-c".into(),
            launch.project.display().to_string(),
        ];
        for (key, value) in &launch.env {
            args.extend(["-e".to_string(), format!("{key}={value}")]);
        }
        args.push(launch.program.display().to_string());
        args.extend(launch.args.iter().cloned());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        tmux.run(&args)?;
    }
    let tmux_pid = tmux.server_pid()?;
    // Each turn asks; every other one is approved and goes idle.
    for (i, pane) in panes.iter().enumerate() {
        let id = pane.id.to_string();
        wait_state(&client, &id, AgentState::WaitingForPermission).await?;
        if i % 2 == 1 {
            client
                .send_keys(&id, &["Enter".into()])
                .await
                .map_err(|e| e.to_string())?;
            wait_state(&client, &id, AgentState::Idle).await?;
        }
    }
    // What they do once at rest (a title request, a spinner that stops) ends.
    tokio::time::sleep(Duration::from_secs(10)).await;
    let window = Duration::from_secs(sizes.rest_secs);
    let rates = env::cpu_rates(&[daemon.pid(), tmux_pid], window).await;
    let (fugue_rate, tmux_rate) = (rates[0], rates[1]);
    drop(tmux);
    let mut rows = vec![row(
        "18 real agents at rest",
        &format!(
            "{count} real agent CLIs (Claude Code, Codex, Gemini CLI; half at a permission prompt, half idle), CPU over {} s",
            sizes.rest_secs
        ),
        format!("{fugue_rate:.2} ms/s"),
        format!("tmux {tmux_rate:.2} ms/s"),
        "<= 1 ms/s",
        Some(fugue_rate <= 1.0),
    )];
    for cli in CLIS {
        // An idle one of this CLI (odd indexes were approved).
        let Some((pane, _)) = panes
            .iter()
            .zip(&launches)
            .enumerate()
            .find_map(|(i, (p, l))| (i % 2 == 1 && l.cli == cli).then_some((p, l)))
        else {
            continue;
        };
        let measured = hibernate_and_wake(&client, cli, pane).await;
        rows.push(measured.unwrap_or_else(|err| {
            let what = format!("{}: hibernation not measured", cli.name());
            row("18 real agents at rest", &what, err, String::new(), "", None)
        }));
    }
    for launch in launches.iter().chain(&tmux_launches) {
        end_processes_with_home(&launch.home);
    }
    Ok(rows)
}

/// Hibernates `pane` (its CLI idle): the RSS of its process tree, freed; then
/// the time a wake takes until it is ready for a prompt.
async fn hibernate_and_wake(client: &fugue_client::Client, cli: Cli, pane: &PaneInfo) -> Result<Row, Error> {
    let id = pane.id.to_string();
    poll("its agent session to be recorded", Duration::from_secs(30), || {
        let (client, id) = (client.clone(), id.clone());
        async move { client.pane_status(&id).await.ok()?.agent_session }
    })
    .await?;
    let tree = process_tree(pane.pid);
    let held_kib: u64 = tree.iter().map(|p| env::rss_kib(*p)).sum();
    client.hibernate(&id).await.map_err(|e| e.to_string())?;
    let left: u64 = tree
        .iter()
        .filter(|p| !env::process_gone(**p))
        .map(|p| env::rss_kib(*p))
        .sum();
    let started = Instant::now();
    client.wake(&id).await.map_err(|e| e.to_string())?;
    let wake_ms = started.elapsed().as_secs_f64() * 1e3;
    Ok(row(
        "18 real agents at rest",
        &format!(
            "{}: hibernation frees (its processes' RSS) / wake until ready",
            cli.name()
        ),
        format!(
            "{:.0} MB / {wake_ms:.0} ms",
            held_kib.saturating_sub(left) as f64 / 1024.0
        ),
        String::new(),
        "",
        None,
    ))
}

/// `pid` and every process below it.
fn process_tree(pid: u32) -> Vec<u32> {
    let mut tree = vec![pid];
    let mut at = 0;
    while at < tree.len() && tree.len() < 256 {
        tree.extend(fugue_tests::procfs::children(tree[at]));
        at += 1;
    }
    tree
}

async fn wait_state(client: &fugue_client::Client, id: &str, state: AgentState) -> Result<(), Error> {
    let until = WaitUntil {
        agent_states: vec![state],
        ..WaitUntil::default()
    };
    let done = client.wait_for(id, until, READY).await.map_err(|e| e.to_string())?;
    match done.condition {
        WaitCondition::AgentState => Ok(()),
        other => Err(format!("pane {id}: {state:?} never came ({other:?})")),
    }
}
