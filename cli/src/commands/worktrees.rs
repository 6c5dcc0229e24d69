//! `run --worktree`, `worktrees`, `diff`, `release --discard`: agents' work in
//! worktrees of their own. Git runs here, through the client library's
//! `worktree` operations, in the user's own environment.

use super::panes::create_pane;
use super::Context;
use crate::args::{absolute, spawn_spec, RunArgs, TrustCommand, WorktreeCommand};
use crate::render::{diff_text, pane_json, worktrees_table};
use fugue_client::worktree::{self, NewWorktree, Released};
use fugue_client::{fanout, review, worktree_setup};
use fugue_client::{Client, ClientError};
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;

pub async fn run(ctx: &Context<'_>, command: &WorktreeCommand) -> Result<ExitCode, ClientError> {
    let client = match command {
        // A question of files and trust: no daemon needed.
        WorktreeCommand::Worktree(command) => {
            trust(ctx, command).await?;
            return Ok(ExitCode::SUCCESS);
        }
        _ => ctx.connect(true).await?,
    };
    match command {
        WorktreeCommand::Worktrees => {
            let views = worktree::views(&client).await?;
            ctx.out
                .print(crate::render::json_of(&views), || worktrees_table(&views));
        }
        WorktreeCommand::Diff { pane, patch: true, .. } => {
            let patch = worktree::pane_patch(&client, pane).await?;
            use std::io::Write;
            match std::io::stdout().write_all(&patch) {
                // A reader that stopped early (`| head`) wanted no more.
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    return Err(worktree::WorktreeError::Invalid(format!("cannot write the patch: {e}")).into());
                }
                _ => {}
            }
        }
        WorktreeCommand::Diff { pane, stat, .. } => {
            let view = worktree::pane_diff(&client, pane, *stat).await?;
            let color = !ctx.out.json && std::io::IsTerminal::is_terminal(&std::io::stdout());
            ctx.out
                .print(crate::render::json_of(&view), || diff_text(&view, *stat, color));
        }
        WorktreeCommand::Merge {
            worktree,
            squash,
            into,
            commit,
        } => {
            let record = worktree::find_target(&client, worktree).await?;
            if *commit {
                worktree::commit_all(&record, &format!("fugue: the work of {}", record.name)).await?;
            }
            let merged = worktree::merge(&record, into.as_deref(), *squash).await?;
            ctx.out.print(crate::render::json_of(&merged), || merged.summary());
        }
        WorktreeCommand::Discard { worktree, yes } => return discard(ctx, &client, worktree, *yes).await,
        WorktreeCommand::Review { pane, key } => return review(ctx, &client, pane, key.as_deref()).await,
        WorktreeCommand::Worktree(_) => {}
        WorktreeCommand::Fanout { .. } => start_fanout(ctx, &client, command).await?,
        WorktreeCommand::Compare {
            group,
            no_test,
            pick,
            squash,
            yes,
        } => {
            let Some(group) = group else {
                print_groups(ctx)?;
                return Ok(ExitCode::SUCCESS);
            };
            if let Some(member) = pick {
                return pick_member(ctx, &client, group, member, *squash, *yes).await;
            }
            let comparison = fanout::compare(&client, group, !no_test).await?;
            ctx.out.print(crate::render::json_of(&comparison), || {
                crate::render::compare_text(&comparison)
            });
        }
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
    let sandbox = super::sandbox::requested(args)?;
    let started = worktree::start_in_worktree(&new, spawn_spec(ctx, args)?, |spec| async {
        // The sandbox mounts the worktree: the pane's directory by then.
        let spec = match &sandbox {
            Some(sandbox) => super::sandbox::wrap(ctx, sandbox, spec).await?,
            None => spec,
        };
        create_pane(client, spec, None).await
    })
    .await?;
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
    let text = match &released {
        Released::Removed(_) => format!("removed worktree {} and branch {}", record.path, record.branch),
        Released::Gone => format!("worktree {} was gone already; forgot it", record.path),
        Released::Kept(work) => format!(
            "kept worktree {} (branch {}): it holds {}; `fugue release --discard` would remove it",
            record.path,
            record.branch,
            work.join(" and ")
        ),
    };
    say_notes(released.notes());
    let value = json!({"ok": true, "worktree": record.path, "branch": record.branch,
        "outcome": released.outcome(), "holds": released.holds(), "notes": released.notes()});
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
    let released = worktree::discard(client, &record).await?;
    let text = match released {
        Released::Gone => format!("worktree {} was gone already; forgot it", record.path),
        _ => format!("discarded worktree {} and branch {}", record.path, record.branch),
    };
    say_notes(released.notes());
    let value = json!({"ok": true, "worktree": record.path, "branch": record.branch,
        "outcome": released.outcome(), "notes": released.notes()});
    ctx.out.print(value, || text);
    Ok(ExitCode::SUCCESS)
}

