//! `fugue-mcp`: an MCP server that lets agents run, watch and steer terminals
//! through `fugued`. On stdio (the default) only protocol messages go to stdout,
//! logs go to stderr (filter with `FUGUE_LOG`), and it exits when stdin closes.
//! With `--http ADDR` it serves Streamable HTTP at `/mcp` until interrupted.

use clap::Parser;
use fugue_mcp::{bridge, tools};
use rmcp::ServiceExt;
use std::path::PathBuf;
use std::process::ExitCode;

/// MCP bridge to fugued: terminals for agents.
#[derive(Parser, Debug)]
#[command(name = "fugue-mcp", version)]
struct Args {
    /// Socket of the daemon (default as for `fugue`).
    #[arg(long)]
    socket: Option<PathBuf>,
    /// The daemon elsewhere (needs fugue there): over ssh, a name from
    /// $XDG_CONFIG_HOME/fugue/hosts.toml or [user@]host[:port]; in a container,
    /// docker://CONTAINER or podman://CONTAINER; in a pod,
    /// k8s://[CONTEXT/]NAMESPACE/POD[:CONTAINER]; or exec:COMMAND, a command
    /// whose stdin and stdout reach `fugue proxy`.
    #[arg(long, env = "FUGUE_HOST", value_name = "HOST")]
    host: Option<String>,
    /// Default session for tools called without one (created on first use).
    #[arg(long, env = "FUGUE_SESSION", default_value = "mcp")]
    session: String,
    /// Let fugue_spawn_agent start agents without asking a human, for clients
    /// that cannot ask (no MCP elicitation).
    #[arg(long)]
    allow_spawn: bool,
    /// Let fugue_merge merge a worktree's branch without asking a human, for
    /// clients that cannot ask.
    #[arg(long)]
    allow_merge: bool,
    /// Let fugue_discard remove a worktree and its work without asking a human,
    /// for clients that cannot ask.
    #[arg(long)]
    allow_discard: bool,
    /// Where worktrees for terminals are made (default: $FUGUE_WORKTREE_ROOT, else
    /// the state directory's worktrees/).
    #[arg(long, value_name = "DIR")]
    worktree_root: Option<PathBuf>,
    /// Command that starts an agent kind, e.g. `claude=/usr/local/bin/claude`.
    #[arg(long = "agent-command", value_name = "NAME=CMD")]
    agent_commands: Vec<String>,
    /// Serve MCP over Streamable HTTP at http://ADDR/mcp instead of stdio
    /// (loopback only; port 0 picks a free one).
    #[arg(long, value_name = "ADDR")]
    http: Option<std::net::SocketAddr>,
    /// With --http: the bearer token, read from this file (mode 600), instead
    /// of a new one printed at start.
    #[arg(long, value_name = "FILE", requires = "http", conflicts_with = "no_auth")]
    token_file: Option<PathBuf>,
    /// With --http: accept requests without a token. Any local user can then
    /// drive your terminals; for test suites that cannot send headers.
    #[arg(long, requires = "http")]
    no_auth: bool,
    /// With --http: another name the server may be reached by (the Host
    /// header), e.g. a tunnel's.
    #[arg(long = "allow-host", value_name = "NAME", requires = "http")]
    allow_hosts: Vec<String>,
    /// With --http: MCP sessions (the 2025-11-25 era's, with an
    /// Mcp-Session-Id) kept open at once; one more `initialize` gets 503.
    #[arg(long, value_name = "N", requires = "http", default_value_t = fugue_mcp::http::MAX_SESSIONS)]
    max_sessions: usize,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(root) = &args.worktree_root {
        fugue_client::worktree::set_root(root.clone());
    }
    let filter = tracing_subscriber::EnvFilter::try_from_env("FUGUE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,fugue_mcp=info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();

    // Each agent kind starts by its own name unless told otherwise.
    let agents = match fugue_client::fanout::agent_commands(&args.agent_commands) {
        Ok(agents) => agents,
        Err(err) => {
            eprintln!("fugue-mcp: {err}");
            return ExitCode::FAILURE;
        }
    };
    let host = match args.host.as_deref().map(fugue_client::remote::resolve).transpose() {
        Ok(host) => host,
        Err(err) => {
            eprintln!("fugue-mcp: --host: {err}");
            return ExitCode::FAILURE;
        }
    };
    if host.is_none() {
        // MCP clients start servers with a stripped environment: say which
        // daemon this one reaches, and why, so a person can check it is theirs.
        let socket = fugue_client::protocol::socket::locate_socket(args.socket.as_deref());
        tracing::info!(socket = %socket.path.display(), why = %socket.why, "fugue-mcp uses this daemon");
    }
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let config = bridge::BridgeConfig {
        socket: args.socket,
        host,
        default_session: args.session,
        cwd,
        allow_spawn: args.allow_spawn,
        allow_merge: args.allow_merge,
        allow_discard: args.allow_discard,
        agent_commands: agents,
    };

    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(err) => {
            eprintln!("fugue-mcp: cannot start: {err}");
            return ExitCode::FAILURE;
        }
    };
    let bridge = bridge::Bridge::new(config);
    if let Some(addr) = args.http {
        let token = match (&args.token_file, args.no_auth) {
            (_, true) => None,
            (Some(path), false) => match fugue_client::token::read_file(path) {
                Ok(token) => Some(token),
                Err(err) => {
                    eprintln!("fugue-mcp: {err}");
                    return ExitCode::FAILURE;
                }
            },
            (None, false) => match fugue_client::token::generate() {
                Ok(token) => Some(token),
                Err(err) => {
                    eprintln!("fugue-mcp: cannot make a token: {err}");
                    return ExitCode::FAILURE;
                }
            },
        };
        let printed = args.token_file.is_none().then(|| token.clone()).flatten();
        let security = fugue_mcp::http::HttpSecurity {
            token,
            allow_hosts: args.allow_hosts,
            max_sessions: args.max_sessions,
        };
        return runtime.block_on(serve_http(addr, bridge, security, printed));
    }
    runtime.block_on(async move {
        let server = tools::FugueTools::new(bridge);
        let (stdin, stdout) = rmcp::transport::stdio();
        let stdout = fugue_mcp::stdio::SafeJsonWriter::new(stdout);
        let transport =
            fugue_mcp::stdio::NoModernPing(rmcp::transport::async_rw::AsyncRwTransport::new_server(stdin, stdout));
        let service = match server.serve(transport).await {
            Ok(service) => service,
            Err(err) => {
                tracing::error!(%err, "MCP session failed to start");
                return ExitCode::FAILURE;
            }
        };
        // Ends when the client closes stdin.
        match service.waiting().await {
            Ok(_) => ExitCode::SUCCESS,
            Err(err) => {
                tracing::error!(%err, "MCP session ended with an error");
                ExitCode::FAILURE
            }
        }
    })
}

