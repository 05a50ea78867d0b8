//! `tools/list` (docs/mcp.md#tools): each tool in the `mcp` dialect of its spec (input schema,
//! output schema where promised, annotations), and pagination with an opaque cursor (the
//! base64 of the offset) when `--page-size` asks for it. Sessions whose tools render alike
//! (all of them, unless the factory varies its tools) share one rendered list.

use std::sync::{Arc, Mutex};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rmcp::model::{ErrorCode, ErrorData, ListToolsResult, Tool};
use serde_json::json;
use tackle_core::ToolSpec;
use tackle_core::schema::{Dialect, render_tool};

/// Renders the specs as MCP tools.
pub fn render(specs: impl IntoIterator<Item = impl std::ops::Deref<Target = ToolSpec>>) -> Vec<Tool> {
    specs
        .into_iter()
        .filter_map(|spec| match serde_json::from_value::<Tool>(render_tool(&spec, Dialect::Mcp)) {
            Ok(tool) => Some(tool),
            Err(err) => {
                tracing::error!(tool = %spec.name, "cannot render the tool for MCP: {err}");
                None
            }
        })
        .collect()
}

/// The rendered list the sessions of a server share.
#[derive(Debug, Default)]
pub struct Shared {
    last: Mutex<Option<Arc<[Tool]>>>,
}

impl Shared {
    /// `mine`, or the equal list already shared (then `mine` is dropped).
    pub fn share(&self, mine: Vec<Tool>) -> Arc<[Tool]> {
        let mut last = self.last.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match &*last {
            Some(shared) if **shared == *mine => Arc::clone(shared),
            _ => {
                let mine: Arc<[Tool]> = mine.into();
                *last = Some(Arc::clone(&mine));
                mine
            }
        }
    }
}

/// One page of `tools`, starting at `cursor`, of at most `page_size` tools (all when `None`).
pub fn page(tools: &[Tool], cursor: Option<&str>, page_size: Option<usize>) -> Result<ListToolsResult, ErrorData> {
    let start = match cursor {
        None => 0,
        Some(cursor) => decode_cursor(cursor)
            .filter(|offset| *offset <= tools.len())
            .ok_or_else(|| ErrorData::new(ErrorCode::INVALID_PARAMS, format!("Invalid cursor: {cursor}"), None))?,
    };
    let end = page_size.map_or(tools.len(), |size| start.saturating_add(size.max(1)).min(tools.len()));
    let next_cursor = (end < tools.len()).then(|| STANDARD.encode(end.to_string()));
    let page = json!({"tools": &tools[start..end], "nextCursor": next_cursor});
    serde_json::from_value(page).map_err(|err| ErrorData::internal_error(format!("cannot list the tools: {err}"), None))
}

fn decode_cursor(cursor: &str) -> Option<usize> {
    let bytes = STANDARD.decode(cursor).ok()?;
    std::str::from_utf8(&bytes).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn equal_lists_are_shared_and_a_different_one_is_not() {
        let shared = Shared::default();
        let first = shared.share(tools(3));
        let second = shared.share(tools(3));
        assert!(Arc::ptr_eq(&first, &second));
        let other = shared.share(tools(2));
        assert_eq!(other.len(), 2);
        assert!(!Arc::ptr_eq(&first, &other));
    }

    fn tools(n: usize) -> Vec<Tool> {
        let specs: Vec<ToolSpec> =
            (0..n).map(|i| ToolSpec::new(format!("t{i}"), "d").input_schema(json!({}))).collect();
        render(specs.iter())
    }

    fn names(result: &ListToolsResult) -> Vec<String> {
        result.tools.iter().map(|t| t.name.to_string()).collect()
    }

    #[test]
    fn pages_follow_the_cursor_to_the_end() {
        let all = tools(5);
        let first = page(&all, None, Some(2)).unwrap();
        assert_eq!(names(&first), ["t0", "t1"]);
        let second = page(&all, first.next_cursor.as_deref(), Some(2)).unwrap();
        assert_eq!(names(&second), ["t2", "t3"]);
        let third = page(&all, second.next_cursor.as_deref(), Some(2)).unwrap();
        assert_eq!(names(&third), ["t4"]);
        assert_eq!(third.next_cursor, None);
        let everything = page(&all, None, None).unwrap();
        assert_eq!(everything.tools.len(), 5);
        assert_eq!(everything.next_cursor, None);
    }

    #[test]
    fn a_bad_cursor_is_invalid_params() {
        let all = tools(3);
        for bad in ["not base64!", "OTk=", "eA=="] {
            let err = page(&all, Some(bad), Some(2)).unwrap_err();
            assert_eq!(err.code, ErrorCode::INVALID_PARAMS, "{bad}");
            assert_eq!(err.message, format!("Invalid cursor: {bad}"));
        }
    }
}
