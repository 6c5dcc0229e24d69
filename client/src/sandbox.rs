//! Sandboxed panes: a pane's program runs in a new container of an image on
//! this machine's engine (Docker or Podman), driven through the engine's own CLI
//! in the user's environment, as git is for worktrees: fugue stores no
//! credential and runs no engine client of its own.
//!
//! The pane's command is `fugue sandbox-run [the sandbox] -- PROGRAM ARGS`. That
//! wrapper (the CLI's hidden subcommand) runs in the pane, so it knows the pane's
//! id: it starts the container with a TTY, labelled `fugue.pane=ID`, with only
//! the pane's directory of the host's files, as a non-root user; and it removes
//! the container when the pane ends by any path (release, exit, a hang-up when
//! fugued stops). The container is named after the pane too, so a container
//! left by a wrapper that was killed outright is removed by the next wrapper
//! of the same pane (a restart, a restore after a crash).

use crate::remote::Engine;
use crate::ClientError;
use std::time::Duration;

/// The label naming the pane a container belongs to.
pub const PANE_LABEL: &str = "fugue.pane";
/// The label naming the socket of the daemon that pane is of (fugued removes
/// what a crash left of its own, and nothing of another daemon's).
pub const SOCKET_LABEL: &str = "fugue.socket";
/// The CLI's hidden subcommand that runs a pane's sandbox.
pub const SUBCOMMAND: &str = "sandbox-run";
/// How long a question to the engine (`image inspect`, `ps`, `rm`) may take.
const ENGINE_WITHIN: Duration = Duration::from_secs(30);

/// What the sandbox may reach over the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Network {
    /// Only the container's own loopback.
    #[default]
    None,
    /// The engine's bridge: the internet and other containers, not the host's loopback.
    Bridge,
    /// The host's network stack: no network isolation at all.
    Host,
}

