//! One client connection: handshake, then requests read in a loop, each answered by
//! its own task so replies go out in whatever order they finish.
//!
//! Everything a client can do wrong ends at this connection, and costs a bounded
//! amount while it lasts:
//! - the first frame may be at most [`HELLO_MAX_BYTES`], later ones
//!   [`MAX_CLIENT_FRAME_BYTES`]; a longer length prefix is refused at once;
//! - a frame that stops half way is dropped with the connection after
//!   [`FRAME_STALL_TIMEOUT`] (idle connections between frames may stay forever);
//! - requests in flight are counted in bytes ([`IN_FLIGHT_BYTES`]), so are the
//!   replies they may produce ([`REPLY_BYTES`], reserved before a request runs) and
//!   the outgoing queue ([`OUT_QUEUE_BYTES`](crate::requests::client::OUT_QUEUE_BYTES)): a client that stops reading holds up
//!   only itself, and holds at most that much memory;
//! - malformed or oversize frames get a `Fatal` frame and a close; a request
//!   whose tag this daemon does not know (a newer client's) or whose fields do
//!   not decode is answered with an error and the connection goes on;
//! - a vanished client has its in-flight requests cancelled.

use crate::budget::Charge;
use crate::requests::client::{encode_or_explain, Client, Outgoing};
use crate::requests::Handler;
use crate::sync::lock;
use bytes::BytesMut;
use fugue_protocol::codec::{CodecError, IncomingFrame, RawFrames};
use fugue_protocol::limits::MAX_CLIENT_FRAME_BYTES;
use fugue_protocol::requests::{UnreadableRequest, SMALL_REPLY_BYTES};
use fugue_protocol::{
    ErrorCode, ErrorReply, Hello, Request, Response, ServerFrame, Welcome, PROTOCOL_REVISION, PROTOCOL_VERSION,
};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufWriter};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::UnixStream;
use tokio::sync::{mpsc, Notify, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;
use tokio_util::codec::Decoder;
use tokio_util::sync::CancellationToken;

/// A client must say Hello within this time.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest first frame (a Hello is a few dozen bytes).
pub const HELLO_MAX_BYTES: usize = 64 * 1024;
/// Connections still in their handshake at once. A burst of clients (every
/// agent's MCP bridge after a reboot) fits: each waiting connection holds its
/// socket, a task and an empty read buffer (a few hundred bytes until its Hello
/// arrives; the kernel's socket buffers besides), so 4096 hold about 2 MB.
pub const MAX_PENDING_HANDSHAKES: usize = 4096;
/// Past [`MAX_PENDING_HANDSHAKES`], the oldest waiting connection is dropped to
/// make room only once it has been silent this long (a client says Hello at
/// once); otherwise the new connection is refused. So a crowd of silent
/// connections cannot lock clients out, and a burst is never cut.
pub const EVICTABLE_AFTER: Duration = Duration::from_secs(1);
/// A frame whose first byte arrived must be complete within this time.
pub const FRAME_STALL_TIMEOUT: Duration = Duration::from_secs(10);
/// Bytes of requests (as framed) being worked on per connection before the daemon
/// stops reading more from it.
pub const IN_FLIGHT_BYTES: usize = 8 * 1024 * 1024;
/// Every request counts at least this much against [`IN_FLIGHT_BYTES`], so tiny
/// requests cannot pile up by the million.
const MIN_REQUEST_COST: usize = 1024;
/// What a request holds besides its bytes and its future: the task around the
/// future, its cancellation token and its entry among the requests in flight
/// (about 400 bytes, measured with heaptrack).
const REQUEST_OVERHEAD: usize = 512;
/// Bytes of replies a connection's requests may be producing at once, reserved
/// before a request runs by what it may return (`Request::reply_bytes`). A client that
/// asks for many large reads and never reads the replies holds at most this much.
pub const REPLY_BYTES: usize = 24 * 1024 * 1024;

/// Bytes reserved for a read while the handshake waits, and after it.
const HANDSHAKE_READ_CHUNK: usize = 512;
const READ_CHUNK: usize = 16 * 1024;

/// Longest client string quoted in a log line or message.
const LOG_FIELD_BYTES: usize = 128;

/// Connections that have not finished their handshake, oldest first. When there
/// are too many, the oldest is dropped if it has been silent for
/// [`EVICTABLE_AFTER`] (see there), else the newcomer is refused.
#[derive(Default)]
pub struct Handshakes {
    pending: Mutex<VecDeque<(u64, Instant, CancellationToken)>>,
    next: AtomicU64,
    /// Notified whenever a connection ends (and its descriptor is free again).
    pub closed: Notify,
}

impl Handshakes {
    /// A slot for a new connection's handshake, or `None` when it must be refused.
    fn register(&self) -> Option<(u64, CancellationToken)> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let token = CancellationToken::new();
        let mut pending = lock(&self.pending);
        if pending.len() >= MAX_PENDING_HANDSHAKES {
            match pending.front() {
                Some((_, since, _)) if since.elapsed() >= EVICTABLE_AFTER => {
                    if let Some((_, _, oldest)) = pending.pop_front() {
                        oldest.cancel();
                    }
                }
                _ => return None,
            }
        }
        pending.push_back((id, Instant::now(), token.clone()));
        Some((id, token))
    }

    fn finish(&self, id: u64) {
        lock(&self.pending).retain(|(pending, ..)| *pending != id);
    }

    /// Drops the older half of the pending handshakes (when descriptors run out).
    pub fn evict_older_half(&self) -> usize {
        let mut pending = lock(&self.pending);
        let count = pending.len().div_ceil(2);
        for (_, _, token) in pending.drain(..count) {
            token.cancel();
        }
        count
    }
}

