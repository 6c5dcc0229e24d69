//! `PaneActor`: one terminal. It owns the PTY master, the process guard, the
//! attached clients and the size policy. Its I/O runs as tasks on the runtime, with
//! the master in non-blocking mode (no thread per pane):
//!
//! - the reader drains the PTY into the raw log and queues each chunk for the
//!   emulation pool ([`crate::terminal::feed`]), which feeds the text view, the screen and
//!   the attached clients; a pane that has gone quiet gives back the emulator's
//!   spare rows;
//! - the writer feeds input from a bounded channel, so a huge paste waits only
//!   for the request that sent it;
//! - the process is reaped through its pidfd ([`crate::terminal::process`]).
//!
//! The exit is published once the output is drained (or shortly after the reap if
//! a background process keeps the PTY open), so output is complete when a waiter
//! learns of the exit. [`Exited`] on the pane's exit channel is the one record of
//! that; everything that shows a pane's state reads it from there.

use crate::terminal::feed::PaneFeed;
use crate::terminal::pane_output::{PaneOutput, Subscription};
use crate::terminal::process::{self, ExitWatch, ProcessGuard, Reaped};
use crate::terminal::{input, pty};
use bytes::Bytes;
use fugue_protocol::{ErrorReply, ExitStatus, PaneId, PaneSize, SizePolicy};
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use std::cell::RefCell;
use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::unix::AsyncFd;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

/// Input chunks queued per pane; the sender waits when they are all in flight.
const INPUT_QUEUE: usize = 64;
/// Longest wait for the reader to drain after the process was reaped.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(250);
/// Bytes read from the PTY at once.
const READ_CHUNK: usize = 64 * 1024;
/// A pane quiet for this long gives back memory it no longer needs.
const TRIM_AFTER: Duration = Duration::from_secs(1);

/// How and when a pane's process ended, published once its output is drained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exited {
    pub status: ExitStatus,
    pub at_ms: u64,
}

/// Writing to one pane. Terminal encoding lives in [`crate::terminal::input`]; this
/// queues the result for the pane's writer, chunk by chunk, waiting (this caller
/// only) while the program is not reading.
#[derive(Clone)]
pub struct PaneInput {
    id: PaneId,
    queue: mpsc::Sender<Vec<u8>>,
    exit: watch::Receiver<Option<Exited>>,
    output: Arc<PaneOutput>,
}

impl PaneInput {
    /// The sender and the receiver the pane's writer drains.
    pub fn channel(
        id: PaneId,
        exit: watch::Receiver<Option<Exited>>,
        output: Arc<PaneOutput>,
    ) -> (Self, mpsc::Receiver<Vec<u8>>) {
        let (queue, rx) = mpsc::channel(INPUT_QUEUE);
        (
            Self {
                id,
                queue,
                exit,
                output,
            },
            rx,
        )
    }

    /// Writes what an attached terminal typed; returns the focus it reported, if
    /// it did (see [`input::from_terminal`]).
    pub async fn typed(&self, data: Vec<u8>) -> Result<Option<bool>, ErrorReply> {
        let (data, focus) = input::from_terminal(data, &self.output);
        if !data.is_empty() {
            self.send(&data).await?;
        }
        Ok(focus)
    }

    /// Writes `data` as typed, or as a paste (bracketed if the program asked).
    pub async fn write(&self, data: Vec<u8>, paste: bool) -> Result<(), ErrorReply> {
        let data = match paste {
            true => input::paste(data, &self.output),
            false => data,
        };
        self.send(&data).await
    }

    /// Sends key names (`Enter`, `C-c`, `Up`, ...) encoded for the terminal's mode.
    pub async fn send_keys(&self, names: &[String]) -> Result<(), ErrorReply> {
        let data = input::keys(names, &self.output).map_err(ErrorReply::invalid)?;
        self.send(&data).await
    }

    /// For the emulator's answers to terminal queries, which go in the same queue.
    pub fn replies(&self) -> mpsc::Sender<Vec<u8>> {
        self.queue.clone()
    }

