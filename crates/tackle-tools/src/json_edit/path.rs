//! The last segment of a JSONPath, for `add`: `$.a.b` is the key `b` under `$.a`, `$.a[3]`
//! is index 3 of `$.a`. `serde_json_path` parses and evaluates paths but does not expose
//! their segments, so a small scanner finds the last top-level segment of a path that has
//! already parsed (strings and nested brackets skipped).

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
    let path = path.trim();
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
    fn other_last_segments_are_not_addable() {
        for path in ["$.a.*", "$.a[*]", "$.a[1:2]", "$.a[?@.x > 1]", "$..b", "$.a['b','c']", "$.a[0,1]"] {
            assert_eq!(split(path).unwrap().1, None, "{path}");
        }
    }
}
