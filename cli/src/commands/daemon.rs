//! `daemon start|stop|status|upgrade|install|uninstall`.

use super::Context;
use crate::args::{DaemonCommand, InstallArgs};
use crate::render::{daemon_text, json_of, Output};
use fugue_client::views::{now_ms, DaemonView};
use fugue_client::{Client, ClientError};
use serde_json::json;
use std::process::ExitCode;
use std::time::Duration;

pub async fn run(ctx: &Context<'_>, command: &DaemonCommand) -> Result<ExitCode, ClientError> {
    let out = &ctx.out;
    let socket = fugue_client::protocol::socket::socket_path(ctx.cli.socket.as_deref());
    match command {
        DaemonCommand::Start { foreground } => {
            if let Ok(client) = ctx.connect(false).await {
                let pid = client.welcome().pid;
                out.print(json!({"running": true, "pid": pid, "started": false}), || {
                    format!("fugued already running (pid {pid})")
                });
                return Ok(ExitCode::SUCCESS);
            }
            if *foreground {
                use std::os::unix::process::CommandExt;
                let err = std::process::Command::new(fugue_client::daemon_binary())
                    .arg("--foreground")
                    .arg("--socket")
                    .arg(&socket)
                    .exec();
                return Err(ClientError::Start(err.to_string()));
            }
            fugue_client::start_daemon(&socket).await?;
            let client = ctx.connect(false).await?;
            let pid = client.welcome().pid;
            out.print(json!({"running": true, "pid": pid, "started": true}), || {
                format!("fugued started (pid {pid})")
            });
        }
        DaemonCommand::Stop => {
            let client = match ctx.connect(false).await {
                Ok(client) => client,
                Err(ClientError::Connect { .. }) => {
                    out.print(json!({"running": false, "stopped": false}), || {
                        "fugued is not running".to_string()
                    });
                    return Ok(ExitCode::SUCCESS);
                }
                Err(err) => return Err(err),
            };
            let pid = client.welcome().pid;
            client.shutdown(Duration::from_secs(15)).await?;
            out.print(json!({"running": false, "stopped": true, "pid": pid}), || {
                format!("fugued stopped (pid {pid})")
            });
        }
        DaemonCommand::Status => {
            let client = ctx.connect(false).await?;
            let info = client.daemon_status().await?;
            out.print(json_of(DaemonView::from(&info)), || daemon_text(&info, now_ms()));
        }
        DaemonCommand::Install(install) => return login(&socket, install, true, out),
        DaemonCommand::Uninstall(install) => return login(&socket, install, false, out),
        DaemonCommand::Upgrade => {
            let info = Client::upgrade_daemon(ctx.connect_options()?, Duration::from_secs(60)).await?;
            let failed = info.recovery.starts_with("upgrade failed");
            out.print(json_of(DaemonView::from(&info)), || match failed {
                true => format!("fugue: {}", info.recovery),
                false => info.recovery.clone(),
            });
            if failed {
                return Ok(ExitCode::FAILURE);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `fugue daemon install` and `uninstall`.
fn login(socket: &std::path::Path, args: &InstallArgs, install: bool, out: &Output) -> Result<ExitCode, ClientError> {
    use crate::login::{activation_commands, run_commands, unit_files};
    let fail = |why: String| ClientError::Start(why);
    let manager = args.manager.unwrap_or_default();
    let fugued = crate::login::absolute_fugued(fugue_client::daemon_binary()).map_err(fail)?;
    let files = unit_files(manager, &fugued, socket).map_err(fail)?;
    let commands = match args.no_enable {
        true => Vec::new(),
        false => activation_commands(manager, install),
    };
    let paths: Vec<String> = files.iter().map(|f| f.path.display().to_string()).collect();
    let shown: Vec<String> = commands.iter().map(|c| c.join(" ")).collect();
    if args.print {
        out.print(
            json!({"files": files.iter().map(|f| json!({"path": f.path, "text": f.text})).collect::<Vec<_>>(), "commands": shown}),
            || {
                let mut text = String::new();
                for file in &files {
                    text.push_str(&format!("# {}\n{}\n", file.path.display(), file.text));
                }
                for command in &shown {
                    text.push_str(&format!("$ {command}\n"));
                }
                text.trim_end().to_string()
            },
        );
        return Ok(ExitCode::SUCCESS);
    }
    if install {
        for file in &files {
            if let Some(dir) = file.path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| fail(format!("cannot create {}: {e}", dir.display())))?;
            }
            std::fs::write(&file.path, &file.text)
                .map_err(|e| fail(format!("cannot write {}: {e}", file.path.display())))?;
        }
        run_commands(&commands).map_err(|e| fail(format!("wrote {}, but {e}", paths.join(", "))))?;
    } else {
        // Disable first (the manager needs the files for it), then remove them.
        if let Err(err) = run_commands(&commands) {
            eprintln!("fugue: {err}; removing the files anyway");
        }
        for file in &files {
            match std::fs::remove_file(&file.path) {
                Ok(()) => {}
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => return Err(fail(format!("cannot remove {}: {err}", file.path.display()))),
            }
        }
    }
    let verb = if install { "installed" } else { "removed" };
    out.print(json!({verb: paths, "commands": shown}), || {
        let mut text = format!("{verb} {}", paths.join(", "));
        if !shown.is_empty() {
            text.push_str(&format!(" (ran: {})", shown.join("; ")));
        }
        text
    });
    Ok(ExitCode::SUCCESS)
}
