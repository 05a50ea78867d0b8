//! What `save`, `append` and `patch` share: the regular-file check, the placeholder refusal,
//! and their block mappings.

use tackle_core::ToolError;
use tackle_core::spec::BlockMapping;

use crate::fs::write_file::load_failure;
use crate::fs::{Existing, LoadError, Target, read_existing};

/// The block mapping `TAG PATH` + body → `body_param` (docs/reference/formats.md#langtag-dispatch).
pub(crate) fn mapping(tag: &str, body_param: &str) -> BlockMapping {
    BlockMapping {
        langtags: vec![tag.to_owned()],
        body_param: body_param.to_owned(),
        words_param: Some("path".to_owned()),
        strip_prompt: false,
    }
}

/// The file at `target` if it exists; anything but a regular file (a FIFO, a device, a
/// directory) is refused: `{path} is not a regular file`.
pub(crate) fn load_regular(target: &Target) -> Result<Option<Existing>, ToolError> {
    match read_existing(target) {
        Ok(existing) => Ok(Some(existing)),
        Err(LoadError::NotFound) => Ok(None),
        Err(LoadError::Directory) => Err(ToolError::InvalidInput(format!("{} is not a regular file", target.raw))),
        Err(err) => Err(load_failure(&target.raw, err)),
    }
}

/// The first line that stands for omitted code (`^\s*(#|//|""")\s*\.{3}.*$`: `# ...`,
/// `// ... rest unchanged`), as its 1-based number and its text.
pub(crate) fn placeholder(content: &str) -> Option<(usize, &str)> {
    content.split('\n').enumerate().find_map(|(i, line)| {
        let rest = line.trim_start();
        let rest =
            rest.strip_prefix("\"\"\"").or_else(|| rest.strip_prefix("//")).or_else(|| rest.strip_prefix('#'))?;
        rest.trim_start().starts_with("...").then(|| (i + 1, line.trim()))
    })
}

/// The refusal for content with a placeholder line.
pub(crate) fn refuse_placeholder(shown: &str, content: &str) -> Result<(), ToolError> {
    match placeholder(content) {
        Some((n, line)) => Err(ToolError::InvalidInput(format!(
            "Refusing to write {shown}: line {n} looks like a placeholder (\"{line}\"). Write the full content, or use patch."
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn finds_placeholder_lines() {
        assert_eq!(placeholder("a\n    # ...\nb"), Some((2, "# ...")));
        assert_eq!(placeholder("// ... rest unchanged"), Some((1, "// ... rest unchanged")));
        assert_eq!(placeholder("x\n\"\"\"...\"\"\""), Some((2, "\"\"\"...\"\"\"")));
        assert_eq!(placeholder("#...more"), Some((1, "#...more")));
        assert_eq!(placeholder("x = 1  # ...\nprint('...')\n# .. two dots\n# text ..."), None);
    }
}
