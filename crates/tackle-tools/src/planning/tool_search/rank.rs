//! Ranking deferred tools for a query (docs/planning.md#ranking): BM25F over three fields of
//! each tool — its name (weight 3), its search hint (2) and its description (1), the weights
//! of the design's plain weighted match. BM25 ranked the test set below better than the plain
//! weighted match (words every description uses, such as "file", no longer drown the telling
//! ones), so it is the one used; the test keeps the comparison honest.
//!
//! The index is built once per catalog (an inverted index: each word's tools with their
//! term weights), so a query visits only the tools that share a word with it.

use std::collections::HashMap;

use tackle_core::ToolSpec;

/// Field weights: name, search hint, description.
const WEIGHTS: [f64; 3] = [3.0, 2.0, 1.0];
/// BM25's term-frequency saturation.
const K1: f64 = 1.2;
/// BM25's length normalisation.
const B: f64 = 0.75;

/// The words of a text: lower-cased runs of letters and digits (so `mcp__git__log_search`
/// gives `mcp`, `git`, `log`, `search`), a plural `s` dropped from words longer than three.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(|word| {
            let word = word.to_lowercase();
            match word.strip_suffix('s') {
                Some(stem) if stem.len() >= 3 && !stem.ends_with('s') => stem.to_owned(),
                _ => word,
            }
        })
        .collect()
}

/// The search index of one catalog of deferred tools: for each word, the tools that have
/// it with their BM25F term weight (the fields' weighted, length-normalised counts), so a
/// query only visits the tools that share one of its words.
#[derive(Debug)]
pub struct SearchIndex {
    names: Vec<String>,
    /// Word → (tool position, weighted term frequency), in tool order.
    postings: HashMap<String, Vec<(usize, f64)>>,
}

impl SearchIndex {
    /// Indexes `specs` (name, search hint, description).
    pub fn new(specs: &[ToolSpec]) -> SearchIndex {
        let fields: Vec<[Vec<String>; 3]> = specs
            .iter()
            .map(|spec| {
                [words(&spec.name), words(spec.search_hint.as_deref().unwrap_or_default()), words(&spec.description)]
            })
            .collect();
        let n = specs.len().max(1) as f64;
        let mut average = [0.0; 3];
        for tool in &fields {
            for (field, list) in tool.iter().enumerate() {
                average[field] += list.len() as f64 / n;
            }
        }
        let average = average.map(|a: f64| a.max(1.0));
        let mut postings: HashMap<String, Vec<(usize, f64)>> = HashMap::new();
        for (position, tool) in fields.iter().enumerate() {
            let mut weights: HashMap<&str, f64> = HashMap::new();
            for (field, list) in tool.iter().enumerate() {
                let norm = 1.0 - B + B * list.len() as f64 / average[field];
                for word in list {
                    *weights.entry(word.as_str()).or_default() += WEIGHTS[field] / norm;
                }
            }
            for (word, tf) in weights {
                postings.entry(word.to_owned()).or_default().push((position, tf));
            }
        }
        SearchIndex { names: specs.iter().map(|spec| spec.name.clone()).collect(), postings }
    }

