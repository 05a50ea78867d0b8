//! The repository map: the most important definitions of the repository, within a budget,
//! grouped by file (Aider's repo map is the model).
//!
//! The reference graph links the file using a name to the file defining it, the name
//! resolved as docs/ckg.md says: to the same file when it defines the name, else to the
//! files the user imports that define it, else to every file defining it. An edge weighs
//! the square root of the number of uses, times 10 for a long, specific name
//! (`parse_config`, `RepoMap`), times 0.1 for a private one (`_x`) or one defined in more
//! than five files (`new`, `__init__`), and times 0.1 for each step of guessing: a bare
//! call resolved to every definer, a member call (`x.f()`, whose `f` depends on the type of
//! `x`, which is not inferred) resolved to an imported file; a member call resolved to
//! every definer weighs 0.01 and gets no boost for a specific name (`x.is_empty()`). Files are ranked by PageRank over this graph; each
//! file then passes its rank along its edges, and a definition's importance is what reaches
//! it through its name. The most important definitions are listed until the budget is spent
//! (the rest of a heavily used file's definitions come next, by file rank), each file's in
//! source order, the files in order of their best definition.

use std::collections::{HashMap, HashSet};

use super::Within;
use crate::error::CkgError;
use crate::index::Index;

/// PageRank's damping factor.
const DAMPING: f64 = 0.85;
/// PageRank iterations (it converges well before on repository graphs).
const ITERATIONS: usize = 40;
/// A name defined in more files than this is down-weighted.
const COMMON_NAME_FILES: usize = 5;
/// The weight of a use resolved to every definer (neither the same file nor an imported one
/// defines the name: often a method of another type, `x.len()`).
const UNRESOLVED: f64 = 0.1;
/// Characters per token, for the budget.
pub const CHARS_PER_TOKEN: usize = 4;
/// The kinds a reference can resolve to (modules, fields and `impl` blocks are not called).
const TARGET_KINDS: &str = "'function', 'method', 'class', 'interface', 'type', 'constant', 'macro'";

/// A definition considered for the map.
struct Candidate {
    file: i64,
    start_byte: u32,
    end_byte: u32,
    signature: String,
    score: f64,
}

/// One edge of the graph: `from` uses `name`, defined in `to`.
struct Edge {
    from: usize,
    to: usize,
    name: String,
    weight: f64,
}

impl Index {
    /// The map of the folder `within`, at most `max_tokens` tokens (characters / 4).
    pub fn repo_map(&self, within: &Within, max_tokens: usize) -> Result<String, CkgError> {
        let files = self.map_files()?;
        let ids: Vec<i64> = files.keys().copied().collect();
        let position: HashMap<i64, usize> = ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
        let edges = self.reference_edges(&files, &position)?;
        let ranks = pagerank(ids.len(), &edges);

        // Each file passes its rank along its edges to the definitions of the names it uses.
        let mut out_weight = vec![0.0; ids.len()];
        for edge in &edges {
            out_weight[edge.from] += edge.weight;
        }
        let mut flow: HashMap<(i64, &str), f64> = HashMap::new();
        for edge in &edges {
            *flow.entry((ids[edge.to], edge.name.as_str())).or_default() +=
                ranks[edge.from] * edge.weight / out_weight[edge.from];
        }
        let file_rank: HashMap<i64, f64> = ids.iter().copied().zip(ranks.iter().copied()).collect();
        let mut candidates = self.map_candidates(&files, within, &flow, &file_rank)?;
        candidates.sort_by(|a, b| {
            b.score.total_cmp(&a.score).then(a.file.cmp(&b.file)).then(a.start_byte.cmp(&b.start_byte))
        });
        Ok(render(&candidates, &files, within, max_tokens.saturating_mul(CHARS_PER_TOKEN)))
    }

