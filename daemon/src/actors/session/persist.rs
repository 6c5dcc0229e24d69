//! Writing the session's panes to the store: their records, and every 2 s the
//! screens and last text lines of the panes whose output changed.

use super::*;

impl SessionState {
    /// Records the screens of panes whose output changed since the last time.
    pub(super) fn checkpoint(&mut self) {
        for pane in &mut self.panes {
            let changes = *pane.output.changes().borrow();
            if changes == pane.checkpointed || !pane.running() {
                continue;
            }
            pane.checkpointed = changes;
            self.args.store.output(pane.info.id, pane.saved_output());
        }
    }

    pub(super) fn persist(&self, index: usize) {
        if let Some(pane) = self.panes.get(index) {
            self.args.store.pane(pane.record());
        }
    }

    pub(super) fn persist_all(&self) {
        for index in 0..self.panes.len() {
            self.persist(index);
        }
    }
}
