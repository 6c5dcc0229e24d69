//! `fugue attach` driven as a person would: inside tmux, typing with send-keys and
//! reading the screen with capture-pane.

use fugue_tests::{bin, wait_until, Daemon, Tmux, DEADLINE};

fn attach_command(daemon: &Daemon, target: &str, extra: &str) -> String {
    format!(
        "{} --socket {} attach {target} {extra}",
        bin("fugue").display(),
        daemon.socket.display()
    )
}

#[test]
fn attach_redraws_types_and_detaches_cleanly() {
    fugue_tests::require!("tmux");
    let daemon = Daemon::start();
    daemon.cli(&["new-session", "dev"]).ok();
    let pane = daemon.cli(&["run", "-s", "dev", "--title", "sh"]).ok();
    daemon.cli(&["write", &pane, "echo before-$((20+1))", "--enter"]).ok();
    daemon.wait_text(&pane, "before-21");

    let tmux = Tmux::start(daemon.dir.path(), 100, 30);
    tmux.type_line("main", &attach_command(&daemon, "dev", ""));
    // The first redraw shows what the pane showed before we came.
    tmux.wait_for("main", "before-21");
    // The pane took the terminal's size.
    // Polled: a pane's size change is not an event fugued pushes.
    wait_until("the pane to take the client's size", DEADLINE, || {
        let status = daemon.cli(&["--json", "status", &pane]).json();
        (status["cols"] == 100 && status["rows"] == 30).then_some(())
    });
    // Typing reaches the pane.
    tmux.type_line("main", "echo typed-$((6*7))");
    tmux.wait_for("main", "typed-42");
    assert!(daemon.cli(&["read", &pane]).ok().contains("typed-42"));

    // Detach: the local terminal is back in cooked mode, the pane runs on.
    tmux.send_keys("main", &["C-\\"]);
    tmux.wait_for("main", "[detached from pane");
    // (The quotes keep the typed command itself from matching.)
    tmux.type_line(
        "main",
        "stty -a | tr ' ;' '\\n\\n' | grep -x -- '-\\?icanon' | sed 's/^/mo''de:/'",
    );
    let screen = tmux.wait_for("main", "mode:");
    assert!(screen.contains("mode:icanon"), "terminal not restored:\n{screen}");
    assert_eq!(daemon.cli(&["--json", "status", &pane]).json()["status"], "running");
}

#[test]
fn two_clients_see_the_same_output_and_prefix_keys_switch_panes() {
    fugue_tests::require!("tmux");
    let daemon = Daemon::start();
    daemon.cli(&["new-session", "dev"]).ok();
    let first = daemon.cli(&["run", "-s", "dev"]).ok();
    let second = daemon
        .cli(&[
            "run",
            "-s",
            "dev",
            "--no-shell",
            "--",
            "sh",
            "-c",
            "echo second-pane-here; exec sleep 60",
        ])
        .ok();

    daemon.cli(&["write", &first, "echo ready-$((1+2))", "--enter"]).ok();
    daemon.wait_text(&first, "ready-3");

    let tmux = Tmux::start(daemon.dir.path(), 90, 25);
    let other = tmux.new_window();
    tmux.type_line("main:0", &attach_command(&daemon, &first, ""));
    tmux.type_line(&other, &attach_command(&daemon, &first, "--read-only"));
    // Both are attached once both show the pane's screen.
    tmux.wait_for("main:0", "ready-3");
    tmux.wait_for(&other, "ready-3");
    daemon.cli(&["write", &first, "echo both-$((2+3))", "--enter"]).ok();
    tmux.wait_for("main:0", "both-5");
    tmux.wait_for(&other, "both-5");
    // A read-only client does not type.
    tmux.type_line(&other, "echo from-readonly");
    tmux.type_line("main:0", "echo from-main-$((1+1))");
    tmux.wait_for(&other, "from-main-2");
    assert!(!daemon.cli(&["read", &first]).ok().contains("from-readonly"));

    // Prefix then 1 switches to pane 1 of the session; prefix then d detaches.
    tmux.send_keys("main:0", &["C-b", "1"]);
    tmux.wait_for("main:0", "second-pane-here");
    tmux.send_keys("main:0", &["C-b", "d"]);
    // The whole line: a look can land between the words and the pane's id.
    tmux.until("main:0", "the detach naming the second pane", |screen| {
        (screen.contains("[detached from pane") && screen.contains(&second[..8])).then_some(())
    });
}

