use super::*;

fn screen(cols: u16, rows: u16) -> Screen {
    Screen::new(PaneSize { cols, rows }, 100, 1 << 20)
}

#[test]
fn cursor_addressing_renders_exactly() {
    let mut s = screen(20, 5);
    s.feed(b"\x1b[2J\x1b[3;5Hhello\x1b[1;1Htop");
    assert_eq!(s.visible_text(), vec!["top", "", "    hello", "", ""]);
    assert_eq!(s.cursor(), (0, 3, true));
}

#[test]
fn scrolled_lines_go_to_text_scrollback() {
    let mut s = screen(10, 3);
    for i in 1..=10 {
        s.feed(format!("line {i}\r\n").as_bytes());
    }
    assert_eq!(s.scrollback_len(), 8);
    assert_eq!(s.visible_text(), vec!["line 9", "line 10", ""]);
    let c = s.capture(LineRange { start: -3, end: 0 }, false, false);
    assert_eq!(c.lines, vec!["line 6", "line 7", "line 8", "line 9"]);
    assert_eq!(c.first_line, -3);
    let all = s.capture(
        LineRange {
            start: i64::MIN,
            end: i64::MAX,
        },
        false,
        false,
    );
    assert_eq!(all.lines.len(), 11);
    assert_eq!(all.lines[0], "line 1");
}

#[test]
fn clearing_the_scrollback_clears_all_of_it() {
    let mut s = screen(10, 3);
    for i in 1..=10 {
        s.feed(format!("line {i}\r\n").as_bytes());
    }
    // Lines taken out earlier and lines that scrolled in the same read go.
    s.feed(b"line 11\r\nline 12\r\n\x1b[3Jline 13\r\n");
    assert_eq!(s.scrollback_len(), 1);
    assert_eq!(s.visible_text(), vec!["line 12", "line 13", ""]);
    s.feed(b"line 14\r\n");
    assert_eq!(s.scrollback_len(), 2);
}

#[test]
fn a_burst_of_lines_in_one_feed_keeps_them_all() {
    let mut s = Screen::new(PaneSize { cols: 20, rows: 5 }, 100_000, 1 << 24);
    let mut big = Vec::new();
    for i in 0..5000 {
        big.extend_from_slice(format!("{i}\r\n").as_bytes());
    }
    s.feed(&big);
    assert_eq!(s.scrollback_len(), 4996);
    assert_eq!(s.scrollback.dropped, 0);
    let c = s.capture(
        LineRange {
            start: -4996,
            end: -4995,
        },
        false,
        false,
    );
    assert_eq!(c.lines, vec!["0", "1"]);
}

#[test]
fn scrollback_caps_lines_and_bytes() {
    let mut s = Screen::new(PaneSize { cols: 10, rows: 2 }, 5, 1 << 20);
    for i in 0..20 {
        s.feed(format!("{i}\r\n").as_bytes());
    }
    assert_eq!(s.scrollback_len(), 5);
    let mut s = Screen::new(PaneSize { cols: 10, rows: 2 }, 100, 12);
    for _ in 0..10 {
        s.feed(b"abcde\r\n");
    }
    assert_eq!(s.scrollback_len(), 2);
}

#[test]
fn wrapped_lines_join() {
    let mut s = screen(5, 3);
    s.feed(b"abcdefgh");
    assert_eq!(s.visible_text(), vec!["abcde", "fgh", ""]);
    let joined = s.capture(LineRange { start: 0, end: 2 }, false, true);
    assert_eq!(joined.lines, vec!["abcdefgh", ""]);
}

#[test]
fn alternate_screen_and_title() {
    let mut s = screen(10, 3);
    s.feed(b"main\x1b]0;my title\x07");
    assert_eq!(s.title(), "my title");
    s.feed(b"\x1b[?1049h\x1b[Halt");
    assert!(s.alternate_screen());
    assert_eq!(s.visible_text()[0], "alt");
    s.feed(b"\x1b[?1049l");
    assert!(!s.alternate_screen());
    assert_eq!(s.visible_text()[0], "main");
}

