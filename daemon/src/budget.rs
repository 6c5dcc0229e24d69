//! Memory that clients make the daemon hold, counted against budgets.
//!
//! Each connection has a budget of its own, and all of them draw on one budget
//! for the daemon ([`DEFAULT_CLIENT_MEMORY`] unless `fugued --client-memory`
//! says otherwise). What counts: requests being worked on and the room
//! reserved for their replies, frames queued for the client (replies and
//! events), output queued for an attached client, and compiled wait patterns.
//! A [`Charge`] is the proof of a charge and gives the bytes back when it is
//! dropped, so a charge travels with the thing it pays for.
//!
//! The per-connection queues keep their own limits too (they make a client that
//! stops reading wait, or lag); the budgets add what those limits cannot: one sum
//! over all connections, and memory that a request keeps (a pattern) rather
//! than passes on.
//!
//! What holds memory by design, and how it is counted:
//! - a request: its bytes as framed and the task that runs it (its future's
//!   size: several KiB), at least 1 KiB, from when it is read, and
//!   the room its reply may take (`Request::reply_bytes`) from before it runs
//!   until the reply is queued; the queued frame is then charged itself;
//! - a search (grep, a wait's pattern): the compiled pattern while the request
//!   holds it; the lines it finds are its reply, kept within the reply's room;
//!   the text it copies out of a pane is copied on a search thread once the
//!   job runs (`requests::search`), so those copies are one batch per search
//!   thread in the whole daemon, not one per waiting request;
//! - an attachment: the most the pane may queue for that client
//!   (`SUBSCRIBER_BYTES`, 1 MiB), for as long as it is attached;
//! - a subscription to events: each event is encoded once and charged to the
//!   daemon's budget while any subscriber's queue holds it; each connection's
//!   queue is bounded (`OUT_QUEUE_BYTES`), and an event over budget is one the
//!   subscriber misses (it hears `lagged`);
//! - a wait: its pattern, as above, and its request and reply room; waiting
//!   itself holds nothing more.
//!
//! `hardening::pipelined_requests_hold_what_they_are_charged` (tests/) holds
//! this: a client that pipelines a request kind and never reads grows the
//! daemon's own memory by at most its charge plus 16 MiB (what the allocator
//! keeps between two give-backs, see [`GIVE_BACK_AFTER`], and run-to-run
//! variance; measured at most 8).

use fugue_protocol::{ErrorCode, ErrorReply};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The daemon's budget for what clients make it hold.
pub const DEFAULT_CLIENT_MEMORY: usize = 256 * 1024 * 1024;
/// One connection's share at most.
pub const CONNECTION_MEMORY: usize = 64 * 1024 * 1024;
/// Compiled wait patterns one connection may hold at once.
pub const CONNECTION_PATTERN_MEMORY: usize = 16 * 1024 * 1024;
/// When the daemon's clients have let go of this much since their peak, the
/// freed memory is given back to the system ([`crate::memory::give_back`]):
/// else a client that made the daemon hold many MiB and went would leave
/// fugued's resident set at that peak for good.
pub const GIVE_BACK_AFTER: usize = 4 * 1024 * 1024;

/// A number of bytes that may be held, and how many are.
pub struct Budget {
    what: &'static str,
    limit: usize,
    used: AtomicUsize,
    /// The most held since memory was last given back (kept by the root only).
    peak: AtomicUsize,
    /// Every charge counts here too.
    parent: Option<Arc<Budget>>,
    /// Notified whenever bytes are given back to this budget.
    freed: tokio::sync::Notify,
}

/// Bytes held against a budget (and its parent) until this is dropped.
#[must_use]
pub struct Charge {
    budget: Option<Arc<Budget>>,
    bytes: usize,
}

/// A charge did not fit.
#[derive(Debug, Clone)]
pub struct OverBudget {
    /// The daemon's own budget (the root), not one connection's share.
    pub daemon_wide: bool,
    pub what: &'static str,
    pub limit: usize,
    pub used: usize,
    pub asked: usize,
}

impl Budget {
    pub fn new(what: &'static str, limit: usize) -> Arc<Self> {
        Arc::new(Self {
            what,
            limit,
            used: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            parent: None,
            freed: tokio::sync::Notify::new(),
        })
    }

    /// A budget whose charges count against this one as well.
    pub fn child(self: &Arc<Self>, what: &'static str, limit: usize) -> Arc<Self> {
        Arc::new(Self {
            what,
            limit,
            used: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            parent: Some(self.clone()),
            freed: tokio::sync::Notify::new(),
        })
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    pub fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }

