//! Errors as a person reads them: a target, name or pattern an error quotes
//! may hold escape sequences, bidi overrides or zero-width characters (what a
//! person pasted, what a program named itself). The CLI prints them as
//! visible escapes; nothing reaches the terminal to retitle it or reorder
//! the line.

use fugue_client::protocol::limits::is_unsafe_char;
use fugue_tests::Daemon;

/// A title sequence with its BEL, and a right-to-left override.
const HOSTILE: &str = "nope\x1b]0;PWNED\x07\u{202e}txt";
/// How [`HOSTILE`] reads in an error: every unsafe character escaped.
const ESCAPED: &str = "nope\\x1b]0;PWNED\\x07\\u{202e}txt";

#[test]
fn errors_print_what_they_quote_escaped() {
    let daemon = Daemon::start();
    daemon.cli(&["new-session", "s"]).ok();
    let pane = daemon.cli(&["run", "-s", "s", "--no-shell", "--", "sleep", "600"]).ok();
    let pane = pane.trim();
    let in_session = format!("s:{HOSTILE}");
    let bad_regex = format!("({HOSTILE}");
    // Each command, and whether its error names the hostile text.
    let cases: Vec<(Vec<&str>, bool)> = vec![
        (vec!["prompt", HOSTILE, "x"], true),
        (vec!["send-keys", HOSTILE, "Enter"], true),
        (vec!["send-keys", pane, HOSTILE], true),
        (vec!["write", HOSTILE, "x"], true),
        (vec!["kill", HOSTILE], true),
        (vec!["interrupt", HOSTILE], true),
        (vec!["release", HOSTILE], true),
        (vec!["status", HOSTILE], true),
        (vec!["status", &in_session], true),
        (vec!["read", HOSTILE], true),
        (vec!["capture", HOSTILE], true),
        (vec!["rename-pane", HOSTILE, "t"], true),
        (vec!["resize", HOSTILE, "80x24"], true),
        (vec!["wait", HOSTILE, "--timeout", "1"], true),
        (vec!["wait", pane, "--timeout", "1", "--pattern", &bad_regex], true),
        (vec!["grep", &bad_regex], true),
        (vec!["agent", HOSTILE], true),
        (vec!["approve", HOSTILE, "id"], true),
        (vec!["approve", pane, HOSTILE], false),
        (vec!["hibernate", HOSTILE], true),
        (vec!["wake", HOSTILE], true),
        // (It needs a terminal first, and says so.)
        (vec!["attach", HOSTILE], false),
        (vec!["panes", HOSTILE], true),
        (vec!["kill-session", HOSTILE], true),
        (vec!["rename-session", HOSTILE, "t"], true),
        (vec!["rename-session", "s", HOSTILE], true),
        (vec!["new-session", HOSTILE], true),
        (vec!["run", "-s", HOSTILE, "--", "true"], true),
        (vec!["overview", HOSTILE], true),
        (vec!["diff", HOSTILE], true),
        (vec!["resize", pane, HOSTILE], true),
    ];
    let mut raw = Vec::new();
    let mut unnamed = Vec::new();
    for (args, names_it) in &cases {
        let out = daemon.cli(args);
        assert!(!out.status.success(), "{args:?} succeeded: {}", out.stdout);
        let said = out.stderr.trim_end_matches('\n');
        if said.chars().any(is_unsafe_char) {
            raw.push(format!("{args:?}: {said:?}"));
        } else if *names_it && !said.contains(ESCAPED) {
            unnamed.push(format!("{args:?}: {said}"));
        }
    }
    assert!(
        raw.is_empty(),
        "errors that print unsafe characters raw:\n{}",
        raw.join("\n")
    );
    assert!(
        unnamed.is_empty(),
        "errors that do not name what was wrong (escaped as {ESCAPED}):\n{}",
        unnamed.join("\n")
    );
}

/// The JSON a front end reads keeps the text as it was: the escapes are JSON's
/// (`\u001b`), and parsing gives back the exact characters.
#[test]
fn json_keeps_the_quoted_text_exactly() {
    let daemon = Daemon::start();
    daemon.cli(&["new-session", "s"]).ok();
    let pane = daemon
        .cli(&[
            "run",
            "-s",
            "s",
            "--no-shell",
            "--",
            "sh",
            "-c",
            "exec sleep 600",
            HOSTILE,
        ])
        .ok();
    let status = daemon.cli(&["--json", "status", pane.trim()]);
    let raw = status.stdout.chars().any(|c| c != '\n' && is_unsafe_char(c));
    assert!(!raw, "raw in JSON: {:?}", status.stdout);
    assert!(
        status.stdout.contains("\\u001b]0;PWNED\\u0007\\u202etxt"),
        "{}",
        status.stdout
    );
    assert_eq!(status.json()["command"][3], HOSTILE);
}
