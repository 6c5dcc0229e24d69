//! The pane's side of the prompt transaction (`SendPrompt`, and the prompt
//! `resume_after_limit` sends): refused while the agent needs a person first
//! or a draft sits in its box, then pasted, Enter once the box took it in,
//! and the turn watched; the receipt is built from what the daemon saw.

use super::{PaneHandle, SessionMsg, SessionState};
use fugue_protocol::limits::{RECEIPT_EVIDENCE_CHARS, RECEIPT_EVIDENCE_LINES};
use fugue_protocol::PaneId;
use fugue_protocol::{AgentInfo, AgentState, ErrorCode, ErrorReply, PromptOutcome, PromptReceipt};
use ractor::ActorRef;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// A person who typed into the pane this recently is at work there: the
/// prompt `resume_after_limit` sends waits until they stop.
const PERSON_TYPING: Duration = Duration::from_secs(10);
/// How long `resume_after_limit` waits on a person typing, at most.
const RESUME_WAITS_AT_MOST: Duration = Duration::from_secs(600);

impl SessionState {
    /// The limit that stopped a pane's agent reset: its policy's prompt goes
    /// through the same transaction as `SendPrompt`, under the key
    /// `resume-after-limit:RESETS_AT`, so it is sent once whatever asks
    /// again, and its receipt is kept with that key.
    pub(super) fn limit_reset(&mut self, myself: &ActorRef<SessionMsg>, id: PaneId, prompt: String, resets_at_ms: u64) {
        let Ok(index) = self.index_of(id) else { return };
        if !self.panes[index].running() {
            return;
        }
        let pane = self.handle(index, myself);
        tokio::spawn(async move {
            let waited_since = Instant::now();
            while let Some(left) = pane.agent.typed_within(PERSON_TYPING) {
                if waited_since.elapsed() >= RESUME_WAITS_AT_MOST {
                    tracing::info!(pane = %id, "not resumed after its limit: a person keeps typing there");
                    return;
                }
                tokio::time::sleep(left).await;
            }
            let key = format!("resume-after-limit:{resets_at_ms}");
            if pane.agent.claim_prompt_key(&key) != crate::agent::tracker::KeyClaim::Claimed {
                return;
            }
            let Some(sending) = Sending::begin(&pane) else {
                pane.agent.settle_prompt_key(&key, None);
                tracing::info!(pane = %id, "not resumed after its limit: another prompt is being sent");
                return;
            };
            let sent = submit(&pane, prompt.into_bytes()).await.map(|receipt| PromptReceipt {
                key: Some(key.clone()),
                ..receipt
            });
            drop(sending);
            pane.agent.settle_prompt_key(&key, sent.as_ref().ok().cloned());
            match sent {
                Ok(receipt) => tracing::info!(
                    pane = %id,
                    key,
                    outcome = %receipt.outcome.as_str(),
                    state = %receipt.state.as_str(),
                    "resumed after its limit"
                ),
                Err(err) => tracing::info!(pane = %id, why = %err.message, "not resumed after its limit"),
            }
        });
    }
}

/// How long the input box may take to show a paste (a program that echoes
/// nothing gets Enter after this).
const PASTE_ECHO: Duration = Duration::from_secs(3);
/// Quiet after the paste's echo before Enter: some agent CLIs (Gemini's) ignore
/// an Enter that comes right after a bracketed paste.
const PASTE_SETTLE: Duration = Duration::from_millis(150);
/// The longest the paste's echo may keep the screen busy before Enter.
const PASTE_SETTLE_LIMIT: Duration = Duration::from_secs(2);
/// How long a turn may take to show after Enter.
const TURN_START: Duration = Duration::from_secs(5);
/// After Enter, how long before a prompt that still sits in the input box gets
/// Enter once more. Gemini CLI takes an Enter that comes within 40 ms of a
/// paste for a newline, timed by a Node timer that runs late on a loaded
/// machine (a woken Gemini on CI kept the prompt in its box).
const RESUBMIT_AFTER: Duration = Duration::from_millis(1500);
/// Between looks at the agent while its turn may be starting: at most this
/// long, and sooner when the screen or the agent's signals change, but never
/// sooner than [`TURN_LOOK_GAP`] (a spinner changes the screen every frame).
const TURN_LOOK_EVERY: Duration = Duration::from_millis(300);
const TURN_LOOK_GAP: Duration = Duration::from_millis(100);

/// One prompt at a time per agent (two pastes would interleave in its input
/// box); also what bounds the transactions a client can leave running.
pub struct Sending(Arc<crate::agent::tracker::Tracker>);

impl Sending {
    pub fn begin(pane: &PaneHandle) -> Option<Sending> {
        let busy: &AtomicBool = pane.agent.prompt_sending();
        match busy.swap(true, Ordering::AcqRel) {
            true => None,
            false => Some(Sending(pane.agent.clone())),
        }
    }
}

impl Drop for Sending {
    fn drop(&mut self) {
        self.0.prompt_sending().store(false, Ordering::Release);
    }
}

/// How long an input box that shows nothing of a paste gets before the paste
/// is sent again (a CLI whose input box does not listen yet drops it: a woken
/// Gemini CLI on a loaded machine, CI 2026-11-28).
const REPASTE_AFTER: Duration = Duration::from_secs(1);

/// Whether the agent's input box still shows no draft [`REPASTE_AFTER`] after
/// a paste. Only for an agent whose input box fugue reads (else nothing can
/// be told and the paste is not repeated).
async fn input_box_still_empty(pane: &PaneHandle) -> bool {
    let empty = |status: &AgentInfo| {
        status.agent.is_some()
            && status.draft.is_none()
            && matches!(status.state, AgentState::Idle | AgentState::Limited)
    };
    if !empty(&pane.agent_status().await) {
        return false;
    }
    tokio::time::sleep(REPASTE_AFTER).await;
    empty(&pane.agent_status().await)
}

