//! Scanning JSONPath text before and beside `serde_json_path`, which parses and evaluates
//! paths but does not expose their segments and does not bound its input: [`bounds_problem`]
//! refuses a path the parser could not take safely (it parses recursively, so deep nesting
//! overflows the stack, and it re-parses a nested filter once per alternative it tries, so
//! parse time doubles with each nested filter); [`split_last`] finds the last top-level
//! segment of a path that has already parsed, for `add` (`$.a.b` is the key `b` under `$.a`,
//! `$.a[3]` is index 3 of `$.a`). Both skip quoted strings.

/// Longest JSONPath accepted, in bytes.
pub const MAX_PATH_BYTES: usize = 4096;
/// Deepest nesting of brackets and parentheses accepted: parentheses overflowed a 2 MiB
/// stack at 253 levels and `!(` at 243 in a debug build (`bench/stack_depth.sh`).
pub const MAX_NESTING: usize = 32;
/// Deepest nesting of filter selectors (`[?…]` inside `[?…]`) accepted: parsing 16 nested
/// filters took 4 s in a debug build, and each level doubles it.
pub const MAX_FILTER_NESTING: usize = 4;

/// Why `path` is refused before it is parsed (too long, nested too deeply), with what to do
/// instead; `None` for a path within the bounds.
pub fn bounds_problem(path: &str) -> Option<String> {
    if path.len() > MAX_PATH_BYTES {
        return Some(format!(
            "The JSONPath is {} bytes long; json_edit_tool accepts at most {MAX_PATH_BYTES}. Use a shorter path, or \
             edit in several calls.",
            path.len()
        ));
    }
    let (nesting, filters) = nesting(path);
    if nesting > MAX_NESTING {
        return Some(format!(
            "The JSONPath nests brackets and parentheses {nesting} levels deep; json_edit_tool accepts at most \
             {MAX_NESTING}. Write a flatter path."
        ));
    }
    if filters > MAX_FILTER_NESTING {
        return Some(format!(
            "The JSONPath nests {filters} filters ([?...] inside [?...]); json_edit_tool accepts at most \
             {MAX_FILTER_NESTING}. Select in steps: view what an outer filter matches, then edit those matches by \
             index."
        ));
    }
    None
}

/// The deepest nesting of brackets and parentheses in `path`, and of filter selectors (a
/// bracket that holds a `?` outside strings), strings skipped.
fn nesting(path: &str) -> (usize, usize) {
    // Per open bracket or parenthesis: which it is, and whether it holds a filter.
    let mut open: Vec<(u8, bool)> = Vec::new();
    let (mut filters, mut deepest, mut deepest_filters) = (0usize, 0usize, 0usize);
    let mut quote: Option<u8> = None;
    let mut escaped = false;
    for &c in path.as_bytes() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == b'\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            b'\'' | b'"' => quote = Some(c),
            b'[' | b'(' => {
                open.push((c, false));
                deepest = deepest.max(open.len());
            }
            b']' | b')' => {
                let closed_filter = open.pop().is_some_and(|(_, filter)| filter);
                filters -= usize::from(closed_filter);
            }
            b'?' => {
                if let Some((b'[', filter @ false)) = open.last_mut() {
                    *filter = true;
                    filters += 1;
                    deepest_filters = deepest_filters.max(filters);
                }
            }
            _ => {}
        }
    }
    (deepest, deepest_filters)
}

/// What the last segment of an `add` path names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Last {
    /// A member name: `.name`, `['name']`, `["name"]`.
    Name(String),
    /// An array index: `[3]`, `[-1]`.
    Index(i64),
}

/// Splits a valid JSONPath into its parent path and last segment. `None` when the path is
/// just `$`; `Some((parent, None))` when the last segment is not a single name or index
/// (a wildcard, slice, filter, union or descendant segment).
pub fn split_last(path: &str) -> Option<(String, Option<Last>)> {
    let bytes = path.as_bytes();
    let mut starts = Vec::new();
    let mut depth = 0usize;
    let mut quote: Option<u8> = None;
    let mut i = 1;
    while i < bytes.len() {
        let c = bytes[i];
        if let Some(q) = quote {
            if c == b'\\' {
                i += 1;
            } else if c == q {
                quote = None;
            }
        } else {
            match c {
                b'\'' | b'"' if depth > 0 => quote = Some(c),
                b'[' if depth == 0 => {
                    starts.push(i);
                    depth = 1;
                }
                b'[' | b'(' => depth += 1,
                b']' | b')' => depth = depth.saturating_sub(1),
                b'.' if depth == 0 => {
                    starts.push(i);
                    if bytes.get(i + 1) == Some(&b'.') {
                        i += 1;
                    }
                }
                _ => {}
            }
        }
        i += 1;
    }
    let start = *starts.last()?;
    let parent = path[..start].trim_end();
    let parent = if parent.is_empty() { "$" } else { parent };
    Some((parent.to_owned(), parse_segment(&path[start..])))
}