/// Why reading a frame failed.
enum ReadError {
    Codec(CodecError),
    /// A frame started and did not finish in time.
    Stalled,
}

/// Reads frames off the socket. It never reserves room for a whole announced frame
/// (memory follows what the client actually sent) and knows when a frame is half
/// read, so a slow drip can be cut off.
struct FrameReader {
    stream: OwnedReadHalf,
    buf: BytesMut,
    codec: RawFrames,
    /// When the bytes now in `buf` (an unfinished frame) began to arrive.
    partial_since: Option<Instant>,
    /// Room reserved before a read: small while the handshake waits (a Hello
    /// is a few dozen bytes, and a burst of clients waits at once), larger after.
    read_chunk: usize,
}

impl FrameReader {
    fn new(stream: OwnedReadHalf) -> Self {
        Self {
            stream,
            buf: BytesMut::new(),
            codec: RawFrames::with_max_in(HELLO_MAX_BYTES),
            partial_since: None,
            read_chunk: HANDSHAKE_READ_CHUNK,
        }
    }

    /// The next frame's payload and its size on the wire; `None` at a clean end of stream.
    async fn next(&mut self) -> Option<Result<(BytesMut, usize), ReadError>> {
        loop {
            let before = self.buf.len();
            match self.codec.decode(&mut self.buf) {
                Ok(Some(frame)) => {
                    self.partial_since = (!self.buf.is_empty()).then(Instant::now);
                    return Some(Ok((frame, before - self.buf.len())));
                }
                Ok(None) => {}
                Err(err) => return Some(Err(ReadError::Codec(err))),
            }
            if self.buf.is_empty() {
                self.partial_since = None;
            } else if self.partial_since.is_none() {
                self.partial_since = Some(Instant::now());
            }
            if self.buf.capacity() - self.buf.len() < self.read_chunk / 4 {
                self.buf.reserve(self.read_chunk);
            }
            let read = match self.partial_since {
                None => self.stream.read_buf(&mut self.buf).await,
                Some(since) => {
                    match tokio::time::timeout_at(since + FRAME_STALL_TIMEOUT, self.stream.read_buf(&mut self.buf))
                        .await
                    {
                        Ok(read) => read,
                        Err(_) => return Some(Err(ReadError::Stalled)),
                    }
                }
            };
            match read {
                Ok(0) if self.buf.is_empty() => return None,
                Ok(0) => {
                    return Some(Err(ReadError::Codec(CodecError::Malformed(
                        "the connection ended inside a frame".into(),
                    ))))
                }
                Ok(_) => {}
                Err(err) => return Some(Err(ReadError::Codec(CodecError::Io(err)))),
            }
        }
    }
}

