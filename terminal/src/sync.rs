//! Locking that survives a panic.

use std::sync::{Mutex, MutexGuard};

/// Locks `mutex` even if a thread panicked while holding it. Every mutex in a
/// terminal (and in the daemon, which uses this too) guards data that stays
/// consistent between statements: a panic in one request or one pane's
/// emulator must not make the table or buffer unusable for everyone else.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
