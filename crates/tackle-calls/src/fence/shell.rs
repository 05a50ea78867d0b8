//! Shell blocks: heredoc openers and quote state (docs/reference/formats.md#fence-scanner step 5, "Shell langs").
//!
//! A fence line inside a heredoc body or inside an open quote is content, so a script that
//! writes a markdown file (`cat > README.md << 'EOF'` … `EOF`) keeps its fences. This follows
//! gptme 0.35.1's tracker: quotes carry across lines, a backslash escapes the next character
//! outside single quotes, `$'…'` is ANSI-C quoting, `#` after whitespace starts a comment,
//! `$(( … ))` is arithmetic, and `<<<` and `<< 2` are not heredocs.

use crate::pytext;

/// Quote state carried from one line of a shell block to the next.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ShellQuotes {
    pub single: bool,
    pub double: bool,
    pub ansi_c: bool,
}

impl ShellQuotes {
    /// Whether a quote is open.
    pub fn open(&self) -> bool {
        self.single || self.double || self.ansi_c
    }
}

/// Scans one line: the heredoc word it opens (at top level), and the quote state after it.
/// When a heredoc opener is found the scan stops there and the state is unquoted.
pub(crate) fn scan_line(line: &str, quotes: ShellQuotes) -> (Option<String>, ShellQuotes) {
    let bytes = line.as_bytes();
    let n = bytes.len();
    let ShellQuotes { mut single, mut double, mut ansi_c } = quotes;
    let mut i = 0;
    while i < n {
        let c = bytes[i];
        if ansi_c {
            match c {
                b'\\' => i += 2,
                b'\'' => {
                    ansi_c = false;
                    i += 1;
                }
                _ => i += 1,
            }
            continue;
        }
        if c == b'\\' && !single {
            i += 2;
            continue;
        }
        if c == b'$' && !single && !double && bytes.get(i + 1) == Some(&b'\'') {
            ansi_c = true;
            i += 2;
            continue;
        }
        match c {
            b'\'' if !double => single = !single,
            b'"' if !single => double = !double,
            b'#' if !single && !double && (i == 0 || previous_is_space(line, i)) => {
                return (None, ShellQuotes { single, double, ansi_c });
            }
            b'$' if !single && !double && bytes.get(i + 1..i + 3) == Some(b"((") => {
                // Arithmetic: a `<<` inside is a shift. Skip to the matching `))`.
                i = match memchr::memmem::find(&bytes[i + 2..], b"))") {
                    Some(at) => i + 2 + at + 2,
                    None => n,
                };
                continue;
            }
            b'<' if !single && !double && bytes.get(i + 1) == Some(&b'<') && (i == 0 || bytes[i - 1] != b'<') => {
                if bytes.get(i + 2) == Some(&b'<') {
                    // `<<<` here-string.
                    i += 2;
                    continue;
                }
                if let Some(word) = heredoc_word(&line[i + 2..]) {
                    if is_integer(word) {
                        // `x << 2` is a shift.
                        i += 2;
                        continue;
                    }
                    return (Some(word.to_owned()), ShellQuotes::default());
                }
            }
            _ => {}
        }
        i += 1;
    }
    (None, ShellQuotes { single, double, ansi_c })
}

/// The word after `<<`, as Python's `re.match(r"-?\s*['\"\\]?([^\s'\"\\]+)", after)` finds it
/// (including the backtrack that makes `<<-'` a heredoc for the word `-`).
fn heredoc_word(after: &str) -> Option<&str> {
    let word = |rest: &str| -> Option<(usize, usize)> {
        let trimmed = rest.trim_start_matches(pytext::is_space);
        let unquoted = trimmed.strip_prefix(['\'', '"', '\\']).unwrap_or(trimmed);
        let len =
            unquoted.find(|c: char| pytext::is_space(c) || matches!(c, '\'' | '"' | '\\')).unwrap_or(unquoted.len());
        let start = rest.len() - unquoted.len();
        (len > 0).then_some((start, start + len))
    };
    if let Some(rest) = after.strip_prefix('-')
        && let Some((from, to)) = word(rest)
    {
        return Some(&rest[from..to]);
    }
    word(after).map(|(from, to)| &after[from..to])
}

/// Python's `word.lstrip("+-").isdigit()`.
fn is_integer(word: &str) -> bool {
    let digits = word.trim_start_matches(['+', '-']);
    !digits.is_empty() && digits.chars().all(char::is_numeric)
}

/// Whether the character before byte `i` is whitespace.
fn previous_is_space(line: &str, i: usize) -> bool {
    line[..i].chars().next_back().is_some_and(pytext::is_space)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(line: &str) -> Option<String> {
        scan_line(line, ShellQuotes::default()).0
    }

    #[test]
    fn recognises_heredoc_openers() {
        assert_eq!(word("cat <<EOF"), Some("EOF".into()));
        assert_eq!(word("cat <<-EOF"), Some("EOF".into()));
        assert_eq!(word("cat << 'EOF' > file.md"), Some("EOF".into()));
        assert_eq!(word("cat <<\"END-TAG\""), Some("END-TAG".into()));
        assert_eq!(word("cat <<\\EOF"), Some("EOF".into()));
        assert_eq!(word("cat <<-'"), Some("-".into()));
    }

    #[test]
    fn ignores_what_is_not_a_heredoc() {
        assert_eq!(word("cat <<< \"$x\""), None);
        assert_eq!(word("echo $((1 << 3))"), None);
        assert_eq!(word("x=$(( y << 2 ))"), None);
        assert_eq!(word("echo x << 2"), None);
        assert_eq!(word("echo \"a << b\""), None);
        assert_eq!(word("# see a << b"), None);
        assert_eq!(word("echo 'a << b'"), None);
        assert_eq!(word("echo \\<< b"), None);
    }

    #[test]
    fn quote_state_carries_across_lines() {
        let (_, q) = scan_line("s='abc", ShellQuotes::default());
        assert!(q.single);
        let (w, q) = scan_line("<< EOF", q);
        assert_eq!(w, None);
        assert!(q.single);
        let (_, q) = scan_line("'", q);
        assert!(!q.open());
        let (_, q) = scan_line("x=$'a\\'b'", ShellQuotes::default());
        assert!(!q.open());
        let (_, q) = scan_line("echo \\# \"it's\"", ShellQuotes::default());
        assert!(!q.open());
    }
}
