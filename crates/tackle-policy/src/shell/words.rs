//! The value of one shell word as the shell would see it after quote removal: `'r''m'`,
//! `"rm"`, `\rm` and `$'\x72m'` are all `rm`. A word whose value depends on the environment
//! (a parameter expansion, a command substitution, an unquoted glob or brace) is *dynamic*:
//! its text is kept as written, and a dynamic command name makes the command unanalyzable
//! (docs/reference/safety.md#compound-shell-commands).

use tree_sitter::Node;

/// A word's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WordValue {
    /// The value after quote removal (as written where it is dynamic).
    pub text: String,
    /// The value depends on expansions the analysis cannot know.
    pub dynamic: bool,
    /// The word was (partly) quoted or escaped (`"rm"`, `\rm`): not an alias or a keyword.
    pub quoted: bool,
}

/// The value of the word `node` in `source`.
pub fn word_value(node: Node<'_>, source: &str) -> WordValue {
    let mut value = WordValue { text: String::new(), dynamic: false, quoted: false };
    append(node, source, &mut value);
    // A brace expansion may span the parts of a concatenation (`r{m,}`).
    let raw = text(node, source);
    if raw.contains('{') && (raw.contains(',') || raw.contains("..")) {
        value.dynamic = true;
    }
    value
}

fn text<'a>(node: Node<'_>, source: &'a str) -> &'a str {
    source.get(node.byte_range()).unwrap_or("")
}

fn append(node: Node<'_>, source: &str, value: &mut WordValue) {
    let raw = text(node, source);
    match node.kind() {
        "word" | "number" => {
            // Globs, tilde, and braces that expand (`{a,b}`, `{1..3}`; `{}` stays as it is).
            if raw.contains(['*', '?', '[', '~']) || (raw.contains('{') && (raw.contains(',') || raw.contains(".."))) {
                value.dynamic = true;
            }
            if raw.contains('\\') {
                value.quoted = true;
            }
            value.text.push_str(&unescape_unquoted(raw));
        }
        "raw_string" => {
            value.quoted = true;
            value.text.push_str(raw.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')).unwrap_or(raw));
        }
        "ansi_c_string" => {
            value.quoted = true;
            let inner = raw.strip_prefix("$'").and_then(|r| r.strip_suffix('\'')).unwrap_or(raw);
            value.text.push_str(&ansi_c(inner));
        }
        "string" | "translated_string" => {
            value.quoted = true;
            let mut cursor = node.walk();
            if node.named_children(&mut cursor).any(|c| c.kind() != "string_content") {
                value.dynamic = true;
                value.text.push_str(raw);
            } else {
                let inner = raw.trim_start_matches('$');
                let inner = inner.strip_prefix('"').and_then(|r| r.strip_suffix('"')).unwrap_or(inner);
                value.text.push_str(&unescape_double_quoted(inner));
            }
        }
        "concatenation" => {
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                append(child, source, value);
            }
        }
        _ => {
            value.dynamic = true;
            value.text.push_str(raw);
        }
    }
}

/// Removes the backslashes of an unquoted word (`\r\m` → `rm`; a line continuation vanishes).
fn unescape_unquoted(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(next) => out.push(next),
            },
            _ => out.push(c),
        }
    }
    out
}

/// Inside double quotes a backslash escapes only `$`, `` ` ``, `"`, `\` and a newline.
fn unescape_double_quoted(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '"' | '\\') => {
                    out.extend(chars.next());
                }
                Some('\n') => {
                    chars.next();
                }
                _ => out.push(c),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The escapes of `$'…'` (ANSI-C quoting).
fn ansi_c(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(escape) = chars.next() else {
            out.push('\\');
            break;
        };
        let digits = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, radix: u32, max: usize| {
            let mut code = 0u32;
            let mut count = 0;
            while count < max
                && let Some(d) = chars.peek().and_then(|c| c.to_digit(radix))
            {
                code = code * radix + d;
                chars.next();
                count += 1;
            }
            (code, count)
        };
        match escape {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'e' | 'E' => out.push('\x1b'),
            'f' => out.push('\x0c'),
            'v' => out.push('\x0b'),
            'x' => {
                let (code, count) = digits(&mut chars, 16, 2);
                if count == 0 {
                    out.push_str("\\x");
                } else {
                    out.extend(char::from_u32(code));
                }
            }
            'u' | 'U' => {
                let (code, count) = digits(&mut chars, 16, if escape == 'u' { 4 } else { 8 });
                if count == 0 {
                    out.push('\\');
                    out.push(escape);
                } else {
                    out.extend(char::from_u32(code));
                }
            }
            '0'..='7' => {
                let mut code = escape.to_digit(8).unwrap_or(0);
                let (more, count) = digits(&mut chars, 8, 2);
                code = code * 8u32.pow(u32::try_from(count).unwrap_or(0)) + more;
                out.extend(char::from_u32(code));
            }
            'c' => {
                if let Some(next) = chars.next() {
                    out.extend(char::from_u32(u32::from(next) & 0x1f));
                }
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_c_escapes_decode() {
        assert_eq!(ansi_c(r"\x72\x6d"), "rm");
        assert_eq!(ansi_c(r"\162\155"), "rm");
        assert_eq!(ansi_c(r"\u0072m"), "rm");
        assert_eq!(ansi_c(r"a\nb"), "a\nb");
    }

    #[test]
    fn backslashes_are_removed_as_the_shell_removes_them() {
        assert_eq!(unescape_unquoted(r"\r\m"), "rm");
        assert_eq!(unescape_double_quoted(r#"a\"b\n"#), "a\"b\\n");
    }
}