    async fn send(&self, data: &[u8]) -> Result<(), ErrorReply> {
        if let Some(Exited { status, .. }) = *self.exit.borrow() {
            return Err(ErrorReply::invalid(format!(
                "pane {} has {status}; input was not written",
                self.id
            )));
        }
        for chunk in data.chunks(input::CHUNK) {
            if self.queue.send(chunk.to_vec()).await.is_err() {
                return Err(ErrorReply::invalid(format!("pane {} no longer takes input", self.id)));
            }
        }
        Ok(())
    }
}

pub enum PaneMsg {
    Interrupt(RpcReplyPort<Result<(), ErrorReply>>),
    Kill {
        signal: i32,
        reply: RpcReplyPort<()>,
    },
    /// An explicit resize (`fugue resize`).
    Resize {
        size: PaneSize,
        reply: RpcReplyPort<Result<(), ErrorReply>>,
    },
    /// A client follows the pane; replies with its subscription and first redraw.
    Attach {
        read_only: bool,
        size: Option<PaneSize>,
        reply: RpcReplyPort<(Subscription, Vec<u8>)>,
    },
    Detach {
        id: u64,
    },
    ClientResize {
        id: u64,
        size: PaneSize,
    },
    /// An attached client typed: under `latest` its size wins.
    ClientActive {
        id: u64,
    },
    /// An attached client's terminal gained or lost focus.
    ClientFocus {
        id: u64,
        focused: bool,
    },
    SetSizePolicy {
        policy: SizePolicy,
        reply: RpcReplyPort<()>,
    },
    /// Applies the size asked for last (see [`PendingSize`]).
    ApplySize,
    /// The process was reaped.
    ProcessReaped,
    /// The PTY reached its end and everything read has been processed.
    OutputClosed,
    /// Timer: stop waiting for the reader and publish the exit.
    PublishExit,
    /// Stop all I/O and let go of the process without ending it, for a live
    /// upgrade; replies with what the next daemon needs. The actor stops after.
    Freeze(RpcReplyPort<FrozenPane>),
}

/// A pane's process as [`PaneMsg::Freeze`] lets go of it.
pub struct FrozenPane {
    /// The PTY master; `None` for a pane without a process.
    pub master: Option<OwnedFd>,
    /// How the process ended, if it was reaped before the freeze.
    pub exit: Option<ExitStatus>,
    pub policy: SizePolicy,
}

/// Longest a freeze waits for the pool to take in what the reader had queued.
const FREEZE_DRAIN: Duration = Duration::from_secs(2);

pub struct PaneArgs {
    pub id: PaneId,
    pub output: Arc<PaneOutput>,
    pub exit: watch::Sender<Option<Exited>>,
    pub shell: bool,
    pub kill_grace: Duration,
    /// The process on the PTY; `None` for a pane restored without one (lost when
    /// the daemon went away), which keeps only its output.
    pub process: Option<PaneProcess>,
}

/// A running process on its PTY, as a pane actor takes it over.
pub struct PaneProcess {
    /// The PTY master (non-blocking).
    pub master: OwnedFd,
    pub pid: u32,
    pub exit_watch: ExitWatch,
    pub input: mpsc::Receiver<Vec<u8>>,
    /// For the emulator's answers to terminal queries.
    pub replies: mpsc::Sender<Vec<u8>>,
    /// Written to the PTY before any other input (a shell pane's command line).
    pub typed: Option<Vec<u8>>,
}

/// A size change waiting for [`PaneMsg::ApplySize`]. Resizes coalesce: the
/// latest request wins, and a storm of them costs one reflow, not one each.
enum PendingSize {
    /// An explicit resize to this size.
    Explicit(PaneSize),
    /// Whatever the attached clients call for under the size policy.
    Policy,
}

/// An attached client, as the size policy sees it.
struct Client {
    id: u64,
    read_only: bool,
    size: Option<PaneSize>,
    /// Order of its last typing or resize; higher is more recent.
    last_active: u64,
    /// Whether its terminal has focus, as it last reported (a client that can
    /// type is taken to have it when it attaches).
    focused: bool,
}