    /// Holds `bytes` if this budget and every parent have room for them.
    pub fn try_charge(self: &Arc<Self>, bytes: usize) -> Result<Charge, OverBudget> {
        self.reserve(bytes)?;
        Ok(Charge {
            budget: Some(self.clone()),
            bytes,
        })
    }

    /// Holds `bytes` whether or not they fit: for what was already admitted
    /// under another charge (a reply that its request reserved room for).
    pub fn force_charge(self: &Arc<Self>, bytes: usize) -> Charge {
        self.hold(bytes);
        Charge {
            budget: Some(self.clone()),
            bytes,
        }
    }

    /// Counts `bytes` here and in every budget above, fitting or not.
    fn hold(&self, bytes: usize) {
        let mut budget = Some(self);
        while let Some(b) = budget {
            let used = b.used.fetch_add(bytes, Ordering::AcqRel) + bytes;
            b.note_peak(used);
            budget = b.parent.as_deref();
        }
    }

    /// The refusal of `asked` more bytes, as things stand.
    pub fn refusal(&self, asked: usize) -> OverBudget {
        OverBudget {
            daemon_wide: self.parent.is_none(),
            what: self.what,
            limit: self.limit,
            used: self.used(),
            asked,
        }
    }

    fn reserve(&self, bytes: usize) -> Result<(), OverBudget> {
        let fits = self.used.fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
            used.checked_add(bytes).filter(|total| *total <= self.limit)
        });
        let used = match fits {
            Ok(used) => used,
            Err(used) => {
                return Err(OverBudget {
                    daemon_wide: self.parent.is_none(),
                    what: self.what,
                    limit: self.limit,
                    used,
                    asked: bytes,
                })
            }
        };
        self.note_peak(used + bytes);
        if let Some(parent) = &self.parent {
            if let Err(over) = parent.reserve(bytes) {
                self.used.fetch_sub(bytes, Ordering::AcqRel);
                return Err(over);
            }
        }
        Ok(())
    }

    fn release(&self, bytes: usize) {
        let mut budget = Some(self);
        while let Some(b) = budget {
            let used = b.used.fetch_sub(bytes, Ordering::AcqRel) - bytes;
            b.freed.notify_waiters();
            if b.parent.is_none() {
                b.give_back_below_peak(used);
            }
            budget = b.parent.as_deref();
        }
    }

    fn note_peak(&self, used: usize) {
        if self.parent.is_none() {
            self.peak.fetch_max(used, Ordering::AcqRel);
        }
    }

    /// Gives freed memory back to the system once [`GIVE_BACK_AFTER`] has been
    /// let go of since the peak; the peak starts again from what is held now.
    fn give_back_below_peak(&self, used: usize) {
        let peak = self.peak.load(Ordering::Acquire);
        if peak.saturating_sub(used) < GIVE_BACK_AFTER {
            return;
        }
        if self
            .peak
            .compare_exchange(peak, used, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            crate::memory::give_back();
        }
    }

    /// The daemon's budget this one draws on (itself if it is the root).
    pub fn root(self: &Arc<Self>) -> Arc<Self> {
        let mut budget = self.clone();
        while let Some(parent) = budget.parent.clone() {
            budget = parent;
        }
        budget
    }

    /// Resolves the next time bytes are given back to this budget.
    pub fn freed(&self) -> tokio::sync::futures::Notified<'_> {
        self.freed.notified()
    }
}

impl Charge {
    /// A charge of nothing (where no budget applies).
    pub fn none() -> Self {
        Self { budget: None, bytes: 0 }
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// `self` and `other`, charged to the same budget, held as one.
    pub fn join(mut self, mut other: Charge) -> Charge {
        match (&self.budget, &other.budget) {
            (None, _) => return other,
            (Some(a), Some(b)) if Arc::ptr_eq(a, b) => {
                self.bytes += other.bytes;
                other.budget = None;
                other.bytes = 0;
            }
            // Of different budgets (never so here): the other is let go.
            _ => {}
        }
        self
    }

    /// This charge made `bytes` large, in place: what it holds over is given
    /// back, what it lacks is held whether it fits or not. Nothing is counted
    /// twice in between (a reply taking over its request's reservation never
    /// shows the daemon over its budget); `None` for a charge of no budget.
    pub fn resized(mut self, bytes: usize) -> Option<Charge> {
        let budget = self.budget.clone()?;
        match bytes.cmp(&self.bytes) {
            std::cmp::Ordering::Less => budget.release(self.bytes - bytes),
            std::cmp::Ordering::Greater => budget.hold(bytes - self.bytes),
            std::cmp::Ordering::Equal => {}
        }
        self.bytes = bytes;
        Some(self)
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        if let Some(budget) = self.budget.take() {
            budget.release(self.bytes);
        }
    }
}

impl std::fmt::Debug for Charge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Charge({} bytes)", self.bytes)
    }
}

