//! Review comments on an agent's changes, sent back to it as one prompt.
//!
//! Comments come from the browser's Changes view, from MCP, or from
//! `fugue review`, which opens the diff in `$EDITOR` and reads back the lines
//! the person wrote under the lines they are about. Each becomes a numbered
//! item of one prompt (the file, the line, the quoted code, the comment), sent
//! through the daemon's prompt transaction: refused while the agent waits on a
//! dialog or holds a draft, with a receipt.

use crate::diff::{DiffFile, DiffView};
use crate::ops::PromptSent;
use crate::worktree::WorktreeError;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;

#[cfg(feature = "schema")]
use schemars::JsonSchema;

/// Most comments one review sends.
pub const MAX_COMMENTS: usize = 100;
/// Longest comment, in characters.
pub const MAX_COMMENT_CHARS: usize = 4000;
/// Longest prompt a review makes (an agent's input box takes it as one paste).
pub const MAX_REVIEW_PROMPT_BYTES: usize = 64 * 1024;
/// Characters of a quoted line kept in the prompt.
const MAX_QUOTE_CHARS: usize = 300;
/// Largest file read to quote a line the diff does not show.
const MAX_QUOTED_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// One comment: on a line, on a file, or on the change as a whole.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct ReviewComment {
    /// The file, as the diff names it (its path now). Absent: a comment on the
    /// change as a whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The line in the file as it is now (the diff's `+` or context side).
    /// Absent, with no old_line: a comment on the whole file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// A removed line: its number in the base commit's version of the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_line: Option<u32>,
    /// What the agent should know or do.
    pub comment: String,
}

/// What a review sent: the prompt, and the agent's receipt for it.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct ReviewSent {
    /// How many comments the prompt carries.
    pub comments: u32,
    /// The prompt as the agent received it.
    pub prompt: String,
    pub receipt: PromptSent,
}

/// Sends `comments` on the changes in `pane`'s worktree to its agent as one
/// prompt; `key` makes a retry send nothing (see `ops::send_prompt`).
pub async fn send_review(
    client: &crate::Client,
    pane: &str,
    comments: &[ReviewComment],
    key: Option<&str>,
) -> Result<ReviewSent, crate::ClientError> {
    let view = crate::worktree::pane_diff(client, pane, false).await?;
    send_review_on(client, pane, &view, comments, key).await
}

/// [`send_review`] on a diff read before (the one the person commented on,
/// whatever the agent changed since).
pub async fn send_review_on(
    client: &crate::Client,
    pane: &str,
    view: &DiffView,
    comments: &[ReviewComment],
    key: Option<&str>,
) -> Result<ReviewSent, crate::ClientError> {
    let prompt = review_prompt(view, comments, |path, line| {
        quote_from_file(&Path::new(&view.worktree).join(path), line)
    })?;
    let receipt = crate::ops::send_prompt(client, pane, &prompt, key).await?;
    Ok(ReviewSent {
        comments: comments.len() as u32,
        prompt,
        receipt,
    })
}

