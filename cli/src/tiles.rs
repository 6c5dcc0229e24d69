//! `fugue attach @N`: a tmux window's panes side by side (a lead agent and its
//! teammates, what a script split), tiled by the window's layout.
//!
//! How the tiles are drawn: frames composed here, in the CLI, from the
//! daemon's own rendered screens. Each pane is followed on one connection
//! (read-only attachments: output, exit and lifecycle events); a pane whose
//! output moved is marked, and at most every [`FRAME`] its screen is captured
//! with its attributes and drawn into its tile, clipped to it. No emulator runs
//! here, so what a tile shows is exactly what `fugue capture` shows. The
//! layout decides the panes' sizes: each is resized to its tile.
//!
//! Keys go to the focused pane; the prefix key (default `Ctrl-b`) then `o` or
//! `n` moves the focus on, `p` back, a digit to that pane, `z` zooms the
//! focused pane to the whole terminal and back, `d` (or the detach key, default
//! `Ctrl-\`) detaches.

use crate::attach::{Action, AttachOptions, Ended, Keys};
use fugue_client::{Client, ClientError};
use fugue_protocol::{CaptureWhat, Event, PaneInfo, PaneSize, PaneState};
use std::io::Write;
use std::time::Duration;
use tokio::signal::unix::{signal, SignalKind};

/// The shortest time between two frames.
const FRAME: Duration = Duration::from_millis(33);

/// Part of the terminal, in cells from the top left (0-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rect {
    pub x: u16,
    pub y: u16,
    pub cols: u16,
    pub rows: u16,
}

/// Splits `whole` cells into `n` parts with a one-cell border between each:
/// the first parts get the remainder. Every part is at least one cell.
fn split(whole: u16, n: usize) -> Vec<(u16, u16)> {
    let n = n.max(1) as u16;
    let borders = n - 1;
    let room = whole.saturating_sub(borders).max(n);
    let (each, extra) = (room / n, room % n);
    let mut at: u16 = 0;
    (0..n)
        .map(|i| {
            let size = each + u16::from(i < extra);
            let part = (at, size.max(1));
            at = at.saturating_add(size + 1);
            part
        })
        .collect()
}

/// The tiles of `n` panes in `area` by tmux's layout `name` (`tiled`,
/// `main-vertical`, `main-horizontal`, `even-horizontal`, `even-vertical`);
/// `main_percent` is the main pane's share (default half).
pub fn layout(name: &str, n: usize, area: Rect, main_percent: Option<u8>) -> Vec<Rect> {
    if n <= 1 {
        return vec![area];
    }
    let main = |whole: u16| -> u16 {
        let share = main_percent.unwrap_or(50).clamp(10, 90) as u32;
        ((whole as u32 * share / 100) as u16).clamp(1, whole.saturating_sub(2).max(1))
    };
    match name {
        "even-horizontal" => split(area.cols, n)
            .into_iter()
            .map(|(x, cols)| Rect {
                x: area.x + x,
                cols,
                ..area
            })
            .collect(),
        "even-vertical" => split(area.rows, n)
            .into_iter()
            .map(|(y, rows)| Rect {
                y: area.y + y,
                rows,
                ..area
            })
            .collect(),
        "main-vertical" => {
            let left = main(area.cols);
            let right = Rect {
                x: area.x + left + 1,
                cols: area.cols.saturating_sub(left + 1).max(1),
                ..area
            };
            let mut tiles = vec![Rect { cols: left, ..area }];
            tiles.extend(layout("even-vertical", n - 1, right, None));
            tiles
        }
        "main-horizontal" => {
            let top = main(area.rows);
            let bottom = Rect {
                y: area.y + top + 1,
                rows: area.rows.saturating_sub(top + 1).max(1),
                ..area
            };
            let mut tiles = vec![Rect { rows: top, ..area }];
            tiles.extend(layout("even-horizontal", n - 1, bottom, None));
            tiles
        }
        // tiled: a grid, as square as it goes, rows filled first.
        _ => {
            let columns = (1..=n).find(|c| c * c >= n).unwrap_or(n);
            let rows = n.div_ceil(columns);
            let mut tiles = Vec::with_capacity(n);
            for (r, (y, height)) in split(area.rows, rows).into_iter().enumerate() {
                let in_row = if r + 1 == rows {
                    n - columns * (rows - 1)
                } else {
                    columns
                };
                for (x, width) in split(area.cols, in_row) {
                    tiles.push(Rect {
                        x: area.x + x,
                        y: area.y + y,
                        cols: width,
                        rows: height,
                    });
                }
            }
            tiles
        }
    }
}

