//! The real fugue-mcp on stdio, its client subscribed to a pane's screen: the

use super::{direct, row, Sizes};
use crate::env::{self, Daemon, Error};
use crate::Row;
use std::path::Path;
use std::time::{Duration, Instant};

/// Sends the uris of `notifications/resources/updated` to the bench.
#[derive(Clone)]
struct Updates(tokio::sync::mpsc::UnboundedSender<String>);

impl rmcp::ClientHandler for Updates {
    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        let _ = self.0.send(params.uri);
    }
}

/// The real fugue-mcp on stdio, its client subscribed to a pane's screen: the
/// time from a write to the pane (through the daemon, as a person's typing) to
/// the client being told, with no polling anywhere.
pub(super) async fn run(dir: &Path, sizes: &Sizes) -> Result<Vec<Row>, Error> {
    use rmcp::ServiceExt;
    let daemon = Daemon::start(dir, "subscribe").await?;
    let client = daemon.client().await?;
    client
        .create_session("s", Some(dir), vec![])
        .await
        .map_err(|e| e.to_string())?;
    let pane = client
        .create_pane(direct("s", "cat", &[]))
        .await
        .map_err(|e| e.to_string())?;
    let id = pane.id.to_string();
    let mut bridge = tokio::process::Command::new(env::bin("fugue-mcp")?);
    bridge.arg("--socket").arg(&daemon.socket);
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(bridge)
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let (updates, mut updated) = tokio::sync::mpsc::unbounded_channel();
    let mcp = Updates(updates).serve(transport).await.map_err(|e| e.to_string())?;
    let uri = format!("fugue://pane/{id}/screen");
    #[allow(deprecated)]
    mcp.subscribe(rmcp::model::SubscribeRequestParams::new(&uri))
        .await
        .map_err(|e| e.to_string())?;
    let mut times = Vec::new();
    for n in 0..sizes.reactions.clamp(5, 50) {
        // Pacing, past the bridge's 20 ms between two updates of one resource
        // (what is measured is a change after quiet, not the rate limit).
        tokio::time::sleep(Duration::from_millis(50)).await;
        while updated.try_recv().is_ok() {}
        let written = Instant::now();
        client
            .write_input(&id, format!("{n}\n").as_bytes())
            .await
            .map_err(|e| e.to_string())?;
        match tokio::time::timeout(Duration::from_secs(5), updated.recv()).await {
            Ok(Some(told)) if told == uri => times.push(written.elapsed().as_secs_f64() * 1e3),
            other => return Err(format!("the subscriber was not told of write {n}: {other:?}")),
        }
    }
    let _ = mcp.cancel().await;
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    let worst = times[times.len() - 1];
    Ok(vec![row(
        "14 MCP subscriber",
        &format!(
            "write to a pane -> notifications/resources/updated at a subscribed client over stdio (median, worst of {})",
            times.len()
        ),
        format!("{median:.2} ms, {worst:.2} ms"),
        "-".into(),
        "median < 50 ms",
        Some(median < 50.0),
    )])
}
