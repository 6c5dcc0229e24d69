//! Terminals as MCP resources, and telling subscribed clients when they change
//! instead of having them poll.
//!
//! - `fugue://panes`: every pane (JSON, the same view as `fugue_list`);
//! - `fugue://agents`: every pane with an agent CLI, what it is doing and its
//!   last line (JSON, the overview's view);
//! - `fugue://pane/{id}/screen`: what the terminal shows now (text);
//! - `fugue://pane/{id}/output`: its last [`OUTPUT_LINES`] lines of output (text);
//! - `ui://fugue/...`: the MCP Apps ([`crate::apps`]).
//!
//! A watch per subscribed resource: pane resources wait on the daemon for output
//! past the last offset seen (a daemon-side wait, woken by the output itself),
//! the lists follow the daemon's lifecycle and agent events on a connection of
//! their own. Updates of one resource are sent at most every [`MIN_GAP`].

use crate::bridge::{describe, Bridge};
use fugue_client::views::{OverviewView, PaneView};
use fugue_protocol::{CaptureWhat, Event, ReadMode, WaitCondition, WaitUntil};
use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, ResourceContents, ResourceTemplate,
};
use rmcp::ErrorData;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Lines of output `fugue://pane/{id}/output` holds.
pub const OUTPUT_LINES: u32 = 500;
/// Shortest time between two updates of one resource: a program printing
/// without pause is reported at most this often, not once per chunk.
pub const MIN_GAP: Duration = Duration::from_millis(20);
/// Resources one MCP session may watch at once.
pub const MAX_WATCHES: usize = 64;
/// How long one daemon-side wait lasts before it is renewed.
const WAIT_SLICE: Duration = Duration::from_secs(60);

/// A resource fugue serves.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Resource {
    Panes,
    Agents,
    Screen(String),
    Output(String),
}

impl Resource {
    /// Parses `uri`; a one-line error says what fugue serves.
    pub fn parse(uri: &str) -> Result<Self, String> {
        let unknown = || {
            format!(
                "unknown resource {uri:?}: fugue serves fugue://panes, fugue://agents, fugue://pane/ID/screen and fugue://pane/ID/output"
            )
        };
        let rest = uri.strip_prefix("fugue://").ok_or_else(unknown)?;
        match rest {
            "panes" => return Ok(Self::Panes),
            "agents" => return Ok(Self::Agents),
            _ => {}
        }
        let (id, what) = rest
            .strip_prefix("pane/")
            .and_then(|p| p.rsplit_once('/'))
            .ok_or_else(unknown)?;
        if id.is_empty() || id.contains('/') || id.len() > 64 {
            return Err(unknown());
        }
        match what {
            "screen" => Ok(Self::Screen(id.to_string())),
            "output" => Ok(Self::Output(id.to_string())),
            _ => Err(unknown()),
        }
    }

    pub fn uri(&self) -> String {
        match self {
            Self::Panes => "fugue://panes".into(),
            Self::Agents => "fugue://agents".into(),
            Self::Screen(id) => format!("fugue://pane/{id}/screen"),
            Self::Output(id) => format!("fugue://pane/{id}/output"),
        }
    }
}

/// An error for a resource that is not there (the client's mistake, with the uri).
fn not_found(uri: &str, message: String) -> ErrorData {
    ErrorData::resource_not_found(message, Some(serde_json::json!({ "uri": uri })))
}

/// The two lists and, for each pane, its screen and output.
pub async fn list(bridge: &Bridge) -> Result<ListResourcesResult, ErrorData> {
    let client = bridge.client().await.map_err(|e| ErrorData::internal_error(e, None))?;
    let panes = client
        .list_panes(None)
        .await
        .map_err(|e| ErrorData::internal_error(describe(e), None))?;
    let mut resources = vec![
        json_resource(Resource::Panes, "panes", "Every terminal: id, session, command, state."),
        json_resource(
            Resource::Agents,
            "agents",
            "Every terminal running an agent CLI: what it is doing, whether it needs a person, its last line.",
        ),
    ];
    for pane in &panes {
        let id = pane.id.to_string();
        let name = format!("{}:{} {}", pane.session_name, pane.index, pane.title);
        resources.push(text_resource(
            Resource::Screen(id.clone()),
            &format!("{name} screen"),
            "What the terminal shows now.",
        ));
        resources.push(text_resource(
            Resource::Output(id),
            &format!("{name} output"),
            "Its last 500 lines of output.",
        ));
    }
    resources.extend(crate::apps::resources());
    Ok(ListResourcesResult::with_all_items(resources))
}

fn json_resource(resource: Resource, name: &str, description: &str) -> rmcp::model::Resource {
    rmcp::model::Resource::new(resource.uri(), name)
        .with_description(description)
        .with_mime_type("application/json")
}

fn text_resource(resource: Resource, name: &str, description: &str) -> rmcp::model::Resource {
    rmcp::model::Resource::new(resource.uri(), name)
        .with_description(description)
        .with_mime_type("text/plain")
}

pub fn templates() -> ListResourceTemplatesResult {
    let template = |what: &str, description: &str| {
        ResourceTemplate::new(format!("fugue://pane/{{id}}/{what}"), format!("terminal {what}"))
            .with_description(description)
            .with_mime_type("text/plain")
    };
    ListResourceTemplatesResult::with_all_items(vec![
        template("screen", "What terminal {id} (a terminal_id) shows now."),
        template("output", "The last 500 lines of terminal {id}'s output."),
    ])
}

