//! YAML frontmatter of Markdown definition files (agent definitions in `.claude/agents/`,
//! skills' `SKILL.md`): a `---` line, YAML, a `---` line, then the body. One splitter and one
//! parser for every file kind, so they all accept and refuse the same input.
//!
//! The YAML part is bounded before it reaches the parser (docs/architecture.md, "Bounded
//! input"): at most [`MAX_FRONTMATTER_BYTES`], and `yaml_serde` (the YAML organisation's
//! maintained continuation of the deprecated `serde_yaml`) refuses nesting deeper than its
//! own recursion limit.

use serde::de::DeserializeOwned;

/// The longest frontmatter accepted (a definition's header, not a document).
pub const MAX_FRONTMATTER_BYTES: usize = 64 * 1024;

/// Why a file's frontmatter cannot be read; the message says what to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrontmatterError {
    /// The file does not start with a `---` line.
    #[error("the file does not start with a '---' line opening its YAML frontmatter")]
    Missing,
    /// No closing `---` line.
    #[error("the YAML frontmatter has no closing '---' line")]
    Unclosed,
    /// The frontmatter is longer than the limit.
    #[error("the YAML frontmatter is longer than {MAX_FRONTMATTER_BYTES} bytes")]
    TooLong,
    /// The YAML is malformed or does not have the expected fields.
    #[error("bad YAML frontmatter: {0}")]
    Yaml(String),
}

/// Splits `text` into its frontmatter (the YAML between the `---` lines) and its body.
pub fn split(text: &str) -> Result<(&str, &str), FrontmatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text.strip_prefix("---\r\n").or_else(|| text.strip_prefix("---\n")).ok_or(FrontmatterError::Missing)?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            let yaml = &rest[..offset];
            if yaml.len() > MAX_FRONTMATTER_BYTES {
                return Err(FrontmatterError::TooLong);
            }
            return Ok((yaml, &rest[offset + line.len()..]));
        }
        offset += line.len();
        if offset > MAX_FRONTMATTER_BYTES {
            return Err(FrontmatterError::TooLong);
        }
    }
    Err(FrontmatterError::Unclosed)
}

/// Parses the frontmatter of `text` as `T`, and returns it with the body.
pub fn parse<T: DeserializeOwned>(text: &str) -> Result<(T, &str), FrontmatterError> {
    let (yaml, body) = split(text)?;
    Ok((from_yaml(yaml)?, body))
}

/// Parses frontmatter `split` returned as `T`.
pub fn from_yaml<T: DeserializeOwned>(yaml: &str) -> Result<T, FrontmatterError> {
    yaml_serde::from_str(yaml).map_err(|err| FrontmatterError::Yaml(err.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Head {
        name: String,
        tools: Option<Vec<String>>,
    }

    #[test]
    fn splits_and_parses() {
        let (head, body) = parse::<Head>("---\nname: a\ntools: [x, y]\n---\nBody\nmore\n").unwrap();
        assert_eq!(head, Head { name: "a".into(), tools: Some(vec!["x".into(), "y".into()]) });
        assert_eq!(body, "Body\nmore\n");
        let (yaml, body) = split("\u{feff}---\r\nname: b\r\n---\r\n").unwrap();
        assert_eq!((yaml, body), ("name: b\r\n", ""));
    }

    #[test]
    fn bad_files_are_named() {
        assert_eq!(split("name: a\n").unwrap_err(), FrontmatterError::Missing);
        assert_eq!(split("---\nname: a\n").unwrap_err(), FrontmatterError::Unclosed);
        let long = format!("---\n{}\n---\n", "a: b\n".repeat(20_000));
        assert_eq!(split(&long).unwrap_err(), FrontmatterError::TooLong);
        let err = parse::<Head>("---\nname: [unclosed\n---\n").unwrap_err();
        assert!(matches!(err, FrontmatterError::Yaml(_)), "{err}");
        let deep = format!("---\nname: {}{}\n---\n", "[".repeat(5000), "]".repeat(5000));
        assert!(matches!(parse::<Head>(&deep).unwrap_err(), FrontmatterError::Yaml(_)));
    }
}
