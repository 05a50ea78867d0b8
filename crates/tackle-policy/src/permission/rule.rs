//! One permission rule in Claude Code's syntax (docs/reference/safety.md#rule-syntax): what it
//! names (a tool, a class of tools, an MCP server) and what its specifier matches (a shell
//! command pattern, a gitignore-style path pattern, a subagent type or skill name, the
//! `domain:` of a URL).

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use super::domain::DomainPattern;

/// Where a rule's relative paths are resolved.
#[derive(Debug, Clone)]
pub struct RuleBase {
    /// The workspace root (`p`, `./p`).
    pub workspace: PathBuf,
    /// The directory of the file holding the rule (`/p`); the workspace for flags.
    pub rule_dir: PathBuf,
    /// The home directory (`~/p`).
    pub home: Option<PathBuf>,
}

/// A rule that cannot be used; the text says what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid permission rule '{rule}': {why}")]
pub struct RuleError {
    /// The rule as written.
    pub rule: String,
    /// What is wrong with it and how to write it instead.
    pub why: String,
}

/// What is wrong with a rule's specifier (the part inside the parentheses).
#[derive(Debug, Clone, thiserror::Error)]
pub enum PatternError {
    /// `:*` before the end of a command pattern.
    #[error("':*' is allowed only at the end")]
    PrefixNotAtEnd,
    /// `:*` alone.
    #[error("a prefix rule needs a command before ':*'")]
    EmptyPrefix,
    /// `~/p` without a known home directory.
    #[error("'~/' needs a home directory, and none is known")]
    NoHome,
    /// Nothing left of the path pattern.
    #[error("the path pattern is empty")]
    EmptyPath,
    /// The pattern is not a glob.
    #[error("the path pattern is not a valid glob: {}", .0.kind())]
    Glob(#[source] globset::Error),
    /// The globs do not build into a set.
    #[error("the path pattern is not a valid glob: {0}")]
    GlobSet(#[source] globset::Error),
}

/// The tools a rule names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolClass {
    /// `Bash`: every tool that runs a shell command (`ToolSpec::command_param`).
    Shell,
    /// `Read`: every call that reads files (read-only calls with path parameters).
    Read,
    /// `Edit` (`Write`, `MultiEdit`, `NotebookEdit`): every call that writes files.
    Edit,
    /// `mcp__server` or `mcp__server__*`: every tool of that MCP server.
    McpServer(String),
    /// A tool by wire name or alias (`Subagent` for `Agent` and `Task`).
    Named(String),
}

/// The rule form that names one tool by its wire name: `Tool(NAME)` is `NAME`.
pub const TOOL_RULE: &str = "Tool";

/// A `Bash(...)` pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandPattern {
    /// `npm run build`: exactly that (whitespace collapsed).
    Exact(String),
    /// `npm run test:*`: that prefix at a word boundary.
    Prefix(String),
    /// `git * main`: `*` matches any run of characters.
    Wildcard(String),
}

/// What a rule's specifier matches.
#[derive(Debug, Clone)]
pub enum Specifier {
    /// No specifier: every call of the tools.
    Any,
    /// A shell command pattern.
    Command(CommandPattern),
    /// A path pattern, compiled to absolute globs.
    Path(Arc<GlobSet>),
    /// Another tool's specifier (a subagent type, a skill name); `*` is a wildcard.
    Value(String),
    /// `domain:HOST`: the host of the URL a tool reaches (`WebFetch(domain:example.com)`).
    Domain(DomainPattern),
}

/// One parsed rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The rule as written.
    pub text: String,
    /// The tools it names (the part before the parentheses).
    pub class: ToolClass,
    /// What it matches in a call of those tools (the part inside the parentheses).
    pub specifier: Specifier,
}

