//! The wire: concurrency on one and many connections, hostile bytes, handshakes.

use bytes::BytesMut;
use fugue_client::protocol::codec::FrameCodec;
use fugue_client::protocol::{
    ClientFrame, ErrorCode, Hello, Request, Response, ServerFrame, SpawnSpec, PROTOCOL_VERSION,
};
use fugue_client::Client;
use fugue_protocol::requests as rq;
use fugue_tests::{Daemon, RawConnection as Raw, DEADLINE};
use std::io::{Read, Write};
use std::time::Duration;
use tokio_util::codec::{Decoder, Encoder};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_clients_at_once_each_get_their_own_replies() {
    let daemon = Daemon::start();
    let tasks = (0..20).map(|i| {
        let socket = daemon.socket.clone();
        tokio::spawn(async move {
            let client = Client::connect(fugue_client::ConnectOptions::default().socket(&socket).autostart(false))
                .await
                .unwrap();
            let name = format!("client{i}");
            let created = client.create_session(&name, None, vec![]).await.unwrap();
            assert_eq!(created.name, name);
            let mut spec = SpawnSpec::new(&name);
            spec.command = Some("echo".into());
            spec.args = vec![format!("from-{i}")];
            spec.shell = false;
            let pane = client.create_pane(spec).await.unwrap();
            assert_eq!(pane.session_name, name);
            let (info, _) = client
                .wait_for_exit(&pane.id.to_string(), Some(DEADLINE))
                .await
                .unwrap();
            assert_eq!(info.id, pane.id);
            let out = client
                .read_output(
                    &pane.id.to_string(),
                    fugue_client::protocol::ReadMode::Text { lines: 10, since: None },
                )
                .await
                .unwrap();
            assert_eq!(out.lines, vec![format!("from-{i}")]);
        })
    });
    for task in futures::future::join_all(tasks).await {
        task.unwrap();
    }
    let client = daemon.client().await;
    assert_eq!(client.list_sessions().await.unwrap().len(), 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_requests_in_flight_on_one_connection_are_matched_by_id() {
    let daemon = Daemon::start();
    let client = daemon.client().await;
    let mut names = Vec::new();
    for i in 0..10 {
        names.push(
            client
                .create_session(&format!("s{i}"), None, vec![])
                .await
                .unwrap()
                .name,
        );
    }
    // A slow request first: the fast ones must not wait behind it.
    let mut spec = SpawnSpec::new("s0");
    spec.command = Some("cat".into());
    spec.shell = false;
    let cat = client.create_pane(spec).await.unwrap().id.to_string();
    let slow = {
        let client = client.clone();
        let cat = cat.clone();
        tokio::spawn(async move { client.wait_for_exit(&cat, Some(Duration::from_secs(30))).await })
    };
    let calls = (0..200).map(|i| {
        let client = client.clone();
        let name = names[i % 10].clone();
        async move {
            let panes = client.list_panes(Some(&name)).await.unwrap();
            let resolved = client.rename_session(&name, &name).await.unwrap().0;
            (name, panes, resolved)
        }
    });
    for (name, panes, resolved) in futures::future::join_all(calls).await {
        assert_eq!(resolved.name, name);
        assert!(panes.iter().all(|p| p.session_name == name));
    }
    assert!(
        !slow.is_finished(),
        "the wait is still pending while 400 other requests were answered"
    );
    client.kill_pane(&cat, Some("KILL")).await.unwrap();
    let (info, exited) = slow.await.unwrap().unwrap();
    assert!(exited && info.exit.unwrap().signal == Some(libc::SIGKILL));
}

#[tokio::test]
async fn garbage_oversize_and_half_frames_affect_only_their_connection() {
    let daemon = Daemon::start();
    let good = daemon.client().await;

    // Garbage before any handshake: its first 4 bytes read as a huge length.
    let mut garbage = Raw::connect(&daemon);
    garbage.stream.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    match garbage.recv() {
        Some(ServerFrame::Fatal(reply)) => assert_eq!(reply.code, ErrorCode::FrameTooLarge),
        other => panic!("expected a fatal error, got {other:?}"),
    }
    assert!(garbage.recv().is_none(), "the daemon closes the connection");

    // An oversize frame after a good handshake.
    let mut oversize = Raw::connect(&daemon);
    assert!(matches!(oversize.hello(PROTOCOL_VERSION), ServerFrame::Welcome(_)));
    oversize.stream.write_all(&(64u32 << 20).to_be_bytes()).unwrap();
    match oversize.recv() {
        Some(ServerFrame::Fatal(reply)) => {
            assert_eq!(reply.code, ErrorCode::FrameTooLarge);
            // Refused from the length prefix alone: the client's limit, not the reply limit.
            assert!(
                reply.message.contains("67108864 bytes exceeds the maximum 2097152"),
                "{}",
                reply.message
            );
        }
        other => panic!("expected a fatal error, got {other:?}"),
    }

    // A well-framed payload that is not a message.
    let mut malformed = Raw::connect(&daemon);
    malformed.hello(PROTOCOL_VERSION);
    malformed.stream.write_all(&[0, 0, 0, 3, 0xff, 0xff, 0xff]).unwrap();
    assert!(matches!(malformed.recv(), Some(ServerFrame::Fatal(r)) if r.code == ErrorCode::MalformedFrame));

    // Half a frame, then silence: held open while others work.
    let mut half = Raw::connect(&daemon);
    half.hello(PROTOCOL_VERSION);
    half.stream.write_all(&[0, 0, 1, 0, 1, 2, 3]).unwrap();

    // A client that vanishes mid-request.
    let mut vanish = Raw::connect(&daemon);
    vanish.hello(PROTOCOL_VERSION);
    vanish.send(ClientFrame::Request {
        id: 1,
        request: Request::ListSessions(rq::ListSessions {}),
    });
    drop(vanish);

    good.create_session("still-fine", None, vec![]).await.unwrap();
    assert_eq!(good.list_sessions().await.unwrap()[0].name, "still-fine");
    let other = daemon.client().await;
    other.ping().await.unwrap();
    drop(half);
    other.ping().await.unwrap();
}

#[test]
fn a_request_before_hello_and_a_second_hello_are_refused() {
    let daemon = Daemon::start();
    let mut early = Raw::connect(&daemon);
    early.send(ClientFrame::Request {
        id: 1,
        request: Request::Ping(rq::Ping {}),
    });
    assert!(matches!(early.recv(), Some(ServerFrame::Fatal(r)) if r.message.contains("first frame must be Hello")));

    let mut twice = Raw::connect(&daemon);
    twice.hello(PROTOCOL_VERSION);
    twice.send(ClientFrame::Request {
        id: 9,
        request: Request::Ping(rq::Ping {}),
    });
    assert!(matches!(
        twice.recv(),
        Some(ServerFrame::Reply {
            id: 9,
            result: Ok(Response::Ping(()))
        })
    ));
    twice.send(ClientFrame::Hello(Hello {
        protocol_version: PROTOCOL_VERSION,
        client_name: "x".into(),
        client_version: "0".into(),
        revision: 0,
    }));
    assert!(matches!(twice.recv(), Some(ServerFrame::Fatal(r)) if r.message.contains("Hello sent twice")));
}

#[test]
fn a_protocol_mismatch_names_both_versions() {
    let daemon = Daemon::start();
    let mut raw = Raw::connect(&daemon);
    match raw.hello(PROTOCOL_VERSION + 1) {
        ServerFrame::Fatal(reply) => {
            assert_eq!(reply.code, ErrorCode::ProtocolMismatch);
            let expected = format!("client raw 0 speaks protocol {}, daemon fugued", PROTOCOL_VERSION + 1);
            assert!(reply.message.contains(&expected), "{}", reply.message);
            assert!(
                reply.message.contains(&format!("speaks protocol {PROTOCOL_VERSION}")),
                "{}",
                reply.message
            );
        }
        other => panic!("expected a mismatch, got {other:?}"),
    }
    assert!(raw.recv().is_none());
}

/// A request from a newer client (a tag this daemon does not know) gets a typed
/// answer naming the tag and the daemon's version; the connection goes on. So
/// does a known request whose fields do not decode.
#[test]
fn an_unknown_request_is_answered_and_the_connection_goes_on() {
    let daemon = Daemon::start();
    let mut raw = Raw::welcomed(&daemon);
    // Frame kind 1 (a request), id 5, tag 250, then fields no build can read.
    raw.send_payload(&[1, 5, 250, 3, 1, 2, 3]);
    match raw.recv() {
        Some(ServerFrame::Reply {
            id: 5,
            result: Err(reply),
        }) => {
            assert_eq!(reply.code, ErrorCode::UnsupportedRequest);
            assert!(reply.message.contains("request tag 250"), "{}", reply.message);
            assert!(
                reply.message.contains(&format!("fugued {}", env!("CARGO_PKG_VERSION"))),
                "{}",
                reply.message
            );
            assert!(reply.message.contains("fugue daemon upgrade"), "{}", reply.message);
        }
        other => panic!("expected an unsupported_request reply, got {other:?}"),
    }
    // A retired request (RecordPromptReceipt, which let a client write the
    // receipt others read): refused, nothing recorded.
    raw.send_payload(&[1, 4, 34, 1, b'1', 1, b'k', 1, b'x']);
    match raw.recv() {
        Some(ServerFrame::Reply {
            id: 4,
            result: Err(reply),
        }) => {
            assert_eq!(reply.code, ErrorCode::UnsupportedRequest);
            assert!(reply.message.contains("tag 34: it was retired"), "{}", reply.message);
        }
        other => panic!("expected a retired-request reply, got {other:?}"),
    }
    // Grep's tag with a truncated body: refused by name, nothing else happens.
    raw.send_payload(&[1, 6, 36, 1]);
    match raw.recv() {
        Some(ServerFrame::Reply {
            id: 6,
            result: Err(reply),
        }) => {
            assert_eq!(reply.code, ErrorCode::MalformedFrame);
            assert!(reply.message.contains("Grep"), "{}", reply.message);
        }
        other => panic!("expected a malformed-request reply, got {other:?}"),
    }
    assert!(matches!(
        raw.request(7, Request::Ping(rq::Ping {})),
        Some(ServerFrame::Reply {
            id: 7,
            result: Ok(Response::Ping(()))
        })
    ));
}

/// The Welcome says which requests the daemon answers and its revision; a
/// generation-9 client's three-field Hello still gets a clear mismatch.
#[test]
fn the_handshake_carries_revisions_and_old_clients_hear_a_mismatch() {
    let daemon = Daemon::start();
    let mut raw = Raw::connect(&daemon);
    match raw.hello(PROTOCOL_VERSION) {
        ServerFrame::Welcome(welcome) => {
            assert_eq!(welcome.revision, fugue_client::protocol::PROTOCOL_REVISION);
            let tags: Vec<u32> = rq::TABLE.iter().map(|e| e.tag).collect();
            assert_eq!(welcome.requests, tags);
        }
        other => panic!("expected Welcome, got {other:?}"),
    }
    let mut old = Raw::connect(&daemon);
    let mut payload = vec![0u8];
    payload.extend(fugue_client::protocol::codec::encode(&(9u32, "fugue".to_string(), "0.9.0".to_string())).unwrap());
    old.send_payload(&payload);
    match old.recv() {
        Some(ServerFrame::Fatal(reply)) => {
            assert_eq!(reply.code, ErrorCode::ProtocolMismatch);
            assert!(reply.message.contains("speaks protocol 9,"), "{}", reply.message);
        }
        other => panic!("expected a mismatch, got {other:?}"),
    }
}

/// A daemon one compatible step behind: it welcomes this client but does not
/// list Grep. The client refuses before sending, and the CLI says what to do.
#[test]
fn a_request_an_older_daemon_lacks_is_named_with_the_fix() {
    let dir = fugue_tests::private_dir();
    let socket = dir.path().join("older.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let server = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut raw = Raw::from_stream(stream);
        let mut codec = FrameCodec::<ServerFrame, ClientFrame>::new();
        let mut buf = BytesMut::new();
        let mut chunk = [0u8; 1024];
        loop {
            let n = raw.stream.read(&mut chunk).unwrap();
            buf.extend_from_slice(&chunk[..n]);
            if let Some(ClientFrame::Hello(_)) = codec.decode(&mut buf).unwrap() {
                break;
            }
        }
        let welcome = fugue_client::protocol::Welcome {
            protocol_version: PROTOCOL_VERSION,
            daemon_version: "9.8.7".into(),
            pid: 1,
            revision: 0,
            requests: rq::TABLE
                .iter()
                .map(|e| e.tag)
                .filter(|tag| *tag != <rq::Grep as fugue_client::protocol::Rpc>::TAG)
                .collect(),
        };
        let mut out = BytesMut::new();
        codec.encode(ServerFrame::Welcome(welcome), &mut out).unwrap();
        raw.stream.write_all(&out).unwrap();
        // Nothing else may arrive: the client refuses Grep itself.
        let mut rest = Vec::new();
        let _ = raw.stream.read_to_end(&mut rest);
        rest
    });
    let out = fugue_tests::cli(&socket, &dir, &["grep", "x"]);
    let sent_after_hello = server.join().unwrap();
    let err = out.err();
    assert!(
        err.contains("fugued 9.8.7 does not support Grep") && err.contains("upgrade it with `fugue daemon upgrade`"),
        "{err}"
    );
    assert!(sent_after_hello.is_empty(), "the client sent {sent_after_hello:?}");
}

/// The CLI side of a mismatch: a stand-in daemon that refuses every Hello the way
/// fugued does; the CLI must print the message and exit non-zero.
#[test]
fn the_cli_prints_a_mismatch_and_fails() {
    let dir = fugue_tests::private_dir();
    let socket = dir.path().join("old.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let server = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut raw = Raw::from_stream(stream);
        let mut reply_codec = FrameCodec::<ServerFrame, ClientFrame>::new();
        let mut buf = BytesMut::new();
        let mut chunk = [0u8; 1024];
        let hello = loop {
            let n = raw.stream.read(&mut chunk).unwrap();
            buf.extend_from_slice(&chunk[..n]);
            if let Some(ClientFrame::Hello(hello)) = reply_codec.decode(&mut buf).unwrap() {
                break hello;
            }
        };
        let message = format!(
            "protocol mismatch: client speaks protocol {}, daemon fugued 9.9.9 speaks protocol 99",
            hello.protocol_version
        );
        let mut out = BytesMut::new();
        reply_codec
            .encode(
                ServerFrame::Fatal(fugue_client::protocol::ErrorReply::new(
                    ErrorCode::ProtocolMismatch,
                    message,
                )),
                &mut out,
            )
            .unwrap();
        raw.stream.write_all(&out).unwrap();
    });
    let out = fugue_tests::cli(&socket, &dir, &["ls"]);
    server.join().unwrap();
    let err = out.err();
    assert!(
        err.starts_with("fugue: protocol mismatch:") && err.contains("speaks protocol 99"),
        "{err}"
    );
}

