//! A real Docker Engine for the tests: an image holding this build's `fugue`
//! and `fugued`, and containers of it that are removed when dropped.
//!
//! No registry is reachable from the machines fugue is tested on, so the
//! image is made locally: a root filesystem of the binaries, `/bin/sh` and
//! `sleep` with the libraries `ldd` names, imported with `docker import`. It is
//! tagged with a hash of what went in, so a second run reuses it.

use crate::bin;
use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Runs `docker ARGS`; its stdout, or panics with what it said.
pub fn docker(args: &[&str]) -> String {
    engine("docker", args)
}

/// Runs `podman ARGS` (with [`podman_conf`]); its stdout, or panics with what it said.
pub fn podman(args: &[&str]) -> String {
    engine("podman", args)
}

fn engine(program: &str, args: &[&str]) -> String {
    let out = engine_command(program).args(args).output().expect("run the engine");
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr).trim()
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// `program` (docker or podman) as the tests run it: podman with [`podman_conf`].
pub fn engine_command(program: &str) -> Command {
    let mut command = Command::new(program);
    if program == "podman" {
        command.env("CONTAINERS_CONF", podman_conf());
    }
    command
}

/// Podman's configuration for the tests (`CONTAINERS_CONF`): runc, and
/// open-file and process limits a container may have here. Podman's own
/// defaults (1048576 open files) are above the hard limits of the machines
/// fugue is tested on, where even root cannot raise them (no
/// CAP_SYS_RESOURCE), and its crun cannot run on their hybrid cgroups.
pub fn podman_conf() -> PathBuf {
    static CONF: OnceLock<PathBuf> = OnceLock::new();
    let text =
        "[containers]\ndefault_ulimits = [\"nofile=1024:1024\", \"nproc=4096:4096\"]\n\n[engine]\nruntime = \"runc\"\n";
    CONF.get_or_init(|| write_conf("fugue-tests-containers.conf", text))
        .clone()
}

/// A podman configuration that leaves the limits to podman's defaults (its
/// 1048576 open files, above this machine's hard limit): what fugue's
/// sandbox must start a container under by passing its own limits.
pub fn podman_conf_with_engine_limits() -> PathBuf {
    static CONF: OnceLock<PathBuf> = OnceLock::new();
    let text = "[engine]\nruntime = \"runc\"\n";
    CONF.get_or_init(|| write_conf("fugue-tests-containers-engine-limits.conf", text))
        .clone()
}

/// Writes `text` to `target/NAME`: aside, then renamed into place, as tests
/// in other processes may be reading it.
fn write_conf(name: &str, text: &str) -> PathBuf {
    let path = target_dir().join(name);
    let aside = path.with_extension(format!("conf.{}", std::process::id()));
    std::fs::write(&aside, text).expect("write the podman configuration");
    std::fs::rename(&aside, &path).expect("put the podman configuration in place");
    path
}

/// The build's `target/` directory (made if missing).
fn target_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target");
    std::fs::create_dir_all(&dir).expect("the target directory");
    dir
}

/// An exclusive lock on `target/NAME.lock`, held until the file is dropped.
/// Each test runs in a process of its own (nextest), so a `OnceLock` alone
/// would build an image once per test: the first process builds it while the
/// others wait here, then find it built.
fn exclusive(name: &str) -> std::fs::File {
    let path = target_dir().join(format!("{name}.lock"));
    let file = std::fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
        .unwrap_or_else(|e| panic!("lock {}: {e}", path.display()));
    file
}

/// Whether podman runs containers here (`podman info` answers): where it is
/// not installed its tests are skipped (and say so), unless
/// `FUGUE_TESTS_REQUIRE_ALL` says every test must run (scripts/test installs it).
pub fn podman_or_skip() -> bool {
    let answers = engine_command("podman")
        .args(["info", "--format", "{{.Version.Version}}"])
        .output()
        .is_ok_and(|out| out.status.success());
    if answers {
        return true;
    }
    assert!(
        std::env::var_os("FUGUE_TESTS_REQUIRE_ALL").is_none(),
        "podman does not answer (scripts/test installs it)"
    );
    eprintln!("skipped: podman does not answer (scripts/test installs it)");
    false
}

/// Whether a Docker Engine answers (scripts/test starts one).
pub fn engine_running() -> bool {
    Command::new("docker")
        .args(["version", "--format", "{{.Server.Version}}"])
        .output()
        .is_ok_and(|out| out.status.success())
}

/// Whether a test of the engine runs: where no engine answers it is skipped
/// (and says so), unless `FUGUE_TESTS_REQUIRE_ALL` says every test must run
/// (as `.ci/run` does, whose scripts/test starts dockerd).
pub fn engine_or_skip() -> bool {
    if engine_running() {
        return true;
    }
    assert!(
        std::env::var_os("FUGUE_TESTS_REQUIRE_ALL").is_none(),
        "no Docker Engine answers (scripts/test starts dockerd)"
    );
    eprintln!("skipped: no Docker Engine answers (scripts/test starts dockerd)");
    false
}

