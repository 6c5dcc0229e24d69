//! The prompt transaction (`SendPrompt`): a prompt typed into an agent CLI as a
//! person would, refused while the agent needs a person first, and a receipt
//! built from what the daemon itself saw. It runs here, not in a client, so no
//! client writes a receipt another reads.

use super::Handler;
use crate::actors::session::prompt::{submit, Sending};
use crate::agent::tracker::KeyClaim;
use fugue_protocol::requests as rq;
use fugue_protocol::{ErrorCode, ErrorReply, PromptReceipt};

impl Handler {
    /// Runs the transaction on a task of its own: once anything is sent it
    /// finishes and records its receipt even if the caller goes away (a
    /// caller's retry under the same key then gets that receipt).
    pub(super) async fn send_prompt(&self, request: rq::SendPrompt) -> Result<PromptReceipt, ErrorReply> {
        let rq::SendPrompt { pane, text, key } = request;
        // A hibernated agent is resumed first; the prompt goes once it is ready.
        self.wake_if_hibernated(&pane).await?;
        let pane = self.pane(&pane).await?;
        let Some(sending) = Sending::begin(&pane) else {
            return Err(in_flight(
                "another prompt is being sent to this agent now; ask again once it is in".into(),
            ));
        };
        if let Some(key) = &key {
            match pane.agent.claim_prompt_key(key) {
                KeyClaim::Claimed => {}
                KeyClaim::InFlight => {
                    return Err(in_flight(format!(
                        "a prompt with key '{key}' is being sent now; ask again for its receipt"
                    )))
                }
                KeyClaim::Done(earlier) => {
                    return Ok(PromptReceipt {
                        repeated: true,
                        ..earlier
                    })
                }
            }
        }
        let shutdown = self.shutdown.clone();
        let transaction = tokio::spawn(async move {
            let _sending = sending;
            let sent = tokio::select! {
                sent = submit(&pane, text.into_bytes()) => sent,
                _ = shutdown.cancelled() => Err(ErrorReply::new(ErrorCode::ShuttingDown, "the daemon is shutting down")),
            };
            let sent = sent.map(|receipt| PromptReceipt {
                key: key.clone(),
                ..receipt
            });
            if let Some(key) = &key {
                // The receipt for the next claim; a refusal (nothing sent) gives the key up.
                pane.agent.settle_prompt_key(key, sent.as_ref().ok().cloned());
            }
            sent
        });
        transaction
            .await
            .map_err(|e| ErrorReply::internal(format!("the prompt's task failed: {e}")))?
    }
}

pub(crate) fn in_flight(why: String) -> ErrorReply {
    ErrorReply::new(ErrorCode::PromptInFlight, format!("prompt_in_flight: {why}"))
}
