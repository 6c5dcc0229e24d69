//! Giving freed memory back to the system.
//!
//! glibc's allocator keeps freed small blocks in its arenas, so memory a pane
//! gives back (the emulator's spare rows once it goes quiet), or that clients
//! made the daemon hold and then let go of (`budget`), would stay in the
//! daemon's resident set. `malloc_trim` returns the free pages; it walks every
//! arena, so it runs at most once per [`MIN_INTERVAL`] however many panes trim.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

const MIN_INTERVAL: Duration = Duration::from_millis(500);

/// Returns free memory to the system: now, or (if that was done very recently)
/// once [`MIN_INTERVAL`] has passed, so the last of a burst of trims counts too.
pub fn give_back() {
    static LAST_MS: AtomicU64 = AtomicU64::new(0);
    static PENDING: AtomicBool = AtomicBool::new(false);
    let now = fugue_protocol::now_ms();
    let due = LAST_MS.load(Ordering::Relaxed) + MIN_INTERVAL.as_millis() as u64;
    if now >= due {
        LAST_MS.store(now, Ordering::Relaxed);
        trim_off_runtime();
        return;
    }
    if PENDING.swap(true, Ordering::AcqRel) {
        return;
    }
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        PENDING.store(false, Ordering::Release);
        return;
    };
    runtime.spawn(async move {
        tokio::time::sleep(Duration::from_millis(due - now)).await;
        PENDING.store(false, Ordering::Release);
        LAST_MS.store(fugue_protocol::now_ms(), Ordering::Relaxed);
        trim_off_runtime();
    });
}

/// Trims on a blocking thread when there is a runtime: the walk over the arenas
/// takes longer the larger the heap, and a runtime worker must not wait for it.
fn trim_off_runtime() {
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => drop(runtime.spawn_blocking(trim_now)),
        Err(_) => trim_now(),
    }
}

#[allow(unsafe_code)]
fn trim_now() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim only inspects and releases the allocator's free memory.
    unsafe {
        libc::malloc_trim(0);
    }
}
