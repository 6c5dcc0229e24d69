//! The benchmark's scenarios, one per file, each returning table rows; the
//! sizes, the run order and the helpers they share (files of output, panes that
//! run `cat`, tmux and raw-PTY contenders) are here. Scenario 15 is `crate::cpu`.

use crate::env::{self, Daemon, Error, Tmux};
use crate::Row;
use fugue_client::Client;
use fugue_protocol::{CaptureWhat, Event, PaneSize, SpawnSpec};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

mod agent_tui;
mod browser;
mod churn;
mod codex_source;
mod durable;
mod fleet;
mod idle;
mod latency;
mod memory;
mod overview;
mod reaction;
mod real_rest;
mod remote;
mod rest;
mod scale;
mod subscription;
mod throughput;
mod worktrees;

pub(crate) struct Sizes {
    pub(crate) file_mb: usize,
    pub(crate) rounds: usize,
    latency_calls: usize,
    cli_runs: usize,
    memory_panes: usize,
    memory_lines: usize,
    reactions: usize,
    idle_panes: usize,
    idle_secs: u64,
    scale_sessions: usize,
    churn_clients: usize,
    churn_samples: usize,
    agent_frames: usize,
    /// Panes running across the live upgrade (10 per session).
    upgrade_panes: usize,
    /// CreatePane calls timed with and without records.
    creates: usize,
    /// Seconds of paced agent-TUI frames (scenario 15).
    pub(crate) paced_secs: u64,
    /// Files in the repository of the worktree scenario (16); 1 in 100 changed.
    worktree_files: usize,
    /// Fake agents at rest (scenario 17), how long their CPU is measured, and
    /// overview calls timed with them there.
    rest_agents: usize,
    rest_secs: u64,
    rest_overviews: usize,
    /// Real agent CLIs at rest (scenario 18).
    real_agents: usize,
    /// Endpoints of the fleet overview (scenario 19), one per run, and the
    /// daemons behind them.
    fleet_endpoints: &'static [usize],
    fleet_daemons: usize,
}

const FULL: Sizes = Sizes {
    file_mb: 100,
    rounds: 5,
    latency_calls: 10_000,
    cli_runs: 20,
    memory_panes: 100,
    memory_lines: 10_000,
    reactions: 200,
    idle_panes: 100,
    idle_secs: 10,
    scale_sessions: 100,
    churn_clients: 200,
    churn_samples: 200,
    agent_frames: 400,
    upgrade_panes: 100,
    creates: 300,
    paced_secs: 10,
    worktree_files: 10_000,
    rest_agents: 1000,
    rest_secs: 30,
    rest_overviews: 100,
    real_agents: 20,
    fleet_endpoints: &[100, 500],
    fleet_daemons: 10,
};

const QUICK: Sizes = Sizes {
    file_mb: 8,
    rounds: 1,
    latency_calls: 500,
    cli_runs: 3,
    memory_panes: 10,
    memory_lines: 1_000,
    reactions: 20,
    idle_panes: 20,
    idle_secs: 2,
    scale_sessions: 10,
    churn_clients: 20,
    churn_samples: 20,
    agent_frames: 40,
    upgrade_panes: 20,
    creates: 30,
    paced_secs: 2,
    worktree_files: 500,
    rest_agents: 50,
    rest_secs: 5,
    rest_overviews: 20,
    real_agents: 2,
    fleet_endpoints: &[20],
    fleet_daemons: 2,
};

pub(crate) const COLS: u16 = 200;
pub(crate) const ROWS: u16 = 50;

