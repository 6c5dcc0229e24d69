//! `fugue fleet`: the daemons the fleet's sources find (`fugue_client::fleet`),
//! whether each answers, and with `--watch` each start and stop as the engines
//! report them.

use super::Context;
use crate::render::table;
use fugue_client::fleet::{self, Change, Endpoint, Found, Source};
use fugue_client::protocol::DaemonInfo;
use fugue_client::{Client, ClientError, ConnectOptions};
use serde_json::{json, Value};
use std::io::Write;
use std::process::ExitCode;

/// Every endpoint, where it runs and whether it answers; then, with `watch`,
/// the engines' events. Exit 1 only when no source could be asked.
pub async fn run(ctx: &Context<'_>, watch: bool) -> Result<ExitCode, ClientError> {
    let sources = fleet::sources().map_err(crate::args::invalid)?;
    let found = fleet::discover(&sources).await;
    let asked = fugue_client::remote::ask_each(found.endpoints.clone(), |endpoint| async move {
        let options = ConnectOptions::default()
            .client_name("fugue-cli")
            .host(endpoint.remote)
            .autostart(false);
        let client = Client::connect(options).await.map_err(|e| e.to_string())?;
        client.daemon_status().await.map_err(|e| e.to_string())
    })
    .await;
    print_listing(ctx, &found, &asked, watch);
    if found.problems.len() == sources.len() && !sources.is_empty() {
        return Ok(ExitCode::FAILURE);
    }
    if !watch {
        return Ok(ExitCode::SUCCESS);
    }
    let listed = found.endpoints.iter().map(|e| e.remote.name.clone()).collect();
    follow(ctx, &sources, listed).await
}

fn print_listing(ctx: &Context<'_>, found: &Found, asked: &[(Endpoint, Result<DaemonInfo, String>)], watch: bool) {
    let (mut values, mut rows) = (Vec::new(), Vec::new());
    for (endpoint, answer) in asked {
        let (value, status) = describe(endpoint, answer);
        values.push(value);
        rows.push(vec![endpoint.remote.name.clone(), endpoint.source.clone(), status]);
    }
    let value = json!({"endpoints": values, "over": found.over, "problems": found.problems});
    match watch && ctx.out.json {
        // One JSON object per line, the events after it.
        true => println!("{value}"),
        false => ctx.out.print(value, || match rows.is_empty() {
            true => "no endpoints found".to_string(),
            false => table(&["ENDPOINT", "SOURCE", "STATUS"], rows),
        }),
    }
    if ctx.out.json {
        return;
    }
    for problem in &found.problems {
        eprintln!("fugue: {problem}");
    }
    if found.over > 0 {
        eprintln!(
            "fugue: {} more endpoints matched than the {} listed",
            found.over,
            fleet::FLEET_MAX
        );
    }
}

/// One endpoint's JSON and its STATUS column.
fn describe(endpoint: &Endpoint, answer: &Result<DaemonInfo, String>) -> (Value, String) {
    let address = endpoint.remote.describe();
    match answer {
        Ok(info) => (
            json!({"endpoint": endpoint.remote.name, "address": address, "source": endpoint.source,
                   "answers": true, "version": info.version, "sessions": info.sessions,
                   "panes": info.panes, "running_panes": info.running_panes}),
            format!(
                "fugued {}: {} sessions, {} panes ({} running)",
                info.version, info.sessions, info.panes, info.running_panes
            ),
        ),
        Err(err) => (
            json!({"endpoint": endpoint.remote.name, "address": address, "source": endpoint.source,
                   "answers": false, "error": err}),
            format!("no answer: {err}"),
        ),
    }
}

/// Every source's events, one line each, until interrupted or they all end.
/// `present`: the endpoints listed; one is added only when it was not (a watch
/// reports the pods there when it starts), removed only when it was.
async fn follow(
    ctx: &Context<'_>,
    sources: &[Source],
    mut present: std::collections::HashSet<String>,
) -> Result<ExitCode, ClientError> {
    let streams: Vec<_> = sources.iter().filter_map(fleet::follow).collect();
    if streams.is_empty() {
        return Err(crate::args::invalid(
            "no source of this fleet has events to follow (the hosts file's hosts do not)".into(),
        ));
    }
    let (merged, mut changes) = tokio::sync::mpsc::channel(64);
    for mut stream in streams {
        let merged = merged.clone();
        tokio::spawn(async move {
            while let Some(change) = stream.recv().await {
                if merged.send(change).await.is_err() {
                    return;
                }
            }
        });
    }
    drop(merged);
    while let Some(change) = changes.recv().await {
        let (event, detail) = match &change {
            Ok(Change::Added(e)) if present.insert(e.remote.name.clone()) => ("added", e),
            Ok(Change::Removed(e)) if present.remove(&e.remote.name) => ("removed", e),
            Ok(_) => continue,
            Err(err) => {
                let line = match ctx.out.json {
                    true => json!({"event": "error", "error": err}).to_string(),
                    false => format!("fugue: {err}"),
                };
                if say(&line).is_err() {
                    break;
                }
                continue;
            }
        };
        let line = match ctx.out.json {
            true => json!({"event": event, "endpoint": detail.remote.name, "source": detail.source}).to_string(),
            false => format!("{event} {} ({})", detail.remote.name, detail.source),
        };
        if say(&line).is_err() {
            break;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A line now (a reader follows it live); an error once nobody reads.
fn say(line: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")?;
    out.flush()
}
