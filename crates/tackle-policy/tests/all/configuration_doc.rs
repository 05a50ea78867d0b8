//! docs/configuration.md prints the table of where each setting may come from; this keeps the
//! page and `tackle_policy::config::rules::RULES` in step (one row per rule, the same treatment).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use tackle_policy::config::rules::{FromWorkspace, NUMBERS, RULES, display_key};

#[test]
fn the_documented_table_is_the_table_in_the_code() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/configuration.md");
    let page = std::fs::read_to_string(path).unwrap();
    let rows: BTreeMap<&str, &str> = page
        .lines()
        .take_while(|line| *line != "### Numbers")
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

#[test]
fn the_documented_numbers_are_the_numbers_in_the_code() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/configuration.md");
    let page = std::fs::read_to_string(path).unwrap();
    let rows: Vec<Vec<&str>> = page
        .lines()
        .skip_while(|line| *line != "### Numbers")
        .filter_map(|line| line.strip_prefix("| ["))
        .map(|row| row.trim_end_matches(" |").split(" | ").collect())
        .collect();
    assert_eq!(rows.len(), NUMBERS.len(), "one row per number: {rows:#?}");
    for (row, rule) in rows.iter().zip(NUMBERS) {
        assert_eq!(format!("[{}", row[0]), display_key(rule.key), "the rows are in the code's order");
        assert_eq!(row[1], "lower", "{}", rule.key);
        assert_eq!(row[2], rule.min.to_string(), "{}", rule.key);
        let default = row[3].parse::<f64>().ok();
        assert_eq!(default, rule.default, "{}", rule.key);
        let max = row[4].split(' ').next().unwrap().parse::<f64>().unwrap();
        assert_eq!(max, rule.max, "{}", rule.key);
    }
}
