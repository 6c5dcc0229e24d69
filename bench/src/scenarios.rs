//! The benchmark's scenarios, each returning table rows.

use crate::env::{self, bin, median, percentile, poll, Daemon, Error, PeakRss, Tmux};
use crate::Row;
use bytes::BytesMut;
use fugue_client::Client;
use fugue_protocol::codec::FrameCodec;
use fugue_protocol::requests as rq;
use fugue_protocol::{
    CaptureWhat, ClientFrame, Event, Hello, MatchOn, PaneSize, ReadMode, Request, ServerFrame, SpawnSpec, WaitUntil,
    PROTOCOL_VERSION,
};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio_util::codec::Encoder;

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
        eprintln!("[1/15] throughput");
        let file = base64_file(dir.path(), sizes.file_mb)?;
        rows.extend(throughput(dir.path(), &file, &sizes).await?);
    }
    if wanted(3) {
        eprintln!("[3/15] request latency");
        rows.extend(latency(dir.path(), &sizes).await?);
    }
    if wanted(4) {
        eprintln!("[4/15] memory");
        rows.extend(memory(dir.path(), &sizes).await?);
    }
    if wanted(5) {
        eprintln!("[5/15] reaction");
        rows.extend(reaction(dir.path(), &sizes).await?);
    }
    if wanted(6) {
        eprintln!("[6/15] idle");
        rows.extend(idle(dir.path(), &sizes).await?);
    }
    if wanted(7) {
        eprintln!("[7/15] scale");
        rows.extend(scale(dir.path(), &sizes).await?);
    }
    if wanted(8) {
        eprintln!("[8/15] latency under churn");
        rows.extend(churn(dir.path(), &sizes).await?);
    }
    if wanted(9) {
        eprintln!("[9/15] agent TUI");
        rows.extend(agent_tui(dir.path(), &sizes).await?);
    }
    if wanted(10) {
        eprintln!("[10/15] records and live upgrade");
        rows.extend(durable(dir.path(), &sizes).await?);
    }
    if wanted(11) {
        eprintln!("[11/15] a browser tab");
        let file = base64_file(dir.path(), sizes.file_mb)?;
        rows.extend(browser(dir.path(), &file, &sizes).await?);
    }
    if wanted(12) {
        eprintln!("[12/15] another machine over ssh");
        let file = base64_file(dir.path(), sizes.file_mb)?;
        rows.extend(remote(dir.path(), &file, &sizes).await?);
    }
    if wanted(13) {
        eprintln!("[13/15] fugue top with many panes");
        rows.extend(overview(dir.path(), &sizes).await?);
    }
    if wanted(14) {
        eprintln!("[14/15] an MCP subscriber");
        rows.extend(subscription(dir.path(), &sizes).await?);
    }
    if wanted(15) {
        eprintln!("[15/15] CPU per byte of output");
        rows.extend(crate::cpu::cpu_per_byte(dir.path(), &sizes).await?);
    }
    Ok(rows)
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
    let mut panes = Vec::with_capacity(count);
    for n in 0..count {
        let session = format!("{prefix}{}", n / 10);
        if n % 10 == 0 {
            client
                .create_session(&session, Some(dir), vec![])
                .await
                .map_err(|e| e.to_string())?;
        }
        panes.push(
            client
                .create_pane(direct(&session, program, args))
                .await
                .map_err(|e| e.to_string())?,
        );
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

/// A client that attaches over a raw socket and then never reads.
fn stalled_attach(socket: &Path, pane: &str) -> Result<std::os::unix::net::UnixStream, Error> {
    let mut stream = std::os::unix::net::UnixStream::connect(socket).map_err(|e| e.to_string())?;
    let mut codec = FrameCodec::<ClientFrame, ServerFrame>::new();
    let mut buf = BytesMut::new();
    let hello = Hello {
        protocol_version: PROTOCOL_VERSION,
        client_name: "stalled".into(),
        client_version: "0".into(),
        revision: 0,
    };
    codec
        .encode(ClientFrame::Hello(hello), &mut buf)
        .map_err(|e| e.to_string())?;
    let attach = Request::Attach(rq::Attach {
        pane: pane.into(),
        read_only: true,
        size: None,
    });
    codec
        .encode(ClientFrame::Request { id: 1, request: attach }, &mut buf)
        .map_err(|e| e.to_string())?;
    stream.write_all(&buf).map_err(|e| e.to_string())?;
    Ok(stream)
}

/// Scenarios 1 and 2: `cat` of a large file, alone and with attached clients.
async fn throughput(dir: &Path, (file, last): &(PathBuf, String), sizes: &Sizes) -> Result<Vec<Row>, Error> {
    let daemon = Daemon::start(dir, "tp").await?;
    let client = daemon.client().await?;
    client
        .create_session("tp", Some(dir), vec![])
        .await
        .map_err(|e| e.to_string())?;
    let tmux = Tmux::start(dir, COLS, ROWS, 2000)?;
    let (mut fugue, mut tmux_t, mut raw) = (Vec::new(), Vec::new(), Vec::new());
    for n in 0..sizes.rounds {
        fugue.push(fugue_cat(&client, file, last).await?);
        tmux_t.push(tmux_cat(&tmux, file, last, n)?);
        raw.push(raw_cat(file)?);
    }
    let (f, t, r) = (median(&mut fugue), median(&mut tmux_t), median(&mut raw));
    let mb = (sizes.file_mb << 20) as f64 / 1e6;
    let mut rows = vec![
        row(
            "1 throughput",
            &format!("cat {} MB at {COLS}x{ROWS}, s (MB/s)", sizes.file_mb),
            format!("{f:.2} ({:.0})", mb / f),
            format!("tmux {t:.2} ({:.0}); raw PTY {r:.2} ({:.0})", mb / t, mb / r),
            "<= 0.6x tmux",
            Some(f <= 0.6 * t),
        ),
        row(
            "1 throughput",
            "fugue / raw PTY",
            format!("{:.2}x", f / r),
            String::new(),
            "<= 1.25x",
            Some(f / r <= 1.25),
        ),
    ];

    eprintln!("[2/12] throughput with clients");
    let (mut alone, mut reading, mut stalled) = (Vec::new(), Vec::new(), Vec::new());
    let idle_rss = env::rss_kib(daemon.pid());
    let mut stalled_peak = 0;
    for _ in 0..sizes.rounds {
        alone.push(fugue_cat(&client, file, last).await?);
        // A client attached to the pane, reading everything (the output starts
        // once it is attached: a small file was printed before an attach).
        let watcher = daemon.client().await?;
        reading.push(attached_cat(&client, &watcher, file, last).await?);
        // A client attached to the pane that never reads.
        stalled.push({
            let pane = client
                .create_pane(waiting_cat_spec(file))
                .await
                .map_err(|e| e.to_string())?;
            let id = pane.id.to_string();
            let _stalled = stalled_attach(&daemon.socket, &id)?;
            // Let the stalled client's attach land before the output starts.
            client
                .wait_for(
                    &id,
                    WaitUntil {
                        idle_ms: Some(100),
                        ..Default::default()
                    },
                    Duration::from_secs(5),
                )
                .await
                .map_err(|e| e.to_string())?;
            let peak = PeakRss::start(daemon.pid());
            let started = Instant::now();
            client.write_input(&id, b"\r").await.map_err(|e| e.to_string())?;
            client.wait_for_exit(&id, None).await.map_err(|e| e.to_string())?;
            let elapsed = started.elapsed().as_secs_f64();
            stalled_peak = stalled_peak.max(peak.finish());
            client.release_pane(&id).await.map_err(|e| e.to_string())?;
            elapsed
        });
    }
    let (a, rd, st) = (median(&mut alone), median(&mut reading), median(&mut stalled));
    let growth = stalled_peak.saturating_sub(idle_rss) as f64 / 1024.0;
    rows.push(row(
        "2 with clients",
        "one client reading, vs none",
        format!("{rd:.2} s ({:.2}x)", rd / a),
        format!("none {a:.2} s"),
        "<= 1.15x",
        Some(rd / a <= 1.15),
    ));
    rows.push(row(
        "2 with clients",
        "one client never reading, vs none",
        format!("{st:.2} s ({:.2}x)", st / a),
        format!("none {a:.2} s"),
        "<= 1.15x",
        Some(st / a <= 1.15),
    ));
    rows.push(row(
        "2 with clients",
        "daemon RSS growth with the stalled client",
        format!("+{growth:.1} MB"),
        format!("idle {:.1} MB", idle_rss as f64 / 1024.0),
        "< +32 MB",
        Some(growth < 32.0),
    ));
    Ok(rows)
}

/// Scenario 3: ListPanes latency on one connection; one-shot `fugue ls` vs `tmux ls`.
async fn latency(dir: &Path, sizes: &Sizes) -> Result<Vec<Row>, Error> {
    let daemon = Daemon::start(dir, "lat").await?;
    let client = daemon.client().await?;
    client
        .create_session("lat", Some(dir), vec![])
        .await
        .map_err(|e| e.to_string())?;
    for _ in 0..10 {
        client
            .create_pane(direct("lat", "sleep", &["3600"]))
            .await
            .map_err(|e| e.to_string())?;
    }
    let mut micros = Vec::with_capacity(sizes.latency_calls);
    for _ in 0..sizes.latency_calls {
        let started = Instant::now();
        let panes = client.list_panes(Some("lat")).await.map_err(|e| e.to_string())?;
        micros.push(started.elapsed().as_secs_f64() * 1e6);
        if panes.len() != 10 {
            return Err(format!("ListPanes returned {} panes", panes.len()));
        }
    }
    let (p50, p99) = (percentile(&mut micros, 50.0), percentile(&mut micros, 99.0));

    let tmux = Tmux::start(dir, 80, 24, 2000)?;
    let fugue_bin = bin("fugue")?;
    let (mut fugue_ls, mut tmux_ls) = (Vec::new(), Vec::new());
    for _ in 0..sizes.cli_runs {
        let started = Instant::now();
        let out = std::process::Command::new(&fugue_bin)
            .arg("--socket")
            .arg(&daemon.socket)
            .arg("ls")
            .output()
            .map_err(|e| e.to_string())?;
        fugue_ls.push(started.elapsed().as_secs_f64() * 1e3);
        if !out.status.success() {
            return Err(format!("fugue ls failed: {}", String::from_utf8_lossy(&out.stderr)));
        }
        let started = Instant::now();
        tmux.run(&["ls"])?;
        tmux_ls.push(started.elapsed().as_secs_f64() * 1e3);
    }
    let (f, t) = (median(&mut fugue_ls), median(&mut tmux_ls));
    Ok(vec![
        row(
            "3 latency",
            &format!("ListPanes (10 panes) x{} on one connection, p50", sizes.latency_calls),
            format!("{p50:.0} us"),
            String::new(),
            "< 100 us",
            Some(p50 < 100.0),
        ),
        row(
            "3 latency",
            "ListPanes p99",
            format!("{p99:.0} us"),
            String::new(),
            "< 1 ms",
            Some(p99 < 1000.0),
        ),
        row(
            "3 latency",
            "one-shot `fugue ls` wall time, median",
            format!("{f:.1} ms"),
            format!("`tmux ls` {t:.1} ms"),
            "<= 0.6x tmux",
            Some(f <= 0.6 * t),
        ),
    ])
}

/// Scenario 4: idle RSS, then many panes full of scrollback, against tmux.
async fn memory(dir: &Path, sizes: &Sizes) -> Result<Vec<Row>, Error> {
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

/// Scenario 5: from writing a line into a pane to a pattern wait returning.
async fn reaction(dir: &Path, sizes: &Sizes) -> Result<Vec<Row>, Error> {
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

/// Scenario 6: CPU the daemon burns with idle panes.
async fn idle(dir: &Path, sizes: &Sizes) -> Result<Vec<Row>, Error> {
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

/// Scenario 7: many panes across many sessions: create, hold idle, destroy;
/// against tmux doing the same with windows.
async fn scale(dir: &Path, sizes: &Sizes) -> Result<Vec<Row>, Error> {
    let total = sizes.scale_sessions * 10;
    let daemon = Daemon::start(dir, "scale").await?;
    let client = daemon.client().await?;
    let peak = PeakRss::start(daemon.pid());
    let started = Instant::now();
    let creations = (0..sizes.scale_sessions).map(|s| {
        let client = client.clone();
        let dir = dir.to_path_buf();
        async move {
            let name = format!("s{s}");
            client
                .create_session(&name, Some(&dir), vec![])
                .await
                .map_err(|e| e.to_string())?;
            let mut pids = Vec::new();
            for _ in 0..10 {
                let pane = client
                    .create_pane(direct(&name, "sleep", &["3600"]))
                    .await
                    .map_err(|e| e.to_string())?;
                pids.push(pane.pid);
            }
            Ok::<_, Error>(pids)
        }
    });
    let mut pids = Vec::new();
    for result in futures::future::join_all(creations).await {
        pids.extend(result?);
    }
    let created = started.elapsed().as_secs_f64();
    let peak_mb = peak.finish() as f64 / 1024.0;
    let started = Instant::now();
    let listed = client.list_panes(None).await.map_err(|e| e.to_string())?.len();
    let list_ms = started.elapsed().as_secs_f64() * 1e3;
    // Idle cost once creation has settled.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let idle_mb = env::rss_kib(daemon.pid()) as f64 / 1024.0;
    let threads = env::threads(daemon.pid());
    let started = Instant::now();
    for s in 0..sizes.scale_sessions {
        client
            .destroy_session(&format!("s{s}"))
            .await
            .map_err(|e| e.to_string())?;
    }
    let destroyed = started.elapsed().as_secs_f64();
    let leftovers = poll("pane processes to end", Duration::from_secs(15), || {
        let alive = pids.iter().filter(|p| !env::process_gone(**p)).count();
        async move { (alive == 0).then_some(0) }
    })
    .await
    .unwrap_or_else(|_| pids.iter().filter(|p| !env::process_gone(**p)).count());
    let (children, zombies) = env::children(daemon.pid());

    // tmux: the same number of windows running sleep; one tmux command per session
    // (its ten windows chained with `;`), so tmux pays for 100 client starts, not 1000.
    let tmux = Tmux::start(dir, 120, 40, 2000)?;
    let started = Instant::now();
    for s in 0..sizes.scale_sessions {
        let name = format!("t{s}");
        let target = format!("{name}:");
        let mut args = vec!["new-session", "-d", "-s", &name, "sleep 3600"];
        for _ in 1..10 {
            args.extend([";", "new-window", "-d", "-t", &target, "sleep 3600"]);
        }
        tmux.run(&args)?;
    }
    let tmux_created = started.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let tmux_pid = tmux.server_pid()?;
    let tmux_mb = env::rss_kib(tmux_pid) as f64 / 1024.0;
    let tmux_threads = env::threads(tmux_pid);
    drop(tmux);

    let cores = std::thread::available_parallelism().map_or(2, |n| n.get()) as u64;
    let thread_goal = 2 * cores + 4;
    Ok(vec![
        row(
            "7 scale",
            &format!("create {total} panes in {} sessions, s", sizes.scale_sessions),
            format!("{created:.2} ({:.2}x)", created / tmux_created),
            format!("tmux {tmux_created:.2} ({total} windows)"),
            "<= 1.5x tmux",
            Some(created <= 1.5 * tmux_created),
        ),
        row(
            "7 scale",
            &format!("daemon RSS with {total} idle panes, MB"),
            format!(
                "{idle_mb:.1} ({:.2}x; {:.0} KB per pane; peak {peak_mb:.1})",
                idle_mb / tmux_mb,
                (idle_mb * 1024.0) / total as f64
            ),
            format!("tmux {tmux_mb:.1}"),
            "<= 5x tmux",
            Some(idle_mb <= 5.0 * tmux_mb),
        ),
        row(
            "7 scale",
            &format!("daemon threads with {total} panes"),
            format!("{threads}"),
            format!("tmux {tmux_threads}"),
            &format!("<= {thread_goal} (2 x cores + 4)"),
            Some(threads <= thread_goal),
        ),
        row(
            "7 scale",
            "list all, destroy all; leftovers",
            format!("{list_ms:.1} ms, {destroyed:.2} s; listed {listed}"),
            format!("leftover processes {leftovers}, children {children}, zombies {zombies}"),
            "all listed; 0 left, 0 zombies",
            Some(listed == total && leftovers == 0 && zombies == 0 && children == 0),
        ),
    ])
}

/// Scenario 8: an unrelated ListSessions while 200 clients create and release
/// panes as fast as they can.
async fn churn(dir: &Path, sizes: &Sizes) -> Result<Vec<Row>, Error> {
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

/// Scenario 9: an agent TUI's redraws, as fast as the pane takes them, while a
/// client captures the screen over and over: MB/s, and captures that caught half
/// a frame (goal: none).
async fn agent_tui(dir: &Path, sizes: &Sizes) -> Result<Vec<Row>, Error> {
    let path = dir.join("agent-frames.bin");
    let mut stream = Vec::new();
    for n in 0..sizes.agent_frames {
        agent_frame(n, &mut stream);
    }
    std::fs::write(&path, &stream).map_err(|e| e.to_string())?;
    let frame_kb = stream.len() as f64 / sizes.agent_frames as f64 / 1024.0;
    let daemon = Daemon::start(dir, "agent").await?;
    let client = daemon.client().await?;
    client
        .create_session("agent", Some(dir), vec![])
        .await
        .map_err(|e| e.to_string())?;
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

/// A session of 10 panes on `client`, for [`request_times`].
async fn request_session(client: &Client, session: &str) -> Result<(), Error> {
    let err = |e: fugue_client::ClientError| e.to_string();
    client.create_session(session, None, vec![]).await.map_err(err)?;
    for _ in 0..9 {
        client
            .create_pane(direct(session, "sleep", &["3600"]))
            .await
            .map_err(err)?;
    }
    Ok(())
}

/// Times `lists` ListPanes and `creates` CreatePane calls (each pane released
/// again), in microseconds, appending to `list_us` and `create_us`.
async fn request_times(
    client: &Client,
    session: &str,
    (lists, creates): (usize, usize),
    (list_us, create_us): (&mut Vec<f64>, &mut Vec<f64>),
) -> Result<(), Error> {
    let err = |e: fugue_client::ClientError| e.to_string();
    for _ in 0..lists {
        let started = Instant::now();
        client.list_panes(Some(session)).await.map_err(err)?;
        list_us.push(started.elapsed().as_secs_f64() * 1e6);
    }
    for _ in 0..creates {
        let started = Instant::now();
        let pane = client
            .create_pane(direct(session, "sleep", &["3600"]))
            .await
            .map_err(err)?;
        create_us.push(started.elapsed().as_secs_f64() * 1e6);
        client.release_pane(&pane.id.to_string()).await.map_err(err)?;
    }
    Ok(())
}

/// Scenario 10: what the records cost per request, and a live upgrade with many
/// running panes (wall time to every pane answering again, processes kept).
async fn durable(dir: &Path, sizes: &Sizes) -> Result<Vec<Row>, Error> {
    let err = |e: fugue_client::ClientError| e.to_string();
    // The same requests with records off and on, in alternating rounds so both
    // see the machine in the same state.
    let off = Daemon::start_with(dir, "records-off", &["--state", "none"]).await?;
    let on = Daemon::start(dir, "records-on").await?;
    let (off_client, on_client) = (off.client().await?, on.client().await?);
    request_session(&off_client, "off").await?;
    request_session(&on_client, "on").await?;
    let rounds = 10;
    let per_round = (sizes.latency_calls / rounds, sizes.creates / rounds);
    let (mut list_off, mut create_off, mut list_on, mut create_on) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        request_times(&off_client, "off", per_round, (&mut list_off, &mut create_off)).await?;
        request_times(&on_client, "on", per_round, (&mut list_on, &mut create_on)).await?;
    }
    drop((off_client, on_client, off, on));
    let (list_off, create_off) = (median(&mut list_off), median(&mut create_off));
    let (list_on, create_on) = (median(&mut list_on), median(&mut create_on));

    let daemon = Daemon::start(dir, "upgrade").await?;
    let client = daemon.client().await?;
    for s in 0..sizes.upgrade_panes.div_ceil(10) {
        let name = format!("u{s}");
        client.create_session(&name, None, vec![]).await.map_err(err)?;
        for p in 0..10.min(sizes.upgrade_panes - s * 10) {
            let script = format!("echo pane {p} of {name}; exec sleep 3600");
            client
                .create_pane(direct(&name, "sh", &["-c", &script]))
                .await
                .map_err(err)?;
        }
    }
    let before: Vec<(String, u32)> = client
        .list_panes(None)
        .await
        .map_err(err)?
        .into_iter()
        .map(|p| (p.id.to_string(), p.pid))
        .collect();
    drop(client);
    let options = fugue_client::ConnectOptions::default()
        .socket(&daemon.socket)
        .client_name("fugue-bench");
    let started = Instant::now();
    let info = Client::upgrade_daemon(options, Duration::from_secs(60))
        .await
        .map_err(err)?;
    if !info.recovery.starts_with("upgraded in place") {
        return Err(format!("upgrade failed: {}", info.recovery));
    }
    // Every pane answers: its status and a capture of its screen.
    let client = daemon.client().await?;
    let mut kept = 0;
    for (id, pid) in &before {
        let pane = client.pane_status(id).await.map_err(err)?;
        client
            .capture(id, CaptureWhat::Screen, (None, None), false, false)
            .await
            .map_err(err)?;
        if pane.pid == *pid && pane.state == fugue_client::protocol::PaneState::Running {
            kept += 1;
        }
    }
    let took = started.elapsed().as_secs_f64();
    let lost = before.len() - kept;
    let ratio = |on: f64, off: f64| on / off;
    Ok(vec![
        row(
            "10 records",
            "ListPanes p50, records on vs off",
            format!("{list_on:.0} us"),
            format!("{list_off:.0} us off ({:.2}x)", ratio(list_on, list_off)),
            "<= 1.10x",
            Some(ratio(list_on, list_off) <= 1.10),
        ),
        row(
            "10 records",
            &format!("CreatePane p50 x{}, records on vs off", sizes.creates),
            format!("{create_on:.0} us"),
            format!("{create_off:.0} us off ({:.2}x)", ratio(create_on, create_off)),
            "<= 1.10x",
            Some(ratio(create_on, create_off) <= 1.10),
        ),
        row(
            "10 upgrade",
            &format!(
                "live upgrade, {} running panes: command to every pane answering",
                before.len()
            ),
            format!("{:.0} ms", took * 1e3),
            String::new(),
            "< 1 s",
            Some(took < 1.0),
        ),
        row(
            "10 upgrade",
            "processes lost in the upgrade",
            lost.to_string(),
            format!("of {}", before.len()),
            "0",
            Some(lost == 0),
        ),
    ])
}

/// The browser driver (tests/browser/bench.mjs) and the fugue-web it talks to.
struct Browser {
    web: std::process::Child,
    driver: std::process::Child,
    replies: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
}

impl Browser {
    /// What the scenario needs that a machine may lack.
    fn missing() -> Option<String> {
        let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/browser/node_modules/playwright-core");
        if !Path::new("/usr/bin/chromium").is_file() {
            return Some("/usr/bin/chromium is not installed".into());
        }
        if !driver.is_dir() {
            return Some("playwright-core is not installed (npm ci in tests/browser)".into());
        }
        None
    }

    fn start(daemon: &Daemon, project: &Path) -> Result<Browser, Error> {
        use std::io::BufRead;
        let mut web = std::process::Command::new(bin("fugue-web")?)
            .args(["--listen", "127.0.0.1:0", "--session", "bench", "--project"])
            .arg(project)
            .arg("--socket")
            .arg(&daemon.socket)
            .env("FUGUE_LOG", "warn")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| format!("start fugue-web: {e}"))?;
        let mut url = String::new();
        let stdout = web.stdout.take().ok_or("fugue-web's stdout")?;
        std::io::BufReader::new(stdout)
            .read_line(&mut url)
            .map_err(|e| e.to_string())?;
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/browser/bench.mjs");
        let mut driver = std::process::Command::new("node")
            .arg(&script)
            .current_dir(script.parent().ok_or("script dir")?)
            .env("FUGUE_WEB_URL", url.trim())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| format!("start node: {e}"))?;
        let replies = std::io::BufReader::new(driver.stdout.take().ok_or("node's stdout")?).lines();
        Ok(Browser { web, driver, replies })
    }

    /// Sends one command to the driver and returns its JSON answer.
    fn ask(&mut self, command: &str) -> Result<serde_json::Value, Error> {
        let stdin = self.driver.stdin.as_mut().ok_or("node's stdin")?;
        writeln!(stdin, "{command}").map_err(|e| e.to_string())?;
        let line = self
            .replies
            .next()
            .ok_or("the browser driver ended")?
            .map_err(|e| e.to_string())?;
        let value: serde_json::Value = serde_json::from_str(&line).map_err(|e| format!("{e}: {line}"))?;
        match value.get("error") {
            Some(error) => Err(format!("browser driver: {error}")),
            None => Ok(value),
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // The end of its stdin ends the driver (and its browser).
        drop(self.driver.stdin.take());
        let _ = self.driver.wait();
        let _ = self.web.kill();
        let _ = self.web.wait();
    }
}

/// Starts `cat FILE` in `pane` (held at a `read`) and times it to the exit.
async fn timed_cat(client: &Client, pane: &str) -> Result<f64, Error> {
    let started = Instant::now();
    client.write_input(pane, b"\n").await.map_err(|e| e.to_string())?;
    client.wait_for_exit(pane, None).await.map_err(|e| e.to_string())?;
    Ok(started.elapsed().as_secs_f64())
}

/// A page in headless chromium attached to a pane: what it costs the daemon's
/// throughput, and how long a keystroke takes to come back.
async fn browser(dir: &Path, (file, _last): &(PathBuf, String), sizes: &Sizes) -> Result<Vec<Row>, Error> {
    if let Some(missing) = Browser::missing() {
        let skipped = format!("skipped: {missing}");
        return Ok(vec![row("11 browser", "all", skipped, String::new(), "-", None)]);
    }
    let err = |e: fugue_client::ClientError| e.to_string();
    let daemon = Daemon::start(dir, "web").await?;
    let client = daemon.client().await?;
    let project = dir.join("web-project");
    std::fs::create_dir_all(&project).map_err(|e| e.to_string())?;
    let project = project.canonicalize().map_err(|e| e.to_string())?;
    let session = fugue_web::tabs::fugue_session_name(&project, "bench");
    client
        .create_session(&session, Some(&project), vec![])
        .await
        .map_err(err)?;
    client
        .create_session("web-baseline", Some(&project), vec![])
        .await
        .map_err(err)?;
    let mut browser = Browser::start(&daemon, &project)?;
    let gated_cat = format!("read x; exec cat {}", file.display());

    let (mut attached, mut alone) = (Vec::new(), Vec::new());
    for _ in 0..sizes.rounds {
        // The page's only tab: it attaches (at the page's size), then cat starts.
        let tab = client
            .create_pane(direct(&session, "sh", &["-c", &gated_cat]))
            .await
            .map_err(err)?;
        let id = tab.id.to_string();
        browser.ask(&format!("ready {id}"))?;
        let size = client.pane_status(&id).await.map_err(err)?.size;
        attached.push(timed_cat(&client, &id).await?);
        client.release_pane(&id).await.map_err(err)?;
        // The same at the same size with no client at all.
        let mut spec = direct("web-baseline", "sh", &["-c", &gated_cat]);
        spec.size = Some(size);
        let pane = client.create_pane(spec).await.map_err(err)?.id.to_string();
        alone.push(timed_cat(&client, &pane).await?);
        client.release_pane(&pane).await.map_err(err)?;
    }
    let (with, without) = (median(&mut attached), median(&mut alone));

    let shell = client
        .create_pane(direct(&session, "bash", &["--norc", "--noprofile"]))
        .await
        .map_err(err)?;
    let id = shell.id.to_string();
    browser.ask(&format!("ready {id}"))?;
    let keys = sizes.reactions.min(100);
    let reply = browser.ask(&format!("latency {id} {keys}"))?;
    let numbers = |key: &str| -> Vec<f64> {
        reply[key]
            .as_array()
            .map(|a| a.iter().filter_map(|v| v.as_f64()).collect())
            .unwrap_or_default()
    };
    let (mut echo, mut painted, mut sent) = (numbers("samples_ms"), numbers("painted_ms"), numbers("send_ms"));
    if echo.len() != keys {
        return Err(format!("the browser timed {} keystrokes of {keys}", echo.len()));
    }
    let (p50, p99) = (percentile(&mut echo, 50.0), percentile(&mut echo, 99.0));
    let (paint50, send50) = (percentile(&mut painted, 50.0), percentile(&mut sent, 50.0));
    drop(browser);
    Ok(vec![
        row(
            "11 browser",
            &format!("cat {} MB with a browser tab attached vs none, s", sizes.file_mb),
            format!("{with:.2} ({:.2}x)", with / without),
            format!("none {without:.2}"),
            "<= 1.15x",
            Some(with <= 1.15 * without),
        ),
        row(
            "11 browser",
            &format!("keystroke to echo on the page's socket, p50 (p99), {keys} keys"),
            format!("{p50:.1} ms ({p99:.1} ms)"),
            format!("of which keydown to the page's send: p50 {send50:.1} ms; to the first frame after the echo: p50 {paint50:.1} ms"),
            "p50 < 10 ms",
            Some(p50 < 10.0),
        ),
    ])
}

/// Scenario 12: the same daemon through `--host` (a real sshd on loopback, ssh
/// with a warm ControlMaster) against the local socket: one request on a
/// connection, a one-shot CLI command, and a `cat` followed by an attached client.
async fn remote(dir: &Path, (file, last): &(PathBuf, String), sizes: &Sizes) -> Result<Vec<Row>, Error> {
    if !Path::new(fugue_tests::sshd::SSHD).is_file() {
        let skipped = "skipped: no sshd (apt-get install openssh-server)".to_string();
        return Ok(vec![row("12 remote", "all", skipped, String::new(), "-", None)]);
    }
    let sshd = fugue_tests::sshd::Sshd::start();
    let daemon = Daemon::start(dir, "remote").await?;
    let local = daemon.client().await?;
    local
        .create_session("rm", Some(dir), vec![])
        .await
        .map_err(|e| e.to_string())?;
    for _ in 0..10 {
        local
            .create_pane(direct("rm", "sleep", &["3600"]))
            .await
            .map_err(|e| e.to_string())?;
    }
    let ssh = sshd.fugue_ssh_multiplexed();
    let remote = fugue_client::remote::Remote {
        name: "bench".into(),
        destination: "fugue-test".into(),
        port: None,
        fugue_path: bin("fugue")?.display().to_string(),
        socket: Some(daemon.socket.display().to_string()),
        ssh_command: Some(ssh.clone()),
    };
    let far_options = fugue_client::ConnectOptions::default().host(remote);
    let far = Client::connect(far_options.clone()).await.map_err(|e| e.to_string())?;

    // One request on an open connection.
    let calls = sizes.latency_calls / 5;
    let (mut near_us, mut far_us) = (Vec::new(), Vec::new());
    for _ in 0..calls {
        for (client, times) in [(&local, &mut near_us), (&far, &mut far_us)] {
            let started = Instant::now();
            client.list_panes(Some("rm")).await.map_err(|e| e.to_string())?;
            times.push(started.elapsed().as_secs_f64() * 1e6);
        }
    }
    let (near_p50, far_p50) = (percentile(&mut near_us, 50.0), percentile(&mut far_us, 50.0));

    // One-shot commands: ssh (multiplexed), the remote `fugue proxy`, handshake, one request.
    let fugue_bin = bin("fugue")?;
    let hosts = dir.join("remote-config");
    std::fs::create_dir_all(hosts.join("fugue")).map_err(|e| e.to_string())?;
    std::fs::write(
        hosts.join("fugue/hosts.toml"),
        format!(
            "[hosts.bench]\nssh = \"fugue-test\"\nfugue_path = \"{}\"\nsocket = \"{}\"\n",
            fugue_bin.display(),
            daemon.socket.display()
        ),
    )
    .map_err(|e| e.to_string())?;
    let (mut near_ms, mut far_ms) = (Vec::new(), Vec::new());
    for _ in 0..sizes.cli_runs {
        for (host, times) in [(None, &mut near_ms), (Some("bench"), &mut far_ms)] {
            let mut command = std::process::Command::new(&fugue_bin);
            command
                .arg("--socket")
                .arg(&daemon.socket)
                .env("XDG_CONFIG_HOME", &hosts)
                .env("FUGUE_SSH", &ssh);
            if let Some(host) = host {
                command.args(["--host", host]);
            }
            let started = Instant::now();
            let out = command.arg("ls").output().map_err(|e| e.to_string())?;
            times.push(started.elapsed().as_secs_f64() * 1e3);
            if !out.status.success() {
                return Err(format!("fugue ls failed: {}", String::from_utf8_lossy(&out.stderr)));
            }
        }
    }
    let (near_ls, far_ls) = (median(&mut near_ms), median(&mut far_ms));
    // What ssh itself costs per command on this machine (sshd starts a session).
    let mut ssh_ms = Vec::new();
    for _ in 0..sizes.cli_runs {
        let started = Instant::now();
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("{ssh} fugue-test true"))
            .output()
            .map_err(|e| e.to_string())?;
        ssh_ms.push(started.elapsed().as_secs_f64() * 1e3);
        if !out.status.success() {
            return Err(format!("ssh true failed: {}", String::from_utf8_lossy(&out.stderr)));
        }
    }
    let ssh_true = median(&mut ssh_ms);

    // `cat` with an attached client reading everything, over each connection.
    local
        .create_session("tp", Some(dir), vec![])
        .await
        .map_err(|e| e.to_string())?;
    let (mut near_cat, mut far_cat) = (Vec::new(), Vec::new());
    for _ in 0..sizes.rounds {
        // A fresh watcher each time: a connection's event stream is taken once.
        let near_watcher = daemon.client().await?;
        near_cat.push(attached_cat(&local, &near_watcher, file, last).await?);
        let far_watcher = Client::connect(far_options.clone()).await.map_err(|e| e.to_string())?;
        far_cat.push(attached_cat(&local, &far_watcher, file, last).await?);
    }
    let (near_c, far_c) = (median(&mut near_cat), median(&mut far_cat));
    Ok(vec![
        row(
            "12 remote",
            "ListPanes (10 panes) on one connection, p50",
            format!("{far_p50:.0} us over ssh"),
            format!("local socket {near_p50:.0} us"),
            "reported",
            None,
        ),
        row(
            "12 remote",
            "one-shot `fugue --host ls` (ControlMaster warm), median",
            format!("{far_ls:.1} ms"),
            format!("local `fugue ls` {near_ls:.1} ms; `ssh HOST true` {ssh_true:.1} ms"),
            "reported",
            None,
        ),
        row(
            "12 remote",
            &format!("cat {} MB with an attached reading client, s", sizes.file_mb),
            format!("{far_c:.2} over ssh ({:.2}x)", far_c / near_c),
            format!("local {near_c:.2}"),
            "reported",
            None,
        ),
    ])
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

/// `fugue top` in tmux over `scale_sessions * 10` panes: how long after a
/// pane event (a rename, as `fugue rename-pane` makes it) the screen shows it,
/// read back with `tmux capture-pane`; and what one overview read costs.
async fn overview(dir: &Path, sizes: &Sizes) -> Result<Vec<Row>, Error> {
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
async fn subscription(dir: &Path, sizes: &Sizes) -> Result<Vec<Row>, Error> {
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
