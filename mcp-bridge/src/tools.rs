//! The MCP tools. Each call is its own request on the shared connection, so calls
//! run concurrently. Failures are tool results with `isError` and a message that
//! says what was wrong and what would work; rmcp reports arguments that do not
//! fit a tool's schema the same way.

use crate::bridge::{describe, qualify, split_terminal, Bridge, ToolError};
use crate::params::*;
use crate::resources::{self, Resource};
use crate::schema::{drop_null_fields, drop_null_unions};
use crate::tasks;
use fugue_client::views::{self, PaneView, ReadView, SessionView, StateView, WaitView};
use fugue_client::Client;
use fugue_protocol::{CaptureWhat, ErrorCode, PaneInfo, PaneSize, PaneState, PermissionAnswer, ReadMode, SpawnSpec};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::{InputResponses, RequestState};
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{
    CallToolRequestParams, ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::model::{CallToolResponse, InputRequiredResult, ProgressNotificationParam, RequestMetaObject};
use rmcp::service::RequestContext;
use rmcp::service::{NotificationContext, SubscriptionContext};
use rmcp::ErrorData;
use rmcp::{tool, tool_handler, tool_router, Peer, RoleServer, ServerHandler};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// The MCP server: every fugue tool, and terminals as resources.
#[derive(Clone)]
pub struct FugueTools {
    bridge: Bridge,
    tool_router: ToolRouter<Self>,
    /// Resources this MCP session watches for `resources/subscribe`: uri ->
    /// what stops its watch.
    watches: Arc<Mutex<HashMap<String, CancellationToken>>>,
    /// The parent of every watch the session starts: cancelled when the last
    /// clone goes (the MCP session ended), through `_alive`.
    session: CancellationToken,
    _alive: Arc<tokio_util::sync::DropGuard>,
}

/// The tools' router, made once: its schemas rewritten to drop `null` (see [`crate::schema`]).
fn router() -> ToolRouter<FugueTools> {
    static ROUTER: std::sync::OnceLock<ToolRouter<FugueTools>> = std::sync::OnceLock::new();
    ROUTER
        .get_or_init(|| {
            let mut router = FugueTools::tool_router();
            for route in router.map.values_mut() {
                let tool = &mut route.attr;
                let mut input = (*tool.input_schema).clone();
                drop_null_unions(&mut input);
                tool.input_schema = Arc::new(input);
                if let Some(output) = &tool.output_schema {
                    let mut output = (**output).clone();
                    drop_null_unions(&mut output);
                    tool.output_schema = Some(Arc::new(output));
                }
            }
            router
        })
        .clone()
}

fn terminal_status(terminal_id: String, info: &PaneInfo, message: String) -> TerminalStatus {
    TerminalStatus {
        terminal_id,
        state: info.into(),
        message,
    }
}

#[tool_router]
impl FugueTools {
    pub fn new(bridge: Bridge) -> Self {
        let session = CancellationToken::new();
        Self {
            bridge,
            tool_router: router(),
            watches: Arc::default(),
            session: session.clone(),
            _alive: Arc::new(session.drop_guard()),
        }
    }

    async fn client(&self) -> Result<Client, ToolError> {
        self.bridge.client().await
    }

    /// The connection a terminal id (`HOST/ID` or `ID`) lives on, and its id there.
    async fn terminal(&self, terminal_id: &str) -> Result<(Client, String), ToolError> {
        let (host, id) = split_terminal(terminal_id);
        Ok((self.bridge.client_on(host).await?, id.to_string()))
    }

    // ---- sessions ----

    #[tool(
        description = "List fugue sessions: id, name, cwd, number of terminals, creation time.",
        annotations(read_only_hint = true)
    )]
    async fn fugue_list_sessions(&self) -> Result<Json<SessionList>, String> {
        let client = self.client().await?;
        let sessions = client.list_sessions().await.map_err(describe)?;
        Ok(Json(SessionList {
            sessions: sessions.into_iter().map(|s| SessionView::from(&s)).collect(),
        }))
    }

    #[tool(
        description = "Create a session: a named group of terminals with its own working directory and environment."
    )]
    async fn fugue_create_session(
        &self,
        Parameters(p): Parameters<CreateSessionParams>,
    ) -> Result<Json<SessionView>, String> {
        let client = self.client().await?;
        let cwd = self.bridge.new_session_dir(p.cwd.as_deref())?;
        let env = p.env.map(EnvInput::into_vars).unwrap_or_default();
        let s = client
            .create_session(&p.name, cwd.as_deref().map(std::path::Path::new), env)
            .await
            .map_err(describe)?;
        Ok(Json(SessionView::from(&s)))
    }

    #[tool(
        description = "Kill a session by name or UUID: every terminal in it is terminated and it is removed.",
        annotations(destructive_hint = true)
    )]
    async fn fugue_kill_session(
        &self,
        Parameters(p): Parameters<SessionParams>,
    ) -> Result<Json<KillSessionResult>, String> {
        let client = self.client().await?;
        let s = client.destroy_session(&p.session).await.map_err(describe)?;
        Ok(Json(KillSessionResult {
            success: true,
            message: "Session killed".into(),
            session_id: s.id.to_string(),
            session_name: s.name,
        }))
    }

    #[tool(description = "Rename a session.")]
    async fn fugue_rename_session(
        &self,
        Parameters(p): Parameters<RenameSessionParams>,
    ) -> Result<Json<RenameSessionResult>, String> {
        let client = self.client().await?;
        let (s, previous) = client.rename_session(&p.session, &p.name).await.map_err(describe)?;
        Ok(Json(RenameSessionResult {
            success: true,
            session_id: s.id.to_string(),
            previous_name: previous,
            new_name: s.name,
        }))
    }

    // ---- terminals ----

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
        let info = match client.create_pane(spec).await {
            Ok(info) => info,
            Err(err) if err.code() == Some(ErrorCode::LimitReached) => {
                return Err(self.limit_message(&client, &session, err).await)
            }
            Err(err) => return Err(describe(err)),
        };
        Ok(Json(StartResult {
            terminal_id: qualify(host, &info.id.to_string()),
            session: info.session_name,
            pid: info.pid,
            title: info.title,
        }))
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
        let listed = futures::future::join_all(names.iter().map(|host| async move {
            let host = host.as_deref();
            let client = self.bridge.client_on(host).await?;
            self.list_on(&client, p, host).await
        }))
        .await;
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
        description = "Release a terminal: kill it if it still runs and free it. Its id is unknown afterwards.",
        annotations(destructive_hint = true)
    )]
    async fn fugue_release(&self, Parameters(p): Parameters<TerminalParams>) -> Result<Json<Done>, String> {
        let (client, terminal) = self.terminal(&p.terminal_id).await?;
        client.release_pane(&terminal).await.map_err(describe)?;
        Ok(Json(Done {
            success: true,
            message: "terminal released".into(),
        }))
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

    // ---- agents ----

    #[tool(
        description = "List agent CLIs (Claude Code, Codex, Gemini CLI, Qwen Code, opencode, aider) running in terminals of every session, with what they are doing.",
        annotations(read_only_hint = true)
    )]
    async fn fugue_list_agents(&self) -> Result<Json<AgentList>, String> {
        let client = self.client().await?;
        let panes = client.list_panes(None).await.map_err(describe)?;
        let statuses = futures::future::join_all(panes.iter().map(|p| {
            let client = client.clone();
            let id = p.id.to_string();
            async move { client.agent_status(&id).await }
        }))
        .await;
        let agents = panes
            .iter()
            .zip(statuses)
            .filter_map(|(pane, status)| {
                let status = status.ok()?;
                Some(AgentView {
                    terminal_id: pane.id.to_string(),
                    session: pane.session_name.clone(),
                    cwd: pane.cwd.clone(),
                    agent: status.agent?.as_str().into(),
                    state: status.state.as_str().into(),
                })
            })
            .collect();
        Ok(Json(AgentList { agents }))
    }

    #[tool(
        description = "What the agent CLI in a terminal is doing: state (starting, busy, waiting_for_permission, waiting_for_answer, idle, unknown or exited), the two axes behind it (turn: running / not_running / unknown; needs: nothing / permission / question / finished_unseen), where that was read (source: hook, terminal, session_file or screen), its version, its session_id, since when, what decided, and while it waits for permission the prompt_id that fugue_approve / fugue_deny take.",
        annotations(read_only_hint = true)
    )]
    async fn fugue_agent_status(
        &self,
        Parameters(p): Parameters<TerminalParams>,
    ) -> Result<Json<AgentStatusView>, String> {
        let (client, terminal) = self.terminal(&p.terminal_id).await?;
        let status = client.agent_status(&terminal).await.map_err(describe)?;
        Ok(Json(agent_view(p.terminal_id, status, None)))
    }

    #[tool(
        description = "Approve the permission request an agent CLI is waiting on (presses Enter), given the prompt_id \
fugue_agent_status returned for it: nothing is sent unless that same prompt is still on screen, and answering it again \
sends nothing. Returns the agent's state after."
    )]
    async fn fugue_approve(&self, Parameters(p): Parameters<AnswerParams>) -> Result<Json<AgentStatusView>, String> {
        self.answer_permission(&p.terminal_id, &p.prompt_id, PermissionAnswer::Approve)
            .await
    }

    #[tool(
        description = "Deny the permission request an agent CLI is waiting on (presses Escape), given the prompt_id \
fugue_agent_status returned for it: nothing is sent unless that same prompt is still on screen, and answering it again \
sends nothing. Returns the agent's state after."
    )]
    async fn fugue_deny(&self, Parameters(p): Parameters<AnswerParams>) -> Result<Json<AgentStatusView>, String> {
        self.answer_permission(&p.terminal_id, &p.prompt_id, PermissionAnswer::Deny)
            .await
    }

    async fn answer_permission(
        &self,
        terminal_id: &str,
        prompt_id: &str,
        answer: PermissionAnswer,
    ) -> Result<Json<AgentStatusView>, String> {
        let (client, terminal) = self.terminal(terminal_id).await?;
        let terminal = terminal.as_str();
        let before = fugue_client::ops::output_end(&client, terminal)
            .await
            .map_err(describe)?;
        // The daemon checks the prompt and sends the key in one step.
        let answered = client
            .answer_permission(terminal, prompt_id, answer)
            .await
            .map_err(describe)?;
        if !answered.already {
            // Let the agent react: its first output after the key, then quiet.
            fugue_client::ops::wait_reaction(&client, terminal, before, 500, Duration::from_secs(5))
                .await
                .map_err(describe)?;
        }
        let after = client.agent_status(terminal).await.map_err(describe)?;
        let already = answered.already.then(|| answered.answer.past().to_string());
        Ok(Json(agent_view(terminal_id.to_string(), after, already)))
    }

    #[tool(
        description = "Give an agent CLI a prompt: the text is pasted, then Enter is sent separately. Refused \
(agent_blocked) while the agent waits for a permission or an answer, and (draft_present, with the text) while a \
person's unsent text sits in its input box. Returns a receipt: outcome started (with the \
evidence and when) or prompt_stalled. With idempotency_key a retry sends nothing and returns the first receipt."
    )]
    async fn fugue_send_prompt(&self, Parameters(p): Parameters<PromptParams>) -> Result<Json<PromptResult>, String> {
        let (client, terminal) = self.terminal(&p.terminal_id).await?;
        let sent = fugue_client::ops::send_prompt(&client, &terminal, &p.text, p.idempotency_key.as_deref())
            .await
            .map_err(describe)?;
        Ok(Json(PromptResult {
            terminal_id: p.terminal_id,
            sent,
        }))
    }

    #[tool(
        description = "Start a new agent CLI (claude by default) in a new session with a first prompt. A person is asked \
to confirm first (MCP elicitation); nothing starts unless they accept.",
        output_schema = rmcp::handler::server::common::schema_for_output::<SpawnAgentResult>()
    )]
    async fn fugue_spawn_agent(
        &self,
        Parameters(p): Parameters<SpawnAgentParams>,
        peer: Peer<RoleServer>,
        context: RequestContext<RoleServer>,
        RequestState(request_state): RequestState,
        InputResponses(responses): InputResponses,
    ) -> Result<CallToolResponse, String> {
        let agent = p.agent.unwrap_or_else(|| "claude".into());
        let Some(command) = self.bridge.config.agent_commands.get(&agent).cloned() else {
            let known: Vec<&str> = self.bridge.config.agent_commands.keys().map(String::as_str).collect();
            return Err(format!("unknown agent '{agent}'; agents: {}", known.join(", ")));
        };
        let client = self.client().await?;
        let name = p.name.unwrap_or_else(|| format!("agent-{}", &uuid_suffix()));
        fugue_protocol::target::validate_session_name(&name).map_err(|e| e.message)?;
        if client
            .list_sessions()
            .await
            .map_err(describe)?
            .iter()
            .any(|s| s.name == name)
        {
            return Err(format!("a session named '{name}' already exists; choose another name"));
        }
        let dir = self.bridge.new_session_dir(p.working_dir.as_deref())?;
        let place = dir.as_deref().unwrap_or("its daemon's default directory");

        let question = format!("Start {agent} in {place} with prompt {:?}?", p.prompt);
        let modern = context
            .protocol_version()
            .is_some_and(|v| v >= rmcp::model::ProtocolVersion::V_2026_07_28);
        let asked = match modern {
            true => self.confirm_by_input_request(&context, &question, request_state, responses)?,
            false => self.confirm_by_elicitation(&peer, question).await?,
        };
        if let Some(ask) = asked {
            // The client asks the person, then calls again with the answer.
            return Ok(ask.into());
        }

        client
            .create_session(&name, dir.as_deref().map(std::path::Path::new), vec![])
            .await
            .map_err(describe)?;
        let mut words = command.split_whitespace().map(String::from);
        let mut spec = SpawnSpec::new(&name);
        spec.command = words.next();
        spec.args = words.chain(std::iter::once(p.prompt)).collect();
        spec.shell = false;
        spec.title = Some(agent.clone());
        spec.purpose = Some(format!("{agent} agent"));
        let info = match client.create_pane(spec).await {
            Ok(info) => info,
            Err(err) => {
                let _ = client.destroy_session(&name).await;
                return Err(describe(err));
            }
        };
        let result = SpawnAgentResult {
            terminal_id: info.id.to_string(),
            session: name,
            pid: info.pid,
            agent,
        };
        let value = serde_json::to_value(result).map_err(|e| e.to_string())?;
        Ok(rmcp::model::CallToolResult::structured(value).into())
    }
}