/// The prompt for `comments` on `view`'s changes: each comment checked (a file
/// the change touches, a line it has) and numbered, with the line it is about
/// quoted from the diff, or by `read_line(path, line)` for a line the diff
/// does not show.
pub fn review_prompt(
    view: &DiffView,
    comments: &[ReviewComment],
    read_line: impl Fn(&str, u32) -> Result<String, String>,
) -> Result<String, WorktreeError> {
    let invalid = |n: usize, why: String| WorktreeError::Invalid(format!("review comment {n}: {why}"));
    if comments.is_empty() {
        return Err(WorktreeError::Invalid("a review needs at least one comment".into()));
    }
    if comments.len() > MAX_COMMENTS {
        return Err(WorktreeError::Invalid(format!(
            "a review carries at most {MAX_COMMENTS} comments, not {}",
            comments.len()
        )));
    }
    let mut prompt = format!(
        "Review comments on your changes (branch {}). Please address each one:\n",
        view.branch
    );
    for (n, comment) in comments.iter().enumerate().map(|(i, c)| (i + 1, c)) {
        let text = clean(&comment.comment);
        if text.trim().is_empty() {
            return Err(invalid(n, "the comment is empty".into()));
        }
        if comment.comment.chars().count() > MAX_COMMENT_CHARS {
            return Err(invalid(n, format!("longer than {MAX_COMMENT_CHARS} characters")));
        }
        let (place, quote) = place_and_quote(view, comment, &read_line).map_err(|why| invalid(n, why))?;
        let _ = write!(prompt, "\n{n}. {place}\n");
        if let Some(quote) = quote {
            let _ = writeln!(prompt, "   > {quote}");
        }
        for line in text.trim().lines() {
            let _ = writeln!(prompt, "   {line}");
        }
    }
    if prompt.len() > MAX_REVIEW_PROMPT_BYTES {
        return Err(WorktreeError::Invalid(format!(
            "the review makes a prompt of {} bytes, more than {MAX_REVIEW_PROMPT_BYTES}: send fewer or shorter comments",
            prompt.len()
        )));
    }
    Ok(prompt)
}

/// Where a comment points, as the prompt names it, and the code there.
fn place_and_quote(
    view: &DiffView,
    comment: &ReviewComment,
    read_line: &impl Fn(&str, u32) -> Result<String, String>,
) -> Result<(String, Option<String>), String> {
    let Some(path) = comment.path.as_deref() else {
        if comment.line.is_some() || comment.old_line.is_some() {
            return Err("a line needs the path of its file".into());
        }
        return Ok(("On the change as a whole:".into(), None));
    };
    let file = view
        .files
        .iter()
        .find(|f| f.path == path)
        .ok_or_else(|| format!("'{}' is not a file this change touches", clean(path)))?;
    match (comment.line, comment.old_line) {
        (None, None) => Ok((format!("{path}:"), None)),
        (Some(_), Some(_)) => Err("give line or old_line, not both".into()),
        (Some(line), None) => {
            let quote = match lines_of(file).find(|l| l.new == Some(line)) {
                Some(l) => l.text.to_string(),
                None => format!(" {}", read_line(path, line)?),
            };
            Ok((format!("{path}, line {line}:"), Some(shorten(&clean(&quote)))))
        }
        (None, Some(old)) => {
            let quote = lines_of(file)
                .find(|l| l.old == Some(old) && l.new.is_none())
                .ok_or_else(|| format!("line {old} of '{path}' was not removed (old_line is for removed lines)"))?;
            Ok((
                format!("{path}, removed line {old} (of the base version):"),
                Some(shorten(&clean(quote.text))),
            ))
        }
    }
}

/// One line of a hunk with its numbers on each side (`-` lines have only the
/// old, `+` lines only the new).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NumberedLine<'a> {
    pub old: Option<u32>,
    pub new: Option<u32>,
    /// The line as the patch has it, starting with ` `, `+`, `-` or `\`.
    pub text: &'a str,
}

/// Every hunk line of `file`, numbered.
pub fn lines_of(file: &DiffFile) -> impl Iterator<Item = NumberedLine<'_>> {
    file.hunks.iter().flat_map(|hunk| {
        let (mut old, mut new) = (hunk.old_start, hunk.new_start);
        hunk.lines.iter().map(move |text| {
            let (o, n) = match text.as_bytes().first() {
                Some(b'+') => (None, Some(new)),
                Some(b'-') => (Some(old), None),
                Some(b'\\') => (None, None),
                _ => (Some(old), Some(new)),
            };
            old += o.is_some() as u32;
            new += n.is_some() as u32;
            NumberedLine { old: o, new: n, text }
        })
    })
}

/// Line `line` (from 1) of the file at `path`.
fn quote_from_file(path: &Path, line: u32) -> Result<String, String> {
    use std::io::{BufRead, Read};
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut lines = std::io::BufReader::new(file.take(MAX_QUOTED_FILE_BYTES)).split(b'\n');
    let mut count = 0;
    for found in lines.by_ref() {
        count += 1;
        let found = found.map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if count == line {
            return Ok(String::from_utf8_lossy(&found).into_owned());
        }
    }
    Err(format!("line {line} is past the end of the file ({count} lines)"))
}

