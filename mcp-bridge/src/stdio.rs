//! The stdio transport, with one correction to rmcp: before the first request
//! rmcp answers `ping` whatever protocol version the ping declares, but the
//! 2026-07-28 revision removed `ping`. A ping that declares that revision (or a
//! later one) in its `_meta` is answered "method not found" here, as it is over
//! HTTP and after the first request.

use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ErrorData, GetMeta, PingRequestMethod, ProtocolVersion};
use rmcp::model::{RequestId, ServerJsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use std::future::Future;

/// `inner` without pings of the 2026-07-28 era (see the module's documentation).
pub struct NoModernPing<T>(pub T);

/// The id of `message` if it is a ping that declares 2026-07-28 or later.
fn modern_ping(message: &ClientJsonRpcMessage) -> Option<RequestId> {
    let ClientJsonRpcMessage::Request(request) = message else {
        return None;
    };
    let ClientRequest::PingRequest(_) = &request.request else {
        return None;
    };
    let version = request.request.get_meta().protocol_version()?;
    (version.as_str() >= ProtocolVersion::V_2026_07_28.as_str()).then(|| request.id.clone())
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for NoModernPing<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.0.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let message = self.0.receive().await?;
            let Some(id) = modern_ping(&message) else {
                return Some(message);
            };
            let refusal = ServerJsonRpcMessage::error(ErrorData::method_not_found::<PingRequestMethod>(), Some(id));
            if let Err(err) = self.0.send(refusal).await {
                tracing::warn!(%err, "cannot answer a ping");
                return None;
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.0.close()
    }
}

/// stdout with fugue's rule for text that leaves it (docs/output.md): every
/// unsafe character in the JSON written through it becomes a `\u` escape
/// (`views::JsonEscaper`), so an agent's terminal or log never receives one raw
/// from a pane's title, line or command. A write is taken whole once what the
/// last one left is written out: at most one write's escaped bytes are held.
pub struct SafeJsonWriter<W> {
    inner: W,
    escaper: fugue_client::views::JsonEscaper,
    /// Escaped bytes not yet taken by `inner`, from `pending[written..]`.
    pending: Vec<u8>,
    written: usize,
}

impl<W> SafeJsonWriter<W> {
    pub fn new(inner: W) -> Self {
        SafeJsonWriter {
            inner,
            escaper: Default::default(),
            pending: Vec::new(),
            written: 0,
        }
    }
}

impl<W: tokio::io::AsyncWrite + Unpin> SafeJsonWriter<W> {
    /// Writes out what is pending.
    fn poll_drain(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<std::io::Result<()>> {
        use std::task::{ready, Poll};
        while self.written < self.pending.len() {
            let wrote = ready!(std::pin::Pin::new(&mut self.inner).poll_write(cx, &self.pending[self.written..]))?;
            if wrote == 0 {
                return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
            }
            self.written += wrote;
        }
        self.pending.clear();
        self.written = 0;
        Poll::Ready(Ok(()))
    }
}

impl<W: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for SafeJsonWriter<W> {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        use std::task::{ready, Poll};
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        this.escaper.push(buf, &mut this.pending);
        // Taken: what `inner` does not take now goes out on the next call.
        if let Poll::Ready(Err(e)) = this.poll_drain(cx) {
            return Poll::Ready(Err(e));
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let this = self.get_mut();
        std::task::ready!(this.poll_drain(cx))?;
        std::pin::Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let this = self.get_mut();
        if this.written == this.pending.len() {
            this.escaper.finish(&mut this.pending);
        }
        std::task::ready!(this.poll_drain(cx))?;
        std::pin::Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::SafeJsonWriter;
    use tokio::io::AsyncWriteExt;

    /// A line of JSON written in pieces that cut a character in two leaves with
    /// its unsafe characters escaped and everything else as it was.
    #[tokio::test]
    async fn json_leaves_stdout_escaped_however_it_is_written() {
        let line =
            serde_json::to_string(&serde_json::json!({"title": "a\u{202e}b\u{200d}c 中文", "n": 1})).unwrap() + "\n";
        let (mut ours, mut theirs) = tokio::io::duplex(7);
        let reader = tokio::spawn(async move {
            let mut got = Vec::new();
            tokio::io::AsyncReadExt::read_to_end(&mut theirs, &mut got)
                .await
                .unwrap();
            got
        });
        let mut writer = SafeJsonWriter::new(&mut ours);
        for piece in line.as_bytes().chunks(3) {
            writer.write_all(piece).await.unwrap();
        }
        writer.shutdown().await.unwrap();
        drop(writer);
        drop(ours);
        let got = String::from_utf8(reader.await.unwrap()).unwrap();
        assert_eq!(got, "{\"n\":1,\"title\":\"a\\u202eb\\u200dc 中文\"}\n");
    }
}
