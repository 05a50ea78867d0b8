//! The narrowest rules that allow a call: what an "always" answer of the terminal approver
//! keeps, and what a denial message suggests (docs/reference/safety.md#approvers).
//!
//! A person who answers "always" reads the rule in the prompt and allows exactly that, so
//! a rule must be no wider than it reads:
//! - a shell command gets one rule per sub-command that does not only read: `Bash(git
//!   push:*)` for the sub-commands of the tools in [`SUBCOMMAND_PROGRAMS`] (their second
//!   word names what they do), the sub-command exactly as written otherwise (`Bash(rm -rf
//!   build)`, never `Bash(rm:*)`); an unanalyzable command, one that changes the shell
//!   itself, or one that redirects output to a file (only the whole tool covers that,
//!   `permission/rules.rs`), gets none;
//! - a file edit gets the directory of each file it writes (`Edit(src/parser/**)`), and a
//!   file at the workspace root only itself (`Edit(./Cargo.toml)`, never `Edit(**)`);
//! - a tool that reaches a URL gets its host (`WebFetch(domain:example.com)`);
//! - any other tool gets its name.
//!
//! Every rule offered is checked to allow the very call it was made for
//! ([`RuleBook::evaluate`]); when that fails (a `*` in a command, a path a glob cannot
//! spell), no rule is offered and the person can still allow the call once.

use std::path::Path;

use serde_json::Value;

use super::PermissionRequest;
use super::rule::{RuleBase, absolute, escape_glob};
use super::rules::{Outcome, RuleBook, RuleKind};
use crate::shell::{SubCommand, analyze, is_safe_command};
use tackle_core::spec::PathAccess;

/// Programs whose second word names a sub-command (`git push`, `cargo test`): their rule
/// keeps that word and allows any arguments after it.
const SUBCOMMAND_PROGRAMS: &[&str] = &[
    "bun",
    "bundle",
    "cargo",
    "composer",
    "deno",
    "docker",
    "dotnet",
    "gh",
    "git",
    "go",
    "gradle",
    "helm",
    "just",
    "kubectl",
    "make",
    "mvn",
    "npm",
    "pip",
    "pip3",
    "pnpm",
    "podman",
    "poetry",
    "rustup",
    "terraform",
    "uv",
    "yarn",
];

/// Whether `program` is a Python interpreter (`python`, `python3`, `python3.12`), whose `-m
/// MODULE` names what it runs (`Bash(python3 -m pytest:*)`, as Claude Code offers).
fn is_python(program: &str) -> bool {
    program.strip_prefix("python").is_some_and(|version| version.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
}

/// Sub-commands that run a named script or package: the name is kept too (`Bash(npm run
/// test:*)`, not every script of the package).
const RUNNERS: &[&str] = &["run", "run-script", "exec", "x", "dlx"];

/// The rules an "always" answer keeps for `request` in `workspace`, or `None` when no rule
/// narrow enough allows it (the call can still be allowed once).
pub fn always_rules(request: &PermissionRequest<'_>, workspace: &Path) -> Option<Vec<String>> {
    let rules = if let Some(command) = request.spec.command(request.args) {
        command_rules(command)?
    } else if request.is_file_edit() {
        edit_rules(request, workspace)?
    } else if let Some(param) = request.spec.url_param.as_deref() {
        // A tool that reaches a URL: its host, never the whole tool (asked per domain).
        let host = super::domain::url_host(request.args.get(param).and_then(Value::as_str)?)?;
        vec![format!("{}(domain:{host})", request.spec.claude_name())]
    } else {
        vec![request.spec.claude_name().to_owned()]
    };
    allows(&rules, request, workspace).then_some(rules)
}

/// One rule per sub-command of `command` that does not only read; `None` for a command no
/// rule can allow.
pub fn command_rules(command: &str) -> Option<Vec<String>> {
    let analysis = analyze(command);
    if analysis.unanalyzable.is_some()
        || analysis.changes_shell
        || analysis.writes_files
        || analysis.commands.is_empty()
    {
        return None;
    }
    let mut rules: Vec<String> = Vec::new();
    for sub in &analysis.commands {
        // A leading assignment to a name off the harmless list makes no sub-command read-only.
        if analysis.may_be_read_only() && is_safe_command(&sub.words) {
            continue;
        }
        let rule = sub_command_rule(sub)?;
        if !rules.contains(&rule) {
            rules.push(rule);
        }
    }
    // A command that only reads is allowed without a rule; the first sub-command stands for it.
    if rules.is_empty() {
        rules.push(sub_command_rule(&analysis.commands[0])?);
    }
    Some(rules)
}

fn sub_command_rule(sub: &SubCommand) -> Option<String> {
    let plain = |w: &String| {
        w.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':'))
            && w.starts_with(|c: char| c.is_ascii_alphanumeric())
    };
    let words = &sub.words;
    let has_sub_commands = words.first().is_some_and(|p| SUBCOMMAND_PROGRAMS.contains(&p.as_str()));
    let runs_a_script = words.get(1).is_some_and(|sub| RUNNERS.contains(&sub.as_str()));
    // `python3 -m pytest`, and `python3 -m pip install` for a module with sub-commands.
    let runs_a_module = words.first().is_some_and(|p| is_python(p))
        && words.get(1).is_some_and(|flag| flag == "-m")
        && words.get(2).is_some_and(plain);
    let module_sub_command = runs_a_module
        && words.get(2).is_some_and(|module| SUBCOMMAND_PROGRAMS.contains(&module.as_str()))
        && words.get(3).is_some_and(|sub| plain(sub) && !sub.starts_with('-'));
    let prefix_len = match (words.get(1), words.get(2)) {
        _ if module_sub_command => 4,
        _ if runs_a_module => 3,
        (Some(_), Some(name)) if has_sub_commands && runs_a_script && plain(name) => 3,
        (Some(sub), _) if has_sub_commands && !runs_a_script && plain(sub) => 2,
        _ => 0,
    };
    let rule = if prefix_len > 0 {
        format!("Bash({}:*)", words[..prefix_len].join(" "))
    } else {
        // Exactly as written: a `*` would read as a wildcard, a control character hides
        // what the rule says.
        if sub.text.contains('*') || sub.text.chars().any(char::is_control) {
            return None;
        }
        format!("Bash({})", sub.text)
    };
    Some(rule)
}

