//! `tackle init`: writes a commented `tackle.toml` in the workspace (every setting commented
//! out, so it changes nothing until edited) and an `AGENTS.md` stub when there is none. An
//! existing file is never overwritten.

use std::process::ExitCode;

use crate::cli::InitArgs;
use crate::exit::{CommandResult, Failure, OK};
use crate::session;
use tackle::state::{self, StateError};

/// The `tackle.toml` written by `tackle init`.
const TACKLE_TOML: &str = r#"# Tackle's settings for this workspace (docs/configuration.md in Tackle's repository).
# A workspace file may only narrow what your user config (~/.config/tackle/config.toml)
# allows; [providers] and [mcp] servers count only once you trust the workspace
# (--trust-workspace, or the prompt). Everything here is commented out: uncomment to use.

# [tools]
# timeout_ms = 120000          # a tool's deadline when it has none of its own
# max_output_chars = 30000     # longer outputs keep head and tail; the rest is saved under .tackle/

# [sandbox]                    # may only make the sandbox stricter than your user config
# network = false
# hide = ["secrets/"]          # paths commands cannot read

# [env]
# remove = ["AWS_PROFILE"]     # variables commands do not see

# [providers.ollama]           # a local OpenAI-compatible server: tackle run --model ollama/qwen2.5-coder
# kind = "openai"
# base_url = "http://localhost:11434"

# [mcp.servers.git]            # an MCP server whose tools the agent may use (started after you consent)
# command = "uvx"
# args = ["mcp-server-git"]
"#;

/// The `AGENTS.md` stub written when the workspace has none.
const AGENTS_MD: &str = "# Notes for coding agents

Tackle (and other agents) read this file at the start of every task. Say what a new colleague
would need: how to build and test, the conventions, what not to touch.

## Build and test

- Build: `...`
- Test: `...`

## Conventions

- ...
";

/// `tackle init`. Both files are Tackle's state paths (`tackle::state`): written
/// beneath the workspace, never through a link (a link in their place is refused with a
/// notice).
pub fn init(args: InitArgs) -> CommandResult {
    let workspace = session::workspace(args.workspace.as_ref())?;
    let config = state::TACKLE_TOML.path(&workspace);
    let refused = |err: StateError| {
        err.notice();
        Failure::failed(err.to_string())
    };
    state::TACKLE_TOML.refuse_link(&workspace).map_err(refused)?;
    if !state::TACKLE_TOML.create_new(&workspace, TACKLE_TOML.as_bytes()).map_err(refused)? {
        return Err(Failure::usage(format!(
            "{} already exists; edit it (docs/configuration.md), or remove it to start again",
            config.display()
        )));
    }
    diagln!("Wrote {} (every setting commented out).", config.display());
    let exists = |file: &state::StatePath| std::fs::symlink_metadata(file.path(&workspace)).is_ok();
    for file in [state::AGENTS_MD, state::CLAUDE_MD] {
        if let Err(err) = file.refuse_link(&workspace) {
            err.notice();
        }
    }
    if exists(&state::AGENTS_MD) || exists(&state::CLAUDE_MD) {
        diagln!("Kept the existing instructions for agents (AGENTS.md or CLAUDE.md).");
    } else if state::AGENTS_MD.create_new(&workspace, AGENTS_MD.as_bytes()).map_err(refused)? {
        diagln!("Wrote {}: fill in how to build and test this project.", state::AGENTS_MD.path(&workspace).display());
    }
    Ok(ExitCode::from(OK))
}