fn read_error_reply(err: &ReadError) -> Option<ErrorReply> {
    match err {
        ReadError::Stalled => Some(ErrorReply::new(
            ErrorCode::MalformedFrame,
            format!(
                "a frame stopped half way for {} s; closing",
                FRAME_STALL_TIMEOUT.as_secs()
            ),
        )),
        ReadError::Codec(CodecError::FrameTooLarge { len, max }) => Some(ErrorReply::new(
            ErrorCode::FrameTooLarge,
            format!("frame of {len} bytes exceeds the maximum {max}; split large writes"),
        )),
        ReadError::Codec(CodecError::Malformed(why)) => Some(ErrorReply::new(
            ErrorCode::MalformedFrame,
            format!(
                "malformed frame: {}",
                fugue_protocol::limits::truncate_for_display(why, LOG_FIELD_BYTES)
            ),
        )),
        ReadError::Codec(CodecError::Io(_)) => None,
    }
}

/// Writes one frame straight to the socket (before the outbox exists), with a
/// deadline so a client that never reads cannot hold the handshake open.
async fn write_direct(writer: &mut OwnedWriteHalf, frame: ServerFrame) -> bool {
    let bytes = encode_or_explain(frame);
    matches!(
        tokio::time::timeout(HANDSHAKE_TIMEOUT, writer.write_all(&bytes)).await,
        Ok(Ok(()))
    )
}

/// Reads the Hello: within the handshake timeout, unless a newer connection
/// pushes this one out of the pending handshakes.
async fn handshake(reader: &mut FrameReader, writer: &mut OwnedWriteHalf, evicted: CancellationToken) -> Option<Hello> {
    let first = tokio::select! {
        first = tokio::time::timeout(HANDSHAKE_TIMEOUT, reader.next()) => first,
        _ = evicted.cancelled() => {
            tracing::info!(
                "closed a connection silent for {} s: {MAX_PENDING_HANDSHAKES} connections were in their handshake",
                EVICTABLE_AFTER.as_secs()
            );
            return None;
        }
    };
    let fatal = match first {
        Ok(Some(Ok((payload, _)))) => match fugue_protocol::codec::decode_hello(&payload) {
            Ok(hello) => return Some(hello),
            Err(err) => read_error_reply(&ReadError::Codec(err))?,
        },
        Ok(Some(Err(err))) => match read_error_reply(&err) {
            Some(reply) => reply,
            None => return None,
        },
        Ok(None) => return None,
        Err(_) => {
            tracing::info!("closed a connection: no Hello within {} s", HANDSHAKE_TIMEOUT.as_secs());
            ErrorReply::new(
                ErrorCode::MalformedFrame,
                format!("no Hello within {} s", HANDSHAKE_TIMEOUT.as_secs()),
            )
        }
    };
    tracing::debug!(reason = %fatal.message, "handshake refused");
    write_direct(writer, ServerFrame::Fatal(fatal)).await;
    None
}

/// How connections reach the daemon's lifecycle.
#[derive(Clone)]
pub struct Lifecycle {
    /// Cancelled when a client asks the daemon to shut down.
    pub shutdown: CancellationToken,
    /// Notified when a client asks for a live upgrade.
    pub upgrade: Arc<tokio::sync::Notify>,
    /// Bumped when every connection must close (an upgrade begins).
    pub generation: tokio::sync::watch::Receiver<u64>,
}

/// What a connection may ask.
#[derive(Debug, Clone)]
pub enum Scope {
    /// Anything: the daemon's own socket.
    Everything,
    /// Hook reports for this pane only: a sandboxed pane's hook socket
    /// ([`crate::agent::hook_socket`]).
    HooksOf(String),
}

impl Scope {
    /// Why `request` is refused on a connection of this scope, if it is.
    fn refuses(&self, request: &Request) -> Option<ErrorReply> {
        let Scope::HooksOf(pane) = self else {
            return None;
        };
        match request {
            Request::ReportHook(report) if report.pane == *pane => None,
            Request::Ping(_) => None,
            other => Some(ErrorReply::new(
                ErrorCode::PermissionDenied,
                format!(
                    "this socket takes only pane {pane}'s agent hook reports, not {}",
                    other.name()
                ),
            )),
        }
    }
}

