//! The rule engine (docs/reference/safety.md#order-of-evaluation): every rule from every
//! source, and the decision for one call. Any deny anywhere wins; then any ask; then allow
//! when every part of the call (each sub-command of a shell command, each written path) is
//! allowed by a rule or only reads; else the permission mode decides.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use serde_json::Value;

use super::rule::{Rule, RuleBase, RuleError, Specifier, ToolClass, absolute, first_word};
use super::{Decision, ModePolicy, PermissionMode, PermissionPolicy, PermissionRequest};
use crate::shell::{Analysis, SubCommand, analyze};
use tackle_core::spec::PathAccess;

/// Which list a rule is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RuleKind {
    /// A matching call is refused, whatever else matches.
    Deny,
    /// A matching call needs approval, even where the mode or an allow rule would allow it.
    Ask,
    /// A call whose every part matches an allow rule (or only reads) runs without asking.
    Allow,
}

impl RuleKind {
    /// `deny`, `ask` or `allow`.
    pub fn name(self) -> &'static str {
        match self {
            RuleKind::Deny => "deny",
            RuleKind::Ask => "ask",
            RuleKind::Allow => "allow",
        }
    }
}

/// A rule with its list and where it came from.
#[derive(Debug, Clone)]
pub struct SourcedRule {
    /// The list it is in.
    pub kind: RuleKind,
    /// The parsed rule.
    pub rule: Rule,
    /// Where it came from, for people: a file (`tackle.toml`), a flag (`--deny`), `session`.
    pub source: Arc<str>,
}

/// Every rule of a session, including those added while it runs ("always for this session").
#[derive(Debug, Default)]
pub struct RuleBook {
    rules: RwLock<Indexed>,
}

/// The rules, with the `Bash(...)` rules indexed by the program their pattern fixes: a
/// decision for a compound command looks only at the rules that can match each of its
/// sub-commands, not at every rule for every sub-command.
#[derive(Debug, Default)]
struct Indexed {
    rules: Vec<SourcedRule>,
    /// Positions of the command rules whose pattern fixes the first word, by that word.
    by_program: HashMap<String, Vec<usize>>,
    /// Positions of every other rule (no specifier, a path, a value, a command pattern
    /// starting with `*`), tried for every call.
    always: Vec<usize>,
    /// Positions of every command rule (tried against the raw text of an unanalyzable command).
    commands: Vec<usize>,
}

impl Indexed {
    fn push(&mut self, rule: SourcedRule) {
        let at = self.rules.len();
        match &rule.rule.specifier {
            Specifier::Command(pattern) => {
                self.commands.push(at);
                match pattern.program() {
                    Some(program) => self.by_program.entry(program.to_owned()).or_default().push(at),
                    None => self.always.push(at),
                }
            }
            _ => self.always.push(at),
        }
        self.rules.push(rule);
    }

    /// The positions, in order, of the rules of `kind` that may cover a call whose
    /// sub-commands start with the first words of `texts`; `raw` adds every command rule.
    fn candidates<'t>(&self, kind: RuleKind, texts: impl Iterator<Item = &'t str>, raw: bool) -> Vec<usize> {
        let mut out: Vec<usize> = self.always.clone();
        for text in texts {
            if let Some(list) = self.by_program.get(first_word(text)) {
                out.extend(list);
            }
        }
        if raw {
            out.extend(&self.commands);
        }
        out.retain(|&at| self.rules[at].kind == kind);
        out.sort_unstable();
        out.dedup();
        out
    }
}

impl RuleBook {
    /// A book of `rules`.
    pub fn new(rules: Vec<SourcedRule>) -> RuleBook {
        let mut indexed = Indexed::default();
        for rule in rules {
            indexed.push(rule);
        }
        RuleBook { rules: RwLock::new(indexed) }
    }

    /// Parses and adds one rule; the error names the rule and what is wrong.
    pub fn add(&self, kind: RuleKind, text: &str, base: &RuleBase, source: &str) -> Result<(), RuleError> {
        let rule = Rule::parse(text, base)?;
        self.push(SourcedRule { kind, rule, source: Arc::from(source) });
        Ok(())
    }

