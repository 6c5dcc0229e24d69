//! Scenarios 1 and 2: `cat` of a large file, alone and with attached clients.

use super::{attached_cat, fugue_cat, raw_cat, row, tmux_cat, waiting_cat_spec, Sizes, COLS, ROWS};
use crate::env::{self, median, Error, PeakRss, Tmux};
use crate::Row;
use bytes::BytesMut;
use fugue_protocol::codec::FrameCodec;
use fugue_protocol::requests as rq;
use fugue_protocol::{ClientFrame, Hello, Request, ServerFrame, WaitUntil, PROTOCOL_VERSION};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio_util::codec::Encoder;

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
pub(super) async fn run(dir: &Path, (file, last): &(PathBuf, String), sizes: &Sizes) -> Result<Vec<Row>, Error> {
    let (daemon, client) = super::daemon_with_session(dir, "tp", "tp").await?;
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
            "<= 1.15x",
            Some(f / r <= 1.15),
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
