//! A subscriber that stops reading while a pane prints 200 MB: the daemon's memory
//! stays bounded, everyone else stays responsive, and the stalled client gets the
//! correct final screen when it reads again.

use bytes::BytesMut;
use fugue_client::protocol::codec::FrameCodec;
use fugue_client::protocol::{ClientFrame, Event, Hello, Request, ServerFrame, SpawnSpec, PROTOCOL_VERSION};
use fugue_protocol::requests as rq;
use fugue_tests::{rss_kib, Daemon};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::codec::{Decoder, Encoder};

fn frame(codec: &mut FrameCodec<ClientFrame, ServerFrame>, frame: ClientFrame) -> BytesMut {
    let mut out = BytesMut::new();
    codec.encode(frame, &mut out).unwrap();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_subscriber_costs_bounded_memory_and_is_resynchronised() {
    let daemon = Daemon::start();
    let client = daemon.client().await;
    client.create_session("flood", None, vec![]).await.unwrap();
    let mut spec = SpawnSpec::new("flood");
    spec.command = Some("sh".into());
    // 150 MB of random bytes as base64 is 200 MB of output; then a last line.
    spec.args = vec![
        "-c".into(),
        "read go; head -c 150000000 /dev/urandom | base64 -w 100; echo FINAL-$((40+2))".into(),
    ];
    spec.shell = false;
    let pane = client.create_pane(spec).await.unwrap().id.to_string();

    // The stalled client: attaches over a raw socket, then stops reading.
    let mut stalled = UnixStream::connect(&daemon.socket).unwrap();
    let mut codec = FrameCodec::<ClientFrame, ServerFrame>::new();
    let hello = Hello {
        protocol_version: PROTOCOL_VERSION,
        client_name: "stalled".into(),
        client_version: "0".into(),
        revision: 0,
    };
    stalled
        .write_all(&frame(&mut codec, ClientFrame::Hello(hello)))
        .unwrap();
    let attach = Request::Attach(rq::Attach {
        pane: pane.clone(),
        read_only: true,
        size: None,
    });
    stalled
        .write_all(&frame(&mut codec, ClientFrame::Request { id: 1, request: attach }))
        .unwrap();

    // The healthy client follows the same pane and keeps reading.
    let healthy = daemon.client().await;
    let mut events = healthy.events().unwrap();
    healthy.attach(&pane, true, None).await.unwrap();
    let healthy_bytes = Arc::new(AtomicU64::new(0));
    let healthy_done = {
        let healthy_bytes = healthy_bytes.clone();
        tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                match event {
                    Event::Output { data, .. } | Event::Redraw { data, .. } => {
                        healthy_bytes.fetch_add(data.len() as u64, Ordering::Relaxed);
                    }
                    Event::Exited { status, .. } => return status,
                    _ => {}
                }
            }
            panic!("event stream ended before the exit");
        })
    };

    // Memory before the flood, then sampled throughout.
    let pid = daemon.pid();
    let baseline = rss_kib(pid);
    let peak = Arc::new(AtomicU64::new(baseline));
    let sampling = Arc::new(AtomicBool::new(true));
    let sampler = {
        let (peak, sampling) = (peak.clone(), sampling.clone());
        std::thread::spawn(move || {
            while sampling.load(Ordering::Relaxed) {
                peak.fetch_max(rss_kib(pid), Ordering::Relaxed);
                // Paced: the slow reader's own pace is the scenario.
                std::thread::sleep(Duration::from_millis(50));
            }
        })
    };

    let started = Instant::now();
    client.write_input(&pane, b"go\r").await.unwrap();
    // Control requests keep being answered during the flood.
    let mut answered = 0;
    let (info, exited) = loop {
        let waited = client
            .wait_for_exit(&pane, Some(Duration::from_millis(200)))
            .await
            .unwrap();
        if waited.1 {
            break waited;
        }
        client.list_sessions().await.unwrap();
        client
            .capture(
                &pane,
                fugue_client::protocol::CaptureWhat::Screen,
                (None, None),
                false,
                false,
            )
            .await
            .unwrap();
        answered += 1;
        assert!(started.elapsed() < Duration::from_secs(300), "the flood never ended");
    };
    assert!(exited && info.exit.unwrap().code == Some(0), "{info:?}");
    let status = tokio::time::timeout(Duration::from_secs(60), healthy_done)
        .await
        .expect("healthy client finished")
        .unwrap();
    assert_eq!(status.code, Some(0));
    assert!(
        healthy_bytes.load(Ordering::Relaxed) > 1_000_000,
        "the healthy client received output"
    );
    // The stalled client has not read for the whole flood; make it at least 10 s.
    let stall = Duration::from_secs(10).saturating_sub(started.elapsed());
    // Paced: the stall is the scenario.
    tokio::time::sleep(stall).await;
    sampling.store(false, Ordering::Relaxed);
    sampler.join().unwrap();
    let growth_mib = peak.load(Ordering::Relaxed).saturating_sub(baseline) / 1024;
    assert!(
        growth_mib < 64,
        "daemon RSS grew by {growth_mib} MiB with a stalled client"
    );
    eprintln!(
        "flood: {answered} control rounds answered, RSS growth {growth_mib} MiB, {:?}",
        started.elapsed()
    );

    // Now the stalled client reads: stale frames, then a redraw of the final screen,
    // then the exit.
    let final_screen = tokio::task::spawn_blocking(move || {
        stalled.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let mut decoder = FrameCodec::<ClientFrame, ServerFrame>::new();
        let mut buf = BytesMut::new();
        let mut chunk = vec![0u8; 1 << 16];
        let mut last_redraw = None;
        loop {
            while let Some(frame) = decoder.decode(&mut buf).unwrap() {
                match frame {
                    ServerFrame::Event(Event::Redraw { data, .. }) => last_redraw = Some(data),
                    ServerFrame::Event(Event::Exited { .. }) => return last_redraw,
                    _ => {}
                }
            }
            let n = stalled.read(&mut chunk).expect("read");
            assert!(n > 0, "connection closed before the exit event");
            buf.extend_from_slice(&chunk[..n]);
        }
    })
    .await
    .unwrap();
    let redraw = String::from_utf8_lossy(&final_screen.expect("a resync redraw")).into_owned();
    assert!(redraw.contains("FINAL-42"), "the resync shows the final screen");
}

