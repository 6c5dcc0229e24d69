//! Attachment: a client following a pane live. Attaching asks the pane for a
//! subscription and a first redraw; [`Follow`] then streams output, title and bell
//! events and finally the exit; the client's [`Attachments`] table ends them.

use super::client::{Client, NotSent};
use super::resolve::ask;
use super::resolve::PANE;
use super::Handler;
use crate::actors::pane::{Exited, PaneMsg};
use crate::actors::session::PaneHandle;
use crate::budget::Charge;
use crate::sync::lock;
use crate::terminal::pane_output::{PaneEvent, PaneOutput, Subscription, SUBSCRIBER_BYTES};
use fugue_protocol::{ErrorReply, Event, PaneId, PaneInfo, PaneSize, ServerFrame};
use ractor::ActorRef;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// The panes one client follows.
#[derive(Default)]
pub struct Attachments(Mutex<HashMap<PaneId, Attachment>>);

/// One client following one pane.
pub struct Attachment {
    /// The pane's id for this client (its subscription).
    pub id: u64,
    pub actor: ActorRef<PaneMsg>,
    pub stop: CancellationToken,
    /// The most the pane's queue for this client may hold
    /// ([`SUBSCRIBER_BYTES`]), in the connection's budget while attached.
    pub _held: Charge,
}

impl Attachments {
    pub fn id(&self, pane: PaneId) -> Option<u64> {
        lock(&self.0).get(&pane).map(|a| a.id)
    }

    pub fn attach(&self, pane: PaneId, attachment: Attachment) {
        lock(&self.0).insert(pane, attachment);
    }

    /// Ends the attachment to `pane`; false if there was none.
    pub fn detach(&self, pane: PaneId) -> bool {
        let Some(attachment) = lock(&self.0).remove(&pane) else {
            return false;
        };
        attachment.stop.cancel();
        let _ = attachment.actor.cast(PaneMsg::Detach { id: attachment.id });
        true
    }

    /// This client typed into `pane`: under the `latest` policy its size now wins.
    /// Returns its attachment's id if it is attached to the pane (then what it
    /// types comes from a terminal showing the pane).
    pub fn typed(&self, pane: &PaneHandle) -> Option<u64> {
        let id = self.id(pane.info.id)?;
        let _ = pane.actor.cast(PaneMsg::ClientActive { id });
        Some(id)
    }

    pub fn detach_all(&self) {
        let panes: Vec<PaneId> = lock(&self.0).keys().copied().collect();
        for pane in panes {
            self.detach(pane);
        }
    }
}

impl Handler {
    pub(super) async fn attach(
        &self,
        conn: &Arc<Client>,
        target: &str,
        read_only: bool,
        size: Option<PaneSize>,
    ) -> Result<PaneInfo, ErrorReply> {
        // A person attaching to a hibernated agent wakes it; what they type
        // meanwhile waits in their own terminal until the attach is answered.
        self.wake_if_hibernated(target).await?;
        let pane = self.pane(target).await?;
        let info = pane.current_info();
        if let Some(status) = info.exit {
            return Err(ErrorReply::invalid(format!(
                "pane {} has {status}; nothing to attach to",
                info.id
            )));
        }
        if conn.attachments.id(info.id).is_some() {
            return Err(ErrorReply::invalid(format!(
                "this client is already attached to pane {}",
                info.id
            )));
        }
        // Attaching holds memory by design: the pane queues output for this
        // client up to SUBSCRIBER_BYTES, charged for as long as it follows.
        let held = conn.memory.try_charge(SUBSCRIBER_BYTES)?;
        let (subscription, redraw) = ask(&pane.actor, |reply| PaneMsg::Attach { read_only, size, reply }, PANE).await?;
        pane.agent.looked_at();
        let stop = conn.cancel.child_token();
        conn.attachments.attach(
            info.id,
            Attachment {
                id: subscription.id,
                actor: pane.actor.clone(),
                stop: stop.clone(),
                _held: held,
            },
        );
        let follow = Follow {
            conn: conn.clone(),
            pane: info.id,
            subscription,
            output: pane.output.clone(),
            exit: pane.exit.clone(),
            stop,
        };
        tokio::spawn(follow.run(redraw));
        Ok(info)
    }
}

/// Streams one attached pane to its client: a redraw, then output, title and bell
/// events, then its exit. A client that lagged gets a fresh redraw instead of the
/// output it missed.
struct Follow {
    conn: Arc<Client>,
    pane: PaneId,
    subscription: Subscription,
    output: Arc<PaneOutput>,
    exit: watch::Receiver<Option<Exited>>,
    stop: CancellationToken,
}

impl Follow {
    async fn run(mut self, redraw: Vec<u8>) {
        let pane = self.pane;
        if self.send(Event::Redraw { pane, data: redraw }).await {
            self.follow().await;
        }
        self.conn.attachments.detach(pane);
    }

    async fn follow(&mut self) {
        loop {
            let mut exit = self.exit.clone();
            // None when the pane was released: nothing more will come.
            let exited = async move {
                exit.wait_for(|e| e.is_some())
                    .await
                    .ok()
                    .and_then(|exited| exited.map(|e| e.status))
            };
            tokio::select! {
                biased;
                _ = self.stop.cancelled() => return,
                event = self.subscription.events.recv() => {
                    let Some(event) = event else { return };
                    if !self.deliver(event).await {
                        return;
                    }
                }
                status = exited => {
                    let Some(status) = status else { return };
                    // Everything the pane printed was queued before its exit was published.
                    while let Ok(event) = self.subscription.events.try_recv() {
                        if !self.deliver(event).await {
                            return;
                        }
                    }
                    self.send(Event::Exited { pane: self.pane, status }).await;
                    return;
                }
            }
        }
    }

    /// Sends one event, or a redraw if the subscriber lagged. False when the
    /// client is gone.
    async fn deliver(&mut self, event: PaneEvent) -> bool {
        let pane = self.pane;
        self.subscription.took(&event);
        if self.subscription.lagged.load(Ordering::Acquire) {
            while let Ok(dropped) = self.subscription.events.try_recv() {
                self.subscription.took(&dropped);
            }
            let data = self.output.resync(&self.subscription.lagged);
            return self.send(Event::Redraw { pane, data }).await;
        }
        let event = match event {
            PaneEvent::Output(data) => Event::Output {
                pane,
                data: data.to_vec(),
            },
            PaneEvent::Title(title) => Event::Title { pane, title },
            PaneEvent::Bell => Event::Bell { pane },
        };
        self.send(event).await
    }

    /// Sends an event; one that does not fit in the memory budget makes the
    /// client lag (it gets a redraw with the next event). False when the client
    /// is gone.
    async fn send(&self, event: Event) -> bool {
        tokio::select! {
            sent = self.conn.out.send(ServerFrame::Event(event)) => match sent {
                Ok(()) => true,
                Err(NotSent::OverBudget) => {
                    self.subscription.lagged.store(true, Ordering::Release);
                    true
                }
                Err(NotSent::Closed) => false,
            },
            _ = self.stop.cancelled() => false,
        }
    }
}
