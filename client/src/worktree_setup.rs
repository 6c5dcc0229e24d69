//! Setup and teardown commands for new worktrees (copy `.env`, `npm ci`,
//! stop a compose stack), from two places:
//!
//! - the user's config, `$XDG_CONFIG_HOME/fugue/config.toml`, keyed by
//!   repository path (`"*"`: every repository):
//!
//!   ```toml
//!   [[worktree]]
//!   repo = "~/src/app"
//!   setup = ["cp \"$FUGUE_WORKTREE_REPO/.env\" .env", "npm ci"]
//!   teardown = ["docker compose down"]
//!   setup_timeout_s = 600   # the longest one setup command may run
//!   ```
//!
//! - the repository's own `.fugue/worktree.toml` (`setup = [...]`,
//!   `teardown = [...]`), only once the user trusted that file's exact text
//!   with `fugue worktree trust` (as direnv's `allow`): the commands run code,
//!   and a clone must not run a stranger's. A changed file needs trusting again.
//!
//! Setup runs in the new pane before its program (its output is the pane's, a
//! failure or a hang past [`SETUP_TIMEOUT_S`] ends the pane with a line saying
//! which command and why, and the program does not start). Teardown runs here,
//! in the worktree, before it is removed; a failure is reported and the removal
//! goes on, since the person asked for it. Both see `FUGUE_WORKTREE`,
//! `FUGUE_WORKTREE_REPO`, `FUGUE_WORKTREE_BRANCH` and `FUGUE_WORKTREE_NAME`.

use crate::worktree::{WorktreeError, WorktreeRecord};
use fugue_protocol::{EnvVar, SpawnSpec};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The repository's own file of commands, relative to its top level.
pub const REPO_FILE: &str = ".fugue/worktree.toml";
/// Longest one setup command may run in the pane, unless the config says.
pub const SETUP_TIMEOUT_S: u64 = 600;
/// Longest one teardown command may run.
const TEARDOWN_TIMEOUT: Duration = Duration::from_secs(300);
/// Largest config or repository file read.
const MAX_FILE_BYTES: u64 = 64 * 1024;
/// Most commands of each kind.
const MAX_COMMANDS: usize = 32;
/// Bytes of a failed teardown's output quoted.
const MAX_QUOTED_OUTPUT: usize = 400;

/// The commands for one repository, and what the person should know (an
/// untrusted or changed repository file).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Commands {
    pub setup: Vec<String>,
    pub teardown: Vec<String>,
    /// Seconds one setup command may run (the least any matching entry gives).
    pub setup_timeout_s: Option<u64>,
    pub notes: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
struct UserConfig {
    #[serde(default)]
    worktree: Vec<UserEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UserEntry {
    repo: String,
    #[serde(default)]
    setup: Vec<String>,
    #[serde(default)]
    teardown: Vec<String>,
    setup_timeout_s: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RepoFile {
    #[serde(default)]
    setup: Vec<String>,
    #[serde(default)]
    teardown: Vec<String>,
}

/// `$XDG_CONFIG_HOME/fugue/config.toml` (fugued reads its other tables).
pub fn config_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))?;
    Some(base.join("fugue/config.toml"))
}

/// Where trusted copies of repositories' files are kept: the user's state
/// directory, whatever root worktrees are made under.
fn trust_dir() -> Result<PathBuf, WorktreeError> {
    let from_env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let state = from_env("XDG_STATE_HOME")
        .or_else(|| from_env("HOME").map(|home| home.join(".local/state")))
        .ok_or_else(|| WorktreeError::Invalid("no HOME or XDG_STATE_HOME to keep trust in".into()))?;
    Ok(state.join("fugue/trusted"))
}

/// The commands for the repository whose main checkout is `repo`.
pub fn commands_for(repo: &Path) -> Result<Commands, WorktreeError> {
    let mut commands = Commands::default();
    if let Some(path) = config_path() {
        commands_from_config(&mut commands, &path, repo)?;
    }
    let file = repo.join(REPO_FILE);
    let Some(text) = read_small(&file)? else {
        return Ok(commands);
    };
    match trusted_copy(repo)? {
        Some(copy) if copy == text => {
            let own = parse_repo_file(&text, &file)?;
            commands.setup.extend(own.setup);
            commands.teardown.extend(own.teardown);
        }
        Some(_) => commands.notes.push(format!(
            "{} changed since you trusted it: its commands did not run; `fugue worktree trust {}` after reading it",
            file.display(),
            repo.display()
        )),
        None => commands.notes.push(format!(
            "{} names worktree commands, which run only once you trust it: `fugue worktree trust {}` after reading it",
            file.display(),
            repo.display()
        )),
    }
    check_counts(&commands)?;
    Ok(commands)
}