impl Rule {
    /// Parses `text` in Claude Code's syntax, resolving path patterns against `base`.
    pub fn parse(text: &str, base: &RuleBase) -> Result<Rule, RuleError> {
        let error = |why: &str| RuleError { rule: text.to_owned(), why: why.to_owned() };
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(error("the rule is empty; write a tool name such as Bash or Bash(npm test:*)"));
        }
        let (name, inner) = match trimmed.split_once('(') {
            Some((name, rest)) => {
                let Some(inner) = rest.strip_suffix(')') else {
                    return Err(error("a '(' without a closing ')' at the end"));
                };
                if inner.trim().is_empty() {
                    return Err(error(&format!("empty parentheses; write {name} alone to cover every call")));
                }
                (name.trim(), Some(inner.trim()))
            }
            None if trimmed.contains(')') => return Err(error("a ')' without an opening '('")),
            None => (trimmed, None),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '*') {
            return Err(error("the tool name may hold only letters, digits, '_' and '-'"));
        }
        // `Tool(NAME)`: the tool NAME itself, every call of it (the form the rules for the
        // tools defined in files take, docs/reference/tools.md#tools-defined-in-files).
        if name == TOOL_RULE {
            let named = inner.filter(|tool| {
                !tool.is_empty() && tool.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            });
            let Some(tool) = named else {
                return Err(error("write Tool(NAME) with the name of one tool (letters, digits, '_' and '-')"));
            };
            return Ok(Rule {
                text: trimmed.to_owned(),
                class: ToolClass::Named(tool.to_owned()),
                specifier: Specifier::Any,
            });
        }
        let class = match name {
            "Bash" | "bash" => ToolClass::Shell,
            "Read" => ToolClass::Read,
            "Edit" | "Write" | "MultiEdit" | "NotebookEdit" => ToolClass::Edit,
            "Agent" | "Task" | "Subagent" => ToolClass::Named("Subagent".to_owned()),
            _ if name.starts_with("mcp__") => {
                let rest = &name["mcp__".len()..];
                match rest.split_once("__") {
                    None if !rest.is_empty() => ToolClass::McpServer(rest.to_owned()),
                    Some((server, "*")) if !server.is_empty() => ToolClass::McpServer(server.to_owned()),
                    Some((server, tool)) if !server.is_empty() && !tool.is_empty() && !tool.contains('*') => {
                        ToolClass::Named(name.to_owned())
                    }
                    _ => return Err(error("write mcp__SERVER, mcp__SERVER__* or mcp__SERVER__TOOL")),
                }
            }
            _ if name.contains('*') => return Err(error("'*' in a tool name is allowed only as mcp__SERVER__*")),
            _ => ToolClass::Named(name.to_owned()),
        };
        let specifier = match (inner, &class) {
            (None, _) => Specifier::Any,
            (Some(_), ToolClass::McpServer(_)) => {
                return Err(error("an MCP server rule takes no parentheses; name the tool: mcp__SERVER__TOOL"));
            }
            (Some(inner), ToolClass::Shell) => {
                Specifier::Command(command_pattern(inner).map_err(|why| error(&why.to_string()))?)
            }
            (Some(inner), ToolClass::Read | ToolClass::Edit) => {
                Specifier::Path(Arc::new(path_pattern(inner, base).map_err(|why| error(&why.to_string()))?))
            }
            (Some(inner), ToolClass::Named(_)) => match inner.strip_prefix("domain:") {
                Some(host) => Specifier::Domain(DomainPattern::parse(host).map_err(|why| error(&why))?),
                None => Specifier::Value(inner.to_owned()),
            },
        };
        Ok(Rule { text: trimmed.to_owned(), class, specifier })
    }
}

fn command_pattern(inner: &str) -> Result<CommandPattern, PatternError> {
    let collapsed = inner.split_whitespace().collect::<Vec<_>>().join(" ");
    if let Some(prefix) = collapsed.strip_suffix(":*") {
        if prefix.contains(":*") {
            return Err(PatternError::PrefixNotAtEnd);
        }
        if prefix.trim().is_empty() {
            return Err(PatternError::EmptyPrefix);
        }
        return Ok(CommandPattern::Prefix(prefix.trim_end().to_owned()));
    }
    if collapsed.contains(":*") {
        return Err(PatternError::PrefixNotAtEnd);
    }
    Ok(if collapsed.contains('*') { CommandPattern::Wildcard(collapsed) } else { CommandPattern::Exact(collapsed) })
}

impl CommandPattern {
    /// Whether `command` (a normalized sub-command) matches.
    pub fn matches(&self, command: &str) -> bool {
        match self {
            CommandPattern::Exact(exact) => command == exact,
            CommandPattern::Prefix(prefix) => {
                command.strip_prefix(prefix.as_str()).is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
            }
            CommandPattern::Wildcard(pattern) => crate::wildcard::matches(pattern, command),
        }
    }