/// Serves one connection until the client leaves or breaks the protocol, or
/// the daemon closes every connection (see [`Lifecycle`]).
pub async fn serve(
    stream: UnixStream,
    handler: Arc<Handler>,
    lifecycle: Lifecycle,
    handshakes: Arc<Handshakes>,
    scope: Scope,
) {
    let (read, mut write) = stream.into_split();
    let mut reader = FrameReader::new(read);
    let Some((slot, evicted)) = handshakes.register() else {
        tracing::info!(
            "refused a connection: {MAX_PENDING_HANDSHAKES} connections are in their handshake, none silent for {} s",
            EVICTABLE_AFTER.as_secs()
        );
        handshakes.closed.notify_waiters();
        return;
    };
    let hello = handshake(&mut reader, &mut write, evicted).await;
    handshakes.finish(slot);
    if let Some(hello) = hello {
        serve_client(hello, reader, write, handler, (lifecycle, scope)).await;
    }
    handshakes.closed.notify_waiters();
}

async fn serve_client(
    hello: Hello,
    mut reader: FrameReader,
    mut write: OwnedWriteHalf,
    handler: Arc<Handler>,
    (lifecycle, scope): (Lifecycle, Scope),
) {
    let client = hello.display_name();
    if hello.protocol_version != PROTOCOL_VERSION {
        let reply = ErrorReply::new(
            ErrorCode::ProtocolMismatch,
            format!(
                "protocol mismatch: client {client} speaks protocol {}, daemon fugued {} speaks protocol {}; restart the daemon (fugue daemon stop) or use a matching client",
                hello.protocol_version,
                env!("CARGO_PKG_VERSION"),
                PROTOCOL_VERSION
            ),
        );
        tracing::info!(%client, version = hello.protocol_version, "refused: protocol mismatch");
        write_direct(&mut write, ServerFrame::Fatal(reply)).await;
        return;
    }
    let welcome = Welcome {
        protocol_version: PROTOCOL_VERSION,
        daemon_version: env!("CARGO_PKG_VERSION").to_string(),
        pid: std::process::id(),
        revision: PROTOCOL_REVISION,
        requests: fugue_protocol::requests::TABLE.iter().map(|entry| entry.tag).collect(),
    };
    if !write_direct(&mut write, ServerFrame::Welcome(welcome)).await {
        return;
    }
    tracing::debug!(%client, revision = hello.revision, "client connected");
    reader.codec.set_max_in(MAX_CLIENT_FRAME_BYTES);
    reader.read_chunk = READ_CHUNK;

    let (client, out_rx) = Client::new(&handler.memory);
    let conn = Arc::new(client);
    handler.clients.add(&conn);
    let mut generation = lifecycle.generation.clone();
    generation.mark_unchanged();
    let write_task = tokio::spawn(write_loop(
        write,
        out_rx,
        lifecycle,
        conn.cut.clone(),
        conn.out.progress.clone(),
    ));
    tokio::select! {
        _ = read_loop(reader, handler, &conn, &scope) => {}
        _ = generation.changed() => {}
        _ = conn.cut.cancelled() => {}
    }
    // The client is gone or broke the protocol: stop its requests and attachments,
    // flush what is queued.
    conn.close();
    drop(conn);
    let _ = write_task.await;
}

