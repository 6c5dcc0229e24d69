//! The hostile-client suite: real daemons, attacked the way a careless or hostile
//! client (or program) would. Every case checks that the daemon survives, that a
//! well-behaved client on another connection is still answered, and that the
//! daemon's memory stays bounded. Figures are printed (`--nocapture`) for the
//! record; the bounds asserted are generous ones that only a real leak or lock-out
//! would cross.

use fugue_client::protocol::{
    ClientFrame, ErrorCode, Hello, PaneSize, ReadMode, Request, Response, ServerFrame, SpawnSpec, PROTOCOL_VERSION,
};
use fugue_client::Client;
use fugue_protocol::requests as rq;
use fugue_tests::{rss_kib, wait_for_text, Daemon, RawConnection, DEADLINE};
use std::io::Write;
use std::time::{Duration, Instant};

/// How long a bystander may take to be answered while an attack goes on. Far below
/// the 10 s handshake and stall timeouts, so a lock-out cannot pass for slowness.
const BYSTANDER_LIMIT: Duration = Duration::from_secs(3);

/// A fresh client pings; returns how long connect + handshake + ping took.
async fn bystander(daemon: &Daemon) -> Duration {
    let started = Instant::now();
    let client = tokio::time::timeout(BYSTANDER_LIMIT, daemon.client())
        .await
        .unwrap_or_else(|_| panic!("a bystander could not connect within {BYSTANDER_LIMIT:?}"));
    tokio::time::timeout(BYSTANDER_LIMIT, client.ping())
        .await
        .expect("bystander ping in time")
        .expect("bystander ping");
    let took = started.elapsed();
    assert!(took < BYSTANDER_LIMIT, "bystander took {took:?}");
    took
}

/// The daemon's RSS growth since `base`, in MiB, asserted under `limit_mib`.
fn rss_growth(daemon: &Daemon, base_kib: u64, case: &str, limit_mib: u64) -> u64 {
    let now = rss_kib(daemon.pid());
    let growth = now.saturating_sub(base_kib) / 1024;
    println!(
        "{case}: RSS {} MiB -> {} MiB (+{growth} MiB)",
        base_kib / 1024,
        now / 1024
    );
    assert!(growth < limit_mib, "{case}: RSS grew {growth} MiB (limit {limit_mib})");
    growth
}

async fn session_with(client: &Client, name: &str) {
    client.create_session(name, None, vec![]).await.unwrap();
}

fn refused(frame: Option<ServerFrame>) -> (ErrorCode, String) {
    match frame {
        Some(ServerFrame::Reply { result: Err(e), .. }) => (e.code, e.message),
        other => panic!("expected an error reply, got {other:?}"),
    }
}

