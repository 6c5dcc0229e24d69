//! Pushes `Event::AgentStateChanged` whenever the agent CLI in a pane changes
//! state, so clients (fugue events, the browser's badges, the MCP bridge) need not
//! poll. One task per pane whose command names an agent CLI: it looks again when
//! output arrives (at most every 100 ms), when a settle threshold comes due, every
//! second while the agent may keep a status file, and once more at exit.

use crate::terminal::agent;
use crate::terminal::pane_output::PaneOutput;
use fugue_protocol::{AgentKind, Event, PaneId, SessionId};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, watch};

/// Looks taken after output arrives are at least this far apart.
const THROTTLE: Duration = Duration::from_millis(100);
/// How often a status file (written without output to the pane) is read again.
const STATUS_FILE_POLL: Duration = Duration::from_secs(1);

/// The pane being watched.
pub struct Watched {
    pub pane: PaneId,
    pub session_id: SessionId,
    pub command: Vec<String>,
    pub pid: u32,
    /// When the process started (Unix ms).
    pub started_at_ms: u64,
}

/// Starts watching, if the pane's command names an agent CLI; the task ends when
/// the process exits. `exit` holds `Some` once it has.
pub fn spawn<T: Send + Sync + 'static>(
    watched: Watched,
    output: Arc<PaneOutput>,
    mut exit: watch::Receiver<Option<T>>,
    events: broadcast::Sender<Event>,
) {
    let Some(kind) = agent::detect_kind(&watched.command, &[]) else {
        return;
    };
    tokio::spawn(async move {
        let mut changes = output.changes();
        let mut last = None;
        loop {
            changes.borrow_and_update();
            let exited = exit.borrow_and_update().is_some();
            let status = output.agent_status(&watched.command, watched.pid, watched.started_at_ms, exited);
            if last != Some(status.state) {
                last = Some(status.state);
                let _ = events.send(Event::AgentStateChanged {
                    pane: watched.pane,
                    session_id: watched.session_id,
                    agent: status,
                });
            }
            if exited {
                return;
            }
            let mut recheck = agent::settle_due(output.quiet_for());
            if kind == AgentKind::Claude {
                recheck = Some(recheck.map_or(STATUS_FILE_POLL, |r| r.min(STATUS_FILE_POLL)));
            }
            let sleep = async {
                match recheck {
                    Some(after) => tokio::time::sleep(after).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                changed = changes.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    tokio::time::sleep(THROTTLE).await;
                }
                changed = exit.changed() => if changed.is_err() { return },
                _ = sleep => {}
            }
        }
    });
}