#[test]
fn the_client_reports_the_exit_and_survives_a_daemon_going_away() {
    fugue_tests::require!("tmux");
    let mut daemon = Daemon::start();
    daemon.cli(&["new-session", "dev"]).ok();
    let pane = daemon
        .cli(&["run", "-s", "dev", "--no-shell", "--", "sh", "-c", "read x; exit 3"])
        .ok();
    let other = daemon
        .cli(&["run", "-s", "dev", "--no-shell", "--", "sleep", "60"])
        .ok();
    let tmux = Tmux::start(daemon.dir.path(), 80, 20);
    let second = tmux.new_window();
    tmux.type_line("main:0", &attach_command(&daemon, &pane, ""));
    tmux.type_line(&second, &attach_command(&daemon, &other, ""));
    // Polled: a pane's size change is not an event fugued pushes.
    wait_until("both attached", DEADLINE, || {
        let s = daemon.cli(&["--json", "status", &pane]).json();
        (s["cols"] == 80).then_some(())
    });
    tmux.type_line("main:0", "bye");
    tmux.wait_for("main:0", "exited with code 3]");
    // The daemon goes away under an attached client: it says so, the terminal is back.
    daemon.signal_and_wait(libc::SIGTERM);
    tmux.wait_for(&second, "lost the connection to fugued");
    tmux.type_line(&second, "echo still-$((3*3))");
    tmux.wait_for(&second, "still-9");
}

