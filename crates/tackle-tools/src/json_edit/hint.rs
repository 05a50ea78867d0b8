//! What to fix in a JSONPath that `serde_json_path` refused. Its errors name a position and,
//! for most syntax mistakes, only "parser error"; [`hint`] recognises the mistakes models
//! make most and says how to write the path instead: whitespace around it, a bracket, filter
//! or string left open, an index written after a dot (`$.items.0`), a name that needs quotes
//! (`$.first-name`, `$[name]`), a comparison against a query that can select several values
//! (`$[?@.*.price > 3]`), and capitalised or unquoted literals in a filter.
//!
//! The hints are read from the path's text (strings skipped), after the parser refused it:
//! they never decide whether a path is valid.

/// A hint for the refused `path`, or `None` when no common mistake is recognised.
pub fn hint(path: &str) -> Option<String> {
    if path.trim_end().len() != path.len() {
        return Some(format!("remove the whitespace after the path: '{}'", path.trim_end()));
    }
    let scan = Scan::of(path);
    if let Some(quote) = scan.open_quote {
        let opened = &path[quote..];
        return Some(format!("the string {} is not closed: end it with {}", shown(opened), &path[quote..=quote]));
    }
    if let Some(&(at, kind)) = scan.open.last() {
        let what = match kind {
            Open::Filter => "the filter [? opened at",
            Open::Bracket => "the [ opened at",
            Open::Paren => "the ( opened at",
        };
        let close = if kind == Open::Paren { ")" } else { "]" };
        return Some(format!("{what} {} is not closed: add {close}", shown(&path[at..])));
    }
    if let Some(at) = scan.stray_closer {
        return Some(format!("the {} at {} closes nothing: remove it", &path[at..=at], shown(&path[at..])));
    }
    let checks: [fn(&str, &Scan) -> Option<String>; 5] =
        [index_after_dot, name_needing_quotes, non_singular_comparison, literal_case, unquoted_string];
    checks.into_iter().find_map(|check| check(path, &scan))
}

/// What an open bracket or parenthesis is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    Bracket,
    Filter,
    Paren,
}

/// One pass over the path: what is left open, and which bytes lie inside strings or filters.
struct Scan {
    /// Per byte: inside a quoted string (quotes included).
    quoted: Vec<bool>,
    /// Per byte: inside a filter selector.
    in_filter: Vec<bool>,
    /// Brackets and parentheses open at the end, with where they opened.
    open: Vec<(usize, Open)>,
    /// Where a string that is never closed opens.
    open_quote: Option<usize>,
    /// The first `]` or `)` that closes nothing (or the wrong kind).
    stray_closer: Option<usize>,
}

