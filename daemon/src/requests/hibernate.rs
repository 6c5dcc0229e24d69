//! Hibernate and wake requests: the agent must be at rest to hibernate; its
//! program is asked to quit as a person would (Ctrl-C twice, which Claude Code,
//! Codex, Gemini CLI and Qwen Code all take at an empty prompt), then signalled;
//! a wake resumes it in the same pane and answers once it is ready for a prompt.
//! Prompts and attaches to a hibernated pane wake it first (`wake_if_hibernated`).

use super::resolve::{ask, PANE, SESSION};
use super::Handler;
use crate::actors::pane::PaneMsg;
use crate::actors::session::{PaneHandle, SessionMsg};
use fugue_protocol::{AgentInfo, AgentState, ErrorCode, ErrorReply, PaneInfo, PaneState};
use std::time::Duration;
use tokio::time::{timeout, Instant};

/// How long the program gets to quit by its own keys before it is signalled.
const QUIT_BY_KEYS: Duration = Duration::from_secs(3);
/// How long a woken agent gets to be ready for a prompt: a Node CLI loading a
/// long conversation on a busy machine takes seconds.
const READY_WITHIN: Duration = Duration::from_secs(90);

impl Handler {
    pub(super) async fn hibernate_pane(&self, target: &str) -> Result<PaneInfo, ErrorReply> {
        let pane = self.pane(target).await?;
        let info = pane.current_info();
        if info.state == PaneState::Hibernated {
            return Ok(info);
        }
        refuse_unless_at_rest(&info, &pane.agent_status().await)?;
        let id = info.id;
        let pane = ask(
            &pane.session,
            |reply| SessionMsg::Hibernate { pane: id, reply },
            SESSION,
        )
        .await??;
        end_program(&pane).await?;
        // The session has recorded the end once the exit is published.
        Ok(self.pane(&id.to_string()).await?.current_info())
    }

    pub(super) async fn wake_pane(&self, target: &str) -> Result<PaneInfo, ErrorReply> {
        let pane = self.pane(target).await?;
        let id = pane.info.id;
        if pane.current_info().state != PaneState::Hibernated {
            return Ok(pane.current_info());
        }
        let woken = ask(&pane.session, |reply| SessionMsg::Wake { pane: id, reply }, SESSION).await??;
        wait_ready(&woken).await?;
        Ok(woken.current_info())
    }

    /// Wakes the pane `target` if it is hibernated (a prompt or an attach came);
    /// returns whether it did.
    pub(super) async fn wake_if_hibernated(&self, target: &str) -> Result<bool, ErrorReply> {
        let pane = self.pane(target).await?;
        if pane.current_info().state != PaneState::Hibernated {
            return Ok(false);
        }
        self.wake_pane(target).await?;
        Ok(true)
    }
}

/// An agent may hibernate only at rest: idle, nobody's draft in its input box.
fn refuse_unless_at_rest(info: &PaneInfo, agent: &AgentInfo) -> Result<(), ErrorReply> {
    let id = info.id;
    let Some(kind) = agent.agent else {
        return Err(ErrorReply::invalid(format!(
            "pane {id} runs no agent CLI fugue recognises; only an agent can hibernate"
        )));
    };
    let kind = kind.as_str();
    match agent.state {
        AgentState::Idle => {}
        AgentState::WaitingForPermission | AgentState::WaitingForAnswer => {
            return Err(ErrorReply::new(
                ErrorCode::AgentBlocked,
                format!(
                    "pane {id}: {kind} waits for a person ({}); answer it first",
                    agent.state.as_str()
                ),
            ))
        }
        AgentState::Busy => {
            return Err(ErrorReply::invalid(format!(
                "pane {id}: {kind} is busy (a turn runs); hibernate it once it is idle"
            )))
        }
        other => {
            return Err(ErrorReply::invalid(format!(
                "pane {id}: {kind} is {}, not idle; hibernate it once it is idle",
                other.as_str()
            )))
        }
    }
    if let Some(draft) = &agent.draft {
        return Err(ErrorReply::new(
            ErrorCode::DraftPresent,
            format!(
                "pane {id}: a draft sits in {kind}'s input box ({} characters); send or clear it first",
                draft.chars().count()
            ),
        ));
    }
    Ok(())
}

/// Ends the pane's program: Ctrl-C twice (the second once the first was
/// drawn), then TERM and, after the pane's grace, KILL.
async fn end_program(pane: &PaneHandle) -> Result<(), ErrorReply> {
    let mut exit = pane.exit.clone();
    let mut changes = pane.output.changes();
    changes.borrow_and_update();
    pane.input.send_keys(&["C-c".to_string()]).await?;
    let _ = timeout(Duration::from_secs(1), changes.changed()).await;
    if exit.borrow().is_none() {
        pane.input.send_keys(&["C-c".to_string()]).await?;
    }
    if timeout(QUIT_BY_KEYS, exit.wait_for(Option::is_some)).await.is_err() {
        tracing::info!(pane = %pane.info.id, "did not quit by its keys; signalled");
        ask(
            &pane.actor,
            |reply| PaneMsg::Kill {
                signal: libc::SIGTERM,
                reply,
            },
            PANE,
        )
        .await?;
    }
    // TERM escalates to KILL after the grace; the exit is published after that.
    timeout(Duration::from_secs(30), exit.wait_for(Option::is_some))
        .await
        .map_err(|_| ErrorReply::internal("the agent's program did not end within 30 s of KILL"))?
        .map_err(|_| ErrorReply::new(ErrorCode::PaneNotFound, "the pane was released while it went to rest"))?;
    Ok(())
}

/// Waits until a woken agent is ready for a prompt (idle at its input box, or
/// showing a dialog from before), or says why not.
async fn wait_ready(pane: &PaneHandle) -> Result<(), ErrorReply> {
    let deadline = Instant::now() + READY_WITHIN;
    let mut news = pane.agent.news();
    let mut changes = pane.output.changes();
    loop {
        news.borrow_and_update();
        changes.borrow_and_update();
        let status = pane.agent_status().await;
        match status.state {
            AgentState::Idle | AgentState::WaitingForPermission | AgentState::WaitingForAnswer => return Ok(()),
            AgentState::Exited => {
                return Err(ErrorReply::new(
                    ErrorCode::SpawnFailed,
                    format!("pane {}: the resumed agent ended before it was ready", pane.info.id),
                ))
            }
            _ => {}
        }
        tokio::select! {
            _ = news.changed() => {}
            _ = changes.changed() => {}
            _ = tokio::time::sleep_until(deadline) => {
                return Err(ErrorReply::internal(format!(
                    "pane {}: the resumed agent was not ready within {} s (it shows: {})",
                    pane.info.id,
                    READY_WITHIN.as_secs(),
                    status.state.as_str()
                )));
            }
        }
    }
}
