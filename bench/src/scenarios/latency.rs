//! Scenario 3: ListPanes latency on one connection; one-shot `fugue ls` vs `tmux ls`.

use super::{direct, row, Sizes};
use crate::env::{bin, median, percentile, Error, Tmux};
use crate::Row;
use std::path::Path;
use std::time::Instant;

/// Scenario 3: ListPanes latency on one connection; one-shot `fugue ls` vs `tmux ls`.
pub(super) async fn run(dir: &Path, sizes: &Sizes) -> Result<Vec<Row>, Error> {
    let (daemon, client) = super::daemon_with_session(dir, "lat", "lat").await?;
    for _ in 0..10 {
        client
            .create_pane(direct("lat", "sleep", &["3600"]))
            .await
            .map_err(|e| e.to_string())?;
    }
    let mut micros = Vec::with_capacity(sizes.latency_calls);
    for _ in 0..sizes.latency_calls {
        let started = Instant::now();
        let panes = client.list_panes(Some("lat")).await.map_err(|e| e.to_string())?;
        micros.push(started.elapsed().as_secs_f64() * 1e6);
        if panes.len() != 10 {
            return Err(format!("ListPanes returned {} panes", panes.len()));
        }
    }
    let (p50, p99) = (percentile(&mut micros, 50.0), percentile(&mut micros, 99.0));

    let tmux = Tmux::start(dir, 80, 24, 2000)?;
    let fugue_bin = bin("fugue")?;
    let (mut fugue_ls, mut tmux_ls) = (Vec::new(), Vec::new());
    for _ in 0..sizes.cli_runs {
        let started = Instant::now();
        let out = std::process::Command::new(&fugue_bin)
            .arg("--socket")
            .arg(&daemon.socket)
            .arg("ls")
            .output()
            .map_err(|e| e.to_string())?;
        fugue_ls.push(started.elapsed().as_secs_f64() * 1e3);
        if !out.status.success() {
            return Err(format!("fugue ls failed: {}", String::from_utf8_lossy(&out.stderr)));
        }
        let started = Instant::now();
        tmux.run(&["ls"])?;
        tmux_ls.push(started.elapsed().as_secs_f64() * 1e3);
    }
    let (f, t) = (median(&mut fugue_ls), median(&mut tmux_ls));
    Ok(vec![
        row(
            "3 latency",
            &format!("ListPanes (10 panes) x{} on one connection, p50", sizes.latency_calls),
            format!("{p50:.0} us"),
            String::new(),
            "< 100 us",
            Some(p50 < 100.0),
        ),
        row(
            "3 latency",
            "ListPanes p99",
            format!("{p99:.0} us"),
            String::new(),
            "< 1 ms",
            Some(p99 < 1000.0),
        ),
        row(
            "3 latency",
            "one-shot `fugue ls` wall time, median",
            format!("{f:.1} ms"),
            format!("`tmux ls` {t:.1} ms"),
            "<= 0.6x tmux",
            Some(f <= 0.6 * t),
        ),
    ])
}