async fn read_loop(mut reader: FrameReader, handler: Arc<Handler>, conn: &Arc<Client>, scope: &Scope) {
    let out = &conn.out;
    let budget = Arc::new(Semaphore::new(IN_FLIGHT_BYTES));
    let replies = Arc::new(Semaphore::new(REPLY_BYTES));
    loop {
        let frame = match reader.next().await {
            None => return,
            Some(Ok((payload, size))) => fugue_protocol::codec::decode_client_frame(&payload)
                .map(|frame| (frame, size))
                .map_err(ReadError::Codec),
            Some(Err(err)) => Err(err),
        };
        let (id, request, size) = match frame {
            Ok((IncomingFrame::Request { id, request }, size)) => (id, request, size),
            Ok((IncomingFrame::Hello, _)) => {
                let reply = ErrorReply::new(ErrorCode::MalformedFrame, "Hello sent twice");
                let _ = out.send(ServerFrame::Fatal(reply)).await;
                return;
            }
            Err(err) => {
                if let Some(reply) = read_error_reply(&err) {
                    tracing::debug!(reason = %reply.message, "closing connection");
                    let _ = out.send(ServerFrame::Fatal(reply)).await;
                }
                return;
            }
        };
        let request = match request {
            Ok(request) => *request,
            Err(unreadable) => {
                let reply = unreadable_reply(&unreadable);
                tracing::info!(id, reason = %reply.message, "request refused");
                let _ = out.send(ServerFrame::Reply { id, result: Err(reply) }).await;
                continue;
            }
        };
        tracing::debug!(id, request = request.name(), "request");
        if let Request::Cancel(fugue_protocol::requests::Cancel { id: target }) = request {
            let token = lock(&conn.in_flight).remove(&target);
            if let Some(token) = token {
                tracing::debug!(request = target, "request cancelled by the client");
                token.cancel();
            }
            let _ = out
                .send(ServerFrame::Reply {
                    id,
                    result: Ok(Response::Cancel(())),
                })
                .await;
            continue;
        }
        // Refused requests cost nothing further: answer and read on.
        if let Some(reply) = scope.refuses(&request) {
            tracing::info!(
                id,
                request = request.name(),
                "request refused: outside the connection's scope"
            );
            let _ = out.send(ServerFrame::Reply { id, result: Err(reply) }).await;
            continue;
        }
        if let Err(reply) = request.validate() {
            tracing::debug!(id, request = request.name(), reason = %reply.message, "request refused");
            let _ = out.send(ServerFrame::Reply { id, result: Err(reply) }).await;
            continue;
        }
        let reply_cost = request.reply_bytes().min(REPLY_BYTES) as u32;
        // The daemon's budget holds a reply's room from before it runs; for a
        // reply far smaller than its bound as a rule (a 20-line read may be 8
        // MiB and is a few KiB), only a little, and its real size once built.
        let charged_when_built = charged_when_built(&request);
        let admitted = match charged_when_built {
            true => (reply_cost as usize).min(SMALL_REPLY_BYTES),
            false => reply_cost as usize,
        };
        let name = request.name();
        let token = conn.cancel.child_token();
        let work = {
            let (replies, handler, conn, token) = (replies.clone(), handler.clone(), conn.clone(), token.clone());
            async move {
                // Room for the reply first; it is held until the reply is queued,
                // where the reply's own charge takes its charges over.
                let (result, reserved) = tokio::select! {
                    done = async {
                        let reserved = replies.acquire_many_owned(reply_cost).await.ok();
                        match admit(&handler, &conn, admitted).await {
                            Ok(reply_held) => {
                                let result = handler.handle(&conn, request).await;
                                let (result, built) = match result {
                                    Ok(reply) if charged_when_built => charge_built(&conn, reply, admitted),
                                    other => (other, Charge::none()),
                                };
                                (result, Some((reserved, reply_held, built)))
                            }
                            Err(refused) => (Err(refused), None),
                        }
                    } => done,
                    _ = token.cancelled() => (Err(ErrorReply::new(ErrorCode::Cancelled, "the request was cancelled")), None),
                };
                lock(&conn.in_flight).remove(&id);
                let (_room, held) = match reserved {
                    Some((room, reply_held, built)) => (room, reply_held.join(built)),
                    None => (None, Charge::none()),
                };
                if !conn.cancel.is_cancelled() {
                    let _ = conn.out.send_reply(ServerFrame::Reply { id, result }, held).await;
                }
            }
        };
        // A request costs its bytes as framed and the task that runs it (the
        // task's future holds the request and every state it goes through:
        // several KiB, more than most requests' own bytes).
        let cost =
            (size + std::mem::size_of_val(&work) + REQUEST_OVERHEAD).clamp(MIN_REQUEST_COST, IN_FLIGHT_BYTES) as u32;
        let Ok(permit) = budget.clone().acquire_many_owned(cost).await else {
            return;
        };
        // The request, and below the room for its reply, in the memory budgets:
        // when the daemon's is exhausted, the client holding the most is cut to
        // make room, and if that does not do it the request is refused.
        let request_held = match admit(&handler, conn, cost as usize).await {
            Ok(charge) => charge,
            Err(reply) => {
                tracing::debug!(id, request = name, reason = %reply.message, "request refused");
                let _ = out.send(ServerFrame::Reply { id, result: Err(reply) }).await;
                continue;
            }
        };
        lock(&conn.in_flight).insert(id, token);
        tokio::spawn(RequestTask {
            work: Box::pin(work),
            _held: (permit, request_held),
        });
    }
}

