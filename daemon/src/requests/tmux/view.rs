//! One tmux server as fugue's tmux sees it: the live panes of one fugue
//! session that carry the server's label, grouped into tmux sessions and
//! windows by their places, in id order (tmux's indexes are positions in it,
//! from 0 as tmux's `base-index`). Targets resolve against it.

use fugue_protocol::tmux::{PaneRef, SessionRef, Target, WindowRef};
use fugue_protocol::{PaneInfo, PaneState, TmuxPlace};

/// A pane of the server, with its place.
#[derive(Clone, Debug)]
pub struct Pane {
    pub info: PaneInfo,
    pub place: TmuxPlace,
}

pub struct View {
    /// Sorted by session id, window id, pane id.
    pub panes: Vec<Pane>,
    /// The caller's own pane, when it is on this server.
    pub current: Option<u32>,
}

/// What a command acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Session,
    Window,
    Pane,
}

pub fn not_found(kind: Kind, target: &str) -> String {
    let kind = match kind {
        Kind::Session => "session",
        Kind::Window => "window",
        Kind::Pane => "pane",
    };
    format!("can't find {kind}: {target}")
}

impl View {
    pub fn new(panes: Vec<PaneInfo>, server: &str, caller: Option<&PaneInfo>) -> Self {
        let mut panes: Vec<Pane> = panes
            .into_iter()
            .filter(|p| !matches!(p.state, PaneState::Exited | PaneState::Lost))
            .filter_map(|info| {
                let place = info.tmux.clone().filter(|t| t.server == server)?;
                Some(Pane { info, place })
            })
            .collect();
        panes.sort_by_key(|p| (p.place.session_id, p.place.window_id, p.place.pane_id));
        let current = caller
            .and_then(|c| c.tmux.as_ref())
            .filter(|t| t.server == server)
            .map(|t| t.pane_id)
            .filter(|id| panes.iter().any(|p| p.place.pane_id == *id));
        Self { panes, current }
    }

    /// Session ids in order.
    pub fn sessions(&self) -> Vec<u32> {
        let mut ids: Vec<u32> = self.panes.iter().map(|p| p.place.session_id).collect();
        ids.dedup();
        ids
    }

    /// Window ids of a session in order.
    pub fn windows(&self, session: u32) -> Vec<u32> {
        let mut ids: Vec<u32> = self
            .panes
            .iter()
            .filter(|p| p.place.session_id == session)
            .map(|p| p.place.window_id)
            .collect();
        ids.dedup();
        ids
    }

    pub fn window_panes(&self, window: u32) -> impl Iterator<Item = &Pane> {
        self.panes.iter().filter(move |p| p.place.window_id == window)
    }

    pub fn session_panes(&self, session: u32) -> impl Iterator<Item = &Pane> {
        self.panes.iter().filter(move |p| p.place.session_id == session)
    }

    pub fn pane(&self, id: u32) -> Option<&Pane> {
        self.panes.iter().find(|p| p.place.pane_id == id)
    }

    /// A pane's index in its window.
    pub fn pane_index(&self, pane: &Pane) -> usize {
        self.window_panes(pane.place.window_id)
            .position(|p| p.place.pane_id == pane.place.pane_id)
            .unwrap_or(0)
    }

    /// A window's index in its session.
    pub fn window_index(&self, pane: &Pane) -> usize {
        self.windows(pane.place.session_id)
            .iter()
            .position(|w| *w == pane.place.window_id)
            .unwrap_or(0)
    }

    fn first_of_session(&self, session: u32) -> Option<&Pane> {
        self.session_panes(session).next()
    }

    fn first_of_window(&self, window: u32) -> Option<&Pane> {
        self.window_panes(window).next()
    }

    /// The current pane: the caller's, else the newest session's first pane
    /// (tmux, called outside tmux, takes the most recent session).
    pub fn current_pane(&self) -> Option<&Pane> {
        match self.current {
            Some(id) => self.pane(id),
            None => self.sessions().last().and_then(|s| self.first_of_session(*s)),
        }
    }

    fn session_by_name(&self, name: &str, exact: bool) -> Option<u32> {
        let named = |p: &&Pane| p.place.session == name;
        if let Some(p) = self.panes.iter().find(named) {
            return Some(p.place.session_id);
        }
        if exact {
            return None;
        }
        let mut prefixed: Vec<u32> = self
            .panes
            .iter()
            .filter(|p| p.place.session.starts_with(name))
            .map(|p| p.place.session_id)
            .collect();
        prefixed.dedup();
        match prefixed.as_slice() {
            [one] => Some(*one),
            _ => None,
        }
    }

    fn session_of(&self, session: &SessionRef) -> Option<u32> {
        match session {
            SessionRef::Id(id) => self.panes.iter().any(|p| p.place.session_id == *id).then_some(*id),
            SessionRef::Name { name, exact } => self.session_by_name(name, *exact),
        }
    }

    fn window_in(&self, session: u32, window: &WindowRef) -> Option<u32> {
        let windows = self.windows(session);
        match window {
            WindowRef::Id(id) => windows.contains(id).then_some(*id),
            WindowRef::Index(index) => windows.get(*index as usize).copied(),
            WindowRef::Name(name) => self
                .session_panes(session)
                .find(|p| p.place.window_name == *name)
                .map(|p| p.place.window_id),
        }
    }

