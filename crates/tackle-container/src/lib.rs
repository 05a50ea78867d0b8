//! Container execution (docs/containers.md): a session's tools run inside a Docker or Podman
//! container, served there by `tackle mcp serve` and imported by the host session under their
//! plain names. The agent loop, the provider, permissions, hooks and the trajectory stay on
//! the host; the path policy is the tackle inside's, against the container's workspace.
//!
//! One concept per module: [`engine`] finds and reaches the engine, [`settings`] reads
//! `[container]` and the flags, [`binary`] checks that the binary can run in the container,
//! [`launch`] creates or attaches to the container and removes it again, [`serve`] starts the
//! tool server inside through an exec, [`import`] puts its tools in the host's registry under
//! the built-ins' names, [`prune`] removes leftovers of crashed sessions.

pub mod binary;
pub mod engine;
pub mod exec;
pub mod import;
pub mod launch;
pub mod prune;
pub mod serve;
pub mod settings;

pub use engine::Engine;
pub use import::InContainer;
pub use launch::{Container, LaunchStep};
pub use settings::{ContainerSection, ContainerSpec};

/// The labels on every container Tackle creates.
pub mod labels {
    /// The session that created the container (unique per process and start).
    pub const SESSION: &str = "tackle.session";
    /// Always `tackle`: what `tackle containers prune` looks for.
    pub const CREATED_BY: &str = "tackle.created-by";
    /// The process id of the tackle that created it (prune keeps a live one's containers).
    pub const PID: &str = "tackle.pid";
    /// `true` when the container is kept at the end of the session (`keep`).
    pub const KEEP: &str = "tackle.keep";
}

/// Where the tackle binary is inside the container.
pub const BINARY_IN_CONTAINER: &str = "/.tackle/bin/tackle";

/// What went wrong with the container; every message says what to do next.
#[derive(Debug, thiserror::Error)]
pub enum ContainerError {
    /// No engine answered.
    #[error("{0}")]
    NoEngine(String),
    /// The image is not there.
    #[error(
        "image '{image}' was not found by the container engine at {engine}: {detail}. Load or build it first (`podman load`, `podman import`, `docker pull`), or name another with --container"
    )]
    NoImage { image: String, engine: String, detail: String },
    /// The binary cannot run in the container.
    #[error("{0}")]
    Incompatible(String),
    /// The container lacks something the tools need.
    #[error("{0}")]
    Unusable(String),
    /// The settings are wrong.
    #[error("{0}")]
    Settings(String),
    /// Start-up was cancelled (Ctrl-C); what was created was removed.
    #[error("container start-up was cancelled; nothing was left running")]
    Cancelled,
    /// The engine refused a request.
    #[error("the container engine at {engine} failed to {action}: {detail}")]
    Engine { engine: String, action: String, detail: String },
}
