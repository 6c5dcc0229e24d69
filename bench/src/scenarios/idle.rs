//! Scenario 6: CPU the daemon burns with idle panes.

use super::{row, spread, Sizes};
use crate::env::{self, Daemon, Error};
use crate::Row;
use std::path::Path;
use std::time::Duration;

/// Scenario 6: CPU the daemon burns with idle panes.
pub(super) async fn run(dir: &Path, sizes: &Sizes) -> Result<Vec<Row>, Error> {
    let daemon = Daemon::start(dir, "idle").await?;
    let client = daemon.client().await?;
    spread(&client, dir, "idle", sizes.idle_panes, "sleep", &["3600"]).await?;
    drop(client);
    // Let start-up settle, then measure a quiet stretch.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = env::cpu_ms(daemon.pid());
    tokio::time::sleep(Duration::from_secs(sizes.idle_secs)).await;
    let used = env::cpu_ms(daemon.pid()) - before;
    let goal = 20 * sizes.idle_secs / 10;
    Ok(vec![row(
        "6 idle",
        &format!("{} idle panes for {} s, daemon CPU", sizes.idle_panes, sizes.idle_secs),
        format!("{used} ms"),
        String::new(),
        &format!("< {goal} ms"),
        Some(used < goal),
    )])
}
