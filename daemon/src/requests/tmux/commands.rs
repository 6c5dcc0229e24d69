//! What each command of fugue's tmux does (the table of them, with their
//! flags, is `fugue_protocol::tmux::COMMANDS`).

use super::view::{Kind, Pane};
use super::{Call, DEFAULT_SIZE};
use crate::actors::pane::PaneMsg;
use crate::requests::resolve::{ask, PANE};
use fugue_protocol::requests as rq;
use fugue_protocol::tmux::{parse_extent, Command, LAYOUTS};
use fugue_protocol::{CaptureWhat, PaneSize};

/// Times `send-keys -N` may repeat its keys at most.
const MAX_REPEAT: usize = 1000;

/// Defaults `show-options` reads for options nobody set (tmux's own).
const DEFAULT_OPTIONS: &[(&str, &str)] = &[
    ("prefix", "C-b"),
    ("prefix2", "None"),
    ("base-index", "0"),
    ("pane-base-index", "0"),
    ("status", "on"),
    ("escape-time", "500"),
    ("history-limit", "2000"),
    ("mouse", "off"),
    ("remain-on-exit", "off"),
    ("default-terminal", "tmux-256color"),
    ("focus-events", "off"),
    ("allow-passthrough", "off"),
    ("set-clipboard", "external"),
    ("status-position", "bottom"),
    ("mode-keys", "emacs"),
    ("pane-border-status", "off"),
    ("extended-keys", "off"),
];

