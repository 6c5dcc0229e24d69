//! `fugue-web`: terminal tabs in the browser. A client of fugued like the MCP
//! bridge, serving the tabs API, fugue's REST API, WebSocket attach and a page
//! (xterm.js, bundled into the binary), behind the checks in [`security`].

pub mod api;
mod assets;
pub mod devices;
pub mod error;
pub mod routes;
pub mod security;
pub mod tabs;
mod tls;
pub mod ws;

use axum::extract::FromRef;
use fugue_client::{ConnectOptions, SharedClient};
use security::Security;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// The address a connection came from (what a device that claims a pairing
/// is shown with), for plain and TLS listeners alike.
#[derive(Clone, Copy, Debug)]
pub struct Peer(pub SocketAddr);

impl axum::extract::connect_info::Connected<axum::serve::IncomingStream<'_, tls::TlsListener>> for Peer {
    fn connect_info(stream: axum::serve::IncomingStream<'_, tls::TlsListener>) -> Self {
        Peer(*stream.remote_addr())
    }
}

impl Peer {
    /// The address a request came from: axum records it as `SocketAddr` on a
    /// plain listener and as [`Peer`] on the TLS one.
    pub fn of(extensions: &axum::http::Extensions) -> Option<SocketAddr> {
        use axum::extract::ConnectInfo;
        extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0)
            .or_else(|| extensions.get::<ConnectInfo<Peer>>().map(|c| c.0 .0))
    }
}

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    pub daemon: SharedClient,
    pub security: Arc<Security>,
    pub defaults: Arc<Defaults>,
    /// The fleet's overview as last asked, and when (`GET /api/fleet`).
    pub fleet: Arc<tokio::sync::Mutex<Option<(std::time::Instant, fugue_client::views::FleetView)>>>,
    /// Phones and browsers pairing with this server now.
    pub pairings: Arc<devices::Pairings>,
    /// Devices revoked through this server: their open sockets end at once.
    pub revocations: tokio::sync::broadcast::Sender<String>,
}

/// The tab bar a page shows when its address names none.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Defaults {
    pub project: String,
    pub session: String,
    /// Whether `fugue web` was started with `--project`: without one the page
    /// opens on the overview of every session, not on a project's tabs.
    pub project_given: bool,
    /// The daemon is elsewhere (`--host`): a project is a directory there,
    /// which this machine cannot check.
    pub remote: bool,
}

impl FromRef<AppState> for Arc<Security> {
    fn from_ref(state: &AppState) -> Self {
        state.security.clone()
    }
}

pub struct Config {
    pub listen: SocketAddr,
    pub socket: Option<PathBuf>,
    /// A daemon elsewhere to serve instead of this machine's.
    pub host: Option<fugue_client::remote::Remote>,
    /// Read a fixed token from here instead of making one up.
    pub token_file: Option<PathBuf>,
    /// Names besides the loopback ones the server may be reached by.
    pub allow_hosts: Vec<String>,
    /// Certificate chain and key (PEM): serve HTTPS, which listening beyond
    /// loopback requires.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// Print a QR code to pair a phone, and ask here before it pairs.
    pub qr: bool,
    /// The page's project and session when its address names none.
    pub project: PathBuf,
    /// `--project` was given (else `project` is the current directory).
    pub project_given: bool,
    pub session: String,
}

