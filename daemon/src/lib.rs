//! The fugue daemon's parts, in layers; each uses only the layers below it.
//!
//! - [`serve`]: the socket. It accepts clients, reads and writes frames, bounds
//!   what each client may cost, and hands each request to [`requests`].
//! - `requests`: one function per request. It resolves targets, asks the actor
//!   that owns the answer, runs waits and streams attachments.
//! - `actors`: Supervisor -> Session -> Pane (ractor). They own the terminals'
//!   lifecycles; children report up through narrow message types.
//! - [`terminal`]: what one pane is made of: the PTY and process, the output
//!   buffers, the screen and the input encoding. It knows nothing of sockets,
//!   actors or agents.
//! - [`agent`]: what an agent CLI in a pane is doing, read from the terminal's
//!   parts (which know nothing of it): detection, hooks, one pane's tracker
//!   and the watcher that publishes its states.
//! - Beside the layers: [`budget`] (what clients make the daemon hold),
//!   `event_bus` (events encoded once for every subscriber), [`notify`]
//!   (notification sinks), the store and [`handover`] (what survives a restart
//!   or an upgrade), `memory` (giving freed memory back), `sandbox` (removing
//!   the containers sandboxed panes' wrappers could not).
//!
//! Program output is untrusted input: `terminal::string_limit` bounds the control
//! strings it may send before either parser sees them. Client input is bounded by
//! `fugue_protocol::limits` (every request is validated in [`serve`]).

mod actors;
pub mod agent;
pub mod bridge;
pub mod budget;
pub mod config;
pub mod devices;
mod event_bus;
pub mod handover;
mod memory;
pub mod notify;
pub mod policy;
mod private_file;
pub mod push;
mod requests;
mod sandbox;
pub mod serve;
mod store;
mod sync;
/// The terminal's parts, a crate of their own (`fugue-terminal`).
pub use fugue_terminal as terminal;
