//! `new-session`, `ls`, `rename-session`, `kill-session`.

use super::Context;
use crate::args::{parse_env, SessionCommand};
use crate::render::{session_json, sessions_table};
use fugue_client::views::now_ms;
use fugue_client::ClientError;
use serde_json::{json, Value};
use std::process::ExitCode;

pub async fn run(ctx: &Context<'_>, command: &SessionCommand) -> Result<ExitCode, ClientError> {
    if let SessionCommand::Ls { all_hosts, fleet } = command {
        if *all_hosts || *fleet {
            return super::remote::list_all_hosts(ctx, super::remote::Listing::Sessions, *fleet).await;
        }
    }
    let client = ctx.connect(true).await?;
    let out = &ctx.out;
    match command {
        SessionCommand::NewSession { name, cwd, env } => {
            let cwd = match cwd {
                Some(given) => Some(ctx.given_cwd(given)?),
                None => ctx.here_cwd()?,
            };
            let info = client.create_session(name, cwd.as_deref(), parse_env(env)?).await?;
            out.print(session_json(&info), || info.id.to_string());
        }
        SessionCommand::Ls { .. } => {
            let sessions = client.list_sessions().await?;
            out.print(Value::Array(sessions.iter().map(session_json).collect()), || {
                sessions_table(&sessions, now_ms())
            });
        }
        SessionCommand::RenameSession { target, name } => {
            let (info, previous) = client.rename_session(target, name).await?;
            let mut value = session_json(&info);
            value["previous_name"] = json!(previous);
            out.print(value, || format!("renamed '{previous}' to '{}'", info.name));
        }
        SessionCommand::KillSession { target } => {
            let info = client.destroy_session(target).await?;
            out.print(session_json(&info), || {
                format!("killed session '{}' ({})", info.name, info.id)
            });
        }
    }
    Ok(ExitCode::SUCCESS)
}
