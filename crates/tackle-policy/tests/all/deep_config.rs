//! Hostile nesting into the configuration loader (docs/architecture.md, "Bounded input"): a
//! `tackle.toml` nested past toml's bound is refused with the reason, never a stack overflow
//! (which would abort the test binary). `TACKLE_FUZZ_CASES` runs the property longer. The
//! executor's and the schema pipeline's share of the same attack is `tackle-core`'s
//! `tests/all/deep_input.rs`.

use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("TACKLE_FUZZ_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(64)
}

#[test]
fn config_files_nested_past_tomls_bound_are_refused() {
    let workspace = tempfile::tempdir().unwrap();
    let file = workspace.path().join("tackle.toml");
    for text in [
        format!("a = {}{}", "[".repeat(100_000), "]".repeat(100_000)),
        format!("a = {}1{}", "{ b = ".repeat(100_000), " }".repeat(100_000)),
        format!("{} = 1", vec!["a"; 100_000].join(".")),
        format!("[{}]", vec!["a"; 100_000].join(".")),
    ] {
        std::fs::write(&file, &text).unwrap();
        let err = tackle_policy::config::Config::load(workspace.path(), false).unwrap_err().to_string();
        assert!(err.contains("tackle.toml is not valid TOML") && err.contains("recurs"), "{err}");
    }
    std::fs::write(&file, format!("[tools]\na = {}{}", "[".repeat(40), "]".repeat(40))).unwrap();
    assert!(tackle_policy::config::Config::load(workspace.path(), false).is_ok());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// Configuration files nesting arrays and inline tables at random, shallow to far past
    /// toml's bound: loaded within it, refused with the reason past it.
    #[test]
    fn nested_configuration_files_load_or_are_refused(kinds in prop::collection::vec(any::<bool>(), 0..2000)) {
        let (mut open, mut close) = (String::new(), String::new());
        for &table in &kinds {
            open.push_str(if table { "{ b = " } else { "[" });
            close.insert_str(0, if table { " }" } else { "]" });
        }
        let workspace = tempfile::tempdir().unwrap();
        std::fs::write(workspace.path().join("tackle.toml"), format!("[tools]\na = {open}1{close}")).unwrap();
        match tackle_policy::config::Config::load(workspace.path(), false) {
            Ok(_) => prop_assert!(kinds.len() <= 80, "{} levels loaded", kinds.len()),
            Err(err) => {
                prop_assert!(kinds.len() > 70, "{} levels: {}", kinds.len(), err);
                prop_assert!(err.to_string().contains("recurs"), "{}", err);
            }
        }
    }
}
