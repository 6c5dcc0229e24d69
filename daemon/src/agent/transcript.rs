//! The tokens an agent's session used, read from the transcript its CLI
//! writes: Claude Code's `<config>/projects/<dir>/<session>.jsonl` (each
//! answer's `message.usage`, repeated on every line of that answer: counted
//! once per message id) and Codex's rollout (`token_count` events carrying
//! the session's running total). Read incrementally, from where the last
//! look stopped, at most [`READ_PER_LOOK`] a look: a long session costs a
//! look no more than its new lines.

use fugue_protocol::{AgentKind, TokenTotals};
use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::{Path, PathBuf};

/// New transcript bytes read in one look, at most.
const READ_PER_LOOK: u64 = 1 << 20;
/// A line longer than this (a huge tool result) is skipped unread.
const MAX_LINE: usize = 1 << 20;

/// Claude Code's transcript of session `id` run in `cwd`, beside the status
/// file at `status_file` (`<config>/sessions/<pid>.json`): Claude Code names
/// a project's directory by its path with every character but letters and
/// digits made `-`.
pub fn claude_transcript(status_file: &Path, cwd: &str, id: &str) -> Option<PathBuf> {
    let config = status_file.parent()?.parent()?;
    let dir: String = cwd
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    Some(config.join("projects").join(dir).join(format!("{id}.jsonl")))
}

/// What was counted of one transcript so far.
#[derive(Debug, Default)]
pub struct TokenCount {
    path: Option<PathBuf>,
    offset: u64,
    /// An unfinished last line, kept for the next look.
    partial: Vec<u8>,
    /// Skipping the rest of a line over [`MAX_LINE`].
    skipping: bool,
    /// Claude Code: the answers counted, and the one being written.
    done: TokenTotals,
    current: Option<(String, TokenTotals)>,
    /// Codex: the latest running total.
    total: Option<TokenTotals>,
}

impl TokenCount {
    /// Reads what `kind`'s transcript at `path` gained since the last call
    /// (from its start when the path changed); the totals so far, `None`
    /// until one usage was read. Blocking.
    pub fn read(&mut self, kind: AgentKind, path: &Path) -> Option<TokenTotals> {
        if self.path.as_deref() != Some(path) {
            *self = TokenCount {
                path: Some(path.to_path_buf()),
                ..TokenCount::default()
            };
        }
        if let Ok(mut file) = std::fs::File::open(path) {
            let mut fresh = Vec::new();
            let read = file
                .seek(SeekFrom::Start(self.offset))
                .and_then(|_| file.by_ref().take(READ_PER_LOOK).read_to_end(&mut fresh));
            if let Ok(n) = read {
                self.offset += n as u64;
                self.take(kind, &fresh);
            }
        }
        self.totals()
    }

    fn totals(&self) -> Option<TokenTotals> {
        if let Some(total) = self.total {
            return Some(total);
        }
        let current = self.current.as_ref().map(|(_, t)| *t);
        (self.done != TokenTotals::default() || current.is_some()).then(|| add(self.done, current.unwrap_or_default()))
    }

