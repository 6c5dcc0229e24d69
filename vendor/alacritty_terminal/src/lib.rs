//! Alacritty - The GPU Enhanced Terminal.
#![cfg_attr(rustfmt, rustfmt::skip)] // fugue: upstream formatting (PATCHES.md)

#![warn(rust_2018_idioms, future_incompatible)]
#![deny(clippy::all, clippy::if_not_else, clippy::enum_glob_use)]
#![cfg_attr(clippy, deny(warnings))]

#[rustfmt::skip] // fugue: upstream formatting (PATCHES.md)
pub mod event;
#[rustfmt::skip] // fugue: upstream formatting (PATCHES.md)
pub mod event_loop;
#[rustfmt::skip] // fugue: upstream formatting (PATCHES.md)
pub mod grid;
#[rustfmt::skip] // fugue: upstream formatting (PATCHES.md)
pub mod index;
#[rustfmt::skip] // fugue: upstream formatting (PATCHES.md)
pub mod selection;
#[rustfmt::skip] // fugue: upstream formatting (PATCHES.md)
pub mod sync;
#[rustfmt::skip] // fugue: upstream formatting (PATCHES.md)
pub mod term;
#[rustfmt::skip] // fugue: upstream formatting (PATCHES.md)
pub mod thread;
#[rustfmt::skip] // fugue: upstream formatting (PATCHES.md)
pub mod tty;
#[rustfmt::skip] // fugue: upstream formatting (PATCHES.md)
pub mod vi_mode;

pub use crate::grid::Grid;
pub use crate::term::Term;
pub use vte;
