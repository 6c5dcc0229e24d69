//! `Tmux`: a tmux command line run on fugue's panes (`fugue tmux ARGS...`).
//!
//! A call addresses one tmux server: the `-L`/`-S` label, or the caller's own.
//! A server lives in one fugue session: the calling pane's (so what an agent
//! opens sits beside it, under the session's running-pane cap), or, for a
//! caller outside any pane, `tmux-LABEL`, made on the first `new-session`.
//! Its panes are ordinary fugue panes whose place (`PaneInfo::tmux`) names
//! their tmux session, window and ids; [`view::View`] groups them. tmux's
//! kill commands end only panes made through tmux: an agent's `kill-server`
//! never reaches a pane fugue started for a person.
//!
//! Messages and exit codes are tmux's (`can't find session: X`, exit 1); the
//! first failing command ends the chain, as in tmux.

mod commands;
mod view;

use super::client::Client;
use super::resolve::{ask, SESSION};
use super::Handler;
use crate::actors::session::{PaneHandle, SessionMsg};
use fugue_protocol::requests as rq;
use fugue_protocol::tmux::{Command, Invocation};
use fugue_protocol::{EnvVar, ErrorReply, PaneInfo, PaneSize, SessionId, SpawnSpec, TmuxOutput, TmuxPlace};
use std::sync::Arc;
use view::{Pane, View};

/// Bytes a call may print; the rest is cut with a note on stderr.
const MAX_STDOUT: usize = fugue_protocol::limits::MAX_READ_BYTES;

/// Variables the bridge sets itself in a new pane: never the caller's.
const CALLER_ONLY: &[&str] = &["TMUX", "TMUX_PANE", "FUGUE_PANE", "FUGUE_PANE_TOKEN", "FUGUE_SESSION"];

/// The size a tmux session without `-x`/`-y` gets (tmux's `default-size`).
const DEFAULT_SIZE: PaneSize = PaneSize { cols: 80, rows: 24 };

/// One call in progress.
pub(super) struct Call<'a> {
    handler: &'a Handler,
    conn: &'a Arc<Client>,
    caller: Option<PaneInfo>,
    /// The server's label.
    server: String,
    /// The fugue session the server lives in (its id), once it exists.
    home: Option<SessionId>,
    /// The name a caller outside any pane gets its server's fugue session by.
    home_name: String,
    cwd: String,
    env: Vec<EnvVar>,
    out: TmuxOutput,
}

/// The fugue session a caller outside any pane keeps server `label` in.
fn home_name(label: &str) -> String {
    let mapped: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mapped = mapped.trim_matches('_');
    let name = format!("tmux-{mapped}");
    name.chars().take(fugue_protocol::target::MAX_SESSION_NAME).collect()
}

impl Handler {
    pub(super) async fn tmux(&self, conn: &Arc<Client>, request: rq::Tmux) -> Result<TmuxOutput, ErrorReply> {
        let rq::Tmux { argv, caller, cwd, env } = request;
        let caller = match caller {
            Some(caller) => {
                let refused = ("this tmux call", "can make panes as its children");
                Some(self.proven_pane(&caller.pane, &caller.token, refused).await?.1)
            }
            None => None,
        };
        let invocation = match fugue_protocol::tmux::parse(&argv) {
            Err(err) => {
                tracing::debug!(error = %err.0, "tmux call refused");
                return Ok(failed(err.0));
            }
            Ok(invocation) => invocation,
        };
        if invocation.version {
            return Ok(TmuxOutput {
                stdout: format!("tmux {}\n", fugue_protocol::tmux::VERSION),
                ..Default::default()
            });
        }
        let caller_id = caller.as_ref().map(|c| c.id);
        // What programs do through tmux, for whoever reads the log: each
        // command and its target, never its other arguments (what send-keys
        // types may be a password).
        let commands: Vec<String> = invocation
            .commands
            .iter()
            .map(|c| match c.value('t') {
                Some(target) => format!("{} -t {target}", c.name()),
                None => c.name().to_string(),
            })
            .collect();
        let mut call = Call::new(self, conn, caller, &invocation, cwd, env).await;
        call.run(invocation.commands).await;
        tracing::debug!(
            caller = ?caller_id,
            server = %call.server,
            commands = ?commands,
            code = call.out.code,
            error = call.out.stderr.lines().next().unwrap_or(""),
            "tmux call"
        );
        Ok(call.out)
    }
}

