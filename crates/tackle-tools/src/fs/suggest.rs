//! "Did you mean …?" for a file that does not exist: a name in the same directory that
//! differs only in case, or is a close misspelling (docs/reference/tools.md#read_file).

use std::path::Path;

/// The smallest similarity (normalized Levenshtein of the lower-cased names) suggested.
const MIN_SIMILARITY: f64 = 0.75;

/// The path (as the model would write it) of the file in `missing`'s directory whose name
/// is closest to its name, if one is close enough. `raw` is the path as the model wrote it.
pub fn did_you_mean(raw: &str, missing: &Path) -> Option<String> {
    let wanted = missing.file_name()?.to_string_lossy().to_lowercase();
    let entries = std::fs::read_dir(missing.parent()?).ok()?;
    let best = entries
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|t| !t.is_dir()))
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let score = strsim::normalized_damerau_levenshtein(&name.to_lowercase(), &wanted);
            (score >= MIN_SIMILARITY).then_some((score, name))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.1.cmp(&a.1)))?;
    let name = best.1;
    Some(match raw.rfind('/') {
        Some(slash) => format!("{}{name}", &raw[..=slash]),
        None => name,
    })
}

/// `File does not exist: {raw}`, with the suggestion when there is one.
pub fn missing_file_message(raw: &str, missing: &Path) -> String {
    match did_you_mean(raw, missing) {
        Some(other) => format!("File does not exist: {raw}. Did you mean {other}?"),
        None => format!("File does not exist: {raw}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn suggests_case_and_spelling_neighbours_only() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("README.md"), "").unwrap();
        std::fs::write(dir.path().join("config.yaml"), "").unwrap();
        std::fs::create_dir(dir.path().join("readme.mx")).unwrap();
        let at = |name: &str| dir.path().join(name);
        assert_eq!(did_you_mean("docs/readme.md", &at("readme.md")).as_deref(), Some("docs/README.md"));
        assert_eq!(did_you_mean("config.yml", &at("config.yml")).as_deref(), Some("config.yaml"));
        assert_eq!(did_you_mean("main.rs", &at("main.rs")), None);
        assert_eq!(missing_file_message("main.rs", &at("main.rs")), "File does not exist: main.rs");
        assert_eq!(
            missing_file_message("Config.yaml", &at("Config.yaml")),
            "File does not exist: Config.yaml. Did you mean config.yaml?"
        );
    }
}
