//! The screen model end to end: programs draw on real PTYs, captures show exactly
//! what a terminal would.

use fugue_client::protocol::{CaptureWhat, SpawnSpec};
use fugue_client::Client;
use fugue_tests::{wait_for, Daemon, DEADLINE};

fn spec(session: &str, script: &str, cols: u16, rows: u16) -> SpawnSpec {
    let mut spec = fugue_tests::sh_spec(session, script);
    spec.size = Some(fugue_client::protocol::PaneSize { cols, rows });
    spec
}

async fn start(daemon: &Daemon, script: &str, cols: u16, rows: u16) -> (Client, String) {
    let client = daemon.client().await;
    let _ = client.create_session("scr", None, vec![]).await;
    let pane = client.create_pane(spec("scr", script, cols, rows)).await.unwrap();
    (client, pane.id.to_string())
}

/// Waits until the visible screen contains `needle`.
async fn screen_with(client: &Client, pane: &str, needle: &str) -> fugue_client::protocol::CaptureResult {
    fugue_tests::wait_for_screen(client, pane, needle).await
}

#[tokio::test]
async fn cursor_addressing_captures_exactly() {
    let daemon = Daemon::start();
    let script =
        r#"printf '\033[2J\033[3;5Hhello\033[5;1H\033[1;32mgreen\033[0m\033[1;1Htop\033[2;7Hdone'; exec sleep 60"#;
    let (client, pane) = start(&daemon, script, 20, 6).await;
    let c = screen_with(&client, &pane, "done").await;
    assert_eq!(c.lines, vec!["top", "      done", "    hello", "", "green", ""]);
    assert_eq!((c.cursor_row, c.cursor_col), (1, 10));
    assert_eq!((c.size.cols, c.size.rows), (20, 6));
    assert!(!c.alternate_screen);
    let ansi = client
        .capture(&pane, CaptureWhat::Screen, (Some(4), Some(4)), true, false)
        .await
        .unwrap();
    assert_eq!(ansi.lines, vec!["\x1b[0;1;32mgreen\x1b[0m"]);
    // The CLI prints the same, and JSON carries the cursor.
    let out = daemon.cli(&["capture", &pane]).ok();
    assert_eq!(out, "top\n      done\n    hello\n\ngreen");
    let json = daemon.cli(&["--json", "capture", &pane]).json();
    assert_eq!(
        json["cursor"],
        serde_json::json!({"row": 1, "col": 10, "visible": true})
    );
    assert_eq!(json["alternate_screen"], false);
}

#[tokio::test]
async fn alternate_screen_on_and_off() {
    let daemon = Daemon::start();
    let script = r#"printf 'main screen\n'; read a; printf '\033[?1049h\033[Hin alt\033]0;alt-title\007'; read b; printf '\033[?1049l'; exec sleep 60"#;
    let (client, pane) = start(&daemon, script, 30, 5).await;
    screen_with(&client, &pane, "main screen").await;
    client.write_input(&pane, b"\r").await.unwrap();
    let alt = screen_with(&client, &pane, "in alt").await;
    assert!(alt.alternate_screen);
    assert_eq!(alt.title, "alt-title");
    assert!(!alt.lines.iter().any(|l| l.contains("main screen")));
    client.write_input(&pane, b"\r").await.unwrap();
    let back = screen_with(&client, &pane, "main screen").await;
    assert!(!back.alternate_screen);
    assert_eq!(back.lines[0], "main screen");
}

#[tokio::test]
async fn scrollback_ranges_reach_above_the_screen() {
    let daemon = Daemon::start();
    let (client, pane) = start(&daemon, "seq 1 100; printf end; exec sleep 60", 20, 10).await;
    let screen = screen_with(&client, &pane, "end").await;
    assert_eq!(screen.lines[0], "92");
    assert_eq!(screen.lines[9], "end");
    assert_eq!(screen.scrollback_lines, 91);
    let range = client
        .capture(&pane, CaptureWhat::Screen, (Some(-3), Some(1)), false, false)
        .await
        .unwrap();
    assert_eq!(range.lines, vec!["89", "90", "91", "92", "93"]);
    assert_eq!(range.first_line, -3);
    let all = client
        .capture(&pane, CaptureWhat::All, (None, None), false, false)
        .await
        .unwrap();
    assert_eq!(all.lines.len(), 101);
    assert_eq!(all.lines[0], "1");
    let history = client
        .capture(&pane, CaptureWhat::Scrollback, (None, None), false, false)
        .await
        .unwrap();
    assert_eq!(history.lines.len(), 91);
    assert_eq!(history.lines[90], "91");
    // The CLI's tmux-style numbers, '-' for the start.
    let out = daemon.cli(&["capture", &pane, "-S", "-", "-E", "-90"]).ok();
    assert_eq!(out, "1\n2");
    let out = daemon.cli(&["capture", &pane, "--scrollback"]).ok();
    assert_eq!(out.lines().count(), 101);
}

