//! `run --worktree`, `worktrees`, `diff`, `release --discard`: agents' work in
//! worktrees of their own. Git runs here, through the client library's
//! `worktree` operations, in the user's own environment.

use super::panes::create_pane;
use super::Context;
use crate::args::{absolute, spawn_spec, RunArgs, WorktreeCommand};
use crate::render::{diff_text, pane_json, worktrees_table};
use fugue_client::review;
use fugue_client::worktree::{self, NewWorktree, Released};
use fugue_client::{Client, ClientError};
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;

pub async fn run(ctx: &Context<'_>, command: &WorktreeCommand) -> Result<ExitCode, ClientError> {
    let client = ctx.connect(true).await?;
    match command {
        WorktreeCommand::Worktrees => {
            let views = worktree::views(&client).await?;
            ctx.out
                .print(crate::render::json_of(&views), || worktrees_table(&views));
        }
        WorktreeCommand::Diff { pane, stat } => {
            let view = worktree::pane_diff(&client, pane, *stat).await?;
            let color = !ctx.out.json && std::io::IsTerminal::is_terminal(&std::io::stdout());
            ctx.out
                .print(crate::render::json_of(&view), || diff_text(&view, *stat, color));
        }
        WorktreeCommand::Merge { worktree, squash, into } => {
            let record = worktree::find_target(&client, worktree).await?;
            let merged = worktree::merge(&record, into.as_deref(), *squash).await?;
            ctx.out.print(crate::render::json_of(&merged), || {
                format!(
                    "merged {} ({} commit(s)) into {}: {}",
                    merged.branch,
                    merged.commits,
                    merged.into,
                    &merged.commit[..merged.commit.len().min(12)]
                )
            });
        }
        WorktreeCommand::Discard { worktree, yes } => return discard(ctx, &client, worktree, *yes).await,
        WorktreeCommand::Review { pane, key } => return review(ctx, &client, pane, key.as_deref()).await,
    }
    Ok(ExitCode::SUCCESS)
}

/// `fugue run --worktree`: the worktree from `--cwd`'s repository, or the
/// session's directory's, then the pane in it.
pub async fn run_in_worktree(ctx: &Context<'_>, client: &Client, args: &RunArgs) -> Result<(), ClientError> {
    let dir = match &args.cwd {
        Some(cwd) => absolute(cwd.clone())?,
        None => session_dir(client, &args.session).await?,
    };
    let new = NewWorktree {
        dir,
        name: args.worktree.clone().filter(|n| !n.is_empty()),
        base: args.base.clone(),
    };
    let started = worktree::start_in_worktree(&new, spawn_spec(args)?, |spec| create_pane(client, spec)).await?;
    for note in &started.notes {
        eprintln!("fugue: {note}");
    }
    let mut value = pane_json(&started.pane);
    value["worktree"] = crate::render::json_of(&started.worktree);
    ctx.out.print(value, || started.pane.id.to_string());
    Ok(())
}

/// The directory of session `name`, or this one's for a session not made yet.
async fn session_dir(client: &Client, name: &str) -> Result<PathBuf, ClientError> {
    let sessions = client.list_sessions().await?;
    match sessions.into_iter().find(|s| s.name == name) {
        Some(session) => Ok(PathBuf::from(session.cwd)),
        None => absolute(PathBuf::from(".")),
    }
}

/// `fugue release PANE [--discard]`: the pane, then its worktree unless it
/// holds work.
pub async fn release(ctx: &Context<'_>, client: &Client, pane: &str, discard: bool) -> Result<(), ClientError> {
    let released = worktree::release_pane(client, pane, discard).await?;
    let Some((record, released)) = released else {
        ctx.out.print(json!({"ok": true}), String::new);
        return Ok(());
    };
    let (outcome, kept, text) = match &released {
        Released::Removed => (
            "removed",
            vec![],
            format!("removed worktree {} and branch {}", record.path, record.branch),
        ),
        Released::Gone => (
            "gone",
            vec![],
            format!("worktree {} was gone already; forgot it", record.path),
        ),
        Released::Kept(work) => (
            "kept",
            work.clone(),
            format!(
                "kept worktree {} (branch {}): it holds {}; `fugue release --discard` would remove it",
                record.path,
                record.branch,
                work.join(" and ")
            ),
        ),
    };
    let value =
        json!({"ok": true, "worktree": record.path, "branch": record.branch, "outcome": outcome, "holds": kept});
    ctx.out.print(value, || text);
    Ok(())
}

