//! The one integration-test binary of `tackle`: each module was once its own
//! `tests/NAME.rs` binary; one binary links once (issue 26, point 7).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support {
    pub mod delegation;
}

mod examples;
mod front_door;
mod loop_hooks;
mod output_schema;
mod session;
mod subagents;
mod teams;