/// Binds, prints the login URL on stdout (once), and serves until SIGINT or SIGTERM.
pub async fn run(config: Config) -> Result<(), String> {
    let tls = match &config.tls {
        Some((cert, key)) => Some(tls::load(cert, key)?),
        None => None,
    };
    if !config.listen.ip().is_loopback() && tls.is_none() {
        return Err(format!(
            "refusing to listen on {} (not a loopback address) without TLS: give --tls-cert and --tls-key, \
             or reach it over SSH: ssh -L 7681:127.0.0.1:7681 HOST, then open the URL it prints",
            config.listen
        ));
    }
    let token = match &config.token_file {
        Some(path) => fugue_client::token::read_file(path)?,
        None => fugue_client::token::generate().map_err(|e| format!("cannot make a token: {e}"))?,
    };
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", config.listen))?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    let (url_host, hosts) = names(bound.ip(), &config.allow_hosts);
    let security = Arc::new(Security::new(token, bound.port(), tls.is_some(), &hosts));

    let socket = fugue_protocol::socket::locate_socket(config.socket.as_deref()).path;
    let mut options = ConnectOptions::default().client_name("fugue-web");
    options.socket = config.socket;
    let remote = config.host.is_some();
    if let Some(host) = config.host {
        options = options.host(host);
    }
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
            project_given: config.project_given,
            remote,
        }),
        fleet: Default::default(),
        pairings: Default::default(),
        revocations: tokio::sync::broadcast::channel(16).0,
    };
    let app = routes::router()
        .merge(assets::router())
        .fallback(not_found)
        .layer(axum::middleware::map_response(safe_json_body))
        .layer(axum::middleware::from_fn_with_state(state.clone(), security::guard))
        .with_state(state.clone());

    let scheme = if tls.is_some() { "https" } else { "http" };
    // This machine's daemon links notifications to the page; one elsewhere
    // reads no file here.
    let announced = match remote {
        true => None,
        false => announce(&socket, &format!("{scheme}://{url_host}:{}", bound.port())),
    };
    println!("{}", security.login_url(&url_host));
    if config.qr {
        print_pairing(&state, &format!("{scheme}://{url_host}:{}", bound.port()))?;
        tokio::spawn(devices::confirm_at_terminal(state.clone()));
    }
    use std::io::Write;
    let _ = std::io::stdout().flush();
    tracing::info!(%bound, tls = tls.is_some(), "serving");
    let served = match tls {
        Some(tls) => {
            let listener = tls::TlsListener::new(listener, tls).map_err(|e| e.to_string())?;
            axum::serve(listener, app.into_make_service_with_connect_info::<Peer>())
                .with_graceful_shutdown(shutdown_signal())
                .await
        }
        None => {
            use axum::serve::ListenerExt;
            // Keystrokes and echoes are small writes: no Nagle delay on them.
            let listener = listener.tap_io(|tcp| {
                let _ = tcp.set_nodelay(true);
            });
            axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>())
                .with_graceful_shutdown(shutdown_signal())
                .await
        }
    };
    if let Some(path) = announced {
        withdraw(&path);
    }
    served.map_err(|e| format!("server failed: {e}"))
}

/// `fugue web devices [revoke ID] [--json]`: the paired devices, or one revoked.
pub async fn devices_command(
    socket: Option<PathBuf>,
    host: Option<fugue_client::remote::Remote>,
    revoke: Option<String>,
    json: bool,
) -> Result<(), String> {
    use fugue_client::protocol::requests as rq;
    let mut options = ConnectOptions::default().client_name("fugue-web");
    options.socket = socket;
    if let Some(host) = host {
        options = options.host(host);
    }
    let client = fugue_client::Client::connect(options)
        .await
        .map_err(|e| e.to_string())?;
    let devices = match revoke {
        Some(device) => vec![client
            .call(rq::RevokeDevice { device })
            .await
            .map_err(|e| e.to_string())?],
        None => client.call(rq::ListDevices {}).await.map_err(|e| e.to_string())?,
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&devices).map_err(|e| e.to_string())?);
        return Ok(());
    }
    if devices.is_empty() {
        println!("No paired devices: pair one with fugue web --qr, or the page's Pair a phone.");
        return Ok(());
    }
    println!("{:<10} {:<24} {:<18} {:<18} PUSH", "ID", "NAME", "PAIRED", "LAST SEEN");
    for d in &devices {
        println!(
            "{:<10} {:<24} {:<18} {:<18} {}",
            d.id,
            d.name,
            ago(d.paired_at_ms),
            if d.last_seen_ms == 0 {
                "never".into()
            } else {
                ago(d.last_seen_ms)
            },
            d.push_subscriptions
        );
    }
    Ok(())
}

