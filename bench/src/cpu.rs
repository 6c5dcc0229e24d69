//! Scenario 15: what output costs the server, in CPU seconds per 100 MB, against
//! tmux's server for the same bytes in the same run (from /proc: user + system
//! time of every thread). Three kinds of output: plain lines (`base64`), long
//! lines that wrap ten times, and agent-TUI frames (synchronized updates, full
//! redraws, colours). Each round runs `cat FILE` in a fugue pane (records on,
//! as a user runs it) and in a tmux pane, interleaved; medians.

use crate::env::{self, median, Daemon, Error, Tmux};
use crate::scenarios::{self, row, Sizes, COLS, ROWS};
use crate::Row;
use fugue_client::Client;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// One kind of output: a file of it, and the last line its final screen shows.
struct Workload {
    name: &'static str,
    path: PathBuf,
    last: String,
    /// The goal, as a ratio to tmux's CPU (`None`: reported only).
    goal: Option<f64>,
}

pub async fn cpu_per_byte(dir: &Path, sizes: &Sizes) -> Result<Vec<Row>, Error> {
    let workloads = workloads(dir, sizes.file_mb)?;
    let daemon = Daemon::start(dir, "cpu").await?;
    let client = daemon.client().await?;
    client
        .create_session("tp", Some(dir), vec![])
        .await
        .map_err(|e| e.to_string())?;
    let tmux = Tmux::start(dir, COLS, ROWS, 2000)?;
    let tmux_pid = tmux.server_pid()?;
    let mut rows = Vec::new();
    for workload in &workloads {
        let bytes = std::fs::metadata(&workload.path).map_err(|e| e.to_string())?.len() as f64;
        let per_100mb = |ms: u64| ms as f64 / 1000.0 * 100e6 / bytes;
        let (mut fugue, mut theirs) = (Vec::new(), Vec::new());
        for n in 0..sizes.rounds {
            let before = env::cpu_ms(daemon.pid());
            fugue_run(&client, workload).await?;
            fugue.push(per_100mb(env::cpu_ms(daemon.pid()) - before));
            let before = env::cpu_ms(tmux_pid);
            scenarios::tmux_cat(&tmux, &workload.path, &workload.last, 1000 + n)?;
            theirs.push(per_100mb(env::cpu_ms(tmux_pid) - before));
        }
        let (f, t) = (median(&mut fugue), median(&mut theirs));
        let ratio = f / t.max(1e-9);
        rows.push(row(
            "15 CPU per byte",
            &format!("{}: server CPU s per 100 MB", workload.name),
            format!("{f:.2} ({ratio:.2}x tmux)"),
            format!("tmux {t:.2}"),
            &workload.goal.map_or("reported".into(), |g| format!("<= {g}x tmux")),
            workload.goal.map(|g| ratio <= g),
        ));
    }
    Ok(rows)
}

/// `cat` of the workload in a fugue pane, to its exit; checks the final screen.
async fn fugue_run(client: &Client, workload: &Workload) -> Result<(), Error> {
    let pane = client
        .create_pane(scenarios::cat_spec("tp", &workload.path))
        .await
        .map_err(|e| e.to_string())?;
    let id = pane.id.to_string();
    client.wait_for_exit(&id, None).await.map_err(|e| e.to_string())?;
    let screen = client
        .capture(&id, fugue_protocol::CaptureWhat::Screen, (None, None), false, false)
        .await
        .map_err(|e| e.to_string())?;
    let shown = screen
        .lines
        .iter()
        .rev()
        .find(|l| !l.is_empty())
        .cloned()
        .unwrap_or_default();
    if shown.trim_end() != workload.last {
        return Err(format!(
            "{}: fugue's last line is {shown:?}, expected {:?}",
            workload.name, workload.last
        ));
    }
    client.release_pane(&id).await.map_err(|e| e.to_string())?;
    Ok(())
}

fn workloads(dir: &Path, megabytes: usize) -> Result<Vec<Workload>, Error> {
    let (plain, plain_last) = scenarios::base64_file(dir, megabytes)?;
    Ok(vec![
        Workload {
            name: "plain lines",
            path: plain,
            last: plain_last,
            goal: Some(0.5),
        },
        wrapped_lines(dir, megabytes)?,
        tui_frames(dir, megabytes)?,
    ])
}

/// Lines of ten screen widths, which wrap.
fn wrapped_lines(dir: &Path, megabytes: usize) -> Result<Workload, Error> {
    let path = dir.join("wrapped.txt");
    let width = COLS as usize * 10;
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).map_err(|e| e.to_string())?);
    let mut line = vec![0u8; width + 1];
    let count = (megabytes << 20) / (width + 1);
    for n in 0..count {
        for (i, byte) in line.iter_mut().take(width).enumerate() {
            *byte = b'a' + ((n + i) % 26) as u8;
        }
        line[width] = b'\n';
        out.write_all(&line).map_err(|e| e.to_string())?;
    }
    out.flush().map_err(|e| e.to_string())?;
    // The last row of the screen is the last line's last screen width.
    let last = String::from_utf8_lossy(&line[width - COLS as usize..width]).into_owned();
    Ok(Workload {
        name: "long wrapped lines",
        path,
        last,
        goal: None,
    })
}

/// Agent-TUI frames until the size is reached.
fn tui_frames(dir: &Path, megabytes: usize) -> Result<Workload, Error> {
    let path = dir.join("tui-frames.bin");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).map_err(|e| e.to_string())?);
    let (mut written, mut n, mut frame) = (0usize, 0usize, Vec::new());
    while written < megabytes << 20 {
        frame.clear();
        scenarios::agent_frame(n, &mut frame);
        out.write_all(&frame).map_err(|e| e.to_string())?;
        written += frame.len();
        n += 1;
    }
    out.flush().map_err(|e| e.to_string())?;
    Ok(Workload {
        name: "agent-TUI frames",
        path,
        last: format!("frame {:06}", n - 1),
        goal: None,
    })
}