impl Network {
    pub fn parse(text: &str) -> Result<Network, String> {
        match text {
            "none" => Ok(Network::None),
            "bridge" => Ok(Network::Bridge),
            "host" => Ok(Network::Host),
            other => Err(format!(
                "unknown sandbox network '{other}'; use one of none, bridge, host"
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Network::None => "none",
            Network::Bridge => "bridge",
            Network::Host => "host",
        }
    }
}

/// A pane's sandbox: the image and the limits it runs under.
#[derive(Debug, Clone, PartialEq)]
pub struct Sandbox {
    pub engine: Engine,
    pub image: String,
    pub network: Network,
    /// CPUs, as the engine's `--cpus` takes them (`0.5`, `2`).
    pub cpus: Option<String>,
    /// Memory, as the engine's `--memory` takes it (`512m`, `2g`).
    pub memory: Option<String>,
    /// Names of the pane's environment variables passed into the container
    /// (nothing else of the pane's environment is, fugue's socket least of all).
    pub pass_env: Vec<String>,
}

impl Sandbox {
    pub fn new(image: impl Into<String>) -> Sandbox {
        Sandbox {
            engine: Engine::Docker,
            image: image.into(),
            network: Network::None,
            cpus: None,
            memory: None,
            pass_env: Vec::new(),
        }
    }

    /// Refuses what the engine would refuse later, or take for something else.
    pub fn validate(&self) -> Result<(), String> {
        let image_ok = !self.image.is_empty()
            && !self.image.starts_with('-')
            && self.image.len() <= 255
            && self
                .image
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-/:@".contains(c));
        if !image_ok {
            return Err(format!(
                "bad sandbox image '{}'; use a name such as debian:12 or registry/name:tag (at most 255 characters)",
                crate::protocol::limits::clean_label(&self.image, 80)
            ));
        }
        if let Some(cpus) = &self.cpus {
            match cpus.parse::<f64>() {
                Ok(n) if n > 0.0 && n <= 1024.0 => {}
                _ => {
                    return Err(format!(
                        "bad --cpus '{cpus}'; use a number of CPUs above 0, e.g. 0.5 or 2"
                    ))
                }
            }
        }
        if let Some(memory) = &self.memory {
            let digits = memory.trim_end_matches(['b', 'k', 'm', 'g', 'B', 'K', 'M', 'G']);
            let unit = &memory[digits.len()..];
            if digits.is_empty() || unit.len() > 1 || !digits.chars().all(|c| c.is_ascii_digit()) || digits.len() > 15 {
                return Err(format!("bad --memory '{memory}'; use a size such as 512m or 2g"));
            }
        }
        for name in &self.pass_env {
            if name.is_empty() || name.contains('=') || name.starts_with('-') {
                return Err(format!("bad environment variable name '{name}' for the sandbox"));
            }
        }
        Ok(())
    }

    /// The pane's command line: `fugue` (this machine's fugue) `sandbox-run`
    /// with this sandbox, then the program to run in it (the image's own
    /// command when empty). The pane's directory is the one mounted.
    pub fn wrap(&self, fugue: &str, program: &[String]) -> Vec<String> {
        let mut command = vec![
            fugue.to_string(),
            SUBCOMMAND.to_string(),
            "--engine".into(),
            self.engine.program().into(),
            "--image".into(),
            self.image.clone(),
            "--network".into(),
            self.network.as_str().into(),
        ];
        for (flag, value) in [("--cpus", &self.cpus), ("--memory", &self.memory)] {
            if let Some(value) = value {
                command.extend([flag.to_string(), value.clone()]);
            }
        }
        for name in &self.pass_env {
            command.extend(["--pass-env".to_string(), name.clone()]);
        }
        command.push("--".into());
        command.extend(program.iter().cloned());
        command
    }

    /// The engine's arguments that start the container of pane `pane` of the
    /// daemon on `socket`: a TTY, the labels, `dir` and `also` mounted read-write at their own paths and
    /// nothing else of the host's, `user` (`UID:GID`), no capabilities, no
    /// privilege gain, the open-file and process limits of `limits` (the
    /// wrapper's own). `hook_dir`: the pane's hook directory (an agent's hook
    /// socket, from the daemon), mounted read-only where the agent's hooks find it.
    pub fn run_args(
        &self,
        (pane, socket): (&str, Option<&str>),
        (dir, also): (&str, &[Mount]),
        (hook_dir, limits): (Option<&str>, &Limits),
        user: &str,
        program: &[String],
    ) -> Vec<String> {
        let mut args: Vec<String> = [
            "run",
            "--rm",
            "--interactive",
            "--tty",
            "--name",
            &container_name(pane),
            "--label",
            &format!("{PANE_LABEL}={pane}"),
            "--network",
            self.network.as_str(),
            "--user",
            user,
            "--cap-drop",
            "ALL",
            "--security-opt",
            "no-new-privileges",
            "--pids-limit",
            &PIDS_LIMIT.to_string(),
            "--volume",
            &format!("{dir}:{dir}"),
            "--workdir",
            dir,
            // The image's home is likely not the sandbox user's to write.
            "--env",
            "HOME=/tmp",
            "--env",
            "TERM",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if let Some(socket) = socket {
            args.extend(["--label".to_string(), format!("{SOCKET_LABEL}={socket}")]);
        }
        for mount in also {
            let path = mount.path.display();
            let mode = if mount.read_only { ":ro" } else { "" };
            args.extend(["--volume".to_string(), format!("{path}:{path}{mode}")]);
        }
        if let Some(hook_dir) = hook_dir {
            // The socket takes this pane's hook reports and nothing else; the
            // pane's id and hook token (which only such reports need) go in
            // by name, their values from the wrapper's environment.
            let inside = crate::protocol::SANDBOX_HOOK_DIR;
            args.extend([
                "--volume".to_string(),
                format!("{hook_dir}:{inside}:ro"),
                "--env".to_string(),
                format!("FUGUE_SOCKET={inside}/{}", crate::protocol::SANDBOX_HOOK_SOCKET),
                "--env".to_string(),
                "FUGUE_PANE".to_string(),
                "--env".to_string(),
                "FUGUE_PANE_TOKEN".to_string(),
            ]);
        }
        for (flag, value) in [("--cpus", &self.cpus), ("--memory", &self.memory)] {
            if let Some(value) = value {
                args.extend([flag.to_string(), value.clone()]);
            }
        }
        for name in &self.pass_env {
            args.extend(["--env".to_string(), name.clone()]);
        }
        args.extend(limits.ulimit_args());
        args.push(self.image.clone());
        args.extend(program.iter().cloned());
        args
    }
}

/// Most processes a container may run (`--pids-limit`).
pub const PIDS_LIMIT: u64 = 4096;

/// The resource limits a container gets: the wrapper's own (inherited from
/// fugued), as `--ulimit` flags. Without them an engine applies its own
/// defaults (podman: 1048576 open files), which the runtime cannot set where
/// the hard limit is lower, and the container fails to start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    /// Open files, soft and hard; `None` when unlimited.
    pub open_files: Option<(u64, u64)>,
    /// Processes of the user, soft and hard; `None` when unlimited.
    pub processes: Option<(u64, u64)>,
}

impl Limits {
    /// `--ulimit nofile=SOFT:HARD` and `--ulimit nproc=SOFT:HARD`. Processes
    /// are capped at [`PIDS_LIMIT`], which the container cannot pass anyway
    /// (and a higher count than the runtime's own may not be set).
    fn ulimit_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        if let Some((soft, hard)) = self.open_files {
            args.extend(["--ulimit".to_string(), format!("nofile={soft}:{hard}")]);
        }
        let (soft, hard) = self.processes.unwrap_or((PIDS_LIMIT, PIDS_LIMIT));
        args.extend([
            "--ulimit".to_string(),
            format!("nproc={}:{}", soft.min(PIDS_LIMIT), hard.min(PIDS_LIMIT)),
        ]);
        args
    }
}

/// What a person asked of a sandbox (`run --sandbox`'s flags, MCP's
/// `fugue_start` `sandbox`, the HTTP API's `POST /api/panes` `sandbox`, a
/// table of sandbox.toml); what they left out comes from the profile of the
/// agent being started (`sandbox.toml`), then the defaults. See
/// docs/remote.md, "Sandboxed panes".
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Asked {
    /// The image, already on the engine (nothing is pulled). Default: the
    /// image of the profile of the agent the command starts, or of
    /// `[default]`, in sandbox.toml.
    pub image: Option<String>,
    /// "none" (default: only the container's own loopback), "bridge" (the
    /// engine's network, not this machine's loopback) or "host" (no network
    /// isolation).
    pub network: Option<String>,
    /// CPUs it may use ("0.5", "2").
    pub cpus: Option<String>,
    /// Memory it may use ("512m", "2g").
    pub memory: Option<String>,
    /// "docker" (default) or "podman".
    pub engine: Option<String>,
}

impl Asked {
    /// Each value of `self`, else `under`'s.
    fn over(self, under: &Asked) -> Asked {
        Asked {
            image: self.image.or_else(|| under.image.clone()),
            network: self.network.or_else(|| under.network.clone()),
            cpus: self.cpus.or_else(|| under.cpus.clone()),
            memory: self.memory.or_else(|| under.memory.clone()),
            engine: self.engine.or_else(|| under.engine.clone()),
        }
    }
}

/// Where sandbox profiles are: `sandbox.toml` beside the hosts file.
pub fn profiles_file() -> Option<std::path::PathBuf> {
    crate::remote::hosts_file().map(|hosts| hosts.with_file_name("sandbox.toml"))
}

/// The sandbox for `program` (the command's first word): what was `asked`,
/// then the profile named after the agent `program` runs (`[claude]`,
/// `[codex]`...) or else `[default]` from [`profiles_file`], then the defaults
/// (docker, network none, no limits). Checked.
pub fn resolve(asked: Asked, program: Option<&str>) -> Result<Sandbox, String> {
    let (path, profiles) = read_profiles()?;
    let kind = program.and_then(agent_named);
    let profile = kind
        .and_then(|kind| profiles.get(kind.as_str()).map(|p| (kind.as_str(), p)))
        .or_else(|| profiles.get("default").map(|p| ("default", p)));
    let merged = match profile {
        Some((_, profile)) => asked.over(profile),
        None => asked,
    };
    let Some(image) = merged.image else {
        let wanted = kind.map_or("[default]".to_string(), |k| format!("[{}] or [default]", k.as_str()));
        return Err(format!(
            "no sandbox image given, and no {wanted} profile with an image in {}",
            path.map_or("sandbox.toml".into(), |p| p.display().to_string())
        ));
    };
    let sandbox = Sandbox {
        engine: match merged.engine.as_deref() {
            Some(name) => Engine::parse(name)?,
            None => Engine::Docker,
        },
        network: merged
            .network
            .as_deref()
            .map(Network::parse)
            .transpose()?
            .unwrap_or_default(),
        cpus: merged.cpus,
        memory: merged.memory,
        ..Sandbox::new(image)
    };
    sandbox.validate()?;
    Ok(sandbox)
}

/// The agent CLI a program is, by its file name (as the daemon tells them apart).
fn agent_named(program: &str) -> Option<fugue_protocol::AgentKind> {
    let name = program.rsplit('/').next().unwrap_or(program).to_ascii_lowercase();
    fugue_protocol::AgentKind::ALL
        .iter()
        .copied()
        .find(|kind| name == kind.as_str() || name.starts_with(&format!("{}-", kind.as_str())))
}

type Profiles = std::collections::BTreeMap<String, Asked>;

fn read_profiles() -> Result<(Option<std::path::PathBuf>, Profiles), String> {
    let Some(path) = profiles_file() else {
        return Ok((None, Profiles::new()));
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Some(path), Profiles::new())),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let profiles: Profiles = toml::from_str(&text).map_err(|e| crate::remote::toml_error(&path, &text, &e))?;
    for name in profiles.keys() {
        if name != "default" && fugue_protocol::AgentKind::parse(name).is_err() {
            let kinds: Vec<&str> = fugue_protocol::AgentKind::ALL.iter().map(|k| k.as_str()).collect();
            return Err(format!(
                "{}: unknown profile [{name}]; use [default] or an agent: {}",
                path.display(),
                kinds.join(", ")
            ));
        }
    }
    Ok((Some(path), profiles))
}

