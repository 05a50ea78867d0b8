//! Questions asked of a (refreshed) index: definitions by exact name (Trae's three commands),
//! a file's outline, the references to a name, fuzzy search ([`search`]) and the repository
//! map ([`map`]).
//!
//! Every query can be narrowed to a sub-folder of the root (`within`, a `/`-separated
//! relative path, empty for the whole root); file paths in the answers are relative to it.

pub mod map;
pub mod search;

use std::path::Path;

use rusqlite::{Row, params};
use serde::Serialize;

use crate::build::{self, Job, Outcome};
use crate::error::CkgError;
use crate::extract::Kind;
use crate::index::Index;
use crate::language::Language;
use crate::walk::{self, Stamp};

/// What Trae's commands look for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    /// Functions (not methods); nested ones included.
    Function,
    /// Classes, structs, enums, unions, records, traits and interfaces.
    Class,
    /// Methods.
    Method,
}

impl Category {
    /// The stored kinds in this category.
    pub fn kinds(self) -> &'static [Kind] {
        match self {
            Category::Function => &[Kind::Function],
            Category::Class => &[Kind::Class, Kind::Interface],
            Category::Method => &[Kind::Method],
        }
    }

    /// The plural noun of the messages: `functions`, `classes`, `class methods`.
    pub fn noun(self) -> &'static str {
        match self {
            Category::Function => "functions",
            Category::Class => "classes",
            Category::Method => "class methods",
        }
    }

    /// The noun for `count` of them (`1 class`, `2 classes`).
    pub fn noun_for(self, count: usize) -> &'static str {
        match (self, count) {
            (Category::Function, 1) => "function",
            (Category::Class, 1) => "class",
            (Category::Method, 1) => "class method",
            _ => self.noun(),
        }
    }
}

/// One definition, as queries return it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Definition {
    /// Relative to the queried folder.
    pub file: String,
    pub name: String,
    pub qualified: String,
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    pub start_line: u32,
    pub end_line: u32,
    pub signature: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    /// The source text, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// The file relative to the index root.
    #[serde(skip)]
    pub rel: Vec<u8>,
    #[serde(skip)]
    pub start_byte: u32,
    #[serde(skip)]
    pub end_byte: u32,
}

/// A narrowing of queries to a sub-folder of the root.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Within {
    /// `dir/` (with the slash), or empty for the whole root.
    prefix: Vec<u8>,
}

impl Within {
    /// The whole root.
    pub fn root() -> Self {
        Within::default()
    }

    /// The sub-folder `rel` (`/`-separated, relative to the root; empty for the root).
    pub fn folder(rel: &[u8]) -> Self {
        let mut prefix = rel.to_vec();
        if !prefix.is_empty() && !prefix.ends_with(b"/") {
            prefix.push(b'/');
        }
        Within { prefix }
    }

    /// A file path shown relative to the folder.
    pub fn display(&self, rel: &[u8]) -> String {
        String::from_utf8_lossy(rel.strip_prefix(self.prefix.as_slice()).unwrap_or(rel)).into_owned()
    }

    /// Whether `rel` lies in the folder.
    pub fn holds(&self, rel: &[u8]) -> bool {
        rel.starts_with(&self.prefix)
    }

    /// The SQL condition on `f.path` (parameters `?{n}` and `?{n+1}`).
    fn sql(n: usize) -> String {
        format!("(length(?{n}) = 0 OR substr(f.path, 1, length(?{n})) = ?{n})")
    }
}

/// The columns [`definition`] reads, for `symbols s JOIN files f`.
const DEFINITION_COLUMNS: &str = "f.path, s.name, s.qualified, s.kind, s.parent, s.start_line, s.end_line, s.signature, s.doc, s.start_byte, s.end_byte";

fn definition(row: &Row<'_>, within: &Within) -> rusqlite::Result<Definition> {
    let rel: Vec<u8> = row.get(0)?;
    Ok(Definition {
        file: within.display(&rel),
        name: row.get(1)?,
        qualified: row.get(2)?,
        kind: row.get(3)?,
        parent: row.get(4)?,
        start_line: row.get(5)?,
        end_line: row.get(6)?,
        signature: row.get(7)?,
        doc: row.get(8)?,
        body: None,
        rel,
        start_byte: row.get(9)?,
        end_byte: row.get(10)?,
    })
}

fn kinds_sql(kinds: &[Kind]) -> String {
    kinds.iter().map(|k| format!("'{}'", k.name())).collect::<Vec<_>>().join(", ")
}

