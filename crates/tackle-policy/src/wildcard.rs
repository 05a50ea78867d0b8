//! The one `*` wildcard of Tackle's settings: `Bash(git * main)` permission rules and the
//! variable-name patterns of secrets stripping and `[env] passthrough` (`AWS_*`). A `*`
//! matches any run of characters (spaces included); everything else is literal, and the
//! pattern must match the whole text.

/// Whether `text` matches `pattern` as a whole, where `*` matches any run of characters.
pub fn matches(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else { return false };
    let mut parts: Vec<&str> = parts.collect();
    let Some(last) = parts.pop() else { return rest.is_empty() };
    for part in parts.into_iter().filter(|part| !part.is_empty()) {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn a_star_matches_any_run_and_the_rest_is_literal() {
        assert!(matches("a*b*c", "aXbYc") && matches("a*", "a") && matches("*", ""));
        assert!(matches("a**c", "ac") && matches("*b*", "abc") && !matches("a*b*c", "aXcYb"));
        assert!(!matches("ab*ba", "aba") && !matches("a", "ab"));
        assert!(matches("git * main", "git push origin main") && !matches("git * main", "git push origin main2"));
    }

    #[test]
    fn names_match_whole() {
        assert!(matches("TACKLE_*_KEY", "TACKLE_OPENAI_KEY"));
        assert!(!matches("TACKLE_*_KEY", "TACKLE_KEY"));
        assert!(!matches("TACKLE_*_KEY", "TACKLE_X_KEYS"));
        assert!(matches("AWS_*", "AWS_SECRET"));
        assert!(matches("EXACT", "EXACT") && !matches("EXACT", "EXACTLY"));
    }
}
