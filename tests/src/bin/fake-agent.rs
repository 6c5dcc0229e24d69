//! A stand-in for an agent CLI, drawn like Claude Code's screens, for the MCP
//! bridge's tests: idle at a `>` prompt; given a prompt it works for a moment
//! ("esc to interrupt"), then asks "Do you want to proceed?" and reacts to Enter
//! (approve) or Escape (deny). An argument is taken as the first prompt.
//! With `FAKE_AGENT_PASTE_GUARD_MS=N` it ignores an Enter that comes within N ms
//! of the end of a bracketed paste, as Gemini CLI 0.61 does. A turn works for
//! `FAKE_AGENT_WORK_MS` (default 800) before it asks. With
//! `FAKE_AGENT_DROP_FIRST_INPUT` set its first input is lost, as a woken CLI
//! whose input box does not listen yet loses it.
//! With `CLAUDE_CONFIG_DIR` set it keeps Claude Code's status file there
//! (`sessions/<pid>.json`: idle, busy or waiting, and its session id), as
//! Claude Code 2.1.139+ does. `--resume ID` continues session ID (and says so).

use std::io::{Read, Write};
use std::time::{Duration, Instant};

fn raw_mode() {
    use rustix::termios::{tcgetattr, tcsetattr, LocalModes, OptionalActions, SpecialCodeIndex};
    let stdin = std::io::stdin();
    if let Ok(mut t) = tcgetattr(&stdin) {
        t.local_modes &= !(LocalModes::ICANON | LocalModes::ECHO);
        // As Node CLIs' raw mode does: Ctrl-C is a key the agent reads.
        if std::env::var_os("FAKE_AGENT_NO_SIGNALS").is_some() {
            t.local_modes &= !LocalModes::ISIG;
        }
        t.special_codes[SpecialCodeIndex::VMIN] = 1;
        t.special_codes[SpecialCodeIndex::VTIME] = 0;
        let _ = tcsetattr(&stdin, OptionalActions::Now, &t);
    }
}

/// The session it runs: the one resumed, or a new one named after its pid.
fn session_id() -> String {
    let args = cli_args();
    match args.get(1).map(String::as_str) {
        Some("--resume") => args.get(2).cloned().unwrap_or_default(),
        _ => format!("0b7c4f52-2f0e-4c1e-9a57-{:012x}", std::process::id()),
    }
}

/// Writes Claude Code's status file, when `CLAUDE_CONFIG_DIR` names where.
fn status(state: &str) {
    let Some(config) = std::env::var_os("CLAUDE_CONFIG_DIR") else {
        return;
    };
    let sessions = std::path::Path::new(&config).join("sessions");
    let _ = std::fs::create_dir_all(&sessions);
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Field 22, after the command in parentheses.
    let start = stat
        .rsplit(')')
        .next()
        .and_then(|s| s.split_whitespace().nth(19))
        .unwrap_or("0");
    let json = format!(
        "{{\"status\":\"{state}\",\"procStart\":\"{start}\",\"sessionId\":\"{}\"}}",
        session_id()
    );
    // Replaced by a rename, as a careful writer does.
    let file = sessions.join(format!("{}.json", std::process::id()));
    let temp = sessions.join(format!("{}.json.tmp", std::process::id()));
    if std::fs::write(&temp, json).is_ok() {
        let _ = std::fs::rename(&temp, &file);
    }
}

fn draw(body: &str) {
    let mut out = std::io::stdout().lock();
    let _ = write!(
        out,
        "\x1b[2J\x1b[H╭─ Claude Code (fake) ─╮\r\n{}",
        body.replace('\n', "\r\n")
    );
    let _ = out.flush();
}

/// At rest: the last result and the input box, with Claude Code's footer under it
/// (what fugue recognises as ready); the cursor goes back into the box.
fn idle(last: &str) {
    status("idle");
    draw(&format!("│ {last}\n\n> \n  ? for shortcuts\x1b[A\x1b[3G"));
}

/// Works on `prompt`, then asks for permission and waits for the answer.
fn work(prompt: &str, input: &mut impl Read) -> String {
    status("busy");
    draw(&format!("✻ Working on: {prompt} (esc to interrupt)\n"));
    let work_ms = std::env::var("FAKE_AGENT_WORK_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .unwrap_or(800);
    std::thread::sleep(Duration::from_millis(work_ms));
    status("waiting");
    draw(&format!(
        "Bash(echo {prompt})\n\nDo you want to proceed?\n❯ 1. Yes\n  2. No\n\nEsc to cancel"
    ));
    let mut byte = [0u8; 16];
    loop {
        let n = match input.read(&mut byte) {
            Ok(0) | Err(_) => std::process::exit(0),
            Ok(n) => n,
        };
        match &byte[..n] {
            [b'\r', ..] | [b'\n', ..] => return format!("approved: {prompt}"),
            [0x1b] => return format!("denied: {prompt}"),
            _ => {}
        }
    }
}

/// Its arguments, without the `--settings FILE` that fugue's hooks add (as
/// Claude Code takes them; this agent runs no hooks).
fn cli_args() -> Vec<String> {
    let mut args = Vec::new();
    let mut given = std::env::args();
    while let Some(arg) = given.next() {
        if arg == "--settings" {
            given.next();
            continue;
        }
        args.push(arg);
    }
    args
}

fn main() {
    raw_mode();
    let mut input = std::io::stdin().lock();
    let mut last = String::from("ready");
    match cli_args().get(1).cloned() {
        Some(flag) if flag == "--resume" => {
            // A CLI loading a long conversation takes a while to be ready.
            let loading = std::env::var("FAKE_AGENT_RESUME_MS")
                .ok()
                .and_then(|ms| ms.parse().ok());
            if let Some(ms) = loading {
                draw("Resuming the conversation…\n");
                std::thread::sleep(Duration::from_millis(ms));
            }
            last = format!("resumed session {}", session_id());
        }
        Some(first) => last = work(&first, &mut input),
        None => {}
    }
    idle(&last);
    let guard = std::env::var("FAKE_AGENT_PASTE_GUARD_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map(Duration::from_millis);
    if guard.is_some() {
        // Gemini CLI takes pastes bracketed.
        print!("\x1b[?2004h");
        let _ = std::io::stdout().flush();
    }
    // As a CLI whose input box does not listen yet: its first input is lost.
    let mut drop_first = std::env::var_os("FAKE_AGENT_DROP_FIRST_INPUT").is_some();
    let mut paste_ended: Option<Instant> = None;
    let mut line = String::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if std::mem::take(&mut drop_first) {
            continue;
        }
        let raw = String::from_utf8_lossy(&buf[..n]).into_owned();
        if raw.contains("\x1b[201~") {
            paste_ended = Some(Instant::now());
        }
        let text = raw.replace("\x1b[200~", "").replace("\x1b[201~", "");
        for c in text.chars() {
            let too_soon = matches!((guard, paste_ended), (Some(guard), Some(at)) if at.elapsed() < guard);
            match c {
                '\r' | '\n' if too_soon => {}
                '\r' | '\n' if !line.trim().is_empty() => {
                    let prompt = std::mem::take(&mut line);
                    last = work(prompt.trim(), &mut input);
                    idle(&last);
                }
                '\r' | '\n' => {}
                // Ctrl-C clears a draft, as Claude Code's does; at an empty prompt it quits.
                '\u{3}' if !line.is_empty() => {
                    line.clear();
                    idle(&last);
                }
                '\u{3}' => return,
                c if !c.is_control() => {
                    line.push(c);
                    print!("{c}");
                    let _ = std::io::stdout().flush();
                }
                _ => {}
            }
        }
    }
}