/// How to start an agent was the person asked: `None` means they said yes (or
/// `--allow-spawn` stands in for them); `Some` is the question to send first.
type Confirmation = Result<Option<InputRequiredResult>, String>;

impl FugueTools {
    /// Before 2026-07-28: the server asks the client mid-call (elicitation/create).
    async fn confirm_by_elicitation(&self, peer: &Peer<RoleServer>, question: String) -> Confirmation {
        match peer.elicit::<SpawnConfirmation>(question).await {
            Ok(Some(SpawnConfirmation { confirm: true })) | Err(rmcp::service::ElicitationError::NoContent) => Ok(None),
            Ok(_)
            | Err(rmcp::service::ElicitationError::UserDeclined)
            | Err(rmcp::service::ElicitationError::UserCancelled) => {
                Err("the person declined: the agent was not started".into())
            }
            Err(err) => self.cannot_ask(&err.to_string()),
        }
    }

    /// From 2026-07-28 a server may not call its client: it answers the tool call
    /// with "input required" (the question), and the client calls again with the
    /// person's answer and the request state it was given.
    fn confirm_by_input_request(
        &self,
        context: &RequestContext<RoleServer>,
        question: &str,
        request_state: Option<String>,
        responses: Option<rmcp::model::InputResponses>,
    ) -> Confirmation {
        let mut pending = self.bridge.pending_questions.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(state) = request_state {
            if !pending.answer(&state, question) {
                return Err(
                    "this answer is for no question still open (answered already, expired, or asked for \
other arguments); call fugue_spawn_agent again"
                        .into(),
                );
            }
            let answer = responses.and_then(|mut r| r.remove(CONFIRM_KEY)).unwrap_or_default();
            let answer: rmcp::model::ElicitResult = serde_json::from_value(answer)
                .map_err(|e| format!("the client's answer to the confirmation is not an elicitation result: {e}"))?;
            let confirmed = answer.action == rmcp::model::ElicitationAction::Accept
                && answer.content.as_ref().is_some_and(|c| c["confirm"] == true);
            return match confirmed {
                true => Ok(None),
                false => Err("the person declined: the agent was not started".into()),
            };
        }
        let can_ask = context.client_capabilities().is_some_and(|c| c.elicitation.is_some());
        if !can_ask {
            return self.cannot_ask("the client announced no elicitation capability");
        }
        let schema = rmcp::model::ElicitationSchema::from_type::<SpawnConfirmation>().map_err(|e| e.to_string())?;
        let ask = rmcp::model::ElicitRequest::new(rmcp::model::ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: question.to_string(),
            requested_schema: schema,
        });
        let requests = [(CONFIRM_KEY.to_string(), rmcp::model::InputRequest::Elicitation(ask))].into();
        Ok(Some(InputRequiredResult::new(
            Some(requests),
            Some(pending.ask(question)),
        )))
    }

    fn cannot_ask(&self, why: &str) -> Confirmation {
        if self.bridge.config.allow_spawn {
            tracing::info!(why, "no elicitation; --allow-spawn lets the spawn go ahead");
            return Ok(None);
        }
        Err(format!(
            "cannot ask a person to confirm ({why}); this client does not support MCP elicitation. Start fugue-mcp with \
--allow-spawn to allow spawning without confirmation"
        ))
    }
}

