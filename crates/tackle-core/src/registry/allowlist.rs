//! The allowlist grammar of `--tools` and `[tools] enabled` (docs/architecture.md): toolset names, exact
//! tool names (aliases accepted), globs, `hint:read-only` / `hint:destructive`, and `-ENTRY` to
//! drop. Entries apply left to right; a list that starts with a removal starts from the
//! command's default selection. Opt-in tools join only when named exactly or through `all`.

use globset::Glob;

use super::{Registry, RegistryEntry};
use crate::spec::Availability;

/// The tools one session gets, in registry order, with notices for the person.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// The wire names of the selected tools, in registry order.
    pub names: Vec<String>,
    /// Unavailable tools that were named, and globs that matched nothing.
    pub warnings: Vec<String>,
}

/// An allowlist that names something that does not exist.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllowlistError {
    /// An entry that is no tool, alias, toolset or hint.
    #[error("unknown tool or toolset '{entry}' in the tool list{}", suggestion_text(.suggestion, .toolsets))]
    Unknown {
        /// The entry as written.
        entry: String,
        /// The closest known name, when one is close enough to be a likely misspelling.
        suggestion: Option<String>,
        /// The toolsets the registry knows, for the message.
        toolsets: Vec<String>,
    },
    /// An entry with glob characters that is not a valid glob.
    #[error("invalid glob '{entry}' in the tool list: {message}")]
    InvalidGlob {
        /// The entry as written.
        entry: String,
        /// The glob parser's message.
        message: String,
    },
}

fn suggestion_text(suggestion: &Option<String>, toolsets: &[String]) -> String {
    match suggestion {
        Some(s) => format!("; did you mean '{s}'?"),
        None => format!("; run 'tackle tools list' to see the tools (toolsets: {})", toolsets.join(", ")),
    }
}

impl Registry {
    /// Selects tools by `list`; `default` is the list used when `list` is empty or starts
    /// with a removal.
    pub fn select(&self, list: &str, default: &str) -> Result<Selection, AllowlistError> {
        let entries: Vec<&str> = split(list);
        let mut chosen = vec![false; self.entries.len()];
        let mut warnings = Vec::new();
        if entries.first().is_none_or(|e| e.starts_with('-')) {
            for item in split(default) {
                self.apply(item, true, &mut chosen, &mut warnings)?;
            }
        }
        for item in entries {
            match item.strip_prefix('-') {
                Some(removed) => self.apply(removed, false, &mut chosen, &mut warnings)?,
                None => self.apply(item, true, &mut chosen, &mut warnings)?,
            }
        }
        let names = self
            .entries
            .iter()
            .zip(&chosen)
            .filter(|(_, chosen)| **chosen)
            .map(|(entry, _)| entry.spec.name.clone())
            .collect();
        Ok(Selection { names, warnings })
    }

    fn apply(
        &self,
        item: &str,
        add: bool,
        chosen: &mut [bool],
        warnings: &mut Vec<String>,
    ) -> Result<(), AllowlistError> {
        let mark = |chosen: &mut [bool], pick: &dyn Fn(&RegistryEntry) -> bool, include_opt_in: bool| {
            for (entry, slot) in self.entries.iter().zip(chosen.iter_mut()) {
                let usable = entry.spec.availability == Availability::Available;
                if pick(entry) && (include_opt_in || !entry.is_opt_in() || !add) && (usable || !add) {
                    *slot = add;
                }
            }
        };

        if let Some(hint) = item.strip_prefix("hint:") {
            let pick: &dyn Fn(&RegistryEntry) -> bool = match hint {
                "read-only" | "readonly" | "read_only" => &|e| e.spec.annotations.read_only,
                "destructive" => &|e| e.spec.annotations.destructive,
                _ => {
                    return Err(AllowlistError::Unknown {
                        entry: item.to_owned(),
                        suggestion: closest(hint, ["read-only", "destructive"].into_iter())
                            .map(|s| format!("hint:{s}")),
                        toolsets: self.toolset_names(),
                    });
                }
            };
            mark(chosen, pick, false);
            return Ok(());
        }

        if self.toolset_names().iter().any(|t| t == item) {
            mark(chosen, &|e| e.in_toolset(item), true);
            return Ok(());
        }

        if item.contains(['*', '?', '[', '{']) {
            let matcher = Glob::new(item)
                .map_err(|err| AllowlistError::InvalidGlob { entry: item.to_owned(), message: err.kind().to_string() })?
                .compile_matcher();
            if !self.entries.iter().any(|e| matcher.is_match(&e.spec.name)) {
                warnings.push(format!("'{item}' matches no tool"));
            }
            mark(chosen, &|e| matcher.is_match(&e.spec.name), false);
            return Ok(());
        }

        let Some(index) = self.find(item) else {
            let toolsets = self.toolset_names();
            let candidates = self
                .entries
                .iter()
                .flat_map(|e| std::iter::once(e.spec.name.as_str()).chain(e.spec.aliases.iter().map(String::as_str)))
                .chain(toolsets.iter().map(String::as_str));
            let suggestion = closest(item, candidates);
            return Err(AllowlistError::Unknown { entry: item.to_owned(), suggestion, toolsets });
        };
        let entry = &self.entries[index];
        if let (true, Availability::Unavailable(reason)) = (add, &entry.spec.availability) {
            warnings.push(format!("tool '{}' is unavailable: {reason}", entry.spec.name));
            return Ok(());
        }
        chosen[index] = add;
        Ok(())
    }

    /// The index of the entry `name` resolves to: exact, then alias, then normalized.
    fn find(&self, name: &str) -> Option<usize> {
        let exact = self.entries.iter().position(|e| e.spec.name == name);
        let alias = || self.entries.iter().position(|e| e.spec.aliases.iter().any(|a| a == name));
        let normalized = || {
            let wanted = super::toolset::normalize(name);
            self.entries.iter().position(|e| {
                super::toolset::normalize(&e.spec.name) == wanted
                    || e.spec.aliases.iter().any(|a| super::toolset::normalize(a) == wanted)
            })
        };
        exact.or_else(alias).or_else(normalized)
    }
}

fn split(list: &str) -> Vec<&str> {
    list.split(|c: char| c == ',' || c.is_whitespace()).filter(|s| !s.is_empty()).collect()
}

/// The candidate most similar to `wanted`, if any is similar enough to be a likely typo.
pub(crate) fn closest<'a>(wanted: &str, candidates: impl Iterator<Item = &'a str>) -> Option<String> {
    let wanted_lower = wanted.to_lowercase();
    candidates
        .map(|c| (strsim::jaro_winkler(&wanted_lower, &c.to_lowercase()), c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c.to_owned())
}
