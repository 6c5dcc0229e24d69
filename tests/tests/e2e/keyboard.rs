//! Keys and focus as programs that ask for more than legacy keys see them: the
//! kitty keyboard protocol (what agent TUIs use to tell Shift+Enter from Enter),
//! through `fugue send-keys` and through `fugue attach` in a terminal without the
//! protocol (tmux), and focus events from several attached terminals at once.

use fugue_tests::{bin, Daemon, Tmux};

/// A program that writes `setup` (terminal modes it asks for), says `ready`,
/// then prints every byte it reads in hex until it reads an `x`. (Python: bash's
/// `read` turns signals back on while it waits, so a Ctrl-C byte would kill it.)
fn key_reader(setup: &str) -> String {
    format!(
        r#"import os, sys, tty
tty.setraw(0)
os.write(1, b"{setup}ready\r\n")
while True:
    byte = os.read(0, 1)
    os.write(1, byte.hex().encode() + b" ")
    if byte in (b"x", b""):
        break
os.write(1, b"\r\ndone\r\n")
os.read(0, 1)
"#
    )
}

fn start_reader(daemon: &Daemon, setup: &str) -> String {
    let pane = daemon
        .cli(&[
            "run",
            "-s",
            "dev",
            "--no-shell",
            "--",
            "python3",
            "-c",
            &key_reader(setup),
        ])
        .ok();
    daemon.wait_text(&pane, "ready");
    pane
}

/// The hex the reader printed so far.
fn read_hex(daemon: &Daemon, pane: &str) -> String {
    daemon.cli(&["capture", pane]).ok().replace('\n', " ")
}

fn wait_hex(daemon: &Daemon, pane: &str, hex: &str) {
    daemon.wait_text(pane, hex);
}

fn attach_command(daemon: &Daemon, pane: &str) -> String {
    format!(
        "{} --socket {} attach {pane}",
        bin("fugue").display(),
        daemon.socket.display()
    )
}

const SHIFT_ENTER_KITTY: &str = "1b 5b 31 33 3b 32 75";

/// `fugue send-keys S-Enter` reaches a program that pushed kitty keyboard flags
/// as kitty's Shift+Enter, and a program that did not as Enter; `C-c` and
/// Escape follow the same rule.
#[test]
fn send_keys_encode_for_the_kitty_keyboard_protocol_when_the_program_asks() {
    let daemon = Daemon::start();
    daemon.cli(&["new-session", "dev"]).ok();
    let kitty = start_reader(&daemon, r"\x1b[>1u");
    daemon.cli(&["send-keys", &kitty, "S-Enter", "C-c", "Escape", "x"]).ok();
    wait_hex(&daemon, &kitty, "78");
    let hex = read_hex(&daemon, &kitty);
    assert!(
        hex.contains(&format!("{SHIFT_ENTER_KITTY} 1b 5b 39 39 3b 35 75 1b 5b 32 37 75 78")),
        "{hex}"
    );

    let legacy = start_reader(&daemon, "");
    daemon
        .cli(&["send-keys", &legacy, "S-Enter", "C-c", "Escape", "x"])
        .ok();
    wait_hex(&daemon, &legacy, "78");
    assert!(read_hex(&daemon, &legacy).contains("0d 03 1b 78"));
}

/// Attached from a terminal without the kitty protocol (tmux 3.3a, which has
/// xterm's extended keys), a program that pushed kitty flags before the client
/// came still gets Shift+Enter as Shift+Enter and Escape without ambiguity:
/// the redraw carries the flags, the client asks its terminal for extended keys,
/// fugued re-encodes. Before, it got a plain Enter (0d) and a bare ESC.
#[test]
fn shift_enter_from_a_terminal_without_the_kitty_protocol_reaches_the_program() {
    fugue_tests::require!("tmux");
    let daemon = Daemon::start();
    daemon.cli(&["new-session", "dev"]).ok();
    let kitty = start_reader(&daemon, r"\x1b[>1u");
    let tmux = Tmux::start(daemon.dir.path(), 80, 20);
    tmux.run(&["set-option", "-s", "extended-keys", "on"]);
    tmux.type_line("main", &attach_command(&daemon, &kitty));
    tmux.wait_for("main", "ready");
    tmux.send_keys("main", &["S-Enter"]);
    wait_hex(&daemon, &kitty, SHIFT_ENTER_KITTY);
    tmux.send_keys("main", &["Escape"]);
    wait_hex(&daemon, &kitty, &format!("{SHIFT_ENTER_KITTY} 1b 5b 32 37 75"));
    tmux.send_keys("main", &["x"]);
    wait_hex(&daemon, &kitty, "78");

    // A program without the protocol, attached the same way, gets a bare ESC.
    let legacy = start_reader(&daemon, "");
    tmux.send_keys("main", &["C-\\"]);
    tmux.wait_for("main", "[detached from pane");
    tmux.type_line("main", &attach_command(&daemon, &legacy));
    tmux.wait_for("main", "ready");
    tmux.send_keys("main", &["Escape"]);
    wait_hex(&daemon, &legacy, "1b");
    tmux.send_keys("main", &["x"]);
    wait_hex(&daemon, &legacy, "78");
    assert!(
        read_hex(&daemon, &legacy).contains("1b 78"),
        "{}",
        read_hex(&daemon, &legacy)
    );
}

/// With two terminals attached, the pane has focus while either has it: focus
/// moving from one to the other is no event for the program, both losing it is
/// one, and the program hears it once. (The terminals' reports are typed into
/// the tmux windows as raw bytes, as a terminal sends them.) Before, every
/// terminal's report went through: out, in, in, out, out.
#[test]
fn focus_events_from_several_terminals_reach_the_program_once() {
    fugue_tests::require!("tmux");
    let daemon = Daemon::start();
    daemon.cli(&["new-session", "dev"]).ok();
    let pane = start_reader(&daemon, r"\x1b[?1004h");
    let tmux = Tmux::start(daemon.dir.path(), 80, 20);
    let second = tmux.new_window();
    tmux.type_line("main:0", &attach_command(&daemon, &pane));
    tmux.wait_for("main:0", "ready");
    // The first terminal to attach brings focus.
    wait_hex(&daemon, &pane, "1b 5b 49");
    tmux.type_line(&second, &attach_command(&daemon, &pane));
    tmux.wait_for(&second, "1b 5b 49");
    let focus_out = ["-H", "1b", "5b", "4f"];
    let focus_in = ["-H", "1b", "5b", "49"];
    // Focus moves from the first terminal to the second, and back.
    tmux.send_keys("main:0", &focus_out);
    tmux.send_keys(&second, &focus_in);
    tmux.send_keys("main:0", &focus_in);
    tmux.send_keys(&second, &focus_out);
    // Then both lose it (the user went to another window).
    tmux.send_keys("main:0", &focus_out);
    wait_hex(&daemon, &pane, "1b 5b 49 1b 5b 4f");
    tmux.send_keys("main:0", &["x"]);
    wait_hex(&daemon, &pane, "78");
    let hex = read_hex(&daemon, &pane);
    assert!(hex.contains("1b 5b 49 1b 5b 4f 78"), "{hex}");
}