/// Whether a request's reply is charged to the daemon's budget at its real
/// size once built, rather than at its bound before it runs: the text reads
/// and lists any client makes all the time, whose bound is far above what
/// they return as a rule (200 clients pipelining 20-line reads, each bound
/// at 8 MiB, were refused at 35 MB of RSS). A text read is built at once
/// (copied under the output's lock, in the poll that charges it); a list by
/// one actor at a time, held uncharged only until its task runs again. A raw
/// read is charged before it runs, at the bytes it asks for: those it gets
/// as a rule, and a client asking for much and never reading is then cut
/// before anyone else is refused.
fn charged_when_built(request: &Request) -> bool {
    matches!(
        request,
        Request::ReadOutput(fugue_protocol::requests::ReadOutput {
            mode: fugue_protocol::ReadMode::Text { .. },
            ..
        }) | Request::ListSessions(_)
            | Request::ListPanes(_)
            | Request::Overview(_)
            | Request::PaneStatus(_)
    )
}

/// Charges a built reply's size beyond the `admitted` part to the
/// connection's budget, at once: a reply that does not fit is dropped and
/// the request refused (`limit_reached`), as one that did not fit before it
/// ran would have been.
fn charge_built(conn: &Client, reply: Response, admitted: usize) -> (Result<Response, ErrorReply>, Charge) {
    let size = encoded_size(&reply);
    if size <= admitted {
        return (Ok(reply), Charge::none());
    }
    match conn.memory.try_charge(size - admitted) {
        Ok(charge) => (Ok(reply), charge),
        Err(over) => (Err(over.into()), Charge::none()),
    }
}

/// The bytes a reply takes encoded, counted as it is encoded (nothing kept).
fn encoded_size(reply: &Response) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    match bincode::serde::encode_into_std_write(reply, &mut counter, bincode::config::standard()) {
        Ok(_) => counter.0,
        // Not encodable: it will be refused when it is written; nothing to hold.
        Err(_) => 0,
    }
}

/// A request's task: its work, and the charges for it, given back when it ends.
///
/// A plain struct and not an `async` block awaiting `work`: such a block keeps
/// `work` twice (as captured, and as the future it awaits), which doubled what
/// each request held (6.5 KB, charged 3.3; measured with heaptrack).
struct RequestTask<F> {
    work: Pin<Box<F>>,
    _held: (OwnedSemaphorePermit, Charge),
}

impl<F: Future<Output = ()>> Future for RequestTask<F> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        self.work.as_mut().poll(cx)
    }
}

/// The answer to a request this daemon cannot read; the connection goes on.
fn unreadable_reply(unreadable: &UnreadableRequest) -> ErrorReply {
    let daemon = env!("CARGO_PKG_VERSION");
    match unreadable {
        UnreadableRequest::Unknown { tag } if fugue_protocol::requests::RETIRED_TAGS.contains(tag) => ErrorReply::new(
            ErrorCode::UnsupportedRequest,
            format!(
                "fugued {daemon} (protocol {PROTOCOL_VERSION}.{PROTOCOL_REVISION}) no longer answers request tag {tag}: \
                 it was retired (see RETIRED_TAGS in fugue's protocol)"
            ),
        ),
        UnreadableRequest::Unknown { tag } => ErrorReply::new(
            ErrorCode::UnsupportedRequest,
            format!(
                "fugued {daemon} (protocol {PROTOCOL_VERSION}.{PROTOCOL_REVISION}) does not support request tag {tag}; \
                 upgrade it with `fugue daemon upgrade`"
            ),
        ),
        UnreadableRequest::Malformed { name, why, .. } => ErrorReply::new(
            ErrorCode::MalformedFrame,
            format!(
                "fugued {daemon} could not read the fields of {name}: {}",
                fugue_protocol::limits::truncate_for_display(why, LOG_FIELD_BYTES)
            ),
        ),
    }
}

