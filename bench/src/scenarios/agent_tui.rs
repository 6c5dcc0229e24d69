//! Scenario 9: an agent TUI's redraws, as fast as the pane takes them, while a

use super::{agent_frame, direct, row, Sizes, COLS, ROWS};
use crate::env::{median, Error};
use crate::Row;
use fugue_protocol::{CaptureWhat, PaneSize};
use std::path::Path;
use std::time::Instant;

/// Scenario 9: an agent TUI's redraws, as fast as the pane takes them, while a
/// client captures the screen over and over: MB/s, and captures that caught half
/// a frame (goal: none).
pub(super) async fn run(dir: &Path, sizes: &Sizes) -> Result<Vec<Row>, Error> {
    let path = dir.join("agent-frames.bin");
    let mut stream = Vec::new();
    for n in 0..sizes.agent_frames {
        agent_frame(n, &mut stream);
    }
    std::fs::write(&path, &stream).map_err(|e| e.to_string())?;
    let frame_kb = stream.len() as f64 / sizes.agent_frames as f64 / 1024.0;
    let (_daemon, client) = super::daemon_with_session(dir, "agent", "agent").await?;
    let (mut rates, mut captures, mut torn) = (Vec::new(), 0usize, 0usize);
    for _ in 0..sizes.rounds {
        let mut spec = direct("agent", "cat", &[&path.display().to_string()]);
        spec.size = Some(PaneSize { cols: COLS, rows: ROWS });
        let started = Instant::now();
        let id = client
            .create_pane(spec)
            .await
            .map_err(|e| e.to_string())?
            .id
            .to_string();
        let done = {
            let client = client.clone();
            let id = id.clone();
            tokio::spawn(async move { client.wait_for_exit(&id, None).await })
        };
        while !done.is_finished() {
            let screen = client
                .capture(&id, CaptureWhat::Screen, (None, None), false, false)
                .await
                .map_err(|e| e.to_string())?;
            let (top, bottom) = (screen.lines.first(), screen.lines.last());
            match (top, bottom) {
                // Before the first frame: nothing drawn yet.
                (Some(t), Some(b)) if t.is_empty() && b.is_empty() => continue,
                (Some(t), Some(b)) if t.starts_with("frame ") && t == b => captures += 1,
                _ => {
                    captures += 1;
                    torn += 1;
                }
            }
        }
        done.await.map_err(|e| e.to_string())?.map_err(|e| e.to_string())?;
        let elapsed = started.elapsed().as_secs_f64();
        rates.push(stream.len() as f64 / 1e6 / elapsed);
        client.release_pane(&id).await.map_err(|e| e.to_string())?;
    }
    let rate = median(&mut rates);
    Ok(vec![
        row(
            "9 agent TUI",
            &format!(
                "{} frames of {frame_kb:.0} KB in synchronized updates, MB/s",
                sizes.agent_frames
            ),
            format!("{rate:.0} ({:.0} frames/s)", rate * 1e6 / (frame_kb * 1024.0)),
            String::new(),
            "reported",
            None,
        ),
        row(
            "9 agent TUI",
            "captures during it that caught half a frame",
            format!("{torn} of {captures}"),
            String::new(),
            "0",
            Some(torn == 0 && captures > 0),
        ),
    ])
}