#[tokio::test]
async fn a_program_that_asks_for_the_cursor_position_gets_an_answer() {
    let daemon = Daemon::start();
    // Like Codex or vim at start-up: ask, and wait for the answer on stdin.
    let script = r#"stty -echo -icanon; printf 'abc\033[6n'; reply=$(dd bs=1 count=6 2>/dev/null); printf '\nreply=%s\n' "$(printf %s "$reply" | od -An -c | tr -s ' ')"; exec sleep 60"#;
    let (client, pane) = start(&daemon, script, 40, 5).await;
    let c = screen_with(&client, &pane, "reply=").await;
    assert!(c.lines[1].contains(r"reply= 033 [ 1 ; 4 R"), "{:?}", c.lines);
}

#[tokio::test]
async fn bracketed_paste_is_honoured() {
    let daemon = Daemon::start();
    let script =
        r#"stty -echo -icanon; printf '\033[?2004hready\n'; head -c 16 | od -An -c | tr -s ' '; exec sleep 60"#;
    let (client, pane) = start(&daemon, script, 60, 5).await;
    screen_with(&client, &pane, "ready").await;
    client.paste(&pane, b"abcd").await.unwrap();
    let c = screen_with(&client, &pane, "033").await;
    assert_eq!(c.lines[1], " 033 [ 2 0 0 ~ a b c d 033 [ 2 0 1 ~");
}

#[tokio::test]
async fn send_keys_follow_the_cursor_key_mode() {
    let daemon = Daemon::start();
    let script = r#"stty -echo -icanon; printf '\033[?1hready\n'; head -c 3 | od -An -c | tr -s ' '; exec sleep 60"#;
    let (client, pane) = start(&daemon, script, 60, 5).await;
    screen_with(&client, &pane, "ready").await;
    client.send_keys(&pane, &["Up".to_string()]).await.unwrap();
    let c = screen_with(&client, &pane, "033").await;
    assert_eq!(c.lines[1], " 033 O A");
}