    /// Adds a parsed rule.
    pub fn push(&self, rule: SourcedRule) {
        if let Ok(mut indexed) = self.rules.write() {
            indexed.push(rule);
        }
    }

    /// Every rule, deny first, then ask, then allow, each in the order given.
    pub fn list(&self) -> Vec<SourcedRule> {
        let rules = self.rules.read().map(|r| r.rules.clone()).unwrap_or_default();
        let mut out = Vec::with_capacity(rules.len());
        for kind in [RuleKind::Deny, RuleKind::Ask, RuleKind::Allow] {
            out.extend(rules.iter().filter(|r| r.kind == kind).cloned());
        }
        out
    }

    /// The first deny rule with a `Read(...)` specifier that covers `path` (absolute), if any:
    /// such a path is hidden from every reading tool.
    pub fn read_denial(&self, path: &Path) -> Option<SourcedRule> {
        self.path_denial(&ToolClass::Read, path)
    }

    /// The first deny rule with an `Edit(...)` specifier that covers `path` (absolute), if
    /// any. The file tools ask again with the path they resolved themselves, so a symlink
    /// swapped in after the call was admitted cannot lead a write to a denied path.
    pub fn edit_denial(&self, path: &Path) -> Option<SourcedRule> {
        self.path_denial(&ToolClass::Edit, path)
    }

    /// The first allow rule with a `domain:` specifier that names `host` (canonical,
    /// [`super::domain::url_host`]) for the tool `spec`, if any: the web tools' address guard
    /// lets such a host be reached at a private address (docs/reference/safety.md#web-fetch).
    /// A rule without a specifier names no host.
    pub fn allow_naming_host(&self, spec: &tackle_core::ToolSpec, host: &str) -> Option<SourcedRule> {
        let indexed = self.rules.read().ok()?;
        indexed
            .rules
            .iter()
            .find(|r| {
                r.kind == RuleKind::Allow
                    && matches!(&r.rule.class, ToolClass::Named(name) if spec.name == *name || spec.aliases.contains(name))
                    && matches!(&r.rule.specifier, Specifier::Domain(pattern) if pattern.matches(host))
            })
            .cloned()
    }

    fn path_denial(&self, class: &ToolClass, path: &Path) -> Option<SourcedRule> {
        let indexed = self.rules.read().ok()?;
        indexed
            .rules
            .iter()
            .find(|r| {
                r.kind == RuleKind::Deny
                    && r.rule.class == *class
                    && matches!(&r.rule.specifier, Specifier::Path(set) if set.is_match(path))
            })
            .cloned()
    }
}

/// What the rules say about one call.
#[derive(Debug, Clone)]
pub struct Verdict {
    /// The outcome, with the rule that decided it (`None` when no rule applied).
    pub outcome: Outcome,
    /// For a shell command, its analysis.
    pub shell: Option<Analysis>,
}

/// The rules' outcome for a call.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// A deny rule matched `subject` (a sub-command or a path), when the rule has a specifier.
    Deny {
        /// The deny rule.
        rule: SourcedRule,
        /// The part of the call it matched (a sub-command or a path); `None` for a rule
        /// without a specifier.
        subject: Option<String>,
    },
    /// An ask rule matched.
    Ask {
        /// The ask rule.
        rule: SourcedRule,
    },
    /// Every part is allowed: by these rules, or by only reading.
    Allow {
        /// The allow rules that covered the parts (empty when the call only reads).
        rules: Vec<SourcedRule>,
    },
    /// No rule decides; the mode does.
    Mode,
}

/// The parts of a call rules look at.
struct Parts<'a> {
    request: &'a PermissionRequest<'a>,
    shell: Option<&'a Analysis>,
    raw_command: Option<&'a str>,
    /// Every path with its access, absolute and lexical.
    paths: Vec<(PathBuf, PathAccess)>,
    /// The same paths in every form a path rule matches: lexical, and resolved through symlinks
    /// when it exists. Resolved only when a path rule is tried (a `realpath` per path is most
    /// of a file tool's admission cost otherwise).
    forms: std::cell::OnceCell<Vec<(Vec<PathBuf>, PathAccess)>>,
}