    /// The names of the best `limit` tools for `query`, best first; tools that match no
    /// word of the query are left out. Ties keep the catalog's order.
    pub fn search(&self, query: &str, limit: usize) -> Vec<&str> {
        let mut terms = words(query);
        terms.sort_unstable();
        terms.dedup();
        let n = self.names.len() as f64;
        let mut scores: HashMap<usize, f64> = HashMap::new();
        for term in &terms {
            let Some(list) = self.postings.get(term) else {
                continue;
            };
            let df = list.len() as f64;
            let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
            for (position, tf) in list {
                *scores.entry(*position).or_default() += idf * tf / (tf + K1);
            }
        }
        let mut scored: Vec<(f64, usize)> = scores.into_iter().map(|(position, score)| (score, position)).collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.into_iter().take(limit).map(|(_, position)| self.names[position].as_str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The design's plain weighted match, kept to compare against: for each query word, 3
    /// when the name has it, 2 the hint, 1 the description.
    fn weighted_match(specs: &[ToolSpec], query: &str) -> Vec<String> {
        let terms = words(query);
        let mut scored: Vec<(u32, usize)> = specs
            .iter()
            .enumerate()
            .map(|(position, spec)| {
                let fields = [
                    words(&spec.name),
                    words(spec.search_hint.as_deref().unwrap_or_default()),
                    words(&spec.description),
                ];
                let score = terms
                    .iter()
                    .map(|term| {
                        [3, 2, 1]
                            .iter()
                            .zip(&fields)
                            .filter(|(_, words)| words.contains(term))
                            .map(|(w, _)| *w)
                            .sum::<u32>()
                    })
                    .sum();
                (score, position)
            })
            .filter(|(score, _)| *score > 0)
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.into_iter().map(|(_, position)| specs[position].name.clone()).collect()
    }

    fn tool(name: &str, hint: &str, description: &str) -> ToolSpec {
        ToolSpec::new(name, description).search_hint(hint)
    }

    /// Tools as MCP servers name and describe them, and queries a model writes, each with
    /// the tool it wants.
    fn test_set() -> (Vec<ToolSpec>, Vec<(&'static str, &'static str)>) {
        let tools = vec![
            tool(
                "mcp__git__log",
                "git commit history",
                "Show the commit log of the repository, newest first, with the file names changed.",
            ),
            tool(
                "mcp__git__diff",
                "git diff of changes",
                "Show the changes of the working tree or between commits, file by file.",
            ),
            tool(
                "mcp__git__blame",
                "who changed each line",
                "Show, for each line of a file, the commit and author that last changed it.",
            ),
            tool(
                "mcp__git__branch",
                "list and create branches",
                "List the branches of the repository, or create a branch.",
            ),
            tool("mcp__fs__read", "read a file", "Read a file of the file system and return the file's text."),
            tool(
                "mcp__fs__write",
                "write a file",
                "Write text to a file of the file system, creating the file if needed.",
            ),
            tool(
                "mcp__fs__search",
                "find files by name",
                "Search the file system for files whose name matches a pattern.",
            ),
            tool(
                "mcp__github__create_issue",
                "open a GitHub issue",
                "Create an issue in a GitHub repository with a title and a body.",
            ),
            tool(
                "mcp__github__list_pull_requests",
                "list pull requests",
                "List the pull requests of a GitHub repository, open or closed.",
            ),
            tool(
                "mcp__github__merge_pull_request",
                "merge a pull request",
                "Merge a pull request of a GitHub repository.",
            ),
            tool(
                "mcp__slack__post_message",
                "send a Slack message",
                "Post a message to a Slack channel; the message text may use markdown.",
            ),
            tool(
                "mcp__slack__list_channels",
                "list Slack channels",
                "List the channels of the Slack workspace with their topics.",
            ),
            tool(
                "mcp__db__query",
                "run a SQL query",
                "Run a read-only SQL query on the database and return the rows as a table.",
            ),
            tool(
                "mcp__db__schema",
                "describe tables",
                "Describe the tables of the database: columns, types and indexes, from the file of the schema.",
            ),
            tool(
                "mcp__browser__navigate",
                "open a web page",
                "Open a URL in the browser and wait for the page to load.",
            ),
            tool(
                "mcp__browser__screenshot",
                "capture the page",
                "Take a screenshot of the current browser page and return it as an image file.",
            ),
            tool(
                "mcp__weather__forecast",
                "weather forecast",
                "Get the weather forecast for a city for the next days.",
            ),
            tool(
                "mcp__calendar__create_event",
                "schedule a meeting",
                "Create an event in the calendar with a time, a title and the people invited.",
            ),
        ];
        let queries = vec![
            ("commit history", "mcp__git__log"),
            ("who changed this line", "mcp__git__blame"),
            ("read file", "mcp__fs__read"),
            ("find a file by its name", "mcp__fs__search"),
            ("open issue github", "mcp__github__create_issue"),
            ("merge pull request", "mcp__github__merge_pull_request"),
            ("send slack message", "mcp__slack__post_message"),
            ("sql database query", "mcp__db__query"),
            ("table columns of the database", "mcp__db__schema"),
            ("screenshot of the page", "mcp__browser__screenshot"),
            ("weather", "mcp__weather__forecast"),
            ("schedule meeting", "mcp__calendar__create_event"),
            ("branches", "mcp__git__branch"),
            ("changes between commits", "mcp__git__diff"),
            ("write text to a file", "mcp__fs__write"),
            ("list the files changed in a commit", "mcp__git__log"),
            ("image of the page", "mcp__browser__screenshot"),
            ("post to a channel", "mcp__slack__post_message"),
            ("open a page in the browser", "mcp__browser__navigate"),
            ("rows of a table", "mcp__db__query"),
            ("get the text of a file", "mcp__fs__read"),
            ("the author of a line of the file", "mcp__git__blame"),
            ("invite people to a meeting", "mcp__calendar__create_event"),
            ("show the difference of the file", "mcp__git__diff"),
            ("create a branch", "mcp__git__branch"),
        ];
        (tools, queries)
    }

    #[test]
    fn bm25_ranks_the_test_set_at_least_as_well_as_the_weighted_match() {
        let (tools, queries) = test_set();
        let index = SearchIndex::new(&tools);
        // Mean reciprocal rank of the wanted tool (1 when it always comes first).
        let mut bm25_rr = 0.0;
        let mut weighted_rr = 0.0;
        let rank =
            |list: &[&str], wanted: &str| list.iter().position(|n| *n == wanted).map_or(0.0, |p| 1.0 / (p + 1) as f64);
        for (query, wanted) in &queries {
            let bm25 = index.search(query, tools.len());
            let weighted = weighted_match(&tools, query);
            let weighted: Vec<&str> = weighted.iter().map(String::as_str).collect();
            println!("{query:40} bm25 {:.2} weighted {:.2}", rank(&bm25, wanted), rank(&weighted, wanted));
            bm25_rr += rank(&bm25, wanted);
            weighted_rr += rank(&weighted, wanted);
        }
        let count = queries.len() as f64;
        println!("MRR bm25 {:.3} weighted {:.3}", bm25_rr / count, weighted_rr / count);
        assert!(bm25_rr > weighted_rr, "bm25 {bm25_rr}, weighted {weighted_rr}");
    }

    #[test]
    fn words_split_names_and_fold_case_and_plurals() {
        assert_eq!(words("mcp__git__Log_Search-files"), ["mcp", "git", "log", "search", "file"]);
        assert_eq!(words("class gas is"), ["class", "gas", "is"]);
        assert!(SearchIndex::new(&[]).search("anything", 5).is_empty());
    }
}
