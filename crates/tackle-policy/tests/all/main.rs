//! The one integration-test binary of `tackle-policy` (issue 26, point 7): its modules were
//! `tackle-core`'s tests of the policy before the policy left core (issue 26, point 4).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod configuration_doc;
mod deep_config;
mod hostile_commands;