/// `fugue discard`: the worktree and its branch, work and all, once the person
/// said yes.
async fn discard(ctx: &Context<'_>, client: &Client, target: &str, yes: bool) -> Result<ExitCode, ClientError> {
    let record = worktree::find_target(client, target).await?;
    let holds = worktree::holdings(&record).await?;
    if !yes
        && !confirmed(&format!(
            "discard worktree {} and branch {} ({holds})?",
            record.path, record.branch
        ))?
    {
        eprintln!("fugue: nothing discarded");
        return Ok(ExitCode::FAILURE);
    }
    let (outcome, text) = match worktree::discard(client, &record).await? {
        Released::Gone => ("gone", format!("worktree {} was gone already; forgot it", record.path)),
        _ => (
            "removed",
            format!("discarded worktree {} and branch {}", record.path, record.branch),
        ),
    };
    let value = json!({"ok": true, "worktree": record.path, "branch": record.branch, "outcome": outcome});
    ctx.out.print(value, || text);
    Ok(ExitCode::SUCCESS)
}

/// `fugue review`: the diff in the person's editor, then what they wrote
/// under its lines to the agent as one prompt.
async fn review(ctx: &Context<'_>, client: &Client, pane: &str, key: Option<&str>) -> Result<ExitCode, ClientError> {
    let view = worktree::pane_diff(client, pane, false).await?;
    if view.files.is_empty() {
        return Err(crate::args::invalid(format!(
            "pane {pane} changed nothing in its worktree yet: nothing to review"
        )));
    }
    let file = review::ReviewFile::new(&view);
    let edited = edit(&file.text)?;
    let comments = file.comments(&edited);
    if comments.is_empty() {
        eprintln!("fugue: no comment written: nothing sent");
        return Ok(ExitCode::SUCCESS);
    }
    let sent = review::send_review_on(client, pane, &view, &comments, key).await?;
    let started = sent.receipt.went_busy;
    ctx.out.print(crate::render::json_of(&sent), || {
        format!("sent {} comment(s): {}", sent.comments, sent.receipt.message)
    });
    Ok(if started { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// `text` as the person left it after editing it in $VISUAL or $EDITOR (vi
/// when neither is set), run through the shell so `code --wait` works.
fn edit(text: &str) -> Result<String, ClientError> {
    let io = |e: std::io::Error| crate::args::invalid(format!("cannot write the review file: {e}"));
    let file = tempfile::Builder::new()
        .prefix("fugue-review-")
        .suffix(".diff")
        .tempfile()
        .map_err(io)?;
    std::fs::write(file.path(), text).map_err(io)?;
    let editor = ["VISUAL", "EDITOR"]
        .iter()
        .find_map(|var| std::env::var(var).ok().filter(|v| !v.trim().is_empty()))
        .unwrap_or_else(|| "vi".into());
    let status = std::process::Command::new("sh")
        .args(["-c", &format!("{editor} \"$1\""), "sh"])
        .arg(file.path())
        .status()
        .map_err(|e| crate::args::invalid(format!("cannot run the editor '{editor}': {e}")))?;
    if !status.success() {
        return Err(crate::args::invalid(format!(
            "the editor '{editor}' failed ({status}): nothing sent"
        )));
    }
    std::fs::read_to_string(file.path())
        .map_err(|e| crate::args::invalid(format!("cannot read the review file back: {e}")))
}

/// Asks on the terminal; no terminal to ask on is an error that names --yes.
fn confirmed(question: &str) -> Result<bool, ClientError> {
    use std::io::{BufRead, IsTerminal, Write};
    if !std::io::stdin().is_terminal() {
        return Err(crate::args::invalid(format!(
            "{question} No terminal to ask on: add --yes"
        )));
    }
    eprint!("{question} [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    let _ = std::io::stdin().lock().read_line(&mut answer);
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}