pub async fn run_all(quick: bool, only: Option<Vec<u32>>) -> Result<Vec<Row>, Error> {
    let sizes = if quick { QUICK } else { FULL };
    let dir = tempfile::Builder::new()
        .prefix("fugue-bench-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    // fugued refuses a socket directory others can enter.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).map_err(|e| e.to_string())?;
    let wanted = |n: u32| only.as_ref().is_none_or(|only| only.contains(&n));
    let mut rows = Vec::new();
    if wanted(1) || wanted(2) {
        eprintln!("[1/20] throughput");
        let file = base64_file(dir.path(), sizes.file_mb)?;
        rows.extend(throughput::run(dir.path(), &file, &sizes).await?);
    }
    if wanted(3) {
        eprintln!("[3/20] request latency");
        rows.extend(latency::run(dir.path(), &sizes).await?);
    }
    if wanted(4) {
        eprintln!("[4/20] memory");
        rows.extend(memory::run(dir.path(), &sizes).await?);
    }
    if wanted(5) {
        eprintln!("[5/20] reaction");
        rows.extend(reaction::run(dir.path(), &sizes).await?);
    }
    if wanted(6) {
        eprintln!("[6/20] idle");
        rows.extend(idle::run(dir.path(), &sizes).await?);
    }
    if wanted(7) {
        eprintln!("[7/20] scale");
        rows.extend(scale::run(dir.path(), &sizes).await?);
    }
    if wanted(8) {
        eprintln!("[8/20] latency under churn");
        rows.extend(churn::run(dir.path(), &sizes).await?);
    }
    if wanted(9) {
        eprintln!("[9/20] agent TUI");
        rows.extend(agent_tui::run(dir.path(), &sizes).await?);
    }
    if wanted(10) {
        eprintln!("[10/20] records and live upgrade");
        rows.extend(durable::run(dir.path(), &sizes).await?);
    }
    if wanted(11) {
        eprintln!("[11/20] a browser tab");
        let file = base64_file(dir.path(), sizes.file_mb)?;
        rows.extend(browser::run(dir.path(), &file, &sizes).await?);
    }
    if wanted(12) {
        eprintln!("[12/20] another machine over ssh");
        let file = base64_file(dir.path(), sizes.file_mb)?;
        rows.extend(remote::run(dir.path(), &file, &sizes).await?);
    }
    if wanted(13) {
        eprintln!("[13/20] fugue top with many panes");
        rows.extend(overview::run(dir.path(), &sizes).await?);
    }
    if wanted(14) {
        eprintln!("[14/20] an MCP subscriber");
        rows.extend(subscription::run(dir.path(), &sizes).await?);
    }
    if wanted(15) {
        eprintln!("[15/20] CPU per byte of output");
        rows.extend(crate::cpu::cpu_per_byte(dir.path(), &sizes).await?);
    }
    if wanted(16) {
        eprintln!("[16/20] worktrees and diffs against git");
        rows.extend(worktrees::run(dir.path(), &sizes).await?);
    }
    if wanted(17) {
        eprintln!("[17/20] agents at rest");
        rows.extend(rest::run(dir.path(), &sizes).await?);
    }
    if wanted(18) {
        eprintln!("[18/20] real agents at rest");
        rows.extend(real_rest::run(dir.path(), &sizes).await?);
    }
    if wanted(19) {
        eprintln!("[19/20] an overview of many daemons");
        rows.extend(fleet::run(dir.path(), &sizes).await?);
    }
    if wanted(20) {
        eprintln!("[20/20] Codex read through its app-server");
        rows.extend(codex_source::run(dir.path(), &sizes).await?);
    }
    Ok(rows)
}

/// A daemon named `name` for a scenario, a client of it, and a session
/// `session` in `dir` where the scenario's panes run.
pub(crate) async fn daemon_with_session(dir: &Path, name: &str, session: &str) -> Result<(Daemon, Client), Error> {
    let daemon = Daemon::start(dir, name).await?;
    let client = daemon.client().await?;
    client
        .create_session(session, Some(dir), vec![])
        .await
        .map_err(|e| e.to_string())?;
    Ok((daemon, client))
}

pub(crate) fn row(scenario: &str, measure: &str, fugue: String, other: String, goal: &str, met: Option<bool>) -> Row {
    Row {
        scenario: scenario.into(),
        measure: measure.into(),
        fugue,
        other,
        goal: goal.into(),
        met,
    }
}

/// A file of base64 lines, as `base64` prints them, and its last line.
pub(crate) fn base64_file(dir: &Path, megabytes: usize) -> Result<(PathBuf, String), Error> {
    let path = dir.join("payload.b64");
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).map_err(|e| e.to_string())?);
    let mut x: u64 = 0x9e3779b97f4a7c15;
    let mut line = [0u8; 77];
    let mut last = String::new();
    for n in 0..(megabytes << 20) / 77 {
        for byte in line.iter_mut().take(76) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *byte = alphabet[(x % 64) as usize];
        }
        line[76] = b'\n';
        out.write_all(&line).map_err(|e| e.to_string())?;
        if n == (megabytes << 20) / 77 - 1 {
            last = String::from_utf8_lossy(&line[..76]).into_owned();
        }
    }
    out.flush().map_err(|e| e.to_string())?;
    Ok((path, last))
}