/// The bad inputs listed in the hardening issue, each sent raw (no CLI checks in the
/// way) and through the CLI: all refused with one line naming the limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_inputs_are_refused_with_one_line_naming_the_limit() {
    let daemon = Daemon::start();
    let client = daemon.client().await;
    session_with(&client, "s").await;
    let pane = client.create_pane(SpawnSpec::new("s")).await.unwrap().id.to_string();
    let mut raw = RawConnection::welcomed(&daemon);

    // 20 000 M- prefixes used to overflow the daemon's stack.
    let keys = vec![format!("{}a", "M-".repeat(20_000))];
    let (code, message) = refused(raw.request(
        1,
        Request::SendKeys(rq::SendKeys {
            pane: pane.clone(),
            keys,
        }),
    ));
    assert_eq!(code, ErrorCode::InvalidArgument);
    assert!(
        message.contains("key name of 40001 bytes; the maximum is 32"),
        "{message}"
    );

    // 65535x65535 used to allocate ~100 GB of cells.
    let huge = PaneSize {
        cols: 65535,
        rows: 65535,
    };
    let mut spec = SpawnSpec::new("s");
    spec.size = Some(huge);
    for (id, request) in [
        (2, Request::CreatePane(rq::CreatePane { spec })),
        (
            3,
            Request::ResizePane(rq::ResizePane {
                pane: pane.clone(),
                size: huge,
            }),
        ),
        (
            4,
            Request::ClientResize(rq::ClientResize {
                pane: pane.clone(),
                size: huge,
            }),
        ),
        (
            5,
            Request::Attach(rq::Attach {
                pane: pane.clone(),
                read_only: false,
                size: Some(huge),
            }),
        ),
    ] {
        let (_, message) = refused(raw.request(id, request));
        assert_eq!(message, "size 65535x65535 exceeds the maximum 10000x10000");
    }
    let (_, message) = refused(raw.request(
        6,
        Request::ResizePane(rq::ResizePane {
            pane: pane.clone(),
            size: PaneSize { cols: 5000, rows: 5000 },
        }),
    ));
    assert!(message.contains("25000000 cells; the maximum is 1000000"), "{message}");

    // Titles with escapes are refused on every path.
    let evil = "evil\x1b]0;PWNED\x07\x1b[2J".to_string();
    let mut spec = SpawnSpec::new("s");
    spec.title = Some(evil.clone());
    let (_, message) = refused(raw.request(7, Request::CreatePane(rq::CreatePane { spec })));
    assert!(message.contains("control character \\x1b"), "{message}");
    let (_, message) = refused(raw.request(
        8,
        Request::RenamePane(rq::RenamePane {
            pane: pane.clone(),
            title: "x".repeat(300),
        }),
    ));
    assert!(message.contains("300 characters; the maximum is 256"), "{message}");

    // A wait whose deadline overflows the clock, a pattern that compiles huge.
    let (_, message) = refused(raw.request(
        9,
        Request::WaitForExit(rq::WaitForExit {
            pane: pane.clone(),
            timeout_ms: Some(u64::MAX),
        }),
    ));
    assert!(message.contains("exceeds the maximum 2592000000 ms"), "{message}");
    let until = fugue_client::protocol::WaitUntil {
        pattern: Some("(x{500}){500}".into()),
        ..Default::default()
    };
    let (_, message) = refused(raw.request(
        10,
        Request::WaitFor(rq::WaitFor {
            pane: pane.clone(),
            until,
            timeout_ms: 1,
        }),
    ));
    assert!(message.contains("pattern compiles to more than"), "{message}");

    // Through the CLI: one line, `fugue: ...`, no panic (exit 101) anywhere.
    let m_keys = format!("{}a", "M-".repeat(20_000));
    let cases: [(&[&str], &str); 5] = [
        (&["send-keys", &pane, &m_keys], "key name of 40001 bytes"),
        (
            &["run", "-s", "s", "--size", "65535x65535", "--", "true"],
            "size 65535x65535 exceeds the maximum 10000x10000",
        ),
        (
            &["resize", &pane, "65535x65535"],
            "size 65535x65535 exceeds the maximum 10000x10000",
        ),
        (
            &["wait", &pane, "--timeout", "1e300"],
            "--timeout must be a number of seconds from 0 to 2592000",
        ),
        (
            &["run", "-s", "s", "--title", &evil, "--", "true"],
            "control character \\x1b",
        ),
    ];
    for (args, needle) in cases {
        let out = daemon.cli(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", out.stderr);
        let stderr = out.stderr.trim_end();
        assert!(stderr.starts_with("fugue: ") && !stderr.contains('\n'), "{stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
    // `fugue panes` never prints a raw escape, whatever the titles.
    let listed = daemon.cli(&["panes"]).ok();
    assert!(!listed.contains('\x1b'), "{listed:?}");

    assert_eq!(client.pane_status(&pane).await.unwrap().state.as_str(), "running");
    println!("bad inputs: bystander answered in {:?}", bystander(&daemon).await);
}

/// A Hello of the wrong version with a long name is refused without logging the
/// name whole; a 4 MiB Hello is refused from its length prefix alone.
#[tokio::test]
async fn oversized_and_mismatched_hellos_cost_no_log_and_no_memory() {
    let daemon = Daemon::start();
    let log_before = daemon.log().len();
    for _ in 0..20 {
        let mut raw = RawConnection::connect(&daemon);
        raw.send(ClientFrame::Hello(Hello {
            protocol_version: PROTOCOL_VERSION + 1,
            client_name: "n".repeat(60 * 1024),
            client_version: "1".into(),
            revision: 0,
        }));
        match raw.recv() {
            Some(ServerFrame::Fatal(reply)) => {
                assert_eq!(reply.code, ErrorCode::ProtocolMismatch);
                assert!(reply.message.len() < 1024, "{} bytes", reply.message.len());
            }
            other => panic!("expected a mismatch, got {other:?}"),
        }
    }
    let growth = daemon.log().len() - log_before;
    println!("20 mismatched hellos with 60 KiB names: log +{growth} bytes");
    assert!(growth < 20 * 2048, "the log grew {growth} bytes");

    let mut raw = RawConnection::connect(&daemon);
    raw.stream.write_all(&(4u32 << 20).to_be_bytes()).unwrap();
    match raw.recv() {
        Some(ServerFrame::Fatal(reply)) => {
            assert_eq!(reply.code, ErrorCode::FrameTooLarge);
            assert!(reply.message.contains("exceeds the maximum 65536"), "{}", reply.message);
        }
        other => panic!("expected frame_too_large, got {other:?}"),
    }
    bystander(&daemon).await;
}

/// Connections stalled inside a frame hold only what they sent, and are cut off
/// when the frame does not finish; idle connections between frames stay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_frames_and_slow_drips_are_cut_off() {
    let daemon = Daemon::start();
    let base = rss_kib(daemon.pid());
    let mut stalled: Vec<RawConnection> = (0..20)
        .map(|_| {
            let mut raw = RawConnection::welcomed(&daemon);
            // Announce a 2 MiB frame (the most a client may send), send 64 KiB of it.
            raw.stream.write_all(&(2u32 << 20).to_be_bytes()).unwrap();
            raw.stream.write_all(&[0u8; 64 * 1024]).unwrap();
            raw
        })
        .collect();
    let idle = RawConnection::welcomed(&daemon);
    let took = bystander(&daemon).await;
    rss_growth(&daemon, base, "20 connections stalled inside 2 MiB frames", 48);
    // Each is closed with a Fatal frame once the stall timeout passes.
    let started = Instant::now();
    for raw in &mut stalled {
        match raw.recv() {
            Some(ServerFrame::Fatal(reply)) => assert!(reply.message.contains("stopped half way"), "{}", reply.message),
            other => panic!("expected the stall to be cut off, got {other:?}"),
        }
    }
    println!(
        "stalled frames cut off after {:?}; bystander answered in {took:?}",
        started.elapsed()
    );
    // The idle connection (no partial frame) is still served.
    let mut idle = idle;
    assert!(matches!(
        idle.request(1, Request::Ping(rq::Ping {})),
        Some(ServerFrame::Reply {
            result: Ok(Response::Ping(())),
            ..
        })
    ));
}

/// A thousand connections that never say Hello, then a thousand idle ones that
/// did: neither locks anyone out, and with a low descriptor limit the daemon
/// sheds silent handshakes instead of spinning on EMFILE.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_and_idle_connections_cannot_lock_others_out() {
    let daemon = Daemon::start();
    let base = rss_kib(daemon.pid());
    let silent: Vec<_> = (0..1000)
        .map(|_| std::os::unix::net::UnixStream::connect(&daemon.socket).unwrap())
        .collect();
    let took = bystander(&daemon).await;
    println!("1000 silent connections: bystander answered in {took:?}");
    drop(silent);
    let idle: Vec<_> = (0..1000).map(|_| RawConnection::welcomed(&daemon)).collect();
    let took = bystander(&daemon).await;
    rss_growth(&daemon, base, "1000 idle connections", 64);
    println!("1000 idle connections: bystander answered in {took:?}");
    drop(idle);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn descriptor_exhaustion_sheds_silent_handshakes() {
    // A hard limit of 200 descriptors, which the daemon cannot raise.
    let daemon = Daemon::start_with_rlimit_nofile(200);
    let silent: Vec<_> = (0..400)
        .filter_map(|_| std::os::unix::net::UnixStream::connect(&daemon.socket).ok())
        .collect();
    let took = bystander(&daemon).await;
    println!(
        "{} silent connections at a 200-fd limit: bystander answered in {took:?}",
        silent.len()
    );
    let warnings = daemon.log().matches("out of file descriptors").count();
    println!("EMFILE warnings logged: {warnings}");
    assert!(warnings < 50, "{warnings} EMFILE warnings: a busy loop?");
}

/// A thousand subscribed connections that never read, while panes are created
/// and renamed: memory stays bounded and others are answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribers_that_never_read_cost_bounded_memory() {
    let daemon = Daemon::start();
    let client = daemon.client().await;
    session_with(&client, "s").await;
    let base = rss_kib(daemon.pid());
    let mut subscribers: Vec<RawConnection> = (0..1000).map(|_| RawConnection::welcomed(&daemon)).collect();
    for (i, raw) in subscribers.iter_mut().enumerate() {
        raw.send(ClientFrame::Request {
            id: i as u64,
            request: Request::Subscribe(rq::Subscribe {}),
        });
    }
    let mut spec = SpawnSpec::new("s");
    spec.command = Some("sleep".into());
    spec.args = vec!["600".into()];
    spec.shell = false;
    let pane = client.create_pane(spec).await.unwrap().id.to_string();
    for i in 0..300 {
        let title = format!("{i:03}{}", "t".repeat(250));
        client.rename_pane(&pane, &title).await.unwrap();
    }
    let took = bystander(&daemon).await;
    rss_growth(
        &daemon,
        base,
        "1000 subscribers that never read, 300 rename events",
        200,
    );
    println!("1000 stalled subscribers: bystander answered in {took:?}");
    drop(subscribers);
}

