//! Delegation with the result returned: a child agent started (in a worktree
//! of its own by default), given a prompt through the daemon's prompt
//! transaction, and followed until its turn ends; then its final message (see
//! [`crate::final_message`]), what it changed, and how to go on.
//!
//! The follow is event-driven: the daemon's waits on agent states, in
//! [`STATUS_EVERY`] slices so the caller hears how it goes (working, waiting
//! for a person) while it runs.

use crate::diff::DiffView;
use crate::final_message::{final_message, FinalMessage};
use crate::worktree::{self, NewWorktree, WorktreeRecord};
use crate::{Client, ClientError};
use fugue_protocol::{AgentState, SpawnSpec, WaitUntil};
use serde::Serialize;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[cfg(feature = "schema")]
use schemars::JsonSchema;

/// How long a child may take to show its input box.
const READY_WITHIN: Duration = Duration::from_secs(120);
/// How often the caller hears how the child goes.
const STATUS_EVERY: Duration = Duration::from_secs(10);

/// What to delegate.
#[derive(Clone, Debug)]
pub struct Delegation {
    /// The agent's kind, and the command line that starts it.
    pub agent: String,
    pub command: String,
    pub prompt: String,
    /// Its directory (in a repository, when `worktree`).
    pub dir: PathBuf,
    /// Work in a worktree of its own (name; empty: generated). `None`: in `dir`.
    pub worktree: Option<String>,
    pub base: Option<String>,
    /// The new session's name.
    pub session: String,
    /// The longest the turn may take.
    pub timeout: Duration,
}

/// A child started.
#[derive(Clone, Debug)]
pub struct Child {
    pub pane: String,
    pub session: String,
    pub worktree: Option<WorktreeRecord>,
    pub notes: Vec<String>,
}

/// What the child did with the prompt.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct DelegateResult {
    pub terminal_id: String,
    pub session: String,
    pub agent: String,
    /// Its state when this returned: `idle` (its turn ended), `exited`, or,
    /// when `timed_out`, whatever it is doing.
    pub state: fugue_protocol::AgentState,
    /// The turn did not end within the timeout (the child keeps running).
    pub timed_out: bool,
    pub final_message: FinalMessage,
    /// Its worktree and branch, when it worked in one.
    pub worktree: Option<String>,
    pub branch: Option<String>,
    /// What it changed there against where it started: files, lines added
    /// and removed (no hunks: `fugue_diff` has them).
    pub diff: Option<DiffStat>,
    /// How to go on with it.
    pub next: String,
    pub notes: Vec<String>,
}

/// Files changed, with lines added and removed.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct DiffStat {
    pub files: Vec<FileStat>,
    pub added: u64,
    pub removed: u64,
}

#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct FileStat {
    pub path: String,
    pub status: String,
    pub added: u64,
    pub removed: u64,
}

impl From<DiffView> for DiffStat {
    fn from(view: DiffView) -> Self {
        DiffStat {
            added: view.added,
            removed: view.removed,
            files: view
                .files
                .into_iter()
                .map(|f| FileStat {
                    path: f.path,
                    status: f.status,
                    added: f.added,
                    removed: f.removed,
                })
                .collect(),
        }
    }
}

/// Starts the child in a new session (and worktree), without its prompt yet.
pub async fn start_child(client: &Client, job: &Delegation) -> Result<Child, ClientError> {
    client.create_session(&job.session, Some(&job.dir), Vec::new()).await?;
    let mut words = shlex::split(&job.command).unwrap_or_default().into_iter();
    let mut spec = SpawnSpec::new(&job.session);
    spec.command = words.next();
    spec.args = words.collect();
    spec.shell = false;
    spec.title = Some(job.agent.clone());
    spec.purpose = Some(format!("{} agent, delegated", job.agent));
    let started = match &job.worktree {
        None => client.create_pane(spec).await.map(|pane| (pane, None, Vec::new())),
        Some(name) => {
            let new = NewWorktree {
                dir: job.dir.clone(),
                name: Some(name.clone()).filter(|n| !n.is_empty()),
                base: job.base.clone(),
            };
            worktree::start_in_worktree(&new, spec, |spec| client.create_pane(spec))
                .await
                .map(|s| (s.pane, Some(s.worktree), s.notes))
        }
    };
    match started {
        Ok((pane, worktree, notes)) => Ok(Child {
            pane: pane.id.to_string(),
            session: job.session.clone(),
            worktree,
            notes,
        }),
        Err(err) => {
            let _ = client.destroy_session(&job.session).await;
            Err(err)
        }
    }
}

