//! The terminal tools: start and resume, list and grep, read, write and keys,
//! interrupt, kill and release, capture, wait and exec.

use super::FugueTools;
use crate::bridge::{describe, qualify, split_terminal, ToolError};
use crate::params::*;
use fugue_client::views::{self, PaneView, ReadView, StateView, WaitView};
use fugue_client::{worktree, Client};
use fugue_protocol::{CaptureWhat, ErrorCode, PaneInfo, PaneSize, PaneState, ReadMode, SpawnSpec};
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{ProgressNotificationParam, RequestMetaObject};
use rmcp::{tool, tool_router, Peer, RoleServer};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

#[tool_router(router = terminal_tools, vis = "pub(super)")]
impl FugueTools {
    #[tool(
        description = "Start a persistent terminal (for dev servers, watchers, builds, log tails). Call fugue_list first: \
reuse a terminal that already runs the same thing instead of starting a duplicate. By default the command is typed into \
an interactive shell, which stays when the command ends. At most 10 running terminals per session."
    )]
    async fn fugue_start(&self, Parameters(p): Parameters<StartParams>) -> Result<Json<StartResult>, String> {
        let host = p.host.as_deref();
        let client = self.bridge.client_on(host).await?;
        let session = self.bridge.session(&client, p.session.as_deref(), host).await?;
        let mut spec = SpawnSpec::new(&session);
        spec.command = p.command;
        spec.args = p.args.unwrap_or_default();
        spec.shell = p.shell.unwrap_or(true);
        spec.title = p.title;
        spec.purpose = Some(p.purpose);
        spec.cwd = self.cwd_in_session(&client, &session, p.cwd.as_deref(), host).await?;
        spec.env = p.env.map(EnvInput::into_vars).unwrap_or_default();
        spec.output_byte_limit = p.output_byte_limit;
        spec.restart = p
            .restart
            .as_deref()
            .map(fugue_client::protocol::RestartPolicy::parse)
            .transpose()?
            .unwrap_or_default();
        spec.max_restarts = p.max_restarts;
        if p.cols.is_some() || p.rows.is_some() {
            spec.size = Some(PaneSize {
                cols: p.cols.unwrap_or(120),
                rows: p.rows.unwrap_or(40),
            });
        }
        let program = spec.command.as_deref().and_then(|c| c.split_whitespace().next());
        let sandbox = p
            .sandbox
            .map(|asked| fugue_client::sandbox::resolve(asked, program))
            .transpose()?;
        if sandbox.is_some() && host.is_some() {
            return Err("a sandbox runs on this machine's container engine: leave out host".into());
        }
        // The sandbox wraps the command once its directory (a worktree's) is known.
        let create = |spec: SpawnSpec| async {
            let spec = match &sandbox {
                Some(sandbox) => fugue_client::sandbox::sandboxed(sandbox, spec).await?,
                None => spec,
            };
            client.create_pane(spec).await
        };
        let (created, worktree) = match p.worktree {
            None => (create(spec).await, None),
            Some(name) => {
                if host.is_some() {
                    return Err("worktrees are made on this machine only: leave out host".into());
                }
                let dir = match &spec.cwd {
                    Some(cwd) => cwd.into(),
                    None => self.session_dir(&client, &session).await?,
                };
                let new = worktree::NewWorktree {
                    dir,
                    name: Some(name).filter(|n| !n.is_empty()),
                    base: p.base,
                };
                match worktree::start_in_worktree(&new, spec, create).await {
                    Ok(started) => (Ok(started.pane), Some((started.worktree, started.notes))),
                    Err(err) => (Err(err), None),
                }
            }
        };
        let info = match created {
            Ok(info) => info,
            Err(err) if err.code() == Some(ErrorCode::LimitReached) => {
                return Err(self.limit_message(&client, &session, err).await)
            }
            Err(err) => return Err(describe(err)),
        };
        let (worktree, notes) = worktree.unzip();
        Ok(Json(StartResult {
            terminal_id: qualify(host, &info.id.to_string()),
            session: info.session_name,
            pid: info.pid,
            title: info.title,
            branch: worktree.as_ref().map(|w| w.branch.clone()),
            worktree: worktree.map(|w| w.path),
            notes: notes.unwrap_or_default(),
        }))
    }

    /// The directory of session `name`, where a worktree is made from by default.
    async fn session_dir(&self, client: &Client, name: &str) -> Result<std::path::PathBuf, String> {
        let sessions = client.list_sessions().await.map_err(describe)?;
        let session = sessions.into_iter().find(|s| s.name == name);
        session
            .map(|s| s.cwd.into())
            .ok_or_else(|| format!("session '{name}' is gone"))
    }

    #[tool(
        description = "Start an agent CLI (Claude Code, Codex, Gemini CLI, Qwen Code) again on its own recorded session, in the same \
directory, after its terminal's process ended or was lost (a daemon restart, a reboot): `claude --resume ID`, `codex resume \
ID`, `gemini --resume ID`, with the original flags. Runs in a new terminal of the same session; returns it."
    )]
    async fn fugue_resume(&self, Parameters(p): Parameters<TerminalParams>) -> Result<Json<StartResult>, String> {
        let (client, terminal) = self.terminal(&p.terminal_id).await?;
        let info = client.resume_agent(&terminal).await.map_err(describe)?;
        let (host, _) = split_terminal(&p.terminal_id);
        Ok(Json(StartResult {
            terminal_id: qualify(host, &info.id.to_string()),
            session: info.session_name,
            pid: info.pid,
            title: info.title,
            worktree: None,
            branch: None,
            notes: Vec::new(),
        }))
    }

    /// The cap's error, with the running terminals so the agent can pick one to release.
    async fn limit_message(&self, client: &Client, session: &str, err: fugue_client::ClientError) -> String {
        let running = client.list_panes(Some(session)).await.unwrap_or_default();
        let list: Vec<String> = running
            .iter()
            .filter(|p| p.state == PaneState::Running)
            .map(|p| {
                format!(
                    "{} ({}{})",
                    p.id,
                    p.title,
                    if p.purpose.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", p.purpose)
                    }
                )
            })
            .collect();
        format!(
            "{}. Release one with fugue_release. Running terminals: {}",
            describe(err),
            list.join("; ")
        )
    }

    /// A cwd relative to the session's, checked to exist.
    async fn cwd_in_session(
        &self,
        client: &Client,
        session: &str,
        cwd: Option<&str>,
        host: Option<&str>,
    ) -> Result<Option<String>, ToolError> {
        let Some(cwd) = cwd.filter(|c| !c.is_empty()) else {
            return Ok(None);
        };
        let base = match cwd.starts_with('/') {
            true => String::from("/"),
            false => {
                let sessions = client.list_sessions().await.map_err(describe)?;
                sessions
                    .into_iter()
                    .find(|s| s.name == session || s.id.to_string() == session)
                    .map(|s| s.cwd)
                    .unwrap_or_else(|| self.bridge.config.cwd.display().to_string())
            }
        };
        self.bridge.resolve_directory(&base, Some(cwd), host)
    }

    #[tool(
        description = "List terminals (also ones people started from the CLI): id, session, title, purpose, status, pid, uptime, exit code, signal.",
        annotations(read_only_hint = true)
    )]
    async fn fugue_list(&self, Parameters(p): Parameters<ListParams>) -> Result<Json<TerminalList>, String> {
        if p.all_hosts.unwrap_or(false) {
            return self.list_all_hosts(p).await;
        }
        let client = self.client().await?;
        let panes = self.list_on(&client, &p, None).await?;
        Ok(Json(TerminalList {
            terminals: panes.iter().map(PaneView::from).collect(),
            unreachable: Vec::new(),
        }))
    }

    async fn list_on(&self, client: &Client, p: &ListParams, host: Option<&str>) -> Result<Vec<PaneInfo>, ToolError> {
        match p.all_sessions.unwrap_or(false) || host.is_some() {
            true => client.list_panes(None).await.map_err(describe),
            false => {
                let session = self.bridge.session(client, p.session.as_deref(), host).await?;
                client.list_panes(Some(&session)).await.map_err(describe)
            }
        }
    }

    /// The bridge's own terminals and every hosts.toml host's (all sessions),
    /// ids as `HOST/ID`; a host that cannot be reached is listed as such.
    async fn list_all_hosts(&self, p: ListParams) -> Result<Json<TerminalList>, String> {
        let hosts = fugue_client::remote::all_hosts()?;
        let mut names: Vec<Option<String>> = vec![None];
        names.extend(hosts.into_iter().map(|h| Some(h.name)));
        let p = &p;
        // At most ASK_AT_ONCE hosts at a time, each within ASK_WITHIN: a
        // black-holed host is listed as unreachable and delays no other.
        let listed = fugue_client::remote::ask_each(names.clone(), |host| async move {
            let host = host.as_deref();
            let client = self.bridge.client_on(host).await?;
            self.list_on(&client, p, host).await
        })
        .await;
        let listed = listed.into_iter().map(|(_, panes)| panes);
        let mut list = TerminalList {
            terminals: Vec::new(),
            unreachable: Vec::new(),
        };
        for (host, panes) in names.iter().zip(listed) {
            match panes {
                Ok(panes) => list.terminals.extend(panes.iter().map(|pane| {
                    let mut view = PaneView::from(pane);
                    view.id = qualify(host.as_deref(), &view.id);
                    view.host = host.clone();
                    view
                })),
                Err(error) => list.unreachable.push(HostError {
                    host: host.clone().unwrap_or_else(|| "local".into()),
                    error,
                }),
            }
        }
        Ok(Json(list))
    }

    #[tool(
        description = "Search the text and scrollback of every terminal (of the bridge's session, another, or all \
with all_sessions) for a regular expression: which terminal printed it, on which line (terminal_id as pane, \
SESSION:INDEX, line number, the line). Bounded: at most max_matches lines and 5 s.",
        annotations(read_only_hint = true)
    )]
    async fn fugue_grep(
        &self,
        Parameters(p): Parameters<GrepParams>,
    ) -> Result<Json<fugue_client::views::GrepView>, String> {
        let client = self.client().await?;
        let session = match p.all_sessions.unwrap_or(false) {
            true => None,
            false => Some(self.bridge.session(&client, p.session.as_deref(), None).await?),
        };
        let found = fugue_client::ops::grep(&client, &p.pattern, session.as_deref(), p.max_matches)
            .await
            .map_err(describe)?;
        Ok(Json(fugue_client::views::GrepView::from(&found)))
    }

    #[tool(
        description = "Read a terminal's output: the last lines as text (ANSI stripped unless raw). Pass since_offset (the \
next_offset of your previous read) to get only what is new; readers never disturb each other.",
        annotations(read_only_hint = true)
    )]
    async fn fugue_read(&self, Parameters(p): Parameters<ReadParams>) -> Result<Json<ReadView>, String> {
        let (client, terminal) = self.terminal(&p.terminal_id).await?;
        let mode = match p.raw.unwrap_or(false) {
            true => ReadMode::Raw {
                since: p.since_offset,
                max_bytes: p.max_bytes,
            },
            false => ReadMode::Text {
                lines: p.lines.unwrap_or(100),
                since: p.since_offset,
            },
        };
        let raw = matches!(mode, ReadMode::Raw { .. });
        let chunk = client.read_output(&terminal, mode).await.map_err(describe)?;
        let mut text = match raw {
            // Raw output keeps its escape sequences, but as visible text (`\x1b[31m`):
            // no control byte reaches the agent's context.
            true => {
                fugue_client::protocol::limits::escape_keeping_lines(&String::from_utf8_lossy(&chunk.data)).into_owned()
            }
            false => chunk.lines.join("\n"),
        };
        let mut truncated = chunk.truncated;
        if let Some(max) = p.max_bytes.map(|m| m as usize).filter(|m| text.len() > *m) {
            // Keep the newest bytes, cut at a character boundary.
            let mut start = text.len() - max;
            while !text.is_char_boundary(start) {
                start += 1;
            }
            text.drain(..start);
            truncated = true;
        }
        let mut view = ReadView::new(&chunk, text, None);
        view.truncated = truncated;
        Ok(Json(view))
    }

    #[tool(
        description = "Type text into a terminal. With submit, Enter is sent separately after the text (the text as a \
bracketed paste when the program enabled it), so TUIs and agent CLIs do not drop it."
    )]
    async fn fugue_write(&self, Parameters(p): Parameters<WriteParams>) -> Result<Json<Done>, String> {
        let (client, terminal) = self.terminal(&p.terminal_id).await?;
        let submit = p.submit.unwrap_or(false);
        match submit {
            true => client.paste(&terminal, p.input.as_bytes()).await.map_err(describe)?,
            false => client
                .write_input(&terminal, p.input.as_bytes())
                .await
                .map_err(describe)?,
        }
        if submit {
            client.send_keys(&terminal, &["Enter".into()]).await.map_err(describe)?;
        }
        Ok(Json(Done {
            success: true,
            message: format!(
                "wrote {} bytes{}",
                p.input.len(),
                if submit { " and Enter" } else { "" }
            ),
        }))
    }

    #[tool(
        description = "Send keys to a terminal: Enter, Escape, Tab, Backspace, arrows, Home, End, PageUp, PageDown, F1-F12, C-a..C-z (Ctrl), M-x (Alt), S-Enter (Shift). Encoded as the program asked: S-Enter reaches an agent TUI using the kitty keyboard protocol as Shift+Enter (a newline in Claude Code), a legacy program as Enter."
    )]
    async fn fugue_send_keys(&self, Parameters(p): Parameters<KeysParams>) -> Result<Json<Done>, String> {
        let (client, terminal) = self.terminal(&p.terminal_id).await?;
        client.send_keys(&terminal, &p.keys).await.map_err(describe)?;
        Ok(Json(Done {
            success: true,
            message: format!("sent {}", p.keys.join(" ")),
        }))
    }

    #[tool(description = "Interrupt (Ctrl-C, SIGINT) the terminal's running program; the terminal and its shell stay.")]
    async fn fugue_interrupt(&self, Parameters(p): Parameters<TerminalParams>) -> Result<Json<Done>, String> {
        let (client, terminal) = self.terminal(&p.terminal_id).await?;
        client.interrupt(&terminal).await.map_err(describe)?;
        Ok(Json(Done {
            success: true,
            message: "SIGINT sent to the foreground process".into(),
        }))
    }

    #[tool(
        description = "Kill a terminal's processes (default SIGTERM, SIGKILL after a grace period). The terminal stays readable with its exit status; use fugue_release to remove it.",
        annotations(destructive_hint = true)
    )]
    async fn fugue_kill(&self, Parameters(p): Parameters<KillParams>) -> Result<Json<TerminalStatus>, String> {
        let (client, terminal) = self.terminal(&p.terminal_id).await?;
        let signal = p.signal.unwrap_or_else(|| "TERM".into());
        client.kill_pane(&terminal, Some(&signal)).await.map_err(describe)?;
        let (info, _) = client
            .wait_for_exit(&terminal, Some(Duration::from_secs(5)))
            .await
            .map_err(describe)?;
        let message = match info.exit {
            Some(status) => format!("the process {status}"),
            None => format!(
                "SIG{} sent; the process still runs (SIGKILL follows after the grace period)",
                signal.trim_start_matches("SIG")
            ),
        };
        Ok(Json(terminal_status(p.terminal_id, &info, message)))
    }

    #[tool(
        description = "Release a terminal: kill it if it still runs and free it. Its id is unknown afterwards. A \
worktree it worked in goes too when it holds no uncommitted or unmerged work, or with discard; else it is kept and the \
result says what it holds.",
        annotations(destructive_hint = true)
    )]
    async fn fugue_release(&self, Parameters(p): Parameters<ReleaseParams>) -> Result<Json<ReleaseResult>, String> {
        let (client, terminal) = self.terminal(&p.terminal_id).await?;
        let discard = p.discard.unwrap_or(false);
        let is_remote = split_terminal(&p.terminal_id).0.is_some();
        let released = match is_remote {
            true if discard => return Err("worktrees are on this machine only: no worktree to discard".into()),
            true => client.release_pane(&terminal).await.map(|()| None),
            false => worktree::release_pane(&client, &terminal, discard).await,
        }
        .map_err(describe)?;
        let mut result = ReleaseResult {
            success: true,
            message: "terminal released".into(),
            worktree: None,
            worktree_outcome: None,
            holds: Vec::new(),
            notes: Vec::new(),
        };
        if let Some((record, released)) = released {
            let outcome = released.outcome();
            result.holds = released.holds().to_vec();
            result.notes = released.notes().to_vec();
            result.message = format!("terminal released; worktree {outcome}");
            result.worktree = Some(record.path);
            result.worktree_outcome = Some(outcome.into());
        }
        Ok(Json(result))
    }

    #[tool(
        description = "Capture what the terminal shows (the rendered screen, as a person sees it; right for TUIs): lines, cursor, size, alternate screen, title.",
        annotations(read_only_hint = true)
    )]
    async fn fugue_capture(
        &self,
        Parameters(p): Parameters<CaptureParams>,
    ) -> Result<Json<views::CaptureView>, String> {
        let (client, terminal) = self.terminal(&p.terminal_id).await?;
        let what = if p.scrollback.unwrap_or(false) {
            CaptureWhat::All
        } else {
            CaptureWhat::Screen
        };
        let c = client
            .capture(&terminal, what, (None, None), p.ansi.unwrap_or(false), false)
            .await
            .map_err(describe)?;
        Ok(Json(c.into()))
    }

    #[tool(
        description = "Wait until the first of: the process exits, a regex matches the output (or the screen), the \
terminal is idle for idle_ms, its agent CLI reaches agent_state, or it needs a person (needs). Says which one, with elapsed time. The daemon does the \
waiting: no need to poll or sleep. Sends progress notifications while waiting; stops when the call is cancelled.",
        annotations(read_only_hint = true)
    )]
    async fn fugue_wait(
        &self,
        Parameters(p): Parameters<WaitParams>,
        meta: RequestMetaObject,
        peer: Peer<RoleServer>,
        cancel: CancellationToken,
    ) -> Result<Json<WaitView>, String> {
        let (until, timeout) = p.wait.until()?;
        let (client, terminal) = self.terminal(&p.terminal_id).await?;
        let progress = meta.get_progress_token().map(|token| {
            let started = Instant::now();
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(Duration::from_secs(1));
                tick.tick().await;
                loop {
                    tick.tick().await;
                    let waited = started.elapsed();
                    let param = ProgressNotificationParam::new(token.clone(), waited.as_secs_f64())
                        .with_total(timeout.as_secs_f64())
                        .with_message(format!("waiting, {}s", waited.as_secs()));
                    if peer.notify_progress(param).await.is_err() {
                        return;
                    }
                }
            })
        });
        let outcome = tokio::select! {
            outcome = client.wait_for(&terminal, until, timeout) => outcome.map_err(describe),
            // Dropping the request future cancels it in the daemon too.
            _ = cancel.cancelled() => Err("the wait was cancelled".to_string()),
        };
        if let Some(progress) = progress {
            progress.abort();
        }
        let outcome = outcome?;
        Ok(Json(WaitView::from(outcome)))
    }

    #[tool(
        description = "Run a command in a new terminal and return its output and exit status if it finishes within \
timeout_ms; otherwise return its terminal_id to keep following it with fugue_read / fugue_wait."
    )]
    async fn fugue_exec(&self, Parameters(p): Parameters<ExecParams>) -> Result<Json<ExecResult>, String> {
        let host = p.host.as_deref();
        let client = self.bridge.client_on(host).await?;
        let session = self.bridge.session(&client, p.session.as_deref(), host).await?;
        let mut spec = SpawnSpec::new(&session);
        let args = p.args.unwrap_or_default();
        if args.is_empty() && p.command.trim().contains(char::is_whitespace) {
            spec.command = Some("sh".into());
            spec.args = vec!["-c".into(), p.command.clone()];
        } else {
            spec.command = Some(p.command.clone());
            spec.args = args;
        }
        spec.shell = false;
        // The command may be long or hold anything; the purpose is a label for people.
        spec.purpose = Some(format!(
            "exec: {}",
            fugue_client::protocol::limits::truncate_for_display(&p.command, 200)
        ));
        spec.cwd = self.cwd_in_session(&client, &session, p.cwd.as_deref(), host).await?;
        spec.env = p.env.map(EnvInput::into_vars).unwrap_or_default();
        // Checked before anything starts, so a refused timeout leaves no pane behind.
        let timeout_ms = p.timeout_ms.unwrap_or(10_000);
        fugue_client::protocol::limits::check_timeout("timeout_ms", timeout_ms).map_err(|e| e.message)?;
        let info = client.create_pane(spec).await.map_err(describe)?;
        let id = info.id.to_string();
        let timeout = Duration::from_millis(timeout_ms);
        let (info, finished) = client.wait_for_exit(&id, Some(timeout)).await.map_err(describe)?;
        let chunk = client
            .read_output(
                &id,
                ReadMode::Text {
                    lines: 1000,
                    since: None,
                },
            )
            .await
            .map_err(describe)?;
        let state = StateView::from(&info);
        Ok(Json(ExecResult {
            terminal_id: qualify(host, &id),
            finished,
            exit_code: state.exit_code,
            signal: state.signal,
            output: chunk.lines.join("\n"),
            truncated: chunk.truncated,
        }))
    }
}

fn terminal_status(terminal_id: String, info: &PaneInfo, message: String) -> TerminalStatus {
    TerminalStatus {
        terminal_id,
        state: info.into(),
        message,
    }
}
