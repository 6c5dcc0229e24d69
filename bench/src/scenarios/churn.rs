//! Scenario 8: an unrelated ListSessions while 200 clients create and release

use super::{direct, row, Sizes};
use crate::env::{percentile, poll, Daemon, Error};
use crate::Row;
use std::path::Path;
use std::time::{Duration, Instant};

/// Scenario 8: an unrelated ListSessions while 200 clients create and release
/// panes as fast as they can.
pub(super) async fn run(dir: &Path, sizes: &Sizes) -> Result<Vec<Row>, Error> {
    let daemon = Daemon::start(dir, "churn").await?;
    let clients = sizes.churn_clients;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let cycles = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut workers = Vec::new();
    for n in 0..clients {
        let client = daemon.client().await?;
        let name = format!("c{n}");
        client
            .create_session(&name, Some(dir), vec![])
            .await
            .map_err(|e| e.to_string())?;
        let (stop, cycles) = (stop.clone(), cycles.clone());
        workers.push(tokio::spawn(async move {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let pane = client
                    .create_pane(direct(&name, "true", &[]))
                    .await
                    .map_err(|e| e.to_string())?;
                client
                    .release_pane(&pane.id.to_string())
                    .await
                    .map_err(|e| e.to_string())?;
                cycles.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            Ok::<(), Error>(())
        }));
    }
    let observer = daemon.client().await?;
    // Let the churn get going before measuring.
    poll("churn to start", Duration::from_secs(30), || {
        let done = cycles.load(std::sync::atomic::Ordering::Relaxed);
        async move { (done >= clients).then_some(()) }
    })
    .await?;
    let mut millis = Vec::new();
    let started = Instant::now();
    for _ in 0..sizes.churn_samples {
        let t = Instant::now();
        observer.list_sessions().await.map_err(|e| e.to_string())?;
        millis.push(t.elapsed().as_secs_f64() * 1e3);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let window = started.elapsed().as_secs_f64();
    let before = cycles.load(std::sync::atomic::Ordering::Relaxed);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for worker in workers {
        worker.await.map_err(|e| e.to_string())??;
    }
    let (p50, p99) = (percentile(&mut millis, 50.0), percentile(&mut millis, 99.0));
    Ok(vec![row(
        "8 churn",
        &format!("ListSessions while {clients} clients create and release panes, p50 (p99)"),
        format!("{p50:.2} ms ({p99:.2} ms)"),
        format!("{:.0} panes created and released per s", before as f64 / window),
        "p50 < 20 ms",
        Some(p50 < 20.0),
    )])
}
