//! From tags to symbols: nesting, kinds, parents and qualified names, all from the tags'
//! byte ranges (a definition encloses another when its range holds the other's), and the
//! definition enclosing each reference.
//!
//! Language rules applied here (docs/ckg.md has the table):
//! - Python and Rust functions are methods when their innermost enclosing definition is a
//!   class (Python), or an `impl` or trait (Rust); the stock Rust query also calls a `fn` in
//!   an inline `mod` a method, which this corrects.
//! - A Go method's parent is its receiver type (a `receiver` tag with the method's range).
//! - A C++ definition named `A::f` is a method of `A`; a function defined in a C++ class body
//!   (a constructor: its declarator is a plain identifier) is a method of the class.
//! - Go's `package` and Java's `package` qualify every name of the file; Python and Rust
//!   names are qualified by the file's module path.

use std::collections::HashMap;

use super::text::{Lines, doc_comment, module_prefix, signature};
use super::{Extraction, Kind, RawTag, RefKind, Reference, Symbol};
use crate::language::Language;

/// A definition tag on its way to becoming a symbol.
struct Def {
    tag: RawTag,
    kind: Kind,
    /// The innermost enclosing container (index into the sorted definitions).
    container: Option<usize>,
}

/// Builds the symbols and references of one file from its tags.
pub(super) fn build(language: Language, path: &str, source: &[u8], tags: Vec<RawTag>) -> Extraction {
    let mut package = None;
    let mut receivers: HashMap<(usize, usize), String> = HashMap::new();
    let mut defs = Vec::new();
    let mut refs = Vec::new();
    for tag in tags {
        if !tag.is_definition {
            match ref_kind(tag.kind) {
                Some(RefKind::Call) if tag.member => refs.push((tag, RefKind::MethodCall)),
                Some(kind) => refs.push((tag, kind)),
                None => {}
            }
            continue;
        }
        match tag.kind {
            "package" => {
                package.get_or_insert(tag.name);
            }
            "receiver" => {
                receivers.insert((tag.range.start, tag.range.end), tag.name);
            }
            other => {
                if let Some(kind) = Kind::from_name(other) {
                    defs.push(Def { tag, kind, container: None });
                }
            }
        }
    }
    // Outer definitions before inner ones: by start, then the longer first.
    defs.sort_by(|a, b| a.tag.range.start.cmp(&b.tag.range.start).then(b.tag.range.end.cmp(&a.tag.range.end)));
    link_containers(&mut defs);

    let lines = Lines::new(source);
    let prefix = package.or_else(|| module_prefix(language, path));
    let separator = language.separator();
    let mut symbols: Vec<Symbol> = Vec::with_capacity(defs.len());
    for index in 0..defs.len() {
        let container = defs[index].container;
        let container_kind = container.map(|c| defs[c].kind);
        let def = &defs[index];
        let mut name = def.tag.name.clone();
        let mut kind = adjust_kind(language, def.kind, container_kind);
        let mut parent = container.map(|c| symbols[c].name.clone());
        let mut scope = container.map(|c| symbols[c].qualified.clone()).or_else(|| prefix.clone());
        if let Some(receiver) = receivers.get(&(def.tag.range.start, def.tag.range.end)) {
            scope = Some(join(scope.as_deref(), separator, receiver));
            parent = Some(receiver.clone());
        }
        if language == Language::Cpp {
            name = conversion_operator_name(&name);
        }
        if language == Language::Cpp
            && let Some((qualifier, bare)) = split_qualified(&name)
        {
            scope = Some(join(scope.as_deref(), separator, &qualifier));
            parent = Some(qualifier.rsplit("::").next().unwrap_or(&qualifier).to_owned());
            name = bare;
            kind = Kind::Method;
        }
        let qualified = join(scope.as_deref(), separator, &name);
        let (start, end) = (def.tag.range.start, def.tag.range.end);
        symbols.push(Symbol {
            signature: signature(language, kind, source, def.tag.range.clone(), def.tag.name_range.clone()),
            doc: doc_comment(language, source, start, def.tag.name_range.end),
            name,
            qualified,
            kind,
            parent,
            start_line: lines.line_of(start),
            end_line: lines.line_of(end.saturating_sub(1).max(start)),
            name_line: to_u32(def.tag.row + 1),
            start_byte: to_u32(start),
            end_byte: to_u32(end),
        });
    }

    let references = enclose_references(&defs, refs, &lines);
    Extraction { symbols, references, partial: false }
}

/// Sets each definition's innermost enclosing container. `defs` is sorted outer-first, and
/// tag ranges come from syntax nodes, so they nest or are disjoint.
fn link_containers(defs: &mut [Def]) {
    let mut stack: Vec<usize> = Vec::new();
    for index in 0..defs.len() {
        let range = defs[index].tag.range.clone();
        while let Some(&top) = stack.last() {
            let outer = &defs[top].tag.range;
            let contains = outer.start <= range.start && range.end <= outer.end && *outer != range;
            if contains {
                break;
            }
            stack.pop();
        }
        defs[index].container = stack.last().copied();
        if defs[index].kind.is_container() {
            stack.push(index);
        }
    }
}