/// `line` (text with SGR sequences, as a capture gives it) cut to `cols`
/// cells, then padded with spaces to them, attributes reset after.
fn clip(line: &str, cols: u16) -> String {
    use unicode_width::UnicodeWidthChar;
    let mut out = String::with_capacity(line.len() + 8);
    let mut used = 0u16;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            // A CSI sequence (what captures hold) passes whole, taking no room.
            out.push(c);
            if chars.peek() == Some(&'[') {
                for next in chars.by_ref() {
                    out.push(next);
                    if next != '[' && ('\x40'..='\x7e').contains(&next) {
                        break;
                    }
                }
            }
            continue;
        }
        let width = c.width().unwrap_or(0) as u16;
        if used + width > cols {
            break;
        }
        used += width;
        out.push(c);
    }
    out.push_str("\x1b[0m");
    out.extend(std::iter::repeat_n(' ', (cols - used.min(cols)) as usize));
    out
}

/// The panes of window `@window`, running, in pane-id order.
async fn window_panes(client: &Client, window: u32) -> Result<Vec<PaneInfo>, ClientError> {
    let mut panes: Vec<PaneInfo> = client
        .list_panes(None)
        .await?
        .into_iter()
        .filter(|p| p.tmux.as_ref().is_some_and(|t| t.window_id == window))
        .filter(|p| !matches!(p.state, PaneState::Exited | PaneState::Lost))
        .collect();
    panes.sort_by_key(|p| p.tmux.as_ref().map(|t| t.pane_id));
    Ok(panes)
}

/// The window a target names: `@N`, or the window of the pane it names.
pub async fn window_of(client: &Client, target: &str) -> Result<u32, ClientError> {
    if let Some(id) = target.strip_prefix('@').and_then(|n| n.parse().ok()) {
        return Ok(id);
    }
    let pane = client.pane_status(target).await?;
    pane.tmux.map(|t| t.window_id).ok_or_else(|| {
        ClientError::Protocol(format!(
            "pane {target} has no place in fugue's tmux, so no window to show; attach to it alone"
        ))
    })
}

struct Tiled {
    client: Client,
    window: u32,
    panes: Vec<PaneInfo>,
    tiles: Vec<Rect>,
    /// Which panes changed since they were last drawn.
    dirty: Vec<bool>,
    focus: usize,
    zoomed: bool,
    read_only: bool,
    /// The focused pane's cursor, as last captured (row, column, shown).
    cursor: Option<(u16, u16, bool)>,
    stdout: std::io::Stdout,
}

impl Tiled {
    /// Takes the window's panes afresh, attaches to new ones, and lays out.
    async fn relist(&mut self) -> Result<bool, ClientError> {
        let panes = window_panes(&self.client, self.window).await?;
        if panes.is_empty() {
            return Ok(false);
        }
        let focused = self.panes.get(self.focus).map(|p| p.id);
        for pane in &panes {
            if !self.panes.iter().any(|p| p.id == pane.id) {
                self.client.attach(&pane.id.to_string(), true, None).await?;
            }
        }
        self.focus = focused
            .and_then(|id| panes.iter().position(|p| p.id == id))
            .unwrap_or(0)
            .min(panes.len() - 1);
        self.panes = panes;
        self.relayout().await?;
        Ok(true)
    }

    /// Tiles for the terminal's size now (less the status row), each pane
    /// sized to its tile; everything drawn again.
    async fn relayout(&mut self) -> Result<(), ClientError> {
        let (cols, rows) = crossterm::terminal::size().unwrap_or((80, 24));
        let area = Rect {
            x: 0,
            y: 0,
            cols: cols.max(2),
            rows: rows.saturating_sub(1).max(1),
        };
        let place = self.panes.first().and_then(|p| p.tmux.clone()).unwrap_or_default();
        self.tiles = match self.zoomed {
            true => vec![area; self.panes.len()],
            false => layout(&place.layout, self.panes.len(), area, place.main_percent),
        };
        if !self.read_only {
            for (pane, tile) in self.panes.iter().zip(&self.tiles) {
                let size = fugue_protocol::limits::clamp_size(PaneSize {
                    cols: tile.cols,
                    rows: tile.rows,
                });
                if size != pane.size && (!self.zoomed || pane.id == self.panes[self.focus].id) {
                    self.client.resize_pane(&pane.id.to_string(), size).await?;
                }
            }
        }
        self.dirty = vec![true; self.panes.len()];
        let _ = self.stdout.write_all(b"\x1b[0m\x1b[2J");
        self.draw_borders(area);
        Ok(())
    }

    fn shown(&self, index: usize) -> bool {
        !self.zoomed || index == self.focus
    }

