//! The one integration-test binary of `tackle-llm`: each module was once its own
//! `tests/NAME.rs` binary; one binary links once (issue 26, point 7).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod providers;
mod sdk_oracle;
