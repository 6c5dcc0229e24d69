//! `run --worktree`, `worktrees`, `diff`, `release --discard`: agents' work in
//! worktrees of their own. Git runs here, through the client library's
//! `worktree` operations, in the user's own environment.

use super::panes::create_pane;
use super::Context;
use crate::args::{absolute, spawn_spec, RunArgs, WorktreeCommand};
use crate::render::{diff_text, pane_json, worktrees_table};
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
            let record = find_record(&client, worktree).await?;
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
    let record = find_record(client, target).await?;
    let status = worktree::status(&record).await?;
    let holds = format!(
        "{} uncommitted file(s), {} commit(s) not in {}",
        status.dirty.len(),
        status.ahead,
        record.base_ref
    );
    if !yes
        && !confirmed(&format!(
            "discard worktree {} and branch {} ({holds})?",
            record.path, record.branch
        ))?
    {
        eprintln!("fugue: nothing discarded");
        return Ok(ExitCode::FAILURE);
    }
    // Its pane goes first: nothing may write into a worktree being removed.
    if let Some(pane) = &record.pane {
        match client.release_pane(pane).await {
            Err(err) if err.code() != Some(fugue_client::protocol::ErrorCode::PaneNotFound) => return Err(err),
            _ => {}
        }
    }
    worktree::release(&record, true).await?;
    let value = json!({"ok": true, "worktree": record.path, "branch": record.branch, "outcome": "removed"});
    ctx.out.print(value, || {
        format!("discarded worktree {} and branch {}", record.path, record.branch)
    });
    Ok(ExitCode::SUCCESS)
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

/// The worktree named `target`, or the one pane `target` works in.
async fn find_record(client: &Client, target: &str) -> Result<worktree::WorktreeRecord, ClientError> {
    let pane = client.pane_status(target).await.ok().map(|p| p.id.to_string());
    worktree::find(target, pane.as_deref())?.ok_or_else(|| {
        crate::args::invalid(format!(
            "no worktree of fugue's is named '{target}' or belongs to such a pane (see `fugue worktrees`)"
        ))
    })
}
