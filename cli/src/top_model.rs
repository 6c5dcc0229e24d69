//! What `fugue top` shows and what its keys do, apart from the terminal and
//! the daemon (so both are tested here with ratatui's test backend).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use fugue_client::protocol::limits::escape_for_display;
use fugue_protocol::{AgentInfo, AgentState, Attention, Event, PaneId, PaneOverview, PermissionAnswer, SessionId};
use ratatui::widgets::TableState;
use std::time::{Duration, Instant};

/// How long a message stays in the status line.
const MESSAGE_FOR: Duration = Duration::from_secs(8);
/// Longest text a person may type into top's input line.
const INPUT_LIMIT: usize = 4096;

/// The order of the rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sort {
    /// Needs-you first, then by session and index.
    Needs,
    /// By session and index.
    Session,
    /// The most recent state change first.
    Recent,
}

impl Sort {
    fn next(self) -> Sort {
        match self {
            Sort::Needs => Sort::Session,
            Sort::Session => Sort::Recent,
            Sort::Recent => Sort::Needs,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Sort::Needs => "needs",
            Sort::Session => "session",
            Sort::Recent => "recent",
        }
    }
}

/// What the keys go to.
#[derive(Debug, PartialEq, Eq)]
pub enum Mode {
    Normal,
    /// Typing the filter (`/`).
    Filter,
    /// Typing text for `purpose`.
    Input {
        purpose: InputPurpose,
        text: String,
    },
    /// Asking to confirm (`y`) what `confirm` would do.
    Confirm(Confirm),
    /// Showing a pane's diff (`D`): its lines, files first, from line `scroll`.
    Diff(DiffShown),
}

/// A pane's diff on screen; `m` merges its worktree, `x` discards it.
#[derive(Debug, PartialEq, Eq)]
pub struct DiffShown {
    pub pane: PaneId,
    pub title: String,
    /// What the worktree holds, for the discard question.
    pub summary: String,
    /// `m` and `x` merge and discard (a diff); a comparison only shows.
    pub actions: bool,
    pub lines: Vec<String>,
    pub scroll: usize,
}

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub enum InputPurpose {
    Prompt(PaneId),
    Rename(PaneId),
    NewPane(SessionId),
}

#[derive(Debug, PartialEq, Eq)]
pub enum Confirm {
    /// Answer the prompt `prompt_id`, whose lines are `text`.
    Answer {
        pane: PaneId,
        label: String,
        prompt_id: String,
        answer: PermissionAnswer,
        text: Vec<String>,
    },
    Kill {
        pane: PaneId,
        label: String,
    },
    Release {
        pane: PaneId,
        label: String,
    },
    /// Merge the worktree of `pane` (shown as `title`) into its base branch.
    Merge {
        pane: PaneId,
        title: String,
    },
    /// Discard the worktree of `pane`, which holds `summary`.
    Discard {
        pane: PaneId,
        title: String,
        summary: String,
    },
}

/// What a key asks the daemon (or the terminal) for.
#[derive(Debug, PartialEq, Eq)]
pub enum Reply {
    Quit,
    Attach(PaneId),
    Answer {
        pane: PaneId,
        prompt_id: String,
        answer: PermissionAnswer,
    },
    Prompt {
        pane: PaneId,
        text: String,
    },
    Interrupt(PaneId),
    /// Put the pane's idle agent to rest (`fugue hibernate`).
    Hibernate(PaneId),
    /// Resume a hibernated agent in its pane (`fugue wake`).
    Wake(PaneId),
    Kill(PaneId),
    Release(PaneId),
    /// Show the pane's changes in its worktree.
    Diff(PaneId),
    /// Show the fan-out group the pane belongs to, side by side.
    Compare(PaneId),
    /// Merge the pane's worktree branch into its base branch.
    Merge(PaneId),
    /// Release the pane and remove its worktree and branch, work and all.
    Discard(PaneId),
    Rename {
        pane: PaneId,
        title: String,
    },
    NewPane {
        session: SessionId,
        command: String,
    },
}