/// The contents of `uri`.
pub async fn read(bridge: &Bridge, uri: &str) -> Result<ReadResourceResult, ErrorData> {
    if uri.starts_with("ui://") {
        let unknown = || {
            format!("unknown app {uri:?}: fugue serves ui://fugue/screen, ui://fugue/permission and ui://fugue/diff")
        };
        return crate::apps::read(uri).ok_or_else(|| not_found(uri, unknown()));
    }
    let resource = Resource::parse(uri).map_err(|e| not_found(uri, e))?;
    let client = bridge.client().await.map_err(|e| ErrorData::internal_error(e, None))?;
    let pane_error = |e| not_found(uri, describe(e));
    let contents = match &resource {
        Resource::Panes => {
            let panes = client
                .list_panes(None)
                .await
                .map_err(|e| ErrorData::internal_error(describe(e), None))?;
            let views: Vec<PaneView> = panes.iter().map(PaneView::from).collect();
            json_contents(uri, &views)?
        }
        Resource::Agents => {
            let views: Vec<OverviewView> = client
                .overview_rows(None)
                .await
                .map_err(|e| ErrorData::internal_error(describe(e), None))?
                .into_iter()
                .filter(|row| row.agent.is_some())
                .collect();
            json_contents(uri, &views)?
        }
        Resource::Screen(id) => {
            let screen = client
                .capture(id, CaptureWhat::Screen, (None, None), false, false)
                .await
                .map_err(pane_error)?;
            ResourceContents::text(screen.lines.join("\n"), uri)
        }
        Resource::Output(id) => {
            let mode = ReadMode::Text {
                lines: OUTPUT_LINES,
                since: None,
            };
            let chunk = client.read_output(id, mode).await.map_err(pane_error)?;
            ResourceContents::text(chunk.lines.join("\n"), uri)
        }
    };
    Ok(ReadResourceResult::new(vec![contents]))
}

fn json_contents<T: serde::Serialize>(uri: &str, value: &T) -> Result<ResourceContents, ErrorData> {
    let mut value = serde_json::to_value(value).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    crate::schema::drop_null_fields(&mut value);
    let text = serde_json::to_string(&value).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    Ok(ResourceContents::TextResourceContents {
        uri: uri.to_string(),
        mime_type: Some("application/json".into()),
        text,
        meta: None,
    })
}

/// Sends `resource`'s uri on `updates` each time it changes, until `stop` is
/// cancelled, `updates` closes, or the resource is gone (a pane's resources
/// end with its process: one last update, then none).
pub async fn watch(bridge: Bridge, resource: Resource, updates: mpsc::Sender<String>, stop: CancellationToken) {
    let uri = resource.uri();
    let watching = async {
        match &resource {
            Resource::Screen(id) | Resource::Output(id) => watch_pane(&bridge, id, &uri, &updates).await,
            Resource::Panes | Resource::Agents => watch_events(&bridge, &resource, &uri, &updates).await,
        }
    };
    tokio::select! {
        _ = stop.cancelled() => {}
        _ = watching => {}
    }
}

/// Waits on the daemon for output past the last offset seen.
async fn watch_pane(bridge: &Bridge, id: &str, uri: &str, updates: &mpsc::Sender<String>) {
    let Ok(client) = bridge.client().await else { return };
    let Ok(mut since) = fugue_client::ops::output_end(&client, id).await else {
        return;
    };
    loop {
        let until = WaitUntil {
            pattern: Some("[\\s\\S]".into()),
            since: Some(since),
            ..WaitUntil::default()
        };
        let Ok(outcome) = client.wait_for(id, until, WAIT_SLICE).await else {
            return;
        };
        since = outcome.next_offset;
        match outcome.condition {
            WaitCondition::Timeout => continue,
            WaitCondition::Exit => {
                let _ = updates.send(uri.to_string()).await;
                return;
            }
            _ => {}
        }
        if updates.send(uri.to_string()).await.is_err() {
            return;
        }
        tokio::time::sleep(MIN_GAP).await;
    }
}

/// Follows the daemon's events: the pane list changes with panes, the agent
/// list with panes and agent states.
async fn watch_events(bridge: &Bridge, resource: &Resource, uri: &str, updates: &mpsc::Sender<String>) {
    let Ok(client) = fugue_client::Client::connect(bridge.connect_options()).await else {
        return;
    };
    let Ok(mut events) = client.subscribe().await else {
        return;
    };
    while let Some(event) = events.recv().await {
        let changed = match event {
            Event::PaneCreated(_)
            | Event::PaneExited(_)
            | Event::PaneRestarted(_)
            | Event::PaneRemoved { .. }
            | Event::PaneRenamed(_)
            | Event::AgentSessionRecorded(_)
            | Event::PanesReordered { .. }
            | Event::SessionRenamed { .. }
            | Event::Lagged { .. } => true,
            Event::AgentStateChanged { .. } => *resource == Resource::Agents,
            _ => false,
        };
        if changed && updates.send(uri.to_string()).await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip_and_strangers_are_refused() {
        for resource in [
            Resource::Panes,
            Resource::Agents,
            Resource::Screen("5f0c".into()),
            Resource::Output("5f0c".into()),
        ] {
            assert_eq!(Resource::parse(&resource.uri()), Ok(resource));
        }
        for bad in [
            "fugue://pane//screen",
            "fugue://pane/a/b/screen",
            "fugue://pane/x/pixels",
            "file:///etc/passwd",
            "fugue://panes/",
            "",
        ] {
            let err = Resource::parse(bad).unwrap_err();
            assert!(err.contains("fugue://pane/ID/screen"), "{bad}: {err}");
        }
    }
}
