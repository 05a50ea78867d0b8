//! The text of each answer (docs/ckg.md, "Output"), shared by the `ckg` tool and
//! `tackle ckg`. Trae's three commands keep Trae's shapes. Every answer is capped at
//! [`MAX_OUTPUT_CHARS`] at an entry boundary, with a line saying how many entries were left
//! out.

use crate::query::{Category, Definition, ReferenceEntry};

/// The longest answer, in characters.
pub const MAX_OUTPUT_CHARS: usize = 16_000;

/// `header` followed by as many `entries` as fit, then the clipping line when some (or
/// `more` not even listed) are left out. When not even the first entry fits (a long body),
/// its head is shown, cut at a line.
pub fn clip(header: &str, entries: &[String], more: usize) -> String {
    let mut out = header.to_owned();
    let mut length = out.chars().count();
    for (shown, entry) in entries.iter().enumerate() {
        let entry_length = entry.chars().count();
        if length + entry_length > MAX_OUTPUT_CHARS {
            if shown == 0 {
                out.push_str(head_of(entry, MAX_OUTPUT_CHARS.saturating_sub(length)));
                let rest = entries.len() - 1 + more;
                out.push_str(&format!("\n<response clipped> the rest of this entry and {rest} more entries not shown"));
            } else {
                out.push_str(&clipped(entries.len() - shown + more));
            }
            return out;
        }
        out.push_str(entry);
        length += entry_length;
    }
    if more > 0 {
        out.push_str(&clipped(more));
    }
    out
}

/// The longest head of `text` of at most `room` characters that ends at a line end.
fn head_of(text: &str, room: usize) -> &str {
    let end = text.char_indices().nth(room).map_or(text.len(), |(at, _)| at);
    let head = &text[..end];
    head.rfind('\n').map_or(head, |at| &head[..at])
}

fn clipped(left_out: usize) -> String {
    format!("\n<response clipped> {left_out} more entries not shown")
}

/// A class's fields and methods, as `members` found them.
pub type Members = (Vec<String>, Vec<String>);

/// Trae's `search_function`, `search_class` and `search_class_method` answers.
pub fn definitions(
    category: Category,
    id: &str,
    found: &[Definition],
    members: &[Members],
    suggestions: &[String],
) -> String {
    let noun = category.noun();
    if found.is_empty() {
        let mut out = format!("No {noun} named {id} found.");
        if !suggestions.is_empty() {
            out.push_str(&format!(" Did you mean: {}?", suggestions.join(", ")));
        }
        return out;
    }
    let entries: Vec<String> = found
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let mut entry = format!("\n{}. {}:{}-{}", i + 1, d.file, d.start_line, d.end_line);
            if category == Category::Method
                && let Some(parent) = &d.parent
            {
                entry.push_str(&format!(" within class {parent}"));
            }
            if let Some((fields, methods)) = members.get(i) {
                for (title, list) in [("Fields", fields), ("Methods", methods)] {
                    if !list.is_empty() {
                        entry.push_str(&format!("\n{title}:"));
                        for item in list {
                            entry.push_str(&format!("\n- {item}"));
                        }
                    }
                }
            }
            if let Some(body) = &d.body {
                entry.push('\n');
                entry.push_str(body);
            }
            entry
        })
        .collect();
    clip(&format!("Found {} {} named {id}:", found.len(), category.noun_for(found.len())), &entries, 0)
}

/// A file's outline: its path, then one line per definition, indented by nesting.
pub fn outline(file: &str, definitions: &[(usize, Definition)]) -> String {
    let entries: Vec<String> = definitions
        .iter()
        .map(|(depth, d)| {
            format!("\n{}{}-{} {} {}", "  ".repeat(*depth), d.start_line, d.end_line, d.kind, d.signature)
        })
        .collect();
    clip(file, &entries, 0)
}

/// The references to a name, calls first.
pub fn references(id: &str, total: usize, found: &[ReferenceEntry]) -> String {
    if total == 0 {
        return format!("No references to {id} found.");
    }
    let entries: Vec<String> = found
        .iter()
        .map(|r| format!("\n{}:{} in {} ({})", r.file, r.line, r.enclosing.as_deref().unwrap_or("<top level>"), r.kind))
        .collect();
    let noun = if total == 1 { "reference" } else { "references" };
    clip(&format!("Found {total} {noun} to {id}:"), &entries, total.saturating_sub(found.len()))
}

/// Fuzzy search results, best first.
pub fn search(query: &str, found: &[Definition], more: usize) -> String {
    if found.is_empty() {
        return format!("No definitions match {query}.");
    }
    let entries: Vec<String> = found
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let line = format!("{} {} {}:{}-{}", d.kind, d.qualified, d.file, d.start_line, d.end_line);
            if i == 0 { line } else { format!("\n{line}") }
        })
        .collect();
    clip("", &entries, more)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clipping_happens_at_an_entry_boundary_and_counts_what_is_left() {
        let entries: Vec<String> = (0..100).map(|i| format!("\n{i}:{}", "x".repeat(400))).collect();
        let out = clip("head", &entries, 5);
        assert!(out.chars().count() <= MAX_OUTPUT_CHARS + 60, "{}", out.len());
        let shown = out.matches(":x").count();
        assert!(out.ends_with(&format!("\n<response clipped> {} more entries not shown", 100 - shown + 5)), "{out}");
        assert_eq!(clip("head", &entries[..2], 0).matches('\n').count(), 2);
    }

    #[test]
    fn an_entry_too_long_alone_shows_its_head_cut_at_a_line() {
        let body: String = (0..2_000).map(|i| format!("line {i} of a very long body\n")).collect();
        let entries = vec![format!("\n1. a.py:1-2000\n{body}"), "\n2. b.py:1-2".to_owned()];
        let out = clip("Found 2 functions named f:", &entries, 0);
        assert!(out.chars().count() <= MAX_OUTPUT_CHARS + 80, "{}", out.len());
        assert!(out.starts_with("Found 2 functions named f:\n1. a.py:1-2000\nline 0 of a very long body\n"));
        let (head, tail) = out.split_once("\n<response clipped>").unwrap();
        assert!(head.ends_with(" of a very long body"), "cut at a line end: {:?}", &head[head.len() - 40..]);
        assert_eq!(tail, " the rest of this entry and 1 more entries not shown");
    }

    #[test]
    fn nothing_found_suggests_close_names() {
        let out = definitions(Category::Function, "Parse", &[], &[], &["parse".into(), "parser".into()]);
        assert_eq!(out, "No functions named Parse found. Did you mean: parse, parser?");
        assert_eq!(definitions(Category::Method, "x", &[], &[], &[]), "No class methods named x found.");
    }
}
