//! What extraction reads from the source text around a tag: line numbers, the signature (the
//! head of a definition up to its body, on one line), the doc comment, and the module path a
//! file's location gives its names.
//!
//! The signature is cut by one small scanner for every language, rather than by a rule per
//! grammar over the syntax tree: from the start of the definition (skipping decorator
//! and annotation lines, so the signature names the definition) to the first `{` or `;` at
//! bracket depth 0 after the name, or `:` for Python, or `=>` for an arrow function; strings
//! and comments are skipped, whitespace is collapsed, and it is cut at
//! [`MAX_SIGNATURE_CHARS`].

use std::ops::Range;

use super::Kind;
use crate::language::Language;

/// The longest signature kept, in characters.
pub const MAX_SIGNATURE_CHARS: usize = 300;
/// The longest doc comment kept, in characters.
pub const MAX_DOC_CHARS: usize = 1_000;
/// How far past the name the signature scanner looks, in bytes.
const SIGNATURE_SCAN_BYTES: usize = 4_096;
/// How many comment lines above a definition make its doc comment, at most.
const MAX_DOC_LINES: usize = 40;

/// Line numbers of byte offsets.
pub struct Lines {
    /// The offset of every `\n`.
    newlines: Vec<usize>,
}

impl Lines {
    /// The lines of `source`.
    pub fn new(source: &[u8]) -> Self {
        Lines { newlines: memchr::memchr_iter(b'\n', source).collect() }
    }

    /// The 1-based line of byte `at`.
    pub fn line_of(&self, at: usize) -> u32 {
        u32::try_from(self.newlines.partition_point(|&n| n < at) + 1).unwrap_or(u32::MAX)
    }
}

/// The start of the line holding byte `at`.
fn line_start(source: &[u8], at: usize) -> usize {
    source[..at.min(source.len())].iter().rposition(|&b| b == b'\n').map_or(0, |n| n + 1)
}

/// The end of the line holding byte `at` (the offset of its `\n`, or the end of the source).
fn line_end(source: &[u8], at: usize) -> usize {
    memchr::memchr(b'\n', &source[at.min(source.len())..]).map_or(source.len(), |n| at + n)
}

fn skip_blanks(source: &[u8], mut at: usize, end: usize) -> usize {
    while at < end && matches!(source[at], b' ' | b'\t' | b'\r' | b'\n') {
        at += 1;
    }
    at
}

/// Where the signature begins: the definition's first line that is not a decorator,
/// annotation or attribute line; or, when the tagged node starts after keywords on the name's
/// line (`type Foo struct`, `const f = () =>`, `export function f`), that line's start.
fn signature_start(source: &[u8], range: &Range<usize>, name: &Range<usize>) -> usize {
    let name_line = skip_blanks(source, line_start(source, name.start), name.start);
    if range.start < name_line {
        let mut at = skip_blanks(source, range.start, name_line);
        while at < name_line && (source[at] == b'@' || source[at..].starts_with(b"#[")) {
            let next = skip_blanks(source, line_end(source, at), name_line);
            if next >= name_line {
                return name_line;
            }
            at = next;
        }
        return at;
    }
    let before = &source[name_line..range.start];
    if before.iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b' ' | b'\t' | b'$')) {
        name_line
    } else {
        range.start
    }
}

