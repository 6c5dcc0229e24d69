//! Where the daemon's socket lives, and the rules its directory must meet.

use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

/// FNV-1a (64-bit) of a path's bytes: a name derived from a path that stays the
/// same across builds and versions (std's hasher does not), for the daemon's
/// per-socket state file and fugue-web's per-project session names.
pub fn path_hash(path: &Path) -> u64 {
    stable_hash(path.as_os_str().as_encoded_bytes())
}

/// FNV-1a (64-bit): a digest that stays the same across builds, versions and
/// processes (for names and ids derived from content, not for security).
pub fn stable_hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The daemon's socket: `explicit` (`--socket`), else `$FUGUE_SOCKET`, else in
/// the user's runtime directory. See [`locate_socket`] for why each program
/// finds the same one.
pub fn socket_path(explicit: Option<&Path>) -> PathBuf {
    locate_socket(explicit).path
}

/// A socket path and why it is the one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SocketChoice {
    pub path: PathBuf,
    pub why: String,
}

/// Where the socket is, and why. Every fugue program (the CLI, fugued,
/// fugue-mcp, fugue-web, an agent's hooks) resolves the same path from a
/// minimal environment: MCP clients start their servers with little more than
/// HOME and PATH (no `XDG_RUNTIME_DIR`), and an agent must still reach the
/// person's daemon. So: `--socket`, `$FUGUE_SOCKET`, `$XDG_RUNTIME_DIR`, then
/// `/run/user/$UID` when it exists and is ours (what `XDG_RUNTIME_DIR` is on a
/// systemd machine), and only then `/tmp/fugue-$UID`.
pub fn locate_socket(explicit: Option<&Path>) -> SocketChoice {
    let choice = |path: PathBuf, why: &str| SocketChoice { path, why: why.into() };
    if let Some(path) = explicit {
        return choice(path.to_path_buf(), "given with --socket");
    }
    if let Some(path) = non_empty_env("FUGUE_SOCKET") {
        return choice(PathBuf::from(path), "from $FUGUE_SOCKET");
    }
    if let Some(dir) = non_empty_env("XDG_RUNTIME_DIR") {
        return choice(Path::new(&dir).join("fugue").join("fugue.sock"), "in $XDG_RUNTIME_DIR");
    }
    let uid = rustix::process::getuid().as_raw();
    let run_user = PathBuf::from(format!("/run/user/{uid}"));
    if check_socket_dir(&run_user).is_ok() {
        return choice(
            run_user.join("fugue").join("fugue.sock"),
            "in /run/user/$UID ($XDG_RUNTIME_DIR is not set)",
        );
    }
    choice(
        PathBuf::from(format!("/tmp/fugue-{uid}/fugue.sock")),
        "in /tmp ($XDG_RUNTIME_DIR is not set and /run/user/$UID is not yours)",
    )
}

fn non_empty_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The lock file beside the socket that serialises daemon start-up.
pub fn lock_path(socket: &Path) -> PathBuf {
    let mut name = socket.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// Creates the socket's directory (mode 0700) if missing, then checks that it is
/// owned by us and closed to group and others. Returns a one-line reason otherwise.
pub fn prepare_socket_dir(socket: &Path) -> Result<(), String> {
    let dir = socket_dir(socket);
    // A dangling symlink "does not exist" but must still be refused, not created through.
    if std::fs::symlink_metadata(dir).is_err() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("cannot create socket directory {}: {e}", dir.display()))?;
    }
    check_socket_dir(dir)
}

/// The ownership and permission rule alone: `dir` itself (never what a symlink
/// points to) must be a directory owned by us and closed to group and others, as
/// tmux checks its socket directory. The daemon checks before it binds, the client
/// before it connects.
pub fn check_socket_dir(dir: &Path) -> Result<(), String> {
    let meta = std::fs::symlink_metadata(dir)
        .map_err(|e| format!("cannot inspect socket directory {}: {e}", dir.display()))?;
    if meta.file_type().is_symlink() {
        return Err(format!(
            "socket directory {} is a symbolic link; refusing it (use the real directory, or another with --socket)",
            dir.display()
        ));
    }
    if !meta.is_dir() {
        return Err(format!("socket directory {} is not a directory", dir.display()));
    }
    let uid = rustix::process::getuid().as_raw();
    if meta.uid() != uid {
        return Err(format!(
            "socket directory {} is owned by uid {}, not by you (uid {uid}); choose another with --socket",
            dir.display(),
            meta.uid()
        ));
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(format!(
            "socket directory {} is open to group/others (mode {mode:o}); run `chmod 700 {}` or choose another with --socket",
            dir.display(),
            dir.display()
        ));
    }
    Ok(())
}

/// The directory a socket path lives in (`.` for a bare file name).
pub fn socket_dir(socket: &Path) -> &Path {
    match socket.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// The peer rule: a daemon must run as our uid, or as root. `peer_uid` comes from SO_PEERCRED.
pub fn check_peer_uid(peer_uid: u32, what: &str) -> Result<(), String> {
    let uid = rustix::process::getuid().as_raw();
    // Root could read this process's memory anyway; trusting it gives it
    // nothing (a sandboxed agent's hooks talk to a root fugued this way).
    if peer_uid != uid && peer_uid != 0 {
        return Err(format!(
            "{what} runs as uid {peer_uid}, not as you (uid {uid}) or root; refusing to talk to it"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn explicit_path_wins() {
        assert_eq!(socket_path(Some(Path::new("/x/y.sock"))), PathBuf::from("/x/y.sock"));
    }

    #[test]
    fn creates_private_dir_and_refuses_open_one() {
        let base = std::env::temp_dir().join(format!("fugue-sockdir-{}", std::process::id()));
        let socket = base.join("a/b/fugue.sock");
        prepare_socket_dir(&socket).unwrap();
        let mode = std::fs::metadata(socket.parent().unwrap()).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700);
        std::fs::set_permissions(socket.parent().unwrap(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let err = prepare_socket_dir(&socket).unwrap_err();
        assert!(err.contains("open to group/others (mode 755)"), "{err}");
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn symlinked_dir_is_refused() {
        let base = std::env::temp_dir().join(format!("fugue-sockdir-link-{}", std::process::id()));
        let real = base.join("real");
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&real)
            .unwrap();
        let link = base.join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let err = prepare_socket_dir(&link.join("fugue.sock")).unwrap_err();
        assert!(err.contains("is a symbolic link"), "{err}");
        let dangling = base.join("dangling");
        std::os::unix::fs::symlink(base.join("nowhere"), &dangling).unwrap();
        let err = prepare_socket_dir(&dangling.join("fugue.sock")).unwrap_err();
        assert!(err.contains("is a symbolic link"), "{err}");
        assert!(!base.join("nowhere").exists());
        assert!(check_peer_uid(u32::MAX - 7, "fugued")
            .unwrap_err()
            .contains("uid 4294967288"));
        std::fs::remove_dir_all(&base).unwrap();
    }
}
