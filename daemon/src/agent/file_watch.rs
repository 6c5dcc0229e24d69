//! Tells a pane's watcher when a file its agent keeps changed, so an agent at
//! rest costs nothing: one inotify instance for the whole daemon (the kernel
//! allows a user 128 instances, and a pane each would run out), watching the
//! directories that hold the files followed, and waking the subscribers of a
//! file when an entry of that name is written, created, moved in or removed.
//! Watching the directory, not the file, sees a file replaced by a rename.

use std::collections::HashMap;
use std::ffi::OsString;
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::Notify;

use rustix::fs::inotify::{self, ReadFlags, WatchFlags};

/// Directories watched at once, at most (each costs the kernel a watch of the
/// user's `max_user_watches`); past it a subscriber is refused and its watcher
/// falls back to looking when output arrives.
const MAX_DIRS: usize = 4096;

/// One followed file; dropping it stops following.
pub struct Subscription {
    id: u64,
    wd: i32,
    notify: Arc<Notify>,
}

impl Subscription {
    /// Resolves once the file changed since the last call (or since subscribing).
    pub async fn changed(&self) {
        self.notify.notified().await;
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if let Some(watches) = WATCHES.get().and_then(Option::as_ref) {
            watches.unsubscribe(self.wd, self.id);
        }
    }
}

struct Dir {
    path: PathBuf,
    subscribers: Vec<(u64, OsString, Arc<Notify>)>,
}

#[derive(Default)]
struct Watched {
    next_id: u64,
    dirs: HashMap<i32, Dir>,
}

struct FileWatches {
    fd: OwnedFd,
    watched: Mutex<Watched>,
}

static WATCHES: OnceLock<Option<Arc<FileWatches>>> = OnceLock::new();

/// Follows `file`: the subscription wakes when it changes. `None` when it cannot
/// be followed (its directory does not exist yet, no inotify, too many watched),
/// and the caller must look some other way.
pub fn follow(file: &Path) -> Option<Subscription> {
    follow_entry(file.parent()?, file.file_name()?)
}

/// Follows every entry of `dir`: the subscription wakes when any of them
/// changes, appears or goes.
pub fn follow_dir(dir: &Path) -> Option<Subscription> {
    follow_entry(dir, std::ffi::OsStr::new(""))
}

fn follow_entry(dir: &Path, name: &std::ffi::OsStr) -> Option<Subscription> {
    let watches = WATCHES.get_or_init(start).as_ref()?;
    let flags = WatchFlags::CLOSE_WRITE
        | WatchFlags::MODIFY
        | WatchFlags::CREATE
        | WatchFlags::MOVED_TO
        | WatchFlags::DELETE
        | WatchFlags::ONLYDIR;
    let mut watched = lock(&watches.watched);
    if watched.dirs.len() >= MAX_DIRS && !watched.dirs.values().any(|d| d.path == dir) {
        return None;
    }
    // The kernel gives a directory watched again the same descriptor.
    let wd = inotify::add_watch(&watches.fd, dir, flags).ok()?;
    watched.next_id += 1;
    let id = watched.next_id;
    let notify = Arc::new(Notify::new());
    let entry = watched.dirs.entry(wd).or_insert_with(|| Dir {
        path: dir.to_path_buf(),
        subscribers: Vec::new(),
    });
    entry.subscribers.push((id, name.to_os_string(), notify.clone()));
    Some(Subscription { id, wd, notify })
}

fn lock(watched: &Mutex<Watched>) -> std::sync::MutexGuard<'_, Watched> {
    watched.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The daemon's inotify instance and the thread that reads it (blocked in
/// `read` until the kernel has events: no CPU at rest, and no runtime needed);
/// `None`, and every watcher falls back to looking on output, if there is none.
fn start() -> Option<Arc<FileWatches>> {
    let fd = inotify::init(inotify::CreateFlags::CLOEXEC)
        .map_err(|err| tracing::warn!(%err, "no inotify: agents' status files are read only on output"))
        .ok()?;
    let watches = Arc::new(FileWatches {
        fd,
        watched: Mutex::new(Watched::default()),
    });
    let reader = watches.clone();
    std::thread::Builder::new()
        .name("fugue-inotify".into())
        .spawn(move || read_events(&reader))
        .map_err(|err| tracing::warn!(%err, "no inotify reader: agents' status files are read only on output"))
        .ok()?;
    Some(watches)
}

