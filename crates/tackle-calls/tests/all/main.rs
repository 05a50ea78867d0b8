//! The one integration-test binary of `tackle-calls`: each module was once its own
//! `tests/NAME.rs` binary; one binary links once (issue 26, point 7).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

mod bad_input;
mod block_tools;
mod differential;
mod fences;
mod fuzz;
mod markdown;
mod render;
mod streaming;
mod thinking;
mod tool_format;
mod xml;