/// Serves MCP over HTTP until SIGINT or SIGTERM. `printed`: a generated token,
/// shown once so the person can give it to their MCP client.
async fn serve_http(
    addr: std::net::SocketAddr,
    bridge: bridge::Bridge,
    security: fugue_mcp::http::HttpSecurity,
    printed: Option<String>,
) -> ExitCode {
    let listener = match fugue_mcp::http::bind(addr).await {
        Ok(listener) => listener,
        Err(err) => {
            eprintln!("fugue-mcp: {err}");
            return ExitCode::FAILURE;
        }
    };
    let bound = listener.local_addr().unwrap_or(addr);
    // The first line says where, for people and for scripts that started it on port 0.
    eprintln!("fugue-mcp: MCP at http://{bound}{}", fugue_mcp::http::PATH);
    match (&printed, &security.token) {
        (Some(token), _) => eprintln!("fugue-mcp: send Authorization: Bearer {token}"),
        (None, Some(_)) => eprintln!("fugue-mcp: send Authorization: Bearer <the token in --token-file>"),
        (None, None) => eprintln!("fugue-mcp: --no-auth: any local user can use this server"),
    }
    let shutdown = tokio_util::sync::CancellationToken::new();
    let stop = shutdown.clone();
    tokio::spawn(async move {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(term) => term,
            Err(_) => return,
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        stop.cancel();
    });
    match fugue_mcp::http::serve(listener, bridge, security, shutdown).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("fugue-mcp: {err}");
            ExitCode::FAILURE
        }
    }
}
