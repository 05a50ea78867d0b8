//! Why a session could not be built. Every variant names its cause (and, for configuration,
//! the file and key), so a front end can show it as is; nothing started before the failure is
//! left running.

use std::path::PathBuf;

/// A session that could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The workspace directory does not exist or cannot be used.
    #[error("workspace {path} is not usable: {source}; pass an existing directory")]
    Workspace {
        /// The directory as given.
        path: PathBuf,
        /// Why it cannot be used.
        source: std::io::Error,
    },
    /// A configuration file or section is invalid (the message names the file and key).
    #[error(transparent)]
    Config(#[from] tackle_policy::config::ConfigError),
    /// A permission-rule or hook source is invalid (the message names the file).
    #[error(transparent)]
    Rules(#[from] tackle_policy::permission::sources::SourceError),
    /// The `[workspace]` path policy is invalid.
    #[error(transparent)]
    PathPolicy(#[from] tackle_sandbox::PolicyError),
    /// The tool allowlist names no known tool or toolset, or is malformed.
    #[error(transparent)]
    Tools(#[from] tackle_core::registry::AllowlistError),
    /// The process sandbox cannot be set up as configured.
    #[error(transparent)]
    Sandbox(#[from] tackle_sandbox::process::SandboxError),
    /// A configured MCP server could not start (the others were shut down).
    #[error("MCP server '{server}' could not start: {reason}")]
    Mcp {
        /// The server's name in the configuration.
        server: String,
        /// Why it could not start.
        reason: String,
    },
    /// The output schema (`AgentBuilder::output_schema`) cannot be used.
    #[error("the output schema {0}")]
    OutputSchema(#[from] tackle_agent::OutputSchemaError),
    /// The trajectory file cannot be created.
    #[error("cannot create the trajectory {path}: {source}")]
    Trajectory {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The container could not be started or used (the message says what to do next);
    /// nothing was left running.
    #[error("{0}")]
    Container(#[from] tackle_container::ContainerError),
    /// An entry of the user config's `[pricing]` cannot be used.
    #[error(transparent)]
    Pricing(#[from] tackle_llm::PricingError),
    /// A cost limit was asked for a model whose price is unknown.
    #[error(
        "--max-cost: no price is known for the model '{model}'; add one to the user config: [pricing.\"{model}\"] input = 1.0, output = 2.0 (US dollars per million tokens)"
    )]
    NoPrice {
        /// The model.
        model: String,
    },
    /// An extra tool's name is already taken.
    #[error("cannot add the tool '{0}': a tool of that name already exists")]
    DuplicateTool(String),
}

impl BuildError {
    /// Whether the machinery failed rather than the settings: the container engine is not
    /// reachable or failed, or the image could not be had. Trying again later may succeed.
    pub fn is_infrastructure(&self) -> bool {
        use tackle_container::ContainerError as E;
        matches!(self, BuildError::Container(E::NoEngine(_) | E::NoImage { .. } | E::Engine { .. }))
    }
}
