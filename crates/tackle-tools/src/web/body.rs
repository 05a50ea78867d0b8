//! The body of a fetched page: read up to a size cap (the rest is never read, so a page of
//! any size costs at most the cap in memory), refused when it is not text, and decoded from
//! the charset it declares (its `Content-Type`, else a `<meta charset>` of an HTML page, else
//! UTF-8; a byte-order mark wins).

use encoding_rs::{Encoding, UTF_8};

/// What a response's `Content-Type` says it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// HTML (or XHTML): turned into Markdown.
    Html,
    /// Any other text (plain, Markdown, JSON, XML, CSS, JavaScript, CSV…): shown as it is.
    Text,
    /// Images, PDFs, archives, executables, audio, video: not shown.
    Binary,
    /// No `Content-Type`: judged by the bytes.
    Unknown,
}

/// The media type (lower case, without parameters) and its kind.
pub fn kind(content_type: Option<&str>) -> (String, Kind) {
    let Some(value) = content_type else { return (String::new(), Kind::Unknown) };
    let media = value.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    let kind = match media.as_str() {
        "text/html" | "application/xhtml+xml" => Kind::Html,
        "" => Kind::Unknown,
        m if m.starts_with("text/") => Kind::Text,
        m if m.ends_with("+json") || m.ends_with("+xml") => Kind::Text,
        "application/json"
        | "application/xml"
        | "application/javascript"
        | "application/x-javascript"
        | "application/ecmascript"
        | "application/x-sh"
        | "application/toml"
        | "application/yaml"
        | "application/x-yaml"
        | "application/sql"
        | "application/graphql"
        | "application/x-ndjson" => Kind::Text,
        _ => Kind::Binary,
    };
    (media, kind)
}

/// Whether `bytes` (the start of a body without a type) look like binary data.
pub fn looks_binary(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(4096)];
    head.contains(&0) && !head.starts_with(&[0xFF, 0xFE]) && !head.starts_with(&[0xFE, 0xFF])
}

/// The charset label of a `Content-Type` value, if it names one.
pub fn charset_param(content_type: Option<&str>) -> Option<String> {
    content_type?.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        name.trim().eq_ignore_ascii_case("charset").then(|| value.trim().trim_matches(['"', '\'']).to_owned())
    })
}

/// The charset an HTML page declares in its first 1024 bytes (`<meta charset="...">` or
/// `<meta http-equiv="Content-Type" content="...; charset=...">`).
fn meta_charset(bytes: &[u8]) -> Option<String> {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(1024)]).to_ascii_lowercase();
    let at = head.find("charset=")? + "charset=".len();
    let value: String = head[at..]
        .trim_start_matches(['"', '\''])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
        .collect();
    (!value.is_empty()).then_some(value)
}

/// `bytes` as text, decoded by `charset` (a label), else by the page's own declaration when
/// `html`, else as UTF-8; malformed sequences become U+FFFD. Returns the text and the name of
/// the encoding used.
pub fn decode(bytes: &[u8], charset: Option<&str>, html: bool) -> (String, &'static str) {
    let declared = charset.map(str::to_owned).or_else(|| if html { meta_charset(bytes) } else { None });
    let encoding = declared.and_then(|label| Encoding::for_label(label.as_bytes())).unwrap_or(UTF_8);
    let (text, used, _) = encoding.decode(bytes);
    (text.into_owned(), used.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_are_sorted_into_kinds() {
        assert_eq!(kind(Some("text/html; charset=utf-8")), ("text/html".to_owned(), Kind::Html));
        assert_eq!(kind(Some("TEXT/PLAIN")).1, Kind::Text);
        assert_eq!(kind(Some("application/ld+json")).1, Kind::Text);
        assert_eq!(kind(Some("application/json")).1, Kind::Text);
        for binary in ["image/png", "application/pdf", "application/octet-stream", "application/zip", "video/mp4"] {
            assert_eq!(kind(Some(binary)).1, Kind::Binary, "{binary}");
        }
        assert_eq!(kind(None).1, Kind::Unknown);
        assert!(looks_binary(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"));
        assert!(!looks_binary(b"plain text"));
    }

    #[test]
    fn the_declared_charset_decodes_the_page() {
        assert_eq!(charset_param(Some("text/html; Charset=\"ISO-8859-1\"")).as_deref(), Some("ISO-8859-1"));
        assert_eq!(charset_param(Some("text/html")), None);
        // Latin-1 (windows-1252, as browsers read it) from the header.
        assert_eq!(decode(b"caf\xe9", Some("iso-8859-1"), false), ("café".to_owned(), "windows-1252"));
        // From the page's meta when the header says nothing.
        let page = b"<html><head><meta charset=\"shift_jis\"></head><body>\x93\xfa\x96\x7b</body></html>";
        let (text, used) = decode(page, None, true);
        assert!(text.contains("日本"), "{text}");
        assert_eq!(used, "Shift_JIS");
        // A BOM wins; an unknown label falls back to UTF-8; bad bytes become U+FFFD.
        assert_eq!(decode(b"\xef\xbb\xbfhi", Some("latin1"), false).0, "hi");
        assert_eq!(decode("é".as_bytes(), Some("no-such-charset"), false).0, "é");
        assert_eq!(decode(b"a\xffb", None, false).0, "a\u{fffd}b");
    }
}