impl Reply {
    /// The pane it acts on, if one.
    pub fn pane(&self) -> Option<PaneId> {
        match self {
            Reply::Attach(pane) | Reply::Interrupt(pane) | Reply::Kill(pane) | Reply::Release(pane) => Some(*pane),
            Reply::Hibernate(pane) | Reply::Wake(pane) => Some(*pane),
            Reply::Diff(pane) | Reply::Compare(pane) | Reply::Merge(pane) | Reply::Discard(pane) => Some(*pane),
            Reply::Answer { pane, .. } | Reply::Prompt { pane, .. } | Reply::Rename { pane, .. } => Some(*pane),
            Reply::Quit | Reply::NewPane { .. } => None,
        }
    }
}

pub struct Top {
    /// The session shown, or every session.
    pub(crate) session: Option<String>,
    pub(crate) rows: Vec<PaneOverview>,
    /// Agent sessions outside any pane (`claude --bg`), shown under the
    /// panes; `fugue attach bg:ID` opens one.
    pub(crate) background: Vec<fugue_protocol::BackgroundAgent>,
    /// Indices into `rows` of what the filter lets through, in the sort's order.
    pub(crate) shown: Vec<usize>,
    /// The selected pane, kept by id across re-reads.
    pub(crate) selected: Option<PaneId>,
    pub(crate) table: TableState,
    pub(crate) filter: String,
    pub(crate) sort: Sort,
    pub mode: Mode,
    pub(crate) message: Option<(String, bool, Instant)>,
}

impl Top {
    pub fn new(session: Option<String>) -> Top {
        Top {
            session,
            rows: Vec::new(),
            background: Vec::new(),
            shown: Vec::new(),
            selected: None,
            table: TableState::default(),
            filter: String::new(),
            sort: Sort::Needs,
            mode: Mode::Normal,
            message: None,
        }
    }

    /// A fresh read of the overview.
    pub fn replace(&mut self, rows: Vec<PaneOverview>) {
        self.rows = rows;
        self.reorder();
    }

    /// An agent changed state (an event): its row changes in place.
    pub fn agent_changed(&mut self, pane: PaneId, agent: AgentInfo) {
        let Some(row) = self.rows.iter_mut().find(|r| r.pane.id == pane) else {
            return;
        };
        row.agent = Some(agent);
        self.reorder();
    }

    /// A pane or session event, applied in place (no re-read of the
    /// overview: with a thousand panes that takes tens of milliseconds).
    /// `false` when only a re-read can apply it.
    pub fn apply(&mut self, event: &Event) -> bool {
        match event {
            Event::PaneCreated(pane) => {
                // Whether a pane belongs to the one session shown, only the
                // daemon knows (a session target may be a name or an id prefix).
                if self.session.is_some() {
                    return false;
                }
                self.rows.retain(|r| r.pane.id != pane.id);
                self.rows.push(PaneOverview {
                    pane: pane.clone(),
                    agent: None,
                    last_line: String::new(),
                });
            }
            Event::PaneExited(pane)
            | Event::PaneRestarted(pane)
            | Event::PaneRenamed(pane)
            | Event::AgentSessionRecorded(pane) => {
                let Some(row) = self.rows.iter_mut().find(|r| r.pane.id == pane.id) else {
                    return false;
                };
                row.pane = pane.clone();
            }
            Event::PaneRemoved { id, .. } => self.rows.retain(|r| r.pane.id != *id),
            Event::SessionDestroyed { id, .. } => self.rows.retain(|r| r.pane.session_id != *id),
            Event::SessionRenamed { id, name, .. } => {
                for row in self.rows.iter_mut().filter(|r| r.pane.session_id == *id) {
                    row.pane.session_name = name.clone();
                }
            }
            Event::SessionCreated(_) => return true,
            Event::BackgroundAgentChanged(row) => {
                match self.background.iter_mut().find(|b| b.id == row.id) {
                    Some(known) => *known = row.clone(),
                    None => self.background.push(row.clone()),
                }
                return true;
            }
            Event::BackgroundAgentGone { id } => {
                self.background.retain(|b| b.id != *id);
                return true;
            }
            _ => return false,
        }
        self.reorder();
        true
    }

    /// A program in a pane asked to notify the person.
    pub fn notified(&mut self, pane: PaneId, title: &str, body: &str) {
        let label = self
            .rows
            .iter()
            .find(|r| r.pane.id == pane)
            .map(label)
            .unwrap_or_else(|| short(pane));
        let text = [title, body]
            .iter()
            .filter(|t| !t.is_empty())
            .copied()
            .collect::<Vec<_>>();
        self.say(Ok(format!("{label}: {}", text.join(": "))));
    }

