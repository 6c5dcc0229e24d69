//! A pane's terminal: `read`, `write`, `send-keys`, `capture`, `grep`,
//! `attach`, and `fugue` alone (a new shell, attached).

use super::{print_ok, Context};
use crate::args::{invalid, line_number, IoCommand, DEFAULT_SESSION};
use crate::render::{grep_text, json_of, short};
use fugue_client::protocol::{CaptureWhat, ReadMode, SpawnSpec};
use fugue_client::views::{CaptureView, GrepView, ReadView};
use fugue_client::{Client, ClientError};
use std::io::Write;
use std::process::ExitCode;

pub async fn run(ctx: &Context<'_>, command: &IoCommand) -> Result<ExitCode, ClientError> {
    let client = ctx.connect(true).await?;
    match command {
        IoCommand::Read {
            pane,
            lines,
            raw,
            since,
        } => read(ctx, &client, pane, *raw, *lines, *since).await?,
        IoCommand::Write {
            pane,
            text,
            enter,
            paste,
        } => {
            match paste {
                true => client.paste(pane, text.as_bytes()).await?,
                false => client.write_input(pane, text.as_bytes()).await?,
            }
            if *enter {
                client.send_keys(pane, &["Enter".to_string()]).await?;
            }
            print_ok(ctx);
        }
        IoCommand::SendKeys { pane, keys } => {
            client.send_keys(pane, keys).await?;
            print_ok(ctx);
        }
        IoCommand::Capture {
            pane,
            start,
            end,
            ansi,
            scrollback,
            join,
        } => {
            let what = match scrollback {
                true => CaptureWhat::All,
                false => CaptureWhat::Screen,
            };
            let range = (
                line_number(start.as_deref(), i64::MIN)?,
                line_number(end.as_deref(), i64::MAX)?,
            );
            let capture = client.capture(pane, what, range, *ansi, *join).await?;
            let text = capture.lines.join("\n");
            ctx.out.print(json_of(CaptureView::from(capture)), || text);
        }
        IoCommand::Grep { pattern, session, max } => {
            return grep(ctx, &client, pattern, session.as_deref(), *max).await
        }
        IoCommand::Attach {
            target,
            read_only,
            window,
            detach_key,
            prefix_key,
            clipboard,
            no_notify,
        } => {
            let options = crate::attach::AttachOptions {
                notify: !*no_notify,
                clipboard: *clipboard,
                read_only: *read_only,
                detach_key: crate::attach::parse_key(detach_key).map_err(invalid)?,
                prefix_key: crate::attach::parse_key(prefix_key).map_err(invalid)?,
                reconnect: Some(ctx.connect_options()?),
            };
            if *window || target.starts_with('@') {
                return attach_window(&client, target, options).await;
            }
            if let Some(id) = target.strip_prefix("bg:") {
                let pane = open_background(&client, id).await?;
                return attach(&client, &pane, options).await;
            }
            return attach(&client, target, options).await;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `fugue read`: the text view's last lines, or the raw log (as bytes, unless `--json`).
async fn read(
    ctx: &Context<'_>,
    client: &Client,
    pane: &str,
    raw: bool,
    lines: u32,
    since: Option<u64>,
) -> Result<(), ClientError> {
    let mode = match raw {
        true => ReadMode::Raw { since, max_bytes: None },
        false => ReadMode::Text { lines, since },
    };
    let chunk = client.read_output(pane, mode).await?;
    let text = match raw {
        true => String::from_utf8_lossy(&chunk.data).into_owned(),
        false => chunk.lines.join("\n"),
    };
    if ctx.out.json {
        let lines = (!raw).then(|| chunk.lines.clone());
        ctx.out.print(json_of(ReadView::new(&chunk, text, lines)), String::new);
    } else if raw {
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(&chunk.data);
        let _ = stdout.flush();
    } else if !text.is_empty() {
        println!("{text}");
    }
    Ok(())
}

/// `fugue grep`: exit status 1 when nothing matched, as grep(1).
async fn grep(
    ctx: &Context<'_>,
    client: &Client,
    pattern: &str,
    session: Option<&str>,
    max: Option<u32>,
) -> Result<ExitCode, ClientError> {
    let found = fugue_client::ops::grep(client, pattern, session, max).await?;
    let view = GrepView::from(&found);
    ctx.out.print(json_of(&view), || grep_text(&view));
    if found.timed_out {
        eprintln!("fugue: the search took its 5 s before every pane was searched; narrow it with --session");
    }
    if found.truncated {
        eprintln!(
            "fugue: more lines matched than the {} shown (--max)",
            view.matches.len()
        );
    }
    Ok(match found.matches.is_empty() {
        true => ExitCode::FAILURE,
        false => ExitCode::SUCCESS,
    })
}

/// Opens the agent session `id` running outside any pane (`claude --bg`,
/// a row of origin `claude_background`) in a new pane: its CLI's `attach
/// ID`, in its directory, in a session of its own (`bg`), tracked from
/// then on like any pane. Returns the new pane's id.
async fn open_background(client: &Client, id: &str) -> Result<String, ClientError> {
    let rows = client.background_agents().await?;
    let Some(row) = rows.iter().find(|row| row.id == id) else {
        let known: Vec<&str> = rows.iter().map(|row| row.id.as_str()).collect();
        return Err(invalid(format!(
            "no background session '{id}' (fugue overview lists them as bg:ID; there are: {})",
            match known.is_empty() {
                true => "none".to_string(),
                false => known.join(", "),
            }
        )));
    };
    let mut spec = fugue_client::protocol::SpawnSpec::new(super::panes::BACKGROUND_SESSION);
    spec.command = Some(row.program.clone());
    spec.args = vec!["attach".into(), row.id.clone()];
    spec.cwd = Some(row.cwd.clone());
    spec.env = row.env.clone();
    spec.shell = false;
    spec.title = Some(format!("claude attach {}", row.id));
    let cwd = Some(std::path::PathBuf::from(&row.cwd));
    let pane = super::panes::create_pane(client, spec, cwd).await?;
    Ok(pane.id.to_string())
}

/// Attaches this terminal to `target` until the user detaches or the pane ends.
/// The overview (prefix `w`) chooses the next pane; quitting it detaches.
async fn attach(client: &Client, target: &str, options: crate::attach::AttachOptions) -> Result<ExitCode, ClientError> {
    use crate::attach::Ended;
    let connect = options
        .reconnect
        .clone()
        .ok_or_else(|| ClientError::Protocol("attach needs to know how it connected".into()))?;
    let mut target = target.to_string();
    // Each attachment after the first on a connection of its own (one
    // connection's event stream is taken once).
    let mut fresh: Option<Client> = None;
    loop {
        let client = fresh.as_ref().unwrap_or(client);
        match crate::attach::run(client, &target, options.clone()).await? {
            Ended::Detached(pane) => eprintln!("[detached from pane {}]", short(pane)),
            Ended::Exited(pane, status) => eprintln!("[pane {} {status}]", short(pane)),
            Ended::DaemonGone => {
                eprintln!("fugue: lost the connection to fugued");
                return Ok(ExitCode::FAILURE);
            }
            Ended::Overview(pane) => match crate::top::choose(&connect, pane).await? {
                Some(chosen) => {
                    target = chosen.to_string();
                    fresh = Some(Client::connect(connect.clone().autostart(false)).await?);
                    continue;
                }
                None => eprintln!("[detached from pane {}]", short(pane)),
            },
        }
        return Ok(ExitCode::SUCCESS);
    }
}

/// Attaches this terminal to a tmux window's panes, tiled, until the person
/// detaches or the window's last pane ends.
async fn attach_window(
    client: &Client,
    target: &str,
    options: crate::attach::AttachOptions,
) -> Result<ExitCode, ClientError> {
    let window = crate::tiles::window_of(client, target).await?;
    match crate::tiles::run(client, window, options).await? {
        crate::attach::Ended::DaemonGone => {
            eprintln!("fugue: lost the connection to fugued");
            Ok(ExitCode::FAILURE)
        }
        _ => {
            eprintln!("[detached from window @{window}]");
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `fugue` alone: a new shell in the default session, attached.
pub async fn shell_attached(ctx: &Context<'_>) -> Result<ExitCode, ClientError> {
    if std::env::var_os("FUGUE_PANE").is_some() {
        return Err(invalid(
            "already inside a fugue pane (FUGUE_PANE is set); unset it to attach from here".into(),
        ));
    }
    let client = ctx.connect(true).await?;
    let mut spec = SpawnSpec::new(DEFAULT_SESSION);
    spec.shell = true;
    let cwd = ctx.here_cwd()?;
    spec.cwd = cwd.as_ref().map(|cwd| cwd.display().to_string());
    let pane = super::panes::create_pane(&client, spec, cwd).await?;
    let options = crate::attach::AttachOptions {
        clipboard: false,
        read_only: false,
        detach_key: crate::attach::parse_key(crate::attach::DETACH_KEY).map_err(invalid)?,
        prefix_key: crate::attach::parse_key(crate::attach::PREFIX_KEY).map_err(invalid)?,
        reconnect: Some(ctx.connect_options()?),
        notify: true,
    };
    attach(&client, &pane.id.to_string(), options).await
}