fn commands_from_config(commands: &mut Commands, path: &Path, repo: &Path) -> Result<(), WorktreeError> {
    let Some(text) = read_small(path)? else { return Ok(()) };
    let config: UserConfig = toml::from_str(&text).map_err(|e| {
        WorktreeError::Invalid(format!(
            "{}: [[worktree]]: {}",
            path.display(),
            e.message().lines().next().unwrap_or("cannot parse")
        ))
    })?;
    for entry in config.worktree {
        if entry.repo == "*" || same_path(&expand_home(&entry.repo), repo) {
            commands.setup.extend(entry.setup);
            commands.teardown.extend(entry.teardown);
            if let Some(limit) = entry.setup_timeout_s {
                commands.setup_timeout_s = Some(commands.setup_timeout_s.map_or(limit, |l| l.min(limit)));
            }
        }
    }
    Ok(())
}

fn parse_repo_file(text: &str, path: &Path) -> Result<RepoFile, WorktreeError> {
    toml::from_str(text).map_err(|e| {
        WorktreeError::Invalid(format!(
            "{}: {}",
            path.display(),
            e.message().lines().next().unwrap_or("cannot parse")
        ))
    })
}

fn check_counts(commands: &Commands) -> Result<(), WorktreeError> {
    for (what, list) in [("setup", &commands.setup), ("teardown", &commands.teardown)] {
        if list.len() > MAX_COMMANDS {
            return Err(WorktreeError::Invalid(format!(
                "{} {what} commands for one repository; at most {MAX_COMMANDS}",
                list.len()
            )));
        }
        if let Some(bad) = list.iter().find(|c| c.trim().is_empty() || c.contains('\0')) {
            return Err(WorktreeError::Invalid(format!(
                "a {what} command is empty or holds NUL: {bad:?}"
            )));
        }
    }
    Ok(())
}

/// A file's text, `None` when it does not exist; past [`MAX_FILE_BYTES`] an error.
fn read_small(path: &Path) -> Result<Option<String>, WorktreeError> {
    use std::io::Read;
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(WorktreeError::Io(format!("cannot read {}: {e}", path.display()))),
    };
    let mut text = String::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| WorktreeError::Io(format!("cannot read {}: {e}", path.display())))?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(WorktreeError::Invalid(format!(
            "{} is larger than {MAX_FILE_BYTES} bytes",
            path.display()
        )));
    }
    Ok(Some(text))
}

fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    }
}

fn same_path(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

fn trusted_copy_path(repo: &Path) -> Result<PathBuf, WorktreeError> {
    let repo = repo.canonicalize().unwrap_or_else(|_| repo.to_path_buf());
    Ok(trust_dir()?.join(format!("{}.toml", crate::worktree::repo_key(&repo))))
}

fn trusted_copy(repo: &Path) -> Result<Option<String>, WorktreeError> {
    read_small(&trusted_copy_path(repo)?)
}

/// Trusts the repository's file as it reads now (a copy is kept; a changed
/// file is not trusted); returns its commands.
pub fn trust(repo: &Path) -> Result<Commands, WorktreeError> {
    let file = repo.join(REPO_FILE);
    let text = read_small(&file)?
        .ok_or_else(|| WorktreeError::Invalid(format!("{} has no {REPO_FILE} to trust", repo.display())))?;
    let own = parse_repo_file(&text, &file)?;
    let commands = Commands {
        setup: own.setup,
        teardown: own.teardown,
        ..Commands::default()
    };
    check_counts(&commands)?;
    let copy = trusted_copy_path(repo)?;
    let io = |e: std::io::Error| WorktreeError::Io(format!("cannot keep the trusted copy {}: {e}", copy.display()));
    if let Some(dir) = copy.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    std::fs::write(&copy, &text).map_err(io)?;
    Ok(commands)
}

/// Takes back the trust in the repository's file; whether there was any.
pub fn untrust(repo: &Path) -> Result<bool, WorktreeError> {
    let copy = trusted_copy_path(repo)?;
    match std::fs::remove_file(&copy) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(WorktreeError::Io(format!("cannot remove {}: {e}", copy.display()))),
    }
}

