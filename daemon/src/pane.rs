//! `PaneActor`: one terminal. It owns the PTY master, the process guard, the
//! attached clients and the size policy; three small threads do the blocking work
//! beside it:
//!
//! - the reader drains the PTY into the raw log and text view of [`PaneOutput`]
//!   under a short per-pane lock (no message per chunk, so a fast writer cannot
//!   flood a mailbox), and hands each chunk to
//! - the screen thread, through a bounded queue, which feeds the emulator and the
//!   attached clients and sends the emulator's answers to terminal queries back as
//!   input, so draining the PTY never waits on emulation;
//! - the writer feeds input from a bounded channel, so a huge paste blocks only the
//!   request that sent it;
//! - the waiter reaps the child (`waitpid` on its pid only) and records how it ended.
//!
//! Exit is published once the reader has drained the PTY (or shortly after the reap
//! if a background process keeps the PTY open), so output is complete when a waiter
//! learns of the exit.

use crate::pane_output::{PaneOutput, Subscription};
use crate::pty::{self, ProcessGuard, SpawnedPty};
use crate::session::SessionMsg;
use bytes::{Bytes, BytesMut};
use fugue_protocol::{ErrorReply, ExitStatus, PaneId, PaneSize, SizePolicy};
use portable_pty::{MasterPty, PtySize};
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};

/// Input chunks queued per pane; the sender waits when they are all in flight.
pub const INPUT_QUEUE: usize = 64;
/// Bytes per input chunk written to the PTY at once.
pub const INPUT_CHUNK: usize = 4096;
/// Longest wait for the reader to drain after the process was reaped.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(250);

/// Chunks queued between the reader and the screen thread; the reader waits when
/// the emulator is this far behind.
const SCREEN_QUEUE: usize = 64;
/// Bytes read from the PTY at once, and the block they are cut from.
const READ_CHUNK: usize = 64 * 1024;
const READ_BLOCK: usize = 256 * 1024;

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
    SetSizePolicy {
        policy: SizePolicy,
        reply: RpcReplyPort<()>,
    },
    /// From the waiter thread.
    ProcessExited(ExitStatus),
    /// From the screen thread: the PTY reached EOF and everything read is rendered.
    OutputClosed,
    /// Timer: stop waiting for the reader and publish the exit.
    PublishExit,
}

pub struct PaneArgs {
    pub id: PaneId,
    pub session: ActorRef<SessionMsg>,
    pub spawned: SpawnedPty,
    pub output: Arc<PaneOutput>,
    pub input: mpsc::Receiver<Vec<u8>>,
    /// For the reader thread's answers to terminal queries.
    pub replies: mpsc::Sender<Vec<u8>>,
    pub exit: watch::Sender<Option<ExitStatus>>,
    /// Set by the waiter thread the moment the process is reaped; outlives the actor.
    pub reaped: watch::Sender<bool>,
    pub shell: bool,
    pub kill_grace: Duration,
}

/// An attached client, as the size policy sees it.
struct Client {
    id: u64,
    read_only: bool,
    size: Option<PaneSize>,
    /// Order of its last typing or resize; higher is more recent.
    last_active: u64,
}

pub struct PaneState {
    id: PaneId,
    session: ActorRef<SessionMsg>,
    master: Box<dyn MasterPty + Send>,
    guard: ProcessGuard,
    output: Arc<PaneOutput>,
    exit: watch::Sender<Option<ExitStatus>>,
    shell: bool,
    kill_grace: Duration,
    reaped: Option<ExitStatus>,
    drained: bool,
    clients: Vec<Client>,
    policy: SizePolicy,
    activity: u64,
}

pub struct PaneActor;

impl Actor for PaneActor {
    type Msg = PaneMsg;
    type State = PaneState;
    type Arguments = PaneArgs;

    async fn pre_start(&self, myself: ActorRef<PaneMsg>, args: PaneArgs) -> Result<PaneState, ActorProcessingErr> {
        let SpawnedPty {
            master,
            reader,
            writer,
            pid,
        } = args.spawned;
        let guard = ProcessGuard::new(pid, args.kill_grace);
        let short = &args.id.simple()[..8];
        let (chunks, chunks_rx) = std::sync::mpsc::sync_channel(SCREEN_QUEUE);
        spawn_thread(format!("pty-read-{short}"), 128 * 1024, {
            let output = args.output.clone();
            move || read_loop(reader, output, chunks)
        })?;
        spawn_thread(format!("pty-screen-{short}"), 256 * 1024, {
            let output = args.output.clone();
            let pane = myself.clone();
            let replies = args.replies;
            move || screen_loop(chunks_rx, output, replies, pane)
        })?;
        spawn_thread(format!("pty-write-{short}"), 64 * 1024, move || {
            write_loop(writer, args.input)
        })?;
        spawn_thread(format!("pty-wait-{short}"), 64 * 1024, {
            let pane = myself.clone();
            let exited = guard.exited_flag();
            let reaped = args.reaped;
            move || {
                let status = pty::wait_for_exit(pid);
                exited.store(true, std::sync::atomic::Ordering::Release);
                reaped.send_replace(true);
                let _ = pane.cast(PaneMsg::ProcessExited(status));
            }
        })?;
        Ok(PaneState {
            id: args.id,
            session: args.session,
            master,
            guard,
            output: args.output,
            exit: args.exit,
            shell: args.shell,
            kill_grace: args.kill_grace,
            reaped: None,
            drained: false,
            clients: Vec::new(),
            policy: SizePolicy::Latest,
            activity: 0,
        })
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
                let _ = reply.send(state.resize(size));
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
                };
                state.clients.push(pending);
                state.apply_policy();
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
            }
            PaneMsg::ClientResize { id, size } => {
                state.activity += 1;
                if let Some(client) = state.clients.iter_mut().find(|c| c.id == id && !c.read_only) {
                    client.size = Some(size).filter(|s| s.cols > 0 && s.rows > 0);
                    client.last_active = state.activity;
                }
                state.apply_policy();
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
            PaneMsg::ProcessExited(status) => {
                state.reaped = Some(status);
                if state.drained {
                    state.publish_exit();
                } else {
                    myself.send_after(DRAIN_AFTER_EXIT, || PaneMsg::PublishExit);
                }
            }
            PaneMsg::OutputClosed => {
                state.drained = true;
                if state.reaped.is_some() {
                    state.publish_exit();
                }
            }
            PaneMsg::PublishExit => state.publish_exit(),
        }
        Ok(())
    }
}

