//! The fugue daemon's parts, in layers; each uses only the layers below it.
//!
//! - [`serve`]: the socket. It accepts clients, reads and writes frames, bounds
//!   what each client may cost, and hands each request to [`requests`].
//! - `requests`: one function per request. It resolves targets, asks the actor
//!   that owns the answer, runs waits and streams attachments.
//! - `actors`: Supervisor -> Session -> Pane (ractor). They own the terminals'
//!   lifecycles; children report up through narrow message types.
//! - [`terminal`]: what one pane is made of: the PTY and process, the output
//!   buffers, the screen, the input encoding and the agent detector. It knows
//!   nothing of sockets or actors.
//!
//! Program output is untrusted input: `terminal::string_limit` bounds the control
//! strings it may send before either parser sees them. Client input is bounded by
//! `fugue_protocol::limits` (every request is validated in [`serve`]).

mod actors;
pub mod agent;
pub mod budget;
pub mod config;
mod event_bus;
pub mod handover;
mod memory;
pub mod notify;
mod requests;
pub mod serve;
mod store;
mod sync;
pub mod terminal;
