//! Scenario 4: idle RSS, then many panes full of scrollback, against tmux.

use super::{row, spread, Sizes};
use crate::env::{self, Daemon, Error, Tmux};
use crate::Row;
use fugue_protocol::{CaptureWhat, MatchOn, WaitUntil};
use std::path::Path;
use std::time::Duration;

/// Scenario 4: idle RSS, then many panes full of scrollback, against tmux.
pub(super) async fn run(dir: &Path, sizes: &Sizes) -> Result<Vec<Row>, Error> {
    let daemon = Daemon::start(dir, "mem").await?;
    let client = daemon.client().await?;
    client.ping().await.map_err(|e| e.to_string())?;
    let idle = env::rss_kib(daemon.pid()) as f64 / 1024.0;
    let line = "x".repeat(100);
    let script = format!(
        "yes {line} | head -n {}; echo DONE-MARK; exec sleep 3600",
        sizes.memory_lines
    );
    let panes = spread(&client, dir, "mem", sizes.memory_panes, "sh", &["-c", &script]).await?;
    let ids: Vec<String> = panes.iter().map(|p| p.id.to_string()).collect();
    for id in &ids {
        let until = WaitUntil {
            pattern: Some("DONE-MARK".into()),
            on: MatchOn::Output,
            ..Default::default()
        };
        client
            .wait_for(id, until, Duration::from_secs(120))
            .await
            .map_err(|e| e.to_string())?;
    }
    let scrollback = client
        .capture(&ids[0], CaptureWhat::Scrollback, (None, None), false, false)
        .await
        .map_err(|e| e.to_string())?;
    // Steady state: a pane quiet for 1 s gives back the emulator's spare rows.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let fugue = env::rss_kib(daemon.pid()) as f64 / 1024.0;

    let tmux = Tmux::start(dir, 120, 40, sizes.memory_lines as u32)?;
    for n in 0..sizes.memory_panes {
        let command = format!(
            "yes {line} | head -n {}; tmux wait-for -S mem-{n}; exec sleep 3600",
            sizes.memory_lines
        );
        tmux.run(&["new-window", "-d", "-t", "b:", &command])?;
    }
    for n in 0..sizes.memory_panes {
        tmux.run(&["wait-for", &format!("mem-{n}")])?;
    }
    let tmux_rss = env::rss_kib(tmux.server_pid()?) as f64 / 1024.0;
    Ok(vec![
        row(
            "4 memory",
            "idle daemon RSS",
            format!("{idle:.1} MB"),
            String::new(),
            "< 10 MB",
            Some(idle < 10.0),
        ),
        row(
            "4 memory",
            &format!(
                "{} panes x {} lines of 100 chars in scrollback, server RSS",
                sizes.memory_panes, sizes.memory_lines
            ),
            format!(
                "{fugue:.1} MB ({:.2}x; {} lines kept per pane)",
                fugue / tmux_rss,
                scrollback.scrollback_lines
            ),
            format!("tmux (history-limit {}) {tmux_rss:.1} MB", sizes.memory_lines),
            "<= 0.5x tmux",
            Some(fugue <= 0.5 * tmux_rss),
        ),
    ])
}
