//! Recognising agent CLIs (Claude Code, Codex, Gemini) in a pane and what they are
//! doing, from the rendered screen: the same string can mean different things in
//! different agents, so each has its own markers.
//!
//! Pure functions of the screen, the pane's command and how long the screen has
//! been quiet: waiting and idle need the screen to have settled, so a prompt that
//! flashes by mid-redraw is not reported.

use fugue_protocol::{AgentKind, AgentState};
use std::time::Duration;

/// A screen must be this quiet before it counts as waiting for permission.
pub const WAITING_SETTLE: Duration = Duration::from_millis(300);
/// ... and this quiet, with no busy marker, before it counts as idle.
pub const IDLE_SETTLE: Duration = Duration::from_millis(1500);

struct Markers {
    waiting: &'static [&'static str],
    busy: &'static [&'static str],
}

fn markers(kind: AgentKind) -> Markers {
    match kind {
        AgentKind::Claude => Markers {
            waiting: &["do you want to proceed?", "esc to cancel", "❯ 1."],
            busy: &["esc to interrupt"],
        },
        AgentKind::Codex => Markers {
            waiting: &["press enter to confirm or esc to cancel", "allow command?"],
            busy: &["esc to interrupt", "esc interrupt"],
        },
        AgentKind::Gemini => Markers {
            waiting: &["waiting for user confirmation", "allow execution"],
            busy: &["esc to cancel"],
        },
    }
}

/// The agent running in a pane, from its command or, failing that, its screen.
pub fn detect_kind(command: &[String], screen: &[String]) -> Option<AgentKind> {
    let program = command
        .first()
        .map(|c| c.split_whitespace().next().unwrap_or(c))
        .unwrap_or("");
    let name = program.rsplit('/').next().unwrap_or(program).to_ascii_lowercase();
    let by_name = [
        ("claude", AgentKind::Claude),
        ("codex", AgentKind::Codex),
        ("gemini", AgentKind::Gemini),
    ];
    if let Some((_, kind)) = by_name.iter().find(|(n, _)| name.contains(n)) {
        return Some(*kind);
    }
    let text = screen.join("\n").to_ascii_lowercase();
    let by_screen = [
        ("claude code", AgentKind::Claude),
        ("openai codex", AgentKind::Codex),
        (">_ codex", AgentKind::Codex),
        ("gemini cli", AgentKind::Gemini),
    ];
    by_screen
        .iter()
        .find(|(marker, _)| text.contains(marker))
        .map(|(_, kind)| *kind)
}

/// The agent's state and the lines that decided it.
pub fn detect_state(kind: AgentKind, screen: &[String], quiet: Duration, exited: bool) -> (AgentState, Vec<String>) {
    if exited {
        return (AgentState::Exited, Vec::new());
    }
    let markers = markers(kind);
    let lines_with = |needles: &[&str]| -> Vec<String> {
        screen
            .iter()
            .filter(|line| {
                let lower = line.to_lowercase();
                needles.iter().any(|n| lower.contains(n))
            })
            .map(|line| line.trim().to_string())
            .collect()
    };
    let waiting = lines_with(markers.waiting);
    if !waiting.is_empty() && quiet >= WAITING_SETTLE {
        return (AgentState::WaitingForPermission, waiting);
    }
    let busy = lines_with(markers.busy);
    if !busy.is_empty() {
        return (AgentState::Busy, busy);
    }
    if quiet >= IDLE_SETTLE {
        return (AgentState::Idle, Vec::new());
    }
    // Output is still flowing (or a prompt has not settled yet).
    (AgentState::Busy, waiting)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    const SETTLED: Duration = Duration::from_secs(2);

    #[test]
    fn kinds_from_command_or_screen() {
        assert_eq!(detect_kind(&["/usr/bin/claude".into()], &[]), Some(AgentKind::Claude));
        assert_eq!(detect_kind(&["codex --full-auto".into()], &[]), Some(AgentKind::Codex));
        assert_eq!(
            detect_kind(&["bash".into()], &screen(&["╭ Claude Code ╮"])),
            Some(AgentKind::Claude)
        );
        assert_eq!(detect_kind(&["bash".into()], &screen(&["$ ls"])), None);
    }

    #[test]
    fn claude_states() {
        let waiting = screen(&["Bash(rm -rf build)", "Do you want to proceed?", "❯ 1. Yes", "  2. No"]);
        let (state, evidence) = detect_state(AgentKind::Claude, &waiting, SETTLED, false);
        assert_eq!(state, AgentState::WaitingForPermission);
        assert_eq!(evidence, vec!["Do you want to proceed?", "❯ 1. Yes"]);
        // Not settled yet: not reported as waiting.
        let (state, _) = detect_state(AgentKind::Claude, &waiting, Duration::from_millis(50), false);
        assert_eq!(state, AgentState::Busy);
        let busy = screen(&["✻ Thinking… (12s · esc to interrupt)"]);
        assert_eq!(
            detect_state(AgentKind::Claude, &busy, SETTLED, false).0,
            AgentState::Busy
        );
        assert_eq!(
            detect_state(AgentKind::Claude, &screen(&["> "]), SETTLED, false).0,
            AgentState::Idle
        );
        assert_eq!(
            detect_state(AgentKind::Claude, &screen(&["> "]), Duration::ZERO, false).0,
            AgentState::Busy
        );
        assert_eq!(
            detect_state(AgentKind::Claude, &busy, SETTLED, true).0,
            AgentState::Exited
        );
    }

    #[test]
    fn the_same_words_mean_different_things_per_agent() {
        let line = screen(&["(esc to cancel)"]);
        assert_eq!(
            detect_state(AgentKind::Claude, &line, SETTLED, false).0,
            AgentState::WaitingForPermission
        );
        assert_eq!(
            detect_state(AgentKind::Gemini, &line, SETTLED, false).0,
            AgentState::Busy
        );
        let codex = screen(&["Allow command?", "press enter to confirm or esc to cancel"]);
        assert_eq!(
            detect_state(AgentKind::Codex, &codex, SETTLED, false).0,
            AgentState::WaitingForPermission
        );
    }
}
