//! Fuzzy search over names and qualified names, all kinds, best first.
//!
//! Candidates come from the FTS5 trigram index: any definition sharing a trigram with the
//! query (a query of one or two characters matches by substring instead). They are then
//! ranked: the exact name, the same name in another case, a qualified name ending in the
//! query (`Class.method`), a name starting with it, a name or qualified name containing it,
//! then by similarity (Jaro-Winkler) for misspellings; ties go to the shorter name.

use rusqlite::params;

use super::{DEFINITION_COLUMNS, Definition, Within, definition, kinds_sql};
use crate::error::CkgError;
use crate::extract::Kind;
use crate::index::Index;

/// Candidates taken from the trigram index before ranking.
pub const MAX_CANDIDATES: usize = 2_000;
/// The similarity below which a candidate that does not contain the query is dropped.
const MIN_SIMILARITY: f64 = 0.7;

impl Index {
    /// The definitions best matching `query` (any kind), at most `max`, and how many matched
    /// (of the first [`MAX_CANDIDATES`] the trigram index offers).
    pub fn search(&self, query: &str, within: &Within, max: usize) -> Result<(usize, Vec<Definition>), CkgError> {
        let mut scored = self.candidates(query, None, within)?;
        let total = scored.len();
        scored.truncate(max);
        Ok((total, scored.into_iter().map(|(_, definition)| definition).collect()))
    }

    /// Distinct names of `kinds` best matching `query`, at most `max`.
    pub(crate) fn fuzzy_names(
        &self,
        query: &str,
        kinds: &[Kind],
        within: &Within,
        max: usize,
    ) -> Result<Vec<String>, CkgError> {
        let mut names: Vec<String> = Vec::new();
        for (_, definition) in self.candidates(query, Some(kinds), within)? {
            if names.len() >= max {
                break;
            }
            if !names.contains(&definition.name) {
                names.push(definition.name);
            }
        }
        Ok(names)
    }

    /// Ranked candidates, best first.
    fn candidates(
        &self,
        query: &str,
        kinds: Option<&[Kind]>,
        within: &Within,
    ) -> Result<Vec<(u32, Definition)>, CkgError> {
        let query = query.trim();
        if query.is_empty() {
            return Ok(Vec::new());
        }
        let kinds = kinds.map_or(String::new(), |kinds| format!("AND s.kind IN ({})", kinds_sql(kinds)));
        let folder = Within::sql(2);
        let grams = trigrams(query);
        let rows: Vec<Definition> = if grams.is_empty() {
            let sql = format!(
                "SELECT {DEFINITION_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file \
                 WHERE instr(lower(s.qualified), lower(?1)) > 0 {kinds} AND {folder} LIMIT {MAX_CANDIDATES}"
            );
            let mut statement = self.conn().prepare_cached(&sql)?;
            let rows = statement.query_map(params![query, within.prefix], |row| definition(row, within))?;
            rows.collect::<rusqlite::Result<_>>()?
        } else {
            let sql = format!(
                "SELECT {DEFINITION_COLUMNS} FROM (SELECT rowid FROM symbols_fts WHERE symbols_fts MATCH ?1 \
                 ORDER BY rank LIMIT {MAX_CANDIDATES}) m JOIN symbols s ON s.id = m.rowid JOIN files f ON f.id = s.file \
                 WHERE 1 {kinds} AND {folder}"
            );
            let mut statement = self.conn().prepare_cached(&sql)?;
            let rows = statement.query_map(params![grams, within.prefix], |row| definition(row, within))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        let lower = query.to_lowercase();
        let mut scored: Vec<(u32, Definition)> =
            rows.into_iter().filter_map(|d| score(query, &lower, &d).map(|score| (score, d))).collect();
        scored.sort_by(|(a, x), (b, y)| {
            b.cmp(a)
                .then(x.name.len().cmp(&y.name.len()))
                .then(kind_rank(&x.kind).cmp(&kind_rank(&y.kind)))
                .then(x.file.cmp(&y.file))
                .then(x.start_line.cmp(&y.start_line))
        });
        Ok(scored)
    }
}

/// The FTS5 query matching any trigram of `query` (lower case; the index is case-blind),
/// or empty when the query is shorter than a trigram.
fn trigrams(query: &str) -> String {
    let chars: Vec<char> = query.to_lowercase().chars().collect();
    let mut grams: Vec<String> = chars.windows(3).map(|w| w.iter().collect()).collect();
    grams.sort();
    grams.dedup();
    grams.iter().map(|g| format!("\"{}\"", g.replace('"', "\"\""))).collect::<Vec<_>>().join(" OR ")
}

/// How well `definition` matches; `None` when it does not.
fn score(query: &str, lower: &str, definition: &Definition) -> Option<u32> {
    let name = definition.name.as_str();
    let name_lower = name.to_lowercase();
    let qualified_lower = definition.qualified.to_lowercase();
    let fit = |full: &str| u32::try_from(full.len().saturating_sub(query.len()).min(99)).unwrap_or(99);
    Some(if name == query {
        1_000
    } else if name_lower == lower {
        950
    } else if qualified_lower.ends_with(lower) && query.len() > name.len() {
        900
    } else if name_lower.starts_with(lower) {
        800 - fit(name)
    } else if name_lower.contains(lower) {
        700 - fit(name)
    } else if qualified_lower.contains(lower) {
        600 - fit(&definition.qualified)
    } else {
        let similarity = strsim::jaro_winkler(lower, &name_lower);
        if similarity < MIN_SIMILARITY {
            return None;
        }
        (similarity * 500.0) as u32
    })
}

/// Classes before functions before methods before the rest, for equal scores.
fn kind_rank(kind: &str) -> u8 {
    match kind {
        "class" | "interface" => 0,
        "function" => 1,
        "method" => 2,
        _ => 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trigram_queries_quote_every_gram() {
        assert_eq!(trigrams("ab"), "");
        assert_eq!(trigrams("AbcD"), "\"abc\" OR \"bcd\"");
        assert_eq!(trigrams("a\"bc"), "\"\"\"bc\" OR \"a\"\"b\"");
    }
}
