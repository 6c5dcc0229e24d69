//! The agent CLIs in panes: `overview`, `top`, `agent`, `approve`, `deny`,
//! `prompt`, `resume`, `hibernate`, `wake`; `events` (what changes, as it happens) and
//! `agent-event` (what an agent's hooks run).

use super::Context;
use crate::args::AgentCommand;
use crate::render::{agent_text, event_line, json_of, overview_table, pane_json, signals_text};
use fugue_client::protocol::{Attention, PermissionAnswer};
use fugue_client::views::{now_ms, AgentStateView, AnsweredView};
use fugue_client::{ClientError, ConnectOptions};
use std::io::Write;
use std::process::ExitCode;

pub async fn run(ctx: &Context<'_>, command: &AgentCommand) -> Result<ExitCode, ClientError> {
    if let AgentCommand::Top { all_hosts, fleet, .. } = command {
        if *all_hosts || *fleet {
            let mut local = ConnectOptions::default().client_name("fugue-cli");
            local.socket = ctx.cli.socket.clone();
            let (targets, unreachable) = super::remote::elsewhere(*fleet).await?;
            if *fleet {
                let sources = fugue_client::fleet::sources().map_err(crate::args::invalid)?;
                return crate::top::run_fleet(local, targets, unreachable, sources).await;
            }
            return crate::top::run_all_hosts(local, targets, unreachable).await;
        }
    }
    let client = ctx.connect(true).await?;
    let out = &ctx.out;
    match command {
        AgentCommand::Overview { session } => {
            let mut views = client.overview_rows(session.as_deref()).await?;
            // Needs-you first, then the session's own order.
            views.sort_by_key(|v| v.agent.as_ref().is_none_or(|a| a.needs == Attention::Nothing));
            out.print(json_of(&views), || overview_table(&views, now_ms()));
        }
        AgentCommand::Top { session, .. } => return crate::top::run(&client, session.clone()).await,
        AgentCommand::Agent { pane, explain } => {
            let view = AgentStateView::from(&client.agent_status(pane).await?);
            let now = now_ms();
            out.print(json_of(&view), || match explain {
                true => format!("{}\n{}", agent_text(&view, now), signals_text(&view, now)),
                false => agent_text(&view, now),
            });
        }
        AgentCommand::Approve { pane, prompt_id } | AgentCommand::Deny { pane, prompt_id } => {
            let answer = match command {
                AgentCommand::Approve { .. } => PermissionAnswer::Approve,
                _ => PermissionAnswer::Deny,
            };
            let answered = client.answer_permission(pane, prompt_id, answer).await?;
            out.print(json_of(AnsweredView::from(&answered)), || match answered.already {
                true => format!("already {}: nothing sent", answered.answer.past()),
                false => answered.answer.past().to_string(),
            });
        }
        AgentCommand::Prompt { pane, text, key } => {
            let sent = fugue_client::ops::send_prompt(&client, pane, text, key.as_deref()).await?;
            out.print(json_of(&sent), || sent.message.clone());
            if !sent.went_busy {
                return Ok(ExitCode::FAILURE);
            }
        }
        AgentCommand::Resume { pane } => {
            let info = client.resume_agent(pane).await?;
            out.print(pane_json(&info), || info.id.to_string());
        }
        AgentCommand::Hibernate { pane } => {
            let info = client.hibernate(pane).await?;
            out.print(pane_json(&info), || format!("{} hibernated", info.id));
        }
        AgentCommand::Wake { pane } => {
            let woken = client.wake(pane).await?;
            let info = &woken.pane;
            let mut json = pane_json(info);
            json["started_fresh"] = serde_json::json!(woken.started_fresh);
            out.print(json, || match &woken.started_fresh {
                Some(why) => format!("{} awake (pid {}), started afresh: {why}", info.id, info.pid),
                None => format!("{} awake (pid {})", info.id, info.pid),
            });
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `fugue events`: lifecycle and agent-state events, one per line, flushed as they come.
pub async fn events(ctx: &Context<'_>) -> Result<ExitCode, ClientError> {
    let client = ctx.connect(true).await?;
    let mut events = client.subscribe().await?;
    let mut stdout = std::io::stdout();
    while let Some(event) = events.recv().await {
        let Some(value) = fugue_client::views::lifecycle_event(&event) else {
            continue;
        };
        let line = match ctx.out.json {
            true => fugue_client::views::safe_json(&value, false),
            false => event_line(&event, &value),
        };
        if writeln!(stdout, "{line}").and_then(|()| stdout.flush()).is_err() {
            // The reader went away (a closed pipe): done.
            return Ok(ExitCode::SUCCESS);
        }
    }
    Err(ClientError::Closed(String::new()))
}

/// `fugue agent-event`: an agent's hook reporting to the daemon. It must never
/// get in the agent's way: whatever goes wrong (not in a fugue pane, no daemon,
/// JSON it does not know), it prints nothing on stdout (which agents read as
/// the hook's answer) and exits 0; problems go to stderr.
pub async fn agent_event(ctx: &Context<'_>, agent: Option<&str>) -> ExitCode {
    use std::io::Read;
    // Read first, always: an agent writing its hook's JSON into a pipe nobody
    // reads gets EPIPE. A hook's JSON is small; past 1 MiB it is not one (the rest,
    // up to 64 MiB, is read and dropped).
    let mut input = Vec::new();
    let mut stdin = std::io::stdin().lock();
    let read = Read::read_to_end(&mut Read::take(&mut stdin, 1 << 20), &mut input);
    let _ = std::io::copy(&mut Read::take(&mut stdin, 64 << 20), &mut std::io::sink());
    let Some(pane) = std::env::var("FUGUE_PANE").ok().filter(|p| !p.is_empty()) else {
        return ExitCode::SUCCESS;
    };
    let token = std::env::var("FUGUE_PANE_TOKEN").unwrap_or_default();
    let hook = match read
        .map_err(|e| e.to_string())
        .and_then(|_| crate::hooks::parse(&input, agent))
    {
        Ok(hook) => hook,
        Err(err) => {
            eprintln!("fugue agent-event: {err}");
            return ExitCode::SUCCESS;
        }
    };
    let sent = async {
        let client = ctx.connect(false).await?;
        client.agent_hook(&pane, &token, hook).await
    };
    match tokio::time::timeout(std::time::Duration::from_secs(2), sent).await {
        Ok(Ok(())) => {}
        Ok(Err(err)) => eprintln!("fugue agent-event: {err}"),
        Err(_) => eprintln!("fugue agent-event: fugued did not answer within 2 s"),
    }
    ExitCode::SUCCESS
}