    /// Whether the pattern matches a sub-command that starts at any word of `text` (deny
    /// rules against the raw text of an unanalyzable command).
    pub fn matches_anywhere(&self, text: &str) -> bool {
        let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let starts = std::iter::once(0)
            .chain(collapsed.match_indices([' ', ';', '&', '|', '(', '`', '\'', '"']).map(|(i, _)| i + 1));
        starts.filter_map(|i| collapsed.get(i..)).any(|tail| {
            let tail = tail.trim_start_matches(|c: char| !c.is_ascii_alphanumeric() && c != '/' && c != '.');
            match self {
                CommandPattern::Exact(exact) => tail.starts_with(exact.as_str()),
                _ => self.matches(tail) || CommandPattern::Wildcard(format!("{}*", self.text())).matches(tail),
            }
        })
    }

    fn text(&self) -> &str {
        match self {
            CommandPattern::Exact(t) | CommandPattern::Prefix(t) | CommandPattern::Wildcard(t) => t,
        }
    }
}

impl CommandPattern {
    /// The first word every command the pattern matches starts with (up to the first
    /// space), when the pattern fixes it: what the rule book indexes command rules by.
    pub fn program(&self) -> Option<&str> {
        let head = match self {
            CommandPattern::Exact(text) | CommandPattern::Prefix(text) => text.as_str(),
            CommandPattern::Wildcard(text) => {
                let head = &text[..text.find('*').unwrap_or(text.len())];
                if !head.contains(' ') {
                    return None;
                }
                head
            }
        };
        Some(first_word(head))
    }
}

/// `text` up to its first space.
pub fn first_word(text: &str) -> &str {
    text.split(' ').next().unwrap_or(text)
}

/// A gitignore-style path pattern as absolute globs: `//abs`, `~/p`, `/p` (from the rule's
/// file), `p` or `./p` (from the workspace); a pattern without a `/` matches at any depth,
/// and a pattern that names a directory covers everything below it.
fn path_pattern(inner: &str, base: &RuleBase) -> Result<GlobSet, PatternError> {
    let (root, pattern) = if let Some(abs) = inner.strip_prefix("//") {
        (PathBuf::from("/"), abs.to_owned())
    } else if let Some(home) = inner.strip_prefix("~/") {
        let Some(dir) = &base.home else { return Err(PatternError::NoHome) };
        (dir.clone(), home.to_owned())
    } else if let Some(rel) = inner.strip_prefix('/') {
        (base.rule_dir.clone(), rel.to_owned())
    } else {
        let rel = inner.strip_prefix("./").unwrap_or(inner);
        let trimmed = rel.trim_end_matches('/');
        if trimmed.contains('/') || inner.starts_with("./") {
            (base.workspace.clone(), rel.to_owned())
        } else {
            (base.workspace.clone(), format!("**/{rel}"))
        }
    };
    let pattern = pattern.trim_end_matches('/');
    if pattern.is_empty() {
        return Err(PatternError::EmptyPath);
    }
    let root = escape_glob(&root.to_string_lossy());
    let full = format!("{}/{pattern}", root.trim_end_matches('/'));
    let mut set = GlobSetBuilder::new();
    for glob in [full.clone(), format!("{full}/**")] {
        let glob = GlobBuilder::new(&glob)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(PatternError::Glob)?;
        set.add(glob);
    }
    set.build().map_err(PatternError::GlobSet)
}

/// `text` with glob metacharacters made literal.
pub fn escape_glob(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            out.push('[');
            out.push(c);
            out.push(']');
        } else {
            out.push(c);
        }
    }
    out
}

