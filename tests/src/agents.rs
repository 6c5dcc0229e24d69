//! The real agent CLIs (Claude Code, Codex, Gemini CLI, Qwen Code, opencode,
//! aider) run offline: each in a
//! private HOME with the configuration that skips its onboarding, pointed at the
//! model stub (`src/bin/model-stub.rs`), inside a network namespace that has only
//! loopback (the daemon runs there, so do its panes and the stub).
//!
//! The CLIs are the npm packages pinned in `tests/agents/package.json` and aider
//! pinned in `tests/agents/requirements.txt`, which scripts/test installs into
//! `tests/agents/node_modules` and `tests/agents/venv` (or, with
//! `FUGUE_AGENTS_DIR`, another install: scripts/agents-latest's newest releases).

use crate::{bin, Daemon, DEADLINE};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// One of the real agent CLIs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cli {
    Claude,
    Codex,
    Gemini,
    Qwen,
    OpenCode,
    Aider,
}

impl Cli {
    pub const ALL: [Cli; 6] = [
        Cli::Claude,
        Cli::Codex,
        Cli::Gemini,
        Cli::Qwen,
        Cli::OpenCode,
        Cli::Aider,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Cli::Claude => "claude",
            Cli::Codex => "codex",
            Cli::Gemini => "gemini",
            Cli::Qwen => "qwen",
            Cli::OpenCode => "opencode",
            Cli::Aider => "aider",
        }
    }

    /// Its npm package; `None` for aider (a Python package, in `venv/`).
    pub fn npm_package(self) -> Option<&'static str> {
        match self {
            Cli::Claude => Some("@anthropic-ai/claude-code"),
            Cli::Codex => Some("@openai/codex"),
            Cli::Gemini => Some("@google/gemini-cli"),
            Cli::Qwen => Some("@qwen-code/qwen-code"),
            Cli::OpenCode => Some("opencode-ai"),
            Cli::Aider => None,
        }
    }

    /// Whether the model hears how its tool call went (a tool result): aider
    /// runs the shell commands the model suggests without telling it.
    pub fn reports_tool_results(self) -> bool {
        self != Cli::Aider
    }

    /// The version installed for the tests (the pin in tests/agents/package.json
    /// or requirements.txt, or what scripts/agents-latest installed).
    pub fn version(self) -> String {
        let Some(package) = self.npm_package() else {
            let out = Command::new(self.executable())
                .arg("--version")
                .env("HOME", std::env::temp_dir())
                .output()
                .expect("aider --version");
            let text = String::from_utf8_lossy(&out.stdout);
            return text.split_whitespace().last().unwrap_or("?").to_string();
        };
        let installed = agents_dir().join("node_modules").join(package).join("package.json");
        let manifest: Value = serde_json::from_str(&std::fs::read_to_string(&installed).unwrap_or_default())
            .unwrap_or_else(|_| {
                panic!(
                    "{} is not installed: scripts/test installs the agent CLIs",
                    installed.display()
                )
            });
        manifest["version"].as_str().expect("a version").to_string()
    }

    /// The CLI's executable in the test install.
    pub fn executable(self) -> PathBuf {
        let path = match self {
            Cli::Aider => agents_dir().join("venv/bin/aider"),
            _ => agents_dir().join("node_modules/.bin").join(self.name()),
        };
        assert!(
            path.exists(),
            "{} is not installed: scripts/test installs the agent CLIs (npm ci and a venv in tests/agents)",
            path.display()
        );
        path
    }
}

/// Where the agent CLIs are installed: tests/agents, or `FUGUE_AGENTS_DIR`
/// (scripts/agents-latest points it at the newest releases).
fn agents_dir() -> PathBuf {
    match std::env::var_os("FUGUE_AGENTS_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("agents"),
    }
}

/// The model stub, in the daemon's network namespace.
pub struct ModelStub {
    child: Child,
    pub port: u16,
    log: PathBuf,
}