fn parse_segment(segment: &str) -> Option<Last> {
    if segment.starts_with("..") {
        return None;
    }
    if let Some(name) = segment.strip_prefix('.') {
        let name = name.trim();
        return (name != "*" && !name.is_empty()).then(|| Last::Name(name.to_owned()));
    }
    let inner = segment.strip_prefix('[')?.strip_suffix(']')?.trim();
    if let Ok(index) = inner.parse::<i64>() {
        return Some(Last::Index(index));
    }
    let quoted = inner.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')).map(|s| (s, '\''));
    let quoted = quoted.or_else(|| inner.strip_prefix('"').and_then(|s| s.strip_suffix('"')).map(|s| (s, '"')));
    let (body, quote) = quoted?;
    // One quoted name, not a union such as `['a','b']`.
    let mut escaped = false;
    for c in body.chars() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == quote {
            return None;
        }
    }
    let json = if quote == '\'' { body.replace("\\'", "'").replace('"', "\\\"") } else { body.to_owned() };
    serde_json::from_str::<String>(&format!("\"{json}\"")).ok().map(Last::Name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn split(path: &str) -> Option<(String, Option<Last>)> {
        split_last(path)
    }

    #[test]
    fn names_and_indices() {
        assert_eq!(split("$.a.b"), Some(("$.a".into(), Some(Last::Name("b".into())))));
        assert_eq!(split("$.a"), Some(("$".into(), Some(Last::Name("a".into())))));
        assert_eq!(split("$.a[3]"), Some(("$.a".into(), Some(Last::Index(3)))));
        assert_eq!(split("$[-1]"), Some(("$".into(), Some(Last::Index(-1)))));
        assert_eq!(split("$['x.y']"), Some(("$".into(), Some(Last::Name("x.y".into())))));
        assert_eq!(split("$.a[\"q\\\"uote\"]"), Some(("$.a".into(), Some(Last::Name("q\"uote".into())))));
        assert_eq!(split("$.a['it\\'s']"), Some(("$.a".into(), Some(Last::Name("it's".into())))));
        assert_eq!(
            split("$.users[?@.tags[0] == 'a.b'].name"),
            Some(("$.users[?@.tags[0] == 'a.b']".into(), Some(Last::Name("name".into()))))
        );
        assert_eq!(split("$"), None);
    }

    #[test]
    fn nesting_counts_brackets_parentheses_and_filters_outside_strings() {
        assert_eq!(nesting("$.a.b"), (0, 0));
        assert_eq!(nesting("$['a']['b'][0]"), (1, 0));
        assert_eq!(nesting("$[?(@.a > 1)]"), (2, 1));
        assert_eq!(nesting("$[?@.a[?@.b == 1]].c[?@.d]"), (2, 2));
        assert_eq!(nesting("$[0, ?@.a, ?@.b]"), (1, 1));
        assert_eq!(nesting("$[?length(@.a) == 2]"), (2, 1));
        // Brackets, parentheses and `?` inside strings of either quote do not count.
        assert_eq!(nesting(r#"$[?@.a == '[[[(?' && @.b == "]]?\"((("]"#), (1, 1));
        assert_eq!(nesting(r"$['it\'s [?']"), (1, 0));
        // A stray closer does not underflow.
        assert_eq!(nesting("$]])[?@.a]"), (1, 1));
    }

    #[test]
    fn paths_past_the_bounds_are_refused_with_what_to_do() {
        let parens = format!("$[?{}@.a{}]", "(".repeat(1000), ")".repeat(1000));
        let problem = bounds_problem(&parens).unwrap();
        assert!(problem.contains("1001 levels deep") && problem.contains("at most 32"), "{problem}");
        let filters = format!("${}.a{}", "[?@".repeat(600), "]".repeat(600));
        assert!(bounds_problem(&filters).unwrap().contains("600 levels deep"));
        let filters = format!("${}.a{}", "[?@".repeat(5), "]".repeat(5));
        let problem = bounds_problem(&filters).unwrap();
        assert!(problem.contains("nests 5 filters") && problem.contains("Select in steps"), "{problem}");
        let calls = format!("$[?{}@.a{} == 1]", "length(".repeat(100_000), ")".repeat(100_000));
        let problem = bounds_problem(&calls).unwrap();
        assert!(
            problem.contains(&format!("{} bytes long", calls.len())) && problem.contains("at most 4096"),
            "{problem}"
        );
        // At the bounds a path is accepted.
        let deepest = format!("$[?{}@.a{}]", "(".repeat(MAX_NESTING - 1), ")".repeat(MAX_NESTING - 1));
        assert_eq!(bounds_problem(&deepest), None);
        let filters = format!("${}.a{}", "[?@".repeat(MAX_FILTER_NESTING), "]".repeat(MAX_FILTER_NESTING));
        assert_eq!(bounds_problem(&filters), None);
        assert_eq!(bounds_problem(&format!("$['{}']", "x".repeat(MAX_PATH_BYTES - 5))), None);
    }

    #[test]
    fn other_last_segments_are_not_addable() {
        for path in ["$.a.*", "$.a[*]", "$.a[1:2]", "$.a[?@.x > 1]", "$..b", "$.a['b','c']", "$.a[0,1]"] {
            assert_eq!(split(path).unwrap().1, None, "{path}");
        }
    }
}
