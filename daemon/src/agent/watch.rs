//! Reports what happens in a pane as events, so clients (fugue events, the
//! browser's badges, the MCP bridge) need not poll: the notifications its
//! program asks for (`Event::Notification`) and, where the pane's command names
//! an agent CLI, every change of the agent's state (`Event::AgentStateChanged`).
//!
//! One task per pane process. It looks at the agent only when something that
//! can change its state happened: output arrived (looks at most every 100 ms),
//! a hook reported, a person looked or a request asked, a settle threshold came
//! due after output, its status file changed (inotify, [`super::file_watch`]),
//! a process under the pane ended (pidfds, [`super::process_watch`]), and once
//! more at exit. A quiet pane costs nothing: no timer runs for it. Two timers
//! remain: at start-up, until the agent's status file (Claude Code) or its
//! session (Codex) is found, it is looked for every second, for at most
//! [`STARTUP_POLL_FOR`]; and with a `hibernate_after` policy, one one-shot
//! timer while the agent is idle, at whose end the session puts it to rest.
//! Each look runs on a blocking thread and is published
//! in the pane's [`Tracker`] for requests and waits to read.

use super::detect as agent;
use super::file_watch::{self, Subscription};
use super::process_files;
use super::process_watch::ProcessWatch;
use super::tracker::{Proc, Tracker};
use crate::event_bus::EventBus;
use crate::terminal::pane_output::PaneOutput;
use fugue_protocol::{AgentKind, AgentSession, AgentState, Event, PaneId, SessionId};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// The processes under a pane are listed again at most this often.
const PROCESS_WALK: Duration = Duration::from_secs(5);
/// Looks taken after output arrives are at least this far apart.
const THROTTLE: Duration = Duration::from_millis(100);
/// How often a status file, or a session, not found yet is looked for again.
const STARTUP_POLL: Duration = Duration::from_secs(1);
/// How long after the process started it is looked for on a timer; after that,
/// only output (an agent that starts a turn draws) makes a look find it.
const STARTUP_POLL_FOR: Duration = Duration::from_secs(60);

/// The pane being watched.
pub struct Watched {
    pub pane: PaneId,
    pub session_id: SessionId,
    pub command: Vec<String>,
    pub pid: u32,
    /// When the process started (Unix ms).
    pub started_at_ms: u64,
    /// Idle this long, its agent is put to rest (the `hibernate_after` policy).
    pub rest_after: Option<Duration>,
    /// Stopped by a limit that says when it resets, its agent is sent this
    /// prompt then (the `resume_after_limit` policy).
    pub resume_prompt: Option<String>,
}

/// Told the agent's own session once it is known, and again if it changes (to
/// record it for a resume).
pub type OnAgentSession = Box<dyn Fn(AgentSession) + Send + 'static>;

/// Told when the agent has been idle for its `rest_after`: the session puts it
/// to rest (if it still is at rest then).
pub type OnRestDue = Box<dyn Fn() + Send + 'static>;

/// Told when a limit that stopped the agent resets (its Unix ms), with the
/// policy's prompt: the session sends it, once.
pub type OnLimitReset = Box<dyn Fn(String, u64) + Send + 'static>;

/// What the watcher tells its session.
pub struct Told {
    pub on_session: OnAgentSession,
    pub on_rest: OnRestDue,
    pub on_reset: OnLimitReset,
}

