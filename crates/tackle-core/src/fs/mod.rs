//! Opening files so that a symlink cannot lead outside the directory they belong to: the
//! file tools' workspace root ([`beneath`]), Tackle's own directories in the workspace
//! ([`own_dir`]), and the table of every path Tackle itself uses there ([`state`]).
//!
//! It lives in the bottom crate because every layer touches the workspace's state: the
//! executor's spill files (here), the MCP client's logs, the agent's trajectories and
//! prompt files, the command line's `init`.

pub mod beneath;
pub mod own_dir;
pub mod state;