fn spawn_thread(name: String, stack: usize, f: impl FnOnce() + Send + 'static) -> Result<(), ActorProcessingErr> {
    std::thread::Builder::new().name(name).stack_size(stack).spawn(f)?;
    Ok(())
}

fn read_loop(mut reader: Box<dyn Read + Send>, output: Arc<PaneOutput>, chunks: std::sync::mpsc::SyncSender<Bytes>) {
    // Chunks are cut from one block, so passing them on allocates once per block
    // (and not at all once their readers are done with the previous one).
    let mut block = BytesMut::new();
    loop {
        if block.len() < READ_CHUNK {
            block.clear();
            block.resize(READ_BLOCK, 0);
        }
        let n = match reader.read(&mut block[..READ_CHUNK]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let chunk = block.split_to(n).freeze();
        output.push_log(&chunk);
        if chunks.send(chunk).is_err() {
            break;
        }
    }
    // Dropping `chunks` lets the screen thread finish and report the drain.
}

fn screen_loop(
    chunks: std::sync::mpsc::Receiver<Bytes>,
    output: Arc<PaneOutput>,
    replies: mpsc::Sender<Vec<u8>>,
    pane: ActorRef<PaneMsg>,
) {
    while let Ok(chunk) = chunks.recv() {
        let answer = output.push_screen(chunk);
        // A program that asked the terminal something waits for the answer.
        // Never block for it: a full input queue drops the reply.
        if !answer.is_empty() && replies.try_send(answer).is_err() {
            tracing::debug!("input queue full; terminal query reply dropped");
        }
    }
    let _ = pane.cast(PaneMsg::OutputClosed);
}

fn write_loop(mut writer: Box<dyn Write + Send>, mut input: mpsc::Receiver<Vec<u8>>) {
    while let Some(chunk) = input.blocking_recv() {
        if writer.write_all(&chunk).and_then(|_| writer.flush()).is_err() {
            // The process is gone; what is still queued has nowhere to go.
            break;
        }
    }
}

impl PaneState {
    fn foreground_group(&self) -> Option<i32> {
        self.master.process_group_leader().filter(|pgid| *pgid > 0)
    }

    fn interrupt(&self) -> Result<(), ErrorReply> {
        if self.reaped.is_some() {
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
        pty::signal_group(group, libc::SIGINT);
        Ok(())
    }

    fn kill(&self, signal: i32) {
        if self.reaped.is_some() {
            return;
        }
        if self.shell && signal == libc::SIGTERM {
            // Interactive shells ignore SIGTERM; a hang-up is how a closing terminal
            // ends them (and they pass it on to their jobs).
            pty::signal_group(self.guard.pid() as i32, libc::SIGHUP);
        }
        self.guard.terminate(signal, self.foreground_group(), self.kill_grace);
    }

    fn resize(&self, size: PaneSize) -> Result<(), ErrorReply> {
        // Requests were validated already; this guards every other path to the emulator.
        fugue_protocol::limits::check_size(size)?;
        if self.output.size() == size {
            return Ok(());
        }
        self.master
            .resize(PtySize {
                rows: size.rows,
                cols: size.cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|e| ErrorReply::internal(format!("resize failed: {e}")))?;
        self.output.resize(size);
        let _ = self.session.cast(SessionMsg::PaneResized { id: self.id, size });
        Ok(())
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

    fn apply_policy(&self) {
        if let Some(size) = self.wanted_size() {
            if let Err(err) = self.resize(size) {
                tracing::warn!(pane = %self.id, %err, "resize by size policy failed");
            }
        }
    }

    fn publish_exit(&mut self) {
        let Some(status) = self.reaped else { return };
        if self.exit.borrow().is_some() {
            return;
        }
        // The session hears first, so a client that saw the exit also sees it in lists.
        let _ = self.session.cast(SessionMsg::PaneExited {
            id: self.id,
            status,
            at_ms: crate::config::now_ms(),
        });
        self.exit.send_replace(Some(status));
    }
}
