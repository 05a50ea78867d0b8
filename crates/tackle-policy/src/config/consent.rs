//! Consent the person gave to what a workspace defines, remembered in the user config
//! directory (never in the workspace), and the decision whether a workspace's settings are
//! trusted in this run (docs/configuration.md).
//!
//! One mechanism serves every kind of consent: a [`ConsentStore`] is a JSON file of
//! [`Consent`]s, each keyed by the workspace path and a subject (`settings`, an MCP server's
//! name) and bound to a fingerprint of what was approved. Workspace consent is bound to the
//! hash of the workspace's settings files ([`super::snapshot`]); MCP servers keep theirs, per
//! server definition, in a store of the same kind beside it.
//!
//! Writes replace the file atomically; two Tackle processes recording at the same moment can
//! lose one of the records, which only means the person is asked again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::snapshot::SettingsSnapshot;

/// The store of workspace consent in the user config directory.
pub const WORKSPACE_CONSENT_FILE: &str = "workspace-consent.json";

/// The subject under which consent to a workspace's settings as a whole is recorded.
pub const SETTINGS_SUBJECT: &str = "settings";

/// One remembered consent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Consent {
    /// The workspace's canonical path.
    pub workspace: String,
    /// What was approved in it (`settings`, or an MCP server's name).
    #[serde(alias = "server")]
    pub subject: String,
    /// The hash of what was approved.
    pub fingerprint: String,
    /// Hashes of the parts (each settings file), to tell the person what changed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub parts: BTreeMap<String, String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Remembered {
    #[serde(default)]
    approved: Vec<Consent>,
}

/// A file of remembered approvals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsentStore {
    path: PathBuf,
}

impl ConsentStore {
    /// The store at `path`.
    pub fn new(path: impl Into<PathBuf>) -> ConsentStore {
        ConsentStore { path: path.into() }
    }

    /// The store `file_name` in the user config directory, if there is one.
    pub fn in_user_config(file_name: &str) -> Option<ConsentStore> {
        super::user_config_dir().map(|dir| ConsentStore::new(dir.join(file_name)))
    }

    /// Where the store lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The approval recorded for `subject` in `workspace`, whatever its fingerprint.
    pub fn find(&self, workspace: &str, subject: &str) -> Option<Consent> {
        self.read().approved.into_iter().find(|a| a.workspace == workspace && a.subject == subject)
    }

    /// Whether exactly this approval (same fingerprint) is recorded.
    pub fn holds(&self, approval: &Consent) -> bool {
        self.find(&approval.workspace, &approval.subject).is_some_and(|a| a.fingerprint == approval.fingerprint)
    }

    /// Records `approval`, replacing any earlier one for its workspace and subject.
    pub fn record(&self, approval: Consent) -> std::io::Result<()> {
        let mut remembered = self.read();
        remembered.approved.retain(|a| !(a.workspace == approval.workspace && a.subject == approval.subject));
        remembered.approved.push(approval);
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let text = serde_json::to_string_pretty(&remembered).map_err(std::io::Error::other)?;
        let temporary = self.path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&temporary, text)?;
        std::fs::rename(&temporary, &self.path)
    }

    /// Records `approval`, logging (not failing) when the file cannot be written.
    pub fn record_or_warn(&self, approval: Consent) {
        if let Err(err) = self.record(approval) {
            tracing::warn!("cannot remember the consent in {}: {err}", self.path.display());
        }
    }

    /// The remembered approvals; an unreadable or malformed file holds none (the person is
    /// asked again).
    fn read(&self) -> Remembered {
        std::fs::read_to_string(&self.path).ok().and_then(|text| serde_json::from_str(&text).ok()).unwrap_or_default()
    }
}

/// What the person is asked when a workspace's settings need consent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustRequest<'a> {
    /// The workspace whose settings need consent.
    pub workspace: &'a Path,
    /// The settings files that changed since the last consent (empty: never consented).
    pub changed: Vec<String>,
    /// The workspace's settings that need consent, as written (`[providers]`).
    pub wanted: &'a [String],
    /// What consent would let run or reach, one line each (hook commands, MCP servers with
    /// their arguments, provider base URLs; see [`super::consent_runs`]).
    pub runs: &'a [String],
}

