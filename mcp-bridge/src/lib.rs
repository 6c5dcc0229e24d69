//! The fugue MCP bridge as a library: [`tools::FugueTools`] is the MCP server,
//! [`bridge::Bridge`] its connection to fugued. The `fugue-mcp` binary serves it
//! on stdio or over Streamable HTTP ([`http`]); tests serve it in-process.

pub mod bridge;
pub mod http;
pub mod params;
pub mod resources;
pub mod schema;
pub mod stdio;
pub mod tasks;
pub mod tools;
