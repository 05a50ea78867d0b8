//! The one integration-test binary of `tackle-cli`: each module was once its own
//! `tests/NAME.rs` binary; one binary links once (issue 26, point 7).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../../tackle-mcp/tests/all/support/peers.rs"]
#[macro_use]
mod peers;
mod support {
    pub mod isolated;
    pub mod podman;
    pub mod pty;
    pub mod serve;
}

mod aimock;
mod ckg_cli;
mod containers;
mod day_one;
mod defined_tools_cli;
mod file_tools_cli;
mod fleet_cli;
mod front_door;
mod hostile_cli;
mod mcp_conformance;
mod mcp_extras_cli;
mod mcp_import;
mod mcp_manage_cli;
mod mcp_oauth;
mod mcp_serve;
mod mcp_serve_bounds;
mod output_schema_cli;
mod parse_cli;
mod permissions_cli;
mod planning_run;
mod replay_atif;
mod run_cli;
mod run_contract;
mod secrets;
mod shell_cli;
mod tasks_cli;
mod terminal;
mod tools_cli;
mod web_cli;
mod workspace_settings;