impl Scan {
    fn of(path: &str) -> Scan {
        let bytes = path.as_bytes();
        let mut scan = Scan {
            quoted: vec![false; bytes.len()],
            in_filter: vec![false; bytes.len()],
            open: Vec::new(),
            open_quote: None,
            stray_closer: None,
        };
        let mut i = 0;
        while i < bytes.len() {
            let filters = scan.open.iter().any(|(_, kind)| *kind == Open::Filter);
            scan.in_filter[i] = filters;
            match bytes[i] {
                quote @ (b'\'' | b'"') => {
                    let start = i;
                    i += 1;
                    while i < bytes.len() && bytes[i] != quote {
                        i += if bytes[i] == b'\\' { 2 } else { 1 };
                    }
                    let end = i.min(bytes.len() - 1);
                    scan.quoted[start..=end].iter_mut().for_each(|q| *q = true);
                    scan.in_filter[start..=end].iter_mut().for_each(|f| *f = filters);
                    if i >= bytes.len() {
                        scan.open_quote = Some(start);
                    }
                }
                b'[' => {
                    let filter = path[i + 1..].trim_start().starts_with('?');
                    scan.open.push((i, if filter { Open::Filter } else { Open::Bracket }));
                }
                b'(' => scan.open.push((i, Open::Paren)),
                closer @ (b']' | b')') => {
                    let matches = match scan.open.last() {
                        Some((_, Open::Paren)) => closer == b')',
                        Some(_) => closer == b']',
                        None => false,
                    };
                    if matches {
                        scan.open.pop();
                    } else if scan.stray_closer.is_none() {
                        scan.stray_closer = Some(i);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        scan
    }

    /// Byte `i` is outside strings.
    fn bare(&self, i: usize) -> bool {
        !self.quoted[i]
    }
}

/// `text` quoted for a hint, cut to a few characters.
fn shown(text: &str) -> String {
    const MAX_CHARS: usize = 24;
    match text.char_indices().nth(MAX_CHARS) {
        Some((cut, _)) => format!("'{}...'", &text[..cut]),
        None => format!("'{text}'"),
    }
}

/// A byte that ends a query: what may follow a name.
fn ends_query(c: u8) -> bool {
    matches!(
        c,
        b'.' | b'[' | b']' | b')' | b',' | b'=' | b'!' | b'<' | b'>' | b'&' | b'|' | b' ' | b'\t' | b'\n' | b'\r'
    )
}

/// A byte that may start a name after a dot (RFC 9535 `name-first`).
fn starts_name(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c >= 0x80
}

/// The dots that continue a query: after `$`, `@`, a name, `]` or `*` (not a number's dot).
fn query_dots<'a>(path: &'a str, scan: &'a Scan) -> impl Iterator<Item = usize> + 'a {
    let bytes = path.as_bytes();
    (1..bytes.len()).filter(move |&i| {
        let before = bytes[i - 1];
        bytes[i] == b'.'
            && scan.bare(i)
            && before != b'.'
            && (matches!(before, b'$' | b'@' | b']' | b'*') || (starts_name(before) && !number_before(bytes, i)))
    })
}

/// Whether the name-like run before `dot` is part of a number (`1e5.`), not a name.
fn number_before(bytes: &[u8], dot: usize) -> bool {
    let start = (0..dot).rev().find(|&j| !(bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_')).map_or(0, |j| j + 1);
    bytes.get(start).is_some_and(u8::is_ascii_digit)
}

/// `$.items.0`: an index after a dot.
fn index_after_dot(path: &str, scan: &Scan) -> Option<String> {
    let bytes = path.as_bytes();
    query_dots(path, scan).find_map(|dot| {
        let digits = bytes[dot + 1..].iter().take_while(|c| c.is_ascii_digit() || **c == b'-').count();
        let index = &path[dot + 1..dot + 1 + digits];
        (digits > 0 && index.bytes().any(|c| c.is_ascii_digit())).then(|| {
            let fixed = format!("{}[{index}]{}", &path[..dot], &path[dot + 1 + digits..]);
            format!(
                ".{index} is not an index: write an array index in brackets ({fixed}), and a key that is a number \
                 quoted ({}['{index}'])",
                &path[..dot]
            )
        })
    })
}

/// `$.first-name`, `$.&`, `$. a`, `$[name]`: a name written where only a plain name fits.
fn name_needing_quotes(path: &str, scan: &Scan) -> Option<String> {
    let bytes = path.as_bytes();
    for dot in query_dots(path, scan) {
        let Some(&first) = bytes.get(dot + 1) else { continue };
        if first.is_ascii_whitespace() {
            return Some(format!("no whitespace may follow a dot: write {}", shown(&collapse_after(path, dot + 1))));
        }
        if first == b'[' {
            return Some(format!(
                "no dot goes before a bracket: write {}",
                shown(&format!("{}{}", &path[..dot], &path[dot + 1..]))
            ));
        }
        if first == b'\'' || first == b'"' {
            return Some("a quoted name goes in brackets, without a dot: ['name'], not .'name'".to_owned());
        }
        if first == b'*' || first == b'.' || first.is_ascii_digit() {
            continue;
        }
        let end = (dot + 2..bytes.len()).find(|&i| ends_query(bytes[i])).unwrap_or(bytes.len());
        let name = &path[dot + 1..end];
        let plain = name.bytes().enumerate().all(|(i, c)| starts_name(c) || (i > 0 && c.is_ascii_digit()));
        if !plain && !name.is_empty() {
            return Some(quote_name(path, dot, end, name));
        }
    }
    // `[name]`: a bare word as a bracket selector.
    for (at, _) in path.match_indices('[').filter(|(at, _)| scan.bare(*at)) {
        let inner = path[at + 1..].trim_start();
        let word: String = inner.chars().take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '-')).collect();
        if word.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_') {
            let rest = &inner[word.len()..];
            if rest.trim_start().starts_with([']', ',']) {
                return Some(format!("a name in brackets is quoted: ['{word}'], not [{word}]"));
            }
        }
    }
    None
}

/// The hint for `.name` (from `dot` to `end`) that needs the bracket form.
fn quote_name(path: &str, dot: usize, end: usize, name: &str) -> String {
    let escaped = name.replace('\\', "\\\\").replace('\'', "\\'");
    let fixed = format!("{}['{escaped}']{}", &path[..dot], &path[end..]);
    format!(
        "after a dot only a plain name fits (letters, digits and _, not first a digit): write other names in \
         brackets and quotes ({fixed})"
    )
}

/// `path` from `from` on, with the whitespace at `from` removed.
fn collapse_after(path: &str, from: usize) -> String {
    format!("{}{}", &path[..from], path[from..].trim_start())
}

/// `[?@.* == 1]`, `[?@..a > 2]`, `[?length(@[0,1]) == 2]`: a comparison (or `length` /
/// `value`) needs a query that selects at most one value.
fn non_singular_comparison(path: &str, scan: &Scan) -> Option<String> {
    let bytes = path.as_bytes();
    for start in (1..bytes.len()).filter(|&i| matches!(bytes[i], b'@' | b'$') && scan.bare(i) && scan.in_filter[i]) {
        let (end, several) = query_extent(bytes, scan, start);
        if !several {
            continue;
        }
        let query = &path[start..end];
        let before = path[..start].trim_end();
        let after = path[end..].trim_start();
        let function = before
            .strip_suffix('(')
            .map(str::trim_end)
            .and_then(|b| ["length", "value"].into_iter().find(|f| b.ends_with(f)));
        if compared(before, after) || function.is_some() {
            let what = function.map_or_else(|| "a comparison".to_owned(), |f| format!("{f}()"));
            return Some(format!(
                "{query} can select several values, and {what} needs a query that selects at most one (names and \
                 indices only, such as @.price or @[0]): name the one value, or test that values exist with \
                 [?{query}] (count({query}) counts them)"
            ));
        }
    }
    None
}

/// Where the query starting at `start` (`@` or `$`) ends, and whether it can select several
/// values (a wildcard, a descendant segment, a slice, a union or a filter in it).
fn query_extent(bytes: &[u8], scan: &Scan, start: usize) -> (usize, bool) {
    let mut i = start + 1;
    let mut several = false;
    while i < bytes.len() {
        match bytes[i] {
            b'.' if bytes.get(i + 1) == Some(&b'.') => {
                several = true;
                i += 2;
            }
            b'.' => i += 1,
            b'*' => {
                several = true;
                i += 1;
            }
            b'[' => {
                let mut depth = 0usize;
                while i < bytes.len() {
                    if scan.bare(i) {
                        match bytes[i] {
                            b'[' | b'(' => depth += 1,
                            b']' | b')' => depth -= 1,
                            b'*' | b':' | b',' | b'?' if depth == 1 => several = true,
                            _ => {}
                        }
                    }
                    i += 1;
                    if depth == 0 {
                        break;
                    }
                }
            }
            c if starts_name(c) || c.is_ascii_digit() => i += 1,
            _ => break,
        }
    }
    (i, several)
}

/// Whether what ends with `before` and starts with `after` is an operand of a comparison.
fn compared(before: &str, after: &str) -> bool {
    before.ends_with(['=', '<', '>']) || ["==", "!=", "<", ">"].into_iter().any(|op| after.starts_with(op))
}

/// `True`, `FALSE`, `Null` in a filter: JSONPath's literals are lowercase.
fn literal_case(path: &str, scan: &Scan) -> Option<String> {
    words_in_filters(path, scan).find_map(|(_, word)| {
        let lower = word.to_ascii_lowercase();
        (matches!(lower.as_str(), "true" | "false" | "null") && word != lower)
            .then(|| format!("literals are lowercase in JSONPath: {lower}, not {word}"))
    })
}

/// `[?@.status == active]`: a string compared without quotes.
fn unquoted_string(path: &str, scan: &Scan) -> Option<String> {
    words_in_filters(path, scan).find_map(|(at, word)| {
        let before = path[..at].trim_end();
        let after = path[at + word.len()..].trim_start();
        let literal = matches!(word, "true" | "false" | "null");
        let function = after.starts_with('(');
        (compared(before, after) && !literal && !function && !before.ends_with('.'))
            .then(|| format!("a string in a filter is quoted: '{word}', not {word}"))
    })
}

/// The words (a letter or `_`, then letters, digits and `_`) in filters outside strings and
/// not part of a query (not after `.`, `@` or `$`), with where each starts.
fn words_in_filters<'a>(path: &'a str, scan: &'a Scan) -> impl Iterator<Item = (usize, &'a str)> + 'a {
    let bytes = path.as_bytes();
    let word_byte = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    (0..bytes.len())
        .filter(move |&i| {
            scan.bare(i)
                && scan.in_filter[i]
                && (bytes[i].is_ascii_alphabetic() || bytes[i] == b'_')
                && (i == 0 || !(word_byte(bytes[i - 1]) || matches!(bytes[i - 1], b'.' | b'@' | b'$')))
        })
        .map(move |i| {
            let end = (i..bytes.len()).find(|&j| !word_byte(bytes[j])).unwrap_or(bytes.len());
            (i, &path[i..end])
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn hint_of(path: &str) -> String {
        assert!(serde_json_path::JsonPath::parse(path).is_err(), "{path} parses");
        hint(path).unwrap_or_else(|| panic!("no hint for {path}"))
    }

    #[test]
    fn an_index_after_a_dot() {
        assert_eq!(
            hint_of("$.items.0.name"),
            ".0 is not an index: write an array index in brackets ($.items[0].name), and a key that is a number \
             quoted ($.items['0'])"
        );
        assert!(hint_of("$.1").contains("($[1])"));
        assert!(hint_of("$[?@.a.-1 == 2]").contains("$[?@.a[-1] == 2]"));
    }

    #[test]
    fn names_that_need_quotes() {
        assert!(hint_of("$.first-name").ends_with("($['first-name'])"), "{}", hint_of("$.first-name"));
        assert!(hint_of("$.a.&").ends_with("($.a['&'])"));
        assert!(hint_of("$.user.e-mail.host").ends_with("($.user['e-mail'].host)"));
        assert_eq!(hint_of("$[name]"), "a name in brackets is quoted: ['name'], not [name]");
        assert_eq!(hint_of("$.a[ b , 'c']"), "a name in brackets is quoted: ['b'], not [b]");
        assert_eq!(hint_of("$. a"), "no whitespace may follow a dot: write '$.a'");
        assert_eq!(hint_of("$.a.['b']"), "no dot goes before a bracket: write '$.a['b']'");
        assert!(hint_of("$.'b'").starts_with("a quoted name goes in brackets"));
    }

    #[test]
    fn comparisons_against_queries_that_select_several_values() {
        for (path, query) in [
            ("$[?@.* == 1]", "@.*"),
            ("$[?@..a==0]", "@..a"),
            ("$[?@[0:2] > 1]", "@[0:2]"),
            ("$[?1 < @['a', 'b']]", "@['a', 'b']"),
            ("$.users[?@.tags[*] == 'x'].name", "@.tags[*]"),
            ("$[?(@[?@.a] != 2)]", "@[?@.a]"),
            ("$[?$.*==42]", "$.*"),
        ] {
            let hint = hint_of(path);
            assert!(
                hint.starts_with(&format!("{query} can select several values, and a comparison")),
                "{path}: {hint}"
            );
        }
        assert!(hint_of("$[?length(@.*)<3]").starts_with("@.* can select several values, and length() needs"));
    }

    #[test]
    fn brackets_filters_and_strings_left_open() {
        assert_eq!(hint_of("$.a[?@.b > 1"), "the filter [? opened at '[?@.b > 1' is not closed: add ]");
        assert_eq!(hint_of("$.a[0"), "the [ opened at '[0' is not closed: add ]");
        assert_eq!(hint_of("$[?(@.a > 1]"), "the ( opened at '(@.a > 1]' is not closed: add )");
        assert_eq!(hint_of("$['abc]"), "the string ''abc]' is not closed: end it with '");
        assert_eq!(hint_of("$.a]"), "the ] at ']' closes nothing: remove it");
        assert_eq!(hint_of("$ "), "remove the whitespace after the path: '$'");
    }

    #[test]
    fn literals_in_filters() {
        assert_eq!(hint_of("$[?@.on == True]"), "literals are lowercase in JSONPath: true, not True");
        assert_eq!(hint_of("$[?@.status == active]"), "a string in a filter is quoted: 'active', not active");
        assert_eq!(hint_of("$[?active != @.status]"), "a string in a filter is quoted: 'active', not active");
    }

    #[test]
    fn other_mistakes_get_no_hint_and_strings_are_skipped() {
        for path in ["$[0 2]", "$[,0]", "$[]", "$[?@.a==01]", "$['a'.b]"] {
            assert!(serde_json_path::JsonPath::parse(path).is_err(), "{path}");
            assert_eq!(hint(path), None, "{path}");
        }
        // What is inside a string is never taken for a mistake.
        assert_eq!(Scan::of("$['[(.0']").open, vec![]);
        assert_eq!(hint("$['a.0 ] [name]'] x"), None);
    }
}