/// A client that asks for 4 MiB reads by the hundred and never reads a reply:
/// the replies it can make the daemon hold are bounded in bytes, not by count.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_large_reads_that_are_never_collected() {
    let daemon = Daemon::start();
    let client = daemon.client().await;
    session_with(&client, "s").await;
    let script = "head -c 5000000 /dev/zero | tr '\\0' r; printf '\\nlog-full\\n'; exec sleep 600";
    let mut spec = fugue_tests::sh_spec("s", script);
    spec.output_byte_limit = Some(4 << 20);
    let pane = client.create_pane(spec).await.unwrap().id.to_string();
    wait_for_text(&client, &pane, "log-full").await;
    let one_byte = ReadMode::Raw {
        since: None,
        max_bytes: Some(1),
    };
    let read = client.read_output(&pane, one_byte).await.unwrap();
    assert!(
        read.next_offset >= 5_000_000,
        "the log did not fill: {}",
        read.next_offset
    );
    let base = rss_kib(daemon.pid());
    let mut greedy = RawConnection::welcomed(&daemon);
    for id in 0..200 {
        let mode = ReadMode::Raw {
            since: Some(0),
            max_bytes: None,
        };
        greedy.send(ClientFrame::Request {
            id,
            request: Request::ReadOutput(rq::ReadOutput {
                pane: pane.clone(),
                mode,
            }),
        });
    }
    // Let the daemon take in all it will: the bystander is answered meanwhile.
    let took = bystander(&daemon).await;
    let read = client
        .read_output(
            &pane,
            ReadMode::Raw {
                since: None,
                max_bytes: Some(16),
            },
        )
        .await
        .unwrap();
    assert_eq!(read.data.len(), 16);
    rss_growth(&daemon, base, "200 uncollected 4 MiB reads", 96);
    println!("200 uncollected 4 MiB reads: bystander answered in {took:?}");
    drop(greedy);
}

