//! The fugue MCP bridge as a library: [`tools::FugueTools`] is the MCP server (its
//! tools by group in [`tools`], the server around them in [`server`]),
//! [`bridge::Bridge`] its connection to fugued. The `fugue-mcp` binary serves it
//! on stdio or over Streamable HTTP ([`http`]); tests serve it in-process.

pub mod apps;
pub mod bridge;
pub mod http;
pub mod params;
pub mod resources;
pub mod schema;
pub mod server;
pub mod stdio;
pub mod tasks;
pub mod tools;
