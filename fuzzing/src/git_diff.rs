//! Reading git's diff output into files and hunks (`fugue diff`), and what is
//! read from it and around it: the numstat, the name-status list and the patch
//! are any bytes an agent's files can make git print; the review file a person
//! edits (`fugue review`) and an agent's transcript (a delegated child's final
//! message) are any text. No input panics, every file keeps its numstat path,
//! a hunk holds only diff lines, a comment names only a file of the diff, and
//! a review prompt stays within its limit.

use fugue_client::diff::{apply_patch, apply_statuses, parse_numstat, DiffView};
use fugue_client::final_message::last_message;
use fugue_client::protocol::AgentKind;
use fugue_client::review::{review_prompt, ReviewFile, MAX_REVIEW_PROMPT_BYTES};

/// One input, as the fuzz target `git_diff` and the corpus replay give it.
pub fn run(data: &[u8]) {
    let mut parts = data.splitn(4, |b| *b == 0xff);
    let text = |part: Option<&[u8]>| String::from_utf8_lossy(part.unwrap_or_default()).into_owned();
    let (numstat, statuses, patch) = (text(parts.next()), text(parts.next()), text(parts.next()));
    let edited = text(parts.next());
    let mut files = parse_numstat(&numstat);
    let paths: Vec<String> = files.iter().map(|f| f.path.clone()).collect();
    apply_statuses(&mut files, &statuses);
    apply_patch(&mut files, &patch, data.len().is_multiple_of(2));
    for (file, path) in files.iter().zip(&paths) {
        assert_eq!(&file.path, path);
        for hunk in &file.hunks {
            assert!(hunk.header.starts_with("@@ -"));
            assert!(hunk.lines.iter().all(|l| l.starts_with([' ', '+', '-', '\\'])));
        }
    }
    let view = DiffView {
        files,
        ..DiffView::default()
    };
    let review = ReviewFile::new(&view);
    // The file as written, then as the person left it: the diff's lines with
    // the fuzzer's text between them.
    let comments = review.comments(&format!("{}{edited}", review.text));
    for comment in &comments {
        assert!(comment.path.as_ref().is_none_or(|p| paths.contains(p)));
    }
    if let Ok(prompt) = review_prompt(&view, &comments, |_, _| Err("no file".into())) {
        assert!(prompt.len() <= MAX_REVIEW_PROMPT_BYTES);
    }
    for kind in [AgentKind::Claude, AgentKind::Codex] {
        let _ = last_message(kind, &edited);
    }
}