/// A pane that runs `program args` directly (no shell).
pub(crate) fn direct(session: &str, program: &str, args: &[&str]) -> SpawnSpec {
    let mut spec = SpawnSpec::new(session);
    spec.command = Some(program.into());
    spec.args = args.iter().map(|a| a.to_string()).collect();
    spec.shell = false;
    spec
}

pub(crate) fn cat_spec(session: &str, file: &Path) -> SpawnSpec {
    let mut spec = direct(session, "cat", &[&file.display().to_string()]);
    spec.size = Some(PaneSize { cols: COLS, rows: ROWS });
    spec
}

/// [`cat_spec`] in session `tp` that waits for a line first, so a client can
/// attach before the output starts.
fn waiting_cat_spec(file: &Path) -> SpawnSpec {
    let mut spec = cat_spec("tp", file);
    spec.command = Some("sh".into());
    spec.args = vec!["-c".into(), format!("read go; cat {}", file.display())];
    spec
}

/// Starts `count` panes running `program args`, ten to a session (the cap),
/// in sessions named `{prefix}0`, `{prefix}1`, ...
async fn spread(
    client: &Client,
    dir: &Path,
    prefix: &str,
    count: usize,
    program: &str,
    args: &[&str],
) -> Result<Vec<fugue_protocol::PaneInfo>, Error> {
    spread_specs(client, dir, prefix, count, |session, _| direct(session, program, args)).await
}

/// Starts `count` panes, the `n`th as `spec(session, n)` says, ten to a
/// session (the cap), in sessions named `{prefix}0`, `{prefix}1`, ...
pub(crate) async fn spread_specs(
    client: &Client,
    dir: &Path,
    prefix: &str,
    count: usize,
    spec: impl Fn(&str, usize) -> SpawnSpec,
) -> Result<Vec<fugue_protocol::PaneInfo>, Error> {
    let mut panes = Vec::with_capacity(count);
    for n in 0..count {
        let session = format!("{prefix}{}", n / 10);
        if n % 10 == 0 {
            client
                .create_session(&session, Some(dir), vec![])
                .await
                .map_err(|e| e.to_string())?;
        }
        panes.push(client.create_pane(spec(&session, n)).await.map_err(|e| e.to_string())?);
    }
    Ok(panes)
}

/// Spawn to the client seeing the exit; checks the final screen's last line.
pub(crate) async fn fugue_cat(client: &Client, file: &Path, last: &str) -> Result<f64, Error> {
    fugue_cat_in(client, "tp", file, last).await
}

/// [`fugue_cat`] in the session `session`.
pub(crate) async fn fugue_cat_in(client: &Client, session: &str, file: &Path, last: &str) -> Result<f64, Error> {
    let started = Instant::now();
    let pane = client
        .create_pane(cat_spec(session, file))
        .await
        .map_err(|e| e.to_string())?;
    let id = pane.id.to_string();
    client.wait_for_exit(&id, None).await.map_err(|e| e.to_string())?;
    let elapsed = started.elapsed().as_secs_f64();
    let screen = client
        .capture(&id, CaptureWhat::Screen, (None, None), false, false)
        .await
        .map_err(|e| e.to_string())?;
    let shown = screen
        .lines
        .iter()
        .rev()
        .find(|l| !l.is_empty())
        .cloned()
        .unwrap_or_default();
    if shown != last {
        return Err(format!(
            "fugue's final screen is wrong: last line {shown:?}, expected {last:?}"
        ));
    }
    client.release_pane(&id).await.map_err(|e| e.to_string())?;
    Ok(elapsed)
}