pub struct PaneState {
    id: PaneId,
    /// The PTY master and the process guard; `None` for a pane without a process.
    master: Option<Arc<AsyncFd<OwnedFd>>>,
    guard: Option<ProcessGuard>,
    reaped: Reaped,
    /// Stopped (without reaping) when the pane is frozen.
    exit_watch: Option<ExitWatch>,
    /// The reader and writer tasks.
    io_tasks: Vec<tokio::task::JoinHandle<()>>,
    /// Turns true once everything read has been processed after the reader stopped.
    processed: watch::Receiver<bool>,
    output: Arc<PaneOutput>,
    exit: watch::Sender<Option<Exited>>,
    shell: bool,
    kill_grace: Duration,
    drained: bool,
    clients: Vec<Client>,
    /// A size change to apply, and the explicit resizes waiting to hear of it.
    pending_size: Option<PendingSize>,
    resize_replies: Vec<RpcReplyPort<Result<(), ErrorReply>>>,
    /// The focus last reported to the program (`CSI I` or `CSI O`).
    focus_reported: Option<bool>,
    /// Where focus reports are written to the PTY (with the emulator's answers).
    focus_input: Option<mpsc::Sender<Vec<u8>>>,
    policy: SizePolicy,
    activity: u64,
    /// Stops the reader and writer when the pane goes away.
    stop: CancellationToken,
}

pub struct PaneActor;

impl Actor for PaneActor {
    type Msg = PaneMsg;
    type State = PaneState;
    type Arguments = PaneArgs;

    async fn pre_start(&self, myself: ActorRef<PaneMsg>, args: PaneArgs) -> Result<PaneState, ActorProcessingErr> {
        let stop = CancellationToken::new();
        let (processed_tx, processed) = watch::channel(false);
        let focus_input = args.process.as_ref().map(|p| p.replies.clone());
        let (master, guard, reaped, exit_watch, io_tasks) = match args.process {
            Some(process) => {
                let io = start_io(&myself, process, &args.output, args.kill_grace, &stop, processed_tx)?;
                (
                    Some(io.master),
                    Some(io.guard),
                    io.reaped,
                    Some(io.exit_watch),
                    io.tasks,
                )
            }
            None => {
                let no_process = ExitStatus {
                    code: None,
                    signal: None,
                };
                (None, None, watch::channel(Some(no_process)).1, None, Vec::new())
            }
        };
        Ok(PaneState {
            id: args.id,
            master,
            guard,
            reaped,
            exit_watch,
            io_tasks,
            processed,
            output: args.output,
            exit: args.exit,
            shell: args.shell,
            kill_grace: args.kill_grace,
            drained: false,
            clients: Vec::new(),
            pending_size: None,
            resize_replies: Vec::new(),
            focus_reported: None,
            focus_input,
            policy: SizePolicy::Latest,
            activity: 0,
            stop,
        })
    }

    async fn post_stop(&self, _: ActorRef<PaneMsg>, state: &mut PaneState) -> Result<(), ActorProcessingErr> {
        state.stop.cancel();
        Ok(())
    }

