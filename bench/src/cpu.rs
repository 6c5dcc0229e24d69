//! Scenario 15: what output costs the server, in CPU seconds per 100 MB, against
//! tmux's server for the same bytes in the same run (from /proc: user + system
//! time of every thread). Three kinds of output: plain lines (`base64`), long
//! lines that wrap ten times, and agent-TUI frames (synchronized updates, full
//! redraws, colours). Each round runs `cat FILE` in a fugue pane (records on,
//! as a user runs it) and in a tmux pane, interleaved; medians. Then a
//! machine of agents: 10 panes each drawing agent-TUI frames at 30 a second,
//! with records on, with `--state none`, and in tmux: server CPU per second.

use crate::env::{self, median, Daemon, Error, Tmux};
use crate::scenarios::{self, row, Sizes, COLS, ROWS};
use crate::Row;
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
    let (daemon, client) = scenarios::daemon_with_session(dir, "cpu", "tp").await?;
    let tmux = Tmux::start(dir, COLS, ROWS, 2000)?;
    let tmux_pid = tmux.server_pid()?;
    let mut rows = Vec::new();
    for workload in &workloads {
        let bytes = std::fs::metadata(&workload.path).map_err(|e| e.to_string())?.len() as f64;
        let per_100mb = |ms: u64| ms as f64 / 1000.0 * 100e6 / bytes;
        let (mut fugue, mut theirs) = (Vec::new(), Vec::new());
        for n in 0..sizes.rounds {
            let before = env::cpu_ms(daemon.pid());
            scenarios::fugue_cat(&client, &workload.path, &workload.last).await?;
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
    rows.extend(paced_tui(dir, sizes).await?);
    rows.extend(panes_at_once(dir, &daemon, &tmux, &workloads[0], sizes).await?);
    Ok(rows)
}

/// Runs `cat(0..n)` on a thread each; the wall time until all are done.
fn in_threads<F>(n: usize, cat: F) -> Result<f64, Error>
where
    F: Fn(usize) -> Result<f64, Error> + Sync,
{
    let started = std::time::Instant::now();
    std::thread::scope(|scope| {
        let cat = &cat;
        let cats: Vec<_> = (0..n).map(|i| scope.spawn(move || cat(i))).collect();
        cats.into_iter()
            .try_for_each(|done| done.join().map_err(|_| "a cat panicked".to_string())?.map(drop))
    })?;
    Ok(started.elapsed().as_secs_f64())
}

/// N panes printing plain lines at once (N = 1, 2, 4, ... up to the machine's
/// cores): aggregate MB/s of fugue, tmux and raw PTYs drained by a thread each.
/// Each pane `cat`s the same file; a run ends when every pane has exited with
/// the right last line.
async fn panes_at_once(
    dir: &Path,
    daemon: &Daemon,
    tmux: &Tmux,
    plain: &Workload,
    sizes: &Sizes,
) -> Result<Vec<Row>, Error> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let client = daemon.client().await?;
    // Ten running panes to a session (the cap).
    for s in 0..cores.div_ceil(10) {
        client
            .create_session(&format!("np{s}"), Some(dir), vec![])
            .await
            .map_err(|e| e.to_string())?;
    }
    let mb = std::fs::metadata(&plain.path).map_err(|e| e.to_string())?.len() as f64 / 1e6;
    let (path, last) = (&plain.path, plain.last.as_str());
    let mut rows = Vec::new();
    let mut n = 1;
    loop {
        let (mut fugue, mut theirs, mut raw) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..sizes.rounds.min(3) {
            let started = std::time::Instant::now();
            let sessions: Vec<String> = (0..n).map(|i| format!("np{}", i / 10)).collect();
            let cats = sessions.iter().map(|s| scenarios::fugue_cat_in(&client, s, path, last));
            for done in futures::future::join_all(cats).await {
                done?;
            }
            fugue.push(started.elapsed().as_secs_f64());
            theirs.push(in_threads(n, |i| {
                scenarios::tmux_cat(tmux, path, last, 100_000 + 1000 * n + 100 * round + i)
            })?);
            raw.push(in_threads(n, |_| scenarios::raw_cat(path))?);
        }
        let total = mb * n as f64;
        let (f, t, r) = (
            total / median(&mut fugue),
            total / median(&mut theirs),
            total / median(&mut raw),
        );
        let at_cores = n == cores;
        rows.push(row(
            "15 CPU per byte",
            &format!("{n} pane(s) of plain lines at once ({cores} cores): aggregate MB/s"),
            format!("{f:.0} ({:.2}x raw PTYs)", f / r),
            format!("tmux {t:.0}; raw PTYs {r:.0}"),
            if at_cores { ">= 0.9x raw PTYs" } else { "reported" },
            at_cores.then_some(f >= 0.9 * r),
        ));
        if n >= cores {
            break;
        }
        n = (n * 2).min(cores);
    }
    Ok(rows)
}

/// Panes of the paced TUI load, frames a second, and the frames' size.
const PACED_PANES: usize = 10;
const PACED_FPS: u32 = 30;
const PACED_ROWS: u16 = 40;

