//! A socket of one sandboxed pane's own, for its agent's hook reports.
//!
//! A sandbox reaches no socket of fugued's (fugue's main socket would let the
//! program in it drive every pane). So that its agent's hooks can still
//! report, the pane gets a directory of its own holding a socket that takes
//! one request only, a hook report for that pane (with the pane process's
//! token); the sandbox wrapper mounts that directory into the container and
//! nothing else of fugued's. Connections on it are served by the daemon's
//! connection code, scoped to the pane ([`crate::serve`] installs how, through
//! [`HookSockets::serve_with`], so this module needs nothing of it).

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use tokio::net::UnixStream;
use tokio_util::sync::{CancellationToken, DropGuard};

/// Serves one accepted connection, scoped to the pane named.
pub type Acceptor = Arc<dyn Fn(UnixStream, String) + Send + Sync>;

/// Opens pane hook sockets; cloned into every session.
#[derive(Clone, Default)]
pub struct HookSockets {
    acceptor: Arc<OnceLock<Acceptor>>,
}

impl HookSockets {
    /// How accepted connections are served (set once, when the daemon serves).
    pub fn serve_with(&self, acceptor: Acceptor) {
        let _ = self.acceptor.set(acceptor);
    }

    /// A new directory `dir` (its parents made as needed, only this user's)
    /// with pane `pane`'s hook socket in it, listening until the returned
    /// [`HookSocket`] drops.
    pub fn open(&self, dir: &Path, pane: &str) -> std::io::Result<HookSocket> {
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        let socket = dir.join(fugue_protocol::SANDBOX_HOOK_SOCKET);
        let _ = std::fs::remove_file(&socket);
        let listener = std::os::unix::net::UnixListener::bind(&socket)?;
        listener.set_nonblocking(true)?;
        let listener = tokio::net::UnixListener::from_std(listener)?;
        let stop = CancellationToken::new();
        let acceptor = self.acceptor.clone();
        let (pane, stopped, owned) = (pane.to_string(), stop.clone(), dir.to_path_buf());
        tokio::spawn(async move {
            let uid = rustix::process::getuid().as_raw();
            loop {
                let accepted = tokio::select! {
                    accepted = listener.accept() => accepted,
                    _ = stopped.cancelled() => return,
                };
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    Err(err) => {
                        // Out of descriptors, most likely: the main socket's
                        // accept frees some; this one only waits its turn.
                        tracing::warn!(%err, pane, "hook socket: accept failed");
                        tokio::select! {
                            _ = tokio::time::sleep(std::time::Duration::from_millis(100)) => continue,
                            _ = stopped.cancelled() => return,
                        }
                    }
                };
                // The sandbox runs as this user, or (when fugued is root) as
                // the user `fugue sandbox-run` gave the directory to; another
                // user's process has no business here.
                let owner = std::fs::metadata(&owned).map(|m| std::os::unix::fs::MetadataExt::uid(&m));
                let allowed = |peer: u32| peer == uid || owner.as_ref().is_ok_and(|o| *o == peer);
                if !stream.peer_cred().is_ok_and(|cred| allowed(cred.uid())) {
                    tracing::warn!(pane, "hook socket: refused a connection from another user");
                    continue;
                }
                match acceptor.get() {
                    Some(serve) => serve(stream, pane.clone()),
                    None => tracing::warn!(pane, "hook socket: the daemon serves no connections yet"),
                }
            }
        });
        Ok(HookSocket {
            dir: dir.to_path_buf(),
            _stop: stop.drop_guard(),
        })
    }
}

/// A pane's open hook socket: dropped, it stops listening and its directory goes.
pub struct HookSocket {
    dir: PathBuf,
    _stop: DropGuard,
}

impl HookSocket {
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for HookSocket {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl std::fmt::Debug for HookSocket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HookSocket").field("dir", &self.dir).finish()
    }
}
