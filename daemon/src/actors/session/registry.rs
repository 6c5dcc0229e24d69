//! The session's panes as a list: finding one by target, renaming, reordering.

use super::*;

impl SessionState {
    pub(super) fn find(&self, lookup: &PaneLookup) -> Result<usize, ErrorReply> {
        match lookup {
            PaneLookup::Id(id) => self
                .panes
                .iter()
                .position(|p| p.info.id == *id)
                .ok_or_else(|| ErrorReply::new(ErrorCode::PaneNotFound, format!("pane not found: {id}"))),
            PaneLookup::Target(text) => self.find_target(text),
        }
    }

    /// An index, a title, or an id prefix within this session, optionally written
    /// as `SESSION:PANE` with this session's name.
    pub(super) fn find_target(&self, text: &str) -> Result<usize, ErrorReply> {
        let name = &self.args.name;
        if let Some((session, pane)) = text.split_once(':') {
            if session != name && !self.args.id.to_string().starts_with(session) {
                return Err(ErrorReply::invalid(format!("pane '{text}' is not in session '{name}'")));
            }
            return self.find_target(pane);
        }
        if let Ok(index) = text.parse::<usize>() {
            return match index < self.panes.len() {
                true => Ok(index),
                false => Err(ErrorReply::new(
                    ErrorCode::PaneNotFound,
                    format!(
                        "pane not found: '{name}:{index}'; session '{name}' has {} panes (0-{})",
                        self.panes.len(),
                        self.panes.len().saturating_sub(1)
                    ),
                )),
            };
        }
        let candidates = self.panes.iter().map(|p| Candidate {
            id: p.info.id.0,
            name: &p.info.title,
        });
        let id = target::resolve(text, candidates, "pane", ErrorCode::PaneNotFound)?;
        self.find(&PaneLookup::Id(PaneId(id)))
    }

    pub(super) fn rename_pane(&mut self, id: PaneId, title: String) -> Result<PaneInfo, ErrorReply> {
        let index = self.find(&PaneLookup::Id(id))?;
        self.panes[index].info.title = title;
        self.persist(index);
        let info = self.panes[index].info();
        self.args.events.send(Event::PaneRenamed(info.clone()));
        Ok(info)
    }

    pub(super) fn set_tmux(&mut self, id: PaneId, place: fugue_protocol::TmuxPlace) -> Result<PaneInfo, ErrorReply> {
        let index = self.find(&PaneLookup::Id(id))?;
        self.panes[index].info.tmux = Some(place);
        self.persist(index);
        Ok(self.panes[index].info())
    }

    /// Applies a new order only if it names every pane exactly once.
    pub(super) fn reorder(&mut self, targets: &[String]) -> Result<Vec<PaneInfo>, ErrorReply> {
        let mut order = Vec::with_capacity(targets.len());
        for target in targets {
            let index = self.find_target(target)?;
            if order.contains(&index) {
                return Err(ErrorReply::invalid(format!(
                    "pane '{target}' is named twice; name every pane exactly once"
                )));
            }
            order.push(index);
        }
        if order.len() != self.panes.len() {
            let missing: Vec<String> = (0..self.panes.len())
                .filter(|i| !order.contains(i))
                .map(|i| format!("{} ({})", self.panes[i].info.id, self.panes[i].info.title))
                .collect();
            return Err(ErrorReply::invalid(format!(
                "reorder must name all {} panes of session '{}'; missing: {}",
                self.panes.len(),
                self.args.name,
                missing.join(", ")
            )));
        }
        let mut slots: Vec<Option<PaneEntry>> = self.panes.drain(..).map(Some).collect();
        self.panes = order.iter().filter_map(|i| slots[*i].take()).collect();
        self.renumber();
        self.persist_all();
        self.args.events.send(Event::PanesReordered {
            session_id: self.args.id,
            panes: self.panes.iter().map(|p| p.info.id).collect(),
        });
        Ok(self.panes.iter().map(PaneEntry::info).collect())
    }

    pub(super) fn renumber(&mut self) {
        for (i, pane) in self.panes.iter_mut().enumerate() {
            pane.info.index = i as u32;
        }
    }
}