/// The client library holds a bounded number of output bytes for a caller that
/// reads slowly (fugue-web while it paces a browser, say): past that it stops
/// reading, so the daemon drops the rest and sends a redraw, instead of the
/// caller replaying megabytes of stale output later.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_reader_of_the_client_library_gets_a_redraw_not_a_backlog() {
    let daemon = Daemon::start();
    let client = daemon.client().await;
    client.create_session("backlog", None, vec![]).await.unwrap();
    let mut spec = SpawnSpec::new("backlog");
    spec.command = Some("sh".into());
    // 40 MB, once the reader is attached.
    spec.args = vec![
        "-c".into(),
        "read go; head -c 40000000 /dev/zero | tr '\\0' x; echo; echo FLOOD-END; sleep 60".into(),
    ];
    spec.shell = false;
    let pane = client.create_pane(spec).await.unwrap();
    let id = pane.id.to_string();
    let reader = daemon.client().await;
    reader.attach(&id, true, None).await.unwrap();
    let mut events = reader.events().unwrap();
    client.write_input(&id, b"\n").await.unwrap();
    // Not reading while the flood runs to its end.
    fugue_tests::wait_for_text(&client, &id, "FLOOD-END").await;
    let (mut stale, mut redrawn) = (0usize, false);
    while !redrawn {
        let event = tokio::time::timeout(fugue_tests::DEADLINE, events.recv())
            .await
            .expect("a redraw in time")
            .expect("attached");
        match event {
            Event::Output { data, .. } => stale += data.len(),
            Event::Redraw { .. } => redrawn = true,
            _ => {}
        }
    }
    // The client's 1 MiB, the daemon's 1 MiB queue for it, and socket buffers.
    assert!(stale < 4 << 20, "{stale} bytes of stale output before the redraw");
}