/// Waits for the child to be ready, sends the prompt, follows the turn to
/// its end (or the timeout), and reads what it answered and changed.
/// `status` hears how it goes, in a sentence, whenever that changes and every
/// [`STATUS_EVERY`].
pub async fn run_turn(
    client: &Client,
    job: &Delegation,
    child: &Child,
    mut status: impl FnMut(String),
) -> Result<DelegateResult, ClientError> {
    let deadline = Instant::now() + job.timeout;
    let pane = child.pane.as_str();
    status(format!("{} is starting", job.agent));
    let ready = WaitUntil {
        agent_states: vec![AgentState::Idle],
        ..WaitUntil::default()
    };
    client.wait_for(pane, ready, READY_WITHIN.min(job.timeout)).await?;
    let sent = crate::ops::send_prompt(client, pane, &job.prompt, None).await?;
    status(format!("prompt sent: {}", sent.message));
    let mut notes = child.notes.clone();
    if !sent.went_busy {
        notes.push(format!("{} (the result may be of no turn at all)", sent.message));
    }
    let (state, timed_out) = follow(client, pane, deadline, &mut status).await?;
    let final_message = final_message(client, pane).await?;
    let diff = match &child.worktree {
        Some(record) => Some(crate::diff::diff(record, true).await?.into()),
        None => None,
    };
    let next =
        format!(
        "fugue_send_prompt {{\"terminal_id\": \"{pane}\", \"text\": ...}} gives it another prompt; fugue_diff shows \
its changes{}; fugue_release ends it",
        if child.worktree.is_some() { ", fugue_review comments on them, fugue_merge lands them" } else { "" }
    );
    Ok(DelegateResult {
        terminal_id: pane.to_string(),
        session: child.session.clone(),
        agent: job.agent.clone(),
        state,
        timed_out,
        final_message,
        worktree: child.worktree.as_ref().map(|w| w.path.clone()),
        branch: child.worktree.as_ref().map(|w| w.branch.clone()),
        diff,
        next,
        notes,
    })
}

/// Follows the turn until the agent is idle or exited; its state then, and
/// whether the deadline came first.
async fn follow(
    client: &Client,
    pane: &str,
    deadline: Instant,
    status: &mut impl FnMut(String),
) -> Result<(AgentState, bool), ClientError> {
    loop {
        let now = client.agent_status(pane).await?;
        if matches!(now.state, AgentState::Idle | AgentState::Exited) {
            return Ok((now.state, false));
        }
        status(describe(&now));
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok((now.state, true));
        }
        // Its turn ending, or (while it works) a person being needed; while
        // a person is needed, the answer (it works again).
        let mut states = vec![AgentState::Idle, AgentState::Exited];
        match now.state {
            AgentState::WaitingForPermission | AgentState::WaitingForAnswer => states.push(AgentState::Busy),
            _ => states.extend([AgentState::WaitingForPermission, AgentState::WaitingForAnswer]),
        }
        let until = WaitUntil {
            agent_states: states,
            ..WaitUntil::default()
        };
        client.wait_for(pane, until, left.min(STATUS_EVERY)).await?;
    }
}

/// How the child goes, in a sentence.
fn describe(info: &fugue_protocol::AgentInfo) -> String {
    match info.state {
        AgentState::WaitingForPermission | AgentState::WaitingForAnswer => {
            let what = info.evidence.first().map(|l| format!(": {l}")).unwrap_or_default();
            let id = info
                .prompt_id
                .as_deref()
                .map(|id| format!(" (prompt_id {id}: fugue_approve or fugue_deny)"))
                .unwrap_or_default();
            format!("the child waits for a person{what}{id}")
        }
        state => format!("the child is {}", state.as_str()),
    }
}