    /// Indexed files: id → path.
    fn map_files(&self) -> Result<HashMap<i64, String>, CkgError> {
        let mut statement =
            self.conn().prepare_cached("SELECT id, path FROM files WHERE status IN ('indexed', 'partial')")?;
        let rows = statement
            .query_map([], |row| Ok((row.get(0)?, String::from_utf8_lossy(&row.get::<_, Vec<u8>>(1)?).into_owned())))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The weighted edges user file → defining file, one per (user, name, definer).
    fn reference_edges(
        &self,
        files: &HashMap<i64, String>,
        position: &HashMap<i64, usize>,
    ) -> Result<Vec<Edge>, CkgError> {
        let definers = self.definers()?;
        let imports = self.imported_stems()?;
        let stems: HashMap<i64, String> = files.iter().map(|(id, path)| (*id, module_stem(path))).collect();
        let mut statement = self.conn().prepare_cached(
            "SELECT file, name, kind = 'method_call', COUNT(*) FROM refs WHERE kind != 'import' GROUP BY file, name, kind",
        )?;
        let rows = statement.query_map([], |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?, row.get::<_, bool>(2)?, row.get::<_, i64>(3)?))
        })?;
        let mut edges = Vec::new();
        for row in rows {
            let (user, name, member, count) = row?;
            let (Some(&from), Some(defined)) = (position.get(&user), definers.get(&name)) else { continue };
            let imported: Vec<i64> = match imports.get(&user) {
                Some(used) => {
                    defined.iter().copied().filter(|file| stems.get(file).is_some_and(|s| used.contains(s))).collect()
                }
                None => Vec::new(),
            };
            // A member call (`x.f()`) is a guess unless the file defines `f` itself.
            let (targets, certainty): (&[i64], f64) = if defined.contains(&user) {
                (std::slice::from_ref(&user), 1.0)
            } else if !imported.is_empty() {
                (&imported, if member { UNRESOLVED } else { 1.0 })
            } else {
                (defined, if member { UNRESOLVED * UNRESOLVED } else { UNRESOLVED })
            };
            let weight = (count as f64).sqrt() * name_weight(&name, defined.len(), !member) * certainty;
            for target in targets {
                if let Some(&to) = position.get(target) {
                    edges.push(Edge { from, to, name: name.clone(), weight });
                }
            }
        }
        Ok(edges)
    }

    /// For each name, the files defining it.
    fn definers(&self) -> Result<HashMap<String, Vec<i64>>, CkgError> {
        let mut statement = self
            .conn()
            .prepare_cached(&format!("SELECT DISTINCT name, file FROM symbols WHERE kind IN ({TARGET_KINDS})"))?;
        let rows = statement.query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?)))?;
        let mut definers: HashMap<String, Vec<i64>> = HashMap::new();
        for row in rows {
            let (name, file) = row?;
            definers.entry(name).or_default().push(file);
        }
        Ok(definers)
    }

    /// For each file, the identifier segments of the modules it imports.
    fn imported_stems(&self) -> Result<HashMap<i64, HashSet<String>>, CkgError> {
        let mut statement = self.conn().prepare_cached("SELECT file, name FROM refs WHERE kind = 'import'")?;
        let rows = statement.query_map([], |row| Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?)))?;
        let mut imports: HashMap<i64, HashSet<String>> = HashMap::new();
        for row in rows {
            let (file, module) = row?;
            let segments = module.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|s| !s.is_empty());
            imports.entry(file).or_default().extend(segments.map(str::to_owned));
        }
        Ok(imports)
    }

    /// The definitions of the folder's files, scored: what reaches them through their name,
    /// plus a thousandth of their file's rank to order the rest.
    fn map_candidates(
        &self,
        files: &HashMap<i64, String>,
        within: &Within,
        flow: &HashMap<(i64, &str), f64>,
        file_rank: &HashMap<i64, f64>,
    ) -> Result<Vec<Candidate>, CkgError> {
        let mut statement = self.conn().prepare_cached(
            "SELECT file, name, start_byte, end_byte, signature FROM symbols WHERE kind NOT IN ('field', 'constant', 'module', 'impl')",
        )?;
        let rows = statement.query_map([], |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, u32>(2)?,
                row.get::<_, u32>(3)?,
                row.get::<_, String>(4)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (file, name, start_byte, end_byte, signature) = row?;
            let (Some(path), Some(rank)) = (files.get(&file), file_rank.get(&file)) else { continue };
            if !within.holds(path.as_bytes()) {
                continue;
            }
            let score = flow.get(&(file, name.as_str())).copied().unwrap_or(0.0) + rank / 1_000.0;
            out.push(Candidate { file, start_byte, end_byte, signature, score });
        }
        Ok(out)
    }
}

/// How much a use of `name` (defined in `definers` files) counts; a long, specific name
/// counts more when `boost` (not for member calls: `x.is_empty()` is no clue).
fn name_weight(name: &str, definers: usize, boost: bool) -> f64 {
    let mut weight = 1.0;
    let specific = boost
        && name.len() >= 8
        && (name.contains('_') || (name.chars().any(char::is_uppercase) && name.chars().any(char::is_lowercase)));
    if specific {
        weight *= 10.0;
    }
    if name.starts_with('_') {
        weight *= 0.1;
    }
    if definers > COMMON_NAME_FILES {
        weight *= 0.1;
    }
    weight
}

