//! The one integration-test binary of `tackle-policy` (issue 26, point 7): each module was
//! once its own `tests/NAME.rs` binary of `tackle-core`, before the policy left it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod configuration_doc;
mod deep_config;
mod hostile_commands;