impl Call<'_> {
    pub(super) async fn command(&mut self, command: &Command) -> Result<(), String> {
        match command.name() {
            "new-session" => self.new_session(command).await,
            "new-window" => self.new_window(command).await,
            "split-window" => self.split_window(command).await,
            "respawn-pane" => self.respawn_pane(command).await,
            "list-sessions" => self.list(command, Kind::Session).await,
            "list-windows" => self.list(command, Kind::Window).await,
            "list-panes" => self.list(command, Kind::Pane).await,
            "display-message" => self.display_message(command).await,
            "has-session" => {
                let view = self.live_view().await?;
                view.resolve(command.value('t'), Kind::Session).map(|_| ())
            }
            "kill-pane" | "kill-window" | "kill-session" | "kill-server" => self.kill_command(command).await,
            "select-pane" => self.select_pane(command).await,
            "select-window" => {
                let view = self.live_view().await?;
                view.resolve(command.value('t'), Kind::Window).map(|_| ())
            }
            "select-layout" => self.select_layout(command).await,
            "resize-pane" => self.resize_pane(command).await,
            "rename-window" | "rename-session" => self.rename(command).await,
            "send-keys" => self.send_keys(command).await,
            "capture-pane" => self.capture_pane(command).await,
            "set-option" | "set-window-option" => self.set_option(command).await,
            "show-options" | "show-window-options" => self.show_options(command).await,
            "start-server" => Ok(()),
            other => Err(format!("unknown command: {other}")),
        }
    }

    /// Prints `-P`'s line for a new pane, in `-F` or `default` format.
    async fn print_new(&mut self, command: &Command, pane_id: u32, default: &str) -> Result<(), String> {
        if !command.has('P') {
            return Ok(());
        }
        let view = self.view().await?;
        let pane = view.pane(pane_id);
        let line = self.expand(&view, pane, command.value('F').unwrap_or(default));
        self.print(&line);
        Ok(())
    }

    async fn new_session(&mut self, command: &Command) -> Result<(), String> {
        let view = self.view().await?;
        let name = match command.value('s') {
            Some(name) => crate::bridge::session_name(name),
            // tmux names an unnamed session by the lowest free number.
            None => (0..)
                .map(|n: u32| n.to_string())
                .find(|n| !view.panes.iter().any(|p| p.place.session == *n))
                .unwrap_or_default(),
        };
        if let Some(existing) = view.panes.iter().find(|p| p.place.session == name) {
            if command.has('A') {
                let id = existing.place.pane_id;
                return self.print_new(command, id, "#{session_name}:").await;
            }
            return Err(format!("duplicate session: {name}"));
        }
        let cols = command
            .value('x')
            .map(|x| parse_extent(x, DEFAULT_SIZE.cols))
            .transpose();
        let rows = command
            .value('y')
            .map(|y| parse_extent(y, DEFAULT_SIZE.rows))
            .transpose();
        let size = PaneSize {
            cols: cols.map_err(|e| e.0)?.unwrap_or(DEFAULT_SIZE.cols),
            rows: rows.map_err(|e| e.0)?.unwrap_or(DEFAULT_SIZE.rows),
        };
        let size = fugue_protocol::limits::clamp_size(size);
        let home = self.home().await?;
        let mut place = self.new_place(home, &name, None);
        place.window_name = command.value('n').map(str::to_string).unwrap_or_default();
        place.window_size = size;
        let made = self.spawn(command, place, size).await?;
        let id = made.info.tmux.map(|t| t.pane_id).unwrap_or_default();
        self.print_new(command, id, "#{session_name}:").await
    }

    async fn new_window(&mut self, command: &Command) -> Result<(), String> {
        let view = self.live_view().await?;
        let target = view.resolve(command.value('t'), Kind::Session)?.clone();
        let home = self.home().await?;
        let mut place = self.new_place(home, &target.place.session, None);
        place.window_name = command.value('n').map(str::to_string).unwrap_or_default();
        place.window_size = target.place.window_size;
        let size = place.window_size;
        let made = self.spawn(command, place, size).await?;
        let id = made.info.tmux.map(|t| t.pane_id).unwrap_or_default();
        self.print_new(command, id, "#{session_name}:#{window_index}").await
    }

    async fn split_window(&mut self, command: &Command) -> Result<(), String> {
        let view = self.live_view().await?;
        let target = view.resolve(command.value('t'), Kind::Pane)?.clone();
        let horizontal = command.has('h');
        let whole = target.info.size;
        let along = if horizontal { whole.cols } else { whole.rows };
        let wanted = match (command.value('l'), command.value('p')) {
            (Some(l), _) => parse_extent(l, along).map_err(|e| e.0)?,
            (None, Some(p)) => parse_extent(&format!("{p}%"), along).map_err(|e| e.0)?,
            (None, None) => along / 2,
        };
        // Each side keeps a cell at least, and a column goes to the border.
        if along < 3 {
            return Err("no space for new pane".into());
        }
        let new_extent = wanted.clamp(1, along - 2);
        let kept = along - new_extent - 1;
        let (kept_size, new_size) = if horizontal {
            (
                PaneSize { cols: kept, ..whole },
                PaneSize {
                    cols: new_extent,
                    ..whole
                },
            )
        } else {
            (
                PaneSize { rows: kept, ..whole },
                PaneSize {
                    rows: new_extent,
                    ..whole
                },
            )
        };
        let home = self.home().await?;
        let window = Some((target.place.window_id, target.place.window_name.clone(), &target.place));
        let place = self.new_place(home, &target.place.session, window);
        let made = self.spawn(command, place, new_size).await?;
        self.resize(&target, kept_size).await?;
        let id = made.info.tmux.map(|t| t.pane_id).unwrap_or_default();
        self.print_new(command, id, "#{session_name}:#{window_index}.#{pane_index}")
            .await
    }

    /// A new program in the pane: the old pane ends and a new one takes its
    /// place, ids and all.
    async fn respawn_pane(&mut self, command: &Command) -> Result<(), String> {
        let view = self.live_view().await?;
        let target = view.resolve(command.value('t'), Kind::Pane)?.clone();
        if !command.has('k') {
            return Err(format!(
                "respawn pane failed: pane %{} still active",
                target.place.pane_id
            ));
        }
        self.kill(&target).await?;
        let size = target.info.size;
        self.spawn(command, target.place.clone(), size).await.map(|_| ())
    }

    async fn resize(&self, pane: &Pane, size: PaneSize) -> Result<(), String> {
        let handle = self
            .handler
            .pane(&pane.info.id.to_string())
            .await
            .map_err(|e| e.message)?;
        let size = fugue_protocol::limits::clamp_size(size);
        ask(&handle.actor, |reply| PaneMsg::Resize { size, reply }, PANE)
            .await
            .map_err(|e| e.message)?
            .map_err(|e| e.message)
    }

    async fn list(&mut self, command: &Command, kind: Kind) -> Result<(), String> {
        let view = self.live_view().await?;
        let all = command.has('a');
        let rows: Vec<&Pane> = match kind {
            Kind::Session => view
                .sessions()
                .iter()
                .filter_map(|s| view.session_panes(*s).next())
                .collect(),
            Kind::Window => {
                let sessions = match all {
                    true => view.sessions(),
                    false => vec![view.resolve(command.value('t'), Kind::Session)?.place.session_id],
                };
                sessions
                    .iter()
                    .flat_map(|s| view.windows(*s))
                    .filter_map(|w| view.window_panes(w).next())
                    .collect()
            }
            Kind::Pane => {
                if all {
                    view.panes.iter().collect()
                } else if command.has('s') {
                    let session = view.resolve(command.value('t'), Kind::Session)?.place.session_id;
                    view.session_panes(session).collect()
                } else {
                    let window = view.resolve(command.value('t'), Kind::Window)?.place.window_id;
                    view.window_panes(window).collect()
                }
            }
        };
        let default = match kind {
            Kind::Session => "#{session_name}: #{session_windows} windows",
            Kind::Window => "#{window_index}: #{window_name}#{window_flags} (#{window_panes} panes) [#{window_width}x#{window_height}] #{window_id}",
            Kind::Pane => "#{pane_index}: [#{pane_width}x#{pane_height}] #{pane_id}",
        };
        let format = command.value('F').unwrap_or(default);
        let filter = command.value('f');
        let mut lines = Vec::new();
        for pane in rows {
            if let Some(filter) = filter {
                let kept = self.expand(&view, Some(pane), filter);
                if kept.is_empty() || kept == "0" {
                    continue;
                }
            }
            lines.push(self.expand(&view, Some(pane), format));
        }
        lines.iter().for_each(|line| self.print(line));
        Ok(())
    }

    async fn display_message(&mut self, command: &Command) -> Result<(), String> {
        let view = self.view().await?;
        let pane = match command.value('t') {
            Some(target) => Some(view.resolve(Some(target), Kind::Pane)?),
            None => view.current_pane(),
        };
        let format = command
            .args
            .first()
            .map(String::as_str)
            .or(command.value('F'))
            .unwrap_or("#{session_name}:#{window_index}.#{pane_index}");
        let line = self.expand(&view, pane, format);
        self.print(&line);
        Ok(())
    }

    async fn kill_command(&mut self, command: &Command) -> Result<(), String> {
        let view = self.live_view().await?;
        let target = command.value('t');
        let others = command.has('a');
        let doomed: Vec<Pane> = match command.name() {
            "kill-server" => view.panes.iter().filter(|p| p.place.made_by_tmux).cloned().collect(),
            "kill-session" => {
                let session = view.resolve(target, Kind::Session)?.place.session_id;
                view.panes
                    .iter()
                    .filter(|p| (p.place.session_id == session) != others && p.place.made_by_tmux)
                    .cloned()
                    .collect()
            }
            "kill-window" => {
                let window = view.resolve(target, Kind::Window)?.place.clone();
                view.session_panes(window.session_id)
                    .filter(|p| (p.place.window_id == window.window_id) != others && p.place.made_by_tmux)
                    .cloned()
                    .collect()
            }
            _ => {
                let pane = view.resolve(target, Kind::Pane)?.clone();
                match others {
                    true => view
                        .window_panes(pane.place.window_id)
                        .filter(|p| p.place.pane_id != pane.place.pane_id && p.place.made_by_tmux)
                        .cloned()
                        .collect(),
                    false => vec![pane],
                }
            }
        };
        for pane in &doomed {
            self.kill(pane).await?;
        }
        Ok(())
    }

    async fn select_pane(&mut self, command: &Command) -> Result<(), String> {
        let view = self.live_view().await?;
        let pane = view.resolve(command.value('t'), Kind::Pane)?.clone();
        let Some(title) = command.value('T') else {
            return Ok(());
        };
        let title = fugue_protocol::limits::clean_label(title, fugue_protocol::limits::MAX_TITLE_CHARS);
        let id = pane.info.id;
        self.ask_session(&pane, |reply| crate::actors::session::SessionMsg::RenamePane {
            id,
            title,
            reply,
        })
        .await
        .map(|_| ())
    }

    async fn select_layout(&mut self, command: &Command) -> Result<(), String> {
        let view = self.live_view().await?;
        let window = view.resolve(command.value('t'), Kind::Window)?.place.window_id;
        let Some(layout) = command.args.first() else {
            return Ok(());
        };
        if !LAYOUTS.contains(&layout.as_str()) {
            return Err(format!(
                "can't set layout: {}; fugue's tmux lays out by {}",
                fugue_protocol::limits::escape_for_display(layout),
                LAYOUTS.join(", ")
            ));
        }
        let panes = view.window_panes(window).cloned().collect();
        self.change_places(panes, |place| place.layout = layout.clone()).await
    }

    async fn resize_pane(&mut self, command: &Command) -> Result<(), String> {
        let view = self.live_view().await?;
        let pane = view.resolve(command.value('t'), Kind::Pane)?.clone();
        let window = pane.place.window_size;
        let mut size = pane.info.size;
        if let Some(x) = command.value('x') {
            size.cols = parse_extent(x, window.cols).map_err(|e| e.0)?;
        }
        if let Some(y) = command.value('y') {
            size.rows = parse_extent(y, window.rows).map_err(|e| e.0)?;
        }
        // A share in percent is the main pane's share of its window's layout.
        let share = command
            .value('x')
            .or(command.value('y'))
            .and_then(|v| v.strip_suffix('%'))
            .and_then(|p| p.parse::<u8>().ok());
        if let Some(share) = share {
            let panes = view.window_panes(pane.place.window_id).cloned().collect();
            self.change_places(panes, |place| place.main_percent = Some(share))
                .await?;
        }
        if size != pane.info.size {
            self.resize(&pane, size).await?;
        }
        Ok(())
    }

    async fn rename(&mut self, command: &Command) -> Result<(), String> {
        let view = self.live_view().await?;
        let name = command.args[0].clone();
        if command.name() == "rename-window" {
            let window = view.resolve(command.value('t'), Kind::Window)?.place.window_id;
            let panes = view.window_panes(window).cloned().collect();
            let name = fugue_protocol::limits::clean_label(&name, 64);
            return self
                .change_places(panes, |place| place.window_name = name.clone())
                .await;
        }
        let session = view.resolve(command.value('t'), Kind::Session)?.place.clone();
        let name = crate::bridge::session_name(&name);
        if view.panes.iter().any(|p| p.place.session == name) {
            return Err(format!("duplicate session: {name}"));
        }
        if let Some(home) = self.home {
            self.handler
                .tmux_ids
                .rename_session(home, &self.server, &session.session, &name);
        }
        let panes = view.session_panes(session.session_id).cloned().collect();
        self.change_places(panes, |place| place.session = name.clone()).await
    }

    async fn send_keys(&mut self, command: &Command) -> Result<(), String> {
        let view = self.live_view().await?;
        let pane = view.resolve(command.value('t'), Kind::Pane)?.clone();
        let target = pane.info.id.to_string();
        let repeat = match command.value('N') {
            Some(n) => n
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=MAX_REPEAT).contains(n))
                .ok_or_else(|| format!("send-keys: -N takes 1 to {MAX_REPEAT}"))?,
            None => 1,
        };
        for _ in 0..repeat {
            for word in &command.args {
                if command.has('H') {
                    let byte = u8::from_str_radix(word, 16).map_err(|_| format!("invalid key: {word}"))?;
                    self.write(&target, vec![byte]).await?;
                    continue;
                }
                match tmux_key(word).filter(|_| !command.has('l')) {
                    Some(key) => {
                        let request = rq::SendKeys {
                            pane: target.clone(),
                            keys: vec![key],
                        };
                        self.handler
                            .send_keys(self.conn, request)
                            .await
                            .map_err(|e| e.message)?;
                    }
                    None => self.write(&target, word.as_bytes().to_vec()).await?,
                }
            }
        }
        Ok(())
    }

    async fn write(&self, pane: &str, data: Vec<u8>) -> Result<(), String> {
        let request = rq::WriteInput {
            pane: pane.to_string(),
            data,
            paste: false,
        };
        self.handler
            .write_input(self.conn, request)
            .await
            .map_err(|e| e.message)
    }

    async fn capture_pane(&mut self, command: &Command) -> Result<(), String> {
        if !command.has('p') {
            return Err("capture-pane: only -p (print) is supported by fugue's tmux; it keeps no paste buffers".into());
        }
        let view = self.live_view().await?;
        let pane = view.resolve(command.value('t'), Kind::Pane)?.clone();
        let line_number = |text: Option<&str>| -> Result<Option<i64>, String> {
            match text {
                None => Ok(None),
                // `-` is the start of the history (-S) or the end of the screen (-E).
                Some("-") => Ok(None),
                Some(n) => n.parse().map(Some).map_err(|_| format!("invalid line: {n}")),
            }
        };
        let start = line_number(command.value('S'))?;
        let end = line_number(command.value('E'))?;
        let what = match (command.value('S'), start) {
            (Some("-"), _) => CaptureWhat::All,
            (_, Some(n)) if n < 0 => CaptureWhat::All,
            _ => CaptureWhat::Screen,
        };
        let request = rq::Capture {
            pane: pane.info.id.to_string(),
            what,
            start,
            end,
            ansi: command.has('e'),
            join_wrapped: command.has('J'),
        };
        let handle = self.handler.pane(&request.pane).await.map_err(|e| e.message)?;
        let captured = crate::requests::capture(&handle, &request).await;
        for line in &captured.lines {
            self.print(line);
        }
        Ok(())
    }

    fn options_key(&self) -> Result<fugue_protocol::SessionId, String> {
        self.home.ok_or_else(|| format!("no server running on {}", self.server))
    }

    async fn set_option(&mut self, command: &Command) -> Result<(), String> {
        let view = self.live_view().await?;
        if let Some(target) = command.value('t') {
            view.resolve(Some(target), Kind::Pane)?;
        }
        let name = &command.args[0];
        let value = match command.has('u') || command.has('U') {
            true => None,
            false => Some(command.args.get(1).map(String::as_str).unwrap_or("on")),
        };
        let home = self.options_key()?;
        self.handler.tmux_ids.set_option((home, &self.server), name, value)
    }

    async fn show_options(&mut self, command: &Command) -> Result<(), String> {
        let recorded = match self.home {
            Some(home) => self.handler.tmux_ids.options((home, &self.server)),
            None => Default::default(),
        };
        let value_of = |name: &str| -> Option<String> {
            recorded.get(name).cloned().or_else(|| match name {
                "default-shell" => Some(std::env::var("SHELL").unwrap_or_else(|_| "/bin/sh".into())),
                _ => DEFAULT_OPTIONS
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.to_string()),
            })
        };
        let values_only = command.has('v');
        match command.args.first() {
            Some(name) => {
                let Some(value) = value_of(name) else {
                    if command.has('q') {
                        return Ok(());
                    }
                    return Err(format!("invalid option: {name}"));
                };
                let line = if values_only { value } else { format!("{name} {value}") };
                self.print(&line);
            }
            None => {
                let mut names: Vec<String> = DEFAULT_OPTIONS.iter().map(|(n, _)| n.to_string()).collect();
                names.extend(recorded.keys().cloned());
                names.sort();
                names.dedup();
                for name in names {
                    let value = value_of(&name).unwrap_or_default();
                    let line = if values_only { value } else { format!("{name} {value}") };
                    self.print(&line);
                }
            }
        }
        Ok(())
    }
}