impl FileWatches {
    fn unsubscribe(&self, wd: i32, id: u64) {
        let mut watched = lock(&self.watched);
        let Some(dir) = watched.dirs.get_mut(&wd) else { return };
        dir.subscribers.retain(|(sub, _, _)| *sub != id);
        if dir.subscribers.is_empty() {
            watched.dirs.remove(&wd);
            let _ = inotify::remove_watch(&self.fd, wd);
        }
    }

    /// Wakes whoever follows the entry `name` of the directory `wd`; all of that
    /// directory's subscribers when it went away, and everyone when the kernel's
    /// queue overflowed (events were lost).
    fn deliver(&self, wd: i32, flags: ReadFlags, name: Option<&[u8]>) {
        let mut watched = lock(&self.watched);
        if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
            for dir in watched.dirs.values() {
                dir.subscribers.iter().for_each(|(_, _, n)| n.notify_one());
            }
            return;
        }
        if flags.contains(ReadFlags::IGNORED) {
            // The directory is gone: its subscribers look again and follow
            // whatever they find then.
            if let Some(dir) = watched.dirs.remove(&wd) {
                dir.subscribers.iter().for_each(|(_, _, n)| n.notify_one());
            }
            return;
        }
        let Some(dir) = watched.dirs.get(&wd) else { return };
        for (_, wanted, notify) in &dir.subscribers {
            // An empty name follows the whole directory.
            if wanted.is_empty() || name.is_none_or(|name| name == wanted.as_bytes()) {
                notify.notify_one();
            }
        }
    }
}

fn read_events(watches: &FileWatches) {
    let mut buffer = vec![MaybeUninit::<u8>::uninit(); 16 * 1024];
    let mut reader = inotify::Reader::new(&watches.fd, &mut buffer);
    loop {
        match reader.next() {
            Ok(event) => {
                let name = event.file_name().map(|n| n.to_bytes());
                watches.deliver(event.wd(), event.events(), name);
            }
            Err(rustix::io::Errno::INTR) => {}
            Err(err) => {
                tracing::warn!(%err, "reading inotify failed; status files are read only on output");
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    async fn wakes(sub: &Subscription) -> bool {
        tokio::time::timeout(Duration::from_secs(5), sub.changed())
            .await
            .is_ok()
    }

    /// Takes up what earlier events left (a write is a modify and a close).
    async fn drain(sub: &Subscription) {
        while tokio::time::timeout(Duration::from_millis(100), sub.changed())
            .await
            .is_ok()
        {}
    }

    #[tokio::test]
    async fn a_followed_file_wakes_on_a_write_and_a_rename_and_others_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("123.json");
        std::fs::write(&file, "{}").unwrap();
        let sub = follow(&file).expect("followed");
        let other = follow(&dir.path().join("456.json")).expect("followed");
        std::fs::write(&file, "{\"status\":\"busy\"}").unwrap();
        assert!(wakes(&sub).await, "a write woke it");
        drain(&sub).await;
        // Replaced by a rename, as an atomic write does.
        let temp = dir.path().join("123.json.tmp");
        std::fs::write(&temp, "{\"status\":\"idle\"}").unwrap();
        std::fs::rename(&temp, &file).unwrap();
        assert!(wakes(&sub).await, "a rename woke it");
        // The other file's subscriber heard nothing of all this.
        let quiet = tokio::time::timeout(Duration::from_millis(200), other.changed()).await;
        assert!(quiet.is_err(), "another file's subscriber woke");
        drop(other);
        drop(sub);
        let watches = WATCHES.get().unwrap().as_ref().unwrap();
        let watched = lock(&watches.watched);
        assert!(
            watched.dirs.values().all(|d| d.path != dir.path()),
            "the watch ended with its subscribers"
        );
    }

    #[tokio::test]
    async fn a_missing_directory_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        assert!(follow(&dir.path().join("nope/1.json")).is_none());
    }
}