    /// The cells between tiles, and the status row.
    fn draw_borders(&mut self, area: Rect) {
        let mut out = String::new();
        if !self.zoomed {
            for y in area.y..area.y + area.rows {
                for x in area.x..area.x + area.cols {
                    let inside = |x: u16, y: u16| {
                        self.tiles
                            .iter()
                            .any(|t| x >= t.x && x < t.x + t.cols && y >= t.y && y < t.y + t.rows)
                    };
                    if inside(x, y) {
                        continue;
                    }
                    let vertical = x > 0 && inside(x - 1, y) || inside(x + 1, y);
                    let glyph = if vertical { '│' } else { '─' };
                    out.push_str(&format!("\x1b[{};{}H\x1b[2m{glyph}\x1b[0m", y + 1, x + 1));
                }
            }
        }
        self.status(&mut out, area.rows);
        let _ = self.stdout.write_all(out.as_bytes());
    }

    fn status(&self, out: &mut String, row: u16) {
        let Some(pane) = self.panes.get(self.focus) else { return };
        let place = pane.tmux.clone().unwrap_or_default();
        let (cols, _) = crossterm::terminal::size().unwrap_or((80, 24));
        let line = format!(
            " @{} {} · {} · %{} {} ({}/{}){} · C-b o next · C-b z zoom · C-\\ detach ",
            place.window_id,
            place.window_name,
            place.layout,
            place.pane_id,
            pane.title,
            self.focus + 1,
            self.panes.len(),
            if self.zoomed { " zoomed" } else { "" }
        );
        let line = fugue_protocol::limits::clean_label(&line, 1024);
        out.push_str(&format!("\x1b[{};1H\x1b[7m{}", row + 1, clip(&line, cols)));
    }

    /// Draws every marked tile from its pane's screen, then puts the cursor
    /// where the focused pane has it.
    async fn draw(&mut self) -> Result<(), ClientError> {
        let mut out = String::new();
        for index in 0..self.panes.len() {
            if !self.dirty[index] || !self.shown(index) {
                continue;
            }
            self.dirty[index] = false;
            let tile = self.tiles[index];
            let id = self.panes[index].id.to_string();
            let Ok(screen) = self
                .client
                .capture(&id, CaptureWhat::Screen, (None, None), true, false)
                .await
            else {
                continue;
            };
            for row in 0..tile.rows {
                let line = screen.lines.get(row as usize).map(String::as_str).unwrap_or("");
                out.push_str(&format!(
                    "\x1b[{};{}H{}",
                    tile.y + row + 1,
                    tile.x + 1,
                    clip(line, tile.cols)
                ));
            }
            if index == self.focus {
                self.cursor = Some((screen.cursor_row, screen.cursor_col, screen.cursor_visible));
            }
        }
        let tile = self.tiles[self.focus];
        match self.cursor {
            Some((row, col, true)) if row < tile.rows && col < tile.cols => {
                out.push_str(&format!("\x1b[{};{}H\x1b[?25h", tile.y + row + 1, tile.x + col + 1));
            }
            _ => out.push_str("\x1b[?25l"),
        }
        let _ = self.stdout.write_all(out.as_bytes());
        let _ = self.stdout.flush();
        Ok(())
    }

    async fn refocus(&mut self, focus: usize) -> Result<(), ClientError> {
        self.focus = focus % self.panes.len().max(1);
        self.cursor = None;
        self.relayout().await
    }

    /// Keys typed; `Some` when they end the attachment.
    async fn on_input(&mut self, keys: &mut Keys, input: &[u8]) -> Result<Option<Ended>, ClientError> {
        for action in keys.feed(input) {
            let n = self.panes.len();
            match action {
                Action::Send(bytes) if !self.read_only => {
                    let id = self.panes[self.focus].id.to_string();
                    self.client.write_input(&id, &bytes).await?;
                }
                Action::Send(_) => {}
                Action::Detach => return Ok(Some(Ended::Detached(self.panes[self.focus].id))),
                Action::Next => self.refocus(self.focus + 1).await?,
                Action::Previous => self.refocus(self.focus + n - 1).await?,
                Action::Select(index) if (index as usize) < n => self.refocus(index as usize).await?,
                Action::Zoom => {
                    self.zoomed = !self.zoomed;
                    self.relayout().await?;
                }
                Action::Select(_) | Action::NextNeeding | Action::Overview => {}
            }
        }
        Ok(None)
    }

    fn mark(&mut self, pane: fugue_protocol::PaneId) {
        if let Some(index) = self.panes.iter().position(|p| p.id == pane) {
            self.dirty[index] = true;
        }
    }
}