    async fn handle(
        &self,
        myself: ActorRef<PaneMsg>,
        msg: PaneMsg,
        state: &mut PaneState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            PaneMsg::Interrupt(reply) => {
                let _ = reply.send(state.interrupt());
            }
            PaneMsg::Kill { signal, reply } => {
                state.kill(signal);
                let _ = reply.send(());
            }
            PaneMsg::Resize { size, reply } => {
                if let Err(err) = fugue_protocol::limits::check_size(size) {
                    let _ = reply.send(Err(err));
                    return Ok(());
                }
                state.resize_replies.push(reply);
                state.resize_later(&myself, PendingSize::Explicit(size));
            }
            PaneMsg::ApplySize => {
                let result = match state.pending_size.take() {
                    Some(PendingSize::Explicit(size)) => state.resize(size),
                    Some(PendingSize::Policy) => {
                        state.apply_policy();
                        Ok(())
                    }
                    None => Ok(()),
                };
                for reply in state.resize_replies.drain(..) {
                    let _ = reply.send(result.clone());
                }
            }
            PaneMsg::Attach { read_only, size, reply } => {
                state.activity += 1;
                // Size first, so the first redraw is drawn at the size the client gets.
                let client_size = size.filter(|s| s.cols > 0 && s.rows > 0 && !read_only);
                let pending = Client {
                    id: 0,
                    read_only,
                    size: client_size,
                    last_active: state.activity,
                    focused: !read_only,
                };
                state.clients.push(pending);
                state.apply_policy();
                state.report_focus();
                let (subscription, redraw) = state.output.subscribe();
                if let Some(client) = state.clients.iter_mut().find(|c| c.id == 0) {
                    client.id = subscription.id;
                }
                let _ = reply.send((subscription, redraw));
            }
            PaneMsg::Detach { id } => {
                state.output.unsubscribe(id);
                state.clients.retain(|c| c.id != id);
                state.apply_policy();
                state.report_focus();
            }
            PaneMsg::ClientFocus { id, focused } => {
                if let Some(client) = state.clients.iter_mut().find(|c| c.id == id) {
                    client.focused = focused;
                }
                state.report_focus();
            }
            PaneMsg::ClientResize { id, size } => {
                state.activity += 1;
                if let Some(client) = state.clients.iter_mut().find(|c| c.id == id && !c.read_only) {
                    client.size = Some(size).filter(|s| s.cols > 0 && s.rows > 0);
                    client.last_active = state.activity;
                }
                state.resize_later(&myself, PendingSize::Policy);
            }
            PaneMsg::ClientActive { id } => {
                state.activity += 1;
                if let Some(client) = state.clients.iter_mut().find(|c| c.id == id) {
                    client.last_active = state.activity;
                }
                if state.policy == SizePolicy::Latest {
                    state.apply_policy();
                }
            }
            PaneMsg::SetSizePolicy { policy, reply } => {
                state.policy = policy;
                state.apply_policy();
                let _ = reply.send(());
            }
            PaneMsg::ProcessReaped => {
                if state.drained {
                    state.publish_exit();
                } else {
                    myself.send_after(DRAIN_AFTER_EXIT, || PaneMsg::PublishExit);
                }
            }
            PaneMsg::OutputClosed => {
                state.drained = true;
                state.publish_exit();
            }
            PaneMsg::PublishExit => state.publish_exit(),
            PaneMsg::Freeze(reply) => {
                let frozen = state.freeze().await;
                let _ = reply.send(frozen);
                myself.stop(Some("handed over".into()));
            }
        }
        Ok(())
    }
}

