//! `tool_search` (docs/planning.md#deferred-tools): finds deferred tools by words, or picks
//! them by name (`select:a,b`), and loads them for the next model request. The catalog and
//! the loaded names are the session's [`Deferral`]; the agent loop sends a loaded tool's
//! schema from the next request on, natively or in the text format's instructions.

pub mod rank;

use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_core::deferral::{Deferral, TOOL_SEARCH};
use tackle_core::{Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

pub use rank::SearchIndex;

/// The default number of tools loaded by a search.
pub const DEFAULT_RESULTS: u32 = 5;
/// The most tools one search loads.
pub const MAX_RESULTS: u32 = 20;
/// The longest query, in characters.
pub const MAX_QUERY_CHARS: usize = 1_000;

/// `tool_search`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolSearchInput {
    /// Words describing the tool you need ("git commit history"), or select:NAME,NAME to load
    /// tools by their exact names.
    pub query: String,
    /// How many tools to load at most (default 5).
    #[schemars(range(min = 1, max = 20))]
    pub max_results: Option<u32>,
}

/// A catalog and the index built from it.
type Built = (Arc<Vec<ToolSpec>>, Arc<SearchIndex>);

/// The session's search index, built once per catalog.
#[derive(Debug, Default)]
struct IndexCache {
    built: Mutex<Option<Built>>,
}

impl IndexCache {
    fn index_of(&self, catalog: &Arc<Vec<ToolSpec>>) -> Arc<SearchIndex> {
        let mut built = self.built.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((of, index)) = built.as_ref()
            && Arc::ptr_eq(of, catalog)
        {
            return Arc::clone(index);
        }
        let index = Arc::new(SearchIndex::new(catalog));
        *built = Some((Arc::clone(catalog), Arc::clone(&index)));
        index
    }
}

/// The `tool_search` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct ToolSearch;

impl Tool for ToolSearch {
    type Input = ToolSearchInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            TOOL_SEARCH,
            "Load deferred tools (listed under \"More tools\" in the system prompt) so you can call them: their \
             schemas are sent from your next turn. Search with words (\"git commit history\"), or load exact \
             names with select:NAME,NAME.",
        )
        .title("Search tools")
        // It changes only which schemas the session's next request carries.
        .read_only()
        .idempotent()
    }

    fn validate(&self, input: &ToolSearchInput) -> Result<(), ToolError> {
        if input.query.trim().is_empty() {
            return Err(ToolError::InvalidInput(
                "The query is empty. Give words describing the tool you need, or select:NAME,NAME.".to_owned(),
            ));
        }
        if input.query.chars().count() > MAX_QUERY_CHARS {
            return Err(ToolError::InvalidInput(format!(
                "The query is longer than {MAX_QUERY_CHARS} characters; use a few words."
            )));
        }
        Ok(())
    }

    async fn call(&self, input: ToolSearchInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let deferral = ctx.state().get::<Deferral>();
        let catalog = deferral.catalog();
        if catalog.is_empty() {
            return Err(ToolError::Failed(
                "No tools are deferred in this session: every tool is already available to call.".to_owned(),
            ));
        }
        let query = input.query.trim();
        let names: Vec<String> = match query.strip_prefix("select:") {
            Some(list) => select(&catalog, list)?,
            None => {
                let limit = input.max_results.unwrap_or(DEFAULT_RESULTS).clamp(1, MAX_RESULTS) as usize;
                let index = ctx.state().get::<IndexCache>().index_of(&catalog);
                let found: Vec<String> = index.search(query, limit).into_iter().map(str::to_owned).collect();
                if found.is_empty() {
                    return Err(ToolError::Failed(format!("No deferred tools match \"{query}\".")));
                }
                found
            }
        };
        deferral.load(names.iter().map(String::as_str));
        let mut text = format!("Loaded {} tool(s), available from your next turn:", names.len());
        for name in &names {
            let summary = catalog.iter().find(|spec| spec.name == *name).map(ToolSpec::summary).unwrap_or_default();
            text.push_str(&format!("\n- {name}: {summary}"));
        }
        Ok(ToolOutput::text(text).with_structured(serde_json::json!({ "loaded": names })))
    }
}

/// The names of `select:a,b`, each a deferred tool of the catalog.
fn select(catalog: &[ToolSpec], list: &str) -> Result<Vec<String>, ToolError> {
    let mut names: Vec<String> = Vec::new();
    for name in list.split(',').map(str::trim).filter(|name| !name.is_empty()) {
        if !catalog.iter().any(|spec| spec.name == name) {
            return Err(ToolError::InvalidInput(format!(
                "{name} is not a deferred tool. select: takes the names listed under \"More tools\" in the system \
                 prompt; a tool not listed there is either already available (call it directly) or does not exist."
            )));
        }
        if !names.iter().any(|known| known == name) {
            names.push(name.to_owned());
        }
    }
    if names.is_empty() {
        return Err(ToolError::InvalidInput("select: names no tool; write select:NAME,NAME.".to_owned()));
    }
    Ok(names)
}
