//! `fugue-web`: see the crate documentation and docs/browser.md.

use clap::Parser;
use std::net::SocketAddr;
use std::path::PathBuf;

/// Terminal tabs in the browser: fugue's HTTP API, WebSocket attach and a web page.
#[derive(Parser)]
#[command(name = "fugue-web", version, args_override_self = true)]
struct Args {
    /// Address to listen on: loopback, or any with --tls-cert and --tls-key (or
    /// reach it over an SSH tunnel).
    #[arg(long, default_value = "127.0.0.1:7681")]
    listen: SocketAddr,
    /// fugued's socket (default: the usual one).
    #[arg(long)]
    socket: Option<PathBuf>,
    /// Serve the daemon elsewhere: a hosts.toml name, [user@]host[:port] (ssh),
    /// docker://, podman://, k8s:// or exec: (as fugue --host). Projects are
    /// then directories there: --project is required and nothing is checked here.
    #[arg(long, env = "FUGUE_HOST", requires = "project")]
    host: Option<String>,
    /// Read a fixed token from this file (mode 600) instead of making a new one.
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Another name the server may be reached by (the Host header), e.g. a tunnel's.
    #[arg(long = "allow-host", value_name = "NAME")]
    allow_hosts: Vec<String>,
    /// Serve HTTPS with this certificate chain (PEM); needs --tls-key. Required
    /// to listen on anything but loopback.
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The certificate's private key (PEM).
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// The project directory the page opens (default: the current directory).
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// The session within the project the page opens.
    #[arg(long, default_value = "main")]
    session: String,
    /// Print a QR code a phone scans to pair (a one-use code, 2 minutes); this
    /// terminal asks before the device gets its credential.
    #[arg(long)]
    qr: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(clap::Subcommand)]
enum Command {
    /// The paired devices (browsers and phones with a credential of their own).
    Devices {
        #[command(subcommand)]
        action: Option<DevicesAction>,
        /// Print JSON.
        #[arg(long, global = true)]
        json: bool,
    },
}

#[derive(clap::Subcommand)]
enum DevicesAction {
    /// Revoke a device: its credential stops working and its push subscriptions go.
    Revoke { device: String },
}

fn main() -> std::process::ExitCode {
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(err) if !err.use_stderr() => {
            let _ = err.print();
            return std::process::ExitCode::SUCCESS;
        }
        Err(err) => {
            eprintln!(
                "fugue-web: {}; see fugue-web --help",
                fugue_client::usage_error_line(&err.render().to_string())
            );
            return std::process::ExitCode::from(2);
        }
    };
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("FUGUE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("fugue-web: cannot start the runtime: {err}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let host = match args.host.as_deref().map(fugue_client::remote::resolve).transpose() {
        Ok(host) => host,
        Err(err) => {
            eprintln!("fugue-web: {err}");
            return std::process::ExitCode::from(2);
        }
    };
    if host.is_some() && args.project.as_ref().is_some_and(|p| !p.is_absolute()) {
        eprintln!("fugue-web: --project must be an absolute directory on the daemon's machine with --host");
        return std::process::ExitCode::from(2);
    }
    if let Some(Command::Devices { action, json }) = args.command {
        let revoke = action.map(|DevicesAction::Revoke { device }| device);
        let devices = fugue_web::devices_command(args.socket, host, revoke, json);
        return match runtime.block_on(devices) {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(err) => {
                eprintln!("fugue-web: {err}");
                std::process::ExitCode::FAILURE
            }
        };
    }
    let remote = host.is_some();
    let config = fugue_web::Config {
        qr: args.qr,
        listen: args.listen,
        socket: args.socket,
        host,
        token_file: args.token_file,
        allow_hosts: args.allow_hosts,
        tls: args.tls_cert.zip(args.tls_key),
        project_given: args.project.is_some(),
        project: match args.project.map_or_else(std::env::current_dir, Ok) {
            // A directory there, taken as given.
            Ok(dir) if remote => dir,
            Ok(dir) => std::path::absolute(&dir).unwrap_or(dir),
            Err(err) => {
                eprintln!("fugue-web: cannot tell the current directory: {err}");
                return std::process::ExitCode::FAILURE;
            }
        },
        session: args.session,
    };
    match runtime.block_on(fugue_web::run(config)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("fugue-web: {err}");
            std::process::ExitCode::FAILURE
        }
    }
}
