//! An agent's final message: what it answered at the end of its turn, read
//! from the transcript the agent writes itself where it writes one (Claude
//! Code: `<config>/projects/<project>/<session id>.jsonl`; Codex:
//! `<codex home>/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl`),
//! else the screen's last lines, marked as such. The files are found through
//! the agent process's own environment (`HOME`, `CLAUDE_CONFIG_DIR`,
//! `CODEX_HOME`), since a pane's environment need not be this process's.

use crate::Client;
use fugue_protocol::{AgentKind, CaptureWhat};
use serde::Serialize;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

#[cfg(feature = "schema")]
use schemars::JsonSchema;

/// The end of a transcript read: the final message is near it.
const TAIL_BYTES: u64 = 2 * 1024 * 1024;
/// Longest final message returned, in characters.
pub const MAX_MESSAGE_CHARS: usize = 16_000;
/// Directory entries looked at when searching for a transcript.
const MAX_ENTRIES: usize = 10_000;
/// Lines of the screen returned when no transcript says.
const SCREEN_LINES: usize = 40;
/// The longest a transcript that does not yet record the turn's end is waited for.
const SETTLE_AT_MOST: std::time::Duration = std::time::Duration::from_secs(10);

/// An agent's final message and where it was read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct FinalMessage {
    pub text: String,
    /// `transcript` (the agent's own record of its answer) or `screen` (the
    /// screen's last lines: an approximation, the answer among other things).
    pub source: String,
    /// The transcript read, when one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transcript: Option<String>,
}

/// The final message of the agent in `pane`.
pub async fn final_message(client: &Client, pane: &str) -> crate::Result<FinalMessage> {
    let info = client.pane_status(pane).await?;
    if let Some(session) = &info.agent_session {
        let (kind, id, pid) = (session.agent, session.id.clone(), info.pid);
        let found = tokio::task::spawn_blocking(move || from_transcript(kind, &id, pid))
            .await
            .ok()
            .flatten();
        if let Some(found) = found {
            return Ok(found);
        }
    }
    let screen = client
        .capture(pane, CaptureWhat::Screen, (None, None), false, true)
        .await?;
    Ok(FinalMessage {
        text: screen_answer(&screen.lines),
        source: "screen".into(),
        transcript: None,
    })
}

fn from_transcript(kind: AgentKind, id: &str, pid: u32) -> Option<FinalMessage> {
    let env = Environ::of(pid);
    let path = match kind {
        AgentKind::Claude => {
            let config = env.get("CLAUDE_CONFIG_DIR").or_else(|| env.home(".claude"))?;
            find_claude_transcript(&config, id)?
        }
        AgentKind::Codex => {
            let home = env.get("CODEX_HOME").or_else(|| env.home(".codex"))?;
            find_codex_transcript(&home, id)?
        }
        _ => return None,
    };
    let tail = settled_tail(kind, &path)?;
    let text = last_message(kind, &tail)?;
    Some(FinalMessage {
        text,
        source: "transcript".into(),
        transcript: Some(path.display().to_string()),
    })
}

/// A process's environment, as `/proc/PID/environ` holds it.
struct Environ(Vec<u8>);

impl Environ {
    fn of(pid: u32) -> Self {
        Environ(std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default())
    }

    fn get(&self, name: &str) -> Option<PathBuf> {
        let prefix = format!("{name}=");
        self.0
            .split(|b| *b == 0)
            .find_map(|v| v.strip_prefix(prefix.as_bytes()))
            .filter(|v| !v.is_empty())
            .map(|v| PathBuf::from(String::from_utf8_lossy(v).into_owned()))
    }

    fn home(&self, dir: &str) -> Option<PathBuf> {
        self.get("HOME").map(|home| home.join(dir))
    }
}

/// `<config>/projects/*/<id>.jsonl` (the project folder is the working
/// directory with its separators replaced; which one is not guessed).
fn find_claude_transcript(config: &Path, id: &str) -> Option<PathBuf> {
    let name = format!("{id}.jsonl");
    std::fs::read_dir(config.join("projects"))
        .ok()?
        .flatten()
        .take(MAX_ENTRIES)
        .map(|project| project.path().join(&name))
        .find(|path| path.is_file())
}