/// Starts watching; the task ends when the process exits. `exit` holds `Some`
/// once it has.
pub fn spawn<T: Send + Sync + 'static>(
    watched: Watched,
    output: Arc<PaneOutput>,
    tracker: Arc<Tracker>,
    mut exit: watch::Receiver<Option<T>>,
    events: EventBus,
    told: Told,
) {
    let Told {
        on_session,
        on_rest,
        on_reset,
    } = told;
    let kind = agent::detect_kind(&watched.command, &[]);
    if kind.is_some() {
        tracker.set_watching(true);
    }
    tokio::spawn(async move {
        let mut changes = output.changes();
        let mut session: Option<String> = None;
        // Whether a turn ran in `session` (as this process saw it; the session
        // adds what it recorded of a session this process resumed).
        let mut conversation = false;
        let mut status_file: Option<(PathBuf, Subscription)> = None;
        let mut processes = ProcessWatch::default();
        // When the policy puts the agent to rest, and the idle spell (its start,
        // Unix ms) that was already told, so a refusal is not asked again.
        let mut rest_due: Option<(tokio::time::Instant, u64)> = None;
        let mut rest_told: Option<u64> = None;
        // Not before this: the policy came due while a person was attached.
        let mut rest_deferred: Option<tokio::time::Instant> = None;
        let mut last_walk: Option<std::time::Instant> = None;
        // When the limit that stopped the agent resets, and the reset already told.
        let mut reset_due: Option<(tokio::time::Instant, u64)> = None;
        let mut reset_told: Option<u64> = None;
        loop {
            changes.borrow_and_update();
            let exited = exit.borrow_and_update().is_some();
            for notice in output.take_notices() {
                events.send(Event::Notification {
                    pane: watched.pane,
                    session_id: watched.session_id,
                    title: notice.title,
                    body: notice.body,
                });
            }
            if let Some(kind) = kind {
                let proc = Proc {
                    command: watched.command.clone(),
                    pid: watched.pid,
                    started_at_ms: watched.started_at_ms,
                    exited,
                };
                let (looker, seen) = (tracker.clone(), output.clone());
                // The processes below the pane's own (whose end `exit` hears),
                // walked again at most every PROCESS_WALK: an agent redrawing
                // at rest would pay for a walk of /proc with each look.
                let walk = !proc.exited && last_walk.is_none_or(|at: std::time::Instant| at.elapsed() >= PROCESS_WALK);
                let look = move || {
                    let status = looker.look_and_publish(&seen, &proc);
                    let below = match walk {
                        true => Some(process_files::process_and_descendants(proc.pid).split_off(1)),
                        false => None,
                    };
                    (status, below)
                };
                let Some((status, below)) = crate::sync::off_runtime(&crate::sync::AGENT_LOOKS, look).await else {
                    tracker.set_watching(false);
                    return;
                };
                if let Some(below) = below {
                    processes.follow(&below);
                    last_walk = Some(std::time::Instant::now());
                }
                follow_status_file(&mut status_file, tracker.status_file());
                reset_due = match (&watched.resume_prompt, status.state, status.resets_at_ms) {
                    (Some(_), AgentState::Limited, Some(at)) if reset_told != Some(at) => {
                        let left = at.saturating_sub(fugue_protocol::now_ms());
                        Some((tokio::time::Instant::now() + Duration::from_millis(left), at))
                    }
                    _ => None,
                };
                rest_due = match (watched.rest_after, status.state) {
                    (Some(after), AgentState::Idle | AgentState::Limited) if rest_told != Some(status.since_ms) => {
                        let idle_for = fugue_protocol::now_ms().saturating_sub(status.since_ms);
                        let left = after.saturating_sub(Duration::from_millis(idle_for));
                        let at = tokio::time::Instant::now() + left;
                        Some((rest_deferred.map_or(at, |deferred| at.max(deferred)), status.since_ms))
                    }
                    _ => None,
                };
                // Every change anyone's look saw, in order (this look's included).
                let mut turned = false;
                for change in tracker.take_changes() {
                    turned |= is_a_turn(change.state);
                    events.send(Event::AgentStateChanged {
                        pane: watched.pane,
                        session_id: watched.session_id,
                        agent: change,
                    });
                }
                let new_session = status.session_id.is_some() && status.session_id != session;
                if new_session {
                    // Another session in the same process (`/clear`): a turn
                    // of the one before is none of it.
                    conversation = session.is_none() && (conversation || turned);
                    session.clone_from(&status.session_id);
                }
                let first_turn = turned && !conversation && session.is_some();
                conversation |= turned;
                if new_session || first_turn {
                    on_session(AgentSession {
                        agent: kind,
                        id: session.clone().unwrap_or_default(),
                        conversation,
                    });
                }
            }
            if exited {
                tracker.set_watching(false);
                return;
            }
            let recheck = kind.and_then(|kind| {
                let settle = agent::settle_due(output.quiet_for());
                // Claude Code's status file changes with no output; Codex opens
                // its transcript (its session) a moment after it starts.
                let unfound = match kind {
                    AgentKind::Claude => status_file.is_none(),
                    AgentKind::Codex => session.is_none(),
                    _ => false,
                };
                let age = fugue_protocol::now_ms().saturating_sub(watched.started_at_ms);
                match unfound && Duration::from_millis(age) < STARTUP_POLL_FOR {
                    true => Some(settle.map_or(STARTUP_POLL, |r| r.min(STARTUP_POLL))),
                    false => settle,
                }
            });
            let rest = async {
                match rest_due {
                    Some((at, _)) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            let reset = async {
                match reset_due {
                    Some((at, _)) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            let file_changed = async {
                match &status_file {
                    Some((_, followed)) => followed.changed().await,
                    None => std::future::pending().await,
                }
            };
            let sleep = async {
                match recheck {
                    Some(after) => tokio::time::sleep(after).await,
                    None => std::future::pending().await,
                }
            };
            let output_changed = async {
                match kind {
                    Some(_) => changes.changed().await.is_ok(),
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                alive = output_changed => {
                    if !alive {
                        tracker.set_watching(false);
                        return;
                    }
                    // A request asking meanwhile is answered by the look below.
                    tokio::select! {
                        _ = tokio::time::sleep(THROTTLE) => {}
                        _ = tracker.woken() => {}
                    }
                }
                changed = exit.changed() => if changed.is_err() {
                    tracker.set_watching(false);
                    return;
                },
                _ = output.reported() => {}
                _ = tracker.woken() => {}
                _ = file_changed => {}
                _ = processes.ended() => {}
                _ = rest => match (output.attached(), watched.rest_after) {
                    // A person attached to the pane works with the agent: it is
                    // not put to rest under them, and is looked at again a
                    // policy period later.
                    (true, Some(after)) => {
                        tracing::info!(pane = %watched.pane, "not hibernated by policy: a person is attached");
                        rest_deferred = Some(tokio::time::Instant::now() + after);
                    }
                    _ => {
                        rest_deferred = None;
                        rest_told = rest_due.take().map(|(_, since)| since);
                        on_rest();
                    }
                },
                _ = reset => {
                    if let (Some(prompt), Some((_, at))) = (&watched.resume_prompt, reset_due.take()) {
                        reset_told = Some(at);
                        on_reset(prompt.clone(), at);
                    }
                }
                _ = sleep => {}
            }
        }
    });
}

/// Follows the status file a look found (the same one stays followed; another
/// replaces it). Where it cannot be followed, the start-up poll and output find it.
fn follow_status_file(followed: &mut Option<(PathBuf, Subscription)>, found: Option<PathBuf>) {
    let Some(found) = found else { return };
    if followed.as_ref().is_some_and(|(path, _)| *path == found) {
        return;
    }
    *followed = file_watch::follow(&found).map(|subscription| (found, subscription));
}

/// Whether a state means a turn ran: the agent worked, or asked a person.
fn is_a_turn(state: AgentState) -> bool {
    matches!(
        state,
        AgentState::Busy | AgentState::WaitingForPermission | AgentState::WaitingForAnswer
    )
}
