//! Connecting to this machine's daemon: the socket must be in a private
//! directory of ours and the daemon behind it must run as us; a daemon that is
//! not running is started first when the caller allows it.

use crate::{start_daemon, ClientError, ConnectOptions, Result};
use fugue_protocol::socket;
use std::path::Path;
use std::path::PathBuf;
use tokio::net::UnixStream;

/// Whether nothing answers at `path` (as opposed to a daemon that refused us).
fn nobody_home(err: &std::io::Error) -> bool {
    matches!(
        err.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
    )
}

/// Before connecting: the socket's directory must be ours and private (if it
/// exists at all; a missing one is created privately by auto-start).
fn check_socket_trust(path: &Path) -> Result<()> {
    let dir = socket::socket_dir(path);
    if std::fs::symlink_metadata(dir).is_err() {
        return Ok(());
    }
    socket::check_socket_dir(dir).map_err(|reason| ClientError::Untrusted {
        path: path.to_path_buf(),
        reason,
    })
}

fn describe_connect_error(err: &std::io::Error) -> String {
    if nobody_home(err) {
        "fugued is not running (start it with `fugue daemon start`)".into()
    } else {
        err.to_string()
    }
}

/// Connects to the daemon's socket on this machine (starting the daemon first if
/// allowed and needed), after checking the socket and the daemon are ours.
/// `fugue proxy` carries this stream to a client on another machine.
pub async fn connect_socket(options: &ConnectOptions) -> Result<(UnixStream, PathBuf)> {
    let path = options.socket_path();
    check_socket_trust(&path)?;
    let stream = match UnixStream::connect(&path).await {
        Ok(stream) => stream,
        Err(err) if options.autostart && nobody_home(&err) => {
            start_daemon(&path).await?;
            UnixStream::connect(&path).await.map_err(|e| ClientError::Connect {
                path: path.clone(),
                reason: e.to_string(),
                not_running: nobody_home(&e),
            })?
        }
        Err(err) => {
            return Err(ClientError::Connect {
                path,
                reason: describe_connect_error(&err),
                not_running: nobody_home(&err),
            })
        }
    };
    check_peer(&stream, &path)?;
    Ok((stream, path))
}

/// The daemon behind `stream` must run as our uid (SO_PEERCRED).
pub(crate) fn check_peer(stream: &UnixStream, socket: &Path) -> Result<()> {
    let cred = stream.peer_cred().map_err(|e| ClientError::Untrusted {
        path: socket.to_path_buf(),
        reason: format!("cannot read the server's credentials: {e}"),
    })?;
    socket::check_peer_uid(cred.uid(), "the server on this socket").map_err(|reason| ClientError::Untrusted {
        path: socket.to_path_buf(),
        reason,
    })
}