/// Waits until `check` holds, looking again each time the engine reports an
/// event matching `filters` (`docker events --filter ...`, one process for
/// the whole wait) instead of asking every few milliseconds. The events are
/// followed before the first look, so a change between the look and the
/// subscription is not missed. Panics with `what` after `deadline`.
pub fn until_engine_event<T>(
    engine_name: &str,
    filters: &[&str],
    what: &str,
    deadline: std::time::Duration,
    mut check: impl FnMut() -> Option<T>,
) -> T {
    use std::io::BufRead;
    let mut command = engine_command(engine_name);
    command.args(["events", "--format", "{{.ID}} {{.Status}}"]);
    for filter in filters {
        command.args(["--filter", filter]);
    }
    let mut events = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("follow the engine's events");
    let stdout = events.stdout.take().expect("the events' stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            if line.is_err() || tx.send(()).is_err() {
                return;
            }
        }
    });
    let end = std::time::Instant::now() + deadline;
    let found = loop {
        if let Some(value) = check() {
            break Some(value);
        }
        let left = end.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            break None;
        }
        // An event, or (the follower not yet listening when the change came)
        // a second's pause: the engine's own stream is what is waited on.
        let _ = rx.recv_timeout(left.min(std::time::Duration::from_secs(1)));
    };
    let _ = events.kill();
    let _ = events.wait();
    found.unwrap_or_else(|| panic!("timed out after {deadline:?} waiting for {what}"))
}

/// Waits until no container labelled `label` (`KEY=VALUE`) is left on Docker,
/// woken by the engine's destroy events.
pub fn wait_containers_gone(label: &str, what: &str) {
    let label_filter = format!("label={label}");
    until_engine_event(
        "docker",
        &[&label_filter, "event=destroy"],
        what,
        crate::DEADLINE,
        || {
            docker(&["ps", "--all", "--quiet", "--filter", &label_filter])
                .is_empty()
                .then_some(())
        },
    )
}

/// Programs the image holds, at these paths: fugue's two, shells for panes,
/// `sleep` to keep a container up, `id` to say who runs, and the fake agent
/// as `claude` (a sandboxed agent).
fn contents() -> Vec<(PathBuf, &'static str)> {
    vec![
        (bin("fugue"), "/usr/local/bin/fugue"),
        (bin("fugued"), "/usr/local/bin/fugued"),
        (bin("fake-agent"), "/usr/local/bin/claude"),
        (PathBuf::from("/bin/sh"), "/bin/sh"),
        (PathBuf::from("/bin/bash"), "/bin/bash"),
        (PathBuf::from("/bin/sleep"), "/bin/sleep"),
        (PathBuf::from("/usr/bin/id"), "/usr/bin/id"),
    ]
}

/// The shared libraries `ldd` says `program` loads (its loader included).
fn libraries(program: &Path) -> Vec<PathBuf> {
    let out = Command::new("ldd").arg(program).output().expect("run ldd");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let path = match line.split_once("=>") {
                Some((_, after)) => after.split_whitespace().next()?,
                None => line.split_whitespace().next()?,
            };
            path.starts_with('/').then(|| PathBuf::from(path))
        })
        .collect()
}

/// The image's tag, building it first if this build's binaries have none.
pub fn fugue_image() -> String {
    static IMAGE: OnceLock<String> = OnceLock::new();
    IMAGE
        .get_or_init(|| build_image("docker", "fugue-test", contents(), &[]))
        .clone()
}

/// [`fugue_image`] in podman's storage (its own, not Docker's).
pub fn podman_image() -> String {
    static IMAGE: OnceLock<String> = OnceLock::new();
    IMAGE
        .get_or_init(|| build_image("podman", "fugue-test", contents(), &[]))
        .clone()
}

/// Where the agent image's model stub listens, beside the agent.
pub const AGENT_STUB_PORT: u16 = 4100;

/// [`fugue_image`] with a real Claude Code (`claude_exe`) in it, and the model
/// stub beside it: the image's `claude` starts `model-stub --port
/// AGENT_STUB_PORT` (logging to `$MODEL_STUB_LOG`), then the real CLI, so an
/// agent sandboxed with no network still has its model.
pub fn agent_image(claude_exe: &Path) -> String {
    static IMAGE: OnceLock<String> = OnceLock::new();
    IMAGE
        .get_or_init(|| {
            let mut files = contents();
            files.retain(|(_, to)| *to != "/usr/local/bin/claude");
            files.extend([
                (claude_exe.to_path_buf(), "/usr/local/lib/claude/claude"),
                (bin("model-stub"), "/usr/local/bin/model-stub"),
                (PathBuf::from("/usr/bin/touch"), "/usr/bin/touch"),
                (PathBuf::from("/bin/cat"), "/bin/cat"),
                (PathBuf::from("/bin/ls"), "/bin/ls"),
            ]);
            let claude = format!(
                "#!/bin/sh\nmodel-stub --port {AGENT_STUB_PORT} --log \"${{MODEL_STUB_LOG:-/tmp/model-stub.log}}\" >/dev/null 2>&1 &\n\
                 exec /usr/local/lib/claude/claude \"$@\"\n"
            );
            build_image("docker", "fugue-agent-test", files, &[("/usr/local/bin/claude", claude)])
        })
        .clone()
}