    /// Counts the complete lines in `bytes` (after what an earlier read left).
    fn take(&mut self, kind: AgentKind, bytes: &[u8]) {
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|b| *b == b'\n') {
            let (line, after) = rest.split_at(end);
            rest = &after[1..];
            if std::mem::take(&mut self.skipping) {
                self.partial.clear();
                continue;
            }
            let mut whole = std::mem::take(&mut self.partial);
            whole.extend_from_slice(line);
            self.line(kind, &whole);
        }
        if self.partial.len() + rest.len() > MAX_LINE {
            self.partial.clear();
            self.skipping = true;
        } else if !self.skipping {
            self.partial.extend_from_slice(rest);
        }
    }

    fn line(&mut self, kind: AgentKind, line: &[u8]) {
        // Most lines carry no usage: skip them unparsed.
        let wanted = match kind {
            AgentKind::Codex => b"token_count".as_slice(),
            _ => b"\"usage\"".as_slice(),
        };
        if !line.windows(wanted.len()).any(|w| w == wanted) {
            return;
        }
        let Ok(value) = serde_json::from_slice::<serde_json::Value>(line) else {
            return;
        };
        let number = |v: &serde_json::Value, key: &str| v[key].as_u64().unwrap_or(0);
        match kind {
            AgentKind::Codex => {
                let usage = &value["payload"]["info"]["total_token_usage"];
                if usage.is_object() {
                    self.total = Some(TokenTotals {
                        input: number(usage, "input_tokens"),
                        cached_input: number(usage, "cached_input_tokens"),
                        output: number(usage, "output_tokens"),
                    });
                }
            }
            _ => {
                let message = &value["message"];
                let usage = &message["usage"];
                let Some(id) = message["id"].as_str() else { return };
                if !usage.is_object() {
                    return;
                }
                let cached = number(usage, "cache_read_input_tokens");
                let this = TokenTotals {
                    input: number(usage, "input_tokens")
                        .saturating_add(cached)
                        .saturating_add(number(usage, "cache_creation_input_tokens")),
                    cached_input: cached,
                    output: number(usage, "output_tokens"),
                };
                match &mut self.current {
                    // A later line of the same answer: its usage so far.
                    Some((current, totals)) if current == id => *totals = this,
                    _ => {
                        if let Some((_, finished)) = self.current.take() {
                            self.done = add(self.done, finished);
                        }
                        self.current = Some((id.to_string(), this));
                    }
                }
            }
        }
    }
}

fn add(a: TokenTotals, b: TokenTotals) -> TokenTotals {
    TokenTotals {
        input: a.input.saturating_add(b.input),
        cached_input: a.cached_input.saturating_add(b.cached_input),
        output: a.output.saturating_add(b.output),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    #[test]
    fn claude_answers_count_once_and_lines_may_arrive_in_pieces() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let answer = |id: &str, output: u64| {
            format!(
                "{{\"type\":\"assistant\",\"message\":{{\"id\":\"{id}\",\"usage\":{{\"input_tokens\":10,\"cache_read_input_tokens\":5,\"output_tokens\":{output}}}}}}}\n"
            )
        };
        let mut file = std::fs::File::create(&path).unwrap();
        let mut count = TokenCount::default();
        assert_eq!(count.read(AgentKind::Claude, &path), None);
        // One answer written as two lines (text, then a tool call), then half
        // of the next answer's line.
        let second = answer("m2", 7);
        write!(
            file,
            "{}{}{{\"type\":\"user\"}}\n{}",
            answer("m1", 3),
            answer("m1", 8),
            &second[..20]
        )
        .unwrap();
        let first = count.read(AgentKind::Claude, &path).unwrap();
        assert_eq!((first.input, first.cached_input, first.output), (15, 5, 8));
        write!(file, "{}", &second[20..]).unwrap();
        let both = count.read(AgentKind::Claude, &path).unwrap();
        assert_eq!((both.input, both.cached_input, both.output), (30, 10, 15));
        // Nothing new: the same.
        assert_eq!(count.read(AgentKind::Claude, &path), Some(both));
    }

    #[test]
    fn codex_keeps_its_running_total_and_a_huge_line_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rollout.jsonl");
        let total = |input: u64, output: u64| {
            format!(
                "{{\"type\":\"event_msg\",\"payload\":{{\"type\":\"token_count\",\"info\":{{\"total_token_usage\":{{\"input_tokens\":{input},\"cached_input_tokens\":2,\"output_tokens\":{output}}}}}}}}}\n"
            )
        };
        let huge = format!("{{\"x\":\"{}\"}}\n", "a".repeat(MAX_LINE + 10));
        std::fs::write(&path, format!("{}{huge}{}", total(12, 8), total(24, 16))).unwrap();
        let mut count = TokenCount::default();
        let mut last = None;
        // A megabyte a look: the huge line takes two.
        for _ in 0..4 {
            last = count.read(AgentKind::Codex, &path);
        }
        let last = last.unwrap();
        assert_eq!((last.input, last.cached_input, last.output), (24, 2, 16));
    }

    #[test]
    fn claude_names_a_projects_directory_by_its_path() {
        let path = claude_transcript(Path::new("/h/.claude/sessions/42.json"), "/tmp/fugue-test.x/p_1", "abc").unwrap();
        assert_eq!(path, Path::new("/h/.claude/projects/-tmp-fugue-test-x-p-1/abc.jsonl"));
    }
}
