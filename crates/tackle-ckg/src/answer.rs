//! Each query's answer as the `ckg` tool and `tackle ckg` both give it: the text of
//! docs/ckg.md ("Output") and the same answer as JSON, asked of a refreshed index.

use std::path::Path;

use serde_json::json;

use crate::error::CkgError;
use crate::index::Index;
use crate::query::{Category, Within};
use crate::render;

/// An answer: its text, and the same as JSON.
pub type Answer = (String, serde_json::Value);

/// How many "Did you mean" names are offered.
const SUGGESTIONS: usize = 5;

/// Trae's `search_function`, `search_class` and `search_class_method`: the definitions named
/// exactly `name`, a class's fields and methods, each one's source when `bodies`, and close
/// names when there is none.
pub fn definitions(
    index: &Index,
    category: Category,
    name: &str,
    within: &Within,
    bodies: bool,
) -> Result<Answer, CkgError> {
    let mut found = index.definitions(name, category, within)?;
    if bodies {
        index.add_bodies(&mut found);
    }
    let members = match category {
        Category::Class => found.iter().map(|class| index.members(class)).collect::<Result<Vec<_>, _>>()?,
        _ => Vec::new(),
    };
    let suggestions =
        if found.is_empty() { index.suggestions(name, category, within, SUGGESTIONS)? } else { Vec::new() };
    let text = render::definitions(category, name, &found, &members, &suggestions);
    Ok((text, json!({ "definitions": found, "suggestions": suggestions })))
}

/// The outline of the file at `path` (resolved), shown as `shown`.
pub fn outline(index: &Index, path: &Path, shown: &str, within: &Within) -> Result<Answer, CkgError> {
    let definitions = index.outline_of(path, within)?;
    let list: Vec<_> = definitions.iter().map(|(depth, d)| json!({ "depth": depth, "definition": d })).collect();
    Ok((render::outline(shown, &definitions), json!({ "file": shown, "definitions": list })))
}

/// The first `max` references to `name`, calls first.
/// The references to `name`, at most `max`; when more exist, the text ends naming the option
/// that shows them (`more_option`: `--max` on the command line, `max_results` for the tool).
pub fn references(
    index: &Index,
    name: &str,
    within: &Within,
    max: usize,
    more_option: &str,
) -> Result<Answer, CkgError> {
    let (total, found) = index.references(name, within, max)?;
    let mut text = render::references(name, total, &found);
    if total > found.len() {
        text.push_str(&format!(" (raise {more_option}, now {max}, to see more)"));
    }
    Ok((text, json!({ "total": total, "references": found })))
}

/// The `max` definitions best matching `query`.
pub fn search(index: &Index, query: &str, within: &Within, max: usize) -> Result<Answer, CkgError> {
    let (total, found) = index.search(query, within, max)?;
    Ok((render::search(query, &found, total - found.len()), json!({ "total": total, "definitions": found })))
}

/// The repository map of `within` in `tokens` tokens.
pub fn repo_map(index: &Index, within: &Within, tokens: usize) -> Result<Answer, CkgError> {
    let map = index.repo_map(within, tokens)?;
    let text = if map.is_empty() { "No definitions found.".to_owned() } else { map.trim_end().to_owned() };
    Ok((text, json!({ "map": map })))
}