/// The best definitions (`candidates`, best first) that fit in `budget` characters, grouped
/// by file, files in order of their best definition, definitions in source order.
fn render(candidates: &[Candidate], files: &HashMap<i64, String>, within: &Within, budget: usize) -> String {
    let mut used = 0;
    let mut order: Vec<i64> = Vec::new();
    let mut chosen: HashMap<i64, Vec<&Candidate>> = HashMap::new();
    for candidate in candidates {
        let new_file = !chosen.contains_key(&candidate.file);
        let header = if new_file { files[&candidate.file].len() + 2 } else { 0 };
        let cost = header + candidate.signature.len() + 8;
        if used + cost > budget {
            continue;
        }
        used += cost;
        if new_file {
            order.push(candidate.file);
        }
        chosen.entry(candidate.file).or_default().push(candidate);
    }
    let mut out = String::new();
    for file in order {
        let mut definitions = chosen.remove(&file).unwrap_or_default();
        definitions.sort_by_key(|d| (d.start_byte, std::cmp::Reverse(d.end_byte)));
        out.push_str(&within.display(files[&file].as_bytes()));
        out.push_str(":\n");
        let mut open: Vec<(u32, u32)> = Vec::new();
        for d in definitions {
            while open.last().is_some_and(|&(start, end)| !(start <= d.start_byte && d.end_byte <= end)) {
                open.pop();
            }
            out.push_str("│ ");
            out.push_str(&"  ".repeat(open.len()));
            out.push_str(&d.signature);
            out.push('\n');
            open.push((d.start_byte, d.end_byte));
        }
    }
    out
}

/// The stem a module is imported by: the file name without extension, or the folder's name
/// for `__init__`, `mod`, `index`, `lib` and `main` files.
fn module_stem(path: &str) -> String {
    let mut segments = path.rsplit('/');
    let file = segments.next().unwrap_or_default();
    let stem = file.split('.').next().unwrap_or_default();
    if matches!(stem, "__init__" | "mod" | "index" | "lib" | "main") {
        segments.next().unwrap_or(stem).to_owned()
    } else {
        stem.to_owned()
    }
}

/// PageRank over `n` nodes and weighted edges; a node without out-edges spreads its rank
/// evenly.
fn pagerank(n: usize, edges: &[Edge]) -> Vec<f64> {
    if n == 0 {
        return Vec::new();
    }
    let base = (1.0 - DAMPING) / n as f64;
    let mut totals = vec![0.0; n];
    for edge in edges {
        totals[edge.from] += edge.weight;
    }
    let mut rank = vec![1.0 / n as f64; n];
    for _ in 0..ITERATIONS {
        let dangling: f64 = (0..n).filter(|&i| totals[i] <= 0.0).map(|i| rank[i]).sum();
        let mut next = vec![base + DAMPING * dangling / n as f64; n];
        for edge in edges {
            next[edge.to] += DAMPING * rank[edge.from] * edge.weight / totals[edge.from];
        }
        rank = next;
    }
    rank
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edge(from: usize, to: usize) -> Edge {
        Edge { from, to, name: String::new(), weight: 1.0 }
    }

    #[test]
    fn pagerank_favours_what_is_linked_to() {
        // 0 and 1 link to 2; 2 links to nothing; 3 is alone.
        let ranks = pagerank(4, &[edge(0, 2), edge(1, 2)]);
        assert!(ranks[2] > ranks[0] && ranks[2] > ranks[3], "{ranks:?}");
        assert!((ranks.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    }

    #[test]
    fn specific_names_weigh_more_and_common_or_private_ones_less() {
        assert_eq!(name_weight("parse_config", 1, true), 10.0);
        assert_eq!(name_weight("parse_config", 1, false), 1.0);
        assert_eq!(name_weight("RepoMap0", 1, true), 10.0);
        assert_eq!(name_weight("len", 1, true), 1.0);
        assert!((name_weight("_private", 1, true) - 1.0).abs() < 1e-9, "long but private");
        assert!((name_weight("new", 9, true) - 0.1).abs() < 1e-9);
    }

    #[test]
    fn module_stems_name_packages_by_folder() {
        assert_eq!(module_stem("pip/_internal/utils/misc.py"), "misc");
        assert_eq!(module_stem("pkg/__init__.py"), "pkg");
        assert_eq!(module_stem("src/store/mod.rs"), "store");
        assert_eq!(module_stem("index.ts"), "index");
    }
}