    /// Shows the outcome of an action in the status line.
    pub fn say(&mut self, said: Result<String, String>) {
        let (text, error) = match said {
            Ok(text) => (text, false),
            Err(text) => (text, true),
        };
        if !text.is_empty() {
            self.message = Some((text, error, Instant::now()));
        }
    }

    /// Shows `text` (a pane's diff as `fugue diff` prints it) full-screen;
    /// `summary` says what its worktree holds.
    pub fn show_diff(&mut self, pane: PaneId, title: String, summary: String, text: &str) {
        self.mode = Mode::Diff(DiffShown {
            pane,
            title,
            summary,
            actions: true,
            lines: text.lines().map(String::from).collect(),
            scroll: 0,
        });
    }

    /// Shows `text` (a fan-out group as `fugue compare` prints it) full-screen.
    pub fn show_comparison(&mut self, pane: PaneId, title: String, text: &str) {
        self.show_diff(pane, title, String::new(), text);
        if let Mode::Diff(shown) = &mut self.mode {
            shown.actions = false;
        }
    }

    pub fn expire_message(&mut self) {
        if self
            .message
            .as_ref()
            .is_some_and(|(_, _, at)| at.elapsed() >= MESSAGE_FOR)
        {
            self.message = None;
        }
    }

    /// Selects `pane` (the one attach was on when it opened the overview).
    pub fn select_pane(&mut self, pane: PaneId) {
        self.selected = Some(pane);
        self.reorder();
    }

    /// How many panes need a person now.
    pub fn needing(&self) -> usize {
        let panes = self.rows.iter().filter(|r| needs(r) != Attention::Nothing).count();
        panes + self.background.iter().filter(|b| b.agent.needs.needs_you()).count()
    }

    /// How the list names `pane` (`SESSION:INDEX`), or its short id.
    pub fn label_of(&self, pane: PaneId) -> String {
        self.rows
            .iter()
            .find(|r| r.pane.id == pane)
            .map_or_else(|| short(pane), label)
    }

    pub(crate) fn selected_row(&self) -> Option<&PaneOverview> {
        let id = self.selected?;
        self.rows.iter().find(|r| r.pane.id == id)
    }

    /// Sorts and filters the rows; the selection stays on its pane (or the
    /// first row when that pane is gone).
    fn reorder(&mut self) {
        let filter = self.filter.to_lowercase();
        let mut shown: Vec<usize> = (0..self.rows.len())
            .filter(|&i| filter.is_empty() || haystack(&self.rows[i]).contains(&filter))
            .collect();
        let rows = &self.rows;
        // A pane another pane's program made (a lead's teammate) follows its
        // parent: it takes the parent's place, then its own.
        let index_of = |id: PaneId| rows.iter().find(|r| r.pane.id == id).map(|r| r.pane.index);
        let place = |i: &usize| {
            let pane = &rows[*i].pane;
            let parent = pane.tmux.as_ref().and_then(|t| t.parent).and_then(index_of);
            (
                pane.session_name.clone(),
                parent.unwrap_or(pane.index),
                parent.is_some(),
                pane.index,
            )
        };
        match self.sort {
            Sort::Needs => shown.sort_by_key(|i| (needs(&rows[*i]) == Attention::Nothing, place(i))),
            Sort::Session => shown.sort_by_key(place),
            Sort::Recent => shown.sort_by_key(|i| std::cmp::Reverse(since(&rows[*i]))),
        }
        self.shown = shown;
        let position = self
            .selected
            .and_then(|id| self.shown.iter().position(|&i| self.rows[i].pane.id == id));
        let position = position.or((!self.shown.is_empty()).then_some(0));
        self.select(position);
    }

    fn select(&mut self, position: Option<usize>) {
        self.table.select(position);
        self.selected = position.map(|p| self.rows[self.shown[p]].pane.id);
    }

    fn step(&mut self, by: isize) {
        if self.shown.is_empty() {
            return;
        }
        let at = self.table.selected().unwrap_or(0) as isize;
        let last = self.shown.len() as isize - 1;
        self.select(Some((at + by).clamp(0, last) as usize));
    }