/// 200 clients at once, each with a mix of requests on its own session: every
/// reply reaches the caller that asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_clients_get_their_own_replies() {
    let daemon = Daemon::start_with(&["--max-panes", "10"]);
    let started = Instant::now();
    // At most 100 handshakes at once (a burst of 1000 is its own test,
    // protocol::a_burst_of_a_thousand_clients_is_welcomed); the 200 then run together.
    let connecting = std::sync::Arc::new(tokio::sync::Semaphore::new(100));
    let tasks = (0..200).map(|i| {
        let socket = daemon.socket.clone();
        let connecting = connecting.clone();
        tokio::spawn(async move {
            let options = fugue_client::ConnectOptions::default().socket(&socket).autostart(false);
            let permit = connecting.acquire().await.unwrap();
            let client = Client::connect(options).await.unwrap();
            drop(permit);
            let name = format!("c{i}");
            let session = client.create_session(&name, None, vec![]).await.unwrap();
            let mut spec = SpawnSpec::new(&name);
            spec.command = Some("echo".into());
            spec.args = vec![format!("hello-{i}")];
            spec.shell = false;
            spec.title = Some(format!("t{i}"));
            let pane = client.create_pane(spec).await.unwrap();
            let by_title = format!("{name}:t{i}");
            let (calls, status, sessions) = tokio::join!(
                client.list_panes(Some(&name)),
                client.pane_status(&by_title),
                client.list_sessions(),
            );
            assert_eq!(calls.unwrap()[0].id, pane.id);
            assert_eq!(status.unwrap().title, format!("t{i}"));
            assert!(sessions.unwrap().iter().any(|s| s.id == session.id));
            let (info, _) = client
                .wait_for_exit(&pane.id.to_string(), Some(DEADLINE))
                .await
                .unwrap();
            assert_eq!(info.exit.unwrap().code, Some(0));
            let text = wait_for_text(&client, &pane.id.to_string(), &format!("hello-{i}")).await;
            assert!(!text.contains(&format!("hello-{}", i + 1)) || i >= 199);
        })
    });
    for task in futures::future::join_all(tasks).await {
        task.unwrap();
    }
    println!("200 concurrent mixed clients done in {:?}", started.elapsed());
    bystander(&daemon).await;
}