impl RuleBook {
    /// The verdict for `request` in `workspace`.
    pub fn evaluate(&self, request: &PermissionRequest<'_>, workspace: &Path) -> Verdict {
        let shell = request.spec.command(request.args).map(analyze);
        let outcome = self.outcome(request, shell.as_ref(), workspace);
        Verdict { outcome, shell }
    }

    fn outcome(&self, request: &PermissionRequest<'_>, shell: Option<&Analysis>, workspace: &Path) -> Outcome {
        let parts = Parts {
            request,
            shell,
            raw_command: request.spec.command(request.args),
            paths: call_paths(request, workspace),
            forms: std::cell::OnceCell::new(),
        };
        let Ok(indexed) = self.rules.read() else { return Outcome::Mode };
        let unanalyzable = shell.is_some_and(|s| s.unanalyzable.is_some());
        for kind in [RuleKind::Deny, RuleKind::Ask] {
            let texts =
                shell.iter().flat_map(|s| &s.commands).flat_map(|c| std::iter::once(&c.text).chain(&c.deny_texts));
            for at in indexed.candidates(kind, texts.map(String::as_str), unanalyzable) {
                let rule = &indexed.rules[at];
                if let Some(subject) = parts.restricts(&rule.rule) {
                    return match kind {
                        RuleKind::Deny => Outcome::Deny { rule: rule.clone(), subject },
                        _ => Outcome::Ask { rule: rule.clone() },
                    };
                }
            }
            // A command the analysis cannot read may run what a `Bash(...)` deny rule names:
            // with any such rule, it is denied in every mode
            // (docs/reference/safety.md#threat-model).
            if kind == RuleKind::Deny
                && let Some(why) = shell.and_then(|s| s.unanalyzable.as_deref())
                && request.spec.command_param.is_some()
                && let Some(&at) = indexed.commands.iter().find(|&&at| indexed.rules[at].kind == RuleKind::Deny)
            {
                return Outcome::Deny {
                    rule: indexed.rules[at].clone(),
                    subject: Some(format!("a command the analysis cannot read ({why})")),
                };
            }
        }
        match parts.allowed_by(&indexed) {
            Some(used) => Outcome::Allow { rules: used.into_iter().cloned().collect() },
            None => Outcome::Mode,
        }
    }
}

/// The paths of a call: its path parameters (written ones only when the call writes) and
/// the paths its tool reports it writes.
fn call_paths(request: &PermissionRequest<'_>, workspace: &Path) -> Vec<(PathBuf, PathAccess)> {
    let mut raw: Vec<(&str, PathAccess)> = Vec::new();
    for param in &request.spec.path_params {
        if let Some(path) = request.args.get(&param.name).and_then(Value::as_str) {
            let access = if request.read_only { PathAccess::Read } else { param.access };
            raw.push((path, access));
        }
    }
    raw.extend(request.written_paths.iter().map(|p| (p.as_str(), PathAccess::Write)));
    raw.into_iter().map(|(path, access)| (absolute(path, workspace), access)).collect()
}

