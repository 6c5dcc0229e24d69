//! A running pane's I/O, as tasks on the runtime with the PTY master in
//! non-blocking mode (no thread per pane): the reader drains the PTY into the raw
//! log and queues each chunk for the emulation pool ([`crate::terminal::feed`]),
//! and gives back the emulator's spare rows once the pane has gone quiet; the
//! writer feeds input from a bounded channel; a watch hears the reap.

use super::{PaneMsg, PaneProcess};
use crate::terminal::feed::PaneFeed;
use crate::terminal::pane_output::PaneOutput;
use crate::terminal::process::{ExitWatch, ProcessGuard, Reaped};
use bytes::Bytes;
use ractor::ActorRef;
use std::cell::RefCell;
use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::unix::AsyncFd;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

/// Bytes read from the PTY at once.
const READ_CHUNK: usize = 64 * 1024;
/// A pane quiet for this long gives back memory it no longer needs.
const TRIM_AFTER: Duration = Duration::from_secs(1);

/// A running pane's I/O, as [`start_io`] set it up.
pub(super) struct PaneIo {
    pub(super) master: Arc<AsyncFd<OwnedFd>>,
    pub(super) guard: ProcessGuard,
    pub(super) reaped: Reaped,
    pub(super) exit_watch: ExitWatch,
    pub(super) tasks: Vec<tokio::task::JoinHandle<()>>,
}

/// Starts the reader, the writer and the reap watch of a pane's process.
pub(super) fn start_io(
    pane: &ActorRef<PaneMsg>,
    process: PaneProcess,
    output: &Arc<PaneOutput>,
    kill_grace: Duration,
    stop: &CancellationToken,
    processed: watch::Sender<bool>,
    output_arrived: &Arc<tokio::sync::Notify>,
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
        tokio::spawn(read_loop(
            master.clone(),
            output.clone(),
            feed,
            output_arrived.clone(),
            stop.clone(),
        )),
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
    output_arrived: Arc<tokio::sync::Notify>,
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
                output_arrived.notify_one();
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