    fn pane_in(&self, window: u32, pane: &PaneRef) -> Option<&Pane> {
        match pane {
            PaneRef::Id(id) => self.window_panes(window).find(|p| p.place.pane_id == *id),
            PaneRef::Index(index) => self.window_panes(window).nth(*index as usize),
        }
    }

    /// The pane `target` names for a command acting on a `kind` (a session's
    /// or window's first pane stands for it), or the current one when `None`.
    pub fn resolve(&self, target: Option<&str>, kind: Kind) -> Result<&Pane, String> {
        let Some(text) = target else {
            return self.current_pane().ok_or_else(|| "no current session".to_string());
        };
        let missing = || not_found(kind, text);
        let parsed = fugue_protocol::tmux::parse_target(text).map_err(|e| e.0)?;
        match parsed {
            Target::Pane(id) => self.pane(id).ok_or_else(missing),
            Target::Window(id) => self.first_of_window(id).ok_or_else(missing),
            Target::Session(id) => self.first_of_session(id).ok_or_else(missing),
            Target::Path {
                session,
                window,
                pane,
                bare,
            } => {
                if bare && kind != Kind::Session {
                    // A bare word names a session, then a window of the current one.
                    if let Some(found) = session.as_ref().and_then(|s| self.session_of(s)) {
                        return self.first_of_session(found).ok_or_else(missing);
                    }
                    let current = self.current_pane().ok_or_else(missing)?;
                    let word = WindowRef::Name(text.to_string());
                    let index = text.parse().map(WindowRef::Index).unwrap_or(word);
                    let window = self.window_in(current.place.session_id, &index).ok_or_else(missing)?;
                    return self.first_of_window(window).ok_or_else(missing);
                }
                let session_id = match &session {
                    Some(s) => self.session_of(s).ok_or_else(|| not_found(Kind::Session, text))?,
                    None => self.current_pane().ok_or_else(missing)?.place.session_id,
                };
                let window_id = match &window {
                    Some(w) => self
                        .window_in(session_id, w)
                        .ok_or_else(|| not_found(Kind::Window, text))?,
                    None => match self.current_pane().filter(|c| c.place.session_id == session_id) {
                        Some(current) if session.is_none() => current.place.window_id,
                        _ => self.first_of_session(session_id).ok_or_else(missing)?.place.window_id,
                    },
                };
                match &pane {
                    Some(p) => self.pane_in(window_id, p).ok_or_else(|| not_found(Kind::Pane, text)),
                    None => match self.current_pane().filter(|c| c.place.window_id == window_id) {
                        Some(current) if window.is_none() && session.is_none() => Ok(current),
                        _ => self.first_of_window(window_id).ok_or_else(missing),
                    },
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pane(session: (&str, u32), window: u32, id: u32) -> PaneInfo {
        let mut info = crate::requests::tmux::tests::blank_info();
        info.tmux = Some(TmuxPlace {
            server: "default".into(),
            session: session.0.into(),
            session_id: session.1,
            window_id: window,
            window_name: format!("w{window}"),
            pane_id: id,
            ..Default::default()
        });
        info
    }

    fn view() -> View {
        let panes = vec![
            pane(("work", 0), 0, 0),
            pane(("work", 0), 0, 3),
            pane(("work", 0), 2, 4),
            pane(("app", 1), 5, 6),
        ];
        View::new(panes, "default", None)
    }

    fn id(view: &View, target: &str, kind: Kind) -> Result<u32, String> {
        view.resolve(Some(target), kind).map(|p| p.place.pane_id)
    }

    #[test]
    fn targets_resolve_as_tmux_does() {
        let v = view();
        assert_eq!(id(&v, "%3", Kind::Pane), Ok(3));
        assert_eq!(id(&v, "@2", Kind::Window), Ok(4));
        assert_eq!(id(&v, "$1", Kind::Session), Ok(6));
        assert_eq!(id(&v, "work:1", Kind::Window), Ok(4));
        assert_eq!(id(&v, "work:0.1", Kind::Pane), Ok(3));
        assert_eq!(id(&v, "work:w2", Kind::Window), Ok(4));
        assert_eq!(id(&v, "=app", Kind::Session), Ok(6));
        assert_eq!(id(&v, "ap", Kind::Session), Ok(6), "a unique prefix");
        assert_eq!(id(&v, "=ap", Kind::Session), Err("can't find session: =ap".into()));
        assert_eq!(id(&v, "nope", Kind::Session), Err("can't find session: nope".into()));
        assert_eq!(id(&v, "%9", Kind::Pane), Err("can't find pane: %9".into()));
        // Without a caller, the newest session is current.
        assert_eq!(v.resolve(None, Kind::Pane).map(|p| p.place.pane_id), Ok(6));
        assert_eq!(v.pane_index(v.pane(3).unwrap()), 1);
        assert_eq!(v.window_index(v.pane(4).unwrap()), 1);
    }
}
