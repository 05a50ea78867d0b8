//! The one integration-test binary of `tackle-core`: each module was once its own
//! `tests/NAME.rs` binary; one binary links once (issue 26, point 7).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod deep_input;
mod executor;
mod registry;
mod strict_property;