    /// Moves to the next shown pane (after the selection, round) whose agent
    /// needs a person.
    fn jump_to_need(&mut self) {
        let count = self.shown.len();
        let at = self.table.selected().unwrap_or(0);
        let next = (1..=count)
            .map(|k| (at + k) % count.max(1))
            .find(|&p| needs(&self.rows[self.shown[p]]) != Attention::Nothing);
        match next {
            Some(p) => self.select(Some(p)),
            None => self.say(Ok("no pane needs you".into())),
        }
    }

    /// Handles a key; what it asks the caller to do, if anything.
    pub fn on_key(&mut self, key: KeyEvent) -> Option<Reply> {
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
            return Some(Reply::Quit);
        }
        match std::mem::replace(&mut self.mode, Mode::Normal) {
            Mode::Normal => self.normal_key(key),
            Mode::Diff(shown) => {
                self.diff_key(key, shown);
                None
            }
            Mode::Filter => {
                match key.code {
                    KeyCode::Enter | KeyCode::Esc => {}
                    KeyCode::Backspace => {
                        self.filter.pop();
                        self.mode = Mode::Filter;
                    }
                    KeyCode::Char(c) if self.filter.len() < INPUT_LIMIT => {
                        self.filter.push(c);
                        self.mode = Mode::Filter;
                    }
                    _ => self.mode = Mode::Filter,
                }
                self.reorder();
                None
            }
            Mode::Input { purpose, mut text } => match key.code {
                KeyCode::Esc => None,
                KeyCode::Enter if text.trim().is_empty() => None,
                KeyCode::Enter => Some(match purpose {
                    InputPurpose::Prompt(pane) => Reply::Prompt { pane, text },
                    InputPurpose::Rename(pane) => Reply::Rename { pane, title: text },
                    InputPurpose::NewPane(session) => Reply::NewPane { session, command: text },
                }),
                KeyCode::Backspace => {
                    text.pop();
                    self.mode = Mode::Input { purpose, text };
                    None
                }
                KeyCode::Char(c) => {
                    if text.len() < INPUT_LIMIT {
                        text.push(c);
                    }
                    self.mode = Mode::Input { purpose, text };
                    None
                }
                _ => {
                    self.mode = Mode::Input { purpose, text };
                    None
                }
            },
            Mode::Confirm(confirm) => match key.code {
                KeyCode::Char('y') | KeyCode::Char('Y') => Some(match confirm {
                    Confirm::Answer {
                        pane,
                        prompt_id,
                        answer,
                        ..
                    } => Reply::Answer {
                        pane,
                        prompt_id,
                        answer,
                    },
                    Confirm::Kill { pane, .. } => Reply::Kill(pane),
                    Confirm::Release { pane, .. } => Reply::Release(pane),
                    Confirm::Merge { pane, .. } => Reply::Merge(pane),
                    Confirm::Discard { pane, .. } => Reply::Discard(pane),
                }),
                _ => {
                    self.say(Ok("cancelled: nothing sent".into()));
                    None
                }
            },
        }
    }

    /// A key while a diff is shown: scroll it, leave it, or ask to merge or
    /// discard its worktree.
    fn diff_key(&mut self, key: KeyEvent, shown: DiffShown) {
        let DiffShown { scroll, .. } = shown;
        let last = shown.lines.len().saturating_sub(1);
        let scroll = match key.code {
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Char('D') => return,
            KeyCode::Char('m') if shown.actions => {
                self.mode = Mode::Confirm(Confirm::Merge {
                    pane: shown.pane,
                    title: shown.title,
                });
                return;
            }
            KeyCode::Char('x') if shown.actions => {
                self.mode = Mode::Confirm(Confirm::Discard {
                    pane: shown.pane,
                    title: shown.title,
                    summary: shown.summary,
                });
                return;
            }
            KeyCode::Down | KeyCode::Char('j') => scroll.saturating_add(1),
            KeyCode::Up | KeyCode::Char('k') => scroll.saturating_sub(1),
            KeyCode::PageDown | KeyCode::Char(' ') => scroll.saturating_add(20),
            KeyCode::PageUp => scroll.saturating_sub(20),
            KeyCode::Home | KeyCode::Char('g') => 0,
            KeyCode::End | KeyCode::Char('G') => last,
            _ => scroll,
        };
        self.mode = Mode::Diff(DiffShown {
            scroll: scroll.min(last),
            ..shown
        });
    }

    fn normal_key(&mut self, key: KeyEvent) -> Option<Reply> {
        let row = self.selected_row();
        let pane = row.map(|r| r.pane.id);
        let label = row.map(label).unwrap_or_default();
        match key.code {
            KeyCode::Char('q') | KeyCode::Esc => return Some(Reply::Quit),
            KeyCode::Down | KeyCode::Char('j') => self.step(1),
            KeyCode::Up | KeyCode::Char('k') => self.step(-1),
            KeyCode::PageDown => self.step(10),
            KeyCode::PageUp => self.step(-10),
            KeyCode::Home | KeyCode::Char('g') => self.step(isize::MIN / 2),
            KeyCode::End | KeyCode::Char('G') => self.step(isize::MAX / 2),
            KeyCode::Tab | KeyCode::Char('n') => self.jump_to_need(),
            KeyCode::Char('/') => self.mode = Mode::Filter,
            KeyCode::Char('s') => {
                self.sort = self.sort.next();
                self.reorder();
            }
            KeyCode::Enter => return pane.map(Reply::Attach),
            KeyCode::Char('a') | KeyCode::Char('d') => {
                let answer = match key.code {
                    KeyCode::Char('a') => PermissionAnswer::Approve,
                    _ => PermissionAnswer::Deny,
                };
                self.ask_answer(answer);
            }
            KeyCode::Char('p') => {
                if let Some(pane) = pane {
                    self.mode = input(InputPurpose::Prompt(pane));
                }
            }
            KeyCode::Char('r') => {
                if let Some(pane) = pane {
                    self.mode = input(InputPurpose::Rename(pane));
                }
            }
            KeyCode::Char('c') => {
                if let Some(session) = row.map(|r| r.pane.session_id) {
                    self.mode = input(InputPurpose::NewPane(session));
                }
            }
            KeyCode::Char('i') => return pane.map(Reply::Interrupt),
            KeyCode::Char('h') => return pane.map(Reply::Hibernate),
            KeyCode::Char('w') => return pane.map(Reply::Wake),
            KeyCode::Char('D') => return pane.map(Reply::Diff),
            KeyCode::Char('C') => return pane.map(Reply::Compare),
            KeyCode::Char('x') => {
                if let Some(pane) = pane {
                    self.mode = Mode::Confirm(Confirm::Kill { pane, label });
                }
            }
            KeyCode::Char('X') => {
                if let Some(pane) = pane {
                    self.mode = Mode::Confirm(Confirm::Release { pane, label });
                }
            }
            _ => {}
        }
        None
    }

    /// Shows the selected pane's permission prompt (its lines and id) and asks
    /// to confirm `answer`; says why not when no prompt waits there.
    fn ask_answer(&mut self, answer: PermissionAnswer) {
        let Some(row) = self.selected_row() else { return };
        let agent = row.agent.as_ref();
        let prompt = agent.and_then(|a| {
            a.prompt_id
                .clone()
                .filter(|_| a.state == AgentState::WaitingForPermission)
        });
        let Some(prompt_id) = prompt else {
            let state = agent.map_or("no agent", |a| a.state.as_str());
            let text = format!("{}: no permission prompt to answer ({state})", label(row));
            self.say(Err(text));
            return;
        };
        let text = agent.map(|a| a.evidence.clone()).unwrap_or_default();
        self.mode = Mode::Confirm(Confirm::Answer {
            pane: row.pane.id,
            label: label(row),
            prompt_id,
            answer,
            text,
        });
    }
}

