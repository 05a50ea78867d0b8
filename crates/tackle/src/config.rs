//! Loading the configuration: where the user's files are, the options of a load, and the
//! consent a workspace's settings need before they apply (docs/configuration.md).

pub use tackle_mcp::client::config::Candidate as McpCandidate;
pub use tackle_policy::config::consent::{TrustPrompt, TrustRequest};
pub use tackle_policy::config::user_dirs::UserDirs;
pub use tackle_policy::config::{ConfigError, LoadOptions};