/// Makes `spec` run its program in `sandbox` on this machine's engine, once
/// the engine answers and has the image. The program runs directly in the
/// container (a shell of this machine around it would be outside the
/// sandbox), and the pane's `-e` variables go in with it.
pub async fn sandboxed(
    sandbox: &Sandbox,
    mut spec: fugue_protocol::SpawnSpec,
) -> Result<fugue_protocol::SpawnSpec, ClientError> {
    let mut sandbox = sandbox.clone();
    for var in &spec.env {
        if !sandbox.pass_env.contains(&var.name) {
            sandbox.pass_env.push(var.name.clone());
        }
    }
    check_ready(&sandbox).await?;
    let fugue = crate::companion_binary("fugue");
    let program: Vec<String> = spec.command.take().into_iter().chain(spec.args.drain(..)).collect();
    let mut wrapped = sandbox.wrap(&fugue.display().to_string(), &program).into_iter();
    spec.command = wrapped.next();
    spec.args = wrapped.collect();
    spec.shell = false;
    Ok(spec)
}

/// A path of this machine's mounted into a sandbox at the same path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub path: std::path::PathBuf,
    pub read_only: bool,
}

/// What a git worktree at `dir` needs besides itself: its `.git` file points
/// into the repository's own git directory, where its index, refs and objects
/// live, so an agent's git works in the sandbox only with that mounted too.
/// Its hooks and config go in read-only: both run code on this machine the
/// next time a person uses git, and a sandbox must not write them. Nothing
/// for a plain directory or a repository's main checkout.
pub fn worktree_git_mounts(dir: &std::path::Path) -> Vec<Mount> {
    let Some(common) = worktree_common_dir(dir) else {
        return Vec::new();
    };
    let mut mounts = vec![Mount {
        path: common.clone(),
        read_only: false,
    }];
    for part in ["hooks", "config"] {
        let path = common.join(part);
        if path.exists() {
            mounts.push(Mount { path, read_only: true });
        }
    }
    mounts
}

