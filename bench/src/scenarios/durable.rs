//! Scenario 10: what the records cost per request, and a live upgrade with many

use super::{direct, row, Sizes};
use crate::env::{median, Daemon, Error};
use crate::Row;
use fugue_client::Client;
use fugue_protocol::CaptureWhat;
use std::path::Path;
use std::time::{Duration, Instant};

/// A session of 10 panes on `client`, for [`request_times`].
async fn request_session(client: &Client, session: &str) -> Result<(), Error> {
    let err = |e: fugue_client::ClientError| e.to_string();
    client.create_session(session, None, vec![]).await.map_err(err)?;
    for _ in 0..9 {
        client
            .create_pane(direct(session, "sleep", &["3600"]))
            .await
            .map_err(err)?;
    }
    Ok(())
}

/// Times `lists` ListPanes and `creates` CreatePane calls (each pane released
/// again), in microseconds, appending to `list_us` and `create_us`.
async fn request_times(
    client: &Client,
    session: &str,
    (lists, creates): (usize, usize),
    (list_us, create_us): (&mut Vec<f64>, &mut Vec<f64>),
) -> Result<(), Error> {
    let err = |e: fugue_client::ClientError| e.to_string();
    for _ in 0..lists {
        let started = Instant::now();
        client.list_panes(Some(session)).await.map_err(err)?;
        list_us.push(started.elapsed().as_secs_f64() * 1e6);
    }
    for _ in 0..creates {
        let started = Instant::now();
        let pane = client
            .create_pane(direct(session, "sleep", &["3600"]))
            .await
            .map_err(err)?;
        create_us.push(started.elapsed().as_secs_f64() * 1e6);
        client.release_pane(&pane.id.to_string()).await.map_err(err)?;
    }
    Ok(())
}

/// Scenario 10: what the records cost per request, and a live upgrade with many
/// running panes (wall time to every pane answering again, processes kept).
pub(super) async fn run(dir: &Path, sizes: &Sizes) -> Result<Vec<Row>, Error> {
    let err = |e: fugue_client::ClientError| e.to_string();
    // The same requests with records off and on, in alternating rounds so both
    // see the machine in the same state.
    let off = Daemon::start_with(dir, "records-off", &["--state", "none"]).await?;
    let on = Daemon::start(dir, "records-on").await?;
    let (off_client, on_client) = (off.client().await?, on.client().await?);
    request_session(&off_client, "off").await?;
    request_session(&on_client, "on").await?;
    let rounds = 10;
    let per_round = (sizes.latency_calls / rounds, sizes.creates / rounds);
    let (mut list_off, mut create_off, mut list_on, mut create_on) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        request_times(&off_client, "off", per_round, (&mut list_off, &mut create_off)).await?;
        request_times(&on_client, "on", per_round, (&mut list_on, &mut create_on)).await?;
    }
    drop((off_client, on_client, off, on));
    let (list_off, create_off) = (median(&mut list_off), median(&mut create_off));
    let (list_on, create_on) = (median(&mut list_on), median(&mut create_on));

    let daemon = Daemon::start(dir, "upgrade").await?;
    let client = daemon.client().await?;
    for s in 0..sizes.upgrade_panes.div_ceil(10) {
        let name = format!("u{s}");
        client.create_session(&name, None, vec![]).await.map_err(err)?;
        for p in 0..10.min(sizes.upgrade_panes - s * 10) {
            let script = format!("echo pane {p} of {name}; exec sleep 3600");
            client
                .create_pane(direct(&name, "sh", &["-c", &script]))
                .await
                .map_err(err)?;
        }
    }
    let before: Vec<(String, u32)> = client
        .list_panes(None)
        .await
        .map_err(err)?
        .into_iter()
        .map(|p| (p.id.to_string(), p.pid))
        .collect();
    drop(client);
    let options = fugue_client::ConnectOptions::default()
        .socket(&daemon.socket)
        .client_name("fugue-bench");
    let started = Instant::now();
    let info = Client::upgrade_daemon(options, Duration::from_secs(60))
        .await
        .map_err(err)?;
    if !info.recovery.starts_with("upgraded in place") {
        return Err(format!("upgrade failed: {}", info.recovery));
    }
    // Every pane answers: its status and a capture of its screen.
    let client = daemon.client().await?;
    let mut kept = 0;
    for (id, pid) in &before {
        let pane = client.pane_status(id).await.map_err(err)?;
        client
            .capture(id, CaptureWhat::Screen, (None, None), false, false)
            .await
            .map_err(err)?;
        if pane.pid == *pid && pane.state == fugue_client::protocol::PaneState::Running {
            kept += 1;
        }
    }
    let took = started.elapsed().as_secs_f64();
    let lost = before.len() - kept;
    let ratio = |on: f64, off: f64| on / off;
    Ok(vec![
        row(
            "10 records",
            "ListPanes p50, records on vs off",
            format!("{list_on:.0} us"),
            format!("{list_off:.0} us off ({:.2}x)", ratio(list_on, list_off)),
            "<= 1.10x",
            Some(ratio(list_on, list_off) <= 1.10),
        ),
        row(
            "10 records",
            &format!("CreatePane p50 x{}, records on vs off", sizes.creates),
            format!("{create_on:.0} us"),
            format!("{create_off:.0} us off ({:.2}x)", ratio(create_on, create_off)),
            "<= 1.10x",
            Some(ratio(create_on, create_off) <= 1.10),
        ),
        row(
            "10 upgrade",
            &format!(
                "live upgrade, {} running panes: command to every pane answering",
                before.len()
            ),
            format!("{:.0} ms", took * 1e3),
            String::new(),
            "< 1 s",
            Some(took < 1.0),
        ),
        row(
            "10 upgrade",
            "processes lost in the upgrade",
            lost.to_string(),
            format!("of {}", before.len()),
            "0",
            Some(lost == 0),
        ),
    ])
}
