//! `fugue daemon install` / `uninstall`: fugued started at login by the user's
//! service manager. On Linux a systemd user socket unit and service: systemd
//! holds the socket from login on and starts fugued on the first connection
//! (or at login, the service being enabled too), handing it the listening
//! socket (`LISTEN_FDS`); fugued says when it is ready (`sd_notify`), and
//! `systemctl --user reload fugued` is a live upgrade. Without it, the CLI
//! starts fugued on first use. fugued is Linux-only (pidfd, /proc), so systemd
//! is the only manager written for.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Which service manager to write for (fugued runs on Linux only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Manager {
    #[default]
    Systemd,
}

/// A file to write: where, and what.
#[derive(Debug)]
pub struct UnitFile {
    pub path: PathBuf,
    pub text: String,
}

pub const SYSTEMD_SOCKET: &str = "fugued.socket";
pub const SYSTEMD_SERVICE: &str = "fugued.service";

/// The files that start `fugued` (an absolute path) on `socket` at login.
pub fn unit_files(manager: Manager, fugued: &Path, socket: &Path) -> Result<Vec<UnitFile>, String> {
    match manager {
        Manager::Systemd => {
            let dir = systemd_user_dir()?;
            Ok(vec![
                UnitFile {
                    path: dir.join(SYSTEMD_SOCKET),
                    text: systemd_socket(socket),
                },
                UnitFile {
                    path: dir.join(SYSTEMD_SERVICE),
                    text: systemd_service(fugued, socket),
                },
            ])
        }
    }
}

fn home() -> Result<PathBuf, String> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| "HOME is not set".to_string())
}

/// `$XDG_CONFIG_HOME/systemd/user`, else `~/.config/systemd/user`.
fn systemd_user_dir() -> Result<PathBuf, String> {
    let config = match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => home()?.join(".config"),
    };
    Ok(config.join("systemd/user"))
}

/// systemd quotes and escapes: a path with spaces or specifiers must survive.
fn systemd_quote(path: &Path) -> String {
    let text = path.display().to_string().replace('%', "%%");
    match text.contains([' ', '"', '\\', '\'']) {
        true => format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\"")),
        false => text,
    }
}

fn systemd_socket(socket: &Path) -> String {
    format!(
        "[Unit]
Description=fugue terminal daemon socket
Documentation=https://github.com/fugue-terminal/fugue

[Socket]
ListenStream={}
SocketMode=0600
DirectoryMode=0700

[Install]
WantedBy=sockets.target
",
        socket.display().to_string().replace('%', "%%")
    )
}

fn systemd_service(fugued: &Path, socket: &Path) -> String {
    format!(
        "[Unit]
Description=fugue terminal daemon
Documentation=https://github.com/fugue-terminal/fugue
Requires={SYSTEMD_SOCKET}
After={SYSTEMD_SOCKET}

[Service]
Type=notify
NotifyAccess=main
ExecStart={} --foreground --socket {}
# A live upgrade: the binary now on disk takes over every pane in place.
ExecReload=/bin/kill -USR2 $MAINPID
# fugued ends its panes itself (hang-up, then TERM, then KILL); systemd only
# cleans up what is left after it exits.
KillMode=mixed
TimeoutStopSec=30
Restart=on-failure

[Install]
WantedBy=default.target
Also={SYSTEMD_SOCKET}
",
        systemd_quote(fugued),
        systemd_quote(socket)
    )
}

/// The commands that enable (or disable) what [`unit_files`] wrote.
pub fn activation_commands(manager: Manager, install: bool) -> Vec<Vec<String>> {
    let own = |args: &[&str]| args.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    match (manager, install) {
        (Manager::Systemd, true) => vec![
            own(&["systemctl", "--user", "daemon-reload"]),
            own(&[
                "systemctl",
                "--user",
                "enable",
                "--now",
                SYSTEMD_SOCKET,
                SYSTEMD_SERVICE,
            ]),
        ],
        (Manager::Systemd, false) => vec![
            own(&[
                "systemctl",
                "--user",
                "disable",
                "--now",
                SYSTEMD_SERVICE,
                SYSTEMD_SOCKET,
            ]),
            own(&["systemctl", "--user", "daemon-reload"]),
        ],
    }
}

/// Runs `commands` in order; the first that fails says why.
pub fn run_commands(commands: &[Vec<String>]) -> Result<(), String> {
    for command in commands {
        let Some((program, args)) = command.split_first() else {
            continue;
        };
        let output = Command::new(program)
            .args(args)
            .output()
            .map_err(|e| format!("cannot run {program}: {e}"))?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            return Err(format!(
                "`{}` failed: {}",
                command.join(" "),
                stderr.lines().next().unwrap_or("no message").trim()
            ));
        }
    }
    Ok(())
}

/// `fugued` as an absolute path (a service manager does not search PATH).
pub fn absolute_fugued(found: PathBuf) -> Result<PathBuf, String> {
    if found.components().count() > 1 {
        return std::fs::canonicalize(&found).map_err(|e| format!("fugued at {}: {e}", found.display()));
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(&found))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| "fugued is not installed beside fugue or on PATH (scripts/install puts it there)".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_service_starts_the_given_daemon_on_the_socket_the_socket_unit_holds() {
        let socket = Path::new("/run/user/1000/fugue/fugue.sock");
        let service = systemd_service(Path::new("/opt/my tools/fugued"), socket);
        assert!(service
            .contains("ExecStart=\"/opt/my tools/fugued\" --foreground --socket /run/user/1000/fugue/fugue.sock"));
        assert!(service.contains("Type=notify"));
        assert!(systemd_socket(socket).contains("ListenStream=/run/user/1000/fugue/fugue.sock\n"));
        assert!(systemd_socket(Path::new("/tmp/100%/s")).contains("ListenStream=/tmp/100%%/s\n"));
    }
}
