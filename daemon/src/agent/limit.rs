//! A turn that ended on a usage or rate limit, as the agent's screen shows
//! it: the CLI's own error line near the bottom (agents.toml's `limited`),
//! and when the limit resets, from the CLI's words.

use super::detect::{dialog_digest, is_frame, limit_markers, shows};
use fugue_protocol::{AgentKind, AgentState, StateSource, TurnState};

/// How many non-blank lines (frames are blank) at the bottom of the screen a
/// limit's line must be among: the CLI's error sits right above its input box; one further up
/// is an earlier turn's (or the agent's own prose about limits).
const LIMIT_LINES_FROM_BOTTOM: usize = 10;

/// A usage or rate limit the agent's last turn ended on, as its screen shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitSeen {
    /// The lines that say so.
    pub lines: Vec<String>,
    /// When it resets (Unix ms), when the CLI says.
    pub resets_at_ms: Option<u64>,
    pub digest: u64,
}

/// The limit the screen shows near its bottom (agents.toml's `limited`), if
/// any; `now` is the local time the CLI wrote a reset time in.
pub fn limit_on(kind: AgentKind, screen: &[String], now: chrono::DateTime<chrono::Local>) -> Option<LimitSeen> {
    let limited = limit_markers(kind);
    if limited.is_empty() {
        return None;
    }
    let is_limit = |line: &String| {
        let lower = line.to_lowercase();
        limited.iter().any(|n| shows(&lower, n))
    };
    // A frame's own lines (a dialog's border, its padding) say nothing.
    let blank = |line: &String| line.chars().all(|c| c.is_whitespace() || is_frame(c));
    // The screen's last non-blank lines, by index, bottom first.
    let bottom: Vec<usize> = (0..screen.len())
        .rev()
        .filter(|&i| !blank(&screen[i]))
        .take(LIMIT_LINES_FROM_BOTTOM)
        .collect();
    let at = bottom.iter().copied().find(|&i| is_limit(&screen[i]))?;
    // The limit's line and what wraps below it, up to a blank line.
    let lines: Vec<String> = screen[at..]
        .iter()
        .take_while(|line| !blank(line))
        .take(3)
        .map(|line| {
            line.trim_matches(|c: char| c.is_whitespace() || is_frame(c))
                .to_string()
        })
        .collect();
    let text = lines.join(" ");
    let marked: Vec<String> = bottom
        .iter()
        .filter(|&&i| is_limit(&screen[i]))
        .map(|&i| screen[i].trim().to_string())
        .collect();
    Some(LimitSeen {
        resets_at_ms: reset_time(&text, now),
        digest: dialog_digest(&marked),
        lines,
    })
}

/// When a limit resets, from the CLI's words: "try again at 1:58 PM" (Codex),
/// "resets 5pm", "resets at 17:00", "try again in 3m 20s" / "in 2 hours". A
/// clock time is the next one to come in local time (the CLI's own zone).
pub fn reset_time(text: &str, now: chrono::DateTime<chrono::Local>) -> Option<u64> {
    let lower = text.to_lowercase().replace('\u{202f}', " ");
    for lead in ["try again at ", "resets at ", "reset at ", "resets "] {
        if let Some(rest) = lower.split(lead).nth(1) {
            if let Some(at) = clock_time(rest, now) {
                return Some(at);
            }
        }
    }
    let rest = lower.split("try again in ").nth(1)?;
    let mut seconds = 0u64;
    let mut words = rest
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty());
    while let Some(word) = words.next() {
        let digits: String = word.chars().take_while(char::is_ascii_digit).collect();
        let Ok(n) = digits.parse::<u64>() else { break };
        let unit = match &word[digits.len()..] {
            "" => words.next().unwrap_or(""),
            unit => unit,
        };
        let factor = match unit.trim_end_matches(['.', ',']) {
            u if u.starts_with('d') => 86_400,
            u if u.starts_with('h') => 3_600,
            u if u.starts_with("mi") || u == "m" => 60,
            u if u.starts_with('s') => 1,
            _ => break,
        };
        seconds = seconds.saturating_add(n.saturating_mul(factor));
    }
    (seconds > 0).then(|| (now.timestamp_millis().max(0) as u64).saturating_add(seconds.saturating_mul(1000)))
}

