//! Writing to one pane: the handle requests use. Terminal encoding lives in
//! [`crate::terminal::input`]; this is the queue to the pane's writer.

use super::{Exited, INPUT_QUEUE};
use crate::terminal::input;
use crate::terminal::pane_output::PaneOutput;
use fugue_protocol::{ErrorReply, PaneId};
use std::sync::Arc;
use tokio::sync::{mpsc, watch};

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
