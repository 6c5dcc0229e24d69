//! One client connection: handshake, then requests read in a loop, each answered by
//! its own task so replies go out in whatever order they finish.
//!
//! Everything a client can do wrong ends at this connection: malformed or oversize
//! frames get a `Fatal` frame and a close, a silent client times out in the
//! handshake, a vanished one has its in-flight requests cancelled. Outgoing frames
//! go through a bounded queue, so a client that stops reading holds up only itself.

use crate::pane::PaneMsg;
use crate::requests::Handler;
use crate::session::PaneHandle;
use fugue_protocol::codec::{CodecError, FrameCodec};
use fugue_protocol::{
    ClientFrame, ErrorCode, ErrorReply, Event, PaneId, Request, Response, ServerFrame, Welcome, PROTOCOL_VERSION,
};
use futures::{SinkExt, StreamExt};
use ractor::ActorRef;
use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::UnixStream;
use tokio::sync::{broadcast, mpsc, Semaphore};
use tokio_util::codec::{FramedRead, FramedWrite};
use tokio_util::sync::CancellationToken;

/// A client must say Hello within this time.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Frames queued for a client before its request tasks wait.
const OUT_QUEUE: usize = 256;
/// Requests in flight per connection before the daemon stops reading more.
const MAX_IN_FLIGHT: usize = 1024;

/// What one connection has going: its outgoing queue, the token that stops its
/// tasks, its event subscription and the panes it is attached to.
pub struct ConnectionState {
    pub out: mpsc::Sender<ServerFrame>,
    pub cancel: CancellationToken,
    pub subscribed: AtomicBool,
    pub attachments: Mutex<HashMap<PaneId, Attachment>>,
    /// Requests still running, by id, so the client can cancel them.
    pub in_flight: Mutex<HashMap<u64, CancellationToken>>,
}

/// This connection following one pane.
pub struct Attachment {
    /// The pane's id for this client (its subscription).
    pub id: u64,
    pub actor: ActorRef<PaneMsg>,
    pub stop: CancellationToken,
}

impl ConnectionState {
    pub fn attachment_id(&self, pane: PaneId) -> Option<u64> {
        self.attachments.lock().expect("attachments").get(&pane).map(|a| a.id)
    }

    /// Ends the attachment to `pane`; false if there was none.
    pub fn detach(&self, pane: PaneId) -> bool {
        let Some(attachment) = self.attachments.lock().expect("attachments").remove(&pane) else {
            return false;
        };
        attachment.stop.cancel();
        let _ = attachment.actor.cast(PaneMsg::Detach { id: attachment.id });
        true
    }

    /// This client typed into `pane`: under the `latest` policy its size now wins.
    pub fn typed(&self, pane: &PaneHandle) {
        if let Some(id) = self.attachment_id(pane.info.id) {
            let _ = pane.actor.cast(PaneMsg::ClientActive { id });
        }
    }

    fn detach_all(&self) {
        let panes: Vec<PaneId> = self.attachments.lock().expect("attachments").keys().copied().collect();
        for pane in panes {
            self.detach(pane);
        }
    }
}

type Reader = FramedRead<OwnedReadHalf, FrameCodec<ServerFrame, ClientFrame>>;
type Writer = FramedWrite<OwnedWriteHalf, FrameCodec<ServerFrame, ClientFrame>>;

fn codec_error_reply(err: &CodecError) -> Option<ErrorReply> {
    match err {
        CodecError::FrameTooLarge => Some(ErrorReply::new(
            ErrorCode::FrameTooLarge,
            format!(
                "frame larger than {} bytes; split large writes",
                fugue_protocol::MAX_FRAME_BYTES
            ),
        )),
        CodecError::Malformed(why) => Some(ErrorReply::new(
            ErrorCode::MalformedFrame,
            format!("malformed frame: {why}"),
        )),
        CodecError::Io(_) => None,
    }
}

