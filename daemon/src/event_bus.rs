//! The daemon's events (sessions and panes created, renamed, exited; agent
//! states; notifications), for every subscribed client.
//!
//! An event is encoded once, when it is sent, and every subscriber's queue holds
//! the same bytes: a 250 KB event to 1000 subscribers is 250 KB, not 250 MB. The
//! bytes are charged to the daemon's client memory budget for as long as any
//! queue (or the channel's ring of recent events) holds them; an event that does
//! not fit is not sent, and subscribers are told they missed it.

use crate::budget::{Budget, Charge};
use bytes::Bytes;
use fugue_protocol::codec::encode_frame;
use fugue_protocol::{Event, ServerFrame};
use std::sync::Arc;
use tokio::sync::broadcast;

/// Events kept for subscribers that are behind; past this they are told how
/// many they missed.
const EVENT_BUFFER: usize = 1024;

/// One event, encoded as a frame, with the charge for its bytes.
pub struct EncodedEvent {
    pub frame: Bytes,
    _charge: Charge,
}

/// What subscribers receive: an event, or word that some could not be sent.
#[derive(Clone)]
pub enum Published {
    Event(Arc<EncodedEvent>),
    /// Events that were not sent (too large for a frame, or over the budget).
    Dropped(u64),
}

/// Sends events to every subscriber.
#[derive(Clone)]
pub struct EventBus {
    sender: broadcast::Sender<Published>,
    memory: Arc<Budget>,
    /// Woken when a client subscribes (what reads only while someone looks waits on).
    subscribed: Arc<tokio::sync::Notify>,
}

impl EventBus {
    pub fn new(memory: Arc<Budget>) -> Self {
        let (sender, _) = broadcast::channel(EVENT_BUFFER);
        Self {
            sender,
            memory,
            subscribed: Arc::new(tokio::sync::Notify::new()),
        }
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Published> {
        let receiver = self.sender.subscribe();
        self.subscribed.notify_waiters();
        receiver
    }

    /// Whether any client (a connection, a sink's feed) is subscribed.
    pub fn has_subscribers(&self) -> bool {
        self.sender.receiver_count() > 0
    }

    /// Returns once someone is subscribed (at once if someone is).
    pub async fn until_subscribed(&self) {
        loop {
            let next = self.subscribed.notified();
            if self.has_subscribers() {
                return;
            }
            next.await;
        }
    }

    /// Returns when the next client subscribes.
    pub async fn next_subscription(&self) {
        self.subscribed.notified().await;
    }

    /// Encodes `event` once and queues it for every subscriber.
    pub fn send(&self, event: Event) {
        if self.sender.receiver_count() == 0 {
            return;
        }
        let published = match encode_frame(&ServerFrame::Event(event)) {
            Ok(frame) => match self.memory.try_charge(frame.len()) {
                Ok(charge) => Published::Event(Arc::new(EncodedEvent {
                    frame: frame.into(),
                    _charge: charge,
                })),
                Err(over) => {
                    tracing::warn!(
                        bytes = frame.len(),
                        used = over.used,
                        "an event did not fit in the client memory budget"
                    );
                    Published::Dropped(1)
                }
            },
            Err(err) => {
                tracing::warn!(%err, "dropped an event that does not fit in a frame");
                Published::Dropped(1)
            }
        };
        let _ = self.sender.send(published);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fugue_protocol::codec::decode;

    #[test]
    fn an_event_is_encoded_once_and_charged_while_held() {
        let memory = Budget::new("the daemon's client memory", 1 << 20);
        let bus = EventBus::new(memory.clone());
        let mut a = bus.subscribe();
        let mut b = bus.subscribe();
        bus.send(Event::Lagged { missed: 7 });
        let (Ok(Published::Event(x)), Ok(Published::Event(y))) = (a.try_recv(), b.try_recv()) else {
            panic!("both subscribers get the event");
        };
        assert!(Arc::ptr_eq(&x, &y), "one encoding, shared");
        assert_eq!(memory.used(), x.frame.len());
        match decode::<ServerFrame>(&x.frame[4..]).unwrap() {
            ServerFrame::Event(Event::Lagged { missed: 7 }) => {}
            other => panic!("{other:?}"),
        }
        drop((x, y, a, b));
        // The ring's copy goes when the channel does.
        drop(bus);
        assert_eq!(memory.used(), 0);
    }

    #[test]
    fn an_event_over_the_budget_is_reported_as_dropped() {
        let memory = Budget::new("the daemon's client memory", 2);
        let bus = EventBus::new(memory.clone());
        let mut rx = bus.subscribe();
        bus.send(Event::Lagged { missed: 1 });
        assert!(matches!(rx.try_recv(), Ok(Published::Dropped(1))));
        assert_eq!(memory.used(), 0);
    }
}
