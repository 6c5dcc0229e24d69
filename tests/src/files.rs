//! Waiting on files that other processes write (the daemon's log, a
//! notification sink's output, the records database, a model stub's log):
//! the kernel says when something in their directory changed (inotify), and
//! only then does the test look again. No clock decides when to look.

use crate::{Daemon, DEADLINE};
use rustix::fs::inotify;
use std::path::Path;
use std::time::{Duration, Instant};

/// Looks with `check` now and after each change inotify reports in
/// `watched` (a file written or closed; in a directory, a file created,
/// written, moved in or removed), until it answers; panics naming `what`
/// after `deadline`. The watch is set before the first look, so a change
/// between the two is not missed.
pub fn until_changed<T>(watched: &Path, what: &str, deadline: Duration, mut check: impl FnMut() -> Option<T>) -> T {
    let watch = inotify::init(inotify::CreateFlags::CLOEXEC | inotify::CreateFlags::NONBLOCK).expect("inotify_init");
    let changes = inotify::WatchFlags::MODIFY
        | inotify::WatchFlags::CREATE
        | inotify::WatchFlags::CLOSE_WRITE
        | inotify::WatchFlags::MOVED_TO
        | inotify::WatchFlags::DELETE
        | inotify::WatchFlags::ATTRIB;
    inotify::add_watch(&watch, watched, changes).unwrap_or_else(|e| panic!("watch {}: {e}", watched.display()));
    let end = Instant::now() + deadline;
    loop {
        if let Some(found) = check() {
            return found;
        }
        let left = end.saturating_duration_since(Instant::now());
        assert!(!left.is_zero(), "timed out after {deadline:?} waiting for {what}");
        if readable_within(&watch, left) {
            drain(&watch);
        }
    }
}

/// [`until_changed`] from async code: the wait runs on a blocking thread,
/// so the test's runtime goes on serving what the change depends on.
pub async fn until_changed_async<T: Send + 'static>(
    watched: &Path,
    what: &str,
    deadline: Duration,
    check: impl FnMut() -> Option<T> + Send + 'static,
) -> T {
    let (watched, what) = (watched.to_path_buf(), what.to_string());
    tokio::task::spawn_blocking(move || until_changed(&watched, &what, deadline, check))
        .await
        .unwrap_or_else(|failed| std::panic::resume_unwind(failed.into_panic()))
}

/// Whether `fd` turned readable within `left`.
fn readable_within(fd: &std::os::fd::OwnedFd, left: Duration) -> bool {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let timeout = Timespec::try_from(left).unwrap_or(Timespec { tv_sec: 15, tv_nsec: 0 });
    let mut fds = [PollFd::new(fd, PollFlags::IN)];
    matches!(poll(&mut fds, Some(&timeout)), Ok(n) if n > 0)
}

/// Reads every change reported so far: a burst of writes costs one look.
fn drain(fd: &std::os::fd::OwnedFd) {
    let mut buffer = [0u8; 4096];
    while matches!(rustix::io::read(fd, &mut buffer), Ok(n) if n > 0) {}
}

/// Waits until `query` finds what it looks for in the daemon's records (the
/// SQLite database `db`, read-only), woken by writes to the database's
/// directory (its write-ahead log is there): fugued writes records off the
/// request path and says nothing when it has.
pub async fn until_recorded<T: Send + 'static>(
    db: &Path,
    what: &str,
    query: impl Fn(&rusqlite::Connection) -> Option<T> + Send + 'static,
) -> T {
    let dir = db.parent().expect("the records' directory").to_path_buf();
    let db = db.to_path_buf();
    until_changed_async(&dir, what, DEADLINE, move || {
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
        query(&rusqlite::Connection::open_with_flags(&db, flags).ok()?)
    })
    .await
}

/// A look at the file `path` for `needle`: its text, once it holds it.
fn holding(path: &Path, needle: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.contains(needle).then_some(text)
}

/// Waits until the file `path` holds `needle` (woken by its writes, or by
/// its directory's until it exists); returns its text.
pub fn until_file_holds(path: &Path, needle: &str) -> String {
    let what = format!("'{needle}' in {}", path.display());
    until_changed(watched(path), &what, DEADLINE, || holding(path, needle))
}

/// What to watch for changes to the file `path`: the file, or its directory
/// until it is made.
pub fn watched(path: &Path) -> &Path {
    match path.exists() {
        true => path,
        false => path.parent().expect("a file in a directory"),
    }
}

impl Daemon {
    /// Waits until the daemon's log holds `needle` (woken by its writes);
    /// returns the log.
    pub fn until_logged(&self, needle: &str) -> String {
        until_file_holds(&self.dir.path().join("fugued.stderr"), needle)
    }

    /// [`Daemon::until_logged`] from async code.
    pub async fn until_logged_async(&self, needle: &str) -> String {
        let log = self.dir.path().join("fugued.stderr");
        let needle = needle.to_string();
        let what = format!("'{needle}' in fugued's log");
        let watched = log.clone();
        until_changed_async(&watched, &what, DEADLINE, move || holding(&log, &needle)).await
    }
}