/// The head of the definition tagged at `range` (its name at `name`), on one line.
pub(super) fn signature(
    language: Language,
    kind: Kind,
    source: &[u8],
    range: Range<usize>,
    name: Range<usize>,
) -> String {
    let start = signature_start(source, &range, &name);
    let end = range.end.min(name.end.saturating_add(SIGNATURE_SCAN_BYTES)).min(source.len());
    let python = language == Language::Python;
    let statement = matches!(kind, Kind::Field | Kind::Constant | Kind::Type);
    let mut out = Vec::with_capacity(128);
    let mut depth = 0usize;
    let mut at = start;
    while at < end {
        let byte = source[at];
        let past_name = at >= name.end;
        match byte {
            b'"' | b'`' => at = skip_string(source, at, end, byte, &mut out),
            b'\'' if python => at = skip_string(source, at, end, byte, &mut out),
            b'#' if python => at = line_end(source, at),
            b'/' if !python && source.get(at + 1) == Some(&b'/') => at = line_end(source, at),
            b'/' if !python && source.get(at + 1) == Some(&b'*') => {
                at = find(source, at + 2, end, b"*/").map_or(end, |n| n + 2);
                out.push(b' ');
            }
            b'(' | b'[' => {
                depth += 1;
                out.push(byte);
                at += 1;
            }
            b')' | b']' => {
                depth = depth.saturating_sub(1);
                out.push(byte);
                at += 1;
            }
            b'{' if depth == 0 && past_name && !python => break,
            b'{' => {
                depth += 1;
                out.push(byte);
                at += 1;
            }
            b'}' => {
                depth = depth.saturating_sub(1);
                out.push(byte);
                at += 1;
            }
            b';' if depth == 0 && past_name => break,
            b':' if depth == 0 && past_name && python && !statement => break,
            b'\n' if depth == 0 && past_name && (python || statement) && !out.ends_with(b"\\") => break,
            b'=' if depth == 0 && past_name && !python && source.get(at + 1) == Some(&b'>') => {
                out.extend_from_slice(b"=>");
                break;
            }
            _ => {
                out.push(byte);
                at += 1;
            }
        }
        if out.len() > MAX_SIGNATURE_CHARS * 4 {
            break;
        }
    }
    collapse(&String::from_utf8_lossy(&out), MAX_SIGNATURE_CHARS)
}

/// Copies a string literal opened by `quote` at `at` into `out`; returns where it ends.
fn skip_string(source: &[u8], at: usize, end: usize, quote: u8, out: &mut Vec<u8>) -> usize {
    let mut i = at + 1;
    while i < end {
        match source[i] {
            b'\\' => i += 2,
            b'\n' if quote != b'`' => break,
            byte if byte == quote => {
                i += 1;
                break;
            }
            _ => i += 1,
        }
    }
    let i = i.min(end);
    out.extend_from_slice(&source[at..i]);
    i
}

fn find(source: &[u8], from: usize, end: usize, needle: &[u8]) -> Option<usize> {
    source.get(from..end)?.windows(needle.len()).position(|w| w == needle).map(|n| from + n)
}

/// Whitespace runs become one space; the result is trimmed and cut at `max` characters.
fn collapse(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max * 4));
    for word in text.split_whitespace() {
        let joined = out.ends_with(['(', '[']) || word.starts_with([')', ']']);
        if !out.is_empty() && !joined {
            out.push(' ');
        }
        if word.starts_with([')', ']']) && out.ends_with(',') {
            out.pop();
        }
        out.push_str(word);
    }
    cut(out, max)
}

fn cut(text: String, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", text[..at].trim_end()),
        None => text,
    }
}

/// The doc comment of the definition starting at `start` (its name ending at `name_end`):
/// for Python its docstring, else the comment lines right above it (attribute and decorator
/// lines in between are skipped).
pub(super) fn doc_comment(language: Language, source: &[u8], start: usize, name_end: usize) -> Option<String> {
    if language == Language::Python
        && let Some(doc) = docstring(source, name_end)
    {
        return Some(doc);
    }
    let mut lines: Vec<String> = Vec::new();
    let mut end = line_start(source, start);
    while end > 0 && lines.len() < MAX_DOC_LINES {
        let begin = line_start(source, end - 1);
        let line = String::from_utf8_lossy(&source[begin..end - 1]);
        let line = line.trim();
        let stripped = if language == Language::Python {
            line.strip_prefix('#').map(str::trim)
        } else if line.starts_with("#[") || line.starts_with('@') {
            end = begin;
            continue;
        } else {
            strip_comment_marker(line)
        };
        match stripped {
            Some(text) => lines.push(text.to_owned()),
            None => break,
        }
        end = begin;
    }
    lines.reverse();
    let text = lines.join("\n");
    let text = text.trim();
    (!text.is_empty()).then(|| cut(text.to_owned(), MAX_DOC_CHARS))
}

