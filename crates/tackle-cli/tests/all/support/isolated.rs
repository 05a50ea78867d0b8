//! A `tackle` command cut off from the person running the tests: it runs in the test's
//! workspace, reads its user configuration from the test's own directory, and inherits no
//! consent (`TACKLE_TRUST_WORKSPACE`, `TACKLE_ALLOW_PROJECT_MCP`) from the environment.

use std::path::Path;
use std::process::{Command, Stdio};

/// `tackle ARGS` in `workspace`, with `user` as its user configuration directory and no stdin.
pub fn tackle(workspace: &Path, user: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tackle"));
    command
        .args(args)
        .current_dir(workspace)
        .env("TACKLE_CONFIG_DIR", user)
        .env_remove("TACKLE_TRUST_WORKSPACE")
        .env_remove("TACKLE_ALLOW_PROJECT_MCP")
        .stdin(Stdio::null());
    command
}