/// The key of the confirmation among a call's input requests.
const CONFIRM_KEY: &str = "confirm";

/// What fugue_agent_status, fugue_approve and fugue_deny return.
fn agent_view(
    terminal_id: String,
    status: fugue_protocol::AgentInfo,
    already_answered: Option<String>,
) -> AgentStatusView {
    AgentStatusView {
        terminal_id,
        status: (&status).into(),
        already_answered,
    }
}

fn uuid_suffix() -> String {
    fugue_protocol::SessionId::new().simple()[..8].to_string()
}

const INSTRUCTIONS: &str = "Terminals for agents, run by fugued. Start long-running processes with fugue_start \
(check fugue_list first to reuse one), follow them with fugue_read (since_offset) and fugue_wait (no polling needed), \
steer them with fugue_write / fugue_send_keys / fugue_interrupt, and clean up with fugue_kill / fugue_release. \
Terminals are also resources (fugue://panes, fugue://agents, fugue://pane/{id}/screen and /output): subscribe to be \
told when one changes. Clients that declare the tasks extension get a task for a fugue_wait, fugue_exec or \
fugue_spawn_agent call that is not done within 0.5 s.";

impl FugueTools {
    /// Watches `resource` until `stop`, calling `tell` after each change until
    /// it fails (the client went), which stops the watch too.
    fn follow<Tell, Told>(&self, resource: Resource, stop: CancellationToken, tell: Tell)
    where
        Tell: Fn(String) -> Told + Send + 'static,
        Told: std::future::Future<Output = bool> + Send,
    {
        let (updates, mut updated) = tokio::sync::mpsc::channel(1);
        tokio::spawn(resources::watch(self.bridge.clone(), resource, updates, stop.clone()));
        tokio::spawn(async move {
            while let Some(uri) = updated.recv().await {
                if !tell(uri).await {
                    break;
                }
            }
            stop.cancel();
        });
    }
}

