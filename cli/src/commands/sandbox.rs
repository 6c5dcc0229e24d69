//! `run --sandbox`: both ends of a sandboxed pane. Here the CLI checks the
//! engine and the image and makes the pane run `fugue sandbox-run`; in the
//! pane, `sandbox-run` runs the program in a container and removes the
//! container when the pane ends (`fugue_client::sandbox`).

use super::Context;
use crate::args::{invalid, RunArgs, SandboxRunArgs};
use fugue_client::protocol::SpawnSpec;
use fugue_client::remote::Engine;
use fugue_client::sandbox::{self, Sandbox};
use fugue_client::ClientError;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::ExitCode;

/// The sandbox `run` asks for, if any, checked.
pub fn requested(args: &RunArgs) -> Result<Option<Sandbox>, ClientError> {
    let Some(image) = &args.sandbox else {
        return Ok(None);
    };
    let engine = match &args.engine {
        Some(name) => Engine::parse(name).map_err(invalid)?,
        None => Engine::Docker,
    };
    let sandbox = Sandbox {
        engine,
        network: args.network.unwrap_or_default(),
        cpus: args.cpus.clone(),
        memory: args.memory.clone(),
        // What `-e` gave the pane, and nothing else of its environment.
        pass_env: args
            .env
            .iter()
            .filter_map(|pair| pair.split_once('=').map(|(name, _)| name.to_string()))
            .collect(),
        ..Sandbox::new(image.clone())
    };
    sandbox.validate().map_err(invalid)?;
    Ok(Some(sandbox))
}

/// Makes `spec` run its program in `sandbox`, once the engine answers and has
/// the image. The program runs directly in the container (a shell of this
/// machine around it would be outside the sandbox).
pub async fn wrap(ctx: &Context<'_>, sandbox: &Sandbox, mut spec: SpawnSpec) -> Result<SpawnSpec, ClientError> {
    if let Some(host) = &ctx.cli.host {
        return Err(invalid(format!(
            "--sandbox runs on this machine's container engine, but the daemon is at {host}; run fugue there for a sandbox on its engine"
        )));
    }
    sandbox::check_ready(sandbox).await?;
    let fugue = std::env::current_exe()
        .map_err(|e| invalid(format!("cannot find this fugue's own path for the sandbox's pane: {e}")))?;
    let program: Vec<String> = spec.command.take().into_iter().chain(spec.args.drain(..)).collect();
    let mut wrapped = sandbox.wrap(&fugue.display().to_string(), &program).into_iter();
    spec.command = wrapped.next();
    spec.args = wrapped.collect();
    spec.shell = false;
    Ok(spec)
}

/// Exit status when the sandbox could not be started (as `docker run`'s own).
const EXIT_SANDBOX_FAILED: u8 = 125;

/// `fugue sandbox-run`: in the pane, the container's life. Exits with the
/// program's status; 125 when the sandbox could not start.
pub async fn run(args: &SandboxRunArgs) -> ExitCode {
    match run_container(args).await {
        Ok(code) => code,
        Err(message) => {
            say(&message);
            ExitCode::from(EXIT_SANDBOX_FAILED)
        }
    }
}

async fn run_container(args: &SandboxRunArgs) -> Result<ExitCode, String> {
    use tokio::signal::unix::{signal, SignalKind};
    let pane = std::env::var("FUGUE_PANE")
        .map_err(|_| "sandbox-run runs as a fugue pane's program (FUGUE_PANE is not set)".to_string())?;
    let engine = Engine::parse(&args.engine)?;
    let sandbox = Sandbox {
        engine,
        network: args.network,
        cpus: args.cpus.clone(),
        memory: args.memory.clone(),
        pass_env: args.pass_env.clone(),
        ..Sandbox::new(args.image.clone())
    };
    sandbox.validate()?;
    let dir = std::env::current_dir().map_err(|e| format!("cannot read the pane's directory: {e}"))?;
    let (user, note) = sandbox_user(&dir);
    if let Some(note) = note {
        say(&note);
    }
    let program = engine.program();
    // A container that a wrapper of this pane killed outright left behind.
    let stale = sandbox::remove_container_of(engine, &pane)
        .await
        .map_err(|e| format!("the {program} engine: {e}"))?;
    if stale {
        say("removed this pane's container left from before");
    }
    let dir_text = dir.display().to_string();
    let mut child = tokio::process::Command::new(program)
        .args(sandbox.run_args(&pane, &dir_text, &user, &args.program))
        .spawn()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    let signals = |kind| signal(kind).map_err(|e| format!("cannot watch signals: {e}"));
    let (mut hangup, mut terminate, mut interrupt) = (
        signals(SignalKind::hangup())?,
        signals(SignalKind::terminate())?,
        signals(SignalKind::interrupt())?,
    );
    let status = loop {
        tokio::select! {
            status = child.wait() => break status.ok(),
            // The pane is going away (released, killed, fugued stopped).
            _ = hangup.recv() => break None,
            _ = terminate.recv() => break None,
            // The engine's client passes it on to the program in the container.
            _ = interrupt.recv() => {}
        }
    };
    // `--rm` removes a container that stops by itself; one whose client was
    // hung up may still run. Either way it goes now.
    if let Err(e) = sandbox::remove_container_of(engine, &pane).await {
        say(&format!("could not remove the container of pane {pane}: {e}"));
    }
    let Some(status) = status else {
        let _ = child.start_kill();
        return Ok(ExitCode::from(129));
    };
    use std::os::unix::process::ExitStatusExt;
    let code = status.code().or_else(|| status.signal().map(|s| 128 + s)).unwrap_or(1);
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}

/// A line to the pane's terminal, which may have hung up already (so never
/// `eprintln!`, which panics when it cannot write).
fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "fugue sandbox: {line}");
}

/// The user the sandbox runs as, never root: this user when it is not root;
/// else the directory's owner when that is not root; else nobody (65534), which
/// cannot write a directory of root's (said in the note).
fn sandbox_user(dir: &Path) -> (String, Option<String>) {
    let (uid, gid) = (rustix::process::geteuid().as_raw(), rustix::process::getegid().as_raw());
    if uid != 0 {
        return (format!("{uid}:{gid}"), None);
    }
    match std::fs::metadata(dir) {
        Ok(meta) if meta.uid() != 0 => (format!("{}:{}", meta.uid(), meta.gid()), None),
        _ => (
            "65534:65534".to_string(),
            Some(format!(
                "{} belongs to root; the sandbox runs as nobody (65534) and cannot write there (give the directory to a user to let the sandbox write in it)",
                dir.display()
            )),
        ),
    }
}
