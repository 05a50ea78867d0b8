//! "Did you mean …?" for a file that does not exist: a name in the same directory that
//! differs only in case, or is a close misspelling (docs/reference/tools.md#read_file).
//! A name a `Read(...)` deny rule hides is never offered: the suggestion would reveal it.

use std::path::Path;

use tackle_core::ToolContext;
use tackle_policy::permission::rules::ReadRules;

use crate::fs::Target;
use crate::fs::beneath::{Beneath, DIR_READ, Links};

/// The smallest similarity (normalized Levenshtein of the lower-cased names) suggested.
const MIN_SIMILARITY: f64 = 0.75;

/// The path (as the model would write it) of the file in `missing`'s directory whose name
/// is closest to its name, if one is close enough. `raw` is the path as the model wrote it;
/// the directory is listed beneath `root`, so a directory swapped for a link out lists nothing.
/// Names `hidden` hides are skipped.
pub fn did_you_mean(raw: &str, missing: &Path, root: &Path, hidden: &ReadRules) -> Option<String> {
    let wanted = missing.file_name()?.to_string_lossy().to_lowercase();
    let parent = missing.parent()?;
    let dir = Beneath::open(root).ok()?.open_at(parent, DIR_READ, Links::None).ok()?;
    let entries = rustix::fs::Dir::new(dir).ok()?;
    let best = entries
        .flatten()
        .filter(|entry| entry.file_type() != rustix::fs::FileType::Directory)
        .filter_map(|entry| {
            let name = String::from_utf8_lossy(entry.file_name().to_bytes()).into_owned();
            if name == "." || name == ".." || hidden.hides(&parent.join(&name)) {
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

/// `File does not exist: {raw}`, with the suggestion when there is one (never a name the
/// session's `Read(...)` deny rules hide).
pub fn missing_file_message(ctx: &ToolContext, target: &Target) -> String {
    let raw = &target.raw;
    let hidden = ctx.state().get::<ReadRules>();
    match did_you_mean(raw, &target.path, &target.root, &hidden) {
        Some(other) => format!("File does not exist: {raw}. Did you mean {other}?"),
        None => format!("File does not exist: {raw}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use tackle_policy::permission::rule::RuleBase;
    use tackle_policy::permission::rules::{RuleBook, RuleKind};

    #[test]
    fn suggests_case_and_spelling_neighbours_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("README.md"), "").unwrap();
        std::fs::write(root.join("config.yaml"), "").unwrap();
        std::fs::create_dir(root.join("readme.mx")).unwrap();
        let at = |name: &str| root.join(name);
        let none = ReadRules::default();
        assert_eq!(did_you_mean("docs/readme.md", &at("readme.md"), &root, &none).as_deref(), Some("docs/README.md"));
        assert_eq!(did_you_mean("config.yml", &at("config.yml"), &root, &none).as_deref(), Some("config.yaml"));
        assert_eq!(did_you_mean("main.rs", &at("main.rs"), &root, &none), None);
        // A directory that leads out of the root lists nothing.
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.key"), "").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("out")).unwrap();
        assert_eq!(did_you_mean("out/secret.kez", &at("out/secret.kez"), &root, &none), None);
    }

    #[test]
    fn never_names_a_file_a_read_rule_hides() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("keys.txt"), "KEY=1").unwrap();
        std::fs::write(root.join("keys.txr"), "").unwrap();
        let book = RuleBook::default();
        let base = RuleBase { workspace: root.clone(), rule_dir: root.clone(), home: None };
        book.add(RuleKind::Deny, "Read(./keys.txt)", &base, "--deny").unwrap();
        let hidden = ReadRules(Some(std::sync::Arc::new(book)));
        // `keys.txt` is the closest name to `Keys.txt`, but it is hidden: the next one is offered.
        let wanted = root.join("Keys.txt");
        assert_eq!(did_you_mean("Keys.txt", &wanted, &root, &hidden).as_deref(), Some("keys.txr"));
        assert_eq!(did_you_mean("Keys.txt", &wanted, &root, &ReadRules::default()).as_deref(), Some("keys.txt"));
    }
}
