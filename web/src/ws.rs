//! WebSockets: one pane attached per socket (`/ws/panes/{id}`), and the lifecycle
//! events every open page follows (`/ws/events`).
//!
//! Each socket has its own daemon connection, so a browser that reads slowly is
//! treated exactly like a slow `fugue attach`: this side stops reading the
//! daemon, the daemon drops the output the browser could not take and sends a
//! redraw when it catches up. The pane never waits for a browser.

use crate::devices::Caller;
use crate::error::{ApiError, ApiResult, QueryParams};
use crate::AppState;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::response::Response;
use axum::Extension;
use fugue_client::protocol::output_filter::OutputFilter;
use fugue_client::protocol::{Event, PaneSize};
use fugue_client::Client;
use futures::{SinkExt, StreamExt};
use serde::Deserialize;
use serde_json::{json, Value};

/// Largest message a browser may send (input is split into requests anyway).
const MAX_MESSAGE: usize = 1 << 20;
/// With flow control, how far output may run ahead of what the page says its
/// terminal has processed. Beyond it this side stops reading the daemon, which
/// then drops what the page could not take and sends a redraw when it catches up.
const FLOW_WINDOW: usize = 512 * 1024;
/// With flow control, output sent to a page per [`PAGE_SLICE`] at most (1.25 MiB/s):
/// more than a person can read or a screen can show, far less than `cat` makes.
/// Past it, the page gets a redraw instead of every byte, so a browser on the
/// same machine does not spend the cores the daemon needs parsing output.
const PAGE_SLICE_BYTES: usize = 32 * 1024;
const PAGE_SLICE: std::time::Duration = std::time::Duration::from_millis(100);

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct AttachQuery {
    /// The browser terminal's size; with both, it takes part in the pane's size policy.
    pub cols: Option<u16>,
    pub rows: Option<u16>,
    /// Watch only: no input, no resizing.
    #[serde(default)]
    pub read_only: bool,
    /// Flow control: the page acknowledges processed output with
    /// `{"type":"ack","bytes":N}` and is sent at most 512 KiB ahead of that; a page
    /// that falls further behind is resynchronised with a redraw. Without it, the
    /// socket's own backpressure is all there is.
    #[serde(default)]
    pub flow: bool,
}

/// What the page sends as text (input goes as binary).
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Control {
    Resize {
        cols: u16,
        rows: u16,
    },
    /// The page's terminal has processed this many more bytes of output.
    Ack {
        bytes: usize,
    },
}

async fn connect(state: &AppState) -> ApiResult<Client> {
    let options = state.daemon.options().clone();
    Ok(Client::connect(options).await?)
}

/// `GET /ws/panes/{id}`: a redraw first, then the pane's output; input and resize back.
pub async fn attach(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(pane): Path<String>,
    QueryParams(query): QueryParams<AttachQuery>,
    upgrade: WebSocketUpgrade,
) -> ApiResult<Response> {
    let size = match (query.cols, query.rows) {
        (Some(cols), Some(rows)) if !query.read_only => Some(PaneSize { cols, rows }),
        _ => None,
    };
    let client = connect(&state).await?;
    let events = client.events()?;
    // Attached before the upgrade: an unknown pane is a plain 404, not a socket
    // that opens and closes.
    let info = client.attach(&pane, query.read_only, size).await?;
    let (read_only, flow) = (query.read_only, query.flow);
    let revoked = crate::devices::until_revoked(state, caller);
    Ok(upgrade
        .max_message_size(MAX_MESSAGE)
        .on_upgrade(move |socket| async move {
            tokio::select! {
                _ = follow_pane(socket, client, events, info.id, read_only, flow) => {}
                _ = revoked => {}
            }
        }))
}