/// Text without control characters but newlines; a tab becomes spaces.
fn clean(text: &str) -> String {
    text.chars()
        .filter_map(|c| match c {
            '\t' => Some(' '),
            '\n' => Some('\n'),
            c if fugue_protocol::limits::is_unsafe_char(c) => None,
            c => Some(c),
        })
        .collect()
}

fn shorten(line: &str) -> String {
    let line = line.lines().next().unwrap_or_default();
    match line.char_indices().nth(MAX_QUOTE_CHARS) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_string(),
    }
}

/// Where a line of the review file sits in the change.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Anchor {
    Whole,
    File(String),
    Line {
        path: String,
        new: Option<u32>,
        old: Option<u32>,
    },
}

/// The text `fugue review` opens in `$EDITOR`: a help block of `#` lines, then
/// the diff, every line of which is remembered to anchor the comments written
/// under it.
pub struct ReviewFile {
    pub text: String,
    lines: Vec<(String, Anchor)>,
}

impl ReviewFile {
    pub fn new(view: &DiffView) -> Self {
        let mut text = format!(
            "# fugue review: pane {} on branch {}, {} file(s), +{} -{} against {}\n",
            view.pane.as_deref().unwrap_or("-"),
            view.branch,
            view.files.len(),
            view.added,
            view.removed,
            &view.base[..view.base.len().min(12)]
        );
        text.push_str(REVIEW_HELP);
        if view.truncated {
            text.push_str("# The diff is longer than fugue reads: later files show no lines.\n");
        }
        let mut lines = Vec::new();
        for file in &view.files {
            let anchor = Anchor::File(file.path.clone());
            let old = file.old_path.as_deref().unwrap_or(&file.path);
            lines.push((format!("diff --git a/{old} b/{}", file.path), anchor.clone()));
            if file.binary {
                lines.push((format!("Binary file {} ({})", file.path, file.status), anchor.clone()));
            }
            for (hunk_at, hunk) in file.hunks.iter().enumerate() {
                lines.push((hunk.header.clone(), anchor.clone()));
                let before: usize = file.hunks[..hunk_at].iter().map(|h| h.lines.len()).sum();
                let numbered = lines_of(file).skip(before).take(hunk.lines.len());
                for line in numbered {
                    let at = Anchor::Line {
                        path: file.path.clone(),
                        new: line.new,
                        old: line.old,
                    };
                    lines.push((line.text.to_string(), at));
                }
            }
        }
        for (line, _) in &lines {
            text.push_str(line);
            text.push('\n');
        }
        ReviewFile { text, lines }
    }

    /// The comments the person wrote into `edited`: each run of lines that are
    /// neither the diff's nor `#` lines, about the diff line above it.
    pub fn comments(&self, edited: &str) -> Vec<ReviewComment> {
        let mut comments: Vec<ReviewComment> = Vec::new();
        let (mut at, mut anchor, mut open) = (0usize, Anchor::Whole, false);
        for line in edited.lines() {
            if let Some(found) = self.find(at, line) {
                at = found + 1;
                anchor = self.lines[found].1.clone();
                open = false;
                continue;
            }
            if line.starts_with('#') {
                continue;
            }
            match comments.last_mut() {
                Some(last) if open => {
                    last.comment.push('\n');
                    last.comment.push_str(line);
                }
                _ if line.trim().is_empty() => {}
                _ => {
                    comments.push(comment_at(&anchor, line));
                    open = true;
                }
            }
        }
        for comment in &mut comments {
            comment.comment = comment.comment.trim_end().to_string();
        }
        comments
    }

