//! Scenario 17: agents at rest. Many fake Claude Codes (fake-agent as
//! `claude`, keeping Claude Code's status file) sit idle at their prompts;
//! fugued's CPU per second against tmux holding the same programs, measured
//! over the same stretch, and the overview's p99 with all of them there. Then
//! half of them hibernate: the memory freed (their processes' RSS) and the
//! time for a wake.

use super::{direct, row, spread_specs, Sizes};
use crate::env::{self, poll, Daemon, Error, Tmux};
use crate::Row;
use fugue_protocol::{AgentState, EnvVar};
use std::path::Path;
use std::time::{Duration, Instant};

pub(super) async fn run(dir: &Path, sizes: &Sizes) -> Result<Vec<Row>, Error> {
    let agents = sizes.rest_agents;
    let claude = fake_claude(dir)?;
    let config = dir.join("rest-claude-config");
    let daemon = Daemon::start(dir, "rest").await?;
    let client = daemon.client().await?;
    let env = [
        ("CLAUDE_CONFIG_DIR", config.display().to_string()),
        ("FUGUE_AGENT_HOOKS", "0".into()),
    ];
    let panes = spread_specs(&client, dir, "rest", agents, |session, _| {
        let mut spec = direct(session, &claude, &[]);
        spec.env = env
            .iter()
            .map(|(name, value)| EnvVar {
                name: name.to_string(),
                value: value.clone(),
            })
            .collect();
        spec
    })
    .await?;
    // tmux holds the same programs, one window each.
    let tmux = Tmux::start(dir, 120, 40, 2000)?;
    for _ in 0..agents {
        tmux.run(&[
            "new-window",
            "-d",
            "-e",
            &format!("CLAUDE_CONFIG_DIR={}-tmux", config.display()),
            &claude,
        ])?;
    }
    let tmux_pid = tmux.server_pid()?;
    poll("every fake agent to be idle", Duration::from_secs(120), || {
        let client = client.clone();
        async move {
            let overview = client.overview(None).await.ok()?;
            let idle = overview
                .iter()
                .filter(|p| p.agent.as_ref().is_some_and(|a| a.state == AgentState::Idle))
                .count();
            (idle == agents).then_some(())
        }
    })
    .await?;
    // Start-up's looks (the status file search, settle times) end; then the stretch.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let window = Duration::from_secs(sizes.rest_secs);
    let rates = env::cpu_rates(&[daemon.pid(), tmux_pid], window).await;
    let (fugue_rate, tmux_rate) = (rates[0], rates[1]);
    drop(tmux);
    let mut overview_ms = Vec::new();
    for _ in 0..sizes.rest_overviews {
        let started = Instant::now();
        client.overview(None).await.map_err(|e| e.to_string())?;
        overview_ms.push(started.elapsed().as_secs_f64() * 1e3);
    }
    let p99 = env::percentile(&mut overview_ms, 99.0);
    let mut rows = vec![
        row(
            "17 agents at rest",
            &format!("{agents} fake Claude Codes idle, CPU over {} s", sizes.rest_secs),
            format!("{fugue_rate:.2} ms/s"),
            format!("tmux {tmux_rate:.2} ms/s"),
            "<= 20 ms/s",
            Some(fugue_rate <= 20.0),
        ),
        row(
            "17 agents at rest",
            &format!("overview of {agents} agents at rest, p99 of {}", sizes.rest_overviews),
            format!("{p99:.1} ms"),
            String::new(),
            "",
            None,
        ),
    ];
    rows.extend(hibernation(&client, &panes[..(panes.len() / 2).min(100)]).await?);
    Ok(rows)
}

/// Hibernates `panes`: the RSS their processes held, and the median wake.
async fn hibernation(client: &fugue_client::Client, panes: &[fugue_protocol::PaneInfo]) -> Result<Vec<Row>, Error> {
    let held_kib: u64 = panes.iter().map(|p| env::rss_kib(p.pid)).sum();
    for pane in panes {
        client
            .hibernate(&pane.id.to_string())
            .await
            .map_err(|e| e.to_string())?;
    }
    let gone = panes.iter().filter(|p| env::process_gone(p.pid)).count();
    let mut wakes = Vec::new();
    for pane in panes.iter().take(10) {
        let started = Instant::now();
        client.wake(&pane.id.to_string()).await.map_err(|e| e.to_string())?;
        wakes.push(started.elapsed().as_secs_f64() * 1e3);
    }
    let wake_ms = env::median(&mut wakes);
    Ok(vec![
        row(
            "17 agents at rest",
            &format!(
                "hibernating {} fake agents: their RSS freed ({gone} processes gone)",
                panes.len()
            ),
            format!("{:.1} MB", held_kib as f64 / 1024.0),
            String::new(),
            "",
            None,
        ),
        row(
            "17 agents at rest",
            "a fake agent's wake, ready for a prompt (median of 10)",
            format!("{wake_ms:.0} ms"),
            String::new(),
            "",
            None,
        ),
    ])
}

/// fake-agent linked as `claude`, so fugue follows it as Claude Code.
fn fake_claude(dir: &Path) -> Result<String, Error> {
    let bin_dir = dir.join("rest-bin");
    let link = bin_dir.join("claude");
    if !link.exists() {
        std::fs::create_dir_all(&bin_dir).map_err(|e| e.to_string())?;
        std::os::unix::fs::symlink(env::bin("fake-agent")?, &link).map_err(|e| e.to_string())?;
    }
    Ok(link.display().to_string())
}
