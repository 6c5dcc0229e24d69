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

/// The sandbox `run` asks for, if any: its flags, then the profile of the
/// agent it starts, checked.
pub fn requested(args: &RunArgs) -> Result<Option<Sandbox>, ClientError> {
    let Some(image) = &args.sandbox else {
        return Ok(None);
    };
    let asked = sandbox::Asked {
        image: Some(image.clone()).filter(|i| !i.is_empty()),
        network: args.network.map(|n| n.as_str().to_string()),
        cpus: args.cpus.clone(),
        memory: args.memory.clone(),
        engine: args.engine.clone(),
    };
    let program = args.command.first().map(String::as_str);
    sandbox::resolve(asked, program).map(Some).map_err(invalid)
}

/// Makes `spec` run its program in `sandbox` (`fugue_client::sandbox::sandboxed`).
pub async fn wrap(ctx: &Context<'_>, sandbox: &Sandbox, spec: SpawnSpec) -> Result<SpawnSpec, ClientError> {
    if let Some(host) = &ctx.cli.host {
        return Err(invalid(format!(
            "--sandbox runs on this machine's container engine, but the daemon is at {host}; run fugue there for a sandbox on its engine"
        )));
    }
    sandbox::sandboxed(sandbox, spec).await
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
    // Watched before anything else: a pane released while its container is
    // still being made must not kill this wrapper before it cleans up.
    let ended = pane_ending()?;
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
    if *ended.borrow() {
        return Ok(ExitCode::from(EXIT_HUNG_UP));
    }
    let dir_text = dir.display().to_string();
    let also = sandbox::worktree_git_mounts(&dir);
    // The daemon's socket, to label the container with (fugued set it).
    let socket = std::env::var("FUGUE_SOCKET").ok();
    // The daemon's socket for this pane's agent hooks, when it made one.
    let hook_dir = std::env::var(fugue_client::protocol::HOOK_DIR_VAR)
        .ok()
        .filter(|d| Path::new(d).is_dir());
    if let Some(hook_dir) = &hook_dir {
        give_hook_dir(Path::new(hook_dir), &user);
    }
    let mut child = tokio::process::Command::new(program)
        .args(sandbox.run_args(
            (&pane, socket.as_deref()),
            (&dir_text, &also),
            (hook_dir.as_deref(), &own_limits()),
            &user,
            &args.program,
        ))
        .spawn()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    let mut ending = ended.clone();
    let status = tokio::select! {
        status = child.wait() => status.ok(),
        _ = ending.wait_for(|ended| *ended) => None,
    };
    let remove = || async {
        if let Err(e) = sandbox::remove_container_of(engine, &pane).await {
            say(&format!("could not remove the container of pane {pane}: {e}"));
        }
    };
    // `--rm` removes a container that stops by itself; one whose client was
    // hung up may still run. Either way it goes now.
    remove().await;
    let Some(status) = status else {
        // The engine's client may have been making the container when the
        // hang-up came: once it is gone, nothing more can appear, so look again.
        let _ = child.start_kill();
        let _ = child.wait().await;
        remove().await;
        return Ok(ExitCode::from(EXIT_HUNG_UP));
    };
    use std::os::unix::process::ExitStatusExt;
    let code = status.code().or_else(|| status.signal().map(|s| 128 + s)).unwrap_or(1);
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}

/// Exit status after the pane hung up (128 + SIGHUP).
const EXIT_HUNG_UP: u8 = 129;

/// Turns true when the pane goes away (a hang-up: released, killed, fugued
/// stopped; or SIGTERM). SIGINT is held too: the engine's client passes it on
/// to the program in the container, and it must not end this wrapper.
fn pane_ending() -> Result<tokio::sync::watch::Receiver<bool>, String> {
    use tokio::signal::unix::{signal, SignalKind};
    let signals = |kind| signal(kind).map_err(|e| format!("cannot watch signals: {e}"));
    let (mut hangup, mut terminate, mut interrupt) = (
        signals(SignalKind::hangup())?,
        signals(SignalKind::terminate())?,
        signals(SignalKind::interrupt())?,
    );
    let (ended, ending) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = hangup.recv() => break,
                _ = terminate.recv() => break,
                _ = interrupt.recv() => {}
            }
        }
        ended.send_replace(true);
    });
    Ok(ending)
}

/// A line to the pane's terminal, which may have hung up already (so never
/// `eprintln!`, which panics when it cannot write).
fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "fugue sandbox: {line}");
}

/// Makes the pane's hook directory the sandbox user's, when that is not this
/// user (root running the sandbox as someone else): it is this user's only
/// (mode 0700), and the agent's hooks must reach the socket in it.
fn give_hook_dir(dir: &Path, user: &str) {
    let Some((uid, gid)) = user.split_once(':') else {
        return;
    };
    let (Ok(uid), Ok(gid)) = (uid.parse::<u32>(), gid.parse::<u32>()) else {
        return;
    };
    if uid == rustix::process::geteuid().as_raw() {
        return;
    }
    let owner = Some(rustix::process::Uid::from_raw(uid));
    let group = Some(rustix::process::Gid::from_raw(gid));
    let entries = std::fs::read_dir(dir).into_iter().flatten().flatten().map(|e| e.path());
    for path in std::iter::once(dir.to_path_buf()).chain(entries) {
        if let Err(e) = rustix::fs::chown(&path, owner, group) {
            say(&format!(
                "cannot give {} to the sandbox's user: {e}; its agent's hooks are off",
                path.display()
            ));
        }
    }
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

/// This process's open-file and process limits (fugued's, inherited), for
/// the container: see [`sandbox::Limits`].
fn own_limits() -> sandbox::Limits {
    use rustix::process::{getrlimit, Resource};
    let pair = |resource| {
        let limit = getrlimit(resource);
        let hard = limit.maximum?;
        Some((limit.current.unwrap_or(hard).min(hard), hard))
    };
    sandbox::Limits {
        open_files: pair(Resource::Nofile),
        processes: pair(Resource::Nproc),
    }
}