/// A pane printing as fast as it can, with an attached client that never reads:
/// the pane keeps draining, others read it, memory stays bounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flooding_pane_with_a_stalled_attached_client() {
    let daemon = Daemon::start();
    let client = daemon.client().await;
    session_with(&client, "s").await;
    let spec = fugue_tests::sh_spec("s", "head -c 200000000 /dev/zero | tr '\\0' 'y' | fold -w 100");
    let pane = client.create_pane(spec).await.unwrap().id.to_string();
    let base = rss_kib(daemon.pid());
    let mut stalled = RawConnection::welcomed(&daemon);
    stalled.send(ClientFrame::Request {
        id: 1,
        request: Request::Attach(rq::Attach {
            pane: pane.clone(),
            read_only: true,
            size: None,
        }),
    });
    // The pane is drained to its end although the attached client reads nothing.
    let (info, exited) = client
        .wait_for_exit(&pane, Some(Duration::from_secs(60)))
        .await
        .unwrap();
    assert!(exited, "the flood did not finish: {info:?}");
    let read = client
        .read_output(
            &pane,
            fugue_client::protocol::ReadMode::Raw {
                since: None,
                max_bytes: Some(16),
            },
        )
        .await
        .unwrap();
    println!(
        "flood: {} bytes drained past a stalled attached client",
        read.next_offset
    );
    assert!(read.next_offset >= 200_000_000);
    rss_growth(&daemon, base, "200 MB flood with a stalled attached client", 96);
    bystander(&daemon).await;
}