impl FugueTools {
    /// Runs a call to its end. Results leave out `null` fields, as their
    /// schemas say (see [`crate::schema`]).
    async fn call_to_end(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let call = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
        let mut response = self.tool_router.call(call).await?;
        if let CallToolResponse::Complete(result) = &mut response {
            if let Some(structured) = &mut result.structured_content {
                drop_null_fields(structured);
                // The text twin says the same as the structured result.
                if let Ok(text) = serde_json::to_string(structured) {
                    result.content = vec![rmcp::model::ContentBlock::text(text)];
                }
            }
        }
        Ok(response)
    }

    /// Starts the call on its own; its answer if it comes within the grace,
    /// else a task that holds the call. The call no longer hangs on the
    /// request: its cancellation is the task's, and it sends no progress (the
    /// request it would be about has been answered).
    async fn call_as_task(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let tool = request.name.to_string();
        let limit = tasks::limit(&tool, request.arguments.as_ref());
        let stop = CancellationToken::new();
        let mut detached = context.clone();
        detached.ct = stop.child_token();
        detached.meta.remove("progressToken");
        let this = self.clone();
        let mut work = tokio::spawn(async move { this.call_to_end(request, detached).await });
        tokio::select! {
            done = &mut work => return joined(done),
            _ = context.ct.cancelled() => {
                stop.cancel();
                work.abort();
                return Err(ErrorData::internal_error("the call was cancelled", None));
            }
            _ = tokio::time::sleep(tasks::GRACE) => {}
        }
        match self.bridge.tasks.adopt(&tool, limit, work, stop) {
            Ok(task) => Ok(CallToolResponse::Task(rmcp::model::CreateTaskResult::new(task))),
            // The table filled meanwhile: the call ends as a blocking one.
            Err(work) => joined(work.await),
        }
    }
}