fn worktree_common_dir(dir: &std::path::Path) -> Option<std::path::PathBuf> {
    let pointer = std::fs::read_to_string(dir.join(".git")).ok()?;
    let gitdir = std::path::PathBuf::from(pointer.lines().next()?.strip_prefix("gitdir:")?.trim());
    let gitdir = match gitdir.is_absolute() {
        true => gitdir,
        false => dir.join(gitdir),
    };
    // `.../.git/worktrees/NAME` names the common directory in `commondir`.
    let common = std::fs::read_to_string(gitdir.join("commondir")).ok()?;
    gitdir.join(common.trim()).canonicalize().ok()
}

/// Checks, before a pane is made, that the engine answers and has `image`
/// (no image is pulled: a sandbox runs what the person already has).
pub async fn check_ready(sandbox: &Sandbox) -> Result<(), ClientError> {
    let invalid = |m: String| ClientError::Daemon(crate::protocol::ErrorReply::invalid(m));
    sandbox.validate().map_err(invalid)?;
    let engine = sandbox.engine.program();
    sandbox
        .engine
        .ask(&["version", "--format", "{{.Server.Version}}"], ENGINE_WITHIN)
        .await
        .map_err(|why| invalid(format!("the {engine} engine does not answer: {why}")))?;
    sandbox
        .engine
        .ask(
            &["image", "inspect", "--format", "{{.Id}}", &sandbox.image],
            ENGINE_WITHIN,
        )
        .await
        .map_err(|_| {
            invalid(format!(
                "no image '{}' on the {engine} engine; build or pull it first (fugue pulls nothing)",
                sandbox.image
            ))
        })?;
    Ok(())
}