/// A running pane's I/O, as [`start_io`] set it up.
struct PaneIo {
    master: Arc<AsyncFd<OwnedFd>>,
    guard: ProcessGuard,
    reaped: Reaped,
    exit_watch: ExitWatch,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

/// Starts the reader, the writer and the reap watch of a pane's process.
fn start_io(
    pane: &ActorRef<PaneMsg>,
    process: PaneProcess,
    output: &Arc<PaneOutput>,
    kill_grace: Duration,
    stop: &CancellationToken,
    processed: watch::Sender<bool>,
) -> std::io::Result<PaneIo> {
    let reaped = process.exit_watch.reaped.clone();
    let guard = ProcessGuard::new(process.pid, reaped.clone(), kill_grace);
    let master = Arc::new(crate::terminal::fd::register(
        process.master,
        tokio::io::Interest::READABLE | tokio::io::Interest::WRITABLE,
    )?);
    let feed = PaneFeed::new(
        output.clone(),
        process.replies,
        Box::new({
            let pane = pane.clone();
            move || {
                processed.send_replace(true);
                let _ = pane.cast(PaneMsg::OutputClosed);
            }
        }),
    );
    let tasks = vec![
        tokio::spawn(read_loop(master.clone(), output.clone(), feed, stop.clone())),
        tokio::spawn(write_loop(master.clone(), process.input, process.typed, stop.clone())),
    ];
    tokio::spawn({
        let pane = pane.clone();
        let mut reaped = reaped.clone();
        async move {
            if reaped.wait_for(|r| r.is_some()).await.is_ok() {
                let _ = pane.cast(PaneMsg::ProcessReaped);
            }
        }
    });
    Ok(PaneIo {
        master,
        guard,
        reaped,
        exit_watch: process.exit_watch,
        tasks,
    })
}

/// Reads one chunk: `None` at the end of the PTY (EOF, or EIO once the last
/// process holding the terminal has gone). Reads go through one buffer per thread,
/// and only what was read is copied out, so a pane costs no read buffer of its own.
fn read_chunk(master: &OwnedFd) -> std::io::Result<Option<Bytes>> {
    thread_local! {
        static BUFFER: RefCell<Vec<u8>> = RefCell::new(vec![0; READ_CHUNK]);
    }
    BUFFER.with_borrow_mut(|buffer| loop {
        match rustix::io::read(master, &mut buffer[..]) {
            Ok(0) | Err(rustix::io::Errno::IO) => return Ok(None),
            Ok(n) => return Ok(Some(Bytes::copy_from_slice(&buffer[..n]))),
            Err(rustix::io::Errno::INTR) => continue,
            Err(err) => return Err(err.into()),
        }
    })
}

async fn read_loop(
    master: Arc<AsyncFd<OwnedFd>>,
    output: Arc<PaneOutput>,
    feed: Arc<PaneFeed>,
    stop: CancellationToken,
) {
    let trim = tokio::time::sleep(TRIM_AFTER);
    tokio::pin!(trim);
    let mut untrimmed = false;
    loop {
        let ready = tokio::select! {
            biased;
            _ = stop.cancelled() => break,
            ready = master.readable() => ready,
            _ = trim.as_mut(), if untrimmed => {
                // Quiet means the screen is quiet too: the pool may still be working
                // through a backlog (its emulator would grow the rows back).
                if feed.busy() {
                    trim.as_mut().reset(tokio::time::Instant::now() + TRIM_AFTER);
                    continue;
                }
                output.trim();
                crate::memory::give_back();
                untrimmed = false;
                continue;
            }
        };
        let Ok(mut ready) = ready else { break };
        match ready.try_io(|master| read_chunk(master.get_ref())) {
            Ok(Ok(Some(chunk))) => {
                let end = output.push_log(&chunk);
                feed.push(chunk, end).await;
                untrimmed = true;
                trim.as_mut().reset(tokio::time::Instant::now() + TRIM_AFTER);
            }
            Ok(Ok(None)) | Ok(Err(_)) => break,
            Err(_would_block) => continue,
        }
    }
    // Once the pool has processed what is queued, the pane hears the output closed.
    feed.close();
}

async fn write_all(master: &AsyncFd<OwnedFd>, mut data: &[u8]) -> std::io::Result<()> {
    while !data.is_empty() {
        let mut ready = master.writable().await?;
        match ready.try_io(|master| rustix::io::write(master.get_ref(), data).map_err(std::io::Error::from)) {
            Ok(Ok(n)) => data = &data[n..],
            Ok(Err(err)) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Ok(Err(err)) => return Err(err),
            Err(_would_block) => {}
        }
    }
    Ok(())
}

async fn write_loop(
    master: Arc<AsyncFd<OwnedFd>>,
    mut input: mpsc::Receiver<Vec<u8>>,
    typed: Option<Vec<u8>>,
    stop: CancellationToken,
) {
    let write = async {
        if let Some(typed) = typed {
            write_all(&master, &typed).await?;
        }
        while let Some(chunk) = input.recv().await {
            write_all(&master, &chunk).await?;
        }
        Ok::<(), std::io::Error>(())
    };
    // An error means the process is gone; what is still queued has nowhere to go.
    tokio::select! {
        _ = stop.cancelled() => {}
        _ = write => {}
    }
}

impl PaneState {
    fn foreground_group(&self) -> Option<i32> {
        pty::foreground_group(self.master.as_ref()?.get_ref())
    }

    fn has_exited(&self) -> bool {
        self.reaped.borrow().is_some()
    }

    fn interrupt(&self) -> Result<(), ErrorReply> {
        if self.has_exited() {
            return Err(ErrorReply::invalid(format!(
                "pane {} has exited; nothing to interrupt",
                self.id
            )));
        }
        let Some(group) = self.foreground_group() else {
            return Err(ErrorReply::internal(
                "the pane's terminal has no foreground process group",
            ));
        };
        process::signal_group(group, libc::SIGINT);
        Ok(())
    }