/// A call's answer from its task: a call that panicked is a protocol error.
fn joined(
    done: Result<Result<CallToolResponse, ErrorData>, tokio::task::JoinError>,
) -> Result<CallToolResponse, ErrorData> {
    done.map_err(|e| ErrorData::internal_error(format!("the call ended abnormally: {e}"), None))?
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for FugueTools {
    fn get_info(&self) -> ServerConfig {
        // Only what fugue serves: tools and resources (no prompts, completions
        // or logging: clients are told "method not found" for those).
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_tasks()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(rmcp::model::Implementation::new("fugue-mcp", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS.to_string())
    }

    /// A long call (see [`tasks::eligible`]) from a client that declared the
    /// tasks extension answers within [`tasks::GRACE`] or becomes a task;
    /// every other call runs to its end.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let declared = context.client_capabilities().is_some_and(|caps| caps.supports_tasks());
        if declared && tasks::eligible(&request.name) && self.bridge.tasks.has_room() {
            return self.call_as_task(request, context).await;
        }
        self.call_to_end(request, context).await
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        _: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        self.bridge
            .tasks
            .get(&request.task_id)
            .map(rmcp::model::GetTaskResult::new)
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.bridge.tasks.update(&request.task_id)
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.bridge.tasks.cancel(&request.task_id)
    }

    async fn complete(
        &self,
        _: rmcp::model::CompleteRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CompleteResult, ErrorData> {
        Err(ErrorData::method_not_found::<rmcp::model::CompleteRequestMethod>())
    }

    async fn list_prompts(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, ErrorData> {
        Err(ErrorData::method_not_found::<rmcp::model::ListPromptsRequestMethod>())
    }

    async fn list_resources(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        resources::list(&self.bridge).await
    }

    async fn list_resource_templates(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(resources::templates())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        resources::read(&self.bridge, &request.uri).await.map(Into::into)
    }

    /// Before 2026-07-28: watch `uri` and send `notifications/resources/updated`.
    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let uri = request.uri;
        let resource = Resource::parse(&uri)
            .map_err(|e| ErrorData::resource_not_found(e, Some(serde_json::json!({ "uri": uri }))))?;
        let stop = {
            let mut watches = self.watches.lock().unwrap_or_else(|e| e.into_inner());
            if watches.contains_key(&uri) {
                return Ok(());
            }
            if watches.len() >= resources::MAX_WATCHES {
                return Err(ErrorData::invalid_params(
                    format!(
                        "this session already watches {} resources, the most it may; unsubscribe from one first",
                        resources::MAX_WATCHES
                    ),
                    None,
                ));
            }
            let stop = self.session.child_token();
            watches.insert(uri.clone(), stop.clone());
            stop
        };
        let peer = context.peer;
        self.follow(resource, stop, move |uri| {
            let peer = peer.clone();
            async move {
                let updated = rmcp::model::ResourceUpdatedNotificationParam::new(uri);
                peer.notify_resource_updated(updated).await.is_ok()
            }
        });
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let mut watches = self.watches.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(stop) = watches.remove(&request.uri) {
            stop.cancel();
        }
        Ok(())
    }

    /// Before 2026-07-28: tell the client when the list of resources changes
    /// (a terminal started or went).
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let peer = context.peer;
        self.follow(Resource::Panes, self.session.child_token(), move |_| {
            let peer = peer.clone();
            async move { peer.notify_resource_list_changed().await.is_ok() }
        });
    }

    /// From 2026-07-28 (`subscriptions/listen`): the resources fugue serves, and
    /// changes of the list.
    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::new();
        accepted.resources_list_changed = requested.resources_list_changed;
        accepted.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
            uris.iter()
                .filter(|uri| Resource::parse(uri).is_ok())
                .take(resources::MAX_WATCHES)
                .cloned()
                .collect()
        });
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let stop = self.session.child_token();
        let (updates, mut updated) = tokio::sync::mpsc::channel(1);
        let accepted = context.accepted().clone();
        for uri in accepted.resource_subscriptions.iter().flatten() {
            if let Ok(resource) = Resource::parse(uri) {
                tokio::spawn(resources::watch(
                    self.bridge.clone(),
                    resource,
                    updates.clone(),
                    stop.clone(),
                ));
            }
        }
        // The pane list's changes go to the client as list_changed, not as an update.
        let (list_updates, mut list_updated) = tokio::sync::mpsc::channel(1);
        if accepted.resources_list_changed == Some(true) {
            tokio::spawn(resources::watch(
                self.bridge.clone(),
                Resource::Panes,
                list_updates,
                stop.clone(),
            ));
        }
        drop(updates);
        let sink = context.sink().clone();
        let forward = async {
            loop {
                let sent = tokio::select! {
                    Some(uri) = updated.recv() => sink.notify_resource_updated(uri).await,
                    Some(_) = list_updated.recv() => sink.notify_resource_list_changed().await,
                    else => return,
                };
                if sent.is_err() {
                    return;
                }
            }
        };
        tokio::select! {
            _ = context.cancelled() => {}
            _ = forward => context.cancelled().await,
        }
        stop.cancel();
        Ok(())
    }
}
