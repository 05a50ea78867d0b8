//! The registry: every tool Tackle knows (built-in and imported), the toolsets they belong
//! to, and the selection of tools one session gets.
//!
//! The registry maps names to factories; a session instantiates its selection into a
//! [`ToolSet`], which resolves the names a model writes (exact → alias → normalized).

mod allowlist;
mod toolset;

pub use allowlist::{AllowlistError, Selection};
pub use toolset::{NameIndex, ToolHandle, ToolSet, normalize};

use std::sync::Arc;

use crate::spec::ToolSpec;
use crate::tool::{DynTool, Tool, TypedTool};

/// Where a tool comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolSource {
    /// Built into Tackle.
    Builtin,
    /// Imported from the named MCP server.
    Mcp(String),
    /// Given by the program that embeds Tackle (`tackle::SessionBuilder::tool`).
    Embedded,
    /// Defined in a file (`.tackle/tools/NAME.toml` or the user config's `tools/`), named
    /// as the person sees it.
    File(String),
}

impl std::fmt::Display for ToolSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToolSource::Builtin => f.write_str("builtin"),
            ToolSource::Mcp(server) => write!(f, "mcp:{server}"),
            ToolSource::Embedded => f.write_str("embedded"),
            ToolSource::File(path) => write!(f, "file:{path}"),
        }
    }
}

/// Makes a fresh instance of a tool for one session.
pub type ToolFactory = Arc<dyn Fn() -> Arc<dyn DynTool> + Send + Sync>;

/// The toolset that names every built-in, opt-in ones included.
pub const ALL_TOOLSET: &str = "all";

/// One registered tool.
#[derive(Clone)]
pub struct RegistryEntry {
    /// The tool's spec, taken from an instance at registration.
    pub spec: ToolSpec,
    /// The toolsets the tool belongs to (`all` is implicit for built-ins).
    pub toolsets: Vec<String>,
    /// Where it comes from.
    pub source: ToolSource,
    factory: ToolFactory,
}

impl RegistryEntry {
    /// Opt-in tools belong to no toolset but `all`, and are selected only when named.
    pub fn is_opt_in(&self) -> bool {
        self.toolsets.is_empty()
    }

    /// Whether the tool belongs to `toolset` (`all` holds the built-ins and the tools
    /// defined in files).
    pub fn in_toolset(&self, toolset: &str) -> bool {
        (toolset == ALL_TOOLSET && matches!(self.source, ToolSource::Builtin | ToolSource::File(_)))
            || self.toolsets.iter().any(|t| t == toolset)
    }

    /// A new instance of the tool.
    pub fn instantiate(&self) -> Arc<dyn DynTool> {
        (self.factory)()
    }
}

impl std::fmt::Debug for RegistryEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryEntry")
            .field("name", &self.spec.name)
            .field("toolsets", &self.toolsets)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

/// Every known tool, in registration order.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    entries: Vec<RegistryEntry>,
    /// The named toolsets, in the order their owners declared them (besides `all`).
    toolsets: Vec<String>,
    /// The toolsets that keep to their own tools: a tool imported later (an MCP server's)
    /// does not join them ([`Registry::import_toolsets`]).
    closed: Vec<String>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Registry::default()
    }

    /// Registers a built-in typed tool in `toolsets` (empty: opt-in). A tool registered again
    /// under the same name replaces the earlier one.
    pub fn register<T: Tool>(&mut self, toolsets: &[&str], factory: impl Fn() -> T + Send + Sync + 'static) {
        let factory: ToolFactory = Arc::new(move || Arc::new(TypedTool::new(factory())) as Arc<dyn DynTool>);
        self.register_dyn(toolsets, ToolSource::Builtin, factory);
    }

    /// Registers a tool defined at run time.
    pub fn register_dyn(&mut self, toolsets: &[&str], source: ToolSource, factory: ToolFactory) {
        let spec = factory().spec().clone();
        let entry =
            RegistryEntry { spec, toolsets: toolsets.iter().map(|t| (*t).to_owned()).collect(), source, factory };
        match self.entries.iter_mut().find(|e| e.spec.name == entry.spec.name) {
            Some(existing) => *existing = entry,
            None => self.entries.push(entry),
        }
    }

    /// Removes every tool from `source` (an MCP server's tools before they are listed again).
    pub fn remove_source(&mut self, source: &ToolSource) {
        self.entries.retain(|e| &e.source != source);
    }

    /// Keeps only the entries `keep` accepts (a container session drops the built-ins that
    /// would run on the host).
    pub fn retain(&mut self, keep: impl FnMut(&RegistryEntry) -> bool) {
        self.entries.retain(keep);
    }

    /// Every entry, in registration order.
    pub fn entries(&self) -> &[RegistryEntry] {
        &self.entries
    }

    /// The entry named exactly `name`.
    pub fn get(&self, name: &str) -> Option<&RegistryEntry> {
        self.entries.iter().find(|e| e.spec.name == name)
    }

    /// Declares named toolsets, so an allowlist may name them even while they hold no tool
    /// (the built-ins' toolsets are declared by `tackle-tools`, `mcp` by the MCP client).
    pub fn declare_toolsets(&mut self, names: &[&str]) {
        for name in names {
            if !self.toolsets.iter().any(|known| known == name) {
                self.toolsets.push((*name).to_owned());
            }
        }
    }

    /// Declares toolsets that hold only the tools registered in them by name: imported tools
    /// (MCP) join every other toolset but not these (`team`, which a child session removes
    /// with `-team`, must not take an MCP server's tools with it).
    pub fn declare_closed_toolsets(&mut self, names: &[&str]) {
        self.declare_toolsets(names);
        for name in names {
            if !self.closed.iter().any(|known| known == name) {
                self.closed.push((*name).to_owned());
            }
        }
    }

    /// The toolsets an imported tool joins: every known toolset but `all` and the closed ones.
    pub fn import_toolsets(&self) -> Vec<String> {
        self.toolset_names().into_iter().filter(|name| name != ALL_TOOLSET && !self.closed.contains(name)).collect()
    }

    /// The toolset names known to this registry: the declared ones, those its tools name,
    /// and `all`.
    pub fn toolset_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.toolsets.clone();
        for entry in &self.entries {
            for toolset in &entry.toolsets {
                if !names.contains(toolset) {
                    names.push(toolset.clone());
                }
            }
        }
        names.push(ALL_TOOLSET.to_owned());
        names
    }

    /// Instantiates the selected tools for one session.
    pub fn instantiate(&self, selection: &Selection) -> ToolSet {
        let handles = selection
            .names
            .iter()
            .filter_map(|name| self.get(name))
            .map(|entry| ToolHandle::new(entry.instantiate(), entry.source.clone()))
            .collect();
        ToolSet::new(handles)
    }
}