    fn kill(&self, signal: i32) {
        let Some(guard) = self.guard.as_ref().filter(|_| !self.has_exited()) else {
            return;
        };
        if self.shell && signal == libc::SIGTERM {
            // Interactive shells ignore SIGTERM; a hang-up is how a closing terminal
            // ends them (and they pass it on to their jobs).
            process::signal_group(guard.pid() as i32, libc::SIGHUP);
        }
        guard.terminate(signal, self.foreground_group(), self.kill_grace);
    }

    fn resize(&self, size: PaneSize) -> Result<(), ErrorReply> {
        // Requests were validated already; this guards every other path to the emulator.
        fugue_protocol::limits::check_size(size)?;
        if self.output.size() == size {
            return Ok(());
        }
        if let Some(master) = &self.master {
            pty::set_size(master.get_ref(), size).map_err(|e| ErrorReply::internal(format!("resize failed: {e}")))?;
        }
        self.output.resize(size);
        Ok(())
    }

    /// Notes a size change, to be applied once the messages already queued
    /// (more resizes, perhaps) are handled.
    fn resize_later(&mut self, myself: &ActorRef<PaneMsg>, size: PendingSize) {
        if self.pending_size.replace(size).is_none() {
            let _ = myself.cast(PaneMsg::ApplySize);
        }
    }

    /// The size the attached clients call for under the policy, if any has a size.
    fn wanted_size(&self) -> Option<PaneSize> {
        let sized = self
            .clients
            .iter()
            .filter(|c| !c.read_only)
            .filter_map(|c| c.size.map(|s| (c, s)));
        match self.policy {
            SizePolicy::Latest => sized.max_by_key(|(c, _)| c.last_active).map(|(_, s)| s),
            SizePolicy::Smallest => sized.map(|(_, s)| s).reduce(|a, b| PaneSize {
                cols: a.cols.min(b.cols),
                rows: a.rows.min(b.rows),
            }),
            SizePolicy::Largest => sized.map(|(_, s)| s).reduce(|a, b| PaneSize {
                cols: a.cols.max(b.cols),
                rows: a.rows.max(b.rows),
            }),
        }
    }

    /// The pane has focus while any attached terminal has it. A program that
    /// asked for focus events (mode 1004) hears of each change once, however
    /// many terminals are attached and whichever of them reported it.
    fn report_focus(&mut self) {
        let focused = self.clients.iter().any(|c| c.focused);
        if self.focus_reported == Some(focused) {
            return;
        }
        self.focus_reported = Some(focused);
        if let (Some(input), true) = (&self.focus_input, self.output.focus_events()) {
            let report = if focused { b"\x1b[I" } else { b"\x1b[O" };
            let _ = input.try_send(report.to_vec());
        }
    }

    fn apply_policy(&self) {
        if let Some(size) = self.wanted_size() {
            if let Err(err) = self.resize(size) {
                tracing::warn!(pane = %self.id, %err, "resize by size policy failed");
            }
        }
    }

    /// Stops the reap watch (without reaping), the reader and the writer; waits
    /// for the pool to take in what was read; lets go of the process and the
    /// master. Output the program writes from now on waits in the PTY.
    async fn freeze(&mut self) -> FrozenPane {
        let exit = match self.exit_watch.take() {
            Some(watch) => watch.stop().await,
            None => *self.reaped.borrow(),
        };
        self.stop.cancel();
        for task in self.io_tasks.drain(..) {
            let _ = task.await;
        }
        if self.master.is_some() {
            let processed = self.processed.wait_for(|done| *done);
            if tokio::time::timeout(FREEZE_DRAIN, processed).await.is_err() {
                tracing::warn!(pane = %self.id, "the output queue did not drain before the hand-over");
            }
        }
        if let Some(guard) = self.guard.take() {
            guard.disarm();
        }
        let master = self
            .master
            .take()
            .and_then(|master| Arc::try_unwrap(master).ok())
            .map(AsyncFd::into_inner);
        FrozenPane {
            master,
            exit,
            policy: self.policy,
        }
    }

    fn publish_exit(&mut self) {
        let Some(status) = *self.reaped.borrow() else { return };
        if self.exit.borrow().is_some() {
            return;
        }
        self.exit.send_replace(Some(Exited {
            status,
            at_ms: crate::config::now_ms(),
        }));
    }
}
