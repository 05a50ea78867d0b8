//! The languages the index knows: which files are which language, and each language's
//! tree-sitter grammar and tags query.
//!
//! A language's query is the grammar crate's own `TAGS_QUERY` (what GitHub's code navigation
//! runs) with a small query of ours in `queries/{language}.scm` placed **before** it: where
//! both name the same node, the earlier pattern's tag is kept (the tags convention), so ours can
//! correct a stock one (a C prototype is not a definition) as well as add kinds the stock
//! query lacks (Java constructors, Rust `impl` blocks). Queries are compiled once per
//! process, on first use of the language.

use std::path::Path;
use std::sync::OnceLock;

use crate::extract::TagsQuery;

/// A language's tags query does not compile (a bug, caught by the tests).
#[derive(Debug, thiserror::Error)]
#[error("the {language} tags query does not compile: {source}")]
pub struct QueryError {
    /// The language's name.
    pub language: &'static str,
    /// Where tree-sitter stopped.
    #[source]
    pub source: tree_sitter::QueryError,
}

/// A language with a grammar and a tags query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Language {
    Python,
    Rust,
    JavaScript,
    TypeScript,
    Tsx,
    Go,
    Java,
    C,
    Cpp,
}

/// Every language, in the order of docs/ckg.md's table.
pub const LANGUAGES: [Language; 9] = [
    Language::Python,
    Language::Rust,
    Language::JavaScript,
    Language::TypeScript,
    Language::Tsx,
    Language::Go,
    Language::Java,
    Language::C,
    Language::Cpp,
];

impl Language {
    /// The language of a file, from its extension; `None` for every other file.
    pub fn of_path(path: &Path) -> Option<Language> {
        let extension = path.extension()?.to_str()?;
        Some(match extension {
            "py" | "pyi" => Language::Python,
            "rs" => Language::Rust,
            "js" | "jsx" | "mjs" | "cjs" => Language::JavaScript,
            "ts" | "mts" | "cts" => Language::TypeScript,
            "tsx" => Language::Tsx,
            "go" => Language::Go,
            "java" => Language::Java,
            "c" | "h" => Language::C,
            "cc" | "cpp" | "cxx" | "c++" | "hpp" | "hh" | "hxx" => Language::Cpp,
            _ => return None,
        })
    }

    /// The language of a file's content, given the language of its extension: a `.h` header
    /// that reads as C++ is C++ (C++ projects keep their headers in `.h` files too);
    /// every other file keeps the language of its extension.
    pub fn of_source(self, path: &[u8], source: &[u8]) -> Language {
        if self == Language::C && path.ends_with(b".h") && reads_as_cpp(source) { Language::Cpp } else { self }
    }

    /// The name stored in the index and shown to people.
    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::Rust => "rust",
            Language::JavaScript => "javascript",
            Language::TypeScript => "typescript",
            Language::Tsx => "tsx",
            Language::Go => "go",
            Language::Java => "java",
            Language::C => "c",
            Language::Cpp => "cpp",
        }
    }

    /// The language stored under `name`.
    pub fn from_name(name: &str) -> Option<Language> {
        LANGUAGES.into_iter().find(|language| language.name() == name)
    }

    /// The separator of qualified names (`a.b.C.m`, `crate::m::T::f`).
    pub fn separator(self) -> &'static str {
        match self {
            Language::Rust | Language::Cpp => "::",
            _ => ".",
        }
    }

    /// The compiled tags query (compiled on first use).
    pub fn tags(self) -> Result<&'static TagsQuery, &'static QueryError> {
        static QUERIES: [OnceLock<Result<TagsQuery, QueryError>>; 9] = [const { OnceLock::new() }; 9];
        let slot = &QUERIES[self as usize];
        slot.get_or_init(|| self.compile()).as_ref()
    }

    fn compile(self) -> Result<TagsQuery, QueryError> {
        let (grammar, query) = self.grammar_and_query();
        TagsQuery::new(grammar, &query).map_err(|source| QueryError { language: self.name(), source })
    }

    /// The grammar and the whole tags query: ours first, then the grammar's own.
    fn grammar_and_query(self) -> (tree_sitter::Language, String) {
        const ECMASCRIPT: &str = include_str!("../queries/ecmascript.scm");
        match self {
            Language::Python => (
                tree_sitter_python::LANGUAGE.into(),
                [include_str!("../queries/python.scm"), tree_sitter_python::TAGS_QUERY].join("\n"),
            ),
            Language::Rust => (
                tree_sitter_rust::LANGUAGE.into(),
                [include_str!("../queries/rust.scm"), tree_sitter_rust::TAGS_QUERY].join("\n"),
            ),
            Language::JavaScript => (
                tree_sitter_javascript::LANGUAGE.into(),
                [ECMASCRIPT, include_str!("../queries/javascript.scm"), tree_sitter_javascript::TAGS_QUERY].join("\n"),
            ),
            Language::TypeScript | Language::Tsx => {
                let grammar = if self == Language::Tsx {
                    tree_sitter_typescript::LANGUAGE_TSX
                } else {
                    tree_sitter_typescript::LANGUAGE_TYPESCRIPT
                };
                let grammar = grammar.into();
                let query = [
                    ECMASCRIPT,
                    include_str!("../queries/typescript.scm"),
                    tree_sitter_javascript::TAGS_QUERY,
                    tree_sitter_typescript::TAGS_QUERY,
                ]
                .join("\n");
                (grammar, query)
            }
            Language::Go => (
                tree_sitter_go::LANGUAGE.into(),
                [include_str!("../queries/go.scm"), tree_sitter_go::TAGS_QUERY].join("\n"),
            ),
            Language::Java => (
                tree_sitter_java::LANGUAGE.into(),
                [include_str!("../queries/java.scm"), tree_sitter_java::TAGS_QUERY].join("\n"),
            ),
            Language::C => (
                tree_sitter_c::LANGUAGE.into(),
                [include_str!("../queries/c.scm"), tree_sitter_c::TAGS_QUERY].join("\n"),
            ),
            Language::Cpp => (
                tree_sitter_cpp::LANGUAGE.into(),
                [include_str!("../queries/cpp.scm"), tree_sitter_cpp::TAGS_QUERY].join("\n"),
            ),
        }
    }
}

