//! Which MCP servers a session needs, decided before any is started (issue 25: `--tools
//! …,-mcp` still spawned the workspace's servers, 0.7 s per `tools call read_file`): only
//! servers whose tools the allowlist can select, and none for a one-shot call of a built-in.
//!
//! A server's tools are unknown until it runs, so the allowlist is applied to a copy of the
//! registry where each server stands in as probe tools in the toolsets its tools would join
//! (a read-only one and a destructive one, so `hint:` entries count either way), plus a probe
//! for each exact `mcp__…` name the list gives. A server is started when one of its probes is
//! selected, or when an entry names it by prefix (`mcp__git__st*`). When the list cannot be
//! read without the servers (an error), every server starts and the real selection reports it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::Value;
use tackle_core::registry::{NameIndex, ToolSource};
use tackle_core::{BoxFuture, DynTool, PreparedCall, Registry, ToolError, ToolSpec};
use tackle_mcp::client::MCP_TOOLSET;
use tackle_mcp::client::naming::sanitize;

/// The servers among `servers` (by name) that a session selecting `list` (with `base` as the
/// default) and narrowed to `narrow_to` can use tools of.
pub(crate) fn servers_to_start(
    registry: &Registry,
    list: &str,
    base: &str,
    narrow_to: Option<&str>,
    servers: &[String],
) -> BTreeSet<String> {
    let prefix = |server: &str| format!("mcp__{}__", sanitize(server));
    let server_of = |name: &str| servers.iter().find(|server| name.starts_with(&prefix(server))).cloned();
    let entries: Vec<&str> = list.split(|c: char| c == ',' || c.is_whitespace()).filter(|s| !s.is_empty()).collect();

    // The probes: each server in the toolsets its tools would join, and each exact name given.
    let mut probes: BTreeMap<String, Option<String>> = BTreeMap::new();
    for server in servers {
        for kind in ["read-only", "destructive"] {
            probes.insert(format!("{}({kind})", prefix(server)), Some(server.clone()));
        }
    }
    let exact = |entry: &&str| entry.starts_with("mcp__") && !entry.contains(['*', '?', '[', '{']);
    for entry in entries.iter().map(|entry| entry.trim_start_matches('-')).filter(exact) {
        probes.insert(entry.to_owned(), server_of(entry));
    }
    let mut probing = registry.clone();
    let toolsets: Vec<String> = probing.import_toolsets();
    let mut joined: Vec<&str> = toolsets.iter().map(String::as_str).collect();
    if !joined.contains(&MCP_TOOLSET) {
        joined.push(MCP_TOOLSET);
    }
    for (name, server) in &probes {
        let spec = ToolSpec::new(name.clone(), "");
        let spec = if name.ends_with("(destructive)") { spec.destructive() } else { spec.read_only() };
        let probe: Arc<dyn DynTool> = Arc::new(Probe(spec));
        let source = ToolSource::Mcp(server.clone().unwrap_or_default());
        probing.register_dyn(&joined, source, Arc::new(move || Arc::clone(&probe)));
    }

    let Ok(selection) = probing.select(list, base) else {
        return servers.iter().cloned().collect();
    };
    let mut wanted: BTreeSet<String> =
        selection.names.iter().filter_map(|name| probes.get(name).cloned().flatten()).collect();
    wanted.extend(entries.iter().filter_map(|entry| server_of(entry.trim_start_matches('-'))));

    // A one-shot call (`tools call NAME`) needs at most the server of its tool.
    if let Some(name) = narrow_to {
        let specs: Vec<&ToolSpec> =
            selection.names.iter().filter_map(|selected| probing.get(selected)).map(|entry| &entry.spec).collect();
        match NameIndex::new(specs.iter().copied()).resolve(name).map(|index| &specs[index].name) {
            Some(tool) if !probes.contains_key(tool) => wanted.clear(),
            Some(tool) => wanted.retain(|server| probes.get(tool) == Some(&Some(server.clone()))),
            None => {
                if let Some(server) = server_of(name) {
                    wanted.retain(|wanted| *wanted == server);
                }
            }
        }
    }
    wanted
}

/// A stand-in for a server's tools while the allowlist is read; never called.
struct Probe(ToolSpec);

impl DynTool for Probe {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    fn prepare(&self, _args: &Value) -> Result<PreparedCall, ToolError> {
        Err(ToolError::Failed("a stand-in for an MCP server's tools cannot be called".to_owned()))
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wanted(list: &str, base: &str, narrow_to: Option<&str>) -> Vec<String> {
        let servers = ["git".to_owned(), "docs.site".to_owned()];
        servers_to_start(&crate::builtin_registry(), list, base, narrow_to, &servers).into_iter().collect()
    }

    #[test]
    fn only_servers_the_allowlist_can_select_are_started() {
        let both = ["docs.site", "git"];
        assert_eq!(wanted("", "default", None), both);
        assert_eq!(wanted("", "all,mcp", None), both);
        assert_eq!(wanted("read_file,grep", "default", None), Vec::<String>::new());
        assert_eq!(wanted("default,-mcp", "default", None), Vec::<String>::new());
        assert_eq!(wanted("-mcp", "all,mcp", None), Vec::<String>::new());
        // `all` is every built-in, not imported tools.
        assert_eq!(wanted("all", "default", None), Vec::<String>::new());
        assert_eq!(wanted("read_file,mcp__git__status", "default", None), ["git"]);
        assert_eq!(wanted("read_file,mcp__git__st*", "default", None), ["git"]);
        assert_eq!(wanted("mcp__docs_site__*", "default", None), ["docs.site"]);
        assert_eq!(wanted("mcp__*", "default", None), both);
        assert_eq!(wanted("hint:read-only", "default", None), both);
        assert_eq!(wanted("default,-hint:destructive", "default", None), both);
        // An allowlist that does not parse without the servers starts them all.
        assert_eq!(wanted("no_such_tool", "default", None), both);
    }

    #[test]
    fn a_one_shot_call_of_a_built_in_starts_no_server() {
        assert_eq!(wanted("", "all,mcp", Some("read_file")), Vec::<String>::new());
        assert_eq!(wanted("", "all,mcp", Some("Read")), Vec::<String>::new());
        assert_eq!(wanted("", "all,mcp", Some("mcp__git__status")), ["git"]);
        assert_eq!(wanted("-mcp", "all,mcp", Some("mcp__git__status")), Vec::<String>::new());
        // A name that resolves to nothing keeps every server, so "not found" can list their tools.
        assert_eq!(wanted("", "all,mcp", Some("nonesuch")), ["docs.site", "git"]);
    }
}
