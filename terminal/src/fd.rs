//! Descriptors on the runtime's reactor.

use std::os::fd::OwnedFd;
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

/// Registers an owned descriptor with the runtime's reactor.
#[allow(unsafe_code)]
pub fn register(fd: OwnedFd, interest: Interest) -> std::io::Result<AsyncFd<OwnedFd>> {
    // SAFETY: an OwnedFd is open for as long as it lives, and its as_raw_fd always
    // returns the descriptor it owns; the AsyncFd owns it from here on.
    unsafe { AsyncFd::register_with_interest(fd, interest) }.map_err(std::io::Error::from)
}
