//! The one integration-test binary of `tackle-mcp`: each module was once its own
//! `tests/NAME.rs` binary; one binary links once (issue 26, point 7).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[macro_use]
mod support;

mod client_fake;
mod client_peers;
mod server_http;
mod server_http_bounds;
mod server_peers;
mod server_stdio;