impl Index {
    /// The definitions named exactly `name` in `category`, by file and position.
    pub fn definitions(&self, name: &str, category: Category, within: &Within) -> Result<Vec<Definition>, CkgError> {
        let sql = format!(
            "SELECT {DEFINITION_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file \
             WHERE s.name = ?1 AND s.kind IN ({}) AND {} ORDER BY f.path, s.start_byte",
            kinds_sql(category.kinds()),
            Within::sql(2)
        );
        let mut statement = self.conn().prepare_cached(&sql)?;
        let rows = statement.query_map(params![name, within.prefix], |row| definition(row, within))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Adds each definition's source text.
    pub fn add_bodies(&self, definitions: &mut [Definition]) {
        let mut cached: Option<(Vec<u8>, Option<Vec<u8>>)> = None;
        for definition in definitions {
            if cached.as_ref().is_none_or(|(rel, _)| *rel != definition.rel) {
                cached = Some((definition.rel.clone(), self.read_source(&definition.rel)));
            }
            let Some((_, Some(source))) = &cached else { continue };
            let (start, end) = (definition.start_byte as usize, definition.end_byte as usize);
            if start <= end && end <= source.len() {
                definition.body = Some(String::from_utf8_lossy(&source[start..end]).into_owned());
            }
        }
    }

    /// A class's fields and methods (signatures): its fields, the methods inside it, and the
    /// methods naming it as parent in files of the same folder (Rust `impl` blocks, Go
    /// receivers, C++ `A::f`).
    pub fn members(&self, class: &Definition) -> Result<(Vec<String>, Vec<String>), CkgError> {
        let folder = class.rel.iter().rposition(|&b| b == b'/').map_or(&[][..], |at| &class.rel[..=at]);
        let mut statement = self.conn().prepare_cached(
            "SELECT s.kind, s.signature, f.path, s.start_byte, s.end_byte, s.parent FROM symbols s JOIN files f ON f.id = s.file \
             WHERE s.kind IN ('field', 'method') AND ( \
                 (f.path = ?1 AND s.start_byte >= ?2 AND s.end_byte <= ?3) \
                 OR (s.kind = 'method' AND s.parent = ?4 AND substr(f.path, 1, length(?5)) = ?5 \
                     AND instr(substr(f.path, length(?5) + 1), '/') = 0)) \
             ORDER BY f.path = ?1 DESC, f.path, s.start_byte",
        )?;
        let rows = statement
            .query_map(params![class.rel, class.start_byte, class.end_byte, class.name, folder], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?, row.get::<_, Option<String>>(5)?))
            })?;
        let (mut fields, mut methods) = (Vec::new(), Vec::new());
        for row in rows {
            let (kind, signature, parent) = row?;
            // Only direct members: a nested class's members name that class.
            if parent.as_deref() != Some(class.name.as_str()) {
                continue;
            }
            if kind == "field" { fields.push(signature) } else { methods.push(signature) }
        }
        Ok((fields, methods))
    }

    /// Names close to `name` in `category`: other spellings of it (case), then fuzzy
    /// matches; at most `max`, best first.
    pub fn suggestions(
        &self,
        name: &str,
        category: Category,
        within: &Within,
        max: usize,
    ) -> Result<Vec<String>, CkgError> {
        let mut names: Vec<String> = Vec::new();
        let sql = format!(
            "SELECT DISTINCT s.name FROM symbols s JOIN files f ON f.id = s.file \
             WHERE s.name = ?1 COLLATE NOCASE AND s.kind IN ({}) AND {} LIMIT ?3",
            kinds_sql(category.kinds()),
            Within::sql(2)
        );
        let mut statement = self.conn().prepare_cached(&sql)?;
        for found in statement.query_map(params![name, within.prefix, max as i64], |row| row.get::<_, String>(0))? {
            let found = found?;
            if found != name && !names.contains(&found) {
                names.push(found);
            }
        }
        for found in self.fuzzy_names(name, category.kinds(), within, max)? {
            if names.len() >= max {
                break;
            }
            if found != name && !names.contains(&found) {
                names.push(found);
            }
        }
        Ok(names)
    }

    /// The definitions of the file `rel`, in source order, each with its nesting depth.
    pub fn outline(&self, rel: &[u8], within: &Within) -> Result<Vec<(usize, Definition)>, CkgError> {
        let sql = format!(
            "SELECT {DEFINITION_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file \
             WHERE f.path = ?1 ORDER BY s.start_byte, s.end_byte DESC"
        );
        let mut statement = self.conn().prepare_cached(&sql)?;
        let rows = statement.query_map(params![rel], |row| definition(row, within))?;
        Ok(nest(rows.collect::<rusqlite::Result<_>>()?))
    }

    /// The outline of the file at `path` (absolute, resolved): from the index when it holds
    /// the file, else extracted on the spot (a hidden or ignored file), under the same limits.
    pub fn outline_of(&self, path: &Path, within: &Within) -> Result<Vec<(usize, Definition)>, CkgError> {
        if let Some(rel) = walk::relative(self.root(), path)
            && self.has_file(&rel)?
        {
            return self.outline(&rel, within);
        }
        let shown = path.display().to_string();
        let language = Language::of_path(path).ok_or_else(|| CkgError::Unsupported(shown.clone()))?;
        let meta = std::fs::symlink_metadata(path)?;
        let rel = path.strip_prefix(self.root()).unwrap_or(path).as_os_str().as_encoded_bytes().to_vec();
        let job = Job { rel: rel.clone(), language, stamp: Stamp::of(&meta), old_hash: None };
        let mut outcome = None;
        build::run(self.root(), vec![job], self.limits(), &|| false, |_, result| {
            outcome = Some(result);
            Ok::<(), CkgError>(())
        })?;
        let Some(Outcome::Extracted { extraction, .. }) = outcome else {
            return Err(CkgError::Unusable(format!(
                "{shown} cannot be outlined: it is too large, binary, unreadable, or took too long to parse."
            )));
        };
        let file = within.display(&rel);
        let definitions = extraction
            .symbols
            .into_iter()
            .map(|s| Definition {
                file: file.clone(),
                kind: s.kind.name().to_owned(),
                name: s.name,
                qualified: s.qualified,
                parent: s.parent,
                start_line: s.start_line,
                end_line: s.end_line,
                signature: s.signature,
                doc: s.doc,
                body: None,
                rel: rel.clone(),
                start_byte: s.start_byte,
                end_byte: s.end_byte,
            })
            .collect();
        Ok(nest(definitions))
    }

    /// Whether the index holds the file `rel` (indexed, partial or skipped).
    pub fn has_file(&self, rel: &[u8]) -> Result<bool, CkgError> {
        let mut statement = self.conn().prepare_cached("SELECT 1 FROM files WHERE path = ?1")?;
        Ok(statement.exists(params![rel])?)
    }

    /// The references to `name`, calls first: the first `max`, and how many there are.
    pub fn references(
        &self,
        name: &str,
        within: &Within,
        max: usize,
    ) -> Result<(usize, Vec<ReferenceEntry>), CkgError> {
        let condition = Within::sql(2);
        let total: i64 = self.conn().query_row(
            &format!("SELECT COUNT(*) FROM refs r JOIN files f ON f.id = r.file WHERE r.name = ?1 AND {condition}"),
            params![name, within.prefix],
            |row| row.get(0),
        )?;
        let sql = format!(
            "SELECT f.path, r.line, r.kind, s.qualified FROM refs r JOIN files f ON f.id = r.file \
             LEFT JOIN symbols s ON s.id = r.from_symbol WHERE r.name = ?1 AND {condition} \
             ORDER BY r.kind NOT IN ('call', 'method_call'), f.path, r.line LIMIT ?3"
        );
        let mut statement = self.conn().prepare_cached(&sql)?;
        let rows = statement.query_map(params![name, within.prefix, max as i64], |row| {
            Ok(ReferenceEntry {
                file: within.display(&row.get::<_, Vec<u8>>(0)?),
                line: row.get(1)?,
                kind: row.get(2)?,
                enclosing: row.get(3)?,
            })
        })?;
        Ok((usize::try_from(total).unwrap_or(0), rows.collect::<rusqlite::Result<_>>()?))
    }
}

/// Definitions in source order (outer before inner), each with its nesting depth.
fn nest(mut definitions: Vec<Definition>) -> Vec<(usize, Definition)> {
    definitions.sort_by_key(|d| (d.start_byte, std::cmp::Reverse(d.end_byte)));
    let mut out = Vec::with_capacity(definitions.len());
    let mut open: Vec<(u32, u32)> = Vec::new();
    for definition in definitions {
        while open.last().is_some_and(|&(start, end)| !(start <= definition.start_byte && definition.end_byte <= end)) {
            open.pop();
        }
        open.push((definition.start_byte, definition.end_byte));
        out.push((open.len() - 1, definition));
    }
    out
}

/// One use of a name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReferenceEntry {
    pub file: String,
    pub line: u32,
    /// `call`, `class`, `inherits`, `implements`, `import` or `type`.
    pub kind: String,
    /// The qualified name of the definition holding the reference (none at top level).
    pub enclosing: Option<String>,
}
