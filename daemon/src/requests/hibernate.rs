//! Hibernate and wake requests (the hibernation itself: `actors::session::hibernate`):
//! a wake resumes the agent in the same pane and answers once it is ready for a
//! prompt. Prompts and attaches to a hibernated pane wake it first
//! (`wake_if_hibernated`).

use super::resolve::{ask, SESSION};
use super::Handler;
use crate::actors::session::{put_to_rest, PaneHandle, SessionMsg};
use fugue_protocol::{AgentState, ErrorCode, ErrorReply, PaneInfo, PaneState, Woken};
use std::time::Duration;
use tokio::time::Instant;
/// How long a woken agent gets to be ready for a prompt: a Node CLI loading a
/// long conversation on a busy machine takes seconds.
const READY_WITHIN: Duration = Duration::from_secs(90);
/// A woken agent that says it is ready is also quiet this long before the
/// prompt goes in: Gemini CLI shows "Ready" while it still draws the
/// conversation it resumed, and a prompt pasted then was lost (CI, 2026-11-28).
const SETTLED_FOR: Duration = Duration::from_millis(500);

impl Handler {
    pub(super) async fn hibernate_pane(&self, target: &str) -> Result<PaneInfo, ErrorReply> {
        let pane = self.pane(target).await?;
        let info = pane.current_info();
        if info.state == PaneState::Hibernated {
            return Ok(info);
        }
        put_to_rest(&pane).await?;
        // The session has recorded the end once the exit is published.
        Ok(self.pane(&info.id.to_string()).await?.current_info())
    }

    pub(super) async fn wake_pane(&self, target: &str) -> Result<Woken, ErrorReply> {
        let pane = self.pane(target).await?;
        let id = pane.info.id;
        if pane.current_info().state != PaneState::Hibernated {
            return Ok(Woken {
                pane: pane.current_info(),
                started_fresh: None,
            });
        }
        let (woken, started_fresh) =
            ask(&pane.session, |reply| SessionMsg::Wake { pane: id, reply }, SESSION).await??;
        wait_ready(&woken).await?;
        Ok(Woken {
            pane: woken.current_info(),
            started_fresh,
        })
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
        let quiet = pane.output.quiet_for();
        match status.state {
            AgentState::Idle
            | AgentState::Limited
            | AgentState::WaitingForPermission
            | AgentState::WaitingForAnswer
                if quiet >= SETTLED_FOR =>
            {
                return Ok(())
            }
            AgentState::Exited => {
                return Err(ErrorReply::new(
                    ErrorCode::SpawnFailed,
                    format!("pane {}: the resumed agent ended before it was ready", pane.info.id),
                ))
            }
            _ => {}
        }
        // Ready but still drawing: looked at again once it could have settled.
        let settle = SETTLED_FOR.saturating_sub(quiet);
        tokio::select! {
            _ = news.changed() => {}
            _ = changes.changed() => {}
            _ = tokio::time::sleep(settle), if matches!(
                status.state,
                AgentState::Idle | AgentState::Limited | AgentState::WaitingForPermission | AgentState::WaitingForAnswer
            ) => {}
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
