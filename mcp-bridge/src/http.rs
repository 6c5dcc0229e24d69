//! MCP over Streamable HTTP (`fugue-mcp --http ADDR`): the same tools as over
//! stdio, for agents that reach their MCP servers over the network (containers,
//! other machines, hosted platforms) and for the official conformance suite.
//!
//! rmcp's `StreamableHttpService` speaks the transport: sessions (`Mcp-Session-Id`)
//! for clients of the `initialize` era, stateless requests for 2026-07-28, SSE
//! streams that a client may resume with `Last-Event-ID`. Around it, the same
//! rules as fugue web's:
//! - `Host` must be a loopback name (or one given with `--allow-host`) with our
//!   port: anything else is DNS rebinding (403);
//! - `Origin`, when sent (browsers send it), must be our own origin (403);
//! - `Authorization: Bearer TOKEN` on every request (401), unless the server was
//!   started with `--no-auth` (loopback only: for test suites that cannot send
//!   headers, such as the conformance suite).
//!
//! Listening on anything but loopback is refused: there is no TLS here, and a
//! token sent in clear over a network is no secret.

use crate::bridge::Bridge;
use crate::tools::FugueTools;
use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The path MCP is served on.
pub const PATH: &str = "/mcp";
/// Largest request body accepted (a tool call's arguments are small; fugue_write
/// takes at most 1 MiB of text, JSON-escaped).
const MAX_BODY_BYTES: usize = 8 << 20;

/// Who may talk to the server.
#[derive(Clone, Debug)]
pub struct HttpSecurity {
    /// The bearer token every request must carry; `None`: no token (`--no-auth`).
    pub token: Option<String>,
    /// Host names besides the loopback ones that may appear in `Host`.
    pub allow_hosts: Vec<String>,
    /// MCP sessions kept at once (see [`MAX_SESSIONS`]).
    pub max_sessions: usize,
}

/// MCP sessions (the 2025-11-25 era's, each with its `Mcp-Session-Id`) kept at
/// once by default. Each holds a server object and its streams until the client
/// ends it or it is idle for 5 minutes; stateless (2026-07-28) requests hold none.
pub const MAX_SESSIONS: usize = 64;

/// Why the server cannot start.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("{0} is not a loopback address; fugue-mcp serves HTTP on loopback only (reach it over an SSH tunnel)")]
    NotLoopback(SocketAddr),
    #[error("cannot listen on {0}: {1}")]
    Bind(SocketAddr, std::io::Error),
    #[error("the HTTP server failed: {0}")]
    Serve(std::io::Error),
}

/// Binds `addr` (loopback only).
pub async fn bind(addr: SocketAddr) -> Result<tokio::net::TcpListener, HttpError> {
    if !addr.ip().is_loopback() {
        return Err(HttpError::NotLoopback(addr));
    }
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| HttpError::Bind(addr, e))
}

/// Serves MCP on `listener` until `shutdown` is cancelled.
pub async fn serve(
    listener: tokio::net::TcpListener,
    bridge: Bridge,
    security: HttpSecurity,
    shutdown: CancellationToken,
) -> Result<(), HttpError> {
    let port = listener.local_addr().map_err(HttpError::Serve)?.port();
    let router = router(bridge, security, port, shutdown.clone());
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown.cancelled_owned())
        .await
        .map_err(HttpError::Serve)
}

/// The MCP endpoint at [`PATH`] behind the token check, for a server on `port`.
pub fn router(bridge: Bridge, security: HttpSecurity, port: u16, shutdown: CancellationToken) -> axum::Router {
    let loopback = ["127.0.0.1", "localhost", "[::1]"].map(String::from);
    let names: Vec<String> = loopback
        .into_iter()
        .chain(security.allow_hosts.iter().map(|h| h.to_ascii_lowercase()))
        .collect();
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(names.iter().map(|name| format!("{name}:{port}")))
        .with_allowed_origins(names.iter().map(|name| format!("http://{name}:{port}")))
        .enforce_origin_validation()
        .with_max_request_body_bytes(MAX_BODY_BYTES)
        .with_sse_keep_alive(Some(Duration::from_secs(15)))
        .with_cancellation_token(shutdown);
    let sessions = Arc::new(LocalSessionManager::default());
    let service = StreamableHttpService::new(move || Ok(FugueTools::new(bridge.clone())), sessions.clone(), config);
    let limit = Arc::new(SessionLimit {
        sessions,
        max: security.max_sessions,
    });
    // The token is checked first (the outer layer), then the session count;
    // what leaves is escaped last.
    axum::Router::new()
        .route_service(PATH, service)
        .layer(axum::middleware::from_fn_with_state(limit, limit_sessions))
        .layer(axum::middleware::from_fn_with_state(Arc::new(security), require_token))
        .layer(axum::middleware::map_response(safe_json_body))
}

/// Results and events leave with unsafe characters as `\u` escapes
/// (docs/output.md), as they stream: JSON replies and server-sent events alike.
async fn safe_json_body(response: Response) -> Response {
    let is_json = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(fugue_client::views::is_json_content_type);
    if !is_json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    let escaped = fugue_client::views::escape_json_stream(body.into_data_stream());
    Response::from_parts(parts, axum::body::Body::from_stream(escaped))
}

struct SessionLimit {
    sessions: Arc<LocalSessionManager>,
    max: usize,
}

/// Refuses an `initialize` (503, with a one-line reason) while the most sessions
/// allowed are open. Only a POST without a session id can open one; its body is
/// read only then, when the limit is reached.
async fn limit_sessions(State(limit): State<Arc<SessionLimit>>, request: Request, next: Next) -> Response {
    if request.method() != axum::http::Method::POST || request.headers().contains_key("mcp-session-id") {
        return next.run(request).await;
    }
    let open = limit.sessions.sessions.read().await.len();
    if open < limit.max {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY_BYTES).await else {
        let message = format!("a request body over {MAX_BODY_BYTES} bytes\n");
        return (StatusCode::PAYLOAD_TOO_LARGE, message).into_response();
    };
    let initialize = serde_json::from_slice::<serde_json::Value>(&bytes)
        .is_ok_and(|message| message.get("method").and_then(|m| m.as_str()) == Some("initialize"));
    if initialize {
        tracing::warn!(open, "refused a new MCP session: the limit is reached");
        let message = format!(
            "{open} MCP sessions are open, the most this fugue-mcp keeps ({}, --max-sessions): end one \
             (DELETE {PATH} with its Mcp-Session-Id) or wait until an idle one closes (5 minutes)\n",
            limit.max
        );
        return (StatusCode::SERVICE_UNAVAILABLE, [(header::RETRY_AFTER, "60")], message).into_response();
    }
    next.run(Request::from_parts(parts, axum::body::Body::from(bytes)))
        .await
}

/// Refuses a request without the token (when one is set).
async fn require_token(State(security): State<Arc<HttpSecurity>>, request: Request, next: Next) -> Response {
    let Some(token) = &security.token else {
        return next.run(request).await;
    };
    let bearer = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.strip_prefix("Bearer "));
    match bearer {
        Some(candidate) if fugue_client::token::matches(token, candidate.trim()) => next.run(request).await,
        Some(_) => unauthorized("wrong token"),
        None => unauthorized(
            "a token is required: send Authorization: Bearer TOKEN (fugue-mcp printed it when it started, or it is in --token-file)",
        ),
    }
}

fn unauthorized(message: &str) -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, "Bearer")],
        format!("{message}\n"),
    )
        .into_response()
}
