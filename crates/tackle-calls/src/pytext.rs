//! The few character classes of CPython that the fence rules are written in.
//!
//! gptme's scanner (docs/reference/formats.md#fence-scanner) uses Python's `str.strip()`, `str.isspace()` and the
//! `\s` / `\S` classes of `re`. They differ from Rust's `char::is_whitespace` only in four
//! ASCII control characters (`\x1c`–`\x1f`, which Python counts as whitespace), so a
//! transcript full of them still splits into the same blocks as gptme's.

/// Python's `str.isspace()` for one character (also `re`'s `\s` on `str` patterns).
pub(crate) fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// Python's `str.strip()`.
pub(crate) fn strip(text: &str) -> &str {
    text.trim_matches(is_space)
}

/// Whether `text` is empty after `str.strip()` (a blank line).
pub(crate) fn is_blank(text: &str) -> bool {
    // Fast path: ASCII text is blank when every byte is ASCII whitespace or \x1c-\x1f.
    if text.is_ascii() {
        return text.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r' | 0x1c..=0x1f));
    }
    text.chars().all(is_space)
}

/// The first character of `text`, if any.
pub(crate) fn first_char(text: &str) -> Option<char> {
    text.chars().next()
}

/// The number of leading backticks of `text`.
pub(crate) fn backtick_run(text: &str) -> usize {
    text.bytes().take_while(|b| *b == b'`').count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_whitespace_includes_the_information_separators() {
        assert!(is_space('\x1c'));
        assert!(is_space('\u{a0}'));
        assert!(is_space('\u{3000}'));
        assert!(!is_space('\u{200b}'));
        assert_eq!(strip("\x1f ab \u{2003}"), "ab");
        assert!(is_blank(" \t\x0b"));
        assert!(is_blank("\u{a0}\u{2028}"));
        assert!(!is_blank(" x "));
    }
}