/// Pastes: a huge one through the client (split), an oversize request refused, an
/// oversize frame refused, and the pane still takes input after all of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_pastes_are_split_or_refused() {
    let daemon = Daemon::start();
    let client = daemon.client().await;
    session_with(&client, "s").await;
    let spec = fugue_tests::sh_spec("s", "stty -echo; wc -c; exec cat");
    let pane = client.create_pane(spec).await.unwrap().id.to_string();
    let base = rss_kib(daemon.pid());
    // 8 MiB through the client library: split into 1 MiB requests. Lines of 1 KiB,
    // so the terminal's canonical line buffer (4 KiB) takes them whole.
    let paste: Vec<u8> = std::iter::repeat_n([&[b'p'; 1023][..], b"\n"].concat(), 8 << 10)
        .flatten()
        .collect();
    client.write_input(&pane, &paste).await.unwrap();
    client.write_input(&pane, b"\x04").await.unwrap();
    wait_for_text(&client, &pane, "8388608").await;
    // One request over the limit, sent raw.
    let mut raw = RawConnection::welcomed(&daemon);
    let data = vec![b'q'; (1 << 20) + 1];
    let (_, message) = refused(raw.request(
        1,
        Request::WriteInput(rq::WriteInput {
            pane: pane.clone(),
            data,
            paste: true,
        }),
    ));
    assert!(
        message.contains("input of 1048577 bytes exceeds the maximum 1048576 per request"),
        "{message}"
    );
    // A frame over the client frame limit closes that connection only.
    let data = vec![b'q'; 3 << 20];
    let frame = ClientFrame::Request {
        id: 2,
        request: Request::WriteInput(rq::WriteInput {
            pane: pane.clone(),
            data,
            paste: false,
        }),
    };
    // The daemon refuses on the length prefix and closes, so the rest of the write fails.
    let _ = raw
        .stream
        .write_all(&fugue_client::protocol::codec::encode_frame(&frame).unwrap());
    match raw.recv() {
        Some(ServerFrame::Fatal(reply)) => assert_eq!(reply.code, ErrorCode::FrameTooLarge),
        other => panic!("expected a fatal frame, got {other:?}"),
    }
    client.write_input(&pane, b"still here\n").await.unwrap();
    wait_for_text(&client, &pane, "still here").await;
    rss_growth(&daemon, base, "8 MiB paste and refused oversize writes", 64);
}

/// Program output is untrusted input: endless CSI parameters, a 100 MB line, a
/// million OSC 8 links, a 10 MB title. The daemon keeps every bound and the pane
/// stays readable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn program_output_floods_stay_bounded() {
    let daemon = Daemon::start();
    let client = daemon.client().await;
    session_with(&client, "s").await;
    let base = rss_kib(daemon.pid());
    let floods = [
        (
            "endless CSI parameters",
            r"printf '\033['; head -c 20000000 /dev/zero | tr '\0' ';'; printf 'm'",
        ),
        ("a 100 MB line", r"head -c 100000000 /dev/zero | tr '\0' a"),
        (
            "a million OSC 8 links",
            r"yes 'X' | head -n 1000000 | sed 's|X|\x1b]8;;http://h/\x1b\\L\x1b]8;;\x1b\\|' | tr -d '\n'",
        ),
        (
            "a 10 MB title",
            r"printf '\033]0;'; head -c 10000000 /dev/zero | tr '\0' t; printf '\007'",
        ),
        (
            "an OSC that never ends",
            r"printf '\033]2;'; head -c 20000000 /dev/zero | tr '\0' u",
        ),
    ];
    for (what, script) in floods {
        let spec = fugue_tests::sh_spec("s", format!("{script}; printf '\\033\\\\\\r\\nflood-done\\r\\n'"));
        let started = Instant::now();
        let pane = client.create_pane(spec).await.unwrap().id.to_string();
        let (_, exited) = client
            .wait_for_exit(&pane, Some(Duration::from_secs(90)))
            .await
            .unwrap();
        // Each step's time goes to the log, so a failure on a slow machine says
        // which step was slow.
        println!("{what}: exited after {:?}", started.elapsed());
        assert!(exited, "{what}: did not finish in 90 s");
        let capture = client
            .capture(
                &pane,
                fugue_client::protocol::CaptureWhat::All,
                (None, None),
                true,
                true,
            )
            .await
            .unwrap();
        assert!(
            capture.title.chars().count() <= 256,
            "{what}: title of {} chars",
            capture.title.chars().count()
        );
        fugue_tests::wait_for_screen(&client, &pane, "flood-done").await;
        println!("{what}: shown after {:?}", started.elapsed());
        let status = client.agent_status(&pane).await.unwrap();
        assert_eq!(status.state.as_str(), "exited", "{what}");
        rss_growth(&daemon, base, what, 160);
        client.release_pane(&pane).await.unwrap();
    }
    bystander(&daemon).await;
}