/// Shows window `@window` tiled until the person detaches or its last pane ends.
pub async fn run(client: &Client, window: u32, options: AttachOptions) -> Result<Ended, ClientError> {
    use std::io::IsTerminal;
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return Err(ClientError::Protocol(
            "fugue attach needs a terminal on stdin and stdout".into(),
        ));
    }
    let client = client.clone();
    let mut events = client.subscribe().await?;
    let mut tiled = Tiled {
        client: client.clone(),
        window,
        panes: Vec::new(),
        tiles: Vec::new(),
        dirty: Vec::new(),
        focus: 0,
        zoomed: false,
        read_only: options.read_only,
        cursor: None,
        stdout: std::io::stdout(),
    };
    let raw = crate::attach::RawMode::enter()?;
    let _ = tiled.stdout.write_all(b"\x1b[?1049h\x1b[H");
    if !tiled.relist().await? {
        drop(raw);
        let _ = tiled.stdout.write_all(b"\x1b[?1049l");
        return Err(ClientError::Protocol(format!("window @{window} has no running panes")));
    }
    let (mut stdin, _reader) = crate::attach::keyboard();
    let mut keys = Keys::new(options.detach_key, options.prefix_key);
    let mut winch = signal(SignalKind::window_change()).map_err(|e| ClientError::Protocol(e.to_string()))?;
    let mut frame = tokio::time::interval(FRAME);
    frame.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let ended = loop {
        tokio::select! {
            read = stdin.recv() => match read {
                Some(input) => if let Some(ended) = tiled.on_input(&mut keys, &input).await? { break ended },
                None => break Ended::Detached(tiled.panes[tiled.focus].id),
            },
            event = events.recv() => match event {
                Some(Event::Output { pane, .. } | Event::Redraw { pane, .. }) => tiled.mark(pane),
                Some(Event::PaneCreated(_) | Event::PaneRemoved { .. } | Event::PaneExited(_) | Event::Exited { .. })
                | Some(Event::Lagged { .. }) => {
                    if !tiled.relist().await? {
                        break Ended::Detached(tiled.panes[tiled.focus].id);
                    }
                }
                Some(_) => {}
                None => break Ended::DaemonGone,
            },
            _ = winch.recv() => tiled.relayout().await?,
            _ = frame.tick() => {
                if tiled.dirty.iter().any(|d| *d) {
                    tiled.draw().await?;
                }
            }
        }
    };
    let _ = tiled.stdout.write_all(b"\x1b[0m\x1b[?25h\x1b[?1049l");
    let _ = tiled.stdout.flush();
    drop(raw);
    Ok(ended)
}

#[cfg(test)]
mod tests {
    use super::*;

    const AREA: Rect = Rect {
        x: 0,
        y: 0,
        cols: 81,
        rows: 24,
    };

    #[test]
    fn layouts_tile_the_area_with_borders_between() {
        let even = layout("even-horizontal", 2, AREA, None);
        assert_eq!(
            even,
            [
                Rect { cols: 40, ..AREA },
                Rect {
                    x: 41,
                    cols: 40,
                    ..AREA
                }
            ]
        );
        let stacked = layout("even-vertical", 3, AREA, None);
        assert_eq!(
            stacked.iter().map(|t| (t.y, t.rows)).collect::<Vec<_>>(),
            [(0, 8), (9, 7), (17, 7)]
        );
        let main = layout("main-vertical", 3, AREA, Some(30));
        assert_eq!((main[0].cols, main[1].x, main[1].rows, main[2].y), (24, 25, 12, 13));
        let tiled = layout("tiled", 3, AREA, None);
        assert_eq!(tiled.len(), 3);
        assert_eq!((tiled[0].y, tiled[1].y, tiled[2].y, tiled[2].cols), (0, 0, 13, 81));
        assert_eq!(layout("tiled", 1, AREA, None), [AREA]);
        // Never a tile of no cells, however small the terminal.
        let tiny = Rect {
            x: 0,
            y: 0,
            cols: 2,
            rows: 1,
        };
        assert!(layout("tiled", 9, tiny, None)
            .iter()
            .all(|t| t.cols >= 1 && t.rows >= 1));
    }

    #[test]
    fn lines_are_clipped_to_their_tile_attributes_and_all() {
        assert_eq!(clip("\x1b[31mhello\x1b[0m", 3), "\x1b[31mhel\x1b[0m");
        assert_eq!(clip("ab", 4), "ab\x1b[0m  ");
        assert_eq!(
            clip("日本語", 5),
            "日本\x1b[0m ",
            "a wide character that does not fit goes"
        );
    }
}
