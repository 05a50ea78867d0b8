//! Unified diffs of a file's text before and after an edit, shown to the person asked to
//! approve the edit (docs/reference/formats.md#block-tools: "The permission preview is a unified diff")
//! and after the edit (`executor/edits.rs`).

use similar::TextDiff;

/// The longest a diff may take to compute.
const DIFF_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(500);

/// The most diff lines a preview shows; the rest is counted, not shown.
pub const MAX_PREVIEW_LINES: usize = 400;

/// The unified diff (3 lines of context) that turns `old` into `new` for the file the model
/// called `shown`; `old` is `None` for a file the edit creates.
pub fn unified_diff(shown: &str, old: Option<&str>, new: &str) -> String {
    file_diff(old.map(|old| (shown, old)), Some((shown, new)))
}

/// The unified diff from the file `from` to the file `to`, each its name and text, `None`
/// for a file that does not exist (`/dev/null`): a creation, a removal, or a move from one
/// name to another. Cut to [`MAX_PREVIEW_LINES`] with a count of the rest.
pub fn file_diff(from: Option<(&str, &str)>, to: Option<(&str, &str)>) -> String {
    let label = |file: Option<(&str, &str)>, side: &str| match file {
        Some((name, _)) => format!("{side}/{name}"),
        None => "/dev/null".to_owned(),
    };
    let (old, new) = (from.map_or("", |f| f.1), to.map_or("", |t| t.1));
    // A bound on the time the diff takes (two large, very different files): past it the
    // diff is coarser, never wrong.
    let diff = TextDiff::configure().timeout(DIFF_TIMEOUT).diff_lines(old, new);
    let text = diff.unified_diff().context_radius(3).header(&label(from, "a"), &label(to, "b")).to_string();
    if text.is_empty() {
        if let (Some((old_name, _)), Some((new_name, _))) = (from, to)
            && old_name != new_name
        {
            // A move that keeps the text.
            return format!("--- a/{old_name}\n+++ b/{new_name}\n");
        }
        let shown = to.or(from).map_or("", |f| f.0);
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
    fn a_removal_goes_to_dev_null_and_a_move_names_both_files() {
        assert_eq!(file_diff(Some(("a.txt", "x\n")), None), "--- a/a.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n");
        assert_eq!(
            file_diff(Some(("old.txt", "x\ny\n")), Some(("new.txt", "x\nz\n"))),
            "--- a/old.txt\n+++ b/new.txt\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n"
        );
    }

    #[test]
    fn a_huge_diff_is_cut_with_a_count() {
        let new: String = (0..1000).map(|i| format!("{i}\n")).collect();
        let diff = unified_diff("big", None, &new);
        assert_eq!(diff.lines().count(), MAX_PREVIEW_LINES + 1);
        assert!(diff.ends_with("[... 603 more diff lines]\n"), "{}", &diff[diff.len() - 60..]);
    }
}