/// `1:58 pm`, `5pm`, `17:00` at the start of `text`: the next such local time.
fn clock_time(text: &str, now: chrono::DateTime<chrono::Local>) -> Option<u64> {
    let text = text.trim_start();
    let word: String = text.chars().take_while(|c| c.is_ascii_digit() || *c == ':').collect();
    let after = text[word.len()..].trim_start();
    let (hour, minute) = match word.split_once(':') {
        Some((h, m)) => (h.parse::<u32>().ok()?, m.parse::<u32>().ok()?),
        None => (word.parse::<u32>().ok()?, 0),
    };
    let pm = after.starts_with("pm") || after.starts_with("p.m");
    let am = after.starts_with("am") || after.starts_with("a.m");
    let hour = match (pm, am) {
        (true, _) if hour < 12 => hour + 12,
        (_, true) if hour == 12 => 0,
        _ => hour,
    };
    let time = chrono::NaiveTime::from_hms_opt(hour, minute, 0)?;
    // A zone the CLI names (Gemini CLI says "UTC"); else its own local time.
    let utc = after
        .split_whitespace()
        .take(2)
        .any(|w| matches!(w.trim_end_matches(['.', ',', ')']), "utc" | "gmt"));
    match utc {
        true => next_at(now.with_timezone(&chrono::Utc), time),
        false => next_at(now, time),
    }
}

/// The end of the next minute `time` of day in `now`'s zone, Unix ms: a CLI
/// that shows minutes rounds its reset down, and a prompt sent before the
/// reset would be refused again, so the minute counts until its end.
fn next_at<Z: chrono::TimeZone>(now: chrono::DateTime<Z>, time: chrono::NaiveTime) -> Option<u64> {
    let zone = now.timezone();
    let today = now.date_naive().and_time(time) + chrono::Duration::minutes(1);
    let at = zone.from_local_datetime(&today).earliest()?;
    let at = match at <= now {
        true => zone
            .from_local_datetime(&(today + chrono::Duration::days(1)))
            .earliest()?,
        false => at,
    };
    u64::try_from(at.timestamp_millis()).ok()
}