/// SIGKILL leaves a stale socket; a new daemon on the same path takes it over,
/// and brings back the sessions the killed one had recorded.
#[tokio::test]
async fn sigkill_then_restart_on_the_same_socket() {
    let mut daemon = Daemon::start();
    let client = daemon.client().await;
    session_with(&client, "before").await;
    // Records are written off the request path: wait until this one is on disk.
    let db = daemon.state_db();
    fugue_tests::files::until_recorded(&db, "the session in the records", |records| {
        let n: i64 = records
            .query_row("SELECT count(*) FROM sessions WHERE name = 'before'", [], |r| r.get(0))
            .ok()?;
        (n == 1).then_some(())
    })
    .await;
    let status = daemon.signal_and_wait(libc::SIGKILL);
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGKILL)
    );
    assert!(daemon.socket.exists(), "a killed daemon leaves its socket");
    daemon.restart(&[]);
    let took = bystander(&daemon).await;
    println!("restart after SIGKILL: answered in {took:?}");
    let client = daemon.client().await;
    let names = daemon.session_names().await;
    assert_eq!(names, vec!["before".to_string()]);
    let status = client.daemon_status().await.unwrap();
    assert!(
        status.recovery.starts_with("restored 1 sessions"),
        "{}",
        status.recovery
    );
}

