//! How `fugue top` draws its state (`top_model`): the table, its head and
//! foot, and the popups. Pure: a frame from the model, tested through the
//! model's tests with ratatui's test backend.

use crate::top_model::{age, clean, label, needs, needs_text, since, Confirm, DiffShown, InputPurpose, Mode, Top};
use fugue_protocol::{Attention, PaneState, PermissionAnswer};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Row, Table, Wrap};
use ratatui::Frame;

pub fn draw(frame: &mut Frame, top: &mut Top) {
    if let Mode::Diff(shown) = &top.mode {
        draw_diff(frame, shown);
        return;
    }
    let [head, body, foot] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(1), Constraint::Length(1)]).areas(frame.area());
    draw_head(frame, top, head);
    draw_table(frame, top, body);
    draw_foot(frame, top, foot);
    match &top.mode {
        Mode::Confirm(confirm) => draw_confirm(frame, confirm, body),
        Mode::Input { purpose, text } => draw_input(frame, top, *purpose, text, body),
        _ => {}
    }
}

fn draw_head(frame: &mut Frame, top: &Top, area: Rect) {
    let needing = top.needing();
    let scope = top
        .session
        .as_deref()
        .map_or("all sessions".to_string(), |s| format!("session {s}"));
    let mut spans = vec![
        Span::styled(" fugue top ", Style::new().add_modifier(Modifier::REVERSED)),
        Span::raw(format!(" {scope} · {} panes · ", top.rows.len())),
        Span::styled(
            format!("{needing} need you"),
            match needing {
                0 => Style::new(),
                _ => Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            },
        ),
        Span::raw(format!(" · sort {}", top.sort.name())),
    ];
    if !top.filter.is_empty() || top.mode == Mode::Filter {
        spans.push(Span::raw(format!(" · filter /{}", clean(&top.filter, 60))));
        if top.mode == Mode::Filter {
            spans.push(Span::styled("_", Style::new().add_modifier(Modifier::SLOW_BLINK)));
        }
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn draw_table(frame: &mut Frame, top: &mut Top, area: Rect) {
    let now = fugue_client::views::now_ms();
    let rows: Vec<Row> = top
        .shown
        .iter()
        .map(|&i| {
            let row = &top.rows[i];
            let agent = row.agent.as_ref();
            let attention = needs(row);
            let status = row.pane.state.as_str();
            let style = match attention {
                Attention::Permission | Attention::Question => {
                    Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD)
                }
                Attention::FinishedUnseen => Style::new().fg(Color::Cyan),
                Attention::Nothing if row.pane.state != PaneState::Running => Style::new().add_modifier(Modifier::DIM),
                Attention::Nothing => Style::new(),
            };
            Row::new(vec![
                clean(&label(row), PANE_WIDEST),
                // A pane another pane's program made (a teammate) sits under it.
                match row.pane.tmux.as_ref().and_then(|t| t.parent) {
                    Some(_) => format!("└ {}", clean(&row.pane.title, 18)),
                    None => clean(&row.pane.title, 20),
                },
                status.to_string(),
                agent.and_then(|a| a.agent).map_or("-", |k| k.as_str()).to_string(),
                agent.map_or_else(|| "-".to_string(), state_text),
                needs_text(attention).to_string(),
                age(now.saturating_sub(since(row))),
                clean(&row.last_line, 300),
            ])
            .style(style)
        })
        .collect();
    // Sessions outside any pane, under the panes (not selectable: `fugue
    // attach bg:ID` opens one in a pane).
    let rows: Vec<Row> = rows.into_iter().chain(background_rows(top, now)).collect();
    // As wide as the widest label shown (a fleet's are `docker://NAME/SESSION:N`).
    let pane_width = top
        .shown
        .iter()
        .map(|&i| unicode_width::UnicodeWidthStr::width(clean(&label(&top.rows[i]), PANE_WIDEST).as_str()))
        .max()
        .unwrap_or(0)
        .clamp(16, PANE_WIDEST);
    let widths = [
        Constraint::Length(pane_width as u16),
        Constraint::Length(14),
        Constraint::Length(8),
        Constraint::Length(8),
        Constraint::Length(22),
        Constraint::Length(10),
        Constraint::Length(4),
        Constraint::Min(10),
    ];
    let header = Row::new(["PANE", "TITLE", "STATUS", "AGENT", "STATE", "NEEDS", "FOR", "LAST LINE"])
        .style(Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED));
    let empty = top.shown.is_empty();
    let table = Table::new(rows, widths)
        .header(header)
        .row_highlight_style(Style::new().add_modifier(Modifier::REVERSED))
        .highlight_symbol("▶ ");
    frame.render_stateful_widget(table, area, &mut top.table);
    if empty {
        let text = match top.filter.is_empty() {
            true => "no panes: start one with c (in a session), or fugue run",
            false => "no pane matches the filter",
        };
        let middle = Rect {
            y: area.y + area.height / 2,
            height: 1,
            ..area
        };
        frame.render_widget(Paragraph::new(text).centered(), middle);
    }
}