/// Serves one connection until the client leaves or breaks the protocol.
/// `shutdown` is cancelled when a client asks the daemon to shut down.
pub async fn serve(stream: UnixStream, handler: Arc<Handler>, shutdown: CancellationToken) {
    let (read, write) = stream.into_split();
    let mut reader: Reader = FramedRead::new(read, FrameCodec::new());
    let mut writer: Writer = FramedWrite::new(write, FrameCodec::new());

    let hello = match tokio::time::timeout(HANDSHAKE_TIMEOUT, reader.next()).await {
        Ok(Some(Ok(ClientFrame::Hello(hello)))) => hello,
        Ok(Some(Ok(ClientFrame::Request { .. }))) => {
            let reply = ErrorReply::new(ErrorCode::MalformedFrame, "the first frame must be Hello");
            let _ = writer.send(ServerFrame::Fatal(reply)).await;
            return;
        }
        Ok(Some(Err(err))) => {
            if let Some(reply) = codec_error_reply(&err) {
                let _ = writer.send(ServerFrame::Fatal(reply)).await;
            }
            tracing::debug!(%err, "bad handshake frame");
            return;
        }
        Ok(None) => return,
        Err(_) => {
            let reply = ErrorReply::new(ErrorCode::MalformedFrame, "no Hello within 10 s");
            let _ = writer.send(ServerFrame::Fatal(reply)).await;
            return;
        }
    };
    if hello.protocol_version != PROTOCOL_VERSION {
        let reply = ErrorReply::new(
            ErrorCode::ProtocolMismatch,
            format!(
                "protocol mismatch: client {} {} speaks protocol {}, daemon fugued {} speaks protocol {}; restart the daemon (fugue daemon stop) or use a matching client",
                hello.client_name,
                hello.client_version,
                hello.protocol_version,
                env!("CARGO_PKG_VERSION"),
                PROTOCOL_VERSION
            ),
        );
        tracing::info!(client = %hello.client_name, version = hello.protocol_version, "refused: protocol mismatch");
        let _ = writer.send(ServerFrame::Fatal(reply)).await;
        return;
    }
    let welcome = Welcome {
        protocol_version: PROTOCOL_VERSION,
        daemon_version: env!("CARGO_PKG_VERSION").to_string(),
        pid: std::process::id(),
    };
    if writer.send(ServerFrame::Welcome(welcome)).await.is_err() {
        return;
    }
    tracing::debug!(client = %hello.client_name, "client connected");

    let (out, out_rx) = mpsc::channel(OUT_QUEUE);
    let write_task = tokio::spawn(write_loop(writer, out_rx, shutdown));
    let conn = Arc::new(ConnectionState {
        out,
        cancel: CancellationToken::new(),
        subscribed: AtomicBool::new(false),
        attachments: Mutex::new(HashMap::new()),
        in_flight: Mutex::new(HashMap::new()),
    });
    read_loop(reader, handler, &conn).await;
    // The client is gone or broke the protocol: stop its requests and attachments,
    // flush what is queued.
    conn.detach_all();
    conn.cancel.cancel();
    drop(conn);
    let _ = write_task.await;
}

async fn read_loop(mut reader: Reader, handler: Arc<Handler>, conn: &Arc<ConnectionState>) {
    let out = &conn.out;
    let permits = Arc::new(Semaphore::new(MAX_IN_FLIGHT));
    loop {
        let frame = match reader.next().await {
            None => return,
            Some(Ok(frame)) => frame,
            Some(Err(err)) => {
                if let Some(reply) = codec_error_reply(&err) {
                    tracing::debug!(%err, "closing connection");
                    let _ = out.send(ServerFrame::Fatal(reply)).await;
                }
                return;
            }
        };
        let (id, request) = match frame {
            ClientFrame::Request { id, request } => (id, request),
            ClientFrame::Hello(_) => {
                let reply = ErrorReply::new(ErrorCode::MalformedFrame, "Hello sent twice");
                let _ = out.send(ServerFrame::Fatal(reply)).await;
                return;
            }
        };
        tracing::debug!(id, request = request.name(), "request");
        if let Request::Cancel { id: target } = request {
            let token = conn.in_flight.lock().expect("in flight").remove(&target);
            if let Some(token) = token {
                tracing::debug!(request = target, "request cancelled by the client");
                token.cancel();
            }
            let _ = out
                .send(ServerFrame::Reply {
                    id,
                    result: Ok(Response::Ok),
                })
                .await;
            continue;
        }
        let Ok(permit) = permits.clone().acquire_owned().await else {
            return;
        };
        let handler = handler.clone();
        let conn = conn.clone();
        let token = conn.cancel.child_token();
        conn.in_flight.lock().expect("in flight").insert(id, token.clone());
        tokio::spawn(async move {
            let result = tokio::select! {
                result = handler.handle(&conn, request) => result,
                _ = token.cancelled() => Err(ErrorReply::new(ErrorCode::Cancelled, "the request was cancelled")),
            };
            conn.in_flight.lock().expect("in flight").remove(&id);
            if !conn.cancel.is_cancelled() {
                let _ = conn.out.send(ServerFrame::Reply { id, result }).await;
            }
            drop(permit);
        });
    }
}

/// Pushes events to the client; a client that falls behind is told how many it missed.
pub async fn forward_events(
    mut events: broadcast::Receiver<Event>,
    out: mpsc::Sender<ServerFrame>,
    cancel: CancellationToken,
) {
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
        if out.send(ServerFrame::Event(event)).await.is_err() {
            return;
        }
    }
}

async fn write_loop(mut writer: Writer, mut frames: mpsc::Receiver<ServerFrame>, shutdown: CancellationToken) {
    while let Some(frame) = frames.recv().await {
        let starts_shutdown = matches!(
            frame,
            ServerFrame::Reply {
                result: Ok(Response::ShuttingDown),
                ..
            }
        );
        let fatal = matches!(frame, ServerFrame::Fatal(_));
        // Batch: flush only when nothing else is waiting.
        let sent = match frames.is_empty() {
            true => writer.send(frame).await,
            false => writer.feed(frame).await,
        };
        if let Err(err) = sent {
            tracing::debug!(%err, "client write failed");
            return;
        }
        if starts_shutdown {
            shutdown.cancel();
        }
        if fatal {
            return;
        }
    }
    let _ = writer.flush().await;
}
