//! The wait engine: a request that returns when a pane's output matches, its
//! screen shows a pattern, its agent reaches a state, it goes quiet, or it exits.
//! It runs on the request's own task and sleeps between checks until output
//! arrives, the process exits, a quiet-time threshold or the deadline comes due.

use super::client::Client;
use super::search::{search_output, search_screen, Pattern, Searched};
use super::Handler;
use crate::actors::session::PaneHandle;
use crate::terminal::pane_output::PaneOutput;
use fugue_protocol::{ErrorCode, ErrorReply, ExitWaited, MatchOn, WaitCondition, WaitOutcome, WaitUntil};
use std::sync::Arc;
use std::time::{Duration, Instant};

impl Handler {
    pub(super) async fn wait_for_exit(&self, target: &str, timeout_ms: Option<u64>) -> Result<ExitWaited, ErrorReply> {
        let pane = self.pane(target).await?;
        let mut exit = pane.exit.clone();
        let exited = exit.wait_for(|e| e.is_some());
        let outcome = match timeout_ms {
            Some(ms) => tokio::time::timeout(Duration::from_millis(ms), exited).await.ok(),
            None => Some(exited.await),
        }
        .map(|waited| waited.map(|_| ()));
        match outcome {
            None => Ok(ExitWaited {
                pane: pane.current_info(),
                exited: false,
            }),
            Some(Err(_)) => Err(self.released(&pane)),
            Some(Ok(_)) => Ok(ExitWaited {
                pane: pane.current_info(),
                exited: true,
            }),
        }
    }

    /// Waits for the first condition of `until` to hold. Between checks the task
    /// sleeps until output arrives, the process exits, or a quiet-time threshold
    /// or the deadline comes due. Pattern searches run off the runtime (see
    /// [`super::search`]); the compiled pattern is charged to `conn`'s budget.
    pub(super) async fn wait_until(
        &self,
        conn: &Arc<Client>,
        target: &str,
        until: WaitUntil,
        timeout_ms: u64,
    ) -> Result<WaitOutcome, ErrorReply> {
        let pattern = until
            .pattern
            .as_deref()
            .map(|p| Pattern::compile(p, &conn.patterns))
            .transpose()?;
        let pane = self.pane(target).await?;
        let started = Instant::now();
        let deadline = started + Duration::from_millis(timeout_ms);
        let mut changes = pane.output.changes();
        let mut agent_news = pane.agent.news();
        let mut exit = pane.exit.clone();
        let mut searched = until.since.unwrap_or(0);
        let finish = |condition, matched, output: &PaneOutput| WaitOutcome {
            condition,
            matched,
            elapsed_ms: started.elapsed().as_millis() as u64,
            pane: pane.current_info(),
            next_offset: output.end_offset(),
        };
        // A match in the output, and the log offset the screen must reach first:
        // the text view runs slightly ahead of the screen, and a caller that saw the
        // match expects a capture to show it.
        let mut matched: Option<(String, u64)> = None;
        loop {
            changes.borrow_and_update();
            agent_news.borrow_and_update();
            let exited = exit.borrow_and_update().is_some();
            let mut recheck_in = None;
            let output = &pane.output;
            if let Some((found, shown_at)) = &matched {
                // Only the screen catching up is awaited now.
                if output.end_offset() >= *shown_at || Instant::now() >= deadline {
                    let found = Some(found.clone());
                    return Ok(finish(WaitCondition::Pattern, found, output));
                }
            } else {
                if let Some(pattern) = &pattern {
                    let found = match until.on {
                        MatchOn::Output => search_output(pattern, output, searched, deadline).await,
                        MatchOn::Screen => search_screen(pattern, output, deadline).await,
                    };
                    match found {
                        Searched::Found { text, shown_at } => {
                            matched = Some((text, shown_at));
                            continue;
                        }
                        Searched::NotYet { searched: next } => searched = next,
                        Searched::OutOfTime => {
                            return Ok(finish(WaitCondition::Timeout, None, output));
                        }
                    }
                }
                if !until.agent_states.is_empty() || !until.agent_needs.is_empty() {
                    // The watcher's last look where it looks (it looks again on
                    // output, hooks and settle times, and its looks wake this
                    // wait); else a look of this wait's own, off the runtime.
                    let watched = pane.agent.published();
                    let status = match watched.clone() {
                        Some(status) => status,
                        None => pane.agent_seen().await,
                    };
                    if until.agent_states.contains(&status.state) {
                        return Ok(finish(WaitCondition::AgentState, None, output));
                    }
                    if until.agent_needs.contains(&status.needs) {
                        return Ok(finish(WaitCondition::AgentNeeds, None, output));
                    }
                    // Detection depends on how long the screen has been quiet.
                    if watched.is_none() {
                        recheck_in = crate::agent::detect::settle_due(output.quiet_for());
                    }
                }
                if exited {
                    return Ok(finish(WaitCondition::Exit, None, output));
                }
                if let Some(idle) = until.idle_ms.map(Duration::from_millis) {
                    let quiet = output.quiet_for();
                    if quiet >= idle {
                        return Ok(finish(WaitCondition::Idle, None, output));
                    }
                    recheck_in = Some(recheck_in.map_or(idle - quiet, |r: Duration| r.min(idle - quiet)));
                }
                if Instant::now() >= deadline {
                    return Ok(finish(WaitCondition::Timeout, None, output));
                }
            }
            let wake = recheck_in.map_or(deadline, |r| (Instant::now() + r).min(deadline));
            tokio::select! {
                changed = changes.changed() => if changed.is_err() { return Err(self.released(&pane)) },
                changed = exit.changed() => if changed.is_err() { return Err(self.released(&pane)) },
                changed = agent_news.changed() => if changed.is_err() { return Err(self.released(&pane)) },
                _ = tokio::time::sleep_until(wake.into()) => {}
            }
        }
    }

    /// Why a pane vanished under a waiting request.
    fn released(&self, pane: &PaneHandle) -> ErrorReply {
        match self.shutdown.is_cancelled() {
            true => ErrorReply::new(ErrorCode::ShuttingDown, "the daemon is shutting down"),
            false => ErrorReply::new(
                ErrorCode::PaneNotFound,
                format!("pane {} was released while waiting", pane.info.id),
            ),
        }
    }
}
