//! `fugue-web`: terminal tabs in the browser. A client of fugued like the MCP
//! bridge, serving the tabs API, fugue's REST API, WebSocket attach and a page
//! (xterm.js, bundled into the binary), behind the checks in [`security`].

pub mod api;
mod assets;
pub mod error;
pub mod routes;
pub mod security;
pub mod tabs;
pub mod ws;

use axum::extract::FromRef;
use fugue_client::{ConnectOptions, SharedClient};
use security::Security;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    pub daemon: SharedClient,
    pub security: Arc<Security>,
    pub defaults: Arc<Defaults>,
}

/// The tab bar a page shows when its address names none.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Defaults {
    pub project: String,
    pub session: String,
}

impl FromRef<AppState> for Arc<Security> {
    fn from_ref(state: &AppState) -> Self {
        state.security.clone()
    }
}

pub struct Config {
    pub listen: SocketAddr,
    pub socket: Option<PathBuf>,
    /// Read a fixed token from here instead of making one up.
    pub token_file: Option<PathBuf>,
    /// Names besides the loopback ones the server may be reached by.
    pub allow_hosts: Vec<String>,
    /// The page's project and session when its address names none.
    pub project: PathBuf,
    pub session: String,
}

/// Binds, prints the login URL on stdout (once), and serves until SIGINT or SIGTERM.
pub async fn run(config: Config) -> Result<(), String> {
    if !config.listen.ip().is_loopback() {
        return Err(format!(
            "refusing to listen on {} (not a loopback address) without TLS; reach it over SSH instead: \
             ssh -L 7681:127.0.0.1:7681 HOST, then open the URL it prints",
            config.listen
        ));
    }
    let token = match &config.token_file {
        Some(path) => security::read_token_file(path)?,
        None => security::generate_token().map_err(|e| format!("cannot make a token: {e}"))?,
    };
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", config.listen))?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    let security = Arc::new(Security::new(token, bound.port(), false, &config.allow_hosts));

    let mut options = ConnectOptions::default().client_name("fugue-web");
    options.socket = config.socket;
    let daemon = SharedClient::new(options);
    // Starts fugued if it is not running, and says so now rather than on the
    // first request if it cannot be reached.
    daemon.get().await.map_err(|e| format!("cannot reach fugued: {e}"))?;

    let state = AppState {
        daemon,
        security: security.clone(),
        defaults: Arc::new(Defaults {
            project: config.project.display().to_string(),
            session: config.session,
        }),
    };
    let app = routes::router()
        .merge(assets::router())
        .fallback(not_found)
        .layer(axum::middleware::from_fn_with_state(security.clone(), security::guard))
        .with_state(state);

    let host = match bound.ip() {
        std::net::IpAddr::V6(ip) => format!("[{ip}]"),
        ip => ip.to_string(),
    };
    println!("{}", security.login_url(&host));
    use std::io::Write;
    let _ = std::io::stdout().flush();
    tracing::info!(%bound, "serving");
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown_signal())
        .await
        .map_err(|e| format!("server failed: {e}"))
}

async fn not_found(uri: axum::http::Uri) -> error::ApiError {
    error::ApiError::new(
        axum::http::StatusCode::NOT_FOUND,
        "not_found",
        format!("no such route: {}", uri.path()),
    )
}

async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut int)) = (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}