/// Builds (unless one of that content is there) and tags the image `repository`
/// of `contents` (each file with the libraries it loads) and `scripts`
/// (executable text at a path); old tags of `repository` are removed.
fn build_image(
    program: &str,
    repository: &str,
    contents: Vec<(PathBuf, &'static str)>,
    scripts: &[(&str, String)],
) -> String {
    let mut files: BTreeSet<(PathBuf, PathBuf)> = BTreeSet::new();
    for (from, to) in contents {
        let from = std::fs::canonicalize(&from).unwrap_or(from);
        for library in libraries(&from) {
            let real = std::fs::canonicalize(&library).unwrap_or_else(|_| library.clone());
            files.insert((real, library));
        }
        files.insert((from, PathBuf::from(to)));
    }
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for (from, to) in &files {
        to.hash(&mut hasher);
        std::fs::read(from)
            .expect("read a file for the image")
            .hash(&mut hasher);
    }
    scripts.hash(&mut hasher);
    let tag = format!("{repository}:{:016x}", hasher.finish());
    let _building = exclusive(&format!("fugue-tests-image-{program}-{repository}"));
    let known = engine_command(program)
        .args(["image", "inspect", &tag])
        .output()
        .is_ok_and(|out| out.status.success());
    if known {
        return tag;
    }
    let root = tempfile::tempdir().expect("a directory for the image's root");
    for (from, to) in &files {
        let target = root.path().join(to.strip_prefix("/").unwrap_or(to));
        std::fs::create_dir_all(target.parent().expect("a file's directory")).unwrap();
        std::fs::copy(from, &target).unwrap_or_else(|e| panic!("copy {} into the image: {e}", from.display()));
    }
    for (path, text) in scripts {
        use std::os::unix::fs::PermissionsExt;
        let target = root.path().join(path.trim_start_matches('/'));
        std::fs::create_dir_all(target.parent().expect("a file's directory")).unwrap();
        std::fs::write(&target, text).unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    for dir in ["tmp", "root", "work"] {
        let path = root.path().join(dir);
        std::fs::create_dir_all(&path).unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = if dir == "tmp" { 0o1777 } else { 0o755 };
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let status = Command::new("sh")
        .env("CONTAINERS_CONF", podman_conf())
        .arg("-c")
        .arg(format!(
            "tar -C '{}' -c . | {program} import --change 'ENV HOME=/root SHELL=/bin/sh PATH=/usr/local/bin:/usr/bin:/bin' - {tag} >/dev/null",
            root.path().display()
        ))
        .status()
        .expect("run tar and docker import");
    assert!(status.success(), "{program} import of the test image failed");
    // Images of earlier builds are of no more use: one per build would pile up.
    let tags = engine(program, &["images", repository, "--format", "{{.Repository}}:{{.Tag}}"]);
    // (Podman names a local image localhost/NAME.)
    let current = |t: &str| t == tag || t.strip_prefix("localhost/") == Some(tag.as_str());
    for old in tags.lines().filter(|t| !current(t)) {
        let _ = engine_command(program).args(["rmi", "--force", old]).output();
    }
    tag
}

/// A container of [`fugue_image`] (or [`podman_image`]) kept up by `sleep`,
/// removed when dropped.
pub struct Container {
    pub name: String,
    /// `docker` or `podman`.
    pub engine: &'static str,
}

static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

impl Container {
    /// Starts one with `extra` arguments for `docker run` (`--network none`...).
    pub fn start(extra: &[&str]) -> Container {
        Container::start_running(extra, "exec sleep 3600")
    }

    /// Starts one whose command is `sh -c SCRIPT` (then it stays up as the
    /// script says), with `extra` arguments for `docker run`.
    pub fn start_running(extra: &[&str], script: &str) -> Container {
        Container::start_on("docker", extra, script)
    }

    /// Starts one on `engine` (docker or podman) running `sh -c SCRIPT`.
    pub fn start_on(engine_name: &'static str, extra: &[&str], script: &str) -> Container {
        let name = format!(
            "fugue-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let image = match engine_name {
            "podman" => podman_image(),
            _ => fugue_image(),
        };
        let mut args = vec!["run", "-d", "--name", &name, "--workdir", "/work"];
        args.extend_from_slice(extra);
        args.extend([image.as_str(), "/bin/sh", "-c", script]);
        engine(engine_name, &args);
        Container {
            name,
            engine: engine_name,
        }
    }

    /// Its `--host` address.
    pub fn address(&self) -> String {
        format!("{}://{}", self.engine, self.name)
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = engine_command(self.engine).args(["rm", "-f", &self.name]).output();
    }
}
