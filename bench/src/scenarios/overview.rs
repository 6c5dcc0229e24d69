//! `fugue top` in tmux over `scale_sessions * 10` panes: how long after a

use super::{direct, row, Sizes};
use crate::env::{self, Daemon, Error, Tmux};
use crate::Row;
use std::path::Path;
use std::time::{Duration, Instant};

/// `fugue top` in tmux over `scale_sessions * 10` panes: how long after a
/// pane event (a rename, as `fugue rename-pane` makes it) the screen shows it,
/// read back with `tmux capture-pane`; and what one overview read costs.
pub(super) async fn run(dir: &Path, sizes: &Sizes) -> Result<Vec<Row>, Error> {
    let total = sizes.scale_sessions * 10;
    let daemon = Daemon::start(dir, "overview").await?;
    let client = daemon.client().await?;
    for s in 0..sizes.scale_sessions {
        let name = format!("o{s}");
        client
            .create_session(&name, Some(dir), vec![])
            .await
            .map_err(|e| e.to_string())?;
        for _ in 0..10 {
            client
                .create_pane(direct(&name, "sleep", &["3600"]))
                .await
                .map_err(|e| e.to_string())?;
        }
    }
    let started = Instant::now();
    let listed = client.overview(None).await.map_err(|e| e.to_string())?.len();
    let read_ms = started.elapsed().as_secs_f64() * 1e3;
    let tmux = Tmux::start(dir, 160, 40, 1000)?;
    let top = format!(
        "{} --socket {} top",
        env::bin("fugue")?.display(),
        daemon.socket.display()
    );
    tmux.run(&["respawn-pane", "-k", "-t", "b", &top])?;
    let target = format!("o{}:3", sizes.scale_sessions / 2);
    let screen = |tmux: &Tmux| tmux.run(&["capture-pane", "-p", "-t", "b"]).unwrap_or_default();
    let shown = |tmux: &Tmux, text: &str, within: Duration| {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if screen(tmux).contains(text) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        false
    };
    if !shown(&tmux, &format!("{total} panes"), Duration::from_secs(30)) {
        return Err(format!("fugue top did not list {total} panes: {}", screen(&tmux)));
    }
    // Only the pane renamed on screen, so it is drawn wherever it sorts.
    tmux.run(&["send-keys", "-t", "b", "/"])?;
    tmux.run(&["send-keys", "-t", "b", "-l", &target])?;
    tmux.run(&["send-keys", "-t", "b", "Enter"])?;
    let mut times = Vec::new();
    for n in 0..sizes.reactions.clamp(5, 20) {
        let title = format!("renamed-{n}");
        let asked = Instant::now();
        client.rename_pane(&target, &title).await.map_err(|e| e.to_string())?;
        if !shown(&tmux, &title, Duration::from_secs(10)) {
            return Err(format!("fugue top did not show {title}: {}", screen(&tmux)));
        }
        times.push(asked.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    let worst = times[times.len() - 1];
    Ok(vec![
        row(
            "13 fugue top",
            &format!(
                "pane event -> on screen, {total} panes (median, worst of {})",
                times.len()
            ),
            format!("{median:.1} ms, {worst:.1} ms"),
            "-".into(),
            "median < 100 ms",
            Some(median < 100.0),
        ),
        row(
            "13 fugue top",
            &format!("one overview read of {listed} panes"),
            format!("{read_ms:.1} ms"),
            "-".into(),
            "-",
            None,
        ),
    ])
}
