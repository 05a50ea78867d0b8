//! "Did you mean …?" for a file that does not exist: a name in the same directory that
//! differs only in case, or is a close misspelling (docs/reference/tools.md#read_file).

use std::path::Path;

use crate::fs::Target;
use crate::fs::beneath::{Beneath, DIR_READ, Links};

/// The smallest similarity (normalized Levenshtein of the lower-cased names) suggested.
const MIN_SIMILARITY: f64 = 0.75;

/// The path (as the model would write it) of the file in `missing`'s directory whose name
/// is closest to its name, if one is close enough. `raw` is the path as the model wrote it;
/// the directory is listed beneath `root`, so a directory swapped for a link out lists nothing.
pub fn did_you_mean(raw: &str, missing: &Path, root: &Path) -> Option<String> {
    let wanted = missing.file_name()?.to_string_lossy().to_lowercase();
    let dir = Beneath::open(root).ok()?.open_at(missing.parent()?, DIR_READ, Links::None).ok()?;
    let entries = rustix::fs::Dir::new(dir).ok()?;
    let best = entries
        .flatten()
        .filter(|entry| entry.file_type() != rustix::fs::FileType::Directory)
        .filter_map(|entry| {
            let name = String::from_utf8_lossy(entry.file_name().to_bytes()).into_owned();
            if name == "." || name == ".." {
                return None;
            }
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
pub fn missing_file_message(target: &Target) -> String {
    let raw = &target.raw;
    match did_you_mean(raw, &target.path, &target.root) {
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
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("README.md"), "").unwrap();
        std::fs::write(root.join("config.yaml"), "").unwrap();
        std::fs::create_dir(root.join("readme.mx")).unwrap();
        let at = |name: &str| root.join(name);
        assert_eq!(did_you_mean("docs/readme.md", &at("readme.md"), &root).as_deref(), Some("docs/README.md"));
        assert_eq!(did_you_mean("config.yml", &at("config.yml"), &root).as_deref(), Some("config.yaml"));
        assert_eq!(did_you_mean("main.rs", &at("main.rs"), &root), None);
        let target = |raw: &str| Target { raw: raw.to_owned(), path: at(raw), root: root.clone() };
        assert_eq!(missing_file_message(&target("main.rs")), "File does not exist: main.rs");
        assert_eq!(
            missing_file_message(&target("Config.yaml")),
            "File does not exist: Config.yaml. Did you mean config.yaml?"
        );
        // A directory that leads out of the root lists nothing.
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.key"), "").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("out")).unwrap();
        assert_eq!(did_you_mean("out/secret.kez", &at("out/secret.kez"), &root), None);
    }
}