impl Parts<'_> {
    /// Every path in each form a path rule matches (see [`Parts::forms`]).
    fn forms(&self) -> &[(Vec<PathBuf>, PathAccess)] {
        self.forms.get_or_init(|| {
            self.paths
                .iter()
                .map(|(lexical, access)| {
                    let mut forms = vec![lexical.clone()];
                    if let Ok(real) = lexical.canonicalize()
                        && real != *lexical
                    {
                        forms.push(real);
                    }
                    (forms, *access)
                })
                .collect()
        })
    }

    fn tool_matches(&self, class: &ToolClass) -> bool {
        let spec = self.request.spec;
        match class {
            ToolClass::Shell => spec.command_param.is_some(),
            ToolClass::Read => self.request.read_only && !self.paths.is_empty(),
            ToolClass::Edit => !self.request.read_only && (self.request.is_file_edit() || self.writes()),
            ToolClass::McpServer(server) => spec
                .name
                .strip_prefix("mcp__")
                .and_then(|rest| rest.strip_prefix(server.as_str()))
                .is_some_and(|r| r.starts_with("__")),
            ToolClass::Named(name) => spec.name == *name || spec.aliases.iter().any(|a| a == name),
        }
    }

    fn writes(&self) -> bool {
        self.paths.iter().any(|(_, access)| *access == PathAccess::Write)
    }

    /// For a deny or ask rule: `Some(subject)` when it covers the call.
    fn restricts(&self, rule: &Rule) -> Option<Option<String>> {
        match (&rule.specifier, &rule.class) {
            (Specifier::Any, class) => self.tool_matches(class).then_some(None),
            (Specifier::Command(pattern), ToolClass::Shell) => {
                self.request.spec.command_param.as_ref()?;
                let shell = self.shell?;
                for command in &shell.commands {
                    if pattern.matches(&command.text) || command.deny_texts.iter().any(|t| pattern.matches(t)) {
                        return Some(Some(command.text.clone()));
                    }
                }
                if shell.unanalyzable.is_some() && self.raw_command.is_some_and(|raw| pattern.matches_anywhere(raw)) {
                    return Some(self.raw_command.map(str::to_owned));
                }
                None
            }
            (Specifier::Path(set), ToolClass::Read) => self
                .forms()
                .iter()
                .find(|(forms, _)| forms.iter().any(|p| set.is_match(p)))
                .map(|(forms, _)| Some(forms[0].display().to_string())),
            (Specifier::Path(set), ToolClass::Edit) => self
                .forms()
                .iter()
                .filter(|(_, access)| *access == PathAccess::Write && !self.request.read_only)
                .find(|(forms, _)| forms.iter().any(|p| set.is_match(p)))
                .map(|(forms, _)| Some(forms[0].display().to_string())),
            (Specifier::Domain(pattern), class) if self.tool_matches(class) => match self.url_host() {
                Some(host) if pattern.matches(&host) => Some(Some(host)),
                Some(_) => None,
                // No URL with a host to judge (or a tool without one): the restriction covers it.
                None => Some(None),
            },
            (Specifier::Value(pattern), class) if self.tool_matches(class) => {
                match self.specifier_value() {
                    Some(value) if crate::wildcard::matches(pattern, value) => Some(Some(value.to_owned())),
                    Some(_) => None,
                    // A tool without a specifier parameter: a restriction covers every call.
                    None => Some(None),
                }
            }
            _ => None,
        }
    }

    /// The canonical host of the call's URL, for a tool that declares a URL parameter.
    fn url_host(&self) -> Option<String> {
        let param = self.request.spec.url_param.as_deref()?;
        super::domain::url_host(self.request.args.get(param).and_then(Value::as_str)?)
    }

    fn specifier_value(&self) -> Option<&str> {
        let param = self.request.spec.specifier_param.as_deref()?;
        self.request.args.get(param).and_then(Value::as_str)
    }

    /// For the allow rules: the rules that together allow every part of the call, or `None`.
    fn allowed_by<'r>(&self, indexed: &'r Indexed) -> Option<Vec<&'r SourcedRule>> {
        if let Some(shell) = self.shell {
            if shell.unanalyzable.is_some() || shell.commands.is_empty() {
                return None;
            }
            // Output redirected to a file writes a path no `Bash(...)` pattern names: only the
            // whole tool allowed (`Bash`) covers it, so `Bash(echo hi)` never allows
            // `echo hi > ~/.bashrc` (docs/reference/safety.md#compound-shell-commands).
            let whole_tool_only = shell.writes_files;
            let mut used = Vec::new();
            for command in &shell.commands {
                let candidates = indexed.candidates(RuleKind::Allow, std::iter::once(command.text.as_str()), false);
                let covers = |r: &&SourcedRule| {
                    allows_command(&r.rule, command) && (!whole_tool_only || matches!(r.rule.specifier, Specifier::Any))
                };
                match candidates.into_iter().map(|at| &indexed.rules[at]).find(covers) {
                    Some(rule) => used.push(rule),
                    None if shell.may_be_read_only() && crate::shell::is_safe_command(&command.words) => {}
                    None => return None,
                }
            }
            // No rule allowed any part: the command is read-only, which the mode decides (it
            // runs restricted, docs/shell.md), not an allow rule.
            return (!used.is_empty()).then_some(used);
        }
        let allows: Vec<&SourcedRule> = indexed.rules.iter().filter(|r| r.kind == RuleKind::Allow).collect();
        // A whole tool (or MCP server) allowed.
        if let Some(rule) =
            allows.iter().find(|r| matches!(r.rule.specifier, Specifier::Any) && self.tool_matches(&r.rule.class))
        {
            return Some(vec![*rule]);
        }
        if let Some(host) = self.url_host() {
            return allows
                .iter()
                .find(|r| {
                    matches!(&r.rule.specifier, Specifier::Domain(p) if p.matches(&host))
                        && self.tool_matches(&r.rule.class)
                })
                .map(|r| vec![*r]);
        }
        if let Some(value) = self.specifier_value() {
            return allows
                .iter()
                .find(|r| {
                    matches!(&r.rule.specifier, Specifier::Value(p) if crate::wildcard::matches(p, value))
                        && self.tool_matches(&r.rule.class)
                })
                .map(|r| vec![*r]);
        }
        // Every path covered by a path rule of the right kind.
        let wanted = if self.request.read_only { ToolClass::Read } else { ToolClass::Edit };
        let path_rules =
            allows.iter().any(|r| r.rule.class == wanted && matches!(r.rule.specifier, Specifier::Path(_)));
        // The paths' links are resolved only when a rule could match them.
        if !path_rules || self.paths.is_empty() || !self.tool_matches(&wanted) {
            return None;
        }
        let mut used = Vec::new();
        for (forms, _) in self.forms() {
            let rule = allows.iter().find(|r| {
                r.rule.class == wanted
                    && matches!(&r.rule.specifier, Specifier::Path(set) if forms.iter().all(|p| set.is_match(p)))
            })?;
            used.push(*rule);
        }
        Some(used)
    }
}

