//! Scenario 16: a worktree made and a diff read through fugue against plain git
//! on the same repository in the same run: `files` tracked files, `changed` of
//! them edited in the worktree.

use super::{row, Sizes};
use crate::env::{median, Error};
use crate::Row;
use fugue_client::worktree::{self, NewWorktree};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// Runs git in `dir` with the bench's own identity; fails with its complaint.
fn git(dir: &Path, args: &[&str]) -> Result<String, Error> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "fugue bench")
        .env("GIT_AUTHOR_EMAIL", "bench@fugue.invalid")
        .env("GIT_COMMITTER_NAME", "fugue bench")
        .env("GIT_COMMITTER_EMAIL", "bench@fugue.invalid")
        .output()
        .map_err(|e| format!("git: {e}"))?;
    match out.status.success() {
        true => Ok(String::from_utf8_lossy(&out.stdout).into_owned()),
        false => Err(format!("git {args:?}: {}", String::from_utf8_lossy(&out.stderr).trim())),
    }
}

/// A repository of `files` files of 20 lines in folders of 100.
fn repository(dir: &Path, files: usize) -> Result<std::path::PathBuf, Error> {
    let repo = dir.join("wt-repo");
    let _ = std::fs::remove_dir_all(&repo);
    for n in 0..files {
        let folder = repo.join(format!("d{:03}", n / 100));
        std::fs::create_dir_all(&folder).map_err(|e| e.to_string())?;
        let text: String = (0..20).map(|l| format!("file {n} line {l}\n")).collect();
        std::fs::write(folder.join(format!("f{n}.txt")), text).map_err(|e| e.to_string())?;
    }
    git(&repo, &["init", "--quiet", "--initial-branch=main"])?;
    git(&repo, &["add", "--all"])?;
    git(&repo, &["commit", "--quiet", "-m", "files"])?;
    Ok(repo)
}

/// Edits `changed` files of a checkout (one line each, spread over the folders).
fn edit(checkout: &Path, files: usize, changed: usize) -> Result<(), Error> {
    for k in 0..changed {
        let n = k * files / changed;
        let path = checkout.join(format!("d{:03}/f{n}.txt", n / 100));
        let text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
        std::fs::write(&path, text.replacen("line 3", "line three", 1)).map_err(|e| e.to_string())?;
    }
    Ok(())
}

pub(super) async fn run(dir: &Path, sizes: &Sizes) -> Result<Vec<Row>, Error> {
    let (files, changed) = (sizes.worktree_files, sizes.worktree_files / 100);
    let repo = repository(dir, files)?;
    worktree::set_root(dir.join("wt-root"));
    let (mut made, mut added, mut diffed, mut plain) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for round in 0..sizes.rounds.max(3) {
        // fugue: worktree, branch and record; git: the same worktree add.
        let new = NewWorktree {
            dir: repo.clone(),
            name: Some(format!("bench{round}")),
            base: None,
        };
        let start = Instant::now();
        let created = worktree::create_worktree(&new).await.map_err(|e| e.to_string())?;
        made.push(start.elapsed().as_secs_f64() * 1000.0);
        let plain_dir = dir.join(format!("wt-plain{round}"));
        let start = Instant::now();
        git(
            &repo,
            &[
                "worktree",
                "add",
                "--quiet",
                "-b",
                &format!("plain{round}"),
                &plain_dir.to_string_lossy(),
            ],
        )?;
        added.push(start.elapsed().as_secs_f64() * 1000.0);
        // The same edits in both; fugue's diff (temporary index, untracked
        // included) against git's own diff of the working tree.
        let checkout = Path::new(&created.record.path);
        edit(checkout, files, changed)?;
        edit(&plain_dir, files, changed)?;
        let start = Instant::now();
        let view = fugue_client::diff::diff(&created.record, false)
            .await
            .map_err(|e| e.to_string())?;
        diffed.push(start.elapsed().as_secs_f64() * 1000.0);
        if view.files.len() != changed {
            return Err(format!(
                "fugue diff found {} files, {changed} were changed",
                view.files.len()
            ));
        }
        let start = Instant::now();
        git(&plain_dir, &["diff", "HEAD"])?;
        plain.push(start.elapsed().as_secs_f64() * 1000.0);
        worktree::release(&created.record, true)
            .await
            .map_err(|e| e.to_string())?;
        git(&repo, &["worktree", "remove", "--force", &plain_dir.to_string_lossy()])?;
    }
    let (made, added) = (median(&mut made), median(&mut added));
    let (diffed, plain) = (median(&mut diffed), median(&mut plain));
    Ok(vec![
        row(
            "16 worktrees",
            &format!("worktree made in a repository of {files} files, ms"),
            format!("{made:.0} ({:.2}x git)", made / added),
            format!("git worktree add {added:.0}"),
            "reported",
            None,
        ),
        row(
            "16 worktrees",
            &format!("diff of {changed} changed files of {files}, patch included, ms"),
            format!("{diffed:.0} ({:.2}x git)", diffed / plain),
            format!("git diff HEAD {plain:.0}"),
            "reported",
            None,
        ),
    ])
}
