//! Deferred tools (docs/planning.md#deferred-tools): tools whose schemas are left out of the
//! model's requests until `tool_search` loads them, so a large tool set does not cost every
//! request thousands of tokens.
//!
//! The session keeps a [`Deferral`] in its state: the catalog of its deferred tools (set by
//! [`crate::ToolSession`] whenever its tools change) and the names loaded so far. `tool_search`
//! (in `tackle-tools`) searches the catalog and loads names; the agent loop asks
//! [`shown_specs`] which tools a request carries, and sees from [`Deferral::generation`] when
//! that changed. Deferral works only in a session that has `tool_search`: without it nothing
//! is hidden, since a hidden tool could never be reached.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use crate::registry::ToolSet;
use crate::spec::{Loading, ToolSpec};

/// The wire name of the tool that loads deferred tools.
pub const TOOL_SEARCH: &str = "tool_search";

/// The session's deferred tools and the ones loaded so far.
#[derive(Debug, Default)]
pub struct Deferral {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    catalog: Arc<Vec<ToolSpec>>,
    loaded: BTreeSet<String>,
    generation: u64,
}

impl Deferral {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Sets the catalog from a session's tools: those marked [`Loading::Deferred`]. Names
    /// loaded before stay loaded while their tool is still there.
    pub fn set_catalog<'a>(&self, specs: impl IntoIterator<Item = &'a ToolSpec>) {
        let catalog: Vec<ToolSpec> = specs.into_iter().filter(|s| s.loading == Loading::Deferred).cloned().collect();
        let mut inner = self.lock();
        inner.loaded.retain(|name| catalog.iter().any(|spec| spec.name == *name));
        inner.catalog = Arc::new(catalog);
        inner.generation += 1;
    }

    /// The deferred tools (loaded ones included), in the session's order.
    pub fn catalog(&self) -> Arc<Vec<ToolSpec>> {
        Arc::clone(&self.lock().catalog)
    }

    /// Marks `names` loaded; returns how many were not loaded before. Names not in the
    /// catalog are ignored (the caller refuses them first).
    pub fn load<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> usize {
        let mut inner = self.lock();
        let mut added = 0;
        for name in names {
            if inner.catalog.iter().any(|spec| spec.name == name) && inner.loaded.insert(name.to_owned()) {
                added += 1;
            }
        }
        if added > 0 {
            inner.generation += 1;
        }
        added
    }

    /// Whether `name` was loaded.
    pub fn is_loaded(&self, name: &str) -> bool {
        self.lock().loaded.contains(name)
    }

    /// Changes whenever the catalog is set or a name is loaded.
    pub fn generation(&self) -> u64 {
        self.lock().generation
    }
}

/// The tools a model request shows, in the session's order. In a session with
/// `tool_search`: every tool but the deferred ones not loaded yet, and `tool_search` itself
/// only while some tool is deferred. In a session without it: every tool.
pub fn shown_specs<'a>(tools: &'a ToolSet, deferral: &Deferral) -> Vec<&'a ToolSpec> {
    let searchable = tools.specs().any(|spec| spec.name == TOOL_SEARCH);
    if !searchable {
        return tools.specs().collect();
    }
    let inner = deferral.lock();
    tools
        .specs()
        .filter(|spec| match spec.loading {
            Loading::Deferred => inner.loaded.contains(&spec.name),
            _ if spec.name == TOOL_SEARCH => !inner.catalog.is_empty(),
            _ => true,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{ToolHandle, ToolSource};
    use crate::tool::{BoxFuture, DynTool, PreparedCall};
    use crate::{ToolError, ToolOutput};

    struct Named(ToolSpec);

    impl DynTool for Named {
        fn spec(&self) -> &ToolSpec {
            &self.0
        }
        fn prepare(&self, _args: &serde_json::Value) -> Result<PreparedCall, ToolError> {
            Ok(PreparedCall::new(true, true, None, |_| Box::pin(async { Ok(ToolOutput::text("")) })))
        }
        fn close(&self) -> BoxFuture<'_, ()> {
            Box::pin(async {})
        }
    }

    fn set(specs: Vec<ToolSpec>) -> ToolSet {
        ToolSet::new(specs.into_iter().map(|s| ToolHandle::new(Arc::new(Named(s)), ToolSource::Builtin)).collect())
    }

    fn names(specs: &[&ToolSpec]) -> Vec<String> {
        specs.iter().map(|s| s.name.clone()).collect()
    }

    #[test]
    fn deferred_tools_are_hidden_until_loaded_and_tool_search_only_while_one_is_deferred() {
        let tools = set(vec![
            ToolSpec::new("read_file", "Read."),
            ToolSpec::new(TOOL_SEARCH, "Search."),
            ToolSpec::new("mcp__git__log", "Show the log.").loading(Loading::Deferred).search_hint("git history"),
        ]);
        let deferral = Deferral::default();
        deferral.set_catalog(tools.specs());
        assert_eq!(names(&shown_specs(&tools, &deferral)), ["read_file", TOOL_SEARCH]);
        let before = deferral.generation();
        assert_eq!(deferral.load(["mcp__git__log", "read_file", "nothing"]), 1);
        assert!(deferral.generation() > before && deferral.is_loaded("mcp__git__log"));
        assert_eq!(names(&shown_specs(&tools, &deferral)), ["read_file", TOOL_SEARCH, "mcp__git__log"]);
        assert_eq!(deferral.load(["mcp__git__log"]), 0);

        // Nothing deferred: tool_search is not shown.
        let plain = set(vec![ToolSpec::new("read_file", "Read."), ToolSpec::new(TOOL_SEARCH, "Search.")]);
        deferral.set_catalog(plain.specs());
        assert_eq!(names(&shown_specs(&plain, &deferral)), ["read_file"]);
        assert!(!deferral.is_loaded("mcp__git__log"));

        // Without tool_search nothing is hidden.
        let unsearchable = set(vec![ToolSpec::new("x", "X.").loading(Loading::Deferred)]);
        deferral.set_catalog(unsearchable.specs());
        assert_eq!(names(&shown_specs(&unsearchable, &deferral)), ["x"]);
    }
}