/// Asks the person (a terminal prompt); true means consent.
pub type TrustPrompt<'a> = &'a (dyn Fn(&TrustRequest<'_>) -> bool + Send + Sync);

/// What decides whether a workspace's settings are trusted in this run.
#[derive(Clone, Copy)]
pub struct TrustInputs<'a> {
    /// The workspace whose settings are decided on.
    pub workspace: &'a Path,
    /// The workspace's settings files as read now; their hash is what consent is bound to.
    pub snapshot: &'a SettingsSnapshot,
    /// What the consent is for ([`SETTINGS_SUBJECT`], or another scope such as MCP servers).
    pub subject: &'a str,
    /// Explicit consent for this run (`--trust-workspace`, `TACKLE_TRUST_WORKSPACE=1`).
    pub explicit: bool,
    /// The workspace is listed as trusted in the user config.
    pub listed: bool,
    /// The name of that list, for notices (`trusted_workspaces`).
    pub list_name: &'a str,
    /// The explicit way to consent, for notices (`--trust-workspace (or
    /// TACKLE_TRUST_WORKSPACE=1)`).
    pub explicit_hint: &'a str,
    /// The workspace's settings that need consent; with none, an unlisted workspace is not asked.
    pub wanted: &'a [String],
    /// What consent would let run or reach, one line each, shown when the person is asked.
    pub runs: &'a [String],
    /// Where consent is remembered and recorded (none: nothing is remembered).
    pub store: Option<&'a ConsentStore>,
    /// How to ask the person (none: no terminal, so the person is never asked).
    pub prompt: Option<TrustPrompt<'a>>,
}

impl std::fmt::Debug for TrustInputs<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrustInputs")
            .field("workspace", &self.workspace)
            .field("subject", &self.subject)
            .field("explicit", &self.explicit)
            .field("listed", &self.listed)
            .field("wanted", &self.wanted)
            .field("interactive", &self.prompt.is_some())
            .finish_non_exhaustive()
    }
}

/// Whether the workspace's settings are trusted, and the notices for the person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustDecision {
    /// The workspace's settings apply in this run.
    pub trusted: bool,
    /// What to tell the person (why settings are ignored, how to consent, what was recorded).
    pub notices: Vec<String>,
}