#[test]
fn wide_characters_at_the_narrowest_size() {
    // alacritty_terminal panics writing a wide character into one column; the
    // protocol's minimum width of 2 keeps every screen out of that case.
    let mut s = screen(fugue_protocol::limits::MIN_COLS, 1);
    s.feed("中文中文\r\n😀x".as_bytes());
    // A one-column size that got past validation is widened, not obeyed.
    s.resize(PaneSize { cols: 1, rows: 3 }, None);
    assert_eq!(s.size(), PaneSize { cols: 2, rows: 3 });
    s.feed("中\u{301}文".as_bytes());
    assert!(!s.visible_text().is_empty());
}

#[test]
fn hostile_titles_are_cut_and_cleaned() {
    let mut s = screen(10, 3);
    let mut osc = "\x1b]0;a\u{9b}b\u{202e}c".as_bytes().to_vec();
    osc.extend(std::iter::repeat_n(b'x', 10 << 20));
    osc.extend_from_slice(b"\x07shown");
    let report = s.feed(&osc);
    let title = report.title.unwrap();
    assert!(title.starts_with("abcxx"), "{title:?}");
    assert_eq!(title.chars().count(), fugue_protocol::limits::MAX_TITLE_CHARS);
    assert_eq!(s.visible_text()[0], "shown");
    // C1 controls printed as characters never reach a capture.
    s.feed("\r\n\u{9b}2Jz\u{202e}y".as_bytes());
    let line = &s.visible_text()[1];
    assert!(!line.chars().any(fugue_protocol::limits::is_unsafe_char), "{line:?}");
}

#[test]
fn control_characters_in_cells_never_reach_a_capture() {
    // alacritty keeps a tab as `\t` in its cell; scrolled off or not, a
    // capture shows a blank there.
    let mut s = screen(20, 2);
    s.feed(b"a\tb\r\nc\td\r\n\r\n");
    let all = s.capture(LineRange { start: -10, end: 1 }, false, false);
    assert!(all.lines.iter().all(|l| !l.contains('\t')), "{:?}", all.lines);
}

#[test]
fn kitty_keyboard_flags_are_kept_answered_and_redrawn() {
    let mut s = screen(20, 4);
    assert_eq!(s.feed(b"\x1b[?u").replies, b"\x1b[?0u");
    s.feed(b"\x1b[>1u\x1b[>11u");
    assert_eq!(s.kitty_keyboard_flags(), 11);
    assert_eq!(s.feed(b"\x1b[?u").replies, b"\x1b[?11u");
    assert!(String::from_utf8_lossy(&s.redraw()).contains("\x1b[=11;1u"));
    // Pop one: back to the flags pushed before.
    s.feed(b"\x1b[<u");
    assert_eq!(s.kitty_keyboard_flags(), 1);
    // The alternate screen has a stack of its own.
    s.feed(b"\x1b[?1049h");
    assert_eq!(s.kitty_keyboard_flags(), 0);
    s.feed(b"\x1b[?1049l");
    assert_eq!(s.kitty_keyboard_flags(), 1);
    // A program pushing forever is bounded, and does not bring the emulator down.
    s.feed(&b"\x1b[>3u".repeat(10_000));
    assert_eq!(s.kitty_keyboard_flags(), 3);
    // The title stack, bounded the same way, keeps working on its own (with
    // no keyboard modes pushed: a fix applied to the wrong stack panicked here).
    let mut s = screen(20, 4);
    s.feed(&b"\x1b[22t".repeat(5_000));
    s.feed(b"\x1b]0;pushed\x07\x1b[22t\x1b]0;other\x07\x1b[23t");
    assert_eq!(s.title(), "pushed");
}

#[test]
fn queries_are_answered() {
    let mut s = screen(10, 3);
    let report = s.feed(b"ab\x1b[6n\x1b[c\x1b[>c");
    let replies = String::from_utf8(report.replies).unwrap();
    assert!(replies.starts_with("\x1b[1;3R\x1b[?6c\x1b[>0;"), "{replies:?}");
}

