//! What an agent changed in its worktree: every change against the commit it
//! started from, committed or not, untracked files included, as files and hunks.
//!
//! The working tree is read through a temporary index (`GIT_INDEX_FILE`), so the
//! worktree's own index, and what the agent staged, stay as they are. The patch
//! is read up to [`MAX_DIFF_BYTES`]; the counts per file are always whole.

use crate::worktree::{git_capped, WorktreeError, WorktreeRecord, MAX_DIFF_BYTES, MAX_FILES};
use serde::Serialize;
use std::path::Path;

#[cfg(feature = "schema")]
use schemars::JsonSchema;

/// A worktree's changes against its base.
#[derive(Clone, Debug, Default, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct DiffView {
    /// The pane working in the worktree.
    pub pane: Option<String>,
    /// The worktree's name (what merge and discard take).
    pub name: String,
    pub worktree: String,
    pub branch: String,
    /// The commit the changes are counted from.
    pub base: String,
    pub files: Vec<DiffFile>,
    /// Lines added and removed in all files.
    pub added: u64,
    pub removed: u64,
    /// The patch was longer than fugue reads (8 MiB): later files have counts
    /// but no hunks.
    pub truncated: bool,
    /// With `format: patch`: the changes as a git patch that `git apply`
    /// takes on the base commit (untracked and binary files included); the
    /// files then come without hunks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
}

/// How a diff is given: files with their hunks (fugue's layout), or a git
/// patch as well.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum DiffFormat {
    #[default]
    Files,
    /// A git-format patch (`git diff --binary`), as `git apply` takes it.
    Patch,
}

/// One changed file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct DiffFile {
    pub path: String,
    /// Its path before a rename.
    pub old_path: Option<String>,
    /// `added`, `deleted`, `modified` or `renamed`.
    pub status: String,
    pub added: u64,
    pub removed: u64,
    pub binary: bool,
    /// Empty for a binary file, a `--stat` diff, or past the cut.
    pub hunks: Vec<DiffHunk>,
}

/// One hunk: its header and its lines, each starting with ` `, `+`, `-` or `\`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct DiffHunk {
    /// `@@ -1,3 +1,4 @@ fn main`
    pub header: String,
    pub old_start: u32,
    pub old_lines: u32,
    pub new_start: u32,
    pub new_lines: u32,
    pub lines: Vec<String>,
}

/// The changes in `record`'s worktree against its base; only the counts when
/// `stat_only`.
pub async fn diff(record: &WorktreeRecord, stat_only: bool) -> Result<DiffView, WorktreeError> {
    with_content_index(record, |index| async move {
        diff_with_index(record, &index, stat_only).await
    })
    .await
}

/// The changes in `record`'s worktree against its base as a git-format patch
/// (`git diff --binary --full-index`): untracked files included, modes, new,
/// deleted and renamed files, binary files as whole binary hunks; what `git
/// apply` takes on the base commit. A patch longer than [`MAX_DIFF_BYTES`] is
/// refused: a cut patch applies to nothing.
pub async fn patch(record: &WorktreeRecord) -> Result<Vec<u8>, WorktreeError> {
    with_content_index(record, |index| async move {
        let path = Path::new(&record.path);
        let env = [("GIT_INDEX_FILE", index.as_path())];
        let base = record.base.as_str();
        let args = ["diff", "--cached", "--binary", "--full-index", "--no-color", "--no-ext-diff", "-M", base];
        let (ok, crate::worktree::Captured(bytes, cut), stderr) = git_capped(path, &args, &env, MAX_DIFF_BYTES).await?;
        if !ok {
            return Err(WorktreeError::Git(format!("git diff: {}", stderr.trim())));
        }
        if cut {
            return Err(WorktreeError::Invalid(format!(
                "the patch of worktree {} is longer than {} MiB, the most fugue gives; `git -C {} diff --binary {base}` \
                 (with its untracked files added) makes it whole",
                record.name,
                MAX_DIFF_BYTES >> 20,
                record.path
            )));
        }
        Ok(bytes)
    })
    .await
}