/// fugue's name for tmux key `word`, when it is one (tmux types any other word
/// as text).
fn tmux_key(word: &str) -> Option<String> {
    let (mods, key) = split_modifiers(word);
    let key = match key {
        "BSpace" => "Backspace",
        "DC" => "Delete",
        "IC" => "Insert",
        "PPage" | "PgUp" => "PageUp",
        "NPage" | "PgDn" => "PageDown",
        "Escape" | "Enter" | "Tab" | "BTab" | "Space" | "Up" | "Down" | "Left" | "Right" | "Home" | "End"
        | "PageUp" | "PageDown" | "Delete" | "Insert" => key,
        f if f.starts_with('F') && f[1..].parse::<u8>().is_ok_and(|n| (1..=12).contains(&n)) => f,
        // One character with a modifier (`C-c`, `M-x`); alone it is text.
        one if one.chars().count() == 1 && !mods.is_empty() => one,
        _ => return None,
    };
    let name = format!("{mods}{key}");
    fugue_protocol::keys::encode_key(&name, Default::default()).ok()?;
    Some(name)
}

fn split_modifiers(word: &str) -> (&str, &str) {
    let mut at = 0;
    while word.len() > at + 2 && matches!(&word[at..at + 2], "C-" | "M-" | "S-") {
        at += 2;
    }
    // `C-` alone, or a word like `C-x-y`, keeps its text.
    (&word[..at], &word[at..])
}

#[cfg(test)]
mod tests {
    use super::tmux_key;

    #[test]
    fn tmux_key_names_become_keys_and_other_words_text() {
        assert_eq!(tmux_key("Enter").as_deref(), Some("Enter"));
        assert_eq!(tmux_key("C-c").as_deref(), Some("C-c"));
        assert_eq!(tmux_key("BSpace").as_deref(), Some("Backspace"));
        assert_eq!(tmux_key("M-Left").as_deref(), Some("M-Left"));
        assert_eq!(tmux_key("F5").as_deref(), Some("F5"));
        assert_eq!(tmux_key("q"), None, "one character is text");
        assert_eq!(tmux_key("echo hi"), None);
        assert_eq!(tmux_key("Entered"), None);
        assert_eq!(tmux_key("C-"), None);
    }
}
