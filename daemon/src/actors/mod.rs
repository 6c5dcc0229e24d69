//! The actor tree: [`supervisor`] -> [`session`] -> [`pane`]. A parent calls its
//! children; a child reports up by casting a narrow report type (a session knows
//! [`session::SessionReport`], not the supervisor's messages), so no module
//! depends on the one above it.

pub(crate) mod pane;
pub(crate) mod session;
pub(crate) mod supervisor;