fn failed(message: String) -> TmuxOutput {
    TmuxOutput {
        stdout: String::new(),
        stderr: format!("{message}\n"),
        code: 1,
    }
}

impl<'a> Call<'a> {
    async fn new(
        handler: &'a Handler,
        conn: &'a Arc<Client>,
        caller: Option<PaneInfo>,
        invocation: &Invocation,
        cwd: String,
        env: Vec<EnvVar>,
    ) -> Call<'a> {
        let own = caller.as_ref().and_then(|c| c.tmux.as_ref()).map(|t| t.server.clone());
        let named = match &invocation.server {
            fugue_protocol::tmux::Server::Default => None,
            fugue_protocol::tmux::Server::Named(name) => Some(name.clone()),
            fugue_protocol::tmux::Server::Path(path) => Some(handler.tmux_ids.server_of_path(path)),
        };
        let server = named
            .or(own)
            .unwrap_or_else(|| crate::bridge::DEFAULT_SERVER.to_string());
        let home_name = home_name(&server);
        let home = match &caller {
            Some(caller) => Some(caller.session_id),
            None => handler.session_id(&home_name).await,
        };
        Call {
            handler,
            conn,
            caller,
            server,
            home,
            home_name,
            cwd,
            env,
            out: TmuxOutput::default(),
        }
    }

    async fn run(&mut self, commands: Vec<Command>) {
        for command in commands {
            if let Err(message) = self.command(&command).await {
                self.out.stderr.push_str(&message);
                self.out.stderr.push('\n');
                self.out.code = 1;
                return;
            }
        }
    }

    fn print(&mut self, line: &str) {
        if self.out.stdout.len() + line.len() + 1 > MAX_STDOUT {
            if !self.out.stderr.contains("output cut") {
                self.out
                    .stderr
                    .push_str(&format!("fugue tmux: output cut at {MAX_STDOUT} bytes\n"));
            }
            return;
        }
        self.out.stdout.push_str(line);
        self.out.stdout.push('\n');
    }

    /// The server as it is now.
    async fn view(&self) -> Result<View, String> {
        let Some(home) = self.home else {
            return Ok(View::new(Vec::new(), &self.server, None));
        };
        let panes = self
            .handler
            .list_panes(Some(home.to_string()))
            .await
            .map_err(|e| e.message)?;
        Ok(View::new(panes, &self.server, self.caller.as_ref()))
    }

    /// The server's view, or tmux's "no server running" when it has no pane.
    async fn live_view(&self) -> Result<View, String> {
        let view = self.view().await?;
        if view.panes.is_empty() {
            return Err(format!("no server running on {}", self.server));
        }
        Ok(view)
    }

    /// The fugue session new panes go to, made for a caller outside any pane.
    async fn home(&mut self) -> Result<SessionId, String> {
        if let Some(home) = self.home {
            return Ok(home);
        }
        let made = self
            .handler
            .create_session(rq::CreateSession {
                name: self.home_name.clone(),
                cwd: Some(self.cwd.clone()),
                env: Vec::new(),
            })
            .await
            .map_err(|e| e.message)?;
        self.home = Some(made.id);
        Ok(made.id)
    }

    /// A new place on this server for tmux session `session`.
    fn new_place(&self, home: SessionId, session: &str, window: Option<(u32, String, &TmuxPlace)>) -> TmuxPlace {
        let ids = &self.handler.tmux_ids;
        let (window_id, window_name, layout, main_percent, window_size) = match window {
            Some((id, name, like)) => (id, name, like.layout.clone(), like.main_percent, like.window_size),
            None => (
                ids.next_window(),
                String::new(),
                "tiled".to_string(),
                None,
                DEFAULT_SIZE,
            ),
        };
        TmuxPlace {
            server: self.server.clone(),
            session: session.to_string(),
            session_id: ids.session(home, &self.server, session),
            window_id,
            window_name,
            layout,
            main_percent,
            window_size,
            pane_id: ids.next_pane(),
            made_by_tmux: true,
            parent: self.caller.as_ref().map(|c| c.id),
            parent_exited: false,
        }
    }

    /// Starts `command`'s program (its arguments after the flags) at `place`
    /// with `size`, in the caller's environment and directory.
    async fn spawn(&mut self, command: &Command, mut place: TmuxPlace, size: PaneSize) -> Result<PaneHandle, String> {
        let home = self.home().await?;
        let mut spec = SpawnSpec::new(home.to_string());
        spec.env = self
            .env
            .iter()
            .filter(|v| !CALLER_ONLY.contains(&v.name.as_str()))
            .cloned()
            .collect();
        for assignment in command.values('e') {
            let Some((name, value)) = assignment.split_once('=') else {
                return Err(format!("{}: -e takes VARIABLE=VALUE", command.name()));
            };
            spec.env.push(EnvVar {
                name: name.into(),
                value: value.into(),
            });
        }
        spec.cwd = Some(command.value('c').map_or_else(|| self.cwd.clone(), str::to_string));
        spec.size = Some(fugue_protocol::limits::clamp_size(size));
        if let Some(launch) = crate::bridge::direct_launch(&command.args) {
            spec.shell = false;
            spec.command = Some(launch.program);
            spec.args = launch.args;
            if launch.cwd.is_some() && command.value('c').is_none() {
                spec.cwd = launch.cwd;
            }
            spec.env
                .extend(launch.env.into_iter().map(|(name, value)| EnvVar { name, value }));
        } else if !command.args.is_empty() {
            spec.shell = false;
            spec.command = Some("/bin/sh".into());
            spec.args = vec!["-c".into(), command.args.join(" ")];
        }
        if place.window_name.is_empty() {
            let program = spec.command.clone().unwrap_or_else(|| shell_name(&spec.env));
            place.window_name = crate::bridge::window_name(&program);
        }
        fugue_protocol::limits::check_env(&spec.env).map_err(|e| e.message)?;
        let session = self.handler.session(&home.to_string()).await.map_err(|e| e.message)?;
        let tmux = Some(place);
        ask(
            &session.actor,
            |reply| SessionMsg::CreatePane { spec, tmux, reply },
            SESSION,
        )
        .await
        .map_err(|e| e.message)?
        .map_err(|e| e.message)
    }

    /// Ends a pane made through tmux (tmux's kill commands end no other).
    async fn kill(&self, pane: &Pane) -> Result<(), String> {
        if !pane.place.made_by_tmux {
            return Err(format!(
                "can't kill pane %{}: fugue started it, not tmux; end it with `fugue kill {}`",
                pane.place.pane_id, pane.info.id
            ));
        }
        let id = pane.info.id;
        self.ask_session(pane, |reply| SessionMsg::ReleasePane { id, reply })
            .await
    }

    /// Gives pane `pane` the place `place`.
    async fn set_place(&self, pane: &Pane, place: TmuxPlace) -> Result<(), String> {
        let id = pane.info.id;
        self.ask_session(pane, |reply| SessionMsg::SetTmux { id, place, reply })
            .await
            .map(|_| ())
    }

    /// Asks the session actor that owns `pane`; its error as tmux prints one.
    async fn ask_session<T: Send + 'static>(
        &self,
        pane: &Pane,
        build: impl FnOnce(ractor::RpcReplyPort<Result<T, ErrorReply>>) -> SessionMsg,
    ) -> Result<T, String> {
        let handle = self
            .handler
            .pane(&pane.info.id.to_string())
            .await
            .map_err(|e| e.message)?;
        ask(&handle.session, build, SESSION)
            .await
            .map_err(|e| e.message)?
            .map_err(|e| e.message)
    }

    /// Every pane of `panes` gets `change` applied to its place.
    async fn change_places(&self, panes: Vec<Pane>, change: impl Fn(&mut TmuxPlace)) -> Result<(), String> {
        for pane in panes {
            let mut place = pane.place.clone();
            change(&mut place);
            self.set_place(&pane, place).await?;
        }
        Ok(())
    }

    /// The value of format variable `name` for `pane` (server-wide ones when `None`).
    fn variable(&self, view: &View, pane: Option<&Pane>, name: &str) -> Option<String> {
        let server = match name {
            "version" => Some(fugue_protocol::tmux::VERSION.to_string()),
            "pid" => Some(std::process::id().to_string()),
            "client_control_mode"
            | "session_attached"
            | "pane_dead"
            | "pane_in_mode"
            | "window_zoomed_flag"
            | "pane_synchronized"
            | "pane_input_off"
            | "session_grouped"
            | "pane_marked" => Some("0".into()),
            "host" | "host_short" => Some(hostname(name == "host_short")),
            "socket_path" => Some(self.server.clone()),
            "uid" => Some(rustix::process::getuid().as_raw().to_string()),
            "user" => std::env::var("USER").ok(),
            _ => None,
        };
        if server.is_some() {
            return server;
        }
        let pane = pane?;
        let (info, place) = (&pane.info, &pane.place);
        let session_windows = || view.windows(place.session_id).len().to_string();
        let window_panes = || view.window_panes(place.window_id).count().to_string();
        let created = || {
            view.session_panes(place.session_id)
                .map(|p| p.info.started_at_ms)
                .min()
                .unwrap_or(info.started_at_ms)
                / 1000
        };
        Some(match name {
            "pane_id" => format!("%{}", place.pane_id),
            "pane_index" => view.pane_index(pane).to_string(),
            "pane_title" => info.title.clone(),
            "pane_pid" => info.pid.to_string(),
            "pane_current_command" | "pane_start_command" => {
                let program = info.command.first().map(String::as_str).unwrap_or("");
                if name == "pane_start_command" {
                    info.command.join(" ")
                } else {
                    crate::bridge::window_name(program)
                }
            }
            "pane_current_path" | "pane_start_path" | "session_path" | "pane_path" => info.cwd.clone(),
            "pane_width" => info.size.cols.to_string(),
            "pane_height" => info.size.rows.to_string(),
            "pane_active" | "window_active" => {
                if view.pane_index(pane) == 0 {
                    "1".into()
                } else {
                    "0".into()
                }
            }
            "pane_dead_status" | "pane_dead_signal" | "pane_dead_time" | "pane_tty" => String::new(),
            "window_id" => format!("@{}", place.window_id),
            "window_index" => view.window_index(pane).to_string(),
            "window_name" => place.window_name.clone(),
            "window_panes" => window_panes(),
            "window_layout" | "window_visible_layout" => place.layout.clone(),
            "window_width" => place.window_size.cols.to_string(),
            "window_height" => place.window_size.rows.to_string(),
            "window_flags" | "window_raw_flags" => {
                if view.window_index(pane) == 0 {
                    "*".into()
                } else {
                    String::new()
                }
            }
            "session_id" => format!("${}", place.session_id),
            "session_name" => place.session.clone(),
            "session_windows" => session_windows(),
            "session_created" | "session_activity" | "start_time" => created().to_string(),
            "session_width" => place.window_size.cols.to_string(),
            "session_height" => place.window_size.rows.to_string(),
            "fugue_pane" => info.id.to_string(),
            _ => return None,
        })
    }

    /// `format` expanded for `pane`.
    fn expand(&self, view: &View, pane: Option<&Pane>, format: &str) -> String {
        fugue_protocol::tmux::format::expand(format, &|name| self.variable(view, pane, name))
    }
}

