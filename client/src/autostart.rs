//! Starting `fugued` on first use, under a lock so two clients never start two.

use crate::{ClientError, START_TIMEOUT};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Instant;

/// The `fugued` to start: `$FUGUE_DAEMON`, else the one beside the running program,
/// else `fugued` on PATH.
pub fn daemon_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("FUGUE_DAEMON").filter(|p| !p.is_empty()) {
        return PathBuf::from(path);
    }
    companion_binary("fugued")
}

/// One of fugue's programs (`fugued`, `fugue-web`): the one installed beside the
/// running binary, else whatever `PATH` finds.
pub fn companion_binary(name: &str) -> PathBuf {
    if let Ok(exe) = std::env::current_exe() {
        let sibling = exe.with_file_name(name);
        if sibling.is_file() {
            return sibling;
        }
        // Test binaries live one level below the real ones (target/debug/deps).
        if let Some(parent) = exe.parent().and_then(Path::parent) {
            let up = parent.join(name);
            if up.is_file() {
                return up;
            }
        }
    }
    PathBuf::from(name)
}

/// Starts a detached `fugued` for `socket` unless one answers there already, and
/// returns once the socket accepts connections (at most [`START_TIMEOUT`]).
pub async fn start_daemon(socket: &Path) -> Result<(), ClientError> {
    fugue_protocol::socket::prepare_socket_dir(socket).map_err(ClientError::Start)?;
    let socket = socket.to_path_buf();
    let deadline = Instant::now() + START_TIMEOUT;
    // The start lock is held only while starting; flock blocks, so off the runtime.
    let lock = tokio::task::spawn_blocking({
        let socket = socket.clone();
        move || start_lock(&socket)
    })
    .await
    .map_err(|e| ClientError::Start(e.to_string()))??;

    let result = start_locked(&socket, deadline).await;
    drop(lock);
    result
}

fn start_lock(socket: &Path) -> Result<std::fs::File, ClientError> {
    let mut name = socket.as_os_str().to_owned();
    name.push(".start");
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(PathBuf::from(&name))
        .map_err(|e| ClientError::Start(format!("cannot open start lock: {e}")))?;
    file.lock()
        .map_err(|e| ClientError::Start(format!("cannot take start lock: {e}")))?;
    Ok(file)
}

async fn start_locked(socket: &Path, deadline: Instant) -> Result<(), ClientError> {
    // Someone may have started it while we waited for the lock.
    if tokio::net::UnixStream::connect(socket).await.is_ok() {
        return Ok(());
    }
    let binary = daemon_binary();
    let child = tokio::process::Command::new(&binary)
        .arg("--socket")
        .arg(socket)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| ClientError::Start(format!("cannot run {}: {e}", binary.display())))?;
    // fugued binds the socket, then detaches; its first process exits when ready.
    let remaining = deadline.saturating_duration_since(Instant::now());
    let output = tokio::time::timeout(remaining, child.wait_with_output())
        .await
        .map_err(|_| {
            ClientError::Start(format!(
                "{} did not start within {}s",
                binary.display(),
                START_TIMEOUT.as_secs()
            ))
        })?
        .map_err(|e| ClientError::Start(e.to_string()))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() && !stderr.contains("already running") {
        let message = stderr.trim().trim_start_matches("fugued: ");
        return Err(ClientError::Start(if message.is_empty() {
            output.status.to_string()
        } else {
            message.to_string()
        }));
    }
    // Bound before the parent exited; connecting now succeeds unless it died at once.
    while Instant::now() < deadline {
        if tokio::net::UnixStream::connect(socket).await.is_ok() {
            return Ok(());
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    Err(ClientError::Start(format!(
        "{} started but {} does not answer",
        binary.display(),
        socket.display()
    )))
}