fn allows_command(rule: &Rule, command: &SubCommand) -> bool {
    match (&rule.class, &rule.specifier) {
        (ToolClass::Shell, Specifier::Any) => true,
        (ToolClass::Shell, Specifier::Command(pattern)) => pattern.matches(&command.text),
        _ => false,
    }
}

/// The permission policy of a session: the rules, then the mode.
#[derive(Debug, Clone)]
pub struct RulePolicy {
    /// The session's rules, shared with whoever adds rules while it runs.
    pub book: Arc<RuleBook>,
    /// The permission mode that decides when no rule does.
    pub mode: PermissionMode,
    /// The workspace root, against which the call's relative paths are resolved.
    pub workspace: PathBuf,
    /// Whether a command judged read-only can run restricted ([`ModePolicy::restrict_read_only`]).
    pub restrict_read_only: bool,
}

impl RulePolicy {
    /// The rules' verdict and the decision for `request`.
    pub fn check(&self, request: &PermissionRequest<'_>) -> (Verdict, Decision) {
        let verdict = self.book.evaluate(request, &self.workspace);
        let decision = self.decision(request, &verdict);
        (verdict, decision)
    }

    fn decision(&self, request: &PermissionRequest<'_>, verdict: &Verdict) -> Decision {
        let tool = &request.spec.name;
        let mode = ModePolicy { mode: self.mode, restrict_read_only: self.restrict_read_only };
        match &verdict.outcome {
            Outcome::Deny { rule, subject } => Decision::Deny { message: denial(tool, subject.as_deref(), rule) },
            Outcome::Ask { .. } if self.mode == PermissionMode::Plan && !request.read_only => mode.decide(request),
            Outcome::Ask { rule } if self.mode == PermissionMode::DontAsk => Decision::Deny {
                message: format!(
                    "{tool} needs approval by rule {}, and mode dont-ask denies anything that would ask.",
                    rule.rule.text
                ),
            },
            Outcome::Ask { rule } => Decision::Ask {
                reason: format!("the ask rule {} ({}) asks before this call", rule.rule.text, rule.source),
                from_rule: true,
            },
            Outcome::Allow { .. } if self.mode == PermissionMode::Plan && !request.read_only => mode.decide(request),
            Outcome::Allow { .. } => Decision::Allow,
            Outcome::Mode => mode.decide(request),
        }
    }
}