/// The rows of the agent sessions outside any pane (`claude --bg`).
fn background_rows(top: &Top, now: u64) -> impl Iterator<Item = Row<'static>> + '_ {
    top.background.iter().map(move |bg| {
        let style = match bg.agent.needs.needs_you() {
            true => Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            false => Style::new().add_modifier(Modifier::DIM),
        };
        Row::new(vec![
            clean(&format!("bg:{}", bg.id), PANE_WIDEST),
            clean(&bg.name, 20),
            "bg".to_string(),
            bg.agent.agent.map_or("-", |k| k.as_str()).to_string(),
            state_text(&bg.agent),
            needs_text(bg.agent.needs).to_string(),
            age(now.saturating_sub(bg.agent.since_ms)),
            clean(&bg.cwd, 300),
        ])
        .style(style)
    })
}

/// An agent's state, with until when a limit lasts ("limited until 17:00").
fn state_text(agent: &fugue_protocol::AgentInfo) -> String {
    match (agent.state, agent.resets_at_ms) {
        (fugue_protocol::AgentState::Limited, Some(at)) => {
            format!("limited until {}", crate::render::local_clock(at))
        }
        (state, _) => state.as_str().to_string(),
    }
}

/// The widest the PANE column gets; longer labels are cut.
const PANE_WIDEST: usize = 40;

fn draw_foot(frame: &mut Frame, top: &Top, area: Rect) {
    let line = match &top.message {
        Some((text, error, _)) => Line::styled(
            clean(text, 500),
            match error {
                true => Style::new().fg(Color::Red),
                false => Style::new().fg(Color::Green),
            },
        ),
        None => Line::styled(
            "enter attach · n next needing · a approve · d deny · p prompt · D diff · C compare · i interrupt · h hibernate · w wake · x kill · X release · r rename · c new pane · / filter · s sort · q quit",
            Style::new().add_modifier(Modifier::DIM),
        ),
    };
    frame.render_widget(Paragraph::new(line), area);
}

/// A pane's diff over the whole screen: added lines green, removed red, hunk
/// headers cyan; the lines were escaped when the diff was rendered.
fn draw_diff(frame: &mut Frame, shown: &DiffShown) {
    let (title, lines, scroll) = (&shown.title, &shown.lines, shown.scroll);
    let area = frame.area();
    let [body, foot] = Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(area);
    let rows = body.height.saturating_sub(2) as usize;
    let visible: Vec<Line> = lines
        .iter()
        .skip(scroll)
        .take(rows)
        .map(|line| {
            let style = match line.as_bytes().first() {
                Some(b'+') => Style::new().fg(Color::Green),
                Some(b'-') => Style::new().fg(Color::Red),
                Some(b'@') => Style::new().fg(Color::Cyan),
                _ => Style::new(),
            };
            Line::styled(line.as_str(), style)
        })
        .collect();
    let block = Block::default()
        .borders(Borders::ALL)
        .title(format!(" {} ", clean(title, 200)));
    frame.render_widget(Paragraph::new(visible).block(block), body);
    let place = format!(
        "lines {}-{} of {} · j/k scroll · space/PgUp page · g/G ends{} · q back",
        scroll + 1,
        (scroll + rows).min(lines.len()),
        lines.len(),
        if shown.actions { " · m merge · x discard" } else { "" }
    );
    frame.render_widget(
        Paragraph::new(Line::styled(place, Style::new().add_modifier(Modifier::DIM))),
        foot,
    );
}

