//! Unified diffs as a person reads them: in approval questions and after each edit
//! (docs/reference/safety.md#approvers), clipped to a screenful with a count of what was left
//! out, coloured on a terminal that shows colour (`+` green, `-` red, `@@` cyan).

/// The lines of a diff shown before it is clipped: about a screenful.
pub const SCREENFUL: usize = 40;

const GREEN: &str = "\x1b[32m";
const RED: &str = "\x1b[31m";
const CYAN: &str = "\x1b[36m";
const BOLD: &str = "\x1b[1m";
const RESET: &str = "\x1b[0m";

/// The count a clipped diff ends with (`[... 12 more diff lines]`), as the tools write it too.
fn clipped_count(line: &str) -> Option<usize> {
    line.strip_prefix("[... ")?.strip_suffix(" more diff lines]")?.parse().ok()
}

/// `diff` (unified), at most `max_lines` of it, each line after `indent`, in colour when
/// `color`; what was left out is counted on a last line. Control characters of the diff's
/// text (an escape sequence in a file) are shown as `^[`-style text, never sent to the terminal.
pub fn render(diff: &str, max_lines: usize, color: bool, indent: &str) -> String {
    let mut lines: Vec<&str> = diff.lines().collect();
    let mut left_out = match lines.last().and_then(|line| clipped_count(line)) {
        Some(count) => {
            lines.pop();
            count
        }
        None => 0,
    };
    if lines.len() > max_lines {
        left_out += lines.len() - max_lines;
        lines.truncate(max_lines);
    }
    let mut out = String::new();
    for line in lines {
        let line = visible(line);
        let paint = match line.as_bytes().first() {
            _ if !color => None,
            _ if line.starts_with("+++") || line.starts_with("---") => Some(BOLD),
            Some(b'+') => Some(GREEN),
            Some(b'-') => Some(RED),
            Some(b'@') => Some(CYAN),
            _ => None,
        };
        match paint {
            Some(code) => out.push_str(&format!("{indent}{code}{line}{RESET}\n")),
            None => out.push_str(&format!("{indent}{line}\n")),
        }
    }
    if left_out > 0 {
        out.push_str(&format!("{indent}[... {left_out} more diff lines]\n"));
    }
    out
}

/// `line` with its control characters (tabs aside) shown as `^X`, so a file's text cannot
/// move the cursor or recolour the terminal.
pub fn visible(line: &str) -> String {
    line.chars()
        .map(|c| match c {
            '\t' => "\t".to_owned(),
            c if c.is_control() => match u8::try_from(u32::from(c)) {
                Ok(byte) if byte < 0x20 => format!("^{}", char::from(byte + 0x40)),
                _ => format!("\\u{{{:x}}}", u32::from(c)),
            },
            c => c.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const DIFF: &str = "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n keep\n-old\n+new\n";

    #[test]
    fn plain_lines_are_indented_and_coloured_ones_reset() {
        assert_eq!(
            render(DIFF, 40, false, "  "),
            "  --- a/x.py\n  +++ b/x.py\n  @@ -1,2 +1,2 @@\n   keep\n  -old\n  +new\n"
        );
        let coloured = render(DIFF, 40, true, "");
        assert!(coloured.contains("\x1b[31m-old\x1b[0m\n\x1b[32m+new\x1b[0m\n"), "{coloured:?}");
        assert!(coloured.contains("\x1b[1m+++ b/x.py\x1b[0m"), "{coloured:?}");
        assert!(coloured.contains("\x1b[36m@@ -1,2 +1,2 @@\x1b[0m"), "{coloured:?}");
        assert!(coloured.contains("\n keep\n"), "{coloured:?}");
    }

    #[test]
    fn a_long_diff_is_clipped_with_a_count_that_adds_the_tools_own() {
        let long: String = (0..50).map(|i| format!("+{i}\n")).collect();
        let shown = render(&long, 10, false, "");
        assert_eq!(shown.lines().count(), 11);
        assert!(shown.ends_with("+9\n[... 40 more diff lines]\n"), "{shown}");
        let cut = format!("{long}[... 7 more diff lines]\n");
        assert!(render(&cut, 10, false, "").ends_with("[... 47 more diff lines]\n"));
        assert_eq!(render(&cut, 100, false, "").lines().last(), Some("[... 7 more diff lines]"));
    }

    #[test]
    fn control_characters_of_the_file_never_reach_the_terminal() {
        let hostile = "@@ -1 +1 @@\n+\x1b[2J\x1b]0;owned\x07text\r\n";
        let shown = render(hostile, 40, true, "");
        assert!(!shown.contains("\x1b[2J") && !shown.contains('\x07') && !shown.contains('\r'), "{shown:?}");
        assert!(shown.contains("+^[[2J^[]0;owned^Gtext"), "{shown:?}");
    }
}