/// How long a request waits for a cut client's memory to come back.
const CUT_WAIT: Duration = Duration::from_secs(1);

/// How often a request waiting for room looks again for a client to cut (one
/// may stop reading meanwhile).
const CUT_RETRY: Duration = Duration::from_millis(100);

/// Charges a request's bytes and its reply's room to the connection's budget.
/// When the daemon's budget is what is exhausted, the largest client that
/// stopped reading is cut, and the request waits (at most [`CUT_WAIT`]) for
/// memory to come back.
///
/// Room that comes back goes to clients that keep up: a connection with
/// replies it has not taken yet neither waits for room nor takes any while
/// another client waits. Else the hundreds of requests a stalled client
/// pipelined take every byte a cut frees, and the client that reads (the one
/// the cut was for) runs out its wait and is refused.
async fn admit(handler: &Handler, conn: &Client, bytes: usize) -> Result<Charge, ErrorReply> {
    let daemon = conn.memory.root();
    let behind = conn.out.queued() > 0;
    if behind && handler.clients.room_wanted() {
        return Err(daemon.refusal(bytes).into());
    }
    let deadline = Instant::now() + CUT_WAIT;
    let mut wanting = None;
    loop {
        let freed = daemon.freed();
        tokio::pin!(freed);
        freed.as_mut().enable();
        let over = match conn.memory.try_charge(bytes) {
            Ok(charge) => return Ok(charge),
            Err(over) => over,
        };
        // Replies queued meanwhile (its other requests' answers, untaken)
        // make a waiting connection one that is behind too.
        let behind = behind || conn.out.queued() > 0;
        if !over.daemon_wide || behind || Instant::now() >= deadline {
            return Err(over.into());
        }
        wanting.get_or_insert_with(|| handler.clients.want_room());
        handler.clients.cut_largest(conn);
        let wake = (Instant::now() + CUT_RETRY).min(deadline);
        let _ = tokio::time::timeout_at(wake, freed).await;
    }
}

/// Writes queued frames until the queue ends; a cut connection stops at once
/// and drops what is queued.
async fn write_loop(
    write: OwnedWriteHalf,
    frames: mpsc::UnboundedReceiver<Outgoing>,
    lifecycle: Lifecycle,
    cut: CancellationToken,
    progress: Arc<AtomicU64>,
) {
    tokio::select! {
        _ = write_frames(write, frames, lifecycle, progress) => {}
        _ = cut.cancelled() => {}
    }
}

async fn write_frames(
    write: OwnedWriteHalf,
    mut frames: mpsc::UnboundedReceiver<Outgoing>,
    lifecycle: Lifecycle,
    progress: Arc<AtomicU64>,
) {
    let mut writer = BufWriter::with_capacity(64 * 1024, write);
    while let Some(outgoing) = frames.recv().await {
        if let Err(err) = writer.write_all(&outgoing.frame).await {
            tracing::debug!(%err, "client write failed");
            return;
        }
        // The client took this frame (or the socket's buffer did).
        progress.store(fugue_protocol::now_ms(), Ordering::Release);
        // Batch: flush only when nothing else is waiting.
        if frames.is_empty() || outgoing.starts_shutdown || outgoing.starts_upgrade || outgoing.fatal {
            if let Err(err) = writer.flush().await {
                tracing::debug!(%err, "client write failed");
                return;
            }
        }
        if outgoing.starts_shutdown {
            lifecycle.shutdown.cancel();
        }
        if outgoing.starts_upgrade {
            lifecycle.upgrade.notify_one();
        }
        if outgoing.fatal {
            return;
        }
    }
    let _ = writer.flush().await;
}