/// A box in the middle of `area`, `height` rows high.
fn popup(area: Rect, height: u16) -> Rect {
    let width = area.width.saturating_sub(4).min(100);
    let height = height.min(area.height);
    Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    }
}

fn draw_confirm(frame: &mut Frame, confirm: &Confirm, area: Rect) {
    let (title, lines) = match confirm {
        Confirm::Answer {
            label,
            prompt_id,
            answer,
            text,
            ..
        } => {
            let verb = match answer {
                PermissionAnswer::Approve => "Approve",
                PermissionAnswer::Deny => "Deny",
            };
            let mut lines: Vec<Line> = text.iter().map(|l| Line::raw(clean(l, 200))).collect();
            lines.push(Line::raw(""));
            lines.push(Line::styled(
                format!(
                    "prompt {prompt_id} · y: {} · any other key: cancel",
                    verb.to_lowercase()
                ),
                Style::new().add_modifier(Modifier::BOLD),
            ));
            (format!(" {verb} {label}? "), lines)
        }
        Confirm::Kill { label, .. } => (
            format!(" Kill {label}? "),
            vec![Line::raw(
                "TERM, then KILL after the grace period · y: kill · any other key: cancel",
            )],
        ),
        Confirm::Release { label, .. } => (
            format!(" Release {label}? "),
            vec![Line::raw(
                "removed at once, killed if it still runs · y: release · any other key: cancel",
            )],
        ),
        Confirm::Merge { title, .. } => (
            format!(" Merge {}? ", clean(title, 80)),
            vec![
                Line::raw("into the branch it started from; refused, with nothing changed, on uncommitted files or a conflict"),
                Line::styled(
                    "y: merge · any other key: cancel",
                    Style::new().add_modifier(Modifier::BOLD),
                ),
            ],
        ),
        Confirm::Discard { title, summary, .. } => (
            format!(" Discard {}? ", clean(title, 80)),
            vec![
                Line::raw(format!(
                    "its pane is released, the worktree and branch removed with {summary}"
                )),
                Line::styled(
                    "this cannot be undone · y: discard · any other key: cancel",
                    Style::new().add_modifier(Modifier::BOLD),
                ),
            ],
        ),
    };
    // As high as the lines are once wrapped to the box's width.
    let inner = popup(area, 0).width.saturating_sub(2).max(1) as usize;
    let rows: usize = lines.iter().map(|l| l.width().max(1).div_ceil(inner)).sum();
    let rect = popup(area, rows.min(u16::MAX as usize - 2) as u16 + 2);
    frame.render_widget(Clear, rect);
    let block = Block::default().borders(Borders::ALL).title(title);
    frame.render_widget(Paragraph::new(lines).block(block).wrap(Wrap { trim: false }), rect);
}

fn draw_input(frame: &mut Frame, top: &Top, purpose: InputPurpose, text: &str, area: Rect) {
    let title = match purpose {
        InputPurpose::Prompt(_) => {
            let who = top.selected_row().map(label).unwrap_or_default();
            format!(" Prompt for {who} (enter: send · esc: cancel) ")
        }
        InputPurpose::Rename(_) => " New title (enter: rename · esc: cancel) ".to_string(),
        InputPurpose::NewPane(_) => " Command for a new pane in this session (enter: start · esc: cancel) ".to_string(),
    };
    let rect = popup(area, 3);
    frame.render_widget(Clear, rect);
    let block = Block::default().borders(Borders::ALL).title(title);
    let shown: String = clean(text, 4096);
    let visible = rect.width.saturating_sub(3) as usize;
    let tail: String = shown
        .chars()
        .skip(shown.chars().count().saturating_sub(visible))
        .collect();
    frame.render_widget(Paragraph::new(format!("{tail}_")).block(block), rect);
}