/// The text of a `//`, `///`, `/* */` or ` * ` comment line; `None` if the line is not one.
fn strip_comment_marker(line: &str) -> Option<&str> {
    let rest = ["///", "//!", "//", "/**", "/*", "*/", "*"].iter().find_map(|marker| line.strip_prefix(marker))?;
    Some(rest.trim_end_matches("*/").trim())
}

/// The docstring after a Python definition's head: the first statement of its body, when it
/// is a string literal.
fn docstring(source: &[u8], name_end: usize) -> Option<String> {
    // The body starts after the head's `:` at depth 0.
    let mut depth = 0usize;
    let mut at = name_end;
    let limit = source.len().min(name_end + SIGNATURE_SCAN_BYTES);
    while at < limit {
        match source[at] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b':' if depth == 0 => break,
            _ => {}
        }
        at += 1;
    }
    let at = skip_blanks(source, (at + 1).min(source.len()), source.len());
    let rest = &source[at..];
    let rest = rest.strip_prefix(b"r").or_else(|| rest.strip_prefix(b"R")).unwrap_or(rest);
    let quote: &[u8] = [&b"\"\"\""[..], b"'''", b"\"", b"'"].into_iter().find(|q| rest.starts_with(q))?;
    let body = &rest[quote.len()..];
    let close = body.windows(quote.len()).take(MAX_DOC_CHARS * 8).position(|w| w == quote)?;
    let text = String::from_utf8_lossy(&body[..close]);
    let text = text.trim();
    (!text.is_empty()).then(|| cut(text.to_owned(), MAX_DOC_CHARS))
}