pub(crate) fn tmux_cat(tmux: &Tmux, file: &Path, last: &str, n: usize) -> Result<f64, Error> {
    let channel = format!("done-{n}");
    let started = Instant::now();
    let command = format!("cat {}; tmux wait-for -S {channel}; exec sleep 3600", file.display());
    let window = tmux.run(&["new-window", "-d", "-P", "-F", "#{window_id}", "-t", "b:", &command])?;
    tmux.run(&["wait-for", &channel])?;
    let elapsed = started.elapsed().as_secs_f64();
    let screen = tmux.run(&["capture-pane", "-p", "-t", window.trim()])?;
    let shown = screen
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim_end();
    if shown != last {
        return Err(format!("tmux's final screen differs: last line {shown:?}"));
    }
    tmux.run(&["kill-window", "-t", window.trim()])?;
    Ok(elapsed)
}

pub(crate) fn raw_cat(file: &Path) -> Result<f64, Error> {
    let started = Instant::now();
    env::raw_pty("cat", &[&file.display().to_string()], COLS, ROWS)?;
    Ok(started.elapsed().as_secs_f64())
}

/// One frame as an agent TUI draws it: a synchronized update (DEC 2026) that
/// clears the screen and redraws every row in colour, ~95 KB at 200x50. The frame
/// number is on the first and the last row, so a capture shows whether it caught
/// a whole frame.
pub(crate) fn agent_frame(n: usize, out: &mut Vec<u8>) {
    out.extend_from_slice(b"\x1b[?2026h\x1b[H\x1b[2J");
    for row in 0..ROWS as usize {
        out.extend_from_slice(format!("\x1b[{};1H", row + 1).as_bytes());
        if row == 0 || row == ROWS as usize - 1 {
            out.extend_from_slice(format!("\x1b[1mframe {n:06}\x1b[0m").as_bytes());
            continue;
        }
        // 40 words of 4 characters, each in its own true colours: ~1.9 KB a row.
        for word in 0..40 {
            let c = (n + row * 7 + word * 13) % 256;
            let look = format!(
                "\x1b[38;2;{c};{};{}m\x1b[48;2;{};{c};{}m",
                255 - c,
                (c * 3) % 256,
                (c * 5) % 256,
                (c * 7) % 256
            );
            out.extend_from_slice(format!("{look}{:02}{:02}\x1b[0m ", row % 100, word).as_bytes());
        }
    }
    out.extend_from_slice(b"\x1b[?2026l");
}

/// A `cat` pane started through `starter`, followed to its exit by `watcher`
/// attached (read-only) and reading every byte; the final screen is checked.
async fn attached_cat(starter: &Client, watcher: &Client, file: &Path, last: &str) -> Result<f64, Error> {
    let pane = starter
        .create_pane(waiting_cat_spec(file))
        .await
        .map_err(|e| e.to_string())?;
    let id = pane.id.to_string();
    let mut events = watcher.events().map_err(|e| e.to_string())?;
    watcher.attach(&id, true, None).await.map_err(|e| e.to_string())?;
    let started = Instant::now();
    starter.write_input(&id, b"\r").await.map_err(|e| e.to_string())?;
    let mut bytes = 0usize;
    while let Some(event) = events.recv().await {
        match event {
            Event::Output { pane: p, data } | Event::Redraw { pane: p, data } if p == pane.id => bytes += data.len(),
            Event::Exited { pane: p, .. } if p == pane.id => break,
            _ => {}
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let screen = starter
        .capture(&id, CaptureWhat::Screen, (None, None), false, false)
        .await
        .map_err(|e| e.to_string())?;
    if !screen.lines.iter().any(|l| l.trim_end() == last) || bytes == 0 {
        return Err(format!("the attached cat ended wrong ({bytes} bytes seen)"));
    }
    starter.release_pane(&id).await.map_err(|e| e.to_string())?;
    Ok(elapsed)
}