/// The tree of everything in `record`'s worktree now, committed or not
/// (untracked files included): equal ids, equal content.
pub async fn content_id(record: &WorktreeRecord) -> Result<String, WorktreeError> {
    let path = Path::new(&record.path);
    with_content_index(record, |index| async move {
        let tree = run(path, &["write-tree"], &[("GIT_INDEX_FILE", &index)]).await?;
        Ok(tree.trim().to_string())
    })
    .await
}

/// Runs `work` on a temporary index (`GIT_INDEX_FILE`) that holds the
/// worktree's whole content, so the worktree's own index, and what the agent
/// staged, stay as they are; the index goes afterwards.
async fn with_content_index<T, Work, Working>(record: &WorktreeRecord, work: Work) -> Result<T, WorktreeError>
where
    Work: FnOnce(std::path::PathBuf) -> Working,
    Working: std::future::Future<Output = Result<T, WorktreeError>>,
{
    let path = Path::new(&record.path);
    if !path.is_dir() {
        return Err(WorktreeError::Invalid(format!(
            "worktree {} is gone (removed outside fugue); `fugue release --discard` forgets it",
            record.path
        )));
    }
    let git_dir = run(path, &["rev-parse", "--absolute-git-dir"], &[]).await?;
    // One index per call: a bridge or a web server may read one worktree for
    // two callers at once.
    let unique = fugue_protocol::SessionId::new().simple();
    let index = Path::new(git_dir.trim_end()).join(format!("fugue-diff-index-{unique}"));
    let env = [("GIT_INDEX_FILE", index.as_path())];
    let filled = async {
        run(path, &["read-tree", "HEAD"], &env).await?;
        run(path, &["add", "--all", "--", "."], &env).await
    };
    let result = match filled.await {
        Ok(_) => work(index.clone()).await,
        Err(err) => Err(err),
    };
    let _ = std::fs::remove_file(&index);
    result
}

async fn diff_with_index(record: &WorktreeRecord, index: &Path, stat_only: bool) -> Result<DiffView, WorktreeError> {
    let path = Path::new(&record.path);
    let env = [("GIT_INDEX_FILE", index)];
    let base = record.base.as_str();
    let numstat = run(path, &["diff", "--cached", "--numstat", "-z", "-M", base], &env).await?;
    let mut files = parse_numstat(&numstat);
    let statuses = run(path, &["diff", "--cached", "--name-status", "-z", "-M", base], &env).await?;
    apply_statuses(&mut files, &statuses);
    let mut truncated = false;
    if !stat_only {
        let args = ["diff", "--cached", "--no-color", "--no-ext-diff", "-M", base];
        let (ok, patch, stderr) = git_capped(path, &args, &env, MAX_DIFF_BYTES).await?;
        if !ok {
            return Err(WorktreeError::Git(format!("git diff: {}", stderr.trim())));
        }
        truncated = patch.1;
        apply_patch(&mut files, &String::from_utf8_lossy(&patch.0), truncated);
    }
    Ok(DiffView {
        pane: record.pane.clone(),
        name: record.name.clone(),
        worktree: record.path.clone(),
        branch: record.branch.clone(),
        base: record.base.clone(),
        added: files.iter().map(|f| f.added).sum(),
        removed: files.iter().map(|f| f.removed).sum(),
        files,
        truncated,
        patch: None,
    })
}

async fn run(dir: &Path, args: &[&str], env: &[(&str, &Path)]) -> Result<String, WorktreeError> {
    let (ok, out, stderr) = git_capped(dir, args, env, MAX_DIFF_BYTES).await?;
    match ok {
        true => Ok(String::from_utf8_lossy(&out.0).into_owned()),
        false => Err(WorktreeError::Git(format!(
            "git {}: {}",
            args.first().unwrap_or(&""),
            stderr.lines().next().unwrap_or("failed")
        ))),
    }
}

