//! The one integration-test binary of `tackle-agent`: each module was once its own
//! `tests/NAME.rs` binary; one binary links once (issue 26, point 7).

mod common;

mod deferral;
#[path = "loop.rs"]
mod agent_loop;
mod trajectory_format;