/// `fugue` with no command, as `tmux` alone: a shell in the default session
/// (created on first use), attached.
#[test]
fn fugue_alone_opens_a_shell_and_attaches() {
    fugue_tests::require!("tmux");
    let daemon = Daemon::start();
    let tmux = Tmux::start(daemon.dir.path(), 90, 20);
    let fugue = format!("{} --socket {}", bin("fugue").display(), daemon.socket.display());
    tmux.type_line("main", &format!("unset FUGUE_PANE; {fugue}"));
    daemon.until_event_blocking("a pane in the default session", DEADLINE, || {
        let panes = daemon.cli(&["--json", "panes", "default"]);
        panes
            .status
            .success()
            .then_some(())
            .filter(|_| panes.json().as_array().is_some_and(|p| p.len() == 1))
    });
    tmux.type_line("main", "echo inside-$((40+2))");
    tmux.wait_for("main", "inside-42");
    let pane = daemon.cli(&["--json", "panes", "default"]).json()[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(daemon.cli(&["read", &pane]).ok().contains("inside-42"));
    tmux.send_keys("main", &["C-\\"]);
    tmux.wait_for("main", "[detached from pane");

    // From inside a fugue pane it refuses to nest, in one line.
    // (The quotes keep the typed command itself from matching.)
    tmux.type_line("main", &format!("FUGUE_PANE=x {fugue} ; echo sta''tus=$?"));
    let screen = tmux.wait_for("main", "status=");
    assert!(screen.contains("already inside a fugue pane"), "{screen}");
    assert!(screen.contains("status=1"), "{screen}");
}

/// A program in the pane writes to the clipboard (OSC 52): it reaches the user's
/// terminal (here tmux, which keeps such writes as paste buffers) only when the
/// user asked for it with `--clipboard`.
#[test]
fn clipboard_writes_reach_the_terminal_only_when_allowed() {
    fugue_tests::require!("tmux");
    let daemon = Daemon::start();
    daemon.cli(&["new-session", "dev"]).ok();
    let tmux = Tmux::start(daemon.dir.path(), 80, 20);
    tmux.run(&["set-option", "-g", "set-clipboard", "on"]);
    // printf's \033 and \007 are spelled by the shell in the pane; base64 of "copied".
    let copy = r"printf '\033]52;c;Y29waWVk\007'; echo wrote-$((1+1))";
    for (flag, expected) in [("", false), ("--clipboard", true)] {
        let pane = daemon.cli(&["run", "-s", "dev"]).ok();
        tmux.type_line("main", &attach_command(&daemon, &pane, flag));
        daemon.cli(&["write", &pane, "echo attached-$((3+4))", "--enter"]).ok();
        tmux.wait_for("main", "attached-7");
        daemon.cli(&["write", &pane, copy, "--enter"]).ok();
        tmux.wait_for("main", "wrote-2");
        let buffers = tmux.run(&["list-buffers", "-F", "#{buffer_sample}"]);
        assert_eq!(
            buffers.contains("copied"),
            expected,
            "flag {flag:?}: buffers {buffers:?}"
        );
        tmux.send_keys("main", &["C-\\"]);
        tmux.wait_for("main", "[detached from pane");
        tmux.run(&["clear-history"]);
        tmux.send_keys("main", &["C-l"]);
        daemon.cli(&["release", &pane]).ok();
    }
}

/// Detaching from a full-screen program gives the terminal back as it was: the
/// program's alternate screen, mouse reporting, cursor keys and keypad modes go.
#[test]
fn detaching_from_a_full_screen_program_restores_the_terminal() {
    fugue_tests::require!("tmux");
    let daemon = Daemon::start();
    daemon.cli(&["new-session", "dev"]).ok();
    let tmux = Tmux::start(daemon.dir.path(), 80, 20);
    let flags = || {
        tmux.run(&[
            "display-message",
            "-p",
            "-t",
            "main",
            "#{alternate_on} #{mouse_standard_flag} #{keypad_cursor_flag} #{keypad_flag} #{cursor_flag}",
        ])
        .trim()
        .to_string()
    };
    let before = flags();
    let script = r"printf '\033[?1049h\033[?1000h\033[?1006h\033[?1004h\033[?1h\033=\033[?25l\033[>1ufull screen'; exec sleep 60";
    let pane = daemon
        .cli(&["run", "-s", "dev", "--no-shell", "--", "sh", "-c", script])
        .ok();
    tmux.type_line("main", &attach_command(&daemon, &pane, ""));
    tmux.wait_for("main", "full screen");
    // Polled: tmux reports no event for a mode change (alternate screen, mouse).
    wait_until("the program's modes on the terminal", DEADLINE, || {
        (flags() == "1 1 1 1 0").then_some(())
    });
    tmux.send_keys("main", &["C-\\"]);
    tmux.wait_for("main", "[detached from pane");
    assert_eq!(flags(), before, "alternate, mouse, cursor keys, keypad, cursor shown");
}

/// A terminal query from the pane gets one answer, fugue's, however many
/// terminals are attached: the attached terminal (tmux here) never sees the
/// query, so its answer cannot arrive as stray keystrokes. Before, tmux answered
/// the cursor position and device attributes a second time.
#[test]
fn a_query_from_the_pane_is_answered_once_with_a_client_attached() {
    fugue_tests::require!("tmux");
    let daemon = Daemon::start();
    daemon.cli(&["new-session", "dev"]).ok();
    let tmux = Tmux::start(daemon.dir.path(), 80, 20);
    // Once attached, asks for the cursor position, the kitty keyboard flags and the device
    // attributes, then reads everything typed until an `x`: the answers, and a
    // second copy of any the attached terminal sent.
    let script = r#"stty raw -echo; echo waiting; IFS= read -r -n 1 go; printf '\033[6n\033[?u\033[c'; echo ready; IFS= read -r -d x reply; stty sane; r=$(printf %s "$reply" | tr '\033' '^'); echo "answers:[$r]""#;
    let pane = daemon
        .cli(&[
            "run",
            "-s",
            "dev",
            "--no-shell",
            "--",
            "bash",
            "-c",
            &format!("{script}; sleep 60"),
        ])
        .ok();
    tmux.type_line("main", &attach_command(&daemon, &pane, ""));
    // The queries go out once the client is attached (and typed the `g`).
    tmux.wait_for("main", "waiting");
    tmux.send_keys("main", &["g"]);
    tmux.wait_for("main", "ready");
    tmux.send_keys("main", &["x"]);
    let screen = tmux.wait_for("main", "answers:[");
    let line = screen.lines().find(|l| l.contains("answers:[")).unwrap_or_default();
    let answers = line
        .split_once("answers:[")
        .map_or("", |(_, rest)| rest.trim_end_matches(']'));
    assert_eq!(answers.matches('R').count(), 1, "cursor position answers: {line}");
    assert_eq!(answers.matches("^[?0u").count(), 1, "kitty flags answers: {line}");
    assert_eq!(answers.matches('c').count(), 1, "device attributes answers: {line}");
}

/// tmux's value of `format` (`#{...}`) for `target`.
fn tmux_value(tmux: &Tmux, target: &str, format: &str) -> String {
    tmux.run(&["display-message", "-p", "-t", target, format])
        .trim()
        .to_string()
}

#[test]
fn attach_says_who_needs_you_jumps_there_and_opens_the_overview() {
    fugue_tests::require!("tmux");
    fugue_tests::require!("script");
    let daemon = Daemon::start();
    for session in ["work", "ag"] {
        daemon.cli(&["new-session", session]).ok();
    }
    let shell = daemon
        .cli(&["run", "-s", "work", "--no-shell", "--", "bash", "--norc", "--noprofile"])
        .ok();
    let agent = daemon.run_fake_claude("ag");
    daemon.wait_agent_state(&agent, "idle");
    let tmux = Tmux::start(daemon.dir.path(), 120, 30);
    // What attach writes to its terminal, kept by script(1) (flushed as written).
    let typescript = daemon.dir.path().join("typescript");
    tmux.type_line(
        "main",
        &format!(
            "script -q -f -c '{}' {}",
            attach_command(&daemon, &shell, ""),
            typescript.display()
        ),
    );
    tmux.type_line("main", "echo attached-$((6*7))");
    tmux.wait_for("main", "attached-42");
    // Another window in front, so the bell marks the attached one.
    let _front = tmux.new_window();

    let sent = daemon.cli(&["--json", "prompt", &agent, "ship it"]).json();
    assert_eq!(sent["outcome"], "started", "{sent}");
    // Looked at again when tmux reports the attached client's output.
    tmux.until("main:0", "the title and the bell", |_| {
        let title = tmux_value(&tmux, "main:0", "#{pane_title}");
        let bell = tmux_value(&tmux, "main:0", "#{window_bell_flag}");
        (title == "fugue: 1 need you" && bell == "1").then_some(())
    });
    let written = fugue_tests::files::until_file_holds(&typescript, "\x1b]777;");
    assert!(
        written.contains("\x1b]9;fugue: ag:0 asks for permission\x07"),
        "{written:?}"
    );
    assert!(
        written.contains("\x1b]777;notify;fugue;ag:0 asks for permission\x07"),
        "{written:?}"
    );

    // Prefix j jumps to the pane that needs the person, in another session.
    tmux.run(&["select-window", "-t", "main:0"]);
    tmux.send_keys("main:0", &["C-b", "j"]);
    tmux.wait_for("main:0", "Do you want to proceed?");
    // Prefix w opens the overview on that pane; it answers there.
    tmux.send_keys("main:0", &["C-b", "w"]);
    let screen = tmux.wait_for("main:0", "fugue top");
    let selected = screen.lines().find(|l| l.starts_with('▶')).unwrap_or_default();
    assert!(selected.contains("ag:0"), "{screen}");
    tmux.send_keys("main:0", &["a"]);
    tmux.wait_for("main:0", "Approve ag:0?");
    tmux.send_keys("main:0", &["y"]);
    daemon.wait_screen(&agent, "approved: ship it");
    // Enter on the shell's row attaches there again; detaching ends it all.
    tmux.run(&["send-keys", "-t", "main:0", "-l", "/work:"]);
    tmux.send_keys("main:0", &["Enter", "Enter"]);
    tmux.wait_for("main:0", "attached-42");
    tmux.send_keys("main:0", &["C-\\"]);
    tmux.wait_for("main:0", "[detached from pane");
}

/// The cursor shape a program set (DECSCUSR) is part of the redraw an attaching
/// terminal gets, and detaching gives the person's terminal its own back.
#[test]
fn the_programs_cursor_shape_comes_with_the_redraw_and_goes_on_detach() {
    fugue_tests::require!("tmux");
    fugue_tests::require!("script");
    let daemon = Daemon::start();
    daemon.cli(&["new-session", "cur"]).ok();
    // A bar cursor, steady (6), as editors set in insert mode.
    let pane = daemon
        .cli(&[
            "run",
            "-s",
            "cur",
            "--no-shell",
            "--",
            "sh",
            "-c",
            "printf 'bar-cursor\\033[6 q'; exec sleep 600",
        ])
        .ok();
    daemon.wait_text(&pane, "bar-cursor");
    let tmux = Tmux::start(daemon.dir.path(), 100, 30);
    let typescript = daemon.dir.path().join("typescript");
    tmux.type_line(
        "main",
        &format!(
            "script -q -f -c '{}' {}",
            attach_command(&daemon, &pane, ""),
            typescript.display()
        ),
    );
    tmux.wait_for("main", "bar-cursor");
    let written = fugue_tests::files::until_file_holds(&typescript, "bar-cursor");
    assert!(written.contains("\x1b[6 q"), "the redraw sets the bar: {written:?}");
    tmux.send_keys("main", &["C-\\"]);
    tmux.wait_for("main", "[detached from pane");
    let written = std::fs::read_to_string(&typescript).unwrap_or_default();
    let set = written.rfind("\x1b[6 q").expect("set");
    let reset = written.rfind("\x1b[0 q").expect("detaching resets the shape");
    assert!(reset > set, "the reset comes after: {written:?}");
}
