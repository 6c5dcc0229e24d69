//! Makes an agent CLI started in a pane report its hooks to fugue: the most
//! trusted signal of its state (see `agent::state_from_hook`). Each hook runs
//! `fugue agent-event`, which reads the hook's JSON and tells the daemon, for the
//! pane named by the `FUGUE_PANE` the agent inherited.
//!
//! Claude Code takes extra settings for one process (`--settings FILE`), so fugue
//! adds its hooks there when it starts `claude` directly (not typed into a
//! shell), unless the command already has `--settings` or the pane's
//! environment has `FUGUE_AGENT_HOOKS=0`. A sandboxed `claude` gets them too,
//! reporting through a socket of its pane's own (`wire_sandboxed`). Codex and Gemini CLI read hooks only
//! from their users' own configuration; docs/agents.md shows the lines to add.

use crate::agent::detect as agent;
use crate::terminal::pty::Launch;
use fugue_protocol::{AgentKind, HOOK_DIR_VAR, SANDBOX_HOOK_DIR};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Claude Code's hook events that say something about its state or session.
const CLAUDE_EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
    "Notification",
    "Stop",
    "StopFailure",
];

/// The variable a pane's process finds its hook token in: the secret its hook
/// reports must carry ([`crate::agent::Tracker::check_hook_token`]).
pub const HOOK_TOKEN_VAR: &str = "FUGUE_PANE_TOKEN";

/// A new secret for a process's [`HOOK_TOKEN_VAR`].
pub fn new_hook_token() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// Seconds an agent waits for one hook at most (it takes a few milliseconds).
const HOOK_TIMEOUT_SECS: u64 = 5;

/// The `fugue` binary beside this daemon's, if there is one.
fn fugue_binary() -> Option<PathBuf> {
    let path = std::env::current_exe().ok()?.with_file_name("fugue");
    path.is_file().then_some(path)
}

/// Claude Code settings (for `--settings`) that run `fugue` on each hook.
pub fn claude_settings(fugue: &Path) -> serde_json::Value {
    // Hooks are run by a POSIX shell. A path holds no NUL; were it to, the
    // hook would name no program rather than a wrong one.
    let fugue = shlex::try_quote(&fugue.display().to_string()).map_or_else(|_| "''".into(), |q| q.into_owned());
    claude_settings_running(&format!("{fugue} agent-event --agent claude"))
}

/// Claude Code settings that run the shell `command` on each hook.
fn claude_settings_running(command: &str) -> serde_json::Value {
    let handler = json!([{"hooks": [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT_SECS}]}]);
    let hooks: serde_json::Map<String, serde_json::Value> =
        CLAUDE_EVENTS.iter().map(|e| (e.to_string(), handler.clone())).collect();
    json!({ "hooks": hooks })
}

/// The settings file, written once per daemon into `dir`; `None` when there is
/// no `fugue` binary to run or the file cannot be written (the agent then runs
/// without hooks, its state read from its status file and screen).
fn claude_settings_file(dir: &Path) -> Option<&'static Path> {
    static FILE: OnceLock<Option<PathBuf>> = OnceLock::new();
    FILE.get_or_init(|| {
        let fugue = fugue_binary()?;
        let path = dir.join("claude-hooks.json");
        // Written whole and renamed, so an agent starting meanwhile never reads half.
        let partial = dir.join(format!(".claude-hooks.{}", std::process::id()));
        let text = claude_settings(&fugue).to_string();
        match std::fs::write(&partial, text).and_then(|()| std::fs::rename(&partial, &path)) {
            Ok(()) => Some(path),
            Err(err) => {
                tracing::warn!(%err, path = %path.display(), "cannot write the agent hook settings; hooks are off");
                None
            }
        }
    })
    .as_deref()
}

/// The part of `launch`'s arguments that is the agent's own: after the
/// sandbox wrapper's `--` and the program, or all of them.
fn agent_args_start(launch: &Launch) -> usize {
    if !agent::is_sandboxed(&launch.display_command) {
        return 0;
    }
    launch
        .args
        .iter()
        .position(|a| a == "--")
        .map_or(launch.args.len(), |dashes| (dashes + 2).min(launch.args.len()))
}

/// Whether fugue gives `launch` hooks: it starts Claude Code directly (not
/// typed into a shell), which has no `--settings` of its own, and the pane
/// did not opt out.
fn takes_hooks(launch: &Launch) -> bool {
    let opted_out = launch.env.iter().any(|(k, v)| k == "FUGUE_AGENT_HOOKS" && v == "0");
    if launch.typed_line.is_some() || opted_out {
        return false;
    }
    if agent::detect_kind(&launch.display_command, &[]) != Some(AgentKind::Claude) {
        return false;
    }
    !launch.args[agent_args_start(launch)..]
        .iter()
        .any(|a| a == "--settings" || a.starts_with("--settings="))
}

fn add_settings(launch: &mut Launch, settings: &Path) {
    let at = agent_args_start(launch);
    launch
        .args
        .splice(at..at, ["--settings".to_string(), settings.display().to_string()]);
}

/// Adds fugue's hooks to `launch` when it starts an agent CLI that can take
/// them per process. `dir`: where the daemon keeps its runtime files. A
/// sandboxed agent gets them from [`wire_sandboxed`].
pub fn wire(launch: &mut Launch, dir: &Path) {
    if agent::is_sandboxed(&launch.display_command) || !takes_hooks(launch) {
        return;
    }
    if let Some(settings) = claude_settings_file(dir) {
        add_settings(launch, settings);
    }
}

/// Whether `launch` is a sandboxed agent that takes fugue's hooks: it then
/// needs a hook socket of its own ([`crate::agent::hook_socket`]).
pub fn wants_sandbox_hooks(launch: &Launch) -> bool {
    agent::is_sandboxed(&launch.display_command) && takes_hooks(launch)
}

/// Gives a sandboxed agent fugue's hooks through `hook_dir`, its pane's hook
/// directory (holding the socket; mounted at [`SANDBOX_HOOK_DIR`]): settings
/// there whose hooks run the image's `fugue` (a hook where the image has none
/// reads its input and does nothing), and the wrapper told to mount it.
pub fn wire_sandboxed(launch: &mut Launch, hook_dir: &Path) -> std::io::Result<()> {
    let command =
        "if command -v fugue >/dev/null 2>&1; then exec fugue agent-event --agent claude; else cat >/dev/null; fi";
    let settings = claude_settings_running(command);
    std::fs::write(hook_dir.join("claude-hooks.json"), settings.to_string())?;
    add_settings(launch, &Path::new(SANDBOX_HOOK_DIR).join("claude-hooks.json"));
    launch
        .env
        .push((HOOK_DIR_VAR.to_string(), hook_dir.display().to_string()));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_settings_run_fugue_on_every_state_hook() {
        let settings = claude_settings(Path::new("/opt/it's here/fugue"));
        let command = settings["hooks"]["PermissionRequest"][0]["hooks"][0]["command"]
            .as_str()
            .unwrap_or_default();
        // The shell that runs the hook reads back the path as it is.
        let words = shlex::split(command).unwrap_or_default();
        assert_eq!(
            words,
            ["/opt/it's here/fugue", "agent-event", "--agent", "claude"],
            "{command}"
        );
        for event in CLAUDE_EVENTS {
            assert!(settings["hooks"][event].is_array(), "{event}");
        }
    }
}