/// Another uid, both ways: the daemon refuses a client that is not its uid (even
/// one that got through the directory), and the client refuses a server that is
/// not its uid or lives in a directory that is not its own. Needs root (CI runs
/// as root); says so and skips otherwise.
#[tokio::test]
async fn foreign_uids_are_refused_both_ways() {
    fugue_tests::require!("python3");
    if !rustix::process::geteuid().is_root() {
        println!("SKIPPED foreign_uids_are_refused_both_ways: needs root to act as another uid");
        return;
    }
    let nobody = 65534;
    // A client with effective uid `nobody` that keeps root's file access (fsuid 0),
    // so it reaches the private socket and only SO_PEERCRED tells it apart.
    let daemon = Daemon::start();
    let script = format!(
        r#"
import ctypes, os, socket, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
os.seteuid({nobody})
libc.setfsuid(0)
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
try:
    s.connect({socket:?})
    s.sendall(struct.pack(">I", 16) + bytes(16))
    data = s.recv(4096)
except (ConnectionResetError, BrokenPipeError):
    data = b""
print("closed" if not data else "answered", os.geteuid())
"#,
        socket = daemon.socket.display().to_string(),
    );
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(&script)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.trim(),
        format!("closed {nobody}"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    daemon.until_logged_async("refused connection from another user").await;
    bystander(&daemon).await;

    // A fake server run by `nobody` in a directory `nobody` owns: the client checks
    // the directory first and sends nothing.
    let dir = fugue_tests::private_dir();
    let foreign = dir.path().join("foreign");
    std::fs::create_dir(&foreign).unwrap();
    std::os::unix::fs::chown(&foreign, Some(nobody), Some(nobody)).unwrap();
    let out = fugue_tests::cli(&foreign.join("fugue.sock"), &dir, &["ls"]);
    assert!(
        out.stderr.contains("is owned by uid 65534, not by you (uid 0)"),
        "{}",
        out.stderr
    );

    // A server that runs as `nobody` in our own private directory: the client checks
    // the peer's uid before it sends a byte.
    let ours = dir.path().join("ours");
    std::fs::create_dir(&ours).unwrap();
    std::fs::set_permissions(&ours, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let fake = ours.join("fugue.sock");
    let server = format!(
        r#"
import ctypes, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
os.seteuid({nobody})
libc.setfsuid(0)
s = socket.socket(socket.AF_UNIX)
s.bind({fake:?})
s.listen(1)
print("ready", flush=True)
c, _ = s.accept()
c.settimeout(5)
try:
    data = c.recv(4096)
except Exception:
    data = b""
print("received", len(data), flush=True)
"#,
        fake = fake.display().to_string(),
    );
    let mut child = std::process::Command::new("python3")
        .arg("-c")
        .arg(&server)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
    assert_eq!(line.trim(), "ready");
    let out = fugue_tests::cli(&fake, &dir, &["ls"]);
    assert!(
        out.stderr.contains("runs as uid 65534, not as you (uid 0)"),
        "{}",
        out.stderr
    );
    line.clear();
    std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
    assert_eq!(line.trim(), "received 0", "the client sent bytes to a foreign server");
    let _ = child.wait();
}

/// `fugue agent-event` runs inside an agent's hooks: whatever it is given, it
/// must not get in the agent's way (nothing on stdout, which agents read as the
/// hook's answer; exit 0), and say on stderr what was wrong. A good report
/// becomes the agent's state, from the hook.
#[tokio::test]
async fn agent_event_never_gets_in_the_agents_way() {
    use fugue_client::protocol::{AgentState, StateSource};
    use std::io::Write;
    let daemon = Daemon::start();
    let claude = daemon.fake_claude();
    let client = daemon.client().await;
    client.create_session("hooks", None, vec![]).await.unwrap();
    let mut spec = fugue_client::protocol::SpawnSpec::new("hooks");
    spec.command = Some(claude);
    spec.shell = false;
    let info = client.create_pane(spec).await.unwrap();
    let pane = info.id.to_string();
    let token = fugue_tests::pane_token(info.pid);
    let run = |pane: Option<&str>, input: &[u8]| {
        let mut command = std::process::Command::new(fugue_tests::bin("fugue"));
        command
            .args(["agent-event", "--agent", "claude"])
            .env("FUGUE_SOCKET", &daemon.socket)
            .env_remove("FUGUE_PANE")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        if let Some(pane) = pane {
            command.env("FUGUE_PANE", pane).env("FUGUE_PANE_TOKEN", &token);
        }
        let mut child = command.spawn().unwrap();
        child.stdin.take().unwrap().write_all(input).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{out:?}");
        assert!(out.stdout.is_empty(), "{out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let stop = br#"{"session_id":"5ee3a1c0-7e20-4914-9820-0e431ad2b001","hook_event_name":"Stop"}"#;
    // Outside a fugue pane: nothing at all, but its input is read (an agent
    // writing into a pipe nobody reads gets EPIPE), even a large one.
    assert_eq!(run(None, stop), "");
    assert_eq!(run(None, &vec![b' '; 4 << 20]), "");
    assert!(run(Some(&pane), b"\xff not json").contains("not JSON"));
    assert!(run(Some(&pane), b"{}").contains("hook_event_name"));
    let long = format!(r#"{{"hook_event_name":"{}"}}"#, "x".repeat(10_000));
    assert_eq!(run(Some(&pane), long.as_bytes()), "");
    assert!(run(Some("no-such-pane"), stop).contains("no-such-pane"));
    // A real report: the agent is idle, by its hook, and its session recorded.
    assert_eq!(run(Some(&pane), stop), "");
    let status = client.agent_status(&pane).await.unwrap();
    assert_eq!(
        (status.state, status.source),
        (AgentState::Idle, StateSource::Hook),
        "{status:?}"
    );
    assert_eq!(
        status.session_id.as_deref(),
        Some("5ee3a1c0-7e20-4914-9820-0e431ad2b001")
    );
    let recorded = daemon.agent_session(&pane).await;
    assert_eq!(recorded.id, "5ee3a1c0-7e20-4914-9820-0e431ad2b001");
    // A hook that changes the state without any output still ends a wait on it.
    let waiting = {
        let client = daemon.client().await;
        let pane = pane.clone();
        let until = fugue_client::protocol::WaitUntil {
            agent_states: vec![AgentState::Busy],
            ..Default::default()
        };
        tokio::spawn(async move { client.wait_for(&pane, until, DEADLINE).await })
    };
    // (A hook process takes milliseconds to start; the wait is in place by then.)
    assert_eq!(client.agent_status(&pane).await.unwrap().state, AgentState::Idle);
    assert!(!waiting.is_finished());
    let submit =
        br#"{"session_id":"5ee3a1c0-7e20-4914-9820-0e431ad2b001","hook_event_name":"UserPromptSubmit","prompt":"go"}"#;
    assert_eq!(run(Some(&pane), submit), "");
    let outcome = waiting.await.unwrap().unwrap();
    assert_eq!(
        outcome.condition,
        fugue_client::protocol::WaitCondition::AgentState,
        "{outcome:?}"
    );
}