/// The kind a definition has in its place: functions in classes are methods, and so on.
fn adjust_kind(language: Language, kind: Kind, container: Option<Kind>) -> Kind {
    match (language, kind) {
        // A constructor defined in a C++ class body has a plain identifier as its declarator.
        (Language::Python | Language::Cpp, Kind::Function) if container == Some(Kind::Class) => Kind::Method,
        (Language::Rust, Kind::Function | Kind::Method) => match container {
            Some(Kind::Impl | Kind::Interface) => Kind::Method,
            _ => Kind::Function,
        },
        _ => kind,
    }
}

/// A C++ conversion operator's tag covers its parameters and qualifiers (`A::operator bool()
/// const`): its name ends before them (`A::operator bool`). Other names are kept.
fn conversion_operator_name(name: &str) -> String {
    let Some(at) = operator_start(name) else { return name.to_owned() };
    let rest = &name[at + OPERATOR.len()..];
    let is_conversion = rest.starts_with(char::is_whitespace)
        && rest.trim_start().starts_with(|c: char| c.is_alphabetic() || c == '_' || c == ':');
    if !is_conversion {
        return name.to_owned();
    }
    let mut depth = 0i32;
    for (i, c) in rest.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            '(' if depth == 0 => return name[..at + OPERATOR.len() + i].trim_end().to_owned(),
            _ => {}
        }
    }
    name.to_owned()
}

const OPERATOR: &str = "operator";

/// Where an operator's name starts in `name` (`operator` at the start or after `::`): the
/// rest is the operator, whose type may hold `::` and `<…>` of its own.
fn operator_start(name: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(found) = name[from..].find(OPERATOR) {
        let at = from + found;
        let after = &name[at + OPERATOR.len()..];
        if (at == 0 || name[..at].ends_with("::")) && !after.starts_with(|c: char| c.is_alphanumeric() || c == '_') {
            return Some(at);
        }
        from = at + OPERATOR.len();
    }
    None
}

/// `A::B::f` as (`A::B`, `f`); `None` for a bare name. `::` inside template arguments, or in
/// the type of a conversion operator (`A::operator ::ns::T`), does not split.
fn split_qualified(name: &str) -> Option<(String, String)> {
    let mut depth = 0i32;
    let mut split = None;
    let bytes = &name.as_bytes()[..operator_start(name).unwrap_or(name.len())];
    for (i, byte) in bytes.iter().enumerate() {
        match byte {
            b'<' => depth += 1,
            b'>' => depth -= 1,
            b':' if depth == 0 && bytes.get(i + 1) == Some(&b':') => split = Some(i),
            _ => {}
        }
    }
    let at = split?;
    let qualifier = name[..at].trim();
    let bare = name[at + 2..].trim();
    if qualifier.is_empty() || bare.is_empty() {
        return None;
    }
    Some((qualifier.to_owned(), bare.to_owned()))
}

/// The definitions and the references, matched: each reference gets the innermost definition
/// whose range holds its name. A sweep over both in source order.
fn enclose_references(defs: &[Def], mut refs: Vec<(RawTag, RefKind)>, lines: &Lines) -> Vec<Reference> {
    refs.sort_by_key(|(tag, _)| tag.name_range.start);
    let mut out: Vec<Reference> = Vec::with_capacity(refs.len());
    let mut stack: Vec<usize> = Vec::new();
    let mut next = 0;
    for (tag, kind) in refs {
        let at = tag.name_range.clone();
        while next < defs.len() && defs[next].tag.range.start <= at.start {
            while stack.last().is_some_and(|&top| defs[top].tag.range.end <= defs[next].tag.range.start) {
                stack.pop();
            }
            stack.push(next);
            next += 1;
        }
        while stack.last().is_some_and(|&top| defs[top].tag.range.end < at.end) {
            stack.pop();
        }
        let from = stack.last().copied();
        let name = match kind {
            RefKind::Import => tag.name.trim_matches(|c| matches!(c, '"' | '\'' | '`' | '<' | '>')).to_owned(),
            _ => tag.name,
        };
        if name.is_empty() {
            continue;
        }
        out.push(Reference { from, name, kind, line: lines.line_of(at.start) });
    }
    // The same use twice on a line (`f(f(x))`) is one reference.
    out.sort_by(|a, b| (a.line, a.kind, a.from, &a.name).cmp(&(b.line, b.kind, b.from, &b.name)));
    out.dedup();
    out
}

/// The reference kind of a tag (the stock queries say `implementation`).
fn ref_kind(name: &str) -> Option<RefKind> {
    RefKind::from_name(if name == "implementation" { "implements" } else { name })
}

fn join(scope: Option<&str>, separator: &str, name: &str) -> String {
    match scope {
        Some(scope) if !scope.is_empty() => format!("{scope}{separator}{name}"),
        _ => name.to_owned(),
    }
}

fn to_u32(value: usize) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}