#[test]
fn ansi_capture_and_redraw_carry_attributes() {
    let mut s = screen(20, 2);
    s.feed(b"\x1b[1;31mred\x1b[0m plain \x1b[38;5;200mx\x1b[48;2;1;2;3my");
    let c = s.capture(LineRange { start: 0, end: 0 }, true, false);
    assert_eq!(
        c.lines[0],
        "\x1b[0;1;31mred\x1b[0m plain \x1b[0;38;5;200mx\x1b[0;38;5;200;48;2;1;2;3my\x1b[0m"
    );
    // Replaying a redraw into a fresh screen reproduces the screen and cursor.
    s.feed(b"\x1b[2;4H\x1b[?1h");
    let mut copy = screen(20, 2);
    copy.feed(&s.redraw());
    assert_eq!(copy.visible_text(), s.visible_text());
    assert_eq!(copy.cursor(), s.cursor());
    assert!(copy.application_cursor());
    assert_eq!(
        copy.capture(LineRange { start: 0, end: 0 }, true, false),
        s.capture(LineRange { start: 0, end: 0 }, true, false)
    );
}

#[test]
fn the_cursor_shape_a_program_set_is_redrawn() {
    let mut s = screen(20, 4);
    assert!(
        String::from_utf8_lossy(&s.redraw()).contains("\x1b[0 q"),
        "none set: the terminal's own"
    );
    for (set, code) in [
        ("\x1b[6 q", 6),
        ("\x1b[5 q", 5),
        ("\x1b[4 q", 4),
        ("\x1b[2 q", 2),
        ("\x1b[1 q", 1),
    ] {
        s.feed(set.as_bytes());
        let redraw = String::from_utf8_lossy(&s.redraw()).into_owned();
        assert!(redraw.contains(&format!("\x1b[{code} q")), "{set:?}: {redraw:?}");
        // A screen fed the redraw has the same style.
        let mut copy = screen(20, 4);
        copy.feed(redraw.as_bytes());
        assert_eq!(copy.cursor_shape_code(), code);
    }
    s.feed(b"\x1b[0 q");
    assert!(String::from_utf8_lossy(&s.redraw()).contains("\x1b[0 q"));
}

#[test]
fn reverse_wraparound_is_redrawn() {
    let mut s = screen(20, 4);
    let redraw = String::from_utf8_lossy(&s.redraw()).into_owned();
    assert!(
        redraw.contains("\x1b[?45l") && redraw.contains("\x1b[?1045l"),
        "{redraw:?}"
    );
    s.feed(b"\x1b[?45h");
    let mut copy = screen(20, 4);
    copy.feed(&s.redraw());
    copy.feed(b"abc\r\n\x1b[2;1H\x08");
    assert_eq!(copy.cursor(), (1, 0, true), "45 goes back only into a wrapped line");
    s.feed(b"\x1b[?1045h");
    let mut copy = screen(20, 4);
    copy.feed(&s.redraw());
    copy.feed(b"\x1b[2;1H\x08");
    assert_eq!(copy.cursor(), (0, 19, true));
}

#[test]
fn hyperlinks_survive_ansi_capture_and_redraw() {
    let mut s = screen(30, 2);
    s.feed(b"see \x1b]8;;https://example.org/a?b=1\x1b\\the docs\x1b]8;;\x1b\\ now");
    let c = s.capture(LineRange { start: 0, end: 0 }, true, false);
    assert_eq!(
        c.lines[0],
        "see \x1b]8;;https://example.org/a?b=1\x1b\\the docs\x1b]8;;\x1b\\ now"
    );
    // Plain captures show the text only.
    assert_eq!(
        s.capture(LineRange { start: 0, end: 0 }, false, false).lines[0],
        "see the docs now"
    );
    let mut copy = screen(30, 2);
    copy.feed(&s.redraw());
    assert_eq!(
        copy.capture(LineRange { start: 0, end: 0 }, true, false),
        s.capture(LineRange { start: 0, end: 0 }, true, false)
    );
}