/// A burst: 1000 clients connect at once and each says Hello 50 ms later (every
/// agent's MCP bridge after a reboot). Every one is welcomed; before, past 128
/// connections in their handshake each newcomer cut the oldest, however new.
#[test]
fn a_burst_of_a_thousand_clients_is_welcomed() {
    const CLIENTS: usize = 1000;
    // The test's own descriptors: 1000 sockets besides what it holds already.
    use rustix::process::{getrlimit, setrlimit, Resource};
    let mut limit = getrlimit(Resource::Nofile);
    limit.current = limit.maximum;
    setrlimit(Resource::Nofile, limit).expect("raise the open-file limit");
    let daemon = Daemon::start();
    let mut connections: Vec<Raw> = (0..CLIENTS)
        .map(|n| {
            let stream = std::os::unix::net::UnixStream::connect(&daemon.socket)
                .unwrap_or_else(|e| panic!("connection {n}: {e}"));
            Raw::from_stream(stream)
        })
        .collect();
    // The clients' own pause before their Hello (the scenario, not a wait on
    // the daemon): long enough for every connection to be in its handshake.
    // Paced: the clients' pause before their Hello is the scenario.
    std::thread::sleep(Duration::from_millis(50));
    let hello = fugue_client::protocol::codec::encode_frame(&ClientFrame::Hello(Hello {
        protocol_version: PROTOCOL_VERSION,
        client_name: "burst".into(),
        client_version: "0".into(),
        revision: 0,
    }))
    .unwrap();
    for raw in &mut connections {
        // A connection the daemon already closed is counted below, not here.
        let _ = raw.stream.write_all(&hello);
    }
    let welcomed = connections
        .iter_mut()
        .map(|raw| raw.recv())
        .filter(|answer| matches!(answer, Some(ServerFrame::Welcome(_))))
        .count();
    println!("{welcomed} of {CLIENTS} clients that said Hello 50 ms after connecting were welcomed");
    assert_eq!(welcomed, CLIENTS);
    // And they all work.
    for (n, raw) in connections.iter_mut().enumerate().step_by(97) {
        assert!(
            matches!(
                raw.request(1, Request::Ping(rq::Ping {})),
                Some(ServerFrame::Reply {
                    result: Ok(Response::Ping(())),
                    ..
                })
            ),
            "client {n}"
        );
    }
}
