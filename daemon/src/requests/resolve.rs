//! Finding what a request names: asking an actor with a deadline, and resolving a
//! session or pane target (UUID, id prefix, name, `SESSION:INDEX`, `SESSION:TITLE`).

use super::Handler;
use crate::actors::session::{PaneHandle, PaneLookup, SessionMsg};
use crate::actors::supervisor::{SessionRef, SupervisorMsg};
use fugue_protocol::target::PaneTarget;
use fugue_protocol::{ErrorCode, ErrorReply};
use ractor::rpc::CallResult;
use ractor::{ActorRef, Message, RpcReplyPort};
use std::time::Duration;

/// Longest an actor may take to answer before the request fails.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Asks `actor` and waits for the answer; `gone` names what vanished if it stopped.
pub(super) async fn ask<M: Message, T: Send + 'static>(
    actor: &ActorRef<M>,
    build: impl FnOnce(RpcReplyPort<T>) -> M,
    gone: (ErrorCode, &str),
) -> Result<T, ErrorReply> {
    match actor.call(build, Some(CALL_TIMEOUT)).await {
        Ok(CallResult::Success(value)) => Ok(value),
        Ok(CallResult::Timeout) => Err(ErrorReply::internal(format!(
            "{} did not answer within {}s",
            gone.1,
            CALL_TIMEOUT.as_secs()
        ))),
        Ok(CallResult::SenderError) | Err(_) => Err(ErrorReply::new(
            gone.0,
            format!("{} went away during the request", gone.1),
        )),
    }
}

pub(super) const SUPERVISOR: (ErrorCode, &str) = (ErrorCode::ShuttingDown, "the daemon");
pub(super) const SESSION: (ErrorCode, &str) = (ErrorCode::SessionNotFound, "the session");
pub(super) const PANE: (ErrorCode, &str) = (ErrorCode::PaneNotFound, "the pane");

impl Handler {
    pub(super) async fn session(&self, target: &str) -> Result<SessionRef, ErrorReply> {
        let target = target.to_string();
        ask(
            &self.supervisor,
            |reply| SupervisorMsg::ResolveSession { target, reply },
            SUPERVISOR,
        )
        .await?
    }

    /// The id of the session named exactly `name`, if there is one.
    pub(super) async fn session_id(&self, name: &str) -> Option<fugue_protocol::SessionId> {
        let sessions = ask(&self.supervisor, SupervisorMsg::ListSessions, SUPERVISOR)
            .await
            .ok()?;
        sessions.into_iter().find(|s| s.name == name).map(|s| s.id)
    }

    /// Resolves a pane target to a handle for acting on the pane directly.
    pub async fn pane(&self, target: &str) -> Result<PaneHandle, ErrorReply> {
        let (session, lookup) = match PaneTarget::parse(target)? {
            PaneTarget::Id(_) => {
                let target = target.to_string();
                let (session, id) = ask(
                    &self.supervisor,
                    |reply| SupervisorMsg::ResolvePane { target, reply },
                    SUPERVISOR,
                )
                .await??;
                (session, PaneLookup::Id(id))
            }
            PaneTarget::InSession { session, .. } => {
                let pane = target[session.len() + 1..].to_string();
                (self.session(session).await?, PaneLookup::Target(pane))
            }
        };
        ask(&session.actor, |reply| SessionMsg::GetPane { lookup, reply }, SESSION).await?
    }
}
