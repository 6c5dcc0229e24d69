//! The containers of sandboxed panes, when their wrapper could not remove them.
//!
//! `fugue sandbox-run` (the pane's program) makes a pane's container and
//! removes it however the pane ends, except when it is killed outright
//! (SIGKILL, the OOM killer, a crash that takes it along). Its container keeps
//! the labels it was given: the pane's id and this daemon's socket. So fugued
//! removes what such a wrapper left: a pane's container once the pane ended
//! for good (a restart's wrapper removes the old one itself), and at start
//! every container labelled with this daemon's socket whose pane does not run
//! (the crash that ended the daemon took the wrappers with it). Nothing of
//! another daemon's (another user's, another socket's) is touched.
//!
//! The engine's own CLI is run, as the wrapper does: the user's context
//! applies. Where no engine is installed nothing runs; where one does not
//! answer the attempt is logged and given up, within a deadline.

use crate::agent::detect::is_sandboxed;
use fugue_protocol::PaneId;
use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

/// The label with the pane's id (the wrapper's `PANE_LABEL`).
const PANE_LABEL: &str = "fugue.pane";
/// The label with the socket of the daemon the pane belongs to.
const SOCKET_LABEL: &str = "fugue.socket";
/// The engines a wrapper may use.
const ENGINES: [&str; 2] = ["docker", "podman"];
/// How long one engine call may take.
const ENGINE_WITHIN: Duration = Duration::from_secs(30);

/// The engine a sandboxed command runs on (its `--engine`), if it is one.
pub fn engine_of(command: &[String]) -> Option<&'static str> {
    if !is_sandboxed(command) {
        return None;
    }
    let named = command
        .iter()
        .take_while(|a| *a != "--")
        .skip_while(|a| *a != "--engine")
        .nth(1)
        .map_or("docker", String::as_str);
    ENGINES.into_iter().find(|e| *e == named)
}

/// Removes pane `pane`'s container in the background, if one is left.
pub fn remove_left_container(engine: &'static str, pane: PaneId) {
    tokio::spawn(async move {
        let name = format!("fugue-pane-{pane}");
        match engine_call(engine, &remove_args(engine, &name)).await {
            Ok(_) => tracing::debug!(%pane, engine, "removed the container an ended sandboxed pane left, if any"),
            Err(err) => tracing::info!(%pane, engine, %err, "could not remove an ended sandboxed pane's container"),
        }
    });
}

/// Removes the containers labelled with `socket` whose pane is not in `running`,
/// on every engine installed here. Returns how many it removed.
pub async fn reconcile(socket: &Path, running: &HashSet<String>) -> usize {
    let mut removed = 0;
    for engine in ENGINES.into_iter().filter(|e| installed(e)) {
        let filter = format!("label={SOCKET_LABEL}={}", socket.display());
        let format = format!("{{{{.Label \"{PANE_LABEL}\"}}}} {{{{.Names}}}}");
        let listed = match engine_call(engine, &["ps", "--all", "--filter", &filter, "--format", &format]).await {
            Ok(listed) => listed,
            Err(err) => {
                tracing::debug!(engine, %err, "no sandbox containers to reconcile");
                continue;
            }
        };
        for line in listed.lines() {
            let Some((pane, name)) = line.split_once(' ') else {
                continue;
            };
            if running.contains(pane) || !name.starts_with("fugue-pane-") {
                continue;
            }
            match engine_call(engine, &remove_args(engine, name)).await {
                Ok(_) => {
                    tracing::info!(
                        pane,
                        engine,
                        container = name,
                        "removed a sandbox whose pane no longer runs"
                    );
                    removed += 1;
                }
                Err(err) => tracing::warn!(pane, engine, %err, "cannot remove a sandbox whose pane no longer runs"),
            }
        }
    }
    removed
}

/// The engine's arguments that remove container `name` at once (podman's
/// `rm --force` would first wait 10 s for a program that ignores SIGTERM).
fn remove_args<'a>(engine: &str, name: &'a str) -> Vec<&'a str> {
    match engine {
        "podman" => vec!["rm", "--force", "--time", "0", name],
        _ => vec!["rm", "--force", name],
    }
}

/// Whether `program` is on this daemon's PATH.
fn installed(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// Runs `engine ARGS`; its output, or why it failed.
async fn engine_call(engine: &str, args: &[&str]) -> Result<String, String> {
    let run = tokio::process::Command::new(engine)
        .args(args)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(ENGINE_WITHIN, run)
        .await
        .map_err(|_| format!("{engine} did not answer within {} s", ENGINE_WITHIN.as_secs()))?
        .map_err(|e| format!("cannot run {engine}: {e}"))?;
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr);
        return Err(said.lines().next().unwrap_or("failed").to_string());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn the_engine_is_read_from_the_wrapper_only() {
        let docker = words("/usr/bin/fugue sandbox-run --image i --network none -- claude");
        assert_eq!(engine_of(&docker), Some("docker"));
        let podman = words("fugue sandbox-run --engine podman --image i -- sh");
        assert_eq!(engine_of(&podman), Some("podman"));
        // The program's own --engine is not the wrapper's.
        let program = words("fugue sandbox-run --image i -- tool --engine podman");
        assert_eq!(engine_of(&program), Some("docker"));
        assert_eq!(engine_of(&words("fugue sandbox-run --engine rkt -- sh")), None);
        assert_eq!(engine_of(&words("claude --engine docker")), None);
    }
}
