//! A person's yes before a tool does what cannot be undone by the agent that
//! asked: starting an agent, merging a branch, discarding a worktree. Asked by
//! MCP elicitation (before protocol 2026-07-28 the server asks mid-call; from
//! then on the call answers "input required" and comes back with the answer);
//! a client that cannot ask is refused unless the bridge was started with the
//! guard's `--allow-...` flag.

use super::FugueTools;
use crate::params::SpawnConfirmation;
use rmcp::model::InputRequiredResult;
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};

/// What to ask, and what stands in for asking.
pub(super) struct Guard {
    /// The question, naming what will happen.
    pub question: String,
    /// What did not happen when the person said no ("the agent was not started").
    pub declined: &'static str,
    /// The bridge's flag lets it go ahead where no one can be asked.
    pub allowed: bool,
    pub flag: &'static str,
}

/// `Ok(None)`: the person said yes (or the flag stands in for them);
/// `Ok(Some)`: the question to answer the call with first.
pub(super) type Confirmation = Result<Option<InputRequiredResult>, String>;

/// The key of the confirmation among a call's input requests.
const CONFIRM_KEY: &str = "confirm";

impl FugueTools {
    pub(super) async fn confirm(
        &self,
        guard: Guard,
        peer: &Peer<RoleServer>,
        context: &RequestContext<RoleServer>,
        request_state: Option<String>,
        responses: Option<rmcp::model::InputResponses>,
    ) -> Confirmation {
        let modern = context
            .protocol_version()
            .is_some_and(|v| v >= rmcp::model::ProtocolVersion::V_2026_07_28);
        match modern {
            true => self.confirm_by_input_request(&guard, context, request_state, responses),
            false => self.confirm_by_elicitation(&guard, peer).await,
        }
    }

    /// Before 2026-07-28: the server asks the client mid-call (elicitation/create).
    async fn confirm_by_elicitation(&self, guard: &Guard, peer: &Peer<RoleServer>) -> Confirmation {
        match peer.elicit::<SpawnConfirmation>(guard.question.clone()).await {
            Ok(Some(SpawnConfirmation { confirm: true })) | Err(rmcp::service::ElicitationError::NoContent) => Ok(None),
            Ok(_)
            | Err(rmcp::service::ElicitationError::UserDeclined)
            | Err(rmcp::service::ElicitationError::UserCancelled) => {
                Err(format!("the person declined: {}", guard.declined))
            }
            Err(err) => cannot_ask(guard, &err.to_string()),
        }
    }

    /// From 2026-07-28 a server may not call its client: it answers the tool call
    /// with "input required" (the question), and the client calls again with the
    /// person's answer and the request state it was given.
    fn confirm_by_input_request(
        &self,
        guard: &Guard,
        context: &RequestContext<RoleServer>,
        request_state: Option<String>,
        responses: Option<rmcp::model::InputResponses>,
    ) -> Confirmation {
        let mut pending = self.bridge.pending_questions.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(state) = request_state {
            if !pending.answer(&state, &guard.question) {
                return Err(
                    "this answer is for no question still open (answered already, expired, or asked for \
other arguments); call the tool again"
                        .into(),
                );
            }
            let answer = responses.and_then(|mut r| r.remove(CONFIRM_KEY)).unwrap_or_default();
            let answer: rmcp::model::ElicitResult = serde_json::from_value(answer)
                .map_err(|e| format!("the client's answer to the confirmation is not an elicitation result: {e}"))?;
            let confirmed = answer.action == rmcp::model::ElicitationAction::Accept
                && answer.content.as_ref().is_some_and(|c| c["confirm"] == true);
            return match confirmed {
                true => Ok(None),
                false => Err(format!("the person declined: {}", guard.declined)),
            };
        }
        let can_ask = context.client_capabilities().is_some_and(|c| c.elicitation.is_some());
        if !can_ask {
            return cannot_ask(guard, "the client announced no elicitation capability");
        }
        let schema = rmcp::model::ElicitationSchema::from_type::<SpawnConfirmation>().map_err(|e| e.to_string())?;
        let ask = rmcp::model::ElicitRequest::new(rmcp::model::ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: guard.question.clone(),
            requested_schema: schema,
        });
        let requests = [(CONFIRM_KEY.to_string(), rmcp::model::InputRequest::Elicitation(ask))].into();
        Ok(Some(InputRequiredResult::new(
            Some(requests),
            Some(pending.ask(&guard.question)),
        )))
    }
}

fn cannot_ask(guard: &Guard, why: &str) -> Confirmation {
    if guard.allowed {
        tracing::info!(why, flag = guard.flag, "no elicitation; the flag lets it go ahead");
        return Ok(None);
    }
    Err(format!(
        "cannot ask a person to confirm ({why}); this client does not support MCP elicitation. Start fugue-mcp with \
{} to allow this without confirmation",
        guard.flag
    ))
}