impl ModelStub {
    /// Starts the stub in `daemon`'s network namespace (see [`Daemon::start_offline`]).
    pub fn start(daemon: &Daemon) -> ModelStub {
        Self::start_in(daemon.pid(), daemon.dir.path(), &bin("model-stub"))
    }

    /// Starts the stub `program` in the network namespace of process
    /// `netns_of`, logging to `dir/model-stub.log` (for the benchmark, whose
    /// daemon and binaries are its own).
    pub fn start_in(netns_of: u32, dir: &Path, program: &Path) -> ModelStub {
        let log = dir.join("model-stub.log");
        let mut child = Command::new("nsenter")
            .arg(format!("--net=/proc/{netns_of}/ns/net"))
            .arg("--")
            .arg(program)
            .arg("--log")
            .arg(&log)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start model-stub");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("model-stub's port");
        let port = line
            .strip_prefix("listening ")
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("model-stub said {line:?}"));
        ModelStub { child, port, log }
    }

    /// The stub's process (its network namespace is the offline daemon's).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Everything the stub recorded so far, in order.
    pub fn events(&self) -> Vec<Value> {
        events_in(&self.log)
    }

    /// Unix ms of the `n`th (from 0) recorded `event` (turn_started, tool_requested,
    /// tool_result, turn_finished), waiting for it.
    pub fn nth(&self, event: &str, n: usize) -> u64 {
        let what = format!("the model stub's {event} #{n}");
        crate::files::until_changed(crate::files::watched(&self.log), &what, DEADLINE * 4, || {
            self.events()
                .iter()
                .filter(|e| e["event"] == event)
                .nth(n)
                .and_then(|e| e["at"].as_u64())
        })
    }

    /// The first recorded event `find` picks, waiting for it (woken by the
    /// stub's writes to its log) on a blocking thread: the test's runtime
    /// goes on serving what the model waits for.
    pub async fn until<T: Send + 'static>(
        &self,
        what: &str,
        deadline: std::time::Duration,
        find: impl Fn(&Value) -> Option<T> + Send + 'static,
    ) -> T {
        let log = self.log.clone();
        let watched = crate::files::watched(&log).to_path_buf();
        crate::files::until_changed_async(&watched, what, deadline, move || events_in(&log).iter().find_map(&find))
            .await
    }
}

