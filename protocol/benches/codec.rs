//! Codec round trips: what every request and reply pays.

use bytes::BytesMut;
use fugue_protocol::codec::FrameCodec;
use fugue_protocol::*;
use tokio_util::codec::{Decoder, Encoder};

fn main() {
    divan::main();
}

fn pane() -> PaneInfo {
    PaneInfo {
        id: PaneId::new(),
        session_id: SessionId::new(),
        session_name: "bench".into(),
        index: 3,
        title: "server".into(),
        purpose: "web dev server on 9100".into(),
        command: vec!["npm".into(), "run".into(), "dev".into()],
        shell: true,
        cwd: "/home/user/project".into(),
        state: PaneState::Running,
        pid: 4242,
        exit: None,
        size: PaneSize::default(),
        started_at_ms: 1_700_000_000_000,
        exited_at_ms: None,
        restart: Default::default(),
        restarts: 0,
        last_exit: None,
        agent_session: None,
        tmux: None,
    }
}

fn roundtrip(frame: ServerFrame) -> ServerFrame {
    let mut out = FrameCodec::<ServerFrame, ClientFrame>::new();
    let mut back = FrameCodec::<ClientFrame, ServerFrame>::new();
    let mut buf = BytesMut::new();
    out.encode(frame, &mut buf).unwrap();
    back.decode(&mut buf).unwrap().unwrap()
}

#[divan::bench]
fn request_ping(bencher: divan::Bencher) {
    bencher.bench(|| {
        let mut out = FrameCodec::<ClientFrame, ServerFrame>::new();
        let mut back = FrameCodec::<ServerFrame, ClientFrame>::new();
        let mut buf = BytesMut::new();
        out.encode(
            ClientFrame::Request {
                id: 7,
                request: Request::Ping(fugue_protocol::requests::Ping {}),
            },
            &mut buf,
        )
        .unwrap();
        back.decode(&mut buf).unwrap().unwrap()
    });
}

#[divan::bench]
fn reply_ten_panes(bencher: divan::Bencher) {
    let panes: Vec<PaneInfo> = (0..10).map(|_| pane()).collect();
    bencher.bench(|| {
        roundtrip(ServerFrame::Reply {
            id: 1,
            result: Ok(Response::ListPanes(panes.clone())),
        })
    });
}

#[divan::bench(args = [4096, 65536])]
fn output_event(bencher: divan::Bencher, size: usize) {
    let data = vec![b'x'; size];
    bencher.counter(divan::counter::BytesCount::new(size)).bench(|| {
        roundtrip(ServerFrame::Event(Event::Output {
            pane: PaneId::new(),
            data: data.clone(),
        }))
    });
}
