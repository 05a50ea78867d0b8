//! The one integration-test binary of `tackle-sandbox`: each module was once its own
//! `tests/NAME.rs` binary; one binary links once (issue 26, point 7).

mod paths;
mod sandbox;
