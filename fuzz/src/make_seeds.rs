//! Writes seed inputs for the fuzz targets into `corpus/<target>/`: real frames of
//! every kind, and program output that exercises the emulator's busiest paths.

use fugue_protocol::codec::{encode, encode_frame};
use fugue_protocol::requests as rq;
use fugue_protocol::*;
use std::path::Path;

fn write(target: &str, name: &str, data: &[u8]) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus").join(target);
    std::fs::create_dir_all(&dir).expect("corpus dir");
    std::fs::write(dir.join(name), data).expect("seed");
}

fn requests() -> Vec<Request> {
    let mut spec = SpawnSpec::new("dev");
    spec.command = Some("echo".into());
    spec.args = vec!["hi".into()];
    spec.title = Some("build".into());
    spec.size = Some(PaneSize { cols: 80, rows: 24 });
    spec.env = vec![EnvVar {
        name: "A".into(),
        value: "1".into(),
    }];
    vec![
        Request::Ping(rq::Ping {}),
        Request::CreateSession(rq::CreateSession {
            name: "dev".into(),
            cwd: Some("/tmp".into()),
            env: vec![],
        }),
        Request::CreatePane(rq::CreatePane { spec }),
        Request::SendKeys(rq::SendKeys {
            pane: "dev:0".into(),
            keys: vec!["C-M-a".into(), "Enter".into(), "F5".into()],
        }),
        Request::WriteInput(rq::WriteInput {
            pane: "abcd".into(),
            data: b"ls\r".to_vec(),
            paste: true,
        }),
        Request::ResizePane(rq::ResizePane {
            pane: "dev:build".into(),
            size: PaneSize { cols: 200, rows: 50 },
        }),
        Request::RenamePane(rq::RenamePane {
            pane: "dev:1".into(),
            title: "tests".into(),
        }),
        Request::ReorderPanes(rq::ReorderPanes {
            session: "dev".into(),
            panes: vec!["dev:1".into(), "dev:0".into()],
        }),
        Request::ReadOutput(rq::ReadOutput {
            pane: "dev:0".into(),
            mode: ReadMode::Text {
                lines: 10,
                since: Some(5),
            },
        }),
        Request::Capture(rq::Capture {
            pane: "dev:0".into(),
            what: CaptureWhat::All,
            start: Some(-5),
            end: None,
            ansi: true,
            join_wrapped: true,
        }),
        Request::WaitFor(rq::WaitFor {
            pane: "dev:0".into(),
            until: WaitUntil {
                pattern: Some("ready|done [0-9]+".into()),
                idle_ms: Some(500),
                ..Default::default()
            },
            timeout_ms: 1000,
        }),
        Request::Attach(rq::Attach {
            pane: "dev:0".into(),
            read_only: false,
            size: Some(PaneSize { cols: 80, rows: 24 }),
        }),
    ]
}

fn main() {
    let hello = ClientFrame::Hello(Hello {
        protocol_version: PROTOCOL_VERSION,
        client_name: "fuzz".into(),
        client_version: "0".into(),
        revision: 0,
    });
    let mut stream = vec![7u8];
    stream.extend(encode_frame(&hello).expect("hello"));
    for (i, request) in requests().into_iter().enumerate() {
        let frame = ClientFrame::Request { id: i as u64, request };
        let framed = encode_frame(&frame).expect("frame");
        stream.extend(&framed);
        write(
            "frame_decoder",
            &format!("request-{i}"),
            &[&[0u8][..], &framed].concat(),
        );
        write("requests", &format!("request-{i}"), &encode(&frame).expect("payload"));
    }
    write("frame_decoder", "stream", &stream);
    write("requests", "hello", &encode(&hello).expect("hello"));
    let event = ServerFrame::Event(Event::Output {
        pane: PaneId::new(),
        data: b"\x1b[31mhi\x1b[0m\r\n".to_vec(),
    });
    write(
        "frame_decoder",
        "event",
        &[&[3u8][..], &encode_frame(&event).expect("event")].concat(),
    );

    let outputs: [(&str, &[u8]); 8] = [
        (
            "shell",
            b"\x50$ ls\r\nCargo.toml  README.md\r\n\x1b[01;34mtarget\x1b[0m\r\n$ ",
        ),
        (
            "fullscreen",
            b"\xd8\x1b[?1049h\x1b[H\x1b[2J\x1b[?1h\x1b[1;24r\x1b[7mstatus\x1b[m\x1b[24;1H~\x1b[?1049l",
        ),
        (
            "queries",
            b"\x10ab\x1b[6n\x1b[c\x1b[>c\x1b]10;?\x07\x1b]11;?\x1b\\\x1b[14t",
        ),
        (
            "title_and_links",
            b"\x20\x1b]0;my title\x07\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\\r\n",
        ),
        (
            "wide_and_combining",
            "\x0c中文 e\u{301} 😀\t|\r\n\u{9b}2J\u{202e}rtl".as_bytes(),
        ),
        (
            "claude_waiting",
            "\x40╭──────╮\r\n│ Do you want to proceed?\r\n│ ❯ 1. Yes\r\n│   3. No, and tell Claude (esc)\r\n"
                .as_bytes(),
        ),
        ("scroll_burst", &[b'\x05'; 1]),
        (
            "split_sequences",
            b"\x30\x1b[3\xff1mred\x1b\xff]0;t\xff\x07\xe4\xb8\xff\xad\r\n",
        ),
    ];
    for (name, data) in outputs {
        let mut data = data.to_vec();
        if name == "scroll_burst" {
            for i in 0..300 {
                data.extend(format!("line {i}\r\n").as_bytes());
            }
        }
        write("output_path", name, &data);
    }

    // Plain lines (the screen's fast path), with what must stop it in between,
    // cut into reads by 0xff bytes. The first byte is the screen's shape.
    let mut build = vec![0x4a];
    for i in 0..400 {
        build.extend(format!("\x1b[32mok\x1b[m test {i} {}\r\n", "x".repeat(i % 23)).as_bytes());
        match i % 50 {
            7 => build.push(0xff),
            13 => build.extend(b"\x1b[2A\x1b[K"),
            21 => build.extend(b"\x1b[2;5r"),
            22 => build.extend(b"\x1b[r\x1b[?1049h\x1b[Hfull\x1b[?1049l"),
            29 => build.extend(b"\x1b(0qq\x1b(B\x1b[4hins\x1b[4l\x1b[?7lno wrap\x1b[?7h\r\n"),
            31 => build.extend(b"x\x1b[3b\t\xe4\xb8\xad\n\r"),
            37 => build.extend(b"\x1b[?2026hframe\r\n\x1b[?2026l\x1b[2J\x1b[3"),
            _ => {}
        }
    }
    write("plain_lines", "build", &build);
    let mut lines = vec![0xe3];
    for i in 0..2000 {
        lines.extend(format!("{i}\r\n").as_bytes());
    }
    write("plain_lines", "lines", &lines);
}
