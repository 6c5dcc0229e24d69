//! `wait`: for a pane's exit, or for the first of several conditions.

use super::{Context, EXIT_TIMEOUT};
use crate::args::{parse_timeout, WaitCommand};
use crate::render::{pane_json, wait_text};
use fugue_client::protocol::{WaitCondition, WaitUntil};
use fugue_client::views::WaitView;
use fugue_client::{Client, ClientError};
use serde_json::json;
use std::process::ExitCode;
use std::time::Duration;

pub async fn run(ctx: &Context<'_>, command: &WaitCommand) -> Result<ExitCode, ClientError> {
    let WaitCommand::Wait { pane, timeout, until } = command;
    let client = ctx.connect(true).await?;
    let timeout = timeout.map(parse_timeout).transpose()?;
    if let Some(until) = until.until()? {
        return wait_for(ctx, &client, pane, until, timeout).await;
    }
    let (info, exited) = client.wait_for_exit(pane, timeout).await?;
    let mut value = pane_json(&info);
    value["timed_out"] = json!(!exited);
    if !exited {
        let secs = timeout.map_or(0.0, |t| t.as_secs_f64());
        if ctx.out.json {
            ctx.out.print(value, String::new);
        }
        eprintln!("fugue: timed out after {secs}s waiting for pane {} to exit", info.id);
        return Ok(ExitCode::from(EXIT_TIMEOUT));
    }
    ctx.out.print(value, || crate::render::exit_text(info.exit));
    Ok(ExitCode::SUCCESS)
}

/// `fugue wait` with conditions: prints which one held; 124 on timeout, 1 when
/// the process exited before any other condition held.
async fn wait_for(
    ctx: &Context<'_>,
    client: &Client,
    pane: &str,
    until: WaitUntil,
    timeout: Option<Duration>,
) -> Result<ExitCode, ClientError> {
    let timeout = timeout.unwrap_or(Duration::from_millis(fugue_client::protocol::limits::MAX_TIMEOUT_MS));
    let outcome = client.wait_for(pane, until, timeout).await?;
    let condition = outcome.condition;
    let view = WaitView::from(outcome);
    let text = wait_text(&view);
    ctx.out
        .print(serde_json::to_value(&view).unwrap_or_default(), || text.clone());
    let code = match condition {
        WaitCondition::Timeout => EXIT_TIMEOUT,
        WaitCondition::Exit => 1,
        _ => return Ok(ExitCode::SUCCESS),
    };
    if ctx.out.json {
        eprintln!("fugue: {text}");
    } else {
        eprintln!("fugue: pane {pane} ended the wait with {}", view.condition);
    }
    Ok(ExitCode::from(code))
}