/// The state with the limit the screen shows: an agent whose screen is at
/// rest (`idle`, a quiet `unknown`, or `starting` once recognised: a first
/// turn that ended on a limit never showed running) with the CLI's limit
/// line near its bottom is `limited`, with those lines and the reset time.
/// Gemini CLI keeps its turn open under its quota dialog (its hooks and
/// title say busy): the screen's limit decides. A turn the screen shows
/// running makes those lines history: the same lines never count again.
/// Waiting for a person outranks a limit.
pub fn with_limit(
    memory: &mut super::detect::AgentMemory,
    (state, source, evidence): (AgentState, StateSource, Vec<String>),
    screen: &super::detect::ScreenVerdict,
    limit: Option<LimitSeen>,
) -> (AgentState, StateSource, Vec<String>, Option<u64>) {
    if screen.sure && screen.state.turn() == TurnState::Running {
        memory.limit_spent = limit
            .as_ref()
            .map(|l| l.digest)
            .or(memory.limit_shown)
            .or(memory.limit_spent);
        memory.limit_shown = None;
        return (state, source, evidence, None);
    }
    let screen_at_rest = match screen.state {
        AgentState::Idle | AgentState::Unknown => true,
        AgentState::Starting => memory.recognised,
        _ => false,
    };
    let needs_a_person = matches!(state, AgentState::WaitingForPermission | AgentState::WaitingForAnswer);
    match limit {
        Some(limit) if screen_at_rest && !needs_a_person && memory.limit_spent != Some(limit.digest) => {
            memory.limit_shown = Some(limit.digest);
            (
                AgentState::Limited,
                StateSource::Screen,
                limit.lines,
                limit.resets_at_ms,
            )
        }
        _ => (state, source, evidence, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone as _;

    fn at(h: u32, m: u32) -> chrono::DateTime<chrono::Local> {
        chrono::Local.with_ymd_and_hms(2026, 11, 29, h, m, 0).unwrap()
    }

    fn screen(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn reset_times_in_the_clis_words() {
        let now = at(13, 0);
        // The end of the minute shown.
        let ms = |h, m| Some(at(h, m).timestamp_millis() as u64 + 60_000);
        assert_eq!(reset_time("or try again at 1:58 PM.", now), ms(13, 58));
        assert_eq!(reset_time("Access resets at 2:02 PM UTC.", now), ms(14, 2));
        assert_eq!(reset_time("5-hour limit reached ∙ resets 5pm", now), ms(17, 0));
        assert_eq!(reset_time("resets at 17:30", now), ms(17, 30));
        // A time already past today is tomorrow's.
        assert_eq!(
            reset_time("try again at 9:00 AM", now),
            Some(at(9, 1).timestamp_millis() as u64 + 86_400_000)
        );
        assert_eq!(reset_time("12:15 am", now), None, "no lead-in: not a reset");
        assert_eq!(
            reset_time("Please try again in 3m 20s.", now),
            Some(now.timestamp_millis() as u64 + 200_000)
        );
        assert_eq!(
            reset_time("try again in 2 hours", now),
            Some(now.timestamp_millis() as u64 + 7_200_000)
        );
        assert_eq!(reset_time("try again at 99:99", now), None);
        // This very minute: it resets at its end, not tomorrow.
        assert_eq!(reset_time("try again at 1:00 PM", at(13, 0)), ms(13, 0));
        assert_eq!(reset_time("try again later", now), None);
    }

    #[test]
    fn a_limit_counts_only_near_the_bottom() {
        let now = at(13, 0);
        let codex = screen(&[
            "› LIMIT=3600 FILE=c.txt",
            "■ You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/",
            "usage to purchase more credits or try again at 1:58 PM.",
            "",
            "› Ask Codex to do anything",
            "  gpt-stub default · /tmp/cx/proj",
        ]);
        let seen = limit_on(AgentKind::Codex, &codex, now).expect("a limit");
        assert_eq!(seen.resets_at_ms, Some(at(13, 59).timestamp_millis() as u64));
        assert_eq!(seen.lines.len(), 2, "{:?}", seen.lines);
        let claude = screen(&[
            "● API Error: Request rejected (429) · This request would exceed your organization's rate limit of 50,000 input",
            "  tokens per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits.",
            "────────",
            "❯ Resend your message to try again",
            "────────",
            "  ⏸ manual mode on · ? for shortcuts",
        ]);
        let seen = limit_on(AgentKind::Claude, &claude, now).expect("a limit");
        assert_eq!(seen.resets_at_ms, None);
        // Far above the input box (an older turn's, or prose): not a limit.
        let mut old = claude.clone();
        old.extend((0..12).map(|i| format!("● later output line {i}")));
        assert!(limit_on(AgentKind::Claude, &old, now).is_none());
        // Two of them are another limit than one.
        let mut again = claude.clone();
        again.insert(1, "● API Error: Request rejected (429) · again".into());
        assert_ne!(limit_on(AgentKind::Claude, &again, now).unwrap().digest, seen.digest);
        let gemini = screen(&[
            "╭──────────────────────────────────────────╮",
            "│                                          │",
            "│ Usage limit reached for all Pro models.  │",
            "│ Access resets at 2:02 PM UTC.            │",
            "│ /stats model for usage details           │",
            "│ /model to switch models.                 │",
            "│                                          │",
            "│ ● 1. Keep trying                         │",
            "│   2. Stop                                │",
            "│                                          │",
            "╰──────────────────────────────────────────╯",
            "⚠  Warning: True color (24-bit) support not detected. Using a terminal with true color enabled will result in a better",
            "   visual experience.",
        ]);
        let seen = limit_on(AgentKind::Gemini, &gemini, now).expect("a limit");
        assert_eq!(seen.lines[0], "Usage limit reached for all Pro models.");
        assert_eq!(seen.resets_at_ms, Some(at(14, 3).timestamp_millis() as u64));
        // An agent without markers for it.
        assert!(limit_on(AgentKind::Aider, &claude, now).is_none());
    }
}