fn input(purpose: InputPurpose) -> Mode {
    Mode::Input {
        purpose,
        text: String::new(),
    }
}

pub(crate) fn needs(row: &PaneOverview) -> Attention {
    row.agent.as_ref().map_or(Attention::Nothing, |a| a.needs)
}

pub(crate) fn since(row: &PaneOverview) -> u64 {
    row.agent.as_ref().map_or(row.pane.started_at_ms, |a| a.since_ms)
}

/// What the filter looks in, lower-cased.
fn haystack(row: &PaneOverview) -> String {
    let agent = row.agent.as_ref();
    let label = label(row);
    let parts = [
        label.as_str(),
        row.pane.title.as_str(),
        &row.pane.command.join(" "),
        agent.and_then(|a| a.agent).map_or("", |k| k.as_str()),
        agent.map_or("", |a| a.state.as_str()),
        agent.map_or("", |a| a.needs.as_str()),
        row.last_line.as_str(),
    ];
    parts.join("\u{1}").to_lowercase()
}

pub(crate) fn label(row: &PaneOverview) -> String {
    format!("{}:{}", row.pane.session_name, row.pane.index)
}

fn short(id: PaneId) -> String {
    id.to_string().chars().take(8).collect()
}

/// Text a program controls, made safe to draw: no controls, one line.
pub(crate) fn clean(text: &str, max: usize) -> String {
    escape_for_display(text).chars().take(max).collect()
}