fn shell_name(env: &[EnvVar]) -> String {
    env.iter()
        .rev()
        .find(|v| v.name == "SHELL")
        .map(|v| v.value.clone())
        .or_else(|| std::env::var("SHELL").ok())
        .unwrap_or_else(|| "sh".into())
}

fn hostname(short: bool) -> String {
    let name = rustix::system::uname().nodename().to_string_lossy().into_owned();
    match short {
        true => name.split('.').next().unwrap_or(&name).to_string(),
        false => name,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use fugue_protocol::*;

    /// A pane's info with nothing in it, for views built in tests.
    pub fn blank_info() -> PaneInfo {
        PaneInfo {
            id: PaneId::new(),
            session_id: SessionId::new(),
            session_name: "s".into(),
            index: 0,
            title: String::new(),
            purpose: String::new(),
            command: Vec::new(),
            shell: false,
            cwd: "/".into(),
            state: PaneState::Running,
            pid: 1,
            exit: None,
            size: PaneSize { cols: 80, rows: 24 },
            started_at_ms: 0,
            exited_at_ms: None,
            restart: RestartPolicy::Never,
            restarts: 0,
            last_exit: None,
            agent_session: None,
            tmux: None,
        }
    }

    #[test]
    fn a_server_outside_any_pane_lives_in_a_session_named_for_it() {
        assert_eq!(super::home_name("claude-swarm-123"), "tmux-claude-swarm-123");
        assert_eq!(super::home_name("/tmp/my socket"), "tmux-tmp_my_socket");
        assert!(super::home_name(&"x".repeat(200)).chars().count() <= 64);
    }
}