async fn follow_pane(
    socket: WebSocket,
    client: Client,
    mut events: fugue_client::EventStream,
    pane: fugue_client::protocol::PaneId,
    read_only: bool,
    flow: bool,
) {
    let target = pane.to_string();
    let (mut to_browser, mut from_browser) = socket.split();
    let mut unacked = 0usize;
    let (mut slice_start, mut slice_bytes) = (tokio::time::Instant::now(), 0usize);
    // xterm.js answers terminal queries too; fugue's emulator already has.
    let mut filter = OutputFilter::new(false);
    // What the page was last told about the program's keyboard protocol.
    let mut kitty_keys = false;
    loop {
        let paced = flow && slice_bytes >= PAGE_SLICE_BYTES;
        tokio::select! {
            _ = tokio::time::sleep_until(slice_start + PAGE_SLICE), if paced => {
                (slice_start, slice_bytes) = (tokio::time::Instant::now(), 0);
            }
            event = events.recv(), if !flow || (unacked < FLOW_WINDOW && !paced) => {
                let Some(event) = event else {
                    let _ = to_browser.send(text(json!({"type": "closed", "message": "lost the connection to fugued"}))).await;
                    break;
                };
                let sent = match event {
                    Event::Redraw { pane: p, data } if p == pane => {
                        filter.reset();
                        let data = filter.filter(&data);
                        unacked += data.len();
                        slice_bytes += data.len();
                        // The page resets its terminal (modes included) before drawing.
                        match to_browser.send(text(json!({"type": "redraw"}))).await {
                            Ok(()) => to_browser.send(Message::Binary(data.into())).await,
                            Err(err) => Err(err),
                        }
                    }
                    Event::Output { pane: p, data } if p == pane => {
                        if slice_start.elapsed() >= PAGE_SLICE {
                            (slice_start, slice_bytes) = (tokio::time::Instant::now(), 0);
                        }
                        let data = filter.filter(&data);
                        unacked += data.len();
                        slice_bytes += data.len();
                        to_browser.send(Message::Binary(data.into())).await
                    }
                    Event::Title { pane: p, title } if p == pane => {
                        to_browser.send(text(json!({"type": "title", "title": title}))).await
                    }
                    Event::Bell { pane: p } if p == pane => to_browser.send(text(json!({"type": "bell"}))).await,
                    Event::Exited { pane: p, status } if p == pane => {
                        let message = json!({
                            "type": "exited",
                            "code": status.code,
                            "signal": status.signal_name(),
                            "text": status.to_string(),
                        });
                        to_browser.send(text(message)).await
                    }
                    _ => Ok(()),
                };
                // xterm.js has no kitty keyboard protocol: while the program
                // uses it, the page sends modified keys in xterm's form, which
                // fugued turns into kitty's.
                let sent = match (sent, filter.kitty_keyboard()) {
                    (Ok(()), kitty) if kitty != kitty_keys => {
                        kitty_keys = kitty;
                        to_browser.send(text(json!({"type": "keyboard", "kitty": kitty}))).await
                    }
                    (sent, _) => sent,
                };
                if sent.is_err() {
                    break;
                }
            }
            message = from_browser.next() => {
                let message = match message {
                    Some(Ok(message)) => message,
                    _ => break,
                };
                let failed = match message {
                    Message::Binary(data) if !read_only => client.write_input(&target, &data).await.err(),
                    Message::Text(body) => match serde_json::from_str::<Control>(&body) {
                        Ok(Control::Ack { bytes }) => {
                            unacked = unacked.saturating_sub(bytes);
                            None
                        }
                        Ok(Control::Resize { .. }) if read_only => None,
                        Ok(Control::Resize { cols, rows }) => {
                            client.client_resize(&target, PaneSize { cols, rows }).await.err()
                        }
                        Err(err) => {
                            let reply = json!({"type": "error", "message": format!("bad control message: {err}")});
                            let _ = to_browser.send(text(reply)).await;
                            None
                        }
                    },
                    Message::Close(_) => break,
                    _ => None,
                };
                if let Some(err) = failed {
                    let reply = json!({"type": "error", "message": err.to_string()});
                    if to_browser.send(text(reply)).await.is_err() {
                        break;
                    }
                }
            }
        }
    }
    let _ = to_browser.close().await;
}

fn text(value: Value) -> Message {
    Message::Text(value.to_string().into())
}

/// `GET /ws/events`: sessions and panes created, renamed, reordered, exited and
/// removed, as JSON, for every open page.
pub async fn events(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    upgrade: WebSocketUpgrade,
) -> ApiResult<Response> {
    let client = connect(&state).await?;
    let events = client.subscribe().await.map_err(ApiError::from)?;
    let revoked = crate::devices::until_revoked(state, caller);
    Ok(upgrade
        .max_message_size(MAX_MESSAGE)
        .on_upgrade(move |socket| async move {
            tokio::select! {
                _ = follow_events(socket, client, events) => {}
                _ = revoked => {}
            }
        }))
}

async fn follow_events(socket: WebSocket, client: Client, mut events: fugue_client::EventStream) {
    let (mut to_browser, mut from_browser) = socket.split();
    loop {
        tokio::select! {
            event = events.recv() => {
                let Some(event) = event else { break };
                let Some(message) = fugue_client::views::lifecycle_event(&event) else { continue };
                if to_browser.send(text(message)).await.is_err() {
                    break;
                }
            }
            message = from_browser.next() => {
                if !matches!(message, Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Text(_) | Message::Binary(_)))) {
                    break;
                }
            }
        }
    }
    drop(client);
    let _ = to_browser.close().await;
}