/// Everything a model stub logging to `log` recorded so far, in order.
pub fn events_in(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

impl Drop for ModelStub {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How to start one CLI in a pane: program, arguments, environment, directory.
pub struct Launch {
    pub cli: Cli,
    /// The first prompt, when it cannot go on the command line (aider): typed
    /// once the CLI is at rest.
    pub typed_prompt: Option<String>,
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub project: PathBuf,
    pub home: PathBuf,
}

impl Launch {
    /// The same CLI started at its empty prompt: no first prompt (which is
    /// the last argument, after its flag where it has one).
    pub fn without_prompt(mut self) -> Launch {
        self.typed_prompt = None;
        if self.cli != Cli::Aider {
            self.args.pop();
            if self
                .args
                .last()
                .is_some_and(|a| a == "--prompt-interactive" || a == "--prompt")
            {
                self.args.pop();
            }
        }
        self
    }

    /// How it runs in a pane of `session`: directly (no shell), in its project.
    pub fn spec(&self, session: &str) -> fugue_client::protocol::SpawnSpec {
        let mut spec = fugue_client::protocol::SpawnSpec::new(session);
        spec.command = Some(self.program.display().to_string());
        spec.args = self.args.clone();
        spec.env = self
            .env
            .iter()
            .map(|(name, value)| fugue_client::protocol::EnvVar {
                name: name.clone(),
                value: value.clone(),
            })
            .collect();
        spec.cwd = Some(self.project.display().to_string());
        spec.shell = false;
        spec
    }

    /// The `fugue_start` arguments that run it directly (no shell) at 120x40.
    pub fn start_params(&self, purpose: &str) -> Value {
        let env: serde_json::Map<String, Value> = self.env.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        json!({
            "purpose": purpose,
            "command": self.program,
            "args": self.args,
            "shell": false,
            "cwd": self.project,
            "env": env,
            "cols": 120,
            "rows": 40,
        })
    }
}

/// A dummy Anthropic key: Claude Code asks about a key it has not seen approved,
/// so its last 20 characters go into `customApiKeyResponses.approved`.
const ANTHROPIC_KEY: &str = "sk-ant-api03-fugue-test-key-not-a-real-one-0000";

/// Claude Code's `~/.claude.json`: onboarding done, `project` trusted, the
/// test key approved.
pub fn claude_config(project: &Path) -> serde_json::Value {
    json!({
        "hasCompletedOnboarding": true,
        "theme": "dark",
        "projects": {project.display().to_string(): {
            "hasTrustDialogAccepted": true,
            "hasCompletedProjectOnboarding": true,
        }},
        "customApiKeyResponses": {"approved": [&ANTHROPIC_KEY[ANTHROPIC_KEY.len() - 20..]], "rejected": []},
    })
}

/// Claude Code's environment for the model stub at `base` (`http://HOST:PORT`).
pub fn claude_env(base: &str) -> Vec<(String, String)> {
    vec![
        ("ANTHROPIC_BASE_URL".into(), base.into()),
        ("ANTHROPIC_API_KEY".into(), ANTHROPIC_KEY.into()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(), "1".into()),
        ("DISABLE_AUTOUPDATER".into(), "1".into()),
    ]
}

/// Writes `cli`'s configuration into a private HOME under `root` and says how to
/// start it in a fresh project directory, with `prompt` as its first prompt.
pub fn prepare(cli: Cli, stub: &ModelStub, root: &Path, prompt: &str) -> Launch {
    let home = root.join(format!("home-{}", cli.name()));
    let project = root.join(format!("project-{}", cli.name()));
    std::fs::create_dir_all(&project).expect("project dir");
    let project = project.canonicalize().expect("project path");
    let write = |relative: &str, text: String| {
        let path = home.join(relative);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("config dir");
        std::fs::write(&path, text).expect("write config");
    };
    let base = format!("http://127.0.0.1:{}", stub.port);
    // Its config under the private HOME, whatever XDG_CONFIG_HOME the daemon
    // has (opencode reads $XDG_CONFIG_HOME/opencode when it is set).
    let mut env = vec![
        ("HOME".to_string(), home.display().to_string()),
        (
            "XDG_CONFIG_HOME".to_string(),
            home.join(".config").display().to_string(),
        ),
    ];
    let mut typed_prompt = None;
    let args = match cli {
        Cli::Claude => {
            write(".claude.json", claude_config(&project).to_string());
            env.extend(claude_env(&base));
            vec!["--permission-mode".into(), "default".into(), prompt.into()]
        }
        Cli::Codex => {
            let config = format!(
                "model = \"gpt-stub\"\nmodel_provider = \"stub\"\napproval_policy = \"on-request\"\n\
                 sandbox_mode = \"read-only\"\n\n[model_providers.stub]\nname = \"stub\"\n\
                 base_url = \"{base}/v1\"\nwire_api = \"responses\"\nenv_key = \"STUB_API_KEY\"\n\n\
                 [projects.\"{}\"]\ntrust_level = \"trusted\"\n",
                project.display()
            );
            write(".codex/config.toml", config);
            env.push(("STUB_API_KEY".into(), "stub".into()));
            vec![prompt.into()]
        }
        Cli::Gemini => {
            // Gemini CLI reads hooks only from its settings files.
            let hooks = hooks_running_fugue(
                cli,
                &["BeforeAgent", "BeforeTool", "AfterTool", "Notification", "AfterAgent"],
            );
            let settings = json!({"security": {"auth": {"selectedType": "gemini-api-key"}}, "hooks": hooks});
            write(".gemini/settings.json", settings.to_string());
            let trusted = json!({project.display().to_string(): "TRUST_FOLDER"});
            write(".gemini/trustedFolders.json", trusted.to_string());
            env.extend([
                ("GOOGLE_GEMINI_BASE_URL".into(), base),
                ("GEMINI_API_KEY".into(), "stub".into()),
            ]);
            vec!["--prompt-interactive".into(), prompt.into()]
        }
        Cli::Qwen => {
            // Its hooks are Claude Code's, read from its settings file.
            let hooks = hooks_running_fugue(
                cli,
                &[
                    "UserPromptSubmit",
                    "PreToolUse",
                    "PostToolUse",
                    "PermissionRequest",
                    "Notification",
                    "Stop",
                ],
            );
            let settings = json!({"security": {"auth": {"selectedType": "openai"}}, "hooks": hooks});
            write(".qwen/settings.json", settings.to_string());
            let trusted = json!({project.display().to_string(): "TRUST_FOLDER"});
            write(".qwen/trustedFolders.json", trusted.to_string());
            env.extend([
                ("OPENAI_BASE_URL".into(), format!("{base}/v1")),
                ("OPENAI_API_KEY".into(), "stub".into()),
                ("OPENAI_MODEL".into(), "gpt-stub".into()),
            ]);
            // Its default (since 0.2x) asks an LLM classifier instead of a person.
            vec![
                "--approval-mode".into(),
                "default".into(),
                "--prompt-interactive".into(),
                prompt.into(),
            ]
        }
        Cli::OpenCode => {
            let config = json!({
                "provider": {"stub": {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "Stub",
                    "options": {"baseURL": format!("{base}/v1"), "apiKey": "stub"},
                    "models": {"gpt-stub": {"name": "GPT Stub", "tool_call": true}},
                }},
                "model": "stub/gpt-stub",
                "small_model": "stub/gpt-stub",
                "permission": {"bash": "ask", "edit": "ask"},
                "autoupdate": false,
                "share": "disabled",
            });
            write(".config/opencode/opencode.json", config.to_string());
            env.extend([
                ("OPENCODE_DISABLE_AUTOUPDATE".into(), "1".into()),
                ("OPENCODE_DISABLE_MODELS_FETCH".into(), "1".into()),
            ]);
            vec!["--prompt".into(), prompt.into()]
        }
        Cli::Aider => {
            typed_prompt = Some(prompt.to_string());
            // litellm fetches its model price list from GitHub unless told not to.
            env.push(("LITELLM_LOCAL_MODEL_COST_MAP".into(), "True".into()));
            [
                "--openai-api-base",
                &format!("{base}/v1"),
                "--openai-api-key",
                "stub",
                "--model",
                "openai/gpt-stub",
                // The edit format in which a fenced shell block is a command to run.
                "--edit-format",
                "diff",
                "--no-git",
                "--no-show-model-warnings",
                "--no-check-update",
                "--analytics-disable",
                "--no-show-release-notes",
            ]
            .map(String::from)
            .to_vec()
        }
    };
    Launch {
        cli,
        typed_prompt,
        program: cli.executable(),
        args,
        env,
        project,
        home,
    }
}

/// The `hooks` of a settings file that run `fugue agent-event --agent CLI` on
/// each of `events`: the lines the README tells a user to add (Gemini CLI and
/// Qwen Code read hooks only from their settings files).
fn hooks_running_fugue(cli: Cli, events: &[&str]) -> serde_json::Map<String, Value> {
    let hook = json!([{"hooks": [{
        "type": "command",
        "command": format!("'{}' agent-event --agent {}", bin("fugue").display(), cli.name()),
        "timeout": 5000,
    }]}]);
    events.iter().map(|e| (e.to_string(), hook.clone())).collect()
}

/// Ends every process whose HOME is `home` (Codex leaves a detached app-server
/// daemon behind when it exits).
pub fn end_processes_with_home(home: &Path) {
    let needle = format!("HOME={}", home.display());
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|p| p.parse::<i32>().ok()) else {
            continue;
        };
        let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        if environ.split(|b| *b == 0).any(|var| var == needle.as_bytes()) {
            crate::send_signal(pid as u32, libc::SIGKILL);
        }
    }
}
