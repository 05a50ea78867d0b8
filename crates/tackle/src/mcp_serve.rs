//! Serving a session's tools over MCP (`tackle mcp serve`, stdio or loopback HTTP): the
//! server, its options and bearer token, and the tool selection it offers (docs/mcp.md).

pub use tackle_mcp::server::{
    AuthToken, DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_SESSIONS, HttpAddressError, MakeSession, McpServer, ServeError,
    ServerOptions, SessionError, check_loopback, names_imported_tools, selection,
};