/// Whether a header's text holds a line only C++ has (the signs GitHub's linguist reads):
/// a line opening with `class NAME`, `namespace NAME`, `using namespace`, `template <`, an
/// access label (`public:`), an `#include <…>` of a standard header without `.h`
/// (`<vector>`), or `std::` anywhere. `extern "C"` is no sign: C headers have it for C++
/// readers.
fn reads_as_cpp(source: &[u8]) -> bool {
    source.split(|&b| b == b'\n').any(|line| {
        let line = line.trim_ascii();
        let word_after = |prefix: &[u8]| {
            line.strip_prefix(prefix)
                .and_then(|rest| rest.first())
                .is_some_and(|&b| b.is_ascii_alphabetic() || b == b'_')
        };
        word_after(b"class ")
            || word_after(b"namespace ")
            || line.starts_with(b"using namespace ")
            || line.starts_with(b"template<")
            || line.starts_with(b"template <")
            || matches!(line, b"public:" | b"private:" | b"protected:")
            || line
                .strip_prefix(b"#include <")
                .and_then(|rest| rest.split(|&b| b == b'>').next())
                .is_some_and(|header| !header.is_empty() && !header.contains(&b'.') && !header.contains(&b'/'))
            || memchr::memmem::find(line, b"std::").is_some()
    })
}

/// A short fingerprint of the extractor: the crate version and every language's query.
pub fn fingerprint() -> &'static str {
    static FINGERPRINT: OnceLock<String> = OnceLock::new();
    FINGERPRINT.get_or_init(|| {
        let mut hasher = blake3::Hasher::new();
        hasher.update(env!("CARGO_PKG_VERSION").as_bytes());
        for language in LANGUAGES {
            hasher.update(language.grammar_and_query().1.as_bytes());
        }
        hasher.finalize().to_hex()[..16].to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_grammar_loads_and_every_query_compiles() {
        for language in LANGUAGES {
            let config = language.tags().unwrap_or_else(|err| panic!("{err}"));
            let mut parser = tree_sitter::Parser::new();
            parser.set_language(&config.language).unwrap();
            assert!(parser.parse("", None).is_some(), "{}", language.name());
        }
    }

    #[test]
    fn a_header_that_reads_as_cpp_is_cpp() {
        let cpp: [&[u8]; 8] = [
            b"#pragma once\nclass Widget {\n};\n",
            b"namespace geo {\nint f();\n}\n",
            b"  template <typename T>\nT max(T a, T b);\n",
            b"struct S {\n public:\n  int x;\n};\n",
            b"#include <vector>\n",
            b"int f(std::string s);\n",
            b"using namespace std;\n",
            b"template<class T> struct Box;\n",
        ];
        for source in cpp {
            assert_eq!(Language::C.of_source(b"a/b.h", source), Language::Cpp, "{}", String::from_utf8_lossy(source));
        }
        let c: [&[u8]; 6] = [
            b"#include <stdio.h>\n#include <sys/types.h>\nstruct point { int x; };\n",
            b"#ifdef __cplusplus\nextern \"C\" {\n#endif\nint f(void);\n",
            b"/*\n * class Foo is described below\n */\n// namespace of the library\n",
            b"int classify(int class_id);\n",
            b"",
            b"\xff\xfe binary-ish \x00 bytes\n",
        ];
        for source in c {
            assert_eq!(Language::C.of_source(b"a/b.h", source), Language::C, "{}", String::from_utf8_lossy(source));
        }
        // Only headers are read: a `.c` file is C whatever it holds, and other languages keep theirs.
        assert_eq!(Language::C.of_source(b"a/b.c", b"class Widget {};\n"), Language::C);
        assert_eq!(Language::Python.of_source(b"a.h.py", b"class Widget:\n"), Language::Python);
    }

    #[test]
    fn extensions_map_to_languages() {
        let cases = [
            ("a.py", Some(Language::Python)),
            ("a.pyi", Some(Language::Python)),
            ("a.mjs", Some(Language::JavaScript)),
            ("a.cts", Some(Language::TypeScript)),
            ("a.tsx", Some(Language::Tsx)),
            ("a.h", Some(Language::C)),
            ("a.c++", Some(Language::Cpp)),
            ("a.hh", Some(Language::Cpp)),
            ("Makefile", None),
            ("a.PY", None),
        ];
        for (path, language) in cases {
            assert_eq!(Language::of_path(Path::new(path)), language, "{path}");
        }
        for language in LANGUAGES {
            assert_eq!(Language::from_name(language.name()), Some(language));
        }
    }
}
