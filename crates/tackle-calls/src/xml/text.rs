//! XML text as the lenient scanner reads and writes it (docs/reference/formats.md#xml): `<![CDATA[ … ]]>` is
//! unwrapped, the five predefined entities and numeric character references are decoded, and
//! nothing else is touched, so `a < b && cat <file>` survives as written.

/// Decodes raw parameter or attribute text.
pub(crate) fn decode(raw: &str) -> String {
    if !raw.contains(['&', '<']) {
        return raw.to_owned();
    }
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(at) = rest.find(['&', '<']) {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        if let Some(after) = rest.strip_prefix("<![CDATA[") {
            match after.find("]]>") {
                Some(end) => {
                    out.push_str(&after[..end]);
                    rest = &after[end + 3..];
                }
                None => {
                    out.push_str(after);
                    rest = "";
                }
            }
        } else if let Some((c, len)) = entity(rest) {
            out.push(c);
            rest = &rest[len..];
        } else {
            out.push_str(&rest[..1]);
            rest = &rest[1..];
        }
    }
    out.push_str(rest);
    out
}

/// The character an entity reference at the start of `text` stands for, and its length.
fn entity(text: &str) -> Option<(char, usize)> {
    let semi = text.bytes().take(12).position(|b| b == b';')?;
    let name = &text[1..semi];
    let c = match name {
        "lt" => '<',
        "gt" => '>',
        "amp" => '&',
        "quot" => '"',
        "apos" => '\'',
        _ => {
            let number = name.strip_prefix('#')?;
            let code = match number.strip_prefix(['x', 'X']) {
                Some(hex) if !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
                    u32::from_str_radix(hex, 16).ok()?
                }
                None if !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()) => number.parse().ok()?,
                _ => return None,
            };
            char::from_u32(code)?
        }
    };
    Some((c, semi + 1))
}

/// Whether decoding would change `value` if it were written raw (it holds something that
/// reads as markup: an entity reference or a CDATA opener).
fn decodes_differently(value: &str) -> bool {
    value.contains("<![CDATA[") || value.match_indices('&').any(|(at, _)| entity(&value[at..]).is_some())
}

/// Whether `value` must go in CDATA to come back unchanged from between `<tag>` and `</tag>`,
/// where any of `ends` (the closing tag first) would end the text.
pub(crate) fn needs_cdata(value: &str, ends: &[&[u8]]) -> bool {
    ends.iter().any(|end| memchr::memmem::find(value.as_bytes(), end).is_some())
        || decodes_differently(value)
        || value.contains('\r')
}

/// `value` wrapped in CDATA (a `]]>` inside is split across two sections).
pub(crate) fn cdata(value: &str) -> String {
    format!("<![CDATA[{}]]>", value.replace("]]>", "]]]]><![CDATA[>"))
}

/// `value` escaped for a double-quoted attribute.
pub(crate) fn escape_attr(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c => out.push(c),
        }
    }
    out
}

/// The attributes of a start tag, from the text after the tag name up to (not including) the
/// closing `>` or `/>`. Lenient: values may be double-quoted, single-quoted or bare; a name
/// without a value gets the empty string. Values are decoded.
pub(crate) fn attributes(text: &str) -> Vec<(String, String)> {
    let mut attrs = Vec::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '/');
        if rest.is_empty() {
            return attrs;
        }
        let name_len = rest.find(|c: char| c.is_whitespace() || c == '=' || c == '/').unwrap_or(rest.len());
        let name = &rest[..name_len];
        rest = rest[name_len..].trim_start();
        let Some(after_eq) = rest.strip_prefix('=') else {
            if !name.is_empty() {
                attrs.push((name.to_owned(), String::new()));
            }
            if name_len == 0 {
                rest = &rest[rest.chars().next().map_or(0, char::len_utf8)..];
            }
            continue;
        };
        rest = after_eq.trim_start();
        let value = match rest.chars().next() {
            Some(q @ ('"' | '\'')) => {
                let body = &rest[1..];
                let end = body.find(q).unwrap_or(body.len());
                rest = body.get(end + 1..).unwrap_or("");
                &body[..end]
            }
            _ => {
                let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                let value = &rest[..end];
                rest = &rest[end..];
                value
            }
        };
        if !name.is_empty() {
            attrs.push((name.to_owned(), decode(value)));
        }
    }
}

/// Strips the newlines a string parameter's raw text is written with (docs/reference/formats.md#xml typed arguments):
/// one leading newline, and one trailing newline only when no other newline is left.
pub(crate) fn trim_newlines(raw: &str) -> &str {
    let text = raw.strip_prefix("\r\n").or_else(|| raw.strip_prefix('\n')).unwrap_or(raw);
    match text.strip_suffix('\n') {
        Some(inner) if !inner.contains('\n') => inner.strip_suffix('\r').unwrap_or(inner),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_entities_and_cdata_only() {
        assert_eq!(decode("a < b && cat <file>"), "a < b && cat <file>");
        assert_eq!(decode("&lt;&gt;&amp;&quot;&apos;&#65;&#x42;&nbsp;&#xZZ;"), "<>&\"'AB&nbsp;&#xZZ;");
        assert_eq!(decode("x<![CDATA[a &lt; </parameter>]]>y"), "xa &lt; </parameter>y");
        assert_eq!(decode("&#1114112;&#55296;"), "&#1114112;&#55296;");
    }

    #[test]
    fn trims_newlines_as_the_spec_says() {
        assert_eq!(trim_newlines("\nfoo.txt\n"), "foo.txt");
        assert_eq!(trim_newlines("\nline1\nline2\n"), "line1\nline2\n");
        assert_eq!(trim_newlines("foo"), "foo");
        assert_eq!(trim_newlines("\r\nfoo\r\n"), "foo");
    }

    #[test]
    fn reads_attributes_leniently() {
        assert_eq!(
            attributes(r#" name="bash" id='c1' flag path=a.txt x="&amp;""#),
            vec![
                ("name".into(), "bash".into()),
                ("id".into(), "c1".into()),
                ("flag".into(), String::new()),
                ("path".into(), "a.txt".into()),
                ("x".into(), "&".into())
            ]
        );
        assert_eq!(attributes(" /"), vec![]);
    }

    #[test]
    fn cdata_round_trips() {
        assert_eq!(decode(&cdata("a]]>b")), "a]]>b");
        assert!(needs_cdata("&lt;", &[b"</parameter>"]));
        assert!(!needs_cdata("a && b < c", &[b"</parameter>"]));
    }
}