/// The module path a file's location gives its names: `pkg.mod` for `pkg/mod.py`
/// (`__init__` dropped), `crate::a::b` for `src/a/b.rs` (`lib`, `main`, `mod` dropped).
pub(super) fn module_prefix(language: Language, path: &str) -> Option<String> {
    let stem = path.rsplit_once('.').map_or(path, |(stem, _)| stem);
    let mut segments: Vec<&str> = stem.split('/').filter(|s| !s.is_empty()).collect();
    match language {
        Language::Python => {
            if segments.last() == Some(&"__init__") {
                segments.pop();
            }
            (!segments.is_empty()).then(|| segments.join("."))
        }
        Language::Rust => match segments.iter().rposition(|s| *s == "src") {
            Some(src) => {
                if matches!(segments.last(), Some(&("lib" | "main" | "mod"))) {
                    segments.pop();
                }
                let inside = segments.get(src + 1..).unwrap_or_default();
                Some(std::iter::once("crate").chain(inside.iter().copied()).collect::<Vec<_>>().join("::"))
            }
            // Outside `src/` (tests, benches, examples, build.rs) each file is a crate of its own.
            None => segments.last().map(|stem| (*stem).to_owned()),
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(language: Language, kind: Kind, source: &str, name: &str) -> String {
        let at = source.find(name).unwrap();
        signature(language, kind, source.as_bytes(), 0..source.len(), at..at + name.len())
    }

    #[test]
    fn signatures_stop_at_the_body() {
        assert_eq!(
            sig(Language::Python, Kind::Function, "def f(a: dict = {}) -> int:\n    return 1\n", "f"),
            "def f(a: dict = {}) -> int"
        );
        assert_eq!(
            sig(
                Language::Python,
                Kind::Function,
                "@decorator(x=1)\n@other\nasync def g(\n    a,\n    b,\n):\n  pass",
                "g"
            ),
            "async def g(a, b)"
        );
        assert_eq!(
            sig(Language::Rust, Kind::Function, "pub fn f<'a>(x: &'a str) -> Option<&'a str> where T: X {\n}", "f"),
            "pub fn f<'a>(x: &'a str) -> Option<&'a str> where T: X"
        );
        assert_eq!(
            sig(Language::C, Kind::Function, "static int\n*ptrfn(int a) /* c */ {\n}", "ptrfn"),
            "static int *ptrfn(int a)"
        );
        assert_eq!(sig(Language::JavaScript, Kind::Function, "(a, b) => a + b", "a"), "(a, b) =>");
        assert_eq!(sig(Language::Rust, Kind::Class, "struct S(u8);", "S"), "struct S(u8)");
        assert_eq!(
            sig(Language::Java, Kind::Method, "@Override\n  public String toString() {", "toString"),
            "public String toString()"
        );
        assert_eq!(sig(Language::Python, Kind::Field, "x: int = 5\n", "x"), "x: int = 5");
    }

    #[test]
    fn a_signature_starts_at_the_keywords_before_the_name() {
        let source = "type Foo struct {\n}";
        let at = source.find("Foo").unwrap();
        assert_eq!(
            signature(Language::Go, Kind::Class, source.as_bytes(), at..source.len(), at..at + 3),
            "type Foo struct"
        );
        let source = "x = 1; const f = (a) => a";
        let at = source.find("f =").unwrap();
        assert_eq!(
            signature(Language::JavaScript, Kind::Function, source.as_bytes(), at..source.len(), at..at + 1),
            "f = (a) =>"
        );
    }

    #[test]
    fn long_signatures_are_cut() {
        let source = format!("def f({}):", "a, ".repeat(500));
        let out = sig(Language::Python, Kind::Function, &source, "f");
        assert!(out.chars().count() <= MAX_SIGNATURE_CHARS + 1 && out.chars().count() > MAX_SIGNATURE_CHARS - 5);
        assert!(out.ends_with('…'));
    }

    #[test]
    fn doc_comments_come_from_comments_above_or_docstrings() {
        let source = b"// unrelated\n\n/// Adds.\n/// Twice.\n#[inline]\nfn add() {}";
        let start = source.windows(2).position(|w| w == b"fn").unwrap();
        assert_eq!(doc_comment(Language::Rust, source, start, start + 6).as_deref(), Some("Adds.\nTwice."));
        let source = b"def f(a):\n    \"\"\"Does f.\n\n    More.\"\"\"\n";
        assert_eq!(doc_comment(Language::Python, source, 0, 5).as_deref(), Some("Does f.\n\n    More."));
        let source = b"x = 1\ndef f(a):\n    return a\n";
        assert_eq!(doc_comment(Language::Python, source, 6, 11), None);
    }

    #[test]
    fn module_paths_follow_the_file() {
        assert_eq!(module_prefix(Language::Python, "pip/_internal/__init__.py").as_deref(), Some("pip._internal"));
        assert_eq!(module_prefix(Language::Python, "setup.py").as_deref(), Some("setup"));
        assert_eq!(module_prefix(Language::Rust, "crates/x/src/store/mod.rs").as_deref(), Some("crate::store"));
        assert_eq!(module_prefix(Language::Rust, "src/lib.rs").as_deref(), Some("crate"));
        assert_eq!(module_prefix(Language::Rust, "build.rs").as_deref(), Some("build"));
        assert_eq!(module_prefix(Language::Rust, "crates/x/tests/index.rs").as_deref(), Some("index"));
        assert_eq!(module_prefix(Language::Go, "a/b.go"), None);
    }

    #[test]
    fn lines_are_one_based() {
        let lines = Lines::new(b"a\nb\n\nc");
        assert_eq!([0, 1, 2, 3, 4, 5, 6].map(|at| lines.line_of(at)), [1, 1, 2, 2, 3, 4, 4]);
    }
}
