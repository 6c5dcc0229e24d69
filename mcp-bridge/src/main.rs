//! `fugue-mcp`: an MCP server on stdio that lets agents run, watch and steer
//! terminals through `fugued`. Only protocol messages go to stdout; logs go to
//! stderr (filter with `FUGUE_LOG`). It exits when stdin closes.

use clap::Parser;
use fugue_mcp::{bridge, tools};
use rmcp::ServiceExt;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

/// MCP bridge to fugued: terminals for agents.
#[derive(Parser, Debug)]
#[command(name = "fugue-mcp", version)]
struct Args {
    /// Socket of the daemon (default as for `fugue`).
    #[arg(long)]
    socket: Option<PathBuf>,
    /// The daemon on another machine, over ssh: a name from
    /// $XDG_CONFIG_HOME/fugue/hosts.toml or [user@]host[:port].
    #[arg(long, env = "FUGUE_HOST", value_name = "HOST")]
    host: Option<String>,
    /// Default session for tools called without one (created on first use).
    #[arg(long, env = "FUGUE_SESSION", default_value = "mcp")]
    session: String,
    /// Let fugue_spawn_agent start agents without asking a human, for clients
    /// that cannot ask (no MCP elicitation).
    #[arg(long)]
    allow_spawn: bool,
    /// Command that starts an agent kind, e.g. `claude=/usr/local/bin/claude`.
    #[arg(long = "agent-command", value_name = "NAME=CMD")]
    agent_commands: Vec<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let filter = tracing_subscriber::EnvFilter::try_from_env("FUGUE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,fugue_mcp=info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();

    // Each agent kind starts by its own name unless told otherwise.
    let mut agents: BTreeMap<String, String> = fugue_client::protocol::AgentKind::ALL
        .map(|k| (k.as_str().to_string(), k.as_str().to_string()))
        .into();
    for entry in &args.agent_commands {
        let Some((name, command)) = entry
            .split_once('=')
            .filter(|(n, c)| !n.is_empty() && !c.trim().is_empty())
        else {
            eprintln!("fugue-mcp: bad --agent-command '{entry}'; use NAME=CMD");
            return ExitCode::FAILURE;
        };
        agents.insert(name.to_string(), command.to_string());
    }
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
        agent_commands: agents,
    };

    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(err) => {
            eprintln!("fugue-mcp: cannot start: {err}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        let server = tools::FugueTools::new(bridge::Bridge::new(config));
        let service = match server.serve(rmcp::transport::stdio()).await {
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
