//! docs/configuration.md prints the table of where each setting may come from; this keeps the
//! page and `tackle_core::config::rules::RULES` in step (one row per rule, the same treatment).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use tackle_core::config::rules::{FromWorkspace, RULES, display_key};

#[test]
fn the_documented_table_is_the_table_in_the_code() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/configuration.md");
    let page = std::fs::read_to_string(path).unwrap();
    let rows: BTreeMap<&str, &str> = page
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split_once("` | "))
        .map(|(setting, treatment)| (setting, treatment.trim_end_matches(" |")))
        .collect();
    assert_eq!(rows.len(), RULES.len(), "one row per rule: {rows:#?}");
    for rule in RULES {
        let (dotted, section) = (display_key(rule.key), format!("[{}]", rule.key));
        let treatment = rows.get(dotted.as_str()).or_else(|| rows.get(section.as_str()));
        let treatment = treatment.unwrap_or_else(|| panic!("no row for {} ({dotted} or {section})", rule.key));
        let expected = match rule.from_workspace {
            FromWorkspace::Never => "never",
            FromWorkspace::Narrowing => "narrowing only",
            FromWorkspace::Consent => "with consent",
            FromWorkspace::Always => "always",
        };
        assert!(treatment.starts_with(expected), "{}: the page says {treatment:?}, the code {expected:?}", rule.key);
    }
}
