//! Scenario 20: how soon a Codex pane's state change reaches a client
//! subscribed to events, read through Codex's own app-server against read
//! from its terminal (the same pinned Codex in a pane with
//! `FUGUE_CODEX_APP_SERVER=0`), in the same run, offline against the model
//! stub: from the stub's clock (a turn started, a tool asked for, a turn
//! finished) to the `AgentStateChanged` event (busy, waiting for permission,
//! idle), the median of a few turns each; negative where the report came
//! before the stub logged (it logs right after it sent).

use super::{row, Sizes};
use crate::env::{self, Daemon, Error};
use crate::Row;
use fugue_protocol::{AgentState, EnvVar, Event, PermissionAnswer};
use fugue_tests::agents::{end_processes_with_home, events_in, prepare, Cli, ModelStub};
use std::path::Path;
use std::time::Duration;

const SCENARIO: &str = "20 Codex read through its app-server";
/// Turns measured per way of reading (one at the quick sizes).
const TURNS: usize = 3;
/// The longest a state may take to come.
const WITHIN: Duration = Duration::from_secs(120);

pub(super) async fn run(dir: &Path, sizes: &Sizes) -> Result<Vec<Row>, Error> {
    // The quick sizes (CI's) run fewer real agents: one turn each there.
    let turns = match sizes.real_agents >= 10 {
        true => TURNS,
        false => 1,
    };
    let installed =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/agents/node_modules/.fugue-installed-lock.json");
    if !installed.is_file() || !rustix::process::geteuid().is_root() {
        let why = "skipped: needs root (a network namespace) and tests/agents installed (scripts/test does)";
        return Ok(vec![row(SCENARIO, why, String::new(), String::new(), "", None)]);
    }
    let daemon = Daemon::start_offline(dir, "codex-source").await?;
    let stub = ModelStub::start_in(daemon.pid(), dir, &env::bin("model-stub")?);
    let mut lags = Vec::new();
    for (way, screen_only) in [("app-server", false), ("screen", true)] {
        // A connection each: one connection's events are taken once.
        let client = daemon.client().await?;
        lags.push(measure(&client, &stub, dir, (way, screen_only), turns).await?);
    }
    let names = [
        "turn started -> busy",
        "tool asked for -> waiting",
        "turn finished -> idle",
    ];
    Ok(names
        .iter()
        .enumerate()
        .map(|(n, name)| {
            row(
                SCENARIO,
                &format!("{name}, event to a subscriber (median of {turns} turns)"),
                format!("{} ms", lags[0][n]),
                format!("screen {} ms", lags[1][n]),
                "",
                None,
            )
        })
        .collect())
}

/// The median lags (busy, waiting, idle) of `TURNS` turns of one Codex read
/// one way, each approved through fugue.
async fn measure(
    client: &fugue_client::Client,
    stub: &ModelStub,
    dir: &Path,
    (way, screen_only): (&str, bool),
    turns_wanted: usize,
) -> Result<[i64; 3], Error> {
    let file = |turn: usize| format!("{way}-{turn}.txt");
    let launch = prepare(
        Cli::Codex,
        stub,
        &dir.join(format!("codex-{way}")),
        &format!("FILE={}", file(0)),
    );
    let session = format!("codex-{way}");
    client
        .create_session(&session, None, Vec::new())
        .await
        .map_err(|e| e.to_string())?;
    let mut spec = launch.spec(&session);
    if screen_only {
        spec.env.push(EnvVar {
            name: "FUGUE_CODEX_APP_SERVER".into(),
            value: "0".into(),
        });
    }
    let mut events = client.subscribe().await.map_err(|e| e.to_string())?;
    let pane = client.create_pane(spec).await.map_err(|e| e.to_string())?;
    let id = pane.id.to_string();
    let mut seen: Vec<(AgentState, u64)> = Vec::new();
    let mut turns = Vec::new();
    for turn in 0..turns_wanted {
        if turn > 0 {
            fugue_client::ops::send_prompt(client, &id, &format!("Again. FILE={}", file(turn)), None)
                .await
                .map_err(|e| e.to_string())?;
        }
        let asked_at = until_state(&mut events, pane.id, AgentState::WaitingForPermission, &mut seen).await?;
        let prompt = client.agent_status(&id).await.map_err(|e| e.to_string())?.prompt_id;
        let prompt = prompt.ok_or("no prompt id")?;
        client
            .answer_permission(&id, &prompt, PermissionAnswer::Approve)
            .await
            .map_err(|e| e.to_string())?;
        until_state(&mut events, pane.id, AgentState::Idle, &mut seen).await?;
        turns.push((file(turn), asked_at));
    }
    let stub_log = events_in(&dir.join("model-stub.log"));
    let at = |event: &str, command: &str| {
        stub_log
            .iter()
            .filter(|e| e["event"] == event && e["detail"]["command"] == command)
            .filter_map(|e| e["at"].as_u64())
            .next_back()
    };
    // The report of a state nearest a real transition (the stub logs a
    // moment after it sent: a report may come first, a negative lag).
    let lag = |state: AgentState, from: Option<u64>| -> Option<i64> {
        let from = from? as i64;
        seen.iter()
            .filter(|(s, _)| *s == state)
            .map(|(_, at)| *at as i64 - from)
            .min_by_key(|lag| lag.abs())
    };
    let mut busy = Vec::new();
    let mut waiting = Vec::new();
    let mut idle = Vec::new();
    for (file, _) in &turns {
        let command = format!("touch {file}");
        busy.extend(lag(AgentState::Busy, at("turn_started", &command)));
        waiting.extend(lag(AgentState::WaitingForPermission, at("tool_requested", &command)));
        idle.extend(lag(AgentState::Idle, at("turn_finished", &command)));
    }
    end_processes_with_home(&launch.home);
    Ok([median(&mut busy), median(&mut waiting), median(&mut idle)])
}

/// Waits for the pane's agent to be reported in `state`, recording every
/// report (state, Unix ms received); returns when that one came.
async fn until_state(
    events: &mut fugue_client::EventStream,
    pane: fugue_protocol::PaneId,
    state: AgentState,
    seen: &mut Vec<(AgentState, u64)>,
) -> Result<u64, Error> {
    let deadline = tokio::time::Instant::now() + WITHIN;
    loop {
        let event = tokio::time::timeout_at(deadline, events.recv())
            .await
            .map_err(|_| format!("{state:?} never came"))?
            .ok_or("the events ended")?;
        if let Event::AgentStateChanged { pane: p, agent, .. } = event {
            if p != pane {
                continue;
            }
            let now = fugue_protocol::now_ms();
            seen.push((agent.state, now));
            if agent.state == state {
                return Ok(now);
            }
        }
    }
}

fn median(values: &mut [i64]) -> i64 {
    values.sort_unstable();
    values.get(values.len() / 2).copied().unwrap_or(0)
}