/// Teardown failures, said on stderr whatever the output format.
fn say_notes(notes: &[String]) {
    for note in notes {
        eprintln!("fugue: {note}");
    }
}

/// `fugue fanout`: the group started, each agent in its worktree.
async fn start_fanout(ctx: &Context<'_>, client: &Client, command: &WorktreeCommand) -> Result<(), ClientError> {
    let WorktreeCommand::Fanout {
        agents,
        base,
        test,
        name,
        cwd,
        agent_commands,
        prompt,
    } = command
    else {
        return Ok(());
    };
    let request = fanout::Fanout {
        dir: absolute(cwd.clone().unwrap_or_else(|| PathBuf::from(".")))?,
        name: name.clone(),
        agents: fanout::parse_agents(agents)?,
        commands: fanout::agent_commands(agent_commands)?,
        prompt: prompt.clone(),
        base: base.clone(),
        test: test.clone(),
    };
    let (group, notes) = fanout::fanout(client, &request).await?;
    say_notes(&notes);
    ctx.out.print(crate::render::json_of(&group), || {
        let members: Vec<String> = group
            .members
            .iter()
            .map(|m| format!("  {} ({}, pane {}, PORT={})", m.worktree, m.agent, m.pane, m.port))
            .collect();
        format!(
            "group {}: {} agent(s) started\n{}\n`fugue compare {}` shows them side by side",
            group.name,
            group.members.len(),
            members.join("\n"),
            group.name
        )
    });
    Ok(())
}

/// `fugue compare` with no group: the groups.
fn print_groups(ctx: &Context<'_>) -> Result<(), ClientError> {
    let groups = fanout::groups()?;
    ctx.out.print(crate::render::json_of(&groups), || {
        let lines: Vec<String> = groups
            .iter()
            .map(|g| format!("{}  {} agent(s)  {:?}", g.name, g.members.len(), g.prompt))
            .collect();
        match lines.is_empty() {
            true => "no fan-out groups (`fugue fanout` starts one)".into(),
            false => lines.join("\n"),
        }
    });
    Ok(())
}

/// `fugue compare GROUP --pick MEMBER`: merge it, then offer to discard the
/// others (each as `fugue discard` would).
async fn pick_member(
    ctx: &Context<'_>,
    client: &Client,
    group: &str,
    member: &str,
    squash: bool,
    yes: bool,
) -> Result<ExitCode, ClientError> {
    let (merged, others) = fanout::pick(group, member, squash).await?;
    eprintln!("fugue: {}", merged.summary());
    let mut discarded = Vec::new();
    let others: Vec<worktree::WorktreeRecord> = others
        .iter()
        .filter_map(|m| worktree::find(&m.worktree, Some(&m.pane)).ok().flatten())
        .collect();
    let names: Vec<&str> = others.iter().map(|r| r.name.as_str()).collect();
    if !others.is_empty()
        && (yes
            || confirmed(&format!(
                "discard the other {} worktree(s) ({}), with their work?",
                others.len(),
                names.join(", ")
            ))?)
    {
        for record in &others {
            let released = worktree::discard(client, record).await?;
            say_notes(released.notes());
            discarded.push(record.name.clone());
        }
    }
    let forgotten = fanout::forget_if_empty(group).unwrap_or(false);
    let value = json!({"ok": true, "merged": merged, "discarded": discarded, "group_forgotten": forgotten});
    ctx.out.print(value, || match discarded.is_empty() {
        true => format!("merged {}; the others stay", merged.branch),
        false => format!("merged {}; discarded {}", merged.branch, discarded.join(", ")),
    });
    Ok(ExitCode::SUCCESS)
}

/// `fugue worktree trust|untrust [DIR]`.
async fn trust(ctx: &Context<'_>, command: &TrustCommand) -> Result<(), ClientError> {
    let (dir, trusting) = match command {
        TrustCommand::Trust { dir } => (dir, true),
        TrustCommand::Untrust { dir } => (dir, false),
    };
    let repo = worktree::toplevel(&absolute(dir.clone().unwrap_or_else(|| PathBuf::from(".")))?).await?;
    let file = repo.join(worktree_setup::REPO_FILE);
    if !trusting {
        let was = worktree_setup::untrust(&repo)?;
        let text = match was {
            true => format!("{} is no longer trusted: its commands will not run", file.display()),
            false => format!("{} was not trusted", file.display()),
        };
        ctx.out
            .print(json!({"ok": true, "file": file, "was_trusted": was}), || text);
        return Ok(());
    }
    let commands = worktree_setup::trust(&repo)?;
    ctx.out.print(
        json!({"ok": true, "file": file, "setup": commands.setup, "teardown": commands.teardown}),
        || {
            let list =
                |what: &str, list: &[String]| list.iter().map(|c| format!("\n  {what}: {c}")).collect::<String>();
            format!(
                "trusted {} as it reads now:{}{}",
                file.display(),
                list("setup", &commands.setup),
                list("teardown", &commands.teardown)
            )
        },
    );
    Ok(())
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
