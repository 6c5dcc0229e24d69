//! Scenario 5: from writing a line into a pane to a pattern wait returning.

use super::{direct, row, Sizes};
use crate::env::{percentile, Daemon, Error};
use crate::Row;
use fugue_protocol::{ReadMode, WaitUntil};
use std::path::Path;
use std::time::{Duration, Instant};

/// Scenario 5: from writing a line into a pane to a pattern wait returning.
pub(super) async fn run(dir: &Path, sizes: &Sizes) -> Result<Vec<Row>, Error> {
    let daemon = Daemon::start(dir, "react").await?;
    let waiter = daemon.client().await?;
    let writer = daemon.client().await?;
    waiter
        .create_session("react", Some(dir), vec![])
        .await
        .map_err(|e| e.to_string())?;
    let id = waiter
        .create_pane(direct("react", "cat", &[]))
        .await
        .map_err(|e| e.to_string())?
        .id
        .to_string();
    let mut millis = Vec::new();
    for n in 0..sizes.reactions {
        let marker = format!("mark{n}x");
        let since = waiter
            .read_output(
                &id,
                ReadMode::Raw {
                    since: None,
                    max_bytes: Some(0),
                },
            )
            .await
            .map_err(|e| e.to_string())?
            .next_offset;
        let until = WaitUntil {
            pattern: Some(marker.clone()),
            since: Some(since),
            ..Default::default()
        };
        let wait = {
            let waiter = waiter.clone();
            let id = id.clone();
            tokio::spawn(async move { waiter.wait_for(&id, until, Duration::from_secs(10)).await })
        };
        tokio::task::yield_now().await;
        let started = Instant::now();
        writer
            .write_input(&id, format!("{marker}\r").as_bytes())
            .await
            .map_err(|e| e.to_string())?;
        let outcome = wait.await.map_err(|e| e.to_string())?.map_err(|e| e.to_string())?;
        millis.push(started.elapsed().as_secs_f64() * 1e3);
        if outcome.matched.as_deref() != Some(marker.as_str()) {
            return Err(format!("reaction wait ended with {:?}", outcome.condition));
        }
    }
    let (p50, p99) = (percentile(&mut millis, 50.0), percentile(&mut millis, 99.0));
    Ok(vec![row(
        "5 reaction",
        "write -> pattern wait returns, p50 (p99)",
        format!("{p50:.2} ms ({p99:.2} ms)"),
        String::new(),
        "p50 < 5 ms",
        Some(p50 < 5.0),
    )])
}