/// Decides trust, recording consent where it is given:
///
/// - explicit consent (the flag or variable) trusts this run; for a workspace that is listed
///   or was consented before, it also records the settings as they are now;
/// - a recorded consent whose hash matches the settings trusts them;
/// - a listed workspace seen for the first time is recorded as it is now (with a notice), so
///   that a later change needs consent again;
/// - otherwise (a listed workspace whose settings changed, or unlisted settings that need
///   consent) the person is asked on a terminal, and without one the settings are ignored
///   with a notice that says how to consent.
pub fn decide(inputs: &TrustInputs<'_>) -> TrustDecision {
    let approval = Consent {
        workspace: inputs.workspace.display().to_string(),
        subject: inputs.subject.to_owned(),
        fingerprint: inputs.snapshot.hash(),
        parts: inputs.snapshot.file_hashes().into_iter().collect(),
    };
    let recorded = inputs.store.and_then(|store| store.find(&approval.workspace, inputs.subject));
    let record = |approval: Consent| {
        if let Some(store) = inputs.store {
            store.record_or_warn(approval);
        }
    };
    let trusted = TrustDecision { trusted: true, notices: Vec::new() };
    if inputs.explicit {
        if inputs.listed || recorded.is_some() {
            record(approval);
        }
        return trusted;
    }
    if recorded.as_ref().is_some_and(|old| old.fingerprint == approval.fingerprint) {
        return trusted;
    }
    let workspace = inputs.workspace.display();
    let changed: Vec<String> = match &recorded {
        Some(old) => approval
            .parts
            .iter()
            .filter(|(name, hash)| old.parts.get(*name) != Some(*hash))
            .map(|(name, _)| name.clone())
            .collect(),
        None if inputs.listed => {
            record(approval);
            return TrustDecision {
                trusted: true,
                notices: vec![format!(
                    "trusting the settings of {workspace} as they are now (it is listed in {}); a later change to \
                     them needs your consent again",
                    inputs.list_name
                )],
            };
        }
        None if inputs.wanted.is_empty() => return TrustDecision { trusted: false, notices: Vec::new() },
        None => Vec::new(),
    };
    if !inputs.listed && inputs.wanted.is_empty() {
        return TrustDecision { trusted: false, notices: Vec::new() };
    }
    let request = TrustRequest {
        workspace: inputs.workspace,
        changed: changed.clone(),
        wanted: inputs.wanted,
        runs: inputs.runs,
    };
    if let Some(prompt) = inputs.prompt
        && prompt(&request)
    {
        record(approval);
        return trusted;
    }
    let notice = if recorded.is_some() {
        let files = if changed.is_empty() { "its settings files".to_owned() } else { changed.join(", ") };
        format!(
            "the settings of {workspace} changed since you trusted them ({files}), so they are not trusted now; to \
             trust them again, answer the prompt on a terminal, or run once with {}, which records them",
            inputs.explicit_hint
        )
    } else {
        format!(
            "ignoring {} from the workspace's settings: they need your consent; answer the prompt on a terminal, \
             pass {} for this run, or list {workspace} in {} in your user config ({})",
            inputs.wanted.join(", "),
            inputs.explicit_hint,
            inputs.list_name,
            super::user_config_shown()
        )
    };
    TrustDecision { trusted: false, notices: vec![notice] }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Fixture {
        workspace: tempfile::TempDir,
        store: ConsentStore,
        _home: tempfile::TempDir,
    }

    fn fixture() -> Fixture {
        let home = tempfile::tempdir().unwrap();
        let store = ConsentStore::new(home.path().join("tackle").join(WORKSPACE_CONSENT_FILE));
        Fixture { workspace: tempfile::tempdir().unwrap(), store, _home: home }
    }

    impl Fixture {
        fn write(&self, name: &str, text: &str) {
            std::fs::write(self.workspace.path().join(name), text).unwrap();
        }

        fn decide(
            &self,
            explicit: bool,
            listed: bool,
            wanted: &[String],
            prompt: Option<TrustPrompt<'_>>,
        ) -> TrustDecision {
            let snapshot = SettingsSnapshot::read(self.workspace.path());
            decide(&TrustInputs {
                workspace: self.workspace.path(),
                snapshot: &snapshot,
                subject: SETTINGS_SUBJECT,
                explicit,
                listed,
                list_name: "trusted_workspaces",
                explicit_hint: "--trust-workspace (or TACKLE_TRUST_WORKSPACE=1)",
                wanted,
                runs: &[],
                store: Some(&self.store),
                prompt,
            })
        }
    }

    #[test]
    fn a_listed_workspace_is_recorded_when_first_seen_and_a_change_needs_consent_again() {
        let fx = fixture();
        fx.write("tackle.toml", "[providers.openai]\nbase_url = \"http://127.0.0.1:9\"\n");
        let first = fx.decide(false, true, &[], None);
        assert!(first.trusted);
        assert_eq!(first.notices.len(), 1);
        assert!(first.notices[0].starts_with("trusting the settings of "), "{:?}", first.notices);
        assert_eq!(fx.decide(false, true, &[], None), TrustDecision { trusted: true, notices: vec![] });

        fx.write(".mcp.json", "{}");
        let changed = fx.decide(false, true, &[], None);
        assert!(!changed.trusted);
        assert_eq!(
            changed.notices,
            [format!(
                "the settings of {} changed since you trusted them (.mcp.json), so they are not trusted now; to trust \
                 them again, answer the prompt on a terminal, or run once with --trust-workspace (or \
                 TACKLE_TRUST_WORKSPACE=1), which records them",
                fx.workspace.path().display()
            )]
        );
        // Still not trusted on the next run: the change was not recorded.
        assert!(!fx.decide(false, true, &[], None).trusted);
        // Explicit consent trusts this run and records the new settings.
        assert!(fx.decide(true, true, &[], None).trusted);
        assert_eq!(fx.decide(false, true, &[], None), TrustDecision { trusted: true, notices: vec![] });
    }

    #[test]
    fn the_prompt_records_consent_and_a_refusal_records_nothing() {
        let fx = fixture();
        fx.write("tackle.toml", "[providers.openai]\nbase_url = \"http://127.0.0.1:9\"\n");
        let wanted = vec!["[providers]".to_owned()];
        let asked = AtomicUsize::new(0);
        let no = |request: &TrustRequest<'_>| {
            asked.fetch_add(1, Ordering::SeqCst);
            assert!(request.changed.is_empty());
            false
        };
        let refused = fx.decide(false, false, &wanted, Some(&no));
        assert!(!refused.trusted);
        assert_eq!(
            refused.notices,
            [format!(
                "ignoring [providers] from the workspace's settings: they need your consent; answer the prompt on a \
                 terminal, pass --trust-workspace (or TACKLE_TRUST_WORKSPACE=1) for this run, or list {} in \
                 trusted_workspaces in your user config ({})",
                fx.workspace.path().display(),
                crate::config::user_config_shown()
            )]
        );
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        // Explicit consent for an unlisted, never-consented workspace is for this run only.
        assert!(fx.decide(true, false, &wanted, None).trusted);
        assert!(!fx.decide(false, false, &wanted, None).trusted);

        let yes = |_: &TrustRequest<'_>| true;
        assert!(fx.decide(false, false, &wanted, Some(&yes)).trusted);
        assert_eq!(fx.decide(false, false, &wanted, None), TrustDecision { trusted: true, notices: vec![] });
        fx.write("tackle.toml", "[providers.openai]\nbase_url = \"http://evil.example\"\n");
        let seen = std::sync::Mutex::new(Vec::new());
        let record_changed = |request: &TrustRequest<'_>| {
            seen.lock().unwrap().extend(request.changed.clone());
            false
        };
        assert!(!fx.decide(false, false, &wanted, Some(&record_changed)).trusted);
        assert_eq!(*seen.lock().unwrap(), ["tackle.toml"]);
    }

    #[test]
    fn nothing_to_consent_to_asks_nothing() {
        let fx = fixture();
        fx.write("tackle.toml", "[tools]\ntimeout_ms = 5\n");
        let never = |_: &TrustRequest<'_>| -> bool { panic!("asked") };
        assert_eq!(fx.decide(false, false, &[], Some(&never)), TrustDecision { trusted: false, notices: vec![] });
        assert!(!fx.store.path().exists(), "nothing was recorded");
    }

    #[test]
    fn the_store_reads_the_older_mcp_field_name_and_survives_a_corrupt_file() {
        let fx = fixture();
        std::fs::create_dir_all(fx.store.path().parent().unwrap()).unwrap();
        std::fs::write(fx.store.path(), r#"{"approved": [{"workspace": "/w", "server": "git", "fingerprint": "f"}]}"#)
            .unwrap();
        let found = fx.store.find("/w", "git").unwrap();
        assert_eq!((found.subject.as_str(), found.fingerprint.as_str()), ("git", "f"));
        std::fs::write(fx.store.path(), "{not json").unwrap();
        assert_eq!(fx.store.find("/w", "git"), None);
        fx.store
            .record(Consent {
                workspace: "/w".into(),
                subject: "s".into(),
                fingerprint: "1".into(),
                parts: BTreeMap::new(),
            })
            .unwrap();
        assert!(fx.store.holds(&Consent {
            workspace: "/w".into(),
            subject: "s".into(),
            fingerprint: "1".into(),
            parts: BTreeMap::new()
        }));
    }
}
