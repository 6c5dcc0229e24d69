//! One client as the requests see it: the queue of frames going to it (counted in
//! bytes, so a client that stops reading holds up only itself and holds at most
//! [`OUT_QUEUE_BYTES`]), its event subscription, its attachments and its requests
//! in flight. The socket side ([`crate::serve::connection`]) fills and drains it.

use super::attach::Attachments;
use bytes::Bytes;
use fugue_protocol::codec::encode_frame;
use fugue_protocol::{ErrorCode, ErrorReply, Event, Response, ServerFrame};
use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use tokio::sync::{broadcast, mpsc, OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

/// Bytes of replies and events queued for a client. A frame larger than this waits
/// until the queue is empty and then goes alone.
pub const OUT_QUEUE_BYTES: usize = 1024 * 1024;

/// Frames on their way to one client, counted in bytes.
#[derive(Clone)]
pub struct Outbox {
    queue: mpsc::UnboundedSender<Outgoing>,
    budget: Arc<Semaphore>,
}

/// One frame in the queue, as the socket writer takes it.
pub struct Outgoing {
    pub frame: Bytes,
    /// Returned to the budget once the frame is written.
    _permit: OwnedSemaphorePermit,
    /// The daemon begins to shut down once this frame is out.
    pub starts_shutdown: bool,
    /// The daemon begins a live upgrade once this frame is out.
    pub starts_upgrade: bool,
    /// The connection closes after this frame.
    pub fatal: bool,
}

/// The client is gone; nothing more can be sent.
#[derive(Debug)]
pub struct Closed;

impl Outbox {
    pub fn new() -> (Self, mpsc::UnboundedReceiver<Outgoing>) {
        let (queue, rx) = mpsc::unbounded_channel();
        let budget = Arc::new(Semaphore::new(OUT_QUEUE_BYTES));
        (Self { queue, budget }, rx)
    }

    /// Queues `frame`, waiting (this caller only) while the client's queue is full.
    pub async fn send(&self, frame: ServerFrame) -> Result<(), Closed> {
        let starts_shutdown = matches!(
            frame,
            ServerFrame::Reply {
                result: Ok(Response::ShuttingDown),
                ..
            }
        );
        let starts_upgrade = matches!(
            frame,
            ServerFrame::Reply {
                result: Ok(Response::Upgrading),
                ..
            }
        );
        let fatal = matches!(frame, ServerFrame::Fatal(_));
        let bytes = encode_or_explain(frame);
        let cost = bytes.len().clamp(1, OUT_QUEUE_BYTES) as u32;
        let permit = self.budget.clone().acquire_many_owned(cost).await.map_err(|_| Closed)?;
        self.queue
            .send(Outgoing {
                frame: bytes.into(),
                _permit: permit,
                starts_shutdown,
                starts_upgrade,
                fatal,
            })
            .map_err(|_| Closed)
    }
}

/// Encodes a frame; a reply too large for a frame becomes an error reply saying so,
/// so the caller hears why instead of losing the connection.
pub fn encode_or_explain(frame: ServerFrame) -> Vec<u8> {
    let id = match &frame {
        ServerFrame::Reply { id, .. } => Some(*id),
        _ => None,
    };
    match (encode_frame(&frame), id) {
        (Ok(bytes), _) => bytes,
        (Err(err), Some(id)) => {
            let reply = ErrorReply::new(
                ErrorCode::LimitReached,
                format!(
                    "the reply is too large to send ({err}); ask for less (fewer lines, a smaller range, no --ansi)"
                ),
            );
            let fallback = ServerFrame::Reply { id, result: Err(reply) };
            encode_frame(&fallback).unwrap_or_default()
        }
        (Err(err), None) => {
            tracing::warn!(%err, "dropped an event that does not fit in a frame");
            let fallback = ServerFrame::Event(Event::Lagged { missed: 1 });
            encode_frame(&fallback).unwrap_or_default()
        }
    }
}

/// What one client has going: its outgoing queue, the token that stops its tasks,
/// its event subscription, the panes it follows and the requests it may cancel.
pub struct Client {
    pub out: Outbox,
    pub cancel: CancellationToken,
    pub subscribed: AtomicBool,
    pub attachments: Attachments,
    /// Requests still running, by id, so the client can cancel them.
    pub in_flight: Mutex<HashMap<u64, CancellationToken>>,
}

impl Client {
    pub fn new(out: Outbox) -> Self {
        Self {
            out,
            cancel: CancellationToken::new(),
            subscribed: AtomicBool::new(false),
            attachments: Attachments::default(),
            in_flight: Mutex::new(HashMap::new()),
        }
    }

    /// The client left: stop following its panes and cancel its requests.
    pub fn close(&self) {
        self.attachments.detach_all();
        self.cancel.cancel();
    }
}

/// Pushes events to the client; a client that falls behind is told how many it missed.
pub async fn forward_events(mut events: broadcast::Receiver<Event>, out: Outbox, cancel: CancellationToken) {
    loop {
        let event = tokio::select! {
            event = events.recv() => event,
            _ = cancel.cancelled() => return,
        };
        let event = match event {
            Ok(event) => event,
            Err(broadcast::error::RecvError::Lagged(missed)) => Event::Lagged { missed },
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let sent = tokio::select! {
            sent = out.send(ServerFrame::Event(event)) => sent,
            _ = cancel.cancelled() => return,
        };
        if sent.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fugue_protocol::codec::decode;
    use fugue_protocol::{OutputChunk, PaneId, PaneInfo};

    #[test]
    fn a_reply_too_large_for_a_frame_becomes_an_error_reply() {
        let pane = PaneInfo {
            id: PaneId::new(),
            session_id: fugue_protocol::SessionId::new(),
            session_name: "s".into(),
            index: 0,
            title: String::new(),
            purpose: String::new(),
            command: vec![],
            shell: true,
            cwd: "/".into(),
            state: fugue_protocol::PaneState::Running,
            pid: 1,
            exit: None,
            size: Default::default(),
            started_at_ms: 0,
            exited_at_ms: None,
            restart: Default::default(),
            restarts: 0,
            last_exit: None,
            agent_session: None,
        };
        let chunk = OutputChunk {
            pane,
            data: vec![b'x'; fugue_protocol::MAX_FRAME_BYTES + 1],
            lines: vec![],
            start_offset: 0,
            next_offset: 0,
            truncated: false,
        };
        let frame = ServerFrame::Reply {
            id: 7,
            result: Ok(Response::Output(chunk)),
        };
        let bytes = encode_or_explain(frame);
        match decode::<ServerFrame>(&bytes[4..]).unwrap() {
            ServerFrame::Reply { id: 7, result: Err(e) } => {
                assert_eq!(e.code, ErrorCode::LimitReached);
                assert!(e.message.contains("too large to send"), "{}", e.message);
            }
            other => panic!("{other:?}"),
        }
    }
}