/// `45s`, `12m`, `3h`, `2d`.
pub(crate) fn age(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86400 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86400),
    }
}

pub(crate) fn needs_text(attention: Attention) -> &'static str {
    match attention {
        Attention::Nothing => "",
        Attention::Permission => "PERMISSION",
        Attention::Question => "QUESTION",
        Attention::FinishedUnseen => "finished",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{agent, overview, pane_id, NOW};

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn press(top: &mut Top, keys: &str) -> Vec<Reply> {
        keys.chars().filter_map(|c| top.on_key(key(KeyCode::Char(c)))).collect()
    }

    /// Three panes: a plain shell, a busy agent, an agent asking permission.
    fn three() -> Top {
        let mut top = Top::new(None);
        top.replace(vec![
            overview(0, "shell", None),
            overview(
                1,
                "busy",
                Some(agent(AgentState::Busy, Attention::Nothing, NOW - 5_000)),
            ),
            overview(
                2,
                "asks",
                Some(agent(
                    AgentState::WaitingForPermission,
                    Attention::Permission,
                    NOW - 60_000,
                )),
            ),
        ]);
        top
    }

    #[test]
    fn the_pane_that_needs_you_comes_first_and_is_selected() {
        let mut top = three();
        assert_eq!(top.needing(), 1);
        assert_eq!(top.on_key(key(KeyCode::Enter)), Some(Reply::Attach(pane_id(2))));
        // Down to the next row (session order after the one that needs you).
        assert_eq!(press(&mut top, "j"), []);
        assert_eq!(top.on_key(key(KeyCode::Enter)), Some(Reply::Attach(pane_id(0))));
        // n goes back to the pane that needs a person.
        press(&mut top, "n");
        assert_eq!(top.on_key(key(KeyCode::Enter)), Some(Reply::Attach(pane_id(2))));
    }

    #[test]
    fn approving_shows_the_prompt_and_sends_only_on_yes() {
        let mut top = three();
        assert_eq!(press(&mut top, "a"), []);
        let Mode::Confirm(Confirm::Answer { prompt_id, text, .. }) = &top.mode else {
            panic!("no confirmation: {:?}", top.mode);
        };
        assert_eq!((prompt_id.as_str(), text.len()), ("p-1", 1));
        let sent = press(&mut top, "y");
        assert_eq!(
            sent,
            [Reply::Answer {
                pane: pane_id(2),
                prompt_id: "p-1".into(),
                answer: PermissionAnswer::Approve,
            }]
        );
        // Anything but y cancels, and nothing is sent.
        press(&mut top, "d");
        assert_eq!(press(&mut top, "n"), []);
        assert_eq!(top.mode, Mode::Normal);
    }

    #[test]
    fn a_pane_without_a_prompt_is_not_answered() {
        let mut top = three();
        press(&mut top, "j");
        assert_eq!(press(&mut top, "ay"), []);
        assert_eq!(top.mode, Mode::Normal);
    }

    #[test]
    fn typing_a_prompt_ends_with_enter_and_esc_drops_it() {
        let mut top = three();
        press(&mut top, "p");
        press(&mut top, "fix it");
        top.on_key(key(KeyCode::Backspace));
        let sent = top.on_key(key(KeyCode::Enter));
        assert_eq!(
            sent,
            Some(Reply::Prompt {
                pane: pane_id(2),
                text: "fix i".into()
            })
        );
        press(&mut top, "p");
        press(&mut top, "never");
        assert_eq!(top.on_key(key(KeyCode::Esc)), None);
        assert_eq!(top.mode, Mode::Normal);
    }

    #[test]
    fn a_teammate_follows_its_lead() {
        let mut top = Top::new(None);
        let mut mate = overview(3, "mate", None);
        mate.pane.tmux = Some(fugue_client::protocol::TmuxPlace {
            parent: Some(pane_id(0)),
            ..Default::default()
        });
        top.replace(vec![overview(0, "lead", None), overview(1, "other", None), mate]);
        press(&mut top, "s");
        assert_eq!(top.sort, Sort::Session);
        let order: Vec<u32> = top.shown.iter().map(|&i| top.rows[i].pane.index).collect();
        assert_eq!(order, [0, 3, 1], "the teammate right under its lead");
    }

    #[test]
    fn the_filter_narrows_the_rows_and_sort_cycles() {
        let mut top = three();
        press(&mut top, "/");
        press(&mut top, "busy");
        top.on_key(key(KeyCode::Enter));
        assert_eq!(top.on_key(key(KeyCode::Enter)), Some(Reply::Attach(pane_id(1))));
        assert_eq!(top.sort, Sort::Needs);
        press(&mut top, "s");
        assert_eq!(top.sort, Sort::Session);
        press(&mut top, "ss");
        assert_eq!(top.sort, Sort::Needs);
    }

    #[test]
    fn a_diff_is_asked_for_shown_scrolled_and_left() {
        let mut top = three();
        assert_eq!(press(&mut top, "D"), [Reply::Diff(pane_id(2))]);
        let text = "  +1 -1  modified  a.txt\n1 file(s)\n\na.txt (modified)\n@@ -1 +1 @@\n-old\n+new";
        top.show_diff(pane_id(2), "w:0 · fugue/x".into(), "1 changed file".into(), text);
        let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(60, 10)).unwrap();
        terminal.draw(|frame| crate::top_view::draw(frame, &mut top)).unwrap();
        let screen: String = terminal
            .backend()
            .buffer()
            .content()
            .iter()
            .map(|c| c.symbol())
            .collect();
        assert!(
            screen.contains("fugue/x") && screen.contains("+new") && screen.contains("lines 1-7 of 7"),
            "{screen}"
        );
        press(&mut top, "jjG");
        assert!(
            matches!(top.mode, Mode::Diff(DiffShown { scroll: 6, .. })),
            "{:?}",
            top.mode
        );
        press(&mut top, "gk");
        assert!(matches!(top.mode, Mode::Diff(DiffShown { scroll: 0, .. })));
        assert_eq!(press(&mut top, "q"), []);
        assert_eq!(top.mode, Mode::Normal);
        // Merge and discard from the diff, each only after `y`.
        let show = |top: &mut Top| top.show_diff(pane_id(2), "w:0 · fugue/x".into(), "1 changed file".into(), text);
        show(&mut top);
        assert_eq!(press(&mut top, "mn"), []);
        assert_eq!(top.mode, Mode::Normal);
        show(&mut top);
        assert_eq!(press(&mut top, "my"), [Reply::Merge(pane_id(2))]);
        show(&mut top);
        assert_eq!(press(&mut top, "xy"), [Reply::Discard(pane_id(2))]);
    }

    #[test]
    fn kill_and_release_ask_first_and_quit_needs_no_pane() {
        let mut top = three();
        assert_eq!(press(&mut top, "xy"), [Reply::Kill(pane_id(2))]);
        assert_eq!(press(&mut top, "Xy"), [Reply::Release(pane_id(2))]);
        assert_eq!(press(&mut top, "i"), [Reply::Interrupt(pane_id(2))]);
        assert_eq!(press(&mut top, "h"), [Reply::Hibernate(pane_id(2))]);
        assert_eq!(press(&mut top, "w"), [Reply::Wake(pane_id(2))]);
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(top.on_key(ctrl_c), Some(Reply::Quit));
        assert_eq!(Top::new(None).on_key(key(KeyCode::Enter)), None);
        assert_eq!(press(&mut Top::new(None), "q"), [Reply::Quit]);
    }
}
