//! The container's tools in the host session under their plain names: each built-in the
//! tool server inside lists replaces the host's own (same spec, so the same schema, aliases
//! and annotations), and its calls go to the container. A built-in the container does not
//! serve is removed, so no call ever runs on the host by mistake; only `task_done`, which
//! changes nothing and ends the agent's run, stays on the host.
//!
//! The host decodes and validates the arguments as usual (with the host tool's own rules),
//! but applies no path policy: paths are the container's, and the tackle inside enforces its
//! policy against the container's workspace.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tackle_core::registry::ToolSource;
use tackle_core::{BoxFuture, DynTool, PreparedCall, Registry, SessionResource, ToolError, ToolSpec};
use tackle_mcp::client::config::{Defer, Endpoint, Origin, ServerConfig};
use tackle_mcp::client::connection::{Connection, Listing};

use crate::{Container, ContainerError};

/// The built-ins that stay on the host.
pub const HOST_TOOLS: &[&str] = &["task_done"];

/// How long the tool server inside has to start and list its tools.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// The longest call: a command may run up to 10 minutes (the shell's own limit).
const CALL_TIMEOUT: Duration = Duration::from_secs(11 * 60);

/// Time beyond a call's own deadline, so the tool's own timeout message comes first.
const DEADLINE_MARGIN: Duration = Duration::from_secs(10);

/// The connection name, in messages ("MCP server container …").
pub const SERVER_NAME: &str = "container";

/// The container and the connection to the tool server inside: what a session owns, closed
/// (server stopped, container removed unless kept or attached) when the session ends.
#[derive(Debug)]
pub struct InContainer {
    /// The container.
    pub container: Container,
    /// The connection to `tackle mcp serve` inside.
    pub connection: Arc<Connection>,
}

impl InContainer {
    /// Starts the tool server inside `container` and lists its tools; on failure the
    /// container is closed.
    pub async fn connect(
        container: Container,
        workspace: &std::path::Path,
    ) -> Result<(InContainer, Listing), ContainerError> {
        let config = ServerConfig {
            name: SERVER_NAME.to_owned(),
            endpoint: Endpoint::Stream(crate::serve::opener(container.clone())),
            startup_timeout: STARTUP_TIMEOUT,
            call_timeout: CALL_TIMEOUT,
            enabled_tools: vec!["*".to_owned()],
            disabled_tools: Vec::new(),
            trusted: true,
            defer: Defer::Never,
            origin: Origin::User,
            fingerprint: String::new(),
        };
        let connection = Arc::new(Connection::new(config, workspace));
        match connection.start().await {
            Ok(listing) => Ok((InContainer { container, connection }, listing)),
            Err(reason) => {
                connection.shutdown().await;
                container.close().await;
                Err(ContainerError::Unusable(format!(
                    "tackle did not start in the container {}: {reason}",
                    container.name
                )))
            }
        }
    }

    /// Replaces the registry's built-ins with the container's; the names replaced.
    pub fn import(&self, registry: &mut Registry, listing: &Listing) -> Vec<String> {
        let served: Vec<&str> = listing.tools.iter().map(|remote| remote.tool.name.as_ref()).collect();
        let builtins: Vec<_> =
            registry.entries().iter().filter(|entry| entry.source == ToolSource::Builtin).cloned().collect();
        let mut replaced = Vec::new();
        for entry in builtins {
            let name = entry.spec.name.clone();
            if HOST_TOOLS.contains(&name.as_str()) {
                continue;
            }
            if !served.contains(&name.as_str()) {
                tracing::debug!(tool = %name, "not served in the container; removed");
                continue;
            }
            let local = entry.instantiate();
            let mut spec = local.spec().clone();
            spec.path_params.clear();
            let tool: Arc<dyn DynTool> = Arc::new(RemoteTool { spec, local, connection: Arc::clone(&self.connection) });
            let toolsets: Vec<&str> = entry.toolsets.iter().map(String::as_str).collect();
            registry.register_dyn(&toolsets, ToolSource::Builtin, Arc::new(move || Arc::clone(&tool)));
            replaced.push(name);
        }
        registry.retain(|entry| {
            entry.source != ToolSource::Builtin
                || HOST_TOOLS.contains(&entry.spec.name.as_str())
                || replaced.contains(&entry.spec.name)
        });
        replaced
    }
}

impl SessionResource for InContainer {
    fn name(&self) -> &str {
        "container"
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        // A container Tackle created goes first (its end ends the server inside at once);
        // in an attached one the server ends when its input closes.
        Box::pin(async {
            self.container.close().await;
            self.connection.shutdown().await;
        })
    }
}

/// A built-in whose calls run in the container.
struct RemoteTool {
    spec: ToolSpec,
    local: Arc<dyn DynTool>,
    connection: Arc<Connection>,
}

impl DynTool for RemoteTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn prepare(&self, args: &Value) -> Result<PreparedCall, ToolError> {
        // The host tool decodes and checks the arguments; only the traits are kept.
        let local = self.local.prepare(args)?;
        let connection = Arc::clone(&self.connection);
        let name = self.spec.name.clone();
        let args = args.clone();
        let deadline = local.timeout.map(|timeout| timeout + DEADLINE_MARGIN);
        Ok(PreparedCall::new(local.read_only, local.concurrency_safe, deadline, move |ctx| {
            Box::pin(async move { connection.call(&name, args, &ctx).await })
        }))
    }

    /// The connection belongs to the session's [`InContainer`].
    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}