/// The name of pane `pane`'s container: one per pane (its id is a UUID), so
/// removing it is one question to the engine, quick enough for the seconds a
/// pane's process gets between its hang-up and SIGKILL.
pub fn container_name(pane: &str) -> String {
    format!("fugue-pane-{pane}")
}

/// Removes pane `pane`'s container, running or not; whether there was one.
pub async fn remove_container_of(engine: Engine, pane: &str) -> Result<bool, String> {
    // `rm --force` of no container succeeds silently on newer engines, and
    // names what it removed. Podman's stops first, waiting 10 s for a
    // program that ignores SIGTERM (a shell as the container's init does):
    // `--time 0` kills at once, as Docker's does.
    let name = container_name(pane);
    let args: &[&str] = match engine {
        Engine::Docker => &["rm", "--force", &name],
        Engine::Podman => &["rm", "--force", "--time", "0", &name],
    };
    match engine.ask(args, ENGINE_WITHIN).await {
        Ok(removed) => Ok(!removed.is_empty()),
        Err(why) if why.contains("No such container") || why.contains("no such container") => Ok(false),
        Err(why) => Err(why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_sandboxes_are_refused_with_what_was_wrong() {
        let ok = Sandbox {
            cpus: Some("0.5".into()),
            memory: Some("512m".into()),
            ..Sandbox::new("debian:12")
        };
        assert_eq!(ok.validate(), Ok(()));
        let cases = [
            (Sandbox::new(""), "bad sandbox image"),
            (Sandbox::new("--privileged"), "bad sandbox image"),
            (Sandbox::new("a b"), "bad sandbox image"),
            (
                Sandbox {
                    cpus: Some("-1".into()),
                    ..ok.clone()
                },
                "bad --cpus",
            ),
            (
                Sandbox {
                    cpus: Some("lots".into()),
                    ..ok.clone()
                },
                "bad --cpus",
            ),
            (
                Sandbox {
                    memory: Some("2gb".into()),
                    ..ok.clone()
                },
                "bad --memory",
            ),
            (
                Sandbox {
                    memory: Some("m".into()),
                    ..ok.clone()
                },
                "bad --memory",
            ),
            (
                Sandbox {
                    pass_env: vec!["A=1".into()],
                    ..ok.clone()
                },
                "bad environment variable name",
            ),
        ];
        for (sandbox, said) in cases {
            let err = sandbox.validate().unwrap_err();
            assert!(err.contains(said), "{sandbox:?}: {err}");
        }
        assert!(Network::parse("wide").unwrap_err().contains("none, bridge, host"));
    }

    #[test]
    fn the_container_gets_the_label_the_directory_and_nothing_else() {
        let sandbox = Sandbox {
            network: Network::Bridge,
            cpus: Some("2".into()),
            pass_env: vec!["API_KEY".into()],
            ..Sandbox::new("img:1")
        };
        let limits = Limits {
            open_files: Some((1024, 2048)),
            processes: Some((100_000, 100_000)),
        };
        let args = sandbox.run_args(
            ("P1", Some("/run/f.sock")),
            ("/w", &[]),
            (None, &limits),
            "1000:1000",
            &["sh".into(), "-c".into(), "id".into()],
        );
        let line = args.join(" ");
        assert!(
            line.starts_with("run --rm --interactive --tty --name fugue-pane-P1 --label fugue.pane=P1 --network bridge --user 1000:1000"),
            "{line}"
        );
        assert!(line.contains("--volume /w:/w --workdir /w"), "{line}");
        assert!(line.contains("--label fugue.socket=/run/f.sock"), "{line}");
        assert!(
            line.ends_with("--cpus 2 --env API_KEY --ulimit nofile=1024:2048 --ulimit nproc=4096:4096 img:1 sh -c id"),
            "{line}"
        );
        assert_eq!(args.iter().filter(|a| *a == "--volume").count(), 1, "{line}");
        let wrapped = sandbox.wrap("/bin/fugue", &["claude".into()]);
        assert_eq!(
            wrapped.join(" "),
            "/bin/fugue sandbox-run --engine docker --image img:1 --network bridge --cpus 2 --pass-env API_KEY -- claude"
        );
    }
}