/// The directory of each file `request` writes, relative to `workspace` when inside it.
fn edit_rules(request: &PermissionRequest<'_>, workspace: &Path) -> Option<Vec<String>> {
    let params = request.spec.path_params.iter().filter(|p| p.access == PathAccess::Write);
    let paths = params.filter_map(|p| request.args.get(&p.name).and_then(Value::as_str));
    let mut rules: Vec<String> = Vec::new();
    for path in paths.chain(request.written_paths.iter().map(String::as_str)) {
        let file = absolute(path, workspace);
        let rule = match file.strip_prefix(workspace) {
            Ok(relative) => match relative.parent().filter(|d| !d.as_os_str().is_empty()) {
                Some(dir) => format!("Edit({}/**)", escape_glob(dir.to_str()?)),
                None => format!("Edit(./{})", escape_glob(relative.to_str()?)),
            },
            // An absolute directory is written `//abs` (a leading `/` is relative to the file
            // holding the rule).
            Err(_) => format!("Edit(/{}/**)", escape_glob(file.parent()?.to_str()?)),
        };
        if !rules.contains(&rule) {
            rules.push(rule);
        }
    }
    (!rules.is_empty()).then_some(rules)
}

/// Whether `rules` allow `request`.
fn allows(rules: &[String], request: &PermissionRequest<'_>, workspace: &Path) -> bool {
    let book = RuleBook::default();
    let base = RuleBase { workspace: workspace.to_owned(), rule_dir: workspace.to_owned(), home: None };
    rules.iter().all(|rule| book.add(RuleKind::Allow, rule, &base, "suggested").is_ok())
        && matches!(book.evaluate(request, workspace).outcome, Outcome::Allow { rules } if !rules.is_empty())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use tackle_core::spec::ToolSpec;

    fn bash() -> ToolSpec {
        ToolSpec::new("bash", "").alias("Bash").command_param("command")
    }

    fn request<'a>(spec: &'a ToolSpec, args: &'a Value, written: &'a [String]) -> PermissionRequest<'a> {
        PermissionRequest { call_id: "c", spec, args, read_only: false, written_paths: written, preview: None }
    }

    fn for_command(command: &str) -> Option<Vec<String>> {
        let args = json!({ "command": command });
        always_rules(&request(&bash(), &args, &[]), Path::new("/ws"))
    }

    #[test]
    fn a_command_gets_its_sub_command_or_itself_never_its_program_alone() {
        let one = |c: &str| for_command(c).map(|r| r.join(", "));
        assert_eq!(one("git push origin main").as_deref(), Some("Bash(git push:*)"));
        assert_eq!(one("cargo test --all").as_deref(), Some("Bash(cargo test:*)"));
        assert_eq!(one("npm run test:unit -- --watch").as_deref(), Some("Bash(npm run test:unit:*)"));
        // Not a sub-command tool, or a flag where the sub-command would be: exactly as written.
        assert_eq!(one("rm -rf tmp/x").as_deref(), Some("Bash(rm -rf tmp/x)"));
        assert_eq!(one("git -C /elsewhere push").as_deref(), Some("Bash(git -C /elsewhere push)"));
        assert_eq!(one("/usr/bin/make install").as_deref(), Some("Bash(/usr/bin/make install)"));
        assert_eq!(one("FOO=1 ./build.sh --fast").as_deref(), Some("Bash(./build.sh --fast)"));
        // Each part that does not only read; the reading parts need no rule.
        assert_eq!(
            one("git add -A && git commit -m 'x y' && ls").as_deref(),
            Some("Bash(git add:*), Bash(git commit:*)")
        );
        assert_eq!(one("ls -la").as_deref(), Some("Bash(ls -la)"));
    }

    #[test]
    fn a_python_module_gets_its_module_never_the_interpreter_alone() {
        let one = |c: &str| for_command(c).map(|r| r.join(", "));
        assert_eq!(one("python3 -m pytest -q").as_deref(), Some("Bash(python3 -m pytest:*)"));
        assert_eq!(one("python3.12 -m mypy src").as_deref(), Some("Bash(python3.12 -m mypy:*)"));
        assert_eq!(one("python -m pip install requests").as_deref(), Some("Bash(python -m pip install:*)"));
        // Not a module run: exactly as written, never `Bash(python3:*)`.
        assert_eq!(one("python3 -c 'import os'").as_deref(), Some("Bash(python3 -c 'import os')"));
        assert_eq!(one("python3 script.py --fix").as_deref(), Some("Bash(python3 script.py --fix)"));
        assert_eq!(one("python3 -m").as_deref(), Some("Bash(python3 -m)"));
        assert_eq!(one("pythonista -m x").as_deref(), Some("Bash(pythonista -m x)"));
        // The module rule allows the module only, not another one or a command joined on.
        let args = json!({"command": "python3 -m pytest -q"});
        let rules = always_rules(&request(&bash(), &args, &[]), Path::new("/ws")).unwrap();
        let book = RuleBook::default();
        let base = RuleBase { workspace: "/ws".into(), rule_dir: "/ws".into(), home: None };
        book.add(RuleKind::Allow, &rules[0], &base, "test").unwrap();
        for other in ["python3 -m http.server", "python3 -m pytest; rm -rf ~", "python3 -c 'x' -m pytest"] {
            let args = json!({ "command": other });
            let verdict = book.evaluate(&request(&bash(), &args, &[]), Path::new("/ws"));
            assert!(!matches!(verdict.outcome, Outcome::Allow { .. }), "{other}");
        }
    }

    #[test]
    fn no_rule_for_what_no_rule_can_say() {
        for command in ["eval \"$X\"", "rm *.o", "f() { rm -rf /; }; f", "x=$(date)", "echo 'a\u{7}b' | wc"] {
            assert_eq!(for_command(command), None, "{command}");
        }
        // Nor for output to a file, which no `Bash(...)` rule covers; denial messages say so.
        assert_eq!(command_rules("npm test > out.txt"), None);
    }

    #[test]
    fn an_edit_gets_its_directory_and_a_root_file_only_itself() {
        let write = ToolSpec::new("write_file", "").edits_files().path_param("file_path", PathAccess::Write);
        let rules = |path: &str| {
            let args = json!({ "file_path": path });
            always_rules(&request(&write, &args, &[]), Path::new("/ws"))
        };
        assert_eq!(rules("src/parser/a.rs"), Some(vec!["Edit(src/parser/**)".to_owned()]));
        assert_eq!(rules("Cargo.toml"), Some(vec!["Edit(./Cargo.toml)".to_owned()]));
        assert_eq!(rules("/ws/./docs/../README.md"), Some(vec!["Edit(./README.md)".to_owned()]));
        assert_eq!(rules("/etc/hosts"), Some(vec!["Edit(//etc/**)".to_owned()]));
        assert_eq!(rules("src/[gen]/a*.rs"), Some(vec!["Edit(src/[[]gen[]]/**)".to_owned()]));
        // Every file a multi-file patch writes.
        let patch = ToolSpec::new("apply_patch", "").edits_files();
        let written = ["a.txt".to_owned(), "lib/b.rs".to_owned()];
        let args = json!({});
        assert_eq!(
            always_rules(&request(&patch, &args, &written), Path::new("/ws")),
            Some(vec!["Edit(./a.txt)".to_owned(), "Edit(lib/**)".to_owned()])
        );
    }
}
