//! Scenario 7: many panes across many sessions: create, hold idle, destroy;

use super::{direct, row, Sizes};
use crate::env::{self, poll, Daemon, Error, PeakRss, Tmux};
use crate::Row;
use std::path::Path;
use std::time::{Duration, Instant};

/// Scenario 7: many panes across many sessions: create, hold idle, destroy;
/// against tmux doing the same with windows.
pub(super) async fn run(dir: &Path, sizes: &Sizes) -> Result<Vec<Row>, Error> {
    let total = sizes.scale_sessions * 10;
    let daemon = Daemon::start(dir, "scale").await?;
    let client = daemon.client().await?;
    let peak = PeakRss::start(daemon.pid());
    let started = Instant::now();
    let creations = (0..sizes.scale_sessions).map(|s| {
        let client = client.clone();
        let dir = dir.to_path_buf();
        async move {
            let name = format!("s{s}");
            client
                .create_session(&name, Some(&dir), vec![])
                .await
                .map_err(|e| e.to_string())?;
            let mut pids = Vec::new();
            for _ in 0..10 {
                let pane = client
                    .create_pane(direct(&name, "sleep", &["3600"]))
                    .await
                    .map_err(|e| e.to_string())?;
                pids.push(pane.pid);
            }
            Ok::<_, Error>(pids)
        }
    });
    let mut pids = Vec::new();
    for result in futures::future::join_all(creations).await {
        pids.extend(result?);
    }
    let created = started.elapsed().as_secs_f64();
    let peak_mb = peak.finish() as f64 / 1024.0;
    let started = Instant::now();
    let listed = client.list_panes(None).await.map_err(|e| e.to_string())?.len();
    let list_ms = started.elapsed().as_secs_f64() * 1e3;
    // Idle cost once creation has settled.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let idle_mb = env::rss_kib(daemon.pid()) as f64 / 1024.0;
    let threads = env::threads(daemon.pid());
    let started = Instant::now();
    for s in 0..sizes.scale_sessions {
        client
            .destroy_session(&format!("s{s}"))
            .await
            .map_err(|e| e.to_string())?;
    }
    let destroyed = started.elapsed().as_secs_f64();
    let leftovers = poll("pane processes to end", Duration::from_secs(15), || {
        let alive = pids.iter().filter(|p| !env::process_gone(**p)).count();
        async move { (alive == 0).then_some(0) }
    })
    .await
    .unwrap_or_else(|_| pids.iter().filter(|p| !env::process_gone(**p)).count());
    let (children, zombies) = env::children(daemon.pid());

    // tmux: the same number of windows running sleep; one tmux command per session
    // (its ten windows chained with `;`), so tmux pays for 100 client starts, not 1000.
    let tmux = Tmux::start(dir, 120, 40, 2000)?;
    let started = Instant::now();
    for s in 0..sizes.scale_sessions {
        let name = format!("t{s}");
        let target = format!("{name}:");
        let mut args = vec!["new-session", "-d", "-s", &name, "sleep 3600"];
        for _ in 1..10 {
            args.extend([";", "new-window", "-d", "-t", &target, "sleep 3600"]);
        }
        tmux.run(&args)?;
    }
    let tmux_created = started.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let tmux_pid = tmux.server_pid()?;
    let tmux_mb = env::rss_kib(tmux_pid) as f64 / 1024.0;
    let tmux_threads = env::threads(tmux_pid);
    drop(tmux);

    let cores = std::thread::available_parallelism().map_or(2, |n| n.get()) as u64;
    let thread_goal = 2 * cores + 4;
    Ok(vec![
        row(
            "7 scale",
            &format!("create {total} panes in {} sessions, s", sizes.scale_sessions),
            format!("{created:.2} ({:.2}x)", created / tmux_created),
            format!("tmux {tmux_created:.2} ({total} windows)"),
            "<= 1.5x tmux",
            Some(created <= 1.5 * tmux_created),
        ),
        row(
            "7 scale",
            &format!("daemon RSS with {total} idle panes, MB"),
            format!(
                "{idle_mb:.1} ({:.2}x; {:.0} KB per pane; peak {peak_mb:.1})",
                idle_mb / tmux_mb,
                (idle_mb * 1024.0) / total as f64
            ),
            format!("tmux {tmux_mb:.1}"),
            "<= 5x tmux",
            Some(idle_mb <= 5.0 * tmux_mb),
        ),
        row(
            "7 scale",
            &format!("daemon threads with {total} panes"),
            format!("{threads}"),
            format!("tmux {tmux_threads}"),
            &format!("<= {thread_goal} (2 x cores + 4)"),
            Some(threads <= thread_goal),
        ),
        row(
            "7 scale",
            "list all, destroy all; leftovers",
            format!("{list_ms:.1} ms, {destroyed:.2} s; listed {listed}"),
            format!("leftover processes {leftovers}, children {children}, zombies {zombies}"),
            "all listed; 0 left, 0 zombies",
            Some(listed == total && leftovers == 0 && zombies == 0 && children == 0),
        ),
    ])
}
