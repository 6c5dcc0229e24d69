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
//!
//! Here: the actor, its messages and state. `io`: the reader, the writer and the
//! reap watch. `input`: [`PaneInput`], the handle requests write through.

use crate::terminal::pane_output::{PaneOutput, Subscription};
use crate::terminal::process::{self, ExitWatch, ProcessGuard, Reaped};
use crate::terminal::pty;
use fugue_protocol::{ErrorReply, ExitStatus, PaneId, PaneSize, SizePolicy};
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::unix::AsyncFd;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

mod input;
mod io;

pub use input::PaneInput;
use io::start_io;

/// Input chunks queued per pane; the sender waits when they are all in flight.
const INPUT_QUEUE: usize = 64;
/// Longest wait for the reader to drain after the process was reaped.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(250);

/// How and when a pane's process ended, published once its output is drained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exited {
    pub status: ExitStatus,
    pub at_ms: u64,
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
    /// Told when output arrives: the session records changed screens then.
    pub output_arrived: Arc<tokio::sync::Notify>,
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
                let io = start_io(
                    &myself,
                    process,
                    &args.output,
                    args.kill_grace,
                    &stop,
                    processed_tx,
                    &args.output_arrived,
                )?;
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
            at_ms: fugue_protocol::now_ms(),
        }));
    }
}
