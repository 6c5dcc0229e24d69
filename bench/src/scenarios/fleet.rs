//! Scenario 19: an overview of many daemons. Endpoints are local daemons
//! behind the `exec:` transport (each its own `sh -c 'fugue --socket S
//! proxy'`, as a hosted sandbox's CLI would run it), one of them black-holed
//! (`exec:sleep 600`, dialled first, so it holds a slot from the start). Each
//! is asked for its panes as `top --fleet` and `panes --all-hosts` ask:
//! `remote::ask_each_as_answered`, 32 at a time, each within 10 s. Measured:
//! when the first row arrives, when the last answering one does, and when the
//! black-holed one is said.

use super::{direct, row, Sizes};
use crate::env::{bin, Daemon, Error};
use crate::Row;
use fugue_client::remote::{Remote, Transport, ASK_WITHIN};
use fugue_client::{Client, ConnectOptions};
use std::path::Path;
use std::time::Instant;

pub(super) async fn run(dir: &Path, sizes: &Sizes) -> Result<Vec<Row>, Error> {
    let fugue = bin("fugue")?;
    let mut daemons = Vec::new();
    for d in 0..sizes.fleet_daemons {
        let daemon = Daemon::start(dir, &format!("fleet{d}")).await?;
        let client = daemon.client().await?;
        client
            .create_session("f", Some(dir), vec![])
            .await
            .map_err(|e| e.to_string())?;
        for _ in 0..2 {
            client
                .create_pane(direct("f", "sleep", &["3600"]))
                .await
                .map_err(|e| e.to_string())?;
        }
        daemons.push(daemon);
    }
    let mut rows = Vec::new();
    for &endpoints in sizes.fleet_endpoints {
        let mut targets = vec![Remote {
            name: "hole".into(),
            transport: Transport::Exec {
                command: "sleep 600".into(),
            },
            fugue_path: "fugue".into(),
            socket: None,
        }];
        for n in 1..endpoints {
            let socket = &daemons[n % daemons.len()].socket;
            targets.push(Remote {
                name: format!("e{n}"),
                transport: Transport::Exec {
                    command: format!("{} --socket {} proxy", fugue.display(), socket.display()),
                },
                fugue_path: "fugue".into(),
                socket: None,
            });
        }
        let started = Instant::now();
        let mut answers = fugue_client::remote::ask_each_as_answered(targets, |remote| async move {
            let options = ConnectOptions::default()
                .client_name("fugue-bench")
                .host(remote)
                .autostart(false);
            let client = Client::connect(options).await.map_err(|e| e.to_string())?;
            client
                .list_panes(None)
                .await
                .map(|p| p.len())
                .map_err(|e| e.to_string())
        });
        let (mut first, mut last, mut hole, mut answered) = (None, None, None, 0);
        while let Some((remote, answer)) = answers.recv().await {
            let at = started.elapsed().as_secs_f64();
            match (remote.name.as_str(), answer) {
                ("hole", Err(_)) => hole = Some(at),
                ("hole", Ok(_)) => return Err("the black-holed endpoint answered".into()),
                (_, Ok(2)) => {
                    answered += 1;
                    first.get_or_insert(at);
                    last = Some(at);
                }
                (name, answer) => return Err(format!("endpoint {name} answered {answer:?}, not its 2 panes")),
            }
        }
        let (Some(first), Some(last), Some(hole)) = (first, last, hole) else {
            return Err(format!("{answered} of {} endpoints answered", endpoints - 1));
        };
        let deadline = ASK_WITHIN.as_secs_f64();
        let label = format!("19 fleet {endpoints} endpoints");
        rows.push(row(
            &label,
            "first row (1 black-holed)",
            format!("{:.0} ms", first * 1e3),
            String::new(),
            "<= 1000 ms",
            Some(first <= 1.0),
        ));
        rows.push(row(
            &label,
            &format!("last of {answered} answering rows"),
            format!("{:.2} s", last),
            String::new(),
            "< the hole's 10 s deadline",
            Some(last < deadline),
        ));
        rows.push(row(
            &label,
            "black-holed one said",
            format!("{:.2} s", hole),
            String::new(),
            "<= 10.5 s",
            Some(hole <= deadline + 0.5),
        ));
    }
    Ok(rows)
}