/// Bytes as a person reads them: "256 MiB", "1.5 MiB", "12 KiB".
pub fn human(bytes: usize) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    match bytes {
        b if b >= 1024 * 1024 => {
            let mib = b as f64 / MIB;
            match mib.fract() < 0.05 {
                true => format!("{mib:.0} MiB"),
                false => format!("{mib:.1} MiB"),
            }
        }
        b if b >= 1024 => format!("{} KiB", b / 1024),
        b => format!("{b} bytes"),
    }
}

impl From<OverBudget> for ErrorReply {
    fn from(over: OverBudget) -> Self {
        ErrorReply::new(
            ErrorCode::LimitReached,
            format!(
                "{} of {} is in use ({} held, {} more asked); the daemon refuses work that would hold more: read what is queued, cancel waits, or ask for less",
                over.what,
                human(over.limit),
                human(over.used),
                human(over.asked)
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_takes_over_its_reservation_without_counting_twice() {
        let daemon = Budget::new("the daemon's client memory", 100);
        let connection = daemon.child("this connection's memory", 100);
        let reserved = connection.try_charge(60).unwrap();
        let built = connection.try_charge(30).unwrap();
        let held = reserved.join(built);
        assert_eq!((held.bytes(), daemon.used()), (90, 90));
        // Smaller than what was held: the rest comes back, nothing over.
        let reply = held.resized(40).unwrap();
        assert_eq!((reply.bytes(), connection.used(), daemon.used()), (40, 40, 40));
        // Larger: the lack is held, fitting or not.
        let reply = reply.resized(120).unwrap();
        assert_eq!(daemon.used(), 120);
        drop(reply);
        assert_eq!(daemon.used(), 0);
        assert!(Charge::none().resized(5).is_none());
        let other = Budget::new("another", 10);
        let mixed = connection.try_charge(5).unwrap().join(other.try_charge(5).unwrap());
        assert_eq!(
            (mixed.bytes(), other.used()),
            (5, 0),
            "a charge of another budget is let go"
        );
    }

    #[test]
    fn charges_count_in_the_parent_and_come_back_when_dropped() {
        let global = Budget::new("the daemon's client memory", 100);
        let a = global.child("this connection's memory", 80);
        let b = global.child("this connection's memory", 80);
        let first = a.try_charge(60).unwrap();
        assert_eq!((a.used(), global.used()), (60, 60));
        // The connection has room, the daemon does not.
        let over = b.try_charge(50).unwrap_err();
        assert_eq!((over.what, over.limit), ("the daemon's client memory", 100));
        assert_eq!(b.used(), 0, "a refused charge leaves nothing behind");
        // The connection's own limit.
        let over = a.try_charge(30).unwrap_err();
        assert_eq!(over.what, "this connection's memory");
        drop(first);
        assert_eq!((a.used(), global.used()), (0, 0));
        let forced = b.force_charge(500);
        assert_eq!(global.used(), 500);
        assert!(a.try_charge(1).is_err());
        drop(forced);
        assert!(a.try_charge(1).is_ok());
    }

    #[test]
    fn memory_let_go_of_since_the_peak_is_given_back() {
        let global = Budget::new("the daemon's client memory", 64 * 1024 * 1024);
        let connection = global.child("this connection's memory", 64 * 1024 * 1024);
        let held = connection.try_charge(GIVE_BACK_AFTER).unwrap();
        let small = connection.force_charge(1024);
        assert_eq!(global.peak.load(Ordering::Acquire), GIVE_BACK_AFTER + 1024);
        drop(small);
        assert_eq!(
            global.peak.load(Ordering::Acquire),
            GIVE_BACK_AFTER + 1024,
            "less than the step let go of"
        );
        drop(held);
        assert_eq!(
            global.peak.load(Ordering::Acquire),
            0,
            "given back: the peak starts again"
        );
    }

    #[test]
    fn the_refusal_names_the_budget_and_its_limit() {
        let global = Budget::new("the daemon's client memory", 256 * 1024 * 1024);
        let reply = ErrorReply::from(global.try_charge(300 * 1024 * 1024).unwrap_err());
        assert_eq!(reply.code, ErrorCode::LimitReached);
        assert!(
            reply
                .message
                .starts_with("the daemon's client memory of 256 MiB is in use (0 bytes held, 300 MiB more asked)"),
            "{}",
            reply.message
        );
    }
}
