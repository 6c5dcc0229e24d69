//! One client as the requests see it: the queue of frames going to it (counted in
//! bytes, so a client that stops reading holds up only itself and holds at most
//! [`OUT_QUEUE_BYTES`]), its memory budget, its event subscription, its
//! attachments and its requests in flight. The socket side
//! ([`crate::serve::connection`]) fills and drains it.

use super::attach::Attachments;
use crate::budget::{Budget, Charge, CONNECTION_MEMORY, CONNECTION_PATTERN_MEMORY};
use crate::event_bus::Published;
use crate::sync::lock;
use bytes::Bytes;
use fugue_protocol::codec::encode_frame;
use fugue_protocol::{ErrorCode, ErrorReply, Event, Response, ServerFrame};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use tokio::sync::{broadcast, mpsc, OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

/// Bytes of replies and events queued for a client. A frame larger than this waits
/// until the queue is empty and then goes alone.
pub const OUT_QUEUE_BYTES: usize = 1024 * 1024;

/// Frames on their way to one client, counted in bytes: against the client's
/// queue (a full one makes the sender wait) and its memory budget (a frame that
/// does not fit there is an event the client misses).
#[derive(Clone)]
pub struct Outbox {
    queue: mpsc::UnboundedSender<Outgoing>,
    budget: Arc<Semaphore>,
    memory: Arc<Budget>,
    /// When the client last took something off the queue (or the queue last
    /// went from empty to not), in ms since the Unix epoch: a client with
    /// bytes queued and no progress for a while is not reading.
    pub progress: Arc<AtomicU64>,
}

/// One frame in the queue, as the socket writer takes it.
pub struct Outgoing {
    pub frame: Bytes,
    /// Returned to the queue once the frame is written.
    _permit: OwnedSemaphorePermit,
    /// The frame's bytes in the memory budget, until it is written.
    _charge: Charge,
    /// The daemon begins to shut down once this frame is out.
    pub starts_shutdown: bool,
    /// The daemon begins a live upgrade once this frame is out.
    pub starts_upgrade: bool,
    /// The connection closes after this frame.
    pub fatal: bool,
}

/// Why a frame was not queued.
#[derive(Debug, PartialEq, Eq)]
pub enum NotSent {
    /// The client is gone; nothing more can be sent.
    Closed,
    /// An event did not fit in the memory budget (the client's or the daemon's).
    OverBudget,
}

impl Outbox {
    pub fn new(memory: Arc<Budget>) -> (Self, mpsc::UnboundedReceiver<Outgoing>) {
        let (queue, rx) = mpsc::unbounded_channel();
        let budget = Arc::new(Semaphore::new(OUT_QUEUE_BYTES));
        let progress = Arc::new(AtomicU64::new(fugue_protocol::now_ms()));
        (
            Self {
                queue,
                budget,
                memory,
                progress,
            },
            rx,
        )
    }

    /// Bytes queued and not yet written.
    pub fn queued(&self) -> usize {
        OUT_QUEUE_BYTES - self.budget.available_permits()
    }

    /// How long the client has had bytes queued without taking any.
    pub fn stalled_for(&self) -> std::time::Duration {
        match self.queued() {
            0 => std::time::Duration::ZERO,
            _ => {
                let since = fugue_protocol::now_ms().saturating_sub(self.progress.load(Ordering::Acquire));
                std::time::Duration::from_millis(since)
            }
        }
    }

    /// Queues `frame`, waiting (this caller only) while the client's queue is full.
    /// Replies always go (their request reserved room for them); an event that
    /// does not fit in the memory budget is refused.
    pub async fn send(&self, frame: ServerFrame) -> Result<(), NotSent> {
        self.send_holding(frame, Charge::none()).await
    }

    /// [`Outbox::send`] for a reply whose request holds `held` for it (its
    /// reservation, and what it was charged once built): the reply's charge is
    /// `held` made its size, so it is never counted twice.
    pub async fn send_reply(&self, frame: ServerFrame, held: Charge) -> Result<(), NotSent> {
        self.send_holding(frame, held).await
    }

    async fn send_holding(&self, frame: ServerFrame, held: Charge) -> Result<(), NotSent> {
        let starts_shutdown = matches!(
            frame,
            ServerFrame::Reply {
                result: Ok(Response::Shutdown(())),
                ..
            }
        );
        let starts_upgrade = matches!(
            frame,
            ServerFrame::Reply {
                result: Ok(Response::UpgradeDaemon(())),
                ..
            }
        );
        let fatal = matches!(frame, ServerFrame::Fatal(_));
        let event = matches!(frame, ServerFrame::Event(_));
        let bytes = encode_or_explain(frame);
        // An event that does not fit is refused. A reply waiting for room is
        // paid for by its request's reservation (see `serve::connection`), so
        // it is charged once it has its place in the queue.
        let event_charge = match event {
            true => Some(self.memory.try_charge(bytes.len()).map_err(|_| NotSent::OverBudget)?),
            false => None,
        };
        let permit = self.room(bytes.len()).await?;
        let charge = match event_charge {
            Some(charge) => charge,
            None => held
                .resized(bytes.len())
                .unwrap_or_else(|| self.memory.force_charge(bytes.len())),
        };
        self.queue
            .send(Outgoing {
                frame: bytes.into(),
                _permit: permit,
                _charge: charge,
                starts_shutdown,
                starts_upgrade,
                fatal,
            })
            .map_err(|_| NotSent::Closed)
    }

    /// Queues an event that was encoded once for every subscriber; its bytes are
    /// charged where they were encoded.
    pub async fn send_shared(&self, frame: Bytes) -> Result<(), NotSent> {
        let permit = self.room(frame.len()).await?;
        self.queue
            .send(Outgoing {
                frame,
                _permit: permit,
                _charge: Charge::none(),
                starts_shutdown: false,
                starts_upgrade: false,
                fatal: false,
            })
            .map_err(|_| NotSent::Closed)
    }

    /// Room for `bytes` in the queue, waiting while it is full.
    async fn room(&self, bytes: usize) -> Result<OwnedSemaphorePermit, NotSent> {
        let cost = bytes.clamp(1, OUT_QUEUE_BYTES) as u32;
        if self.queued() == 0 {
            // An idle client's clock starts with what it is sent now.
            self.progress.store(fugue_protocol::now_ms(), Ordering::Release);
        }
        self.budget
            .clone()
            .acquire_many_owned(cost)
            .await
            .map_err(|_| NotSent::Closed)
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
    /// Cancelled to cut the connection at once, dropping what is queued for it
    /// (when the daemon's budget is exhausted and this client holds the most).
    pub cut: CancellationToken,
    /// What this connection makes the daemon hold (a share of the daemon's budget).
    pub memory: Arc<Budget>,
    /// Compiled wait patterns (counted in `memory` too).
    pub patterns: Arc<Budget>,
    pub cancel: CancellationToken,
    pub subscribed: AtomicBool,
    pub attachments: Attachments,
    /// Requests still running, by id, so the client can cancel them.
    pub in_flight: Mutex<HashMap<u64, CancellationToken>>,
}

impl Client {
    /// A client whose memory counts against `daemon_memory`; returns it with
    /// the receiving end of its outbox.
    pub fn new(daemon_memory: &Arc<Budget>) -> (Self, mpsc::UnboundedReceiver<Outgoing>) {
        let memory = daemon_memory.child("this connection's memory", CONNECTION_MEMORY);
        let patterns = memory.child("this connection's wait patterns", CONNECTION_PATTERN_MEMORY);
        let (out, outgoing) = Outbox::new(memory.clone());
        let client = Self {
            out,
            cut: CancellationToken::new(),
            memory,
            patterns,
            cancel: CancellationToken::new(),
            subscribed: AtomicBool::new(false),
            attachments: Attachments::default(),
            in_flight: Mutex::new(HashMap::new()),
        };
        (client, outgoing)
    }

    /// The client left: stop following its panes and cancel its requests.
    pub fn close(&self) {
        self.attachments.detach_all();
        self.cancel.cancel();
    }
}

/// Every connected client, so that when the daemon's budget runs out the one
/// holding the most can be cut to make room.
#[derive(Default)]
pub struct Clients {
    all: Mutex<Vec<Weak<Client>>>,
    /// Requests of clients that keep up, waiting for the daemon's budget to
    /// have room (see `serve::connection::admit`).
    wanting_room: AtomicUsize,
}

/// A request waiting for room; counted in [`Clients::room_wanted`] while it lives.
pub struct WantsRoom<'a>(&'a AtomicUsize);

impl Drop for WantsRoom<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A client holding less than this is never cut: cutting it would not help.
const MIN_CUT_BYTES: usize = 256 * 1024;
/// Only a client that has not read what is queued for it this long is cut: one
/// that reads is never cut, however much its requests hold.
const STALLED: std::time::Duration = std::time::Duration::from_millis(500);

impl Clients {
    pub fn add(&self, client: &Arc<Client>) {
        let mut clients = lock(&self.all);
        clients.retain(|c| c.strong_count() > 0);
        clients.push(Arc::downgrade(client));
    }

    /// Counts a request waiting for room until the returned guard drops.
    pub fn want_room(&self) -> WantsRoom<'_> {
        self.wanting_room.fetch_add(1, Ordering::AcqRel);
        WantsRoom(&self.wanting_room)
    }

    /// Whether a request of a client that keeps up waits for room.
    pub fn room_wanted(&self) -> bool {
        self.wanting_room.load(Ordering::Acquire) > 0
    }

    /// Cuts the client other than `asking` that holds the most memory (at least
    /// [`MIN_CUT_BYTES`]) among those that stopped reading (nothing taken off
    /// their queue for [`STALLED`]), if there is one.
    pub fn cut_largest(&self, asking: &Client) {
        let largest = lock(&self.all)
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|c| !std::ptr::eq(c.as_ref(), asking) && !c.cut.is_cancelled())
            .filter(|c| c.out.stalled_for() >= STALLED)
            .max_by_key(|c| c.memory.used());
        if let Some(client) = largest.filter(|c| c.memory.used() >= MIN_CUT_BYTES) {
            tracing::warn!(
                held = client.memory.used(),
                "cut the client holding the most memory: the daemon's client memory budget is exhausted"
            );
            client.cut.cancel();
        }
    }
}

/// Pushes events to the client; a client that falls behind (or whose events did
/// not fit in the memory budget) is told how many it missed.
pub async fn forward_events(mut events: broadcast::Receiver<Published>, out: Outbox, cancel: CancellationToken) {
    let mut missed = 0u64;
    loop {
        let published = tokio::select! {
            published = events.recv() => published,
            _ = cancel.cancelled() => return,
        };
        let frame = match published {
            Ok(Published::Event(event)) => event.frame.clone(),
            Ok(Published::Dropped(count)) | Err(broadcast::error::RecvError::Lagged(count)) => {
                missed += count;
                continue;
            }
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let sent = tokio::select! {
            sent = async {
                if missed > 0 {
                    out.send(ServerFrame::Event(Event::Lagged { missed })).await?;
                    missed = 0;
                }
                out.send_shared(frame).await
            } => sent,
            _ = cancel.cancelled() => return,
        };
        match sent {
            Ok(()) => {}
            Err(NotSent::OverBudget) => missed += 1,
            Err(NotSent::Closed) => return,
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
            tmux: None,
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
            result: Ok(Response::ReadOutput(chunk)),
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
