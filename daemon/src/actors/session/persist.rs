//! Writing the session's panes to the store: their records, and the screens
//! and last text lines of the panes whose output changed, when due (checked
//! every 2 s).

use super::*;

impl SessionState {
    /// Records the screen and last text lines of panes that changed, when
    /// their record is due: at once for a pane's first, then when its raw log,
    /// kept in the state directory, would soon no longer reach back to the last
    /// record (half of what a recovery replays was written since), and at least
    /// every [`RECORD_AT_LEAST`]. In between, a crash loses nothing: recovery
    /// replays the log on top of the last record. A log kept in memory (its
    /// file could not be made) leaves the record as all there is: every change
    /// is recorded. Agent TUIs redraw many times a second, and writing their
    /// screens and a thousand lines each every 2 s into SQLite was most of what
    /// records cost them.
    pub(super) fn checkpoint(&mut self) {
        let mut deferred = false;
        for pane in &mut self.panes {
            let changes = *pane.output.changes().borrow();
            if changes == pane.checkpointed || !pane.running() {
                continue;
            }
            if !record_due(pane.recorded, pane.output.replayable()) {
                deferred = true;
                continue;
            }
            pane.checkpointed = changes;
            let saved = pane.saved_output();
            pane.recorded = Some((Instant::now(), saved.fed));
            self.args.store.output(pane.info.id, saved);
        }
        // A change not recorded yet is looked at again at the next checkpoint.
        if deferred {
            self.output_arrived.notify_one();
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

/// Whether a changed pane's record is due (see [`SessionState::checkpoint`]):
/// `recorded` is when the last record was made and the log offset it reached,
/// `replay` what a recovery would replay of the log now (`None`: the log is
/// not kept in a file).
fn record_due(recorded: Option<(Instant, u64)>, replay: Option<Replayable>) -> bool {
    let (Some((at, reached)), Some(replay)) = (recorded, replay) else {
        return true;
    };
    replay.end.saturating_sub(reached) >= replay.window / 2 || replay.start > reached || at.elapsed() >= RECORD_AT_LEAST
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_due_before_the_log_stops_reaching_back() {
        let replay = |start, end| {
            Some(Replayable {
                start,
                end,
                window: 1000,
            })
        };
        let now = Instant::now();
        // The first record, and any record of a log kept in memory, at once.
        assert!(record_due(None, replay(0, 10)));
        assert!(record_due(Some((now, 0)), None));
        // Less than half the window written since: the log covers it.
        assert!(!record_due(Some((now, 100)), replay(0, 599)));
        // Half of it: due, before the log drops what came after the record.
        assert!(record_due(Some((now, 100)), replay(0, 600)));
        // The log already dropped bytes after the record.
        assert!(record_due(Some((now, 100)), replay(101, 200)));
        // And at least every RECORD_AT_LEAST.
        let long_ago = now
            .checked_sub(RECORD_AT_LEAST)
            .expect("up for longer than RECORD_AT_LEAST");
        assert!(record_due(Some((long_ago, 100)), replay(0, 101)));
    }
}
