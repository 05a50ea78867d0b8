//! Unified diffs of a file's text before and after an edit, shown to the person asked to
//! approve the edit (docs/reference/formats.md#block-tools: "The permission preview is a unified diff")
//! and after the edit (`executor/edits.rs`).

use similar::TextDiff;

/// The most diff lines a preview shows; the rest is counted, not shown.
pub const MAX_PREVIEW_LINES: usize = 400;

/// The unified diff (3 lines of context) that turns `old` into `new` for the file the model
/// called `shown`; `old` is `None` for a file the edit creates.
pub fn unified_diff(shown: &str, old: Option<&str>, new: &str) -> String {
    let from = if old.is_some() { format!("a/{shown}") } else { "/dev/null".to_owned() };
    let diff = TextDiff::from_lines(old.unwrap_or(""), new);
    let text = diff.unified_diff().context_radius(3).header(&from, &format!("b/{shown}")).to_string();
    if text.is_empty() {
        return format!("(no change to {shown})");
    }
    let total = text.lines().count();
    if total <= MAX_PREVIEW_LINES {
        return text;
    }
    let mut kept: String = text.lines().take(MAX_PREVIEW_LINES).flat_map(|line| [line, "\n"]).collect();
    kept.push_str(&format!("[... {} more diff lines]\n", total - MAX_PREVIEW_LINES));
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_change_shows_as_hunks_with_context() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n";
        let new = "1\n2\n3\n4\nfive\n6\n7\n8\n";
        assert_eq!(
            unified_diff("src/n.txt", Some(old), new),
            "--- a/src/n.txt\n+++ b/src/n.txt\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"
        );
    }

    #[test]
    fn a_new_file_comes_from_dev_null_and_no_change_says_so() {
        assert_eq!(unified_diff("a.txt", None, "x\n"), "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+x\n");
        assert_eq!(unified_diff("a.txt", Some("x\n"), "x\n"), "(no change to a.txt)");
    }

    #[test]
    fn a_huge_diff_is_cut_with_a_count() {
        let new: String = (0..1000).map(|i| format!("{i}\n")).collect();
        let diff = unified_diff("big", None, &new);
        assert_eq!(diff.lines().count(), MAX_PREVIEW_LINES + 1);
        assert!(diff.ends_with("[... 603 more diff lines]\n"), "{}", &diff[diff.len() - 60..]);
    }
}