/// `path` made absolute against `workspace` and cleaned of `.` and `..`, without touching
/// the file system.
pub fn absolute(path: &str, workspace: &Path) -> PathBuf {
    let joined = if Path::new(path).is_absolute() { PathBuf::from(path) } else { workspace.join(path) };
    let mut out = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> RuleBase {
        RuleBase { workspace: "/ws".into(), rule_dir: "/ws/sub".into(), home: Some("/home/u".into()) }
    }

    fn path_rule(rule: &str, path: &str) -> bool {
        match Rule::parse(rule, &base()).unwrap().specifier {
            Specifier::Path(set) => set.is_match(path),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn command_patterns_match_as_claude_code_documents() {
        let pattern = |s: &str| command_pattern(s).unwrap();
        assert!(pattern("npm run test:*").matches("npm run test"));
        assert!(pattern("npm run test:*").matches("npm run test --watch"));
        assert!(!pattern("npm run test:*").matches("npm run testing"));
        assert!(pattern("git * main").matches("git push origin main"));
        assert!(!pattern("git * main").matches("git push origin main2"));
        assert!(pattern("npm  run build").matches("npm run build"));
        assert!(!pattern("npm run build").matches("npm run build --prod"));
        assert!(pattern("rm -rf:*").matches_anywhere("eval 'rm -rf /'"));
        assert!(command_pattern("a:*b").is_err());
        assert_eq!(pattern("git * main").program(), Some("git"));
        assert_eq!(pattern("npm run test:*").program(), Some("npm"));
        assert_eq!(pattern("gi*").program(), None);
    }

    #[test]
    fn tool_of_a_name_is_that_tool_alone() {
        let rule = Rule::parse("Tool(count_words)", &base()).unwrap();
        assert_eq!(rule.class, ToolClass::Named("count_words".into()));
        assert!(matches!(rule.specifier, Specifier::Any));
        assert_eq!(rule.text, "Tool(count_words)");
        let why = |rule: &str| Rule::parse(rule, &base()).unwrap_err().why;
        let expected = "write Tool(NAME) with the name of one tool (letters, digits, '_' and '-')";
        for bad in ["Tool", "Tool(a b)", "Tool(*)", "Tool(Bash(ls))"] {
            assert_eq!(why(bad), expected, "{bad}");
        }
    }

    #[test]
    fn a_bad_specifier_is_named_in_the_rule_error() {
        let why = |rule: &str, base: &RuleBase| Rule::parse(rule, base).unwrap_err().why;
        assert_eq!(why("Bash(a:*b)", &base()), "':*' is allowed only at the end");
        assert_eq!(why("Bash(a:* b:*)", &base()), "':*' is allowed only at the end");
        assert_eq!(why("Bash( :*)", &base()), "a prefix rule needs a command before ':*'");
        assert_eq!(why("Read(./)", &base()), "the path pattern is empty");
        let homeless = RuleBase { home: None, ..base() };
        assert_eq!(why("Read(~/x)", &homeless), "'~/' needs a home directory, and none is known");
        assert!(matches!(path_pattern("a[", &base()), Err(PatternError::Glob(_))));
        assert!(
            why("Edit(a[)", &base()).starts_with("the path pattern is not a valid glob: "),
            "{}",
            why("Edit(a[)", &base())
        );
    }

    #[test]
    fn path_patterns_resolve_like_gitignore() {
        assert!(path_rule("Read(./.env)", "/ws/.env"));
        assert!(!path_rule("Read(./.env)", "/ws/sub/.env"));
        assert!(path_rule("Read(.env)", "/ws/sub/.env"));
        assert!(path_rule("Read(*.pem)", "/ws/a/b/key.pem"));
        assert!(path_rule("Edit(src/**)", "/ws/src/a/b.rs"));
        assert!(path_rule("Edit(src)", "/ws/src/a/b.rs"));
        assert!(!path_rule("Edit(src/*.rs)", "/ws/src/a/b.rs"));
        assert!(path_rule("Read(/secrets)", "/ws/sub/secrets/x"));
        assert!(path_rule("Read(~/.ssh/**)", "/home/u/.ssh/id_rsa"));
        assert!(path_rule("Read(//etc/passwd)", "/etc/passwd"));
        assert_eq!(absolute("a/../.env", Path::new("/ws")), PathBuf::from("/ws/.env"));
    }

    #[test]
    fn malformed_rules_say_what_is_wrong() {
        for (rule, why) in [
            ("", "empty"),
            ("Bash(", "closing"),
            ("Bash()", "empty parentheses"),
            ("Bash(a:*b)", "only at the end"),
            ("mcp__git(x)", "no parentheses"),
            ("Ba sh", "letters"),
            ("mcp__", "mcp__SERVER"),
            ("Edit([)", "glob"),
        ] {
            let err = Rule::parse(rule, &base()).unwrap_err();
            assert!(err.to_string().contains(why), "{rule}: {err}");
        }
    }
}