#[tokio::test]
async fn attached_clients_get_redraw_output_title_bell_and_exit() {
    let daemon = Daemon::start();
    let script = r#"printf 'before\n'; read go; printf 'after\n\033]2;new title\007\007'; exit 5"#;
    let (client, pane) = start(&daemon, script, 30, 5).await;
    screen_with(&client, &pane, "before").await;
    let watcher = daemon.client().await;
    let mut events = watcher.events().unwrap();
    watcher.attach(&pane, true, None).await.unwrap();
    use fugue_client::protocol::Event;
    async fn next(events: &mut fugue_client::EventStream) -> Event {
        tokio::time::timeout(DEADLINE, events.recv())
            .await
            .expect("an event")
            .expect("open")
    }
    match next(&mut events).await {
        Event::Redraw { data, .. } => assert!(String::from_utf8_lossy(&data).contains("before")),
        other => panic!("expected a redraw first, got {other:?}"),
    }
    client.write_input(&pane, b"go\r").await.unwrap();
    let (mut output, mut title, mut bell, mut exit) = (Vec::new(), None, false, None);
    while exit.is_none() {
        match next(&mut events).await {
            Event::Output { data, .. } => output.extend(data),
            Event::Title { title: t, .. } => title = Some(t),
            Event::Bell { .. } => bell = true,
            Event::Exited { status, .. } => exit = Some(status),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(String::from_utf8_lossy(&output).contains("after"));
    assert_eq!(title.as_deref(), Some("new title"));
    assert!(bell);
    assert_eq!(exit.unwrap().code, Some(5));
    // A zero size is refused with a clear error.
    let err = watcher
        .client_resize(&pane, fugue_client::protocol::PaneSize { cols: 0, rows: 3 })
        .await
        .unwrap_err();
    assert!(err.to_string().contains("the minimum is 2x1"), "{err}");
}

#[tokio::test]
async fn size_policy_decides_between_attached_clients() {
    use fugue_client::protocol::{PaneSize, SizePolicy};
    let daemon = Daemon::start();
    let (client, pane) = start(&daemon, "exec sleep 60", 80, 24).await;
    let small = daemon.client().await;
    let big = daemon.client().await;
    let size = |c, r| Some(PaneSize { cols: c, rows: r });
    let current = || async { client.pane_status(&pane).await.unwrap().size };
    small.attach(&pane, false, size(60, 20)).await.unwrap();
    assert_eq!(current().await, PaneSize { cols: 60, rows: 20 });
    big.attach(&pane, false, size(100, 30)).await.unwrap();
    assert_eq!(
        current().await,
        PaneSize { cols: 100, rows: 30 },
        "latest: the last to attach decides"
    );
    small.write_input(&pane, b"x").await.unwrap();
    // Polled: a pane's size change is not an event fugued pushes.
    wait_for("the typist's size", DEADLINE, || async {
        (current().await == PaneSize { cols: 60, rows: 20 }).then_some(())
    })
    .await;
    client.set_size_policy(&pane, SizePolicy::Largest).await.unwrap();
    assert_eq!(current().await, PaneSize { cols: 100, rows: 30 });
    client.set_size_policy(&pane, SizePolicy::Smallest).await.unwrap();
    assert_eq!(current().await, PaneSize { cols: 60, rows: 20 });
    big.client_resize(&pane, PaneSize { cols: 50, rows: 40 }).await.unwrap();
    // Polled: a pane's size change is not an event fugued pushes.
    wait_for("the smallest of both", DEADLINE, || async {
        (current().await == PaneSize { cols: 50, rows: 20 }).then_some(())
    })
    .await;
    // The screen model follows the PTY.
    let c = client
        .capture(&pane, CaptureWhat::Screen, (None, None), false, false)
        .await
        .unwrap();
    assert_eq!((c.size.cols, c.size.rows), (50, 20));
    // A read-only watcher never changes the size.
    let watcher = daemon.client().await;
    watcher.attach(&pane, true, size(10, 5)).await.unwrap();
    assert_eq!(current().await, PaneSize { cols: 50, rows: 20 });
    let err = daemon.cli(&["set-size-policy", &pane, "biggest"]).err();
    assert!(err.contains("unknown size policy 'biggest'"), "{err}");
}

/// Agent TUIs draw each frame inside a synchronized update (DEC mode 2026): the
/// screen keeps the last whole frame until the update ends.
#[tokio::test]
async fn a_synchronized_update_is_shown_whole() {
    let daemon = Daemon::start();
    // The program stops for a while in the middle of its frame.
    let script = r#"printf 'frame A'; printf '\033[?2026h\033[2J\033[Hframe B top'; sleep 2; printf '\r\nframe B bottom\033[?2026l'; exec sleep 60"#;
    let (client, pane) = start(&daemon, script, 30, 5).await;
    // Returns once the screen has taken the half frame in, not just the log.
    let until = fugue_client::protocol::WaitUntil {
        pattern: Some("frame B top".into()),
        ..Default::default()
    };
    client.wait_for(&pane, until, DEADLINE).await.unwrap();
    let taken_in = std::time::Instant::now();
    let during = client
        .capture(&pane, CaptureWhat::Screen, (None, None), false, false)
        .await
        .unwrap();
    // Past the update's 150 ms deadline the half frame would rightly show; one
    // capture request is well inside it on any machine this runs on.
    if taken_in.elapsed() < std::time::Duration::from_millis(100) {
        assert_eq!(
            during.lines[0], "frame A",
            "a half-drawn frame was captured: {:?}",
            during.lines
        );
    }
    let after = screen_with(&client, &pane, "frame B bottom").await;
    assert_eq!(after.lines[..2], ["frame B top", "frame B bottom"]);
}

#[tokio::test]
async fn an_unfinished_synchronized_update_is_shown_after_its_deadline() {
    let daemon = Daemon::start();
    // Begins a frame and never ends it: terminals show it after a timeout.
    let script = r#"printf 'frame A\033[?2026h\033[2J\033[Hhalf a frame'; exec sleep 60"#;
    let (client, pane) = start(&daemon, script, 30, 5).await;
    let c = screen_with(&client, &pane, "half a frame").await;
    assert!(!c.lines.iter().any(|l| l.contains("frame A")), "{:?}", c.lines);
}

#[tokio::test]
async fn a_program_asking_about_synchronized_output_hears_it_is_supported() {
    let daemon = Daemon::start();
    // DECRQM for mode 2026: "2" is recognised and currently reset.
    let script = r#"stty -echo -icanon; printf '\033[?2026$p'; reply=$(dd bs=1 count=11 2>/dev/null); printf 'reply=%s\n' "$(printf %s "$reply" | od -An -c | tr -s ' ')"; exec sleep 60"#;
    let (client, pane) = start(&daemon, script, 60, 5).await;
    let c = screen_with(&client, &pane, "reply=").await;
    assert!(c.lines[0].contains(r"reply= 033 [ ? 2 0 2 6 ; 2 $ y"), "{:?}", c.lines);
}