/// Refuses while the agent waits for a person or holds a draft, then pastes,
/// sends Enter once the paste is in, and watches for the turn.
pub async fn submit(pane: &PaneHandle, text: Vec<u8>) -> Result<PromptReceipt, ErrorReply> {
    refuse_unless_ready(&pane.agent_status().await)?;
    pane.agent.looked_at();
    let before = pane.output.end_offset();
    pane.input.write(text.clone(), true).await?;
    paste_taken_in(pane, before).await;
    let mut notes = Vec::new();
    if input_box_still_empty(pane).await {
        // Taken by nothing (a woken CLI that says Ready before its input box
        // listens): the box is empty, so a second paste cannot double it.
        let before = pane.output.end_offset();
        pane.input.write(text, true).await?;
        paste_taken_in(pane, before).await;
        notes.push(format!(
            "pasted again: the input box was still empty {} ms after the first paste",
            REPASTE_AFTER.as_millis()
        ));
    }
    pane.input.send_keys(&["Enter".into()]).await?;
    let sent_at = Instant::now();
    let (mut started, mut status) = watch_turn_start(pane, sent_at + RESUBMIT_AFTER).await;
    // Nothing sat in the box before the paste (a draft is refused), so a draft
    // now is the prompt, not taken by the first Enter.
    if !started && status.draft.is_some() {
        pane.input.send_keys(&["Enter".into()]).await?;
        notes.push(format!(
            "Enter sent again: the prompt still sat in the input box {} ms after the first",
            RESUBMIT_AFTER.as_millis()
        ));
    }
    if !started {
        (started, status) = watch_turn_start(pane, sent_at + TURN_START).await;
    }
    Ok(PromptReceipt {
        outcome: if started {
            PromptOutcome::Started
        } else {
            PromptOutcome::Stalled
        },
        state: status.state,
        source: status.source,
        evidence: notes
            .iter()
            .chain(&status.evidence)
            .take(RECEIPT_EVIDENCE_LINES)
            .map(|line| line.chars().take(RECEIPT_EVIDENCE_CHARS).collect())
            .collect(),
        at_ms: fugue_protocol::now_ms(),
        key: None,
        repeated: false,
    })
}

/// `agent_blocked` while the agent waits for a person, `draft_present` while a
/// person's unsent text sits in its input box: nothing is sent.
fn refuse_unless_ready(status: &AgentInfo) -> Result<(), ErrorReply> {
    if matches!(
        status.state,
        AgentState::WaitingForPermission | AgentState::WaitingForAnswer
    ) {
        let prompt = status
            .prompt_id
            .as_deref()
            .map(|id| format!(" (prompt_id {id}: approve or deny it)"))
            .unwrap_or_default();
        return Err(ErrorReply::new(
            ErrorCode::AgentBlocked,
            format!(
                "agent_blocked: the agent is {}{prompt}; a person or an answer must come first. Nothing was sent",
                status.state.as_str()
            ),
        ));
    }
    if let Some(draft) = &status.draft {
        let shown = fugue_protocol::limits::clean_label(draft, 200);
        return Err(ErrorReply::new(
            ErrorCode::DraftPresent,
            format!(
                "draft_present: a person's unsent text sits in the agent's input box: \"{shown}\"; send or clear it first. Nothing was sent"
            ),
        ));
    }
    Ok(())
}

/// Waits for the input box to show the paste (output after `before`, up to
/// 3 s), then for [`PASTE_SETTLE`] of quiet (up to 2 s). A screen long quiet
/// before the paste says nothing, so quiet alone is not enough.
async fn paste_taken_in(pane: &PaneHandle, before: u64) {
    let mut changes = pane.output.changes();
    let echo_by = Instant::now() + PASTE_ECHO;
    while pane.output.end_offset() <= before {
        match tokio::time::timeout_at(echo_by, changes.changed()).await {
            Ok(Ok(())) => {}
            // Out of time, or the pane is gone (Enter will say so).
            Ok(Err(_)) | Err(_) => break,
        }
    }
    let settle_by = Instant::now() + PASTE_SETTLE_LIMIT;
    loop {
        let quiet = pane.output.quiet_for();
        if quiet >= PASTE_SETTLE || Instant::now() >= settle_by {
            return;
        }
        let wake = (Instant::now() + (PASTE_SETTLE - quiet)).min(settle_by);
        tokio::time::sleep_until(wake).await;
    }
}

/// Looks at the agent until it shows a turn started (its busy marker with
/// evidence, or a permission prompt: a redrawn input box is no proof) or
/// `deadline` passes. Returns whether it started and the last look.
async fn watch_turn_start(pane: &PaneHandle, deadline: Instant) -> (bool, AgentInfo) {
    let mut changes = pane.output.changes();
    let mut news = pane.agent.news();
    loop {
        changes.borrow_and_update();
        news.borrow_and_update();
        let status = pane.agent_status().await;
        let started = match status.state {
            AgentState::WaitingForPermission | AgentState::WaitingForAnswer => true,
            AgentState::Busy => !status.evidence.is_empty(),
            _ => false,
        };
        if started || Instant::now() >= deadline {
            return (started, status);
        }
        let looked = Instant::now();
        let wake = (looked + TURN_LOOK_EVERY).min(deadline);
        let gone = tokio::select! {
            changed = changes.changed() => changed.is_err(),
            changed = news.changed() => changed.is_err(),
            _ = tokio::time::sleep_until(wake) => false,
        };
        if gone {
            return (false, status);
        }
        tokio::time::sleep_until((looked + TURN_LOOK_GAP).min(deadline)).await;
    }
}
