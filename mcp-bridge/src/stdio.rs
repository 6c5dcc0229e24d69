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
