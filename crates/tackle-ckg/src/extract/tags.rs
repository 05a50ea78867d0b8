//! Running a language's tags query over a file: tree-sitter's parser and query engine, with
//! the conventions of tree-sitter's tags (the `tree-sitter-tags` crate that GitHub's code
//! navigation runs): `@name` names a tag, `@definition.{kind}` and `@reference.{kind}` give
//! its node and kind, `@ignore` suppresses other tags of a node, and when several patterns
//! tag the same name node the earliest pattern wins.
//!
//! Why not `tree-sitter-tags` itself: it gives no way to bound the time of its query loop.
//! It looks at its cancellation flag only between matches, and tree-sitter's query cursor
//! can go a long time without one: on a flat error node (a file of 40,000 `(`), one step of
//! the cursor takes seconds, and the time grows with the square of the size, so a hostile
//! 2 MiB file would hang a worker for hours. Here both the parser and the cursor run with a
//! progress callback that checks the flag, so the per-file time limit always holds. Doc
//! comments come from the source text instead of the queries' `@doc` captures
//! ([`super::text`]).

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicUsize, Ordering};

use tree_sitter::{Parser, Query, QueryCursor, QueryCursorOptions, StreamingIterator as _};

use super::{ExtractError, RawTag};

/// What a capture of a tags query means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// `@name`: the tag's name.
    Name,
    /// `@ignore`: the node gets no tag.
    Ignore,
    /// `@definition.{kind}`: the defined node.
    Definition(String),
    /// `@reference.{kind}`: the referring node.
    Reference(String),
    /// Anything else (`@doc`, `@local.*`): not used.
    Other,
}

/// A compiled tags query.
#[derive(Debug)]
pub struct TagsQuery {
    pub language: tree_sitter::Language,
    pub query: Query,
    /// The role of each capture, by capture index.
    roles: Vec<Role>,
}

impl TagsQuery {
    /// Compiles `source` for `language`.
    pub fn new(language: tree_sitter::Language, source: &str) -> Result<Self, tree_sitter::QueryError> {
        let query = Query::new(&language, source)?;
        let roles = query
            .capture_names()
            .iter()
            .map(|name| match *name {
                "name" => Role::Name,
                "ignore" => Role::Ignore,
                other => match (other.strip_prefix("definition."), other.strip_prefix("reference.")) {
                    (Some(kind), _) => Role::Definition(kind.to_owned()),
                    (_, Some(kind)) => Role::Reference(kind.to_owned()),
                    _ => Role::Other,
                },
            })
            .collect();
        Ok(TagsQuery { language, query, roles })
    }
}

/// Whether the name at `start` is the member of an access (`x.f`, `x->f`, `x?.f`, `pkg.f`):
/// a call through it names whatever `f` the receiver's type has, which by-name resolution
/// can only guess. Read from the text (a `.` or `->` before the name, blanks aside), since a
/// node's parent costs a walk from the root.
fn is_member_access(source: &[u8], start: usize) -> bool {
    let before = source[..start].iter().rposition(|b| !b.is_ascii_whitespace());
    match before {
        Some(at) => source[at] == b'.' || (source[at] == b'>' && at > 0 && source[at - 1] == b'-'),
        None => false,
    }
}

/// A parser and a query cursor, reused from file to file (one per worker thread).
#[derive(Default)]
pub struct Tagger {
    parser: Parser,
    cursor: QueryCursor,
}

impl std::fmt::Debug for Tagger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tagger").finish_non_exhaustive()
    }
}

impl Tagger {
    /// A tagger.
    pub fn new() -> Self {
        Tagger::default()
    }

    /// The tags of `source`, in source order, and whether the tree has syntax errors. Stops
    /// with [`ExtractError::Cancelled`] as soon as `cancel` is raised.
    pub(super) fn run(
        &mut self,
        tags: &'static TagsQuery,
        source: &[u8],
        cancel: Option<&AtomicUsize>,
    ) -> Result<(Vec<RawTag>, bool), ExtractError> {
        let stopped = || cancel.is_some_and(|flag| flag.load(Ordering::Relaxed) != 0);
        self.parser.set_language(&tags.language).map_err(ExtractError::Grammar)?;
        self.parser.reset();
        let mut parse_progress =
            |_: &tree_sitter::ParseState| if stopped() { ControlFlow::Break(()) } else { ControlFlow::Continue(()) };
        let options = tree_sitter::ParseOptions::new().progress_callback(&mut parse_progress);
        let mut read = |at: usize, _: tree_sitter::Point| source.get(at..).unwrap_or_default();
        let tree = self.parser.parse_with_options(&mut read, None, Some(options)).ok_or(ExtractError::Cancelled)?;

        // The tag of each name node, from the earliest pattern that tags it.
        let mut best: HashMap<(usize, usize), (usize, Option<RawTag>)> = HashMap::new();
        let mut query_progress = |_: &tree_sitter::QueryCursorState| {
            if stopped() { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
        };
        let options = QueryCursorOptions::new().progress_callback(&mut query_progress);
        let mut matches = self.cursor.matches_with_options(&tags.query, tree.root_node(), source, options);
        while let Some(found) = matches.next() {
            let mut name = None;
            let mut tagged = None;
            let mut ignore = false;
            for capture in found.captures() {
                match &tags.roles[capture.index as usize] {
                    Role::Name => name = Some(capture.node),
                    Role::Ignore => {
                        ignore = true;
                        name = Some(capture.node);
                    }
                    Role::Definition(kind) => tagged = Some((capture.node, kind, true)),
                    Role::Reference(kind) => tagged = Some((capture.node, kind, false)),
                    Role::Other => {}
                }
            }
            let Some(name) = name else { continue };
            let key = (name.start_byte(), name.end_byte());
            if best.get(&key).is_some_and(|(pattern, _)| *pattern <= found.pattern_index) {
                continue;
            }
            let tag = match tagged {
                _ if ignore => None,
                Some((node, kind, is_definition)) if !name.has_error() => {
                    let range = node.start_byte().min(name.start_byte())..node.end_byte().max(name.end_byte());
                    Some(RawTag {
                        kind: kind.as_str(),
                        is_definition,
                        name: String::from_utf8_lossy(&source[name.byte_range()]).into_owned(),
                        range,
                        name_range: name.byte_range(),
                        row: name.start_position().row,
                        member: !is_definition && is_member_access(source, name.start_byte()),
                    })
                }
                _ => continue,
            };
            best.insert(key, (found.pattern_index, tag));
        }
        drop(matches);
        if stopped() {
            return Err(ExtractError::Cancelled);
        }
        let mut out: Vec<RawTag> = best.into_values().filter_map(|(_, tag)| tag).collect();
        out.sort_by_key(|tag| (tag.name_range.start, tag.name_range.end));
        Ok((out, tree.root_node().has_error()))
    }
}