/// The variables setup and teardown see.
fn variables(record: &WorktreeRecord) -> [(&'static str, String); 4] {
    [
        ("FUGUE_WORKTREE", record.path.clone()),
        ("FUGUE_WORKTREE_REPO", record.repo.clone()),
        ("FUGUE_WORKTREE_BRANCH", record.branch.clone()),
        ("FUGUE_WORKTREE_NAME", record.name.clone()),
    ]
}

/// `spec` with the setup commands run in its pane first: each command shown,
/// run under a time limit; the first that fails or hangs ends the pane with a
/// line naming it, and the program never starts.
pub fn with_setup(mut spec: SpawnSpec, record: &WorktreeRecord, commands: &Commands) -> SpawnSpec {
    let setup = &commands.setup;
    if setup.is_empty() {
        return spec;
    }
    spec.env.extend(variables(record).map(|(name, value)| EnvVar {
        name: name.into(),
        value,
    }));
    let limit = commands.setup_timeout_s.unwrap_or(SETUP_TIMEOUT_S).max(1);
    let script = setup_script(setup, limit);
    match spec.shell {
        false => {
            let program = spec.command.take().unwrap_or_else(|| "sh".into());
            let mut args = vec![
                "-c".to_string(),
                format!("{script}exec \"$@\""),
                "fugue-setup".into(),
                program,
            ];
            args.append(&mut spec.args);
            spec.command = Some("sh".into());
            spec.args = args;
        }
        true => {
            // Typed into the person's shell: the shell stays, the command runs
            // only after setup succeeded (the daemon adds the arguments, quoted).
            let setup = ["sh", "-c", &script, "fugue-setup"]
                .map(|w| shlex::try_quote(w).map(|q| q.into_owned()).unwrap_or_default())
                .join(" ");
            let then = match spec.command.take().filter(|c| !c.trim().is_empty()) {
                Some(command) => format!(" && {command}"),
                None => String::new(),
            };
            spec.command = Some(format!("{setup}{then}"));
        }
    }
    spec
}

/// The shell text that runs `setup` (a function per command, quoted).
fn setup_script(setup: &[String], limit: u64) -> String {
    let mut script = format!(
        "fugue_setup() {{ printf '\\033[2mfugue setup: %s\\033[0m\\n' \"$1\"; timeout -k 10 {limit} sh -c \"$1\"; \
s=$?; if [ $s -eq 124 ]; then printf 'fugue: setup command timed out after {limit} s: %s\\n' \"$1\"; exit 124; \
elif [ $s -ne 0 ]; then printf 'fugue: setup command failed (exit %s): %s\\n' $s \"$1\"; exit $s; fi; }}\n"
    );
    for command in setup {
        let quoted = shlex::try_quote(command).map(|q| q.into_owned()).unwrap_or_default();
        script.push_str(&format!("fugue_setup {quoted}\n"));
    }
    script
}

/// Runs `teardown` in the worktree before it goes; what failed, as notes.
pub async fn run_teardown(record: &WorktreeRecord, teardown: &[String]) -> Vec<String> {
    let mut notes = Vec::new();
    for command in teardown {
        let mut child = tokio::process::Command::new("sh");
        child
            .args(["-c", command])
            .current_dir(&record.path)
            .envs(variables(record))
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true);
        match tokio::time::timeout(TEARDOWN_TIMEOUT, child.output()).await {
            Err(_) => notes.push(format!(
                "teardown command timed out after {} s and was killed: {command}",
                TEARDOWN_TIMEOUT.as_secs()
            )),
            Ok(Err(e)) => notes.push(format!("teardown command could not run ({e}): {command}")),
            Ok(Ok(out)) if !out.status.success() => {
                let said = String::from_utf8_lossy(&[out.stderr, out.stdout].concat())
                    .trim()
                    .to_string();
                let said: String = said.chars().take(MAX_QUOTED_OUTPUT).collect();
                notes.push(format!("teardown command failed ({}): {command}: {said}", out.status));
            }
            Ok(Ok(_)) => {}
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setup_runs_before_the_program_and_keeps_its_arguments() {
        let record = WorktreeRecord {
            name: "n".into(),
            repo: "/r".into(),
            path: "/w".into(),
            branch: "fugue/n".into(),
            base: "b".into(),
            base_ref: "main".into(),
            pane: None,
            session: None,
            created_at_ms: 0,
        };
        let mut spec = SpawnSpec::new("s");
        spec.shell = false;
        spec.command = Some("claude".into());
        spec.args = vec!["fix it's bug".into()];
        let setup = |commands: &[&str]| Commands {
            setup: commands.iter().map(|c| c.to_string()).collect(),
            ..Commands::default()
        };
        let wrapped = with_setup(
            spec.clone(),
            &record,
            &setup(&["cp \"$FUGUE_WORKTREE_REPO/.env\" .env"]),
        );
        assert_eq!(wrapped.command.as_deref(), Some("sh"));
        assert_eq!(&wrapped.args[2..], ["fugue-setup", "claude", "fix it's bug"]);
        assert!(wrapped.args[1].ends_with("fugue_setup 'cp \"$FUGUE_WORKTREE_REPO/.env\" .env'\nexec \"$@\""));
        assert!(wrapped
            .env
            .iter()
            .any(|v| v.name == "FUGUE_WORKTREE_REPO" && v.value == "/r"));
        assert!(wrapped.args[1].contains("timeout -k 10 600 sh"));
        assert_eq!(with_setup(spec.clone(), &record, &setup(&[])), spec);

        spec.shell = true;
        spec.command = Some("npm test".into());
        let typed = with_setup(spec, &record, &setup(&["npm ci"]));
        let command = typed.command.unwrap();
        assert!(
            command.starts_with("sh -c ") && command.ends_with(" fugue-setup && npm test"),
            "{command}"
        );
        assert_eq!(typed.args, ["fix it's bug"], "the daemon quotes them after the command");
    }
}
