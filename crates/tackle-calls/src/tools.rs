//! The tools a parser knows: the session's specs, indexed for langtag dispatch (docs/reference/formats.md#langtag-dispatch), name
//! resolution (docs/reference/formats.md#tool: exact, alias, normalized) and parameter types (docs/reference/formats.md#xml typed arguments).

use std::collections::HashMap;

use serde_json::Value;
use tackle_core::registry::NameIndex;
use tackle_core::spec::BlockMapping;
use tackle_core::{ToolSet, ToolSpec};

/// The loaded tools, as the text formats see them. Build one per session (or whenever the
/// tool set changes) and lend it to each [`crate::Parser`].
#[derive(Debug, Clone, Default)]
pub struct ToolIndex {
    tools: Vec<ToolSpec>,
    langtags: HashMap<String, usize>,
    names: NameIndex,
}

impl ToolIndex {
    /// Indexes `specs`. Tools are ordered by name (Tackle's specs have no load priority, so
    /// gptme's `(load_priority, name)` order is name order); when two tools claim the same
    /// langtag, the first in that order wins.
    pub fn new<'a>(specs: impl IntoIterator<Item = &'a ToolSpec>) -> Self {
        let mut tools: Vec<ToolSpec> = specs.into_iter().cloned().collect();
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        tools.dedup_by(|a, b| a.name == b.name);
        let mut index = ToolIndex { tools, ..ToolIndex::default() };
        for (i, spec) in index.tools.iter().enumerate() {
            let langtags = spec.block.iter().flat_map(|b| b.langtags.iter());
            for word in langtags.chain(std::iter::once(&spec.name)).chain(spec.aliases.iter()) {
                index.langtags.entry(word.clone()).or_insert(i);
            }
        }
        index.names = NameIndex::new(&index.tools);
        index
    }

    /// Indexes the tools of a session.
    pub fn from_toolset(tools: &ToolSet) -> Self {
        ToolIndex::new(tools.specs())
    }

    /// The tools, in dispatch order.
    pub fn specs(&self) -> &[ToolSpec] {
        &self.tools
    }

    /// The tool a langtag's first word names (a block langtag, a name or an alias; exact).
    pub fn by_langtag(&self, word: &str) -> Option<&ToolSpec> {
        self.langtags.get(word).map(|i| &self.tools[*i])
    }

    /// The tool a written name resolves to: exact name, then alias, then normalized.
    pub fn resolve(&self, name: &str) -> Option<&ToolSpec> {
        self.names.resolve(name).map(|i| &self.tools[i])
    }
}

/// Schema facts about a tool's parameters.
pub(crate) trait SpecExt {
    /// The schema of parameter `name`, if the tool declares it.
    fn param(&self, name: &str) -> Option<&Value>;
    /// Whether `name` is a required parameter.
    fn is_required(&self, name: &str) -> bool;
    /// The block mapping, if any.
    fn mapping(&self) -> Option<&BlockMapping>;
}

impl SpecExt for ToolSpec {
    fn param(&self, name: &str) -> Option<&Value> {
        self.input_schema.get("properties").and_then(|p| p.get(name))
    }

    fn is_required(&self, name: &str) -> bool {
        self.input_schema
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|req| req.iter().any(|r| r.as_str() == Some(name)))
    }

    fn mapping(&self) -> Option<&BlockMapping> {
        self.block.as_ref()
    }
}
