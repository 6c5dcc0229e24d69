//! `run`, `panes`, `status`, `rename-pane`, `reorder`, `resize`,
//! `set-size-policy`, `interrupt`, `kill`, `release`.

use super::{print_ok, Context};
use crate::args::{invalid, parse_size, spawn_spec, PaneCommand, DEFAULT_SESSION};
use crate::render::{pane_json, panes_table};
use fugue_client::protocol::{ErrorCode, PaneInfo, SizePolicy, SpawnSpec};
use fugue_client::views::now_ms;
use fugue_client::{Client, ClientError};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::ExitCode;

pub async fn run(ctx: &Context<'_>, command: &PaneCommand) -> Result<ExitCode, ClientError> {
    if let PaneCommand::Panes {
        session,
        all_hosts,
        fleet,
    } = command
    {
        if *all_hosts || *fleet {
            let listing = super::remote::Listing::Panes(session.clone());
            return super::remote::list_all_hosts(ctx, listing, *fleet).await;
        }
    }
    let client = ctx.connect(true).await?;
    let out = &ctx.out;
    match command {
        PaneCommand::Run(args) if args.worktree.is_some() => {
            super::worktrees::run_in_worktree(ctx, &client, args).await?;
        }
        PaneCommand::Run(args) => {
            let mut spec = spawn_spec(ctx, args)?;
            if let Some(sandbox) = super::sandbox::requested(args)? {
                spec = super::sandbox::wrap(ctx, &sandbox, spec).await?;
            }
            let info = create_pane(&client, spec, ctx.here_cwd()?).await?;
            out.print(pane_json(&info), || info.id.to_string());
        }
        PaneCommand::Panes { session, .. } => {
            let panes = client.list_panes(session.as_deref()).await?;
            out.print(Value::Array(panes.iter().map(pane_json).collect()), || {
                panes_table(&panes, now_ms())
            });
        }
        PaneCommand::Status { pane } => {
            let info = client.pane_status(pane).await?;
            out.print(pane_json(&info), || panes_table(std::slice::from_ref(&info), now_ms()));
        }
        PaneCommand::RenamePane { pane, title } => {
            let info = client.rename_pane(pane, title).await?;
            out.print(pane_json(&info), String::new);
        }
        PaneCommand::Reorder { session, panes } => {
            let list = client.reorder_panes(session, panes).await?;
            out.print(Value::Array(list.iter().map(pane_json).collect()), || {
                panes_table(&list, now_ms())
            });
        }
        PaneCommand::Resize { pane, size } => {
            client.resize_pane(pane, parse_size(size)?).await?;
            print_ok(ctx);
        }
        PaneCommand::SetSizePolicy { pane, policy } => {
            let policy = SizePolicy::parse(policy).map_err(invalid)?;
            client.set_size_policy(pane, policy).await?;
            out.print(json!({"ok": true, "policy": policy.as_str()}), String::new);
        }
        PaneCommand::Interrupt { pane } => {
            client.interrupt(pane).await?;
            print_ok(ctx);
        }
        PaneCommand::Kill { pane, signal } => {
            let info = client.kill_pane(pane, Some(signal)).await?;
            out.print(pane_json(&info), String::new);
        }
        PaneCommand::Release { pane, discard } => {
            super::worktrees::release(ctx, &client, pane, *discard).await?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The session that panes opening agent sessions outside any pane
/// (`fugue attach bg:ID`) go to.
pub const BACKGROUND_SESSION: &str = "bg";

/// Creates a pane; the default session (or the background one) is created
/// first (in `session_cwd`, see `Context::here_cwd`) if it does not exist.
pub async fn create_pane(
    client: &Client,
    spec: SpawnSpec,
    session_cwd: Option<PathBuf>,
) -> Result<PaneInfo, ClientError> {
    match client.create_pane(spec.clone()).await {
        Err(err)
            if err.code() == Some(ErrorCode::SessionNotFound)
                && matches!(spec.session.as_str(), DEFAULT_SESSION | BACKGROUND_SESSION) =>
        {
            match client
                .create_session(&spec.session, session_cwd.as_deref(), Vec::new())
                .await
            {
                // Another client may have just created it.
                Ok(_) => {}
                Err(err) if err.code() == Some(ErrorCode::NameTaken) => {}
                Err(err) => return Err(err),
            }
            client.create_pane(spec).await
        }
        result => result,
    }
}