/// `<home>/sessions/YYYY/MM/DD/rollout-*-<id>.jsonl`, newest days first.
fn find_codex_transcript(home: &Path, id: &str) -> Option<PathBuf> {
    let suffix = format!("-{id}.jsonl");
    let newest = |dir: &Path| -> Vec<PathBuf> {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .take(MAX_ENTRIES)
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        entries.sort();
        entries.reverse();
        entries
    };
    for year in newest(&home.join("sessions")).into_iter().take(2) {
        for month in newest(&year).into_iter().take(2) {
            for day in newest(&month).into_iter().take(3) {
                let found = std::fs::read_dir(&day)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .take(MAX_ENTRIES)
                    .map(|e| e.path())
                    .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().ends_with(&suffix)));
                if found.is_some() {
                    return found;
                }
            }
        }
    }
    None
}

/// The transcript's end once it records the turn's end (Claude Code: a
/// `turn_duration` note; Codex: `task_complete`), looked at each time the
/// file changes, for at most [`SETTLE_AT_MOST`]: an agent can look done a
/// moment before its transcript has the last answer. Past that, its end as it is.
fn settled_tail(kind: AgentKind, path: &Path) -> Option<String> {
    let started = std::time::Instant::now();
    let modified = || std::fs::metadata(path).and_then(|m| m.modified()).ok();
    loop {
        let seen = modified();
        let tail = read_tail(path)?;
        if turn_ended(kind, &tail) || started.elapsed() >= SETTLE_AT_MOST {
            return Some(tail);
        }
        // Until the file changes (checked every 100 ms), or the time is up.
        while modified() == seen && started.elapsed() < SETTLE_AT_MOST {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

/// Whether a transcript's last entry says the turn is over.
pub fn turn_ended(kind: AgentKind, transcript: &str) -> bool {
    let Some(last) = transcript
        .lines()
        .rev()
        .find_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
    else {
        return false;
    };
    match kind {
        AgentKind::Claude => {
            last["type"] == "system" && matches!(last["subtype"].as_str(), Some("turn_duration" | "stop_hook_summary"))
        }
        AgentKind::Codex => transcript.lines().rev().take(8).any(|line| {
            serde_json::from_str::<serde_json::Value>(line)
                .is_ok_and(|e| e["type"] == "event_msg" && e["payload"]["type"] == "task_complete")
        }),
        _ => true,
    }
}

/// The last [`TAIL_BYTES`] of a file, from its first whole line.
fn read_tail(path: &Path) -> Option<String> {
    let mut file = std::fs::File::open(path).ok()?;
    let length = file.metadata().ok()?.len();
    let start = length.saturating_sub(TAIL_BYTES);
    file.seek(SeekFrom::Start(start)).ok()?;
    let mut bytes = Vec::new();
    file.take(TAIL_BYTES).read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    Some(match start {
        0 => text,
        _ => text
            .split_once('\n')
            .map(|(_, rest)| rest.to_string())
            .unwrap_or_default(),
    })
}

/// The agent's last answer in a transcript's lines (JSON Lines), if any.
pub fn last_message(kind: AgentKind, transcript: &str) -> Option<String> {
    let text = transcript
        .lines()
        .rev()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find_map(|entry| match kind {
            AgentKind::Claude => claude_answer(&entry),
            AgentKind::Codex => codex_answer(&entry),
            _ => None,
        })?;
    Some(clip(&text))
}

/// `{"type":"assistant","message":{"content":[{"type":"text","text":...}]}}`
fn claude_answer(entry: &serde_json::Value) -> Option<String> {
    if entry["type"] != "assistant" {
        return None;
    }
    texts(&entry["message"]["content"], "text")
}

/// `{"type":"event_msg","payload":{"type":"agent_message","message":...}}`, or
/// `{"type":"response_item","payload":{"type":"message","role":"assistant",
/// "content":[{"type":"output_text","text":...}]}}`.
fn codex_answer(entry: &serde_json::Value) -> Option<String> {
    let payload = &entry["payload"];
    match (entry["type"].as_str(), payload["type"].as_str()) {
        (Some("event_msg"), Some("agent_message")) => payload["message"]
            .as_str()
            .filter(|m| !m.trim().is_empty())
            .map(String::from),
        (Some("response_item"), Some("message")) if payload["role"] == "assistant" => {
            texts(&payload["content"], "output_text")
        }
        _ => None,
    }
}

/// The `text` of every content item of `kind`, joined; `None` when empty.
fn texts(content: &serde_json::Value, kind: &str) -> Option<String> {
    let joined = content
        .as_array()?
        .iter()
        .filter(|item| item["type"] == kind)
        .filter_map(|item| item["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    (!joined.trim().is_empty()).then_some(joined)
}

/// The screen's last lines with text, as one answer.
fn screen_answer(lines: &[String]) -> String {
    let kept: Vec<&str> = lines
        .iter()
        .map(|l| l.trim_end())
        .skip_while(|l| l.is_empty())
        .collect();
    let end = kept.iter().rposition(|l| !l.is_empty()).map_or(0, |i| i + 1);
    let start = end.saturating_sub(SCREEN_LINES);
    clip(&kept[start..end].join("\n"))
}

/// Without what must not reach a terminal raw, at most [`MAX_MESSAGE_CHARS`].
fn clip(text: &str) -> String {
    let clean = fugue_protocol::limits::strip_unsafe(text.trim());
    clean.chars().take(MAX_MESSAGE_CHARS).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_answer_is_read_from_each_transcript() {
        let claude = [
            r#"{"type":"user","message":{"role":"user","content":"fix it"}}"#,
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Looking."}]}}"#,
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Edit"}]}}"#,
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Fixed \u001b[31mit\u001b[0m."}]}}"#,
            r#"{"type":"system","subtype":"stop"}"#,
            "not json",
        ]
        .join("\n");
        assert_eq!(
            last_message(AgentKind::Claude, &claude).as_deref(),
            Some("Fixed [31mit[0m.")
        );
        let codex = [
            r#"{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Earlier."}]}}"#,
            r#"{"type":"event_msg","payload":{"type":"agent_message","message":"Done: tests pass."}}"#,
            r#"{"type":"event_msg","payload":{"type":"token_count"}}"#,
        ]
        .join("\n");
        assert_eq!(
            last_message(AgentKind::Codex, &codex).as_deref(),
            Some("Done: tests pass.")
        );
        assert_eq!(last_message(AgentKind::Codex, "{}"), None);
        assert!(!turn_ended(AgentKind::Claude, &claude));
        let ended = format!("{claude}\n{}", r#"{"type":"system","subtype":"turn_duration"}"#);
        assert!(turn_ended(AgentKind::Claude, &ended));
        assert!(!turn_ended(AgentKind::Codex, &codex));
        let done = format!(
            "{codex}\n{}",
            r#"{"type":"event_msg","payload":{"type":"task_complete"}}"#
        );
        assert!(turn_ended(AgentKind::Codex, &done));
        assert_eq!(last_message(AgentKind::Gemini, &claude), None);
    }

    #[test]
    fn the_screen_answer_is_its_last_lines_with_text() {
        let lines: Vec<String> = ["", "first", "", "answer", "   ", ""].map(String::from).to_vec();
        assert_eq!(screen_answer(&lines), "first\n\nanswer");
        assert_eq!(screen_answer(&[]), "");
    }

    #[test]
    fn transcripts_are_found_under_the_agent_s_own_home() {
        let home = tempfile::tempdir().unwrap();
        let project = home.path().join(".claude/projects/-tmp-w");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(project.join("abc.jsonl"), "{}").unwrap();
        assert_eq!(
            find_claude_transcript(&home.path().join(".claude"), "abc"),
            Some(project.join("abc.jsonl"))
        );
        let day = home.path().join(".codex/sessions/2026/11/28");
        std::fs::create_dir_all(&day).unwrap();
        let rollout = day.join("rollout-2026-11-28T10-00-00-0123-id.jsonl");
        std::fs::write(&rollout, "{}").unwrap();
        std::fs::create_dir_all(home.path().join(".codex/sessions/2026/10/01")).unwrap();
        assert_eq!(
            find_codex_transcript(&home.path().join(".codex"), "0123-id"),
            Some(rollout)
        );
        assert_eq!(find_codex_transcript(&home.path().join(".codex"), "other"), None);
    }
}
