//! The end-to-end suites, one module each, in one test binary: each suite
//! starts its own real `fugued` on a socket in a temp dir, so they share
//! nothing but the process, and one binary links once instead of nineteen
//! times (a cold build of the tests: 110 s -> 49 s on 2 cores).
//! Run one suite with `cargo test -p fugue-tests --test e2e hostile::`.
//! The real agent CLIs have their own binary (`agents.rs`).

mod attach;
mod browser;
mod daemon;
mod devices;
mod differential;
mod durable;
mod errors;
mod esctest;
mod events;
mod fleet;
mod hardening;
mod hibernate;
mod hostile;
mod keyboard;
mod lifecycle;
mod login;
mod mcp;
mod mcp_http;
mod mcp_sdks;
mod mcp_stdio;
mod notify;
mod panes;
mod placement;
mod protocol;
mod push;
mod remote;
mod repository;
mod rest;
mod sandbox;
mod screen;
mod sessions;
mod slow_client;
mod tmux_bridge;
mod top;
mod transports;
mod upgrade;
mod web;
mod worktrees;