/// `git diff --numstat -z`: `ADDED\tREMOVED\tPATH\0`, or for a rename
/// `ADDED\tREMOVED\t\0OLD\0NEW\0`; `-` counts for a binary file.
pub fn parse_numstat(text: &str) -> Vec<DiffFile> {
    let mut files = Vec::new();
    let mut fields = text.split('\0');
    while let Some(entry) = fields.next() {
        let mut parts = entry.splitn(3, '\t');
        let (Some(added), Some(removed), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let (path, old_path) = match path.is_empty() {
            true => {
                let old = fields.next().unwrap_or_default().to_string();
                (fields.next().unwrap_or_default().to_string(), Some(old))
            }
            false => (path.to_string(), None),
        };
        if files.len() < MAX_FILES {
            files.push(DiffFile {
                status: if old_path.is_some() { "renamed" } else { "modified" }.to_string(),
                path,
                old_path,
                added: added.parse().unwrap_or(0),
                removed: removed.parse().unwrap_or(0),
                binary: added == "-",
                hunks: Vec::new(),
            });
        }
    }
    files
}

/// `git diff --name-status -z`: `M\0PATH\0`, `A`, `D`, `T`, or `R100\0OLD\0NEW\0`;
/// given to the files in numstat's order (the same diff lists them alike).
pub fn apply_statuses(files: &mut [DiffFile], text: &str) {
    let mut fields = text.split('\0').filter(|f| !f.is_empty());
    for file in files.iter_mut() {
        let Some(code) = fields.next() else { return };
        let paths = if code.starts_with(['R', 'C']) { 2 } else { 1 };
        for _ in 0..paths {
            fields.next();
        }
        file.status = match code.chars().next() {
            Some('A') => "added",
            Some('D') => "deleted",
            Some('R') => "renamed",
            Some('C') => "copied",
            _ => "modified",
        }
        .to_string();
    }
}

/// Gives each file (in numstat's order, which the patch keeps) its
/// hunks from the patch; a patch cut short leaves its last file without the
/// hunk it was cut in.
pub fn apply_patch(files: &mut [DiffFile], patch: &str, truncated: bool) {
    let sections = patch.split("\ndiff --git ").enumerate().map(|(i, section)| match i {
        0 => section.strip_prefix("diff --git ").unwrap_or(section),
        _ => section,
    });
    let count = files.len();
    for (n, (file, section)) in files.iter_mut().zip(sections).enumerate() {
        let mut hunks: Vec<DiffHunk> = Vec::new();
        for line in section.lines().skip(1) {
            if let Some(hunk) = parse_hunk_header(line) {
                hunks.push(hunk);
                continue;
            }
            match hunks.last_mut() {
                Some(hunk) if line.starts_with([' ', '+', '-', '\\']) => hunk.lines.push(line.to_string()),
                _ => {}
            }
        }
        // The section the cut fell in: its last hunk may be partial.
        if truncated && n + 1 == count.min(patch.matches("\ndiff --git ").count() + 1) {
            hunks.pop();
        }
        file.hunks = hunks;
    }
}

/// `@@ -OLD[,N] +NEW[,N] @@ ...`
fn parse_hunk_header(line: &str) -> Option<DiffHunk> {
    let rest = line.strip_prefix("@@ -")?;
    let (ranges, _) = rest.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let range = |r: &str| -> Option<(u32, u32)> {
        match r.split_once(',') {
            Some((start, lines)) => Some((start.parse().ok()?, lines.parse().ok()?)),
            None => Some((r.parse().ok()?, 1)),
        }
    };
    let ((old_start, old_lines), (new_start, new_lines)) = (range(old)?, range(new)?);
    Some(DiffHunk {
        header: line.to_string(),
        old_start,
        old_lines,
        new_start,
        new_lines,
        lines: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numstat_and_patch_make_files_and_hunks() {
        let numstat = "2\t1\tsrc/a.rs\0\x31\t0\tnew.txt\0-\t-\tlogo.png\0\x30\t0\t\0old.rs\0moved.rs\0";
        let mut files = parse_numstat(numstat);
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["src/a.rs", "new.txt", "logo.png", "moved.rs"]);
        assert_eq!(files[3].old_path.as_deref(), Some("old.rs"));
        assert!(files[2].binary);
        let patch = "diff --git a/src/a.rs b/src/a.rs\nindex 1..2 100644\n--- a/src/a.rs\n+++ b/src/a.rs\n\
@@ -1,2 +1,3 @@ fn main\n fn main() {\n-    old();\n+    new();\n+    more();\n\
diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n\
diff --git a/logo.png b/logo.png\nBinary files a/logo.png and b/logo.png differ\n\
diff --git a/old.rs b/moved.rs\nsimilarity index 100%\nrename from old.rs\nrename to moved.rs\n";
        apply_statuses(
            &mut files,
            "M\0src/a.rs\0A\0new.txt\0M\0logo.png\0R100\0old.rs\0moved.rs\0",
        );
        apply_patch(&mut files, patch, false);
        assert_eq!(files[0].hunks.len(), 1);
        let hunk = &files[0].hunks[0];
        assert_eq!(
            (hunk.old_start, hunk.old_lines, hunk.new_start, hunk.new_lines),
            (1, 2, 1, 3)
        );
        assert_eq!(
            hunk.lines,
            [" fn main() {", "-    old();", "+    new();", "+    more();"]
        );
        assert_eq!(files[1].status, "added");
        assert_eq!(files[1].hunks[0].lines, ["+hello"]);
        assert_eq!((files[1].hunks[0].new_start, files[1].hunks[0].new_lines), (1, 1));
        assert!(files[2].hunks.is_empty());
        assert_eq!(files[3].status, "renamed");
    }

    /// A patch longer than the cap is cut, promptly: git, blocked writing the
    /// rest, is stopped, not waited on (it once was, for the 5-minute limit).
    #[tokio::test]
    async fn a_patch_past_the_cap_is_cut_without_waiting_for_git() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let out = std::process::Command::new("git")
                .arg("-C")
                .arg(dir.path())
                .args(args)
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@t.invalid")
                .env("GIT_COMMITTER_NAME", "t")
                .env("GIT_COMMITTER_EMAIL", "t@t.invalid")
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        };
        git(&["init", "--quiet"]);
        git(&["commit", "--quiet", "--allow-empty", "-m", "empty"]);
        let base = git(&["rev-parse", "HEAD"]);
        // 12 MiB of lines, untracked: the patch is longer than MAX_DIFF_BYTES.
        let line = "x".repeat(99) + "\n";
        std::fs::write(dir.path().join("big.txt"), line.repeat(12 * 1024 * 1024 / 100)).unwrap();
        let record = WorktreeRecord {
            name: "t".into(),
            repo: dir.path().display().to_string(),
            path: dir.path().display().to_string(),
            branch: "main".into(),
            base,
            base_ref: "main".into(),
            pane: None,
            session: None,
            created_at_ms: 0,
        };
        let started = std::time::Instant::now();
        let view = diff(&record, false).await.unwrap();
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "{:?}",
            started.elapsed()
        );
        assert!(view.truncated);
        assert_eq!(view.files.len(), 1);
        assert_eq!(view.files[0].added as usize, 12 * 1024 * 1024 / 100);
        // The cut fell in the file's only hunk, which is dropped.
        assert!(view.files[0].hunks.is_empty());

        // Two diffs of one worktree at once (a bridge's two callers) each use
        // an index of their own.
        std::fs::write(dir.path().join("big.txt"), "small\n").unwrap();
        let (a, b) = tokio::join!(diff(&record, false), diff(&record, false));
        for view in [a.unwrap(), b.unwrap()] {
            assert_eq!((view.files.len(), view.added, view.truncated), (1, 1, false));
        }
    }

    #[test]
    fn a_cut_patch_drops_the_hunk_it_was_cut_in() {
        let mut files = parse_numstat("3\t0\ta\0");
        apply_patch(
            &mut files,
            "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -0,0 +1,3 @@\n+1\n+2",
            true,
        );
        assert!(files[0].hunks.is_empty());
    }
}
