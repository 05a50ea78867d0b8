//! The one integration-test binary of `tackle-agent`: each module was once its own
//! `tests/NAME.rs` binary; one binary links once (issue 26, point 7).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

#[path = "loop.rs"]
mod agent_loop;
mod deferral;
mod images;
mod trajectory_format;
