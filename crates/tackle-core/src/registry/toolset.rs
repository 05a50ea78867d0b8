//! The tools of one session and the resolution of the names a model writes: exact wire name,
//! then alias, then normalized name (lower case, `_` and `-` removed).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use super::ToolSource;
use crate::schema::validate::CompiledSchema;
use crate::spec::ToolSpec;
use crate::tool::DynTool;

/// One tool instance in a session, with its lazily compiled validator.
pub struct ToolHandle {
    /// The tool instance that runs calls.
    pub tool: Arc<dyn DynTool>,
    /// Where the tool came from (built in, an MCP server, the embedder).
    pub source: ToolSource,
    validator: OnceLock<Arc<CompiledSchema>>,
}

impl ToolHandle {
    /// A handle for a tool instance.
    pub fn new(tool: Arc<dyn DynTool>, source: ToolSource) -> Self {
        ToolHandle { tool, source, validator: OnceLock::new() }
    }

    /// The tool's spec.
    pub fn spec(&self) -> &ToolSpec {
        self.tool.spec()
    }

    /// The compiled validator of the tool's input schema (compiled on first use).
    pub fn validator(&self) -> &Arc<CompiledSchema> {
        self.validator.get_or_init(|| Arc::new(CompiledSchema::compile(&self.tool.spec().input_schema)))
    }
}

impl std::fmt::Debug for ToolHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolHandle").field("name", &self.spec().name).field("source", &self.source).finish()
    }
}

/// The tools of one session.
#[derive(Debug, Default)]
pub struct ToolSet {
    handles: Vec<Arc<ToolHandle>>,
    names: NameIndex,
}

/// Lower case with `_` and `-` removed, so `Str_Replace_Based_Edit_Tool` finds its tool.
pub fn normalize(name: &str) -> String {
    name.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect()
}

/// Name resolution over a list of specs: exact wire name, then alias, then normalized name.
/// Positions are the specs' positions in the list; earlier specs win clashes.
#[derive(Debug, Clone, Default)]
pub struct NameIndex {
    exact: HashMap<String, usize>,
    alias: HashMap<String, usize>,
    normalized: HashMap<String, usize>,
}

impl NameIndex {
    /// Indexes `specs` by position.
    pub fn new<'a>(specs: impl IntoIterator<Item = &'a ToolSpec>) -> Self {
        let mut index = NameIndex::default();
        for (position, spec) in specs.into_iter().enumerate() {
            index.exact.entry(spec.name.clone()).or_insert(position);
            index.normalized.entry(normalize(&spec.name)).or_insert(position);
            for alias in &spec.aliases {
                index.alias.entry(alias.clone()).or_insert(position);
                index.normalized.entry(normalize(alias)).or_insert(position);
            }
        }
        index
    }

    /// The position of the spec a written name resolves to.
    pub fn resolve(&self, name: &str) -> Option<usize> {
        self.exact.get(name).or_else(|| self.alias.get(name)).or_else(|| self.normalized.get(&normalize(name))).copied()
    }
}

impl ToolSet {
    /// A tool set from handles; earlier handles win name clashes.
    pub fn new(handles: Vec<ToolHandle>) -> Self {
        let handles: Vec<Arc<ToolHandle>> = handles.into_iter().map(Arc::new).collect();
        let names = NameIndex::new(handles.iter().map(|h| h.spec()));
        ToolSet { handles, names }
    }

    /// Resolves a name as a model wrote it.
    pub fn resolve(&self, name: &str) -> Option<&Arc<ToolHandle>> {
        self.handles.get(self.names.resolve(name)?)
    }

    /// The message for a name that resolves to nothing (docs/reference/tools.md#names-and-aliases):
    /// the likely misspelt tool when one is close (`did you mean read_file?`), else every tool.
    pub fn not_found_message(&self, name: &str) -> String {
        let names: Vec<&str> = self.handles.iter().map(|h| h.spec().name.as_str()).collect();
        match super::allowlist::closest(name, names.iter().copied()) {
            Some(close) => format!("Tool '{name}' not found; did you mean {close}?"),
            None => format!("Tool '{name}' not found. Available tools: {}", names.join(", ")),
        }
    }

    /// The tools, in selection order.
    pub fn handles(&self) -> &[Arc<ToolHandle>] {
        &self.handles
    }

    /// The specs, in selection order.
    pub fn specs(&self) -> impl Iterator<Item = &ToolSpec> {
        self.handles.iter().map(|h| h.spec())
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.handles.len()
    }

    /// Whether there are no tools.
    pub fn is_empty(&self) -> bool {
        self.handles.is_empty()
    }
}
