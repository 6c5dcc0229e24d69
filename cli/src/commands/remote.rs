//! Other machines: `proxy` (what `ssh HOST fugue proxy` runs for `--host`) and
//! the `--all-hosts` listings, which ask this machine and every host (at most
//! `ASK_AT_ONCE` at a time, each within `ASK_WITHIN`).

use super::Context;
use crate::render::{pane_json, panes_rows, session_json, sessions_rows, table, PANE_HEADER, SESSION_HEADER};
use fugue_client::views::now_ms;
use fugue_client::{Client, ClientError, ConnectOptions};
use serde_json::{json, Value};
use std::process::ExitCode;

/// `fugue proxy`: the local daemon's socket on stdin and stdout, byte for byte.
pub async fn proxy(ctx: &Context<'_>) -> Result<ExitCode, ClientError> {
    if ctx.cli.host.is_some() {
        return Err(ClientError::Protocol(
            "proxy serves this machine's daemon; it takes no --host".into(),
        ));
    }
    // A client that would not start a daemon here (a reconnect, `daemon
    // status`) says so through the environment ssh runs this in.
    let start = std::env::var_os(fugue_client::remote::PROXY_NO_START).is_none();
    let (stream, _) = fugue_client::connect_socket(&ctx.connect_options()?.autostart(start)).await?;
    let (mut from_daemon, mut to_daemon) = stream.into_split();
    let mut stdin = tokio::io::stdin();
    let mut stdout = tokio::io::stdout();
    tokio::select! {
        _ = tokio::io::copy(&mut stdin, &mut to_daemon) => {}
        _ = tokio::io::copy(&mut from_daemon, &mut stdout) => {}
    }
    use tokio::io::AsyncWriteExt;
    let _ = stdout.flush().await;
    // A blocking read of stdin cannot be cancelled; leave without waiting for it.
    std::process::exit(0)
}

/// The daemons elsewhere that `--all-hosts` (the hosts file's hosts) or
/// `--fleet` (what the fleet's sources find) names, each with how to reach
/// it, and what could not be asked (one line each). A host's proxy starts its
/// daemon as any command there would; a fleet's endpoint is looked at only
/// (a container with the label is expected to run fugued).
pub async fn elsewhere(fleet: bool) -> Result<(Vec<(String, ConnectOptions)>, Vec<String>), ClientError> {
    let options = |remote: fugue_client::remote::Remote, start: bool| {
        let name = remote.name.clone();
        (
            name,
            ConnectOptions::default()
                .client_name("fugue-cli")
                .host(remote)
                .autostart(start),
        )
    };
    if !fleet {
        let hosts = fugue_client::remote::all_hosts().map_err(ClientError::Protocol)?;
        return Ok((
            hosts.into_iter().map(|remote| options(remote, true)).collect(),
            Vec::new(),
        ));
    }
    let sources = fugue_client::fleet::sources().map_err(crate::args::invalid)?;
    let found = fugue_client::fleet::discover(&sources).await;
    let mut notes = found.problems;
    if found.over > 0 {
        notes.push(format!(
            "{} more endpoints matched than the {} a fleet lists; narrow a source's label",
            found.over,
            fugue_client::fleet::FLEET_MAX
        ));
    }
    let targets = found.endpoints.into_iter().map(|e| options(e.remote, false)).collect();
    Ok((targets, notes))
}

/// What `--all-hosts` lists.
pub enum Listing {
    Sessions,
    Panes(Option<String>),
}

/// `ls --all-hosts` and `panes --all-hosts`: this machine and every host of the
/// hosts file, asked together (bounded); a host that cannot be reached or does
/// not answer in time is reported and the others listed (exit 1 only when none
/// answered).
pub async fn list_all_hosts(ctx: &Context<'_>, listing: Listing, fleet: bool) -> Result<ExitCode, ClientError> {
    let (elsewhere, notes) = elsewhere(fleet).await?;
    if !ctx.out.json {
        for note in &notes {
            eprintln!("fugue: {note}");
        }
    }
    // Listing starts no daemon here (a host's proxy starts its own, as any
    // command there would).
    let local = ConnectOptions {
        socket: ctx.cli.socket.clone(),
        ..ConnectOptions::default().client_name("fugue-cli").autostart(false)
    };
    let mut targets = vec![("local".to_string(), local)];
    targets.extend(elsewhere);
    let (key, head) = match listing {
        Listing::Sessions => ("sessions", SESSION_HEADER),
        Listing::Panes(_) => ("panes", PANE_HEADER),
    };
    let listing = &listing;
    let now = now_ms();
    // Each host's answer: its listing as JSON values and as table rows; at
    // most ASK_AT_ONCE hosts at a time, each within ASK_WITHIN.
    let answers = fugue_client::remote::ask_each(targets, |(_, options)| async move {
        let client = Client::connect(options).await.map_err(|e| e.to_string())?;
        Ok::<_, String>(match listing {
            Listing::Sessions => {
                let sessions = client.list_sessions().await.map_err(|e| e.to_string())?;
                (
                    sessions.iter().map(session_json).collect::<Vec<_>>(),
                    sessions_rows(&sessions, now),
                )
            }
            Listing::Panes(session) => {
                let panes = client.list_panes(session.as_deref()).await.map_err(|e| e.to_string())?;
                (panes.iter().map(pane_json).collect(), panes_rows(&panes, now))
            }
        })
    })
    .await;
    let answers: Vec<(String, Result<_, String>)> =
        answers.into_iter().map(|((name, _), answer)| (name, answer)).collect();
    let answered = answers.iter().filter(|(_, a)| a.is_ok()).count();
    let header: Vec<&str> = std::iter::once("HOST").chain(head.iter().copied()).collect();
    let (mut json_hosts, mut rows) = (Vec::new(), Vec::new());
    for (host, answer) in answers {
        match answer {
            Ok((values, host_rows)) => {
                json_hosts.push(json!({"host": host, key: values}));
                rows.extend(
                    host_rows
                        .into_iter()
                        .map(|row| std::iter::once(host.clone()).chain(row).collect()),
                );
            }
            Err(err) => {
                json_hosts.push(json!({"host": host, "error": err}));
                if !ctx.out.json {
                    eprintln!("fugue: host {host}: {err}");
                }
            }
        }
    }
    ctx.out.print(Value::Array(json_hosts), || match rows.is_empty() {
        true => String::new(),
        false => table(&header, rows),
    });
    Ok(if answered == 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