/// A frame as an agent CLI draws one: a synchronized update that redraws
/// every row of 80x40 in place, text with a colour or two a row (~4 KB).
fn light_frame(n: usize, out: &mut Vec<u8>) {
    out.extend_from_slice(b"\x1b[?2026h");
    for row in 0..PACED_ROWS as usize {
        let colour = (n + row) % 216 + 16;
        let text = format!("frame {n:06} row {row:02} the agent is thinking about the change it will make");
        out.extend_from_slice(format!("\x1b[{};1H\x1b[38;5;{colour}m{text:<76}\x1b[0m\x1b[K", row + 1).as_bytes());
    }
    out.extend_from_slice(b"\x1b[?2026l");
}

/// `fugue-bench --emit-frames SECONDS FPS`: agent-TUI frames (80x40) on stdout
/// at FPS for SECONDS, each on its tick.
pub fn emit_frames(seconds: f64, fps: f64) -> std::process::ExitCode {
    let start = std::time::Instant::now();
    let frames = (seconds * fps) as usize;
    let mut out = std::io::stdout().lock();
    let mut frame = Vec::new();
    for n in 0..frames {
        let due = start + std::time::Duration::from_secs_f64(n as f64 / fps);
        std::thread::sleep(due.saturating_duration_since(std::time::Instant::now()));
        frame.clear();
        light_frame(n, &mut frame);
        if out.write_all(&frame).and_then(|()| out.flush()).is_err() {
            return std::process::ExitCode::FAILURE;
        }
    }
    std::process::ExitCode::SUCCESS
}

/// Ten panes of paced frames: server CPU ms per second of the load, for fugued
/// with records on and with `--state none`, and for tmux.
async fn paced_tui(dir: &Path, sizes: &Sizes) -> Result<Vec<Row>, Error> {
    // The panes draw for the window and a second either side: starting and
    // ending panes (records on: each makes a log file) are not the load.
    let window = std::time::Duration::from_secs(sizes.paced_secs);
    let secs = (sizes.paced_secs + 2).to_string();
    let fps = PACED_FPS.to_string();
    let me = std::env::current_exe()
        .map_err(|e| e.to_string())?
        .display()
        .to_string();
    let args = ["--emit-frames", secs.as_str(), fps.as_str()];
    let mut frame = Vec::new();
    light_frame(0, &mut frame);
    let load = format!(
        "{PACED_PANES} panes of 80x{PACED_ROWS}, frames of {:.1} KB at {PACED_FPS}/s, {} s measured",
        frame.len() as f64 / 1024.0,
        sizes.paced_secs
    );
    let per_second = |ms: u64| ms as f64 / window.as_secs_f64();
    let mut measured = Vec::new();
    for (name, flags) in [("paced-on", &[][..]), ("paced-off", &["--state", "none"][..])] {
        let daemon = Daemon::start_with(dir, name, flags).await?;
        let client = daemon.client().await?;
        client
            .create_session("tui", Some(dir), vec![])
            .await
            .map_err(|e| e.to_string())?;
        let mut panes = Vec::new();
        for _ in 0..PACED_PANES {
            let mut spec = scenarios::direct("tui", &me, &args);
            spec.size = Some(fugue_protocol::PaneSize {
                cols: 80,
                rows: PACED_ROWS,
            });
            panes.push(
                client
                    .create_pane(spec)
                    .await
                    .map_err(|e| e.to_string())?
                    .id
                    .to_string(),
            );
        }
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        let before = env::cpu_ms(daemon.pid());
        tokio::time::sleep(window).await;
        measured.push(per_second(env::cpu_ms(daemon.pid()) - before));
        for id in &panes {
            client.wait_for_exit(id, None).await.map_err(|e| e.to_string())?;
        }
    }
    let tmux = Tmux::start(dir, 80, PACED_ROWS, 2000)?;
    let tmux_pid = tmux.server_pid()?;
    let command = format!("{me} {}", args.join(" "));
    for n in 0..PACED_PANES {
        let line = format!("{command}; tmux wait-for -S paced-{n}; exec sleep 3600");
        tmux.run(&["new-window", "-d", "-t", "b:", &line])?;
    }
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    let before = env::cpu_ms(tmux_pid);
    tokio::time::sleep(window).await;
    let theirs = per_second(env::cpu_ms(tmux_pid) - before);
    for n in 0..PACED_PANES {
        tmux.run(&["wait-for", &format!("paced-{n}")])?;
    }
    let (on, off) = (measured[0], measured[1]);
    Ok(vec![
        row(
            "15 CPU per byte",
            &format!("agent TUIs: {load}, records on: server CPU ms per s"),
            format!("{on:.0} ({:.2}x tmux)", on / theirs.max(1e-9)),
            format!("tmux {theirs:.0}"),
            "<= 0.7x tmux",
            Some(on <= 0.7 * theirs),
        ),
        row(
            "15 CPU per byte",
            "the same, records on against `--state none`",
            format!("{:.2}x", on / off.max(1e-9)),
            format!("none {off:.0}"),
            "<= 1.10x",
            Some(on <= 1.10 * off),
        ),
    ])
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