impl PermissionPolicy for RulePolicy {
    fn decide(&self, request: &PermissionRequest<'_>) -> Decision {
        self.check(request).1
    }
}

/// `Permission to use {tool} with {subject} has been denied by rule {rule} ({source}).`
pub fn denial(tool: &str, subject: Option<&str>, rule: &SourcedRule) -> String {
    let (text, source) = (&rule.rule.text, &rule.source);
    match subject {
        Some(subject) => format!("Permission to use {tool} with {subject} has been denied by rule {text} ({source})."),
        None => format!("Permission to use {tool} has been denied by rule {text} ({source})."),
    }
}

/// The session's `Read(...)` deny rules, kept in the session state for the tools that list or
/// search files: a path they cover is skipped as if it did not exist
/// (docs/reference/safety.md#rules). The default hides nothing.
#[derive(Debug, Clone, Default)]
pub struct ReadRules(pub Option<Arc<RuleBook>>);

impl ReadRules {
    /// Whether `path` (absolute) is hidden by a `Read(...)` deny rule.
    pub fn hides(&self, path: &Path) -> bool {
        self.0.as_ref().is_some_and(|book| book.read_denial(path).is_some())
    }
}

/// The session's rule book, kept in the session state for a tool that consults the rules
/// during a call (`web_fetch`'s address guard, [`RuleBook::allow_naming_host`]). The default
/// holds no rules.
#[derive(Debug, Clone, Default)]
pub struct SessionRules(pub Option<Arc<RuleBook>>);

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use tackle_core::ToolSpec;

    fn outcome(book: &RuleBook, command: &str) -> Outcome {
        let spec = ToolSpec::new("bash", "").alias("Bash").command_param("command");
        let args = json!({ "command": command });
        let request = PermissionRequest::new("c", &spec, &args);
        book.evaluate(&request, Path::new("/ws")).outcome
    }

    fn book(rules: &[(RuleKind, &str)]) -> RuleBook {
        let base = RuleBase { workspace: "/ws".into(), rule_dir: "/ws".into(), home: None };
        let book = RuleBook::default();
        for (kind, text) in rules {
            book.add(*kind, text, &base, "test").unwrap();
        }
        book
    }

    fn decided_by(outcome: &Outcome) -> String {
        match outcome {
            Outcome::Deny { rule, .. } | Outcome::Ask { rule } => rule.rule.text.clone(),
            Outcome::Allow { rules } => rules.iter().map(|r| r.rule.text.as_str()).collect::<Vec<_>>().join(","),
            Outcome::Mode => "mode".to_owned(),
        }
    }

    fn decision(book: RuleBook, mode: PermissionMode, command: &str) -> Decision {
        let spec = ToolSpec::new("bash", "").alias("Bash").command_param("command");
        let args = json!({ "command": command });
        let request = PermissionRequest::new("c", &spec, &args);
        RulePolicy { book: Arc::new(book), mode, workspace: "/ws".into(), restrict_read_only: true }.check(&request).1
    }

    #[test]
    fn an_unanalyzable_command_is_denied_in_every_mode_when_a_bash_deny_rule_exists() {
        for command in ["c=rm; $c v", "coproc rm v", "eval x", "r\\\nm v", "strace ls", "xargs --bogus ls"] {
            for mode in [PermissionMode::Bypass, PermissionMode::Default, PermissionMode::AcceptEdits] {
                let denied = decision(book(&[(RuleKind::Deny, "Bash(npm publish:*)")]), mode, command);
                match denied {
                    Decision::Deny { message } => assert!(message.contains("cannot read"), "{message}"),
                    other => panic!("{command:?} in {mode:?}: {other:?}"),
                }
            }
            // Without a `Bash(...)` deny rule the mode decides, as for any command.
            assert_eq!(decision(book(&[]), PermissionMode::Bypass, command), Decision::Allow, "{command:?}");
            let other_rules = book(&[(RuleKind::Deny, "Read(.env)"), (RuleKind::Allow, "Bash")]);
            assert_eq!(decision(other_rules, PermissionMode::Bypass, command), Decision::Allow, "{command:?}");
            assert!(matches!(decision(book(&[]), PermissionMode::Default, command), Decision::Ask { .. }));
        }
        // An analyzable command is only denied by a rule that matches it.
        let book = book(&[(RuleKind::Deny, "Bash(rm:*)")]);
        assert_eq!(decision(book, PermissionMode::Bypass, "xargs --max-args 1 ls"), Decision::Allow);
    }

    #[test]
    fn the_program_index_keeps_the_rules_order_and_their_reach() {
        let book = book(&[
            (RuleKind::Allow, "Bash(make * all)"),
            (RuleKind::Deny, "Bash(*--force*)"),
            (RuleKind::Deny, "Bash(git push:*)"),
            (RuleKind::Deny, "Bash(git * main)"),
            (RuleKind::Ask, "Bash(npm publish)"),
            (RuleKind::Allow, "Bash"),
        ]);
        // Both git rules match; the first written decides.
        assert_eq!(decided_by(&outcome(&book, "ls && git push origin main")), "Bash(git push:*)");
        assert_eq!(decided_by(&outcome(&book, "git merge x main")), "Bash(git * main)");
        // A pattern starting with `*` is tried for every program.
        assert_eq!(decided_by(&outcome(&book, "cargo publish --force")), "Bash(*--force*)");
        // Deny forms: the wrapper on, sudo off, /usr/bin/git as git.
        assert_eq!(decided_by(&outcome(&book, "sudo /usr/bin/git push")), "Bash(git push:*)");
        // An unanalyzable command is matched against its raw text by every command rule.
        assert_eq!(decided_by(&outcome(&book, "eval 'git push'")), "Bash(git push:*)");
        assert_eq!(decided_by(&outcome(&book, "npm publish")), "Bash(npm publish)");
        // The allow rule of `make` first, then the bare `Bash`.
        assert_eq!(decided_by(&outcome(&book, "make -j4 all && cc x.c")), "Bash(make * all),Bash");
        // Output to a file is covered only by the whole tool allowed.
        let narrow = self::book(&[(RuleKind::Allow, "Bash(echo hi)"), (RuleKind::Allow, "Bash(cargo test:*)")]);
        assert_eq!(decided_by(&outcome(&narrow, "echo hi")), "Bash(echo hi)");
        assert_eq!(decided_by(&outcome(&narrow, "echo hi > /dev/null 2>&1")), "Bash(echo hi)");
        assert_eq!(decided_by(&outcome(&narrow, "echo hi >/dev/stderr")), "Bash(echo hi)");
        for writes in [
            "echo hi > ~/.bashrc",
            "echo hi >> .git/hooks/pre-commit",
            "cargo test 2> log && echo hi",
            "echo hi &> out",
            "echo hi | tee x > y",
        ] {
            assert_eq!(decided_by(&outcome(&narrow, writes)), "mode", "{writes}");
        }
        assert_eq!(decided_by(&outcome(&book, "cc x.c > out.txt")), "Bash");
        // A rule added later is indexed too.
        let base = RuleBase { workspace: "/ws".into(), rule_dir: "/ws".into(), home: None };
        book.add(RuleKind::Deny, "Bash(cc:*)", &base, "session").unwrap();
        assert_eq!(decided_by(&outcome(&book, "make -j4 all && cc x.c")), "Bash(cc:*)");
    }

    fn fetch_outcome(book: &RuleBook, url: &str) -> Outcome {
        let spec = ToolSpec::new("web_fetch", "").alias("WebFetch").url_param("url");
        let args = json!({ "url": url });
        book.evaluate(&PermissionRequest::new("c", &spec, &args), Path::new("/ws")).outcome
    }

    #[test]
    fn domain_rules_decide_by_the_host_a_url_reaches() {
        let book = book(&[
            (RuleKind::Deny, "WebFetch(domain:evil.com)"),
            (RuleKind::Ask, "web_fetch(domain:*.corp.example)"),
            (RuleKind::Allow, "WebFetch(domain:docs.rs)"),
            (RuleKind::Allow, "WebFetch(domain:127.0.0.1)"),
        ]);
        assert_eq!(decided_by(&fetch_outcome(&book, "https://docs.rs/serde")), "WebFetch(domain:docs.rs)");
        assert_eq!(decided_by(&fetch_outcome(&book, "https://DOCS.RS./x")), "WebFetch(domain:docs.rs)");
        assert_eq!(decided_by(&fetch_outcome(&book, "http://2130706433:8080/")), "WebFetch(domain:127.0.0.1)");
        // The host reached, not what the URL seems to say.
        assert_eq!(decided_by(&fetch_outcome(&book, "https://docs.rs@evil.com/")), "WebFetch(domain:evil.com)");
        assert_eq!(decided_by(&fetch_outcome(&book, "https://docs.rs.evil.net/")), "mode");
        assert_eq!(decided_by(&fetch_outcome(&book, "https://EVIL.com./")), "WebFetch(domain:evil.com)");
        assert_eq!(decided_by(&fetch_outcome(&book, "https://wiki.corp.example/")), "web_fetch(domain:*.corp.example)");
        assert_eq!(decided_by(&fetch_outcome(&book, "https://corp.example/")), "mode");
        // A URL with no host is covered by every restriction and allowed by no rule.
        assert_eq!(decided_by(&fetch_outcome(&book, "not a url")), "WebFetch(domain:evil.com)");
        let allow_only = self::book(&[(RuleKind::Allow, "WebFetch(domain:docs.rs)")]);
        assert_eq!(decided_by(&fetch_outcome(&allow_only, "file:///etc/passwd")), "mode");
        // A domain rule of another tool does not reach this one.
        let other =
            self::book(&[(RuleKind::Deny, "Bash(domain:evil.com)"), (RuleKind::Allow, "Other(domain:docs.rs)")]);
        assert_eq!(decided_by(&fetch_outcome(&other, "https://docs.rs/")), "mode");
    }

    #[test]
    fn only_an_allow_rule_naming_the_host_exempts_it_from_the_address_guard() {
        let spec = ToolSpec::new("web_fetch", "").alias("WebFetch").url_param("url");
        let book = book(&[
            (RuleKind::Allow, "WebFetch"),
            (RuleKind::Deny, "WebFetch(domain:10.0.0.1)"),
            (RuleKind::Allow, "WebFetch(domain:localhost)"),
            (RuleKind::Allow, "Skill(domain:127.0.0.1)"),
        ]);
        assert_eq!(book.allow_naming_host(&spec, "localhost").unwrap().rule.text, "WebFetch(domain:localhost)");
        assert!(book.allow_naming_host(&spec, "127.0.0.1").is_none());
        assert!(book.allow_naming_host(&spec, "10.0.0.1").is_none());
        assert!(book.allow_naming_host(&spec, "localhost.evil.com").is_none());
    }

    #[test]
    fn always_for_a_url_is_its_host() {
        let spec = ToolSpec::new("web_fetch", "").alias("WebFetch").url_param("url");
        for (url, rule) in [
            ("https://Docs.RS./serde?x=1", Some("WebFetch(domain:docs.rs)")),
            ("http://[::1]:8080/", Some("WebFetch(domain:::1)")),
            ("http://user@evil.com/", Some("WebFetch(domain:evil.com)")),
            ("mailto:x", None),
        ] {
            let args = json!({ "url": url });
            let request = PermissionRequest::new("c", &spec, &args);
            let rules = super::super::suggest::always_rules(&request, Path::new("/ws"));
            assert_eq!(rules.as_deref().and_then(|r| r.first()).map(String::as_str), rule, "{url}");
        }
    }
}
