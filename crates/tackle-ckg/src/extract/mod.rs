//! Extraction: one file's source in, its definitions and references out.
//!
//! The language's tags query ([`crate::language`]) runs over the file ([`tags`]) and yields
//! tags: a kind (`definition.function`, `reference.call`, …), the name and the byte range of
//! the tagged node. Everything else is derived from those ranges,
//! without walking the syntax tree ([`shape`]): the enclosing definition (a `def` inside a
//! `class` is a method, a `fn` inside an `impl` a method of the implementing type), the
//! qualified name, and the definition enclosing each reference. Signatures and doc comments
//! come from the source text around the tag ([`text`]).
//!
//! A file that does not parse still yields what its partial tree holds (`partial` is set).
//! Extraction can be stopped through a flag (the per-file time limit of [`crate::build`]).

mod shape;
mod tags;
mod text;

pub use tags::{Tagger, TagsQuery};

use std::sync::atomic::AtomicUsize;

use serde::Serialize;

use crate::language::{Language, QueryError};

/// What a definition is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A free function (nested ones name their enclosing function as parent).
    Function,
    /// A function of a class, struct, trait, interface or `impl`.
    Method,
    /// A class, struct, enum, union, record, or Rust trait.
    Class,
    /// An interface (TypeScript, Java, Go) or a Rust trait.
    Interface,
    /// A Rust `impl` block, named after the implementing type.
    Impl,
    /// A module or namespace.
    Module,
    /// A macro.
    Macro,
    /// A constant or static (and Python's module-level assignments).
    Constant,
    /// A type alias or another named type.
    Type,
    /// A field of a class or struct.
    Field,
}

impl Kind {
    /// The name stored in the index.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Function => "function",
            Kind::Method => "method",
            Kind::Class => "class",
            Kind::Interface => "interface",
            Kind::Impl => "impl",
            Kind::Module => "module",
            Kind::Macro => "macro",
            Kind::Constant => "constant",
            Kind::Type => "type",
            Kind::Field => "field",
        }
    }

    /// The kind stored as `name`.
    pub fn from_name(name: &str) -> Option<Kind> {
        Some(match name {
            "function" => Kind::Function,
            "method" => Kind::Method,
            "class" => Kind::Class,
            "interface" => Kind::Interface,
            "impl" => Kind::Impl,
            "module" => Kind::Module,
            "macro" => Kind::Macro,
            "constant" => Kind::Constant,
            "type" => Kind::Type,
            "field" => Kind::Field,
            _ => return None,
        })
    }

    /// Classes and interfaces: what `search_class` finds.
    pub fn is_class_like(self) -> bool {
        matches!(self, Kind::Class | Kind::Interface)
    }

    /// Whether definitions inside this one take it as their parent.
    fn is_container(self) -> bool {
        matches!(self, Kind::Function | Kind::Method | Kind::Class | Kind::Interface | Kind::Impl | Kind::Module)
    }
}

/// What a reference does with the name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RefKind {
    /// A call of a function by its bare name (`f()`).
    Call,
    /// A call through a member access (`x.f()`, `pkg.f()`): whose `f` is a guess.
    MethodCall,
    /// A class used as a constructor (`new X()`).
    Class,
    /// A base class.
    Inherits,
    /// An implemented trait or interface.
    Implements,
    /// An imported module.
    Import,
    /// A type named in an annotation.
    Type,
}

impl RefKind {
    /// The name stored in the index.
    pub fn name(self) -> &'static str {
        match self {
            RefKind::Call => "call",
            RefKind::MethodCall => "method_call",
            RefKind::Class => "class",
            RefKind::Inherits => "inherits",
            RefKind::Implements => "implements",
            RefKind::Import => "import",
            RefKind::Type => "type",
        }
    }

    /// The kind stored as `name`.
    pub fn from_name(name: &str) -> Option<RefKind> {
        Some(match name {
            "call" => RefKind::Call,
            "method_call" => RefKind::MethodCall,
            "class" => RefKind::Class,
            "inherits" => RefKind::Inherits,
            "implements" => RefKind::Implements,
            "import" => RefKind::Import,
            "type" => RefKind::Type,
            _ => return None,
        })
    }
}

/// One definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Symbol {
    /// The bare identifier.
    pub name: String,
    /// The name qualified by module, enclosing classes and functions, as far as the file tells.
    pub qualified: String,
    pub kind: Kind,
    /// The enclosing class (for a method) or definition (for a nested one).
    pub parent: Option<String>,
    /// 1-based, inclusive.
    pub start_line: u32,
    pub end_line: u32,
    /// The line of the name (where ctags places the definition).
    pub name_line: u32,
    pub start_byte: u32,
    pub end_byte: u32,
    /// The head of the definition, up to its body, on one line.
    pub signature: String,
    pub doc: Option<String>,
}

/// One use of a name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reference {
    /// The innermost definition holding the reference (an index into the symbols), if any.
    pub from: Option<usize>,
    pub name: String,
    pub kind: RefKind,
    /// 1-based.
    pub line: u32,
}

/// What one file holds.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Extraction {
    /// In source order.
    pub symbols: Vec<Symbol>,
    pub references: Vec<Reference>,
    /// The file has syntax errors; what its partial tree held was extracted.
    pub partial: bool,
}

/// Why a file yielded nothing.
#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    /// The time limit fired.
    #[error("extraction was stopped (time limit)")]
    Cancelled,
    /// The language's query does not compile (a bug, caught by the tests).
    #[error(transparent)]
    Query(&'static QueryError),
    /// The parser refuses the language's grammar (a version mismatch, caught by the tests).
    #[error(transparent)]
    Grammar(tree_sitter::LanguageError),
}

/// One tag of a tags query, with its text.
#[derive(Debug, Clone)]
struct RawTag {
    kind: &'static str,
    is_definition: bool,
    range: std::ops::Range<usize>,
    name_range: std::ops::Range<usize>,
    name: String,
    row: usize,
    /// A reference through a member access.
    member: bool,
}

/// Extracts the definitions and references of `source`, a file of `language` at `path`
/// (relative to the index root, `/`-separated; it qualifies Python and Rust names).
pub fn extract(
    tagger: &mut Tagger,
    language: Language,
    path: &str,
    source: &[u8],
    cancel: Option<&AtomicUsize>,
) -> Result<Extraction, ExtractError> {
    let query = language.tags().map_err(ExtractError::Query)?;
    let (tags, partial) = tagger.run(query, source, cancel)?;
    let mut extraction = shape::build(language, path, source, tags);
    extraction.partial = partial;
    Ok(extraction)
}