/// `3m ago`: how long before now `at_ms` was.
fn ago(at_ms: u64) -> String {
    let secs = fugue_client::protocol::now_ms().saturating_sub(at_ms) / 1000;
    match secs {
        0..60 => format!("{secs}s ago"),
        60..3600 => format!("{}m ago", secs / 60),
        3600..86400 => format!("{}h ago", secs / 3600),
        _ => format!("{}d ago", secs / 86400),
    }
}

/// Prints a pairing's QR code (and its URL) for a phone to scan.
fn print_pairing(state: &AppState, origin: &str) -> Result<(), String> {
    let (_, code) = state.pairings.open(true).map_err(|e| e.message)?;
    let url = format!("{origin}/pair#{code}");
    println!("{}", devices::qr_text(&url)?);
    println!("Scan it with the phone's camera, or open {url}");
    println!(
        "The code works once, for {} s; this terminal asks before the device pairs.",
        devices::CODE_LIFE.as_secs()
    );
    Ok(())
}

/// Where a running fugue-web says it serves, for the daemon's notification
/// sinks to link to a pane: `fugue.web.json` beside the daemon's socket.
pub fn announcement_path(socket: &std::path::Path) -> std::path::PathBuf {
    socket.with_extension("web.json")
}

/// Writes this server's address (no token: a person's browser has its cookie)
/// and pid, readable by this user only; `None` when it cannot (no link then).
fn announce(socket: &std::path::Path, url: &str) -> Option<std::path::PathBuf> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let path = announcement_path(socket);
    let text = serde_json::json!({"url": url, "pid": std::process::id()}).to_string();
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&path)
        .and_then(|mut file| file.write_all(text.as_bytes()));
    match written {
        Ok(()) => Some(path),
        Err(err) => {
            tracing::warn!(path = %path.display(), %err, "cannot say where this server is; notifications carry no link");
            None
        }
    }
}

/// Removes the announcement if it is still this server's.
fn withdraw(path: &std::path::Path) {
    let ours = std::fs::read_to_string(path)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .is_some_and(|v| v["pid"].as_u64() == Some(u64::from(std::process::id())));
    if ours {
        let _ = std::fs::remove_file(path);
    }
}

/// The host to print in the URL, and the names `Host` may carry: the loopback
/// ones (always), `--allow-host`'s, and the address listened on (or, on every
/// address, this machine's name).
fn names(ip: std::net::IpAddr, allow: &[String]) -> (String, Vec<String>) {
    let literal = match ip {
        std::net::IpAddr::V6(ip) => format!("[{ip}]"),
        ip => ip.to_string(),
    };
    let mut hosts = allow.to_vec();
    if ip.is_loopback() {
        return (literal, hosts);
    }
    if !ip.is_unspecified() {
        hosts.push(literal.clone());
        return (allow.first().cloned().unwrap_or(literal), hosts);
    }
    let machine = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty());
    hosts.extend(machine.clone());
    let shown = allow.first().cloned().or(machine).unwrap_or_else(|| "localhost".into());
    (shown, hosts)
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

/// Every JSON body leaves with the characters a terminal would act on, or that
/// reorder or hide text, as `\u` escapes (`views::escape_json_stream`, as it
/// streams), whichever handler made it (docs/output.md).
async fn safe_json_body(response: axum::response::Response) -> axum::response::Response {
    use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
    let is_json = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(fugue_client::views::is_json_content_type);
    if !is_json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    parts.headers.remove(CONTENT_LENGTH);
    let escaped = fugue_client::views::escape_json_stream(body.into_data_stream());
    axum::response::Response::from_parts(parts, axum::body::Body::from_stream(escaped))
}
