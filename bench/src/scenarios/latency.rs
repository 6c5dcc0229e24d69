//! Scenario 3: ListPanes latency on one connection; one-shot `fugue ls` vs
//! `tmux ls`; a `send-keys` + `capture-pane -p` round trip through `fugue
//! tmux` vs tmux's own, process starts counted (what an agent's tmux skill does).

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
    let (rf, rt) = tmux_round_trip(&daemon.socket, &fugue_bin, &tmux, sizes.cli_runs)?;
    Ok(vec![
        row(
            "3 latency",
            "`tmux send-keys` + `capture-pane -p` round trip through `fugue tmux` (two process starts), median",
            format!("{rf:.1} ms"),
            format!("tmux {rt:.1} ms"),
            "<= 1.5x tmux",
            Some(rf <= 1.5 * rt),
        ),
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

/// Median wall time (ms) of `send-keys -t rt 'echo N' Enter` then
/// `capture-pane -p -t rt`, each a process of its own: through `fugue tmux`,
/// and through tmux, interleaved. Each capture must show the pane (the round
/// trip reads what is there, as an agent's poll loop does).
fn tmux_round_trip(socket: &Path, fugue_bin: &Path, tmux: &crate::env::Tmux, runs: usize) -> Result<(f64, f64), Error> {
    let fugue = |args: &[&str]| -> Result<String, Error> {
        let out = std::process::Command::new(fugue_bin)
            .arg("--socket")
            .arg(socket)
            .arg("tmux")
            .args(["-L", "bench"])
            .args(args)
            .env_remove("FUGUE_PANE")
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!("fugue tmux {args:?}: {}", String::from_utf8_lossy(&out.stderr)));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    fugue(&["new-session", "-d", "-s", "rt", "-x", "80", "-y", "24", "--", "cat"])?;
    tmux.run(&["new-window", "-d", "-n", "rt", "cat"])?;
    let (mut through_fugue, mut through_tmux) = (Vec::new(), Vec::new());
    for n in 0..runs.max(3) {
        let line = format!("echo {n}");
        let started = Instant::now();
        fugue(&["send-keys", "-t", "rt", &line, "Enter"])?;
        let screen = fugue(&["capture-pane", "-p", "-t", "rt"])?;
        through_fugue.push(started.elapsed().as_secs_f64() * 1e3);
        if screen.lines().count() != 24 {
            return Err(format!(
                "fugue tmux capture-pane printed {} lines",
                screen.lines().count()
            ));
        }
        let started = Instant::now();
        tmux.run(&["send-keys", "-t", ":rt", &line, "Enter"])?;
        tmux.run(&["capture-pane", "-p", "-t", ":rt"])?;
        through_tmux.push(started.elapsed().as_secs_f64() * 1e3);
    }
    fugue(&["kill-server"])?;
    Ok((median(&mut through_fugue), median(&mut through_tmux)))
}