    /// The diff line `line` is, from `at` on: the next one, or (the person
    /// deleted some) a later one that can only be the diff's.
    fn find(&self, at: usize, line: &str) -> Option<usize> {
        if self.lines.get(at).is_some_and(|(l, _)| l == line) {
            return Some(at);
        }
        let diff_syntax = ["diff --git ", "@@ ", "+", "-", " ", "\\"];
        if line.trim().is_empty() || !diff_syntax.iter().any(|p| line.starts_with(p)) {
            return None;
        }
        let mut window = self.lines.get(at..)?.iter().take(500);
        window.position(|(l, _)| l == line).map(|k| at + k)
    }
}

fn comment_at(anchor: &Anchor, text: &str) -> ReviewComment {
    let comment = text.to_string();
    match anchor {
        Anchor::Whole => ReviewComment {
            comment,
            ..Default::default()
        },
        Anchor::File(path) => ReviewComment {
            path: Some(path.clone()),
            comment,
            ..Default::default()
        },
        Anchor::Line { path, new, old } => ReviewComment {
            path: Some(path.clone()),
            line: *new,
            old_line: if new.is_some() { None } else { *old },
            comment,
        },
    }
}

const REVIEW_HELP: &str = "#
# Write each comment on a new line under the line it is about, starting in
# the first column. A comment under a file's `diff --git` line is about the
# whole file; one above the first file is about the change as a whole. Lines
# starting with '#' are ignored. Save and quit to send every comment to the
# agent as one prompt; with no comment written, nothing is sent.
#
";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::DiffHunk;

    fn view() -> DiffView {
        let hunk = DiffHunk {
            header: "@@ -1,3 +1,3 @@".into(),
            old_start: 1,
            old_lines: 3,
            new_start: 1,
            new_lines: 3,
            lines: vec![
                " fn main() {".into(),
                "-    old();".into(),
                "+    new();".into(),
                " }".into(),
            ],
        };
        DiffView {
            pane: Some("p1".into()),
            name: "x".into(),
            worktree: "/w".into(),
            branch: "fugue/x".into(),
            base: "0123456789abcdef".into(),
            files: vec![
                DiffFile {
                    path: "src/main.rs".into(),
                    status: "modified".into(),
                    added: 1,
                    removed: 1,
                    hunks: vec![hunk],
                    ..Default::default()
                },
                DiffFile {
                    path: "logo.png".into(),
                    status: "added".into(),
                    binary: true,
                    ..Default::default()
                },
            ],
            added: 1,
            removed: 1,
            truncated: false,
            patch: None,
        }
    }

    fn no_file(_: &str, _: u32) -> Result<String, String> {
        Err("no file here".into())
    }

    #[test]
    fn hunk_lines_are_numbered_on_each_side() {
        let v = view();
        let numbered: Vec<(Option<u32>, Option<u32>)> = lines_of(&v.files[0]).map(|l| (l.old, l.new)).collect();
        assert_eq!(
            numbered,
            [(Some(1), Some(1)), (Some(2), None), (None, Some(2)), (Some(3), Some(3))]
        );
    }

    #[test]
    fn comments_become_one_numbered_prompt_with_the_code_quoted() {
        let comments = [
            ReviewComment {
                path: Some("src/main.rs".into()),
                line: Some(2),
                comment: "Call the \x1b[31mcached\x1b[0m one.\nIt is faster.".into(),
                ..Default::default()
            },
            ReviewComment {
                path: Some("src/main.rs".into()),
                old_line: Some(2),
                comment: "Why remove this?".into(),
                ..Default::default()
            },
            ReviewComment {
                path: Some("logo.png".into()),
                comment: "Too big.".into(),
                ..Default::default()
            },
            ReviewComment {
                comment: "Add a test.".into(),
                ..Default::default()
            },
        ];
        let prompt = review_prompt(&view(), &comments, no_file).unwrap();
        assert_eq!(
            prompt,
            "Review comments on your changes (branch fugue/x). Please address each one:\n\
\n1. src/main.rs, line 2:\n   > +    new();\n   Call the [31mcached[0m one.\n   It is faster.\n\
\n2. src/main.rs, removed line 2 (of the base version):\n   > -    old();\n   Why remove this?\n\
\n3. logo.png:\n   Too big.\n\
\n4. On the change as a whole:\n   Add a test.\n"
        );
    }

    #[test]
    fn a_line_outside_the_hunks_is_read_from_the_file() {
        let comment = ReviewComment {
            path: Some("src/main.rs".into()),
            line: Some(40),
            comment: "here".into(),
            ..Default::default()
        };
        let prompt = review_prompt(&view(), std::slice::from_ref(&comment), |path, line| {
            Ok(format!("{path} has {line}"))
        })
        .unwrap();
        assert!(prompt.contains("   >  src/main.rs has 40\n"), "{prompt}");
        let err = review_prompt(&view(), &[comment], no_file).unwrap_err();
        assert_eq!(err.to_string(), "review comment 1: no file here");
    }

    #[test]
    fn bad_comments_are_named_and_nothing_is_made() {
        let bad = |c: ReviewComment| review_prompt(&view(), &[c], no_file).unwrap_err().to_string();
        let on = |path: &str| ReviewComment {
            path: Some(path.into()),
            comment: "x".into(),
            ..Default::default()
        };
        assert_eq!(
            bad(on("../etc/passwd")),
            "review comment 1: '../etc/passwd' is not a file this change touches"
        );
        assert_eq!(
            bad(ReviewComment {
                comment: " \n".into(),
                ..on("logo.png")
            }),
            "review comment 1: the comment is empty"
        );
        assert_eq!(
            bad(ReviewComment {
                old_line: Some(1),
                ..on("src/main.rs")
            }),
            "review comment 1: line 1 of 'src/main.rs' was not removed (old_line is for removed lines)"
        );
        assert_eq!(
            bad(ReviewComment {
                line: Some(1),
                comment: "x".into(),
                ..ReviewComment::default()
            }),
            "review comment 1: a line needs the path of its file"
        );
        assert!(bad(ReviewComment {
            comment: "y".repeat(MAX_COMMENT_CHARS + 1),
            ..on("logo.png")
        })
        .contains("longer than 4000"));
        let many = vec![on("logo.png"); MAX_COMMENTS + 1];
        assert!(review_prompt(&view(), &many, no_file)
            .unwrap_err()
            .to_string()
            .contains("at most 100 comments, not 101"));
        assert_eq!(
            review_prompt(&view(), &[], no_file).unwrap_err().to_string(),
            "a review needs at least one comment"
        );
    }

    #[test]
    fn comments_written_under_diff_lines_are_read_back() {
        let file = ReviewFile::new(&view());
        assert!(file
            .text
            .starts_with("# fugue review: pane p1 on branch fugue/x, 2 file(s), +1 -1"));
        assert!(file.comments(&file.text).is_empty(), "an unedited file has no comments");
        let edited = file
            .text
            .replace("# fugue review:", "Overall fine.\n# fugue review:")
            .replace("+    new();\n", "+    new();\nUse the cached one.\n\nIt is faster.\n")
            .replace("-    old();\n", "-    old();\n# not a comment\nWhy?\n")
            .replace(
                "Binary file logo.png (added)\n",
                "Binary file logo.png (added)\nToo big.\n",
            )
            // The person deleted a context line: what follows still anchors.
            .replace(" }\n", "");
        let comments = file.comments(&edited);
        let on = |path: Option<&str>, line, old_line, comment: &str| ReviewComment {
            path: path.map(String::from),
            line,
            old_line,
            comment: comment.into(),
        };
        let expected = [
            on(None, None, None, "Overall fine."),
            on(Some("src/main.rs"), None, Some(2), "Why?"),
            on(
                Some("src/main.rs"),
                Some(2),
                None,
                "Use the cached one.\n\nIt is faster.",
            ),
            on(Some("logo.png"), None, None, "Too big."),
        ];
        assert_eq!(comments, expected);
        let prompt = review_prompt(&view(), &comments, no_file).unwrap();
        assert!(prompt.contains("4. logo.png:\n   Too big.\n"), "{prompt}");
    }
}
