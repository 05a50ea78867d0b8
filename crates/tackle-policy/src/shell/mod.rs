//! What a shell command runs, for permission rules and the read-only list
//! (docs/reference/safety.md#compound-shell-commands).
//!
//! The command is parsed with tree-sitter-bash and split into the simple commands it runs: at
//! `&&`, `||`, `;`, `|`, `|&`, `&` and newlines, inside `( … )`, `{ …; }`, `$( … )`,
//! backticks, `<( … )`, `>( … )`, function bodies and control structures, through the scripts
//! of `bash -c` (and the other shells) and the commands of `find -exec`. Each is normalized:
//! leading assignments and wrapper programs removed ([`wrappers`]), words unquoted ([`words`]).
//! What the analysis cannot see through (`eval`, `source`, a parse error, a program name from
//! an expansion, a shell reading its standard input, an unknown wrapper option, the places
//! where tree-sitter-bash and bash read a command differently, what bash evaluates as
//! arithmetic) makes the command *unanalyzable*: no allow rule covers it, and any `Bash(...)`
//! deny rule denies it (docs/reference/safety.md#threat-model). The differential harness of
//! `crates/tackle-policy/tests/all/hostile_commands/differential.rs` checks it against real bash.

mod assignments;
mod options;
mod readonly;
mod words;
mod wrappers;

use std::cell::RefCell;

use tree_sitter::{Node, Parser};

pub use self::readonly::is_safe_command;
pub use self::wrappers::program_name;

/// The longest command analyzed, in bytes; a longer one is unanalyzable.
pub const MAX_COMMAND_BYTES: usize = 256 * 1024;

/// How deep the syntax tree (and `bash -c` nesting) may go before the command is unanalyzable.
const MAX_DEPTH: usize = 200;

/// One simple command a shell command runs, normalized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubCommand {
    /// The words after quote removal, wrappers and leading assignments removed.
    pub words: Vec<String>,
    /// The words joined by single spaces (a word holding whitespace in single quotes): what
    /// `Bash(...)` rules match.
    pub text: String,
    /// Further texts only deny and ask rules match: the command with its wrappers still on,
    /// without `sudo`, with `/bin/rm` as `rm`, and unquoted.
    pub deny_texts: Vec<String>,
}

/// The analysis of one shell command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Analysis {
    /// The simple commands, in source order.
    pub commands: Vec<SubCommand>,
    /// Why the command cannot be analyzed, if it cannot.
    pub unanalyzable: Option<String>,
    /// Output goes to a file other than `/dev/null`.
    pub writes_files: bool,
    /// The command changes the shell itself (assignments, functions, control structures,
    /// assigning expansions): never read-only.
    pub changes_shell: bool,
    /// A leading assignment (`FOO=1 cmd`, `env FOO=1 cmd`) to a name not on the harmless
    /// list ([`assignments`]): never read-only.
    pub sets_environment: bool,
}

impl Analysis {
    /// Whether the command only reads (docs/reference/safety.md#read-only-shell-commands):
    /// analyzable, every sub-command on the safe list, no output to files, nothing that changes
    /// the shell.
    pub fn is_read_only(&self) -> bool {
        self.may_be_read_only() && !self.commands.is_empty() && self.commands.iter().all(|c| is_safe_command(&c.words))
    }

    /// Whether a sub-command on the safe list may count as only reading: the command is
    /// analyzable, writes no file, does not change the shell and sets no environment variable
    /// but a harmless one.
    pub fn may_be_read_only(&self) -> bool {
        self.unanalyzable.is_none() && !self.writes_files && !self.changes_shell && !self.sets_environment
    }
}

thread_local! {
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
    /// The last command analyzed on this thread, and its analysis: each call's command is
    /// analyzed by its tool (does it only read?) and then by the rules, one after the other.
    static LAST: RefCell<Option<(String, Analysis)>> = const { RefCell::new(None) };
}

/// Commands up to this length are remembered by [`analyze`] for the next look at them.
const REMEMBERED_BYTES: usize = 4096;

/// Analyzes `command`.
pub fn analyze(command: &str) -> Analysis {
    let remembered = LAST
        .with(|last| last.borrow().as_ref().filter(|(text, _)| text == command).map(|(_, analysis)| analysis.clone()));
    if let Some(analysis) = remembered {
        return analysis;
    }
    let mut analysis = Analysis::default();
    parse_into(command, 0, &mut analysis);
    if command.len() <= REMEMBERED_BYTES {
        LAST.with(|last| *last.borrow_mut() = Some((command.to_owned(), analysis.clone())));
    }
    analysis
}

/// Whether `command` only reads (see [`Analysis::is_read_only`]).
pub fn is_read_only(command: &str) -> bool {
    analyze(command).is_read_only()
}

fn parse_into(command: &str, depth: usize, analysis: &mut Analysis) {
    if command.len() > MAX_COMMAND_BYTES {
        analysis.unanalyzable = Some(format!("the command is longer than {MAX_COMMAND_BYTES} bytes"));
        return;
    }
    let tree = PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = Parser::new();
            parser.set_language(&tree_sitter_bash::LANGUAGE.into()).ok()?;
            *slot = Some(parser);
        }
        slot.as_mut()?.parse(command, None)
    });
    let Some(tree) = tree else {
        analysis.unanalyzable = Some("the shell parser is unavailable".to_owned());
        return;
    };
    let root = tree.root_node();
    if root.has_error() {
        analysis.unanalyzable = Some("the command does not parse".to_owned());
        return;
    }
    if let Some(why) = continuation_inside_word(command) {
        analysis.unanalyzable = Some(why.to_owned());
        return;
    }
    Walker { source: command, analysis }.walk(root, depth);
}

struct Walker<'s, 'a> {
    source: &'s str,
    analysis: &'a mut Analysis,
}

impl Walker<'_, '_> {
    fn text(&self, node: Node<'_>) -> &str {
        self.source.get(node.byte_range()).unwrap_or("")
    }

    fn unanalyzable(&mut self, why: impl Into<String>) {
        if self.analysis.unanalyzable.is_none() {
            self.analysis.unanalyzable = Some(why.into());
        }
    }

    fn walk(&mut self, node: Node<'_>, depth: usize) {
        if depth > MAX_DEPTH {
            self.unanalyzable(format!("the command nests deeper than {MAX_DEPTH} levels"));
            return;
        }
        if node.is_error() || node.is_missing() {
            self.unanalyzable("the command does not parse");
            return;
        }
        match node.kind() {
            "command" => return self.command(node, depth),
            "variable_assignment" | "variable_assignments" | "declaration_command" | "unset_command" => {
                // `export LANG=C` changes only what a read-only command may change: the
                // restricted child reports harmless exports back to the shell (docs/shell.md).
                // Its assignments are part of that one sub-command.
                let harmless_export = self.exports_only_harmless_names(node)
                    || (node.kind() == "variable_assignment"
                        && node.parent().is_some_and(|parent| self.exports_only_harmless_names(parent)));
                if !harmless_export {
                    self.analysis.changes_shell = true;
                }
                self.check_assigned_names(node);
                if node.kind() != "variable_assignment" || !harmless_export {
                    let words = self.plain_words(node);
                    self.push(words);
                }
            }
            "function_definition"
            | "for_statement"
            | "while_statement"
            | "if_statement"
            | "case_statement"
            | "negated_command" => {
                self.analysis.changes_shell = true;
            }
            "test_command" => {
                if let Some(why) = self.evaluating_test(node) {
                    self.unanalyzable(why);
                }
                let words = self.plain_words(node);
                self.push(words);
            }
            "expansion" => {
                if self.text(node).contains('`') {
                    // Backticks inside `${x:-…}` (in double quotes above all) run in bash but
                    // are text to the grammar.
                    self.unanalyzable("backticks inside a `${…}` expansion");
                }
                if self.text(node).contains("@P") {
                    self.unanalyzable("a `${x@P}` expansion, which runs the substitutions in a variable's value");
                }
                if self.text(node).starts_with("${!") {
                    self.unanalyzable("an indirect expansion `${!…}` evaluates a variable's value");
                }
                let mut cursor = node.walk();
                let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
                if children.iter().any(|c| matches!(c.kind(), "=" | ":=")) {
                    self.analysis.changes_shell = true;
                }
                // `${x:offset:length}` evaluates its offset as arithmetic.
                if let Some(colon) = children.iter().position(|c| c.kind() == ":")
                    && children[colon + 1..].iter().any(|c| c.is_named() && !self.is_number(*c))
                {
                    self.unanalyzable("a `${x:offset}` expansion evaluates its offset as arithmetic");
                }
            }
            "subscript" => {
                // An indexed array's subscript is arithmetic, which runs `$( … )` held in a
                // variable's value (`a[$i]` with `i='b[$(rm v)]'`).
                let index = node.child_by_field_name("index");
                if index.is_some_and(|i| !self.is_number(i) && !matches!(self.text(i), "@" | "*")) {
                    self.unanalyzable("an array subscript that is not a number");
                }
            }
            "command_substitution" => {
                let text = self.text(node);
                if text.starts_with('`') && text[1..].contains("\\`") {
                    self.unanalyzable("nested backticks");
                }
            }
            "compound_statement" if self.text(node).starts_with("((") && self.arithmetic_reads_variables(node) => {
                self.unanalyzable("arithmetic on a variable, whose value may hold a command");
            }
            "c_style_for_statement" => {
                self.analysis.changes_shell = true;
                self.unanalyzable("arithmetic on a variable, whose value may hold a command");
            }
            "arithmetic_expansion" => {
                if self.arithmetic_reads_variables(node) {
                    self.unanalyzable("arithmetic on a variable, whose value may hold a command");
                }
                let text = self.text(node).replace(['=', '!', '<', '>'], "");
                if text.len() != self.text(node).len()
                    || self.text(node).contains("++")
                    || self.text(node).contains("--")
                {
                    self.analysis.changes_shell = true;
                }
            }
            "file_redirect" => self.redirect(node),
            "heredoc_redirect" => {
                if let Some(why) = self.odd_heredoc_delimiter(node) {
                    self.unanalyzable(why);
                }
                self.heredoc_backticks(node, depth);
            }
            _ => {}
        }
        self.walk_children(node, depth + 1);
    }

    /// Walks the named children of `node` (a leaf, most nodes, costs no cursor).
    fn walk_children(&mut self, node: Node<'_>, depth: usize) {
        if node.named_child_count() == 0 {
            return;
        }
        let mut cursor = node.walk();
        if !cursor.goto_first_child() {
            return;
        }
        loop {
            let child = cursor.node();
            if child.is_named() {
                self.walk(child, depth);
            }
            if !cursor.goto_next_sibling() {
                break;
            }
        }
    }

    /// Marks an output redirection to anything but `/dev/null`, `/dev/stdout`, `/dev/stderr`
    /// (or a descriptor).
    fn redirect(&mut self, node: Node<'_>) {
        let mut cursor = node.walk();
        let mut writes = false;
        let mut duplicates = false;
        let mut destination = None;
        for child in node.children(&mut cursor) {
            match child.kind() {
                ">" | ">>" | "&>" | "&>>" | ">|" | "<>" => writes = true,
                ">&" | "<&" | ">&-" | "<&-" => {
                    writes = true;
                    duplicates = true;
                }
                "file_descriptor" => {}
                _ if child.is_named() => destination = Some(words::word_value(child, self.source)),
                _ => {}
            }
        }
        let Some(destination) = destination else { return };
        // Bash opens `/dev/tcp/HOST/PORT` and `/dev/udp/…` as network connections, reading or
        // writing: never read-only.
        if destination.text.starts_with("/dev/tcp/") || destination.text.starts_with("/dev/udp/") {
            self.analysis.writes_files = true;
        }
        let to_descriptor = duplicates && (destination.text == "-" || destination.text.parse::<u32>().is_ok());
        // The shell's own output streams are not files.
        let stream =
            !destination.dynamic && matches!(destination.text.as_str(), "/dev/null" | "/dev/stdout" | "/dev/stderr");
        if writes && !to_descriptor && !stream {
            self.analysis.writes_files = true;
        }
    }

    /// Backticks in the body of an unquoted heredoc run commands, but the grammar leaves them
    /// as text: each backtick segment is parsed as a command.
    fn heredoc_backticks(&mut self, node: Node<'_>, depth: usize) {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        let quoted = children
            .iter()
            .find(|c| c.kind() == "heredoc_start")
            .is_some_and(|start| self.text(*start).contains(['\'', '"', '\\']));
        if quoted {
            return;
        }
        let source = self.source;
        for body in children.iter().filter(|c| c.kind() == "heredoc_body") {
            let text = source.get(body.byte_range()).unwrap_or("");
            if let Some(why) = heredoc_evaluates(text) {
                self.unanalyzable(why);
            }
            let mut segments = Vec::new();
            let mut current: Option<String> = None;
            let mut chars = text.chars();
            while let Some(c) = chars.next() {
                match (c, current.as_mut()) {
                    ('\\', Some(segment)) => {
                        segment.push(c);
                        segment.extend(chars.next());
                    }
                    ('\\', None) => {
                        chars.next();
                    }
                    ('`', Some(_)) => segments.extend(current.take()),
                    ('`', None) => current = Some(String::new()),
                    (_, Some(segment)) => segment.push(c),
                    (_, None) => {}
                }
            }
            if current.is_some() {
                self.unanalyzable("an unterminated backtick in a heredoc");
            }
            for segment in segments {
                parse_into(&segment, depth + 10, self.analysis);
            }
        }
    }

    /// The values of a node's word children (for assignments and declarations).
    fn plain_words(&self, node: Node<'_>) -> Vec<String> {
        let mut cursor = node.walk();
        let mut words = vec![];
        for child in node.children(&mut cursor) {
            match child.kind() {
                "variable_assignment" => words.push(self.text(child).to_owned()),
                kind if child.is_named() && kind != "comment" => words.push(words::word_value(child, self.source).text),
                kind => words.push(kind.to_owned()),
            }
        }
        if words.is_empty() {
            words.push(self.text(node).to_owned());
        }
        words
    }

    fn command(&mut self, node: Node<'_>, depth: usize) {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        let mut words = Vec::new();
        let mut dynamic = Vec::new();
        let mut name_seen = false;
        for child in &children {
            match child.kind() {
                "variable_assignment" | "file_redirect" | "herestring_redirect" | "heredoc_redirect" | "comment" => {}
                "command_name" => {
                    name_seen = true;
                    let mut inner = child.walk();
                    let value = match child.named_children(&mut inner).next() {
                        Some(word) => words::word_value(word, self.source),
                        None => words::word_value(*child, self.source),
                    };
                    if value.dynamic {
                        self.unanalyzable(format!("the program name `{}` comes from an expansion", value.text));
                    } else if !value.text.is_ascii() {
                        self.unanalyzable(format!("the program name `{}` is not plain ASCII", value.text));
                    } else if !value.quoted && matches!(value.text.as_str(), "[[" | "((") {
                        self.analysis.changes_shell = true;
                    }
                    dynamic.push(value.dynamic);
                    words.push(value.text);
                }
                _ if name_seen => {
                    let value = words::word_value(*child, self.source);
                    dynamic.push(value.dynamic);
                    words.push(value.text);
                }
                _ => {}
            }
        }
        if !words.is_empty() {
            for child in &children {
                if child.kind() == "variable_assignment" {
                    self.leading_assignment(*child);
                }
            }
            if let Some(why) = names_a_variable(&words, &dynamic) {
                self.unanalyzable(why);
            }
            self.push_peeled(&words, &dynamic, depth);
        }
        for child in children {
            if child.kind() == "variable_assignment" {
                // A leading assignment only sets the command's environment: what runs is
                // inside its value.
                let mut inner = child.walk();
                let values: Vec<Node<'_>> = child.named_children(&mut inner).collect();
                for value in values {
                    self.walk(value, depth + 1);
                }
            } else {
                self.walk(child, depth + 1);
            }
        }
    }

    /// Pushes `words` with its wrappers peeled; `dynamic` says which words come from
    /// expansions (the program, a wrapper or a wrapper's option from one is unanalyzable).
    fn push_peeled(&mut self, words: &[String], dynamic: &[bool], depth: usize) {
        let peeled = wrappers::peel(words);
        // The peeled command (and, through sudo, the innermost one) is a suffix of `words`.
        let innermost = peeled.deny_forms.last().map_or(peeled.words.len(), Vec::len).min(peeled.words.len());
        let program = words.len().saturating_sub(innermost);
        if dynamic.iter().take(program + 1).any(|d| *d) {
            self.unanalyzable(format!(
                "the program `{}` or a wrapper's option comes from an expansion",
                words[program.min(words.len() - 1)]
            ));
        }
        if let Some(why) = &peeled.unanalyzable {
            self.unanalyzable(why.clone());
        }
        self.analysis.writes_files |= peeled.writes_files;
        for name in &peeled.assigned {
            self.assigned(name);
        }
        let mut sub = self.sub_command(peeled.words);
        for form in &peeled.deny_forms {
            sub.deny_texts.push(join(form));
            // `sudo /usr/bin/git push` is `git push` to a deny rule too.
            if let Some(first) = form.first()
                && first.contains('/')
            {
                let mut short = form.clone();
                short[0] = program_name(first).to_owned();
                sub.deny_texts.push(join(&short));
            }
        }
        sub.deny_texts.retain(|t| *t != sub.text);
        sub.deny_texts.dedup();
        self.analysis.commands.push(sub);
        for run in peeled.runs {
            if run.first().is_some_and(|w| w.contains(['$', '`'])) {
                self.unanalyzable("a command `find -exec` runs comes from an expansion");
            }
            self.push_peeled(&run, &[], depth + 1);
        }
        if let Some(script) = peeled.script {
            if depth > MAX_DEPTH {
                self.unanalyzable("shells nest too deeply");
            } else {
                parse_into(&script, depth + 10, self.analysis);
            }
        }
    }

    /// `NAME=value cmd`: a harmless name keeps the command read-only, one that changes what
    /// programs run or load makes it unanalyzable, any other makes it not read-only.
    fn leading_assignment(&mut self, node: Node<'_>) {
        let name = node.child_by_field_name("name").map(|n| self.text(n).to_owned()).unwrap_or_default();
        self.assigned(&name);
    }

    fn assigned(&mut self, name: &str) {
        match assignments::risk(name) {
            assignments::Risk::Harmless => {}
            assignments::Risk::Other => self.analysis.sets_environment = true,
            assignments::Risk::Dangerous => {
                self.unanalyzable(format!("an assignment to `{name}`, which changes what programs run or load"));
            }
        }
    }

    /// Assignments and declarations (`PATH=./bin`, `export LD_PRELOAD=…`, `declare -i x`):
    /// a name that changes what later programs run is unanalyzable, as is a subscript that is
    /// not a number (handled by the `subscript` node) and `declare -i`, whose later
    /// assignments are arithmetic.
    /// Whether `node` is `export NAME=value …` (no options) of harmless names only
    /// ([`assignments::Risk::Harmless`]).
    fn exports_only_harmless_names(&self, node: Node<'_>) -> bool {
        if node.kind() != "declaration_command" || !self.text(node).starts_with("export ") {
            return false;
        }
        let mut cursor = node.walk();
        let names: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        !names.is_empty()
            && names.iter().all(|child| {
                let name = match child.kind() {
                    "variable_assignment" => child.child_by_field_name("name").map(|n| self.text(n)),
                    "variable_name" => Some(self.text(*child)),
                    _ => None,
                };
                name.is_some_and(|name| assignments::risk(name) == assignments::Risk::Harmless)
            })
    }

    fn check_assigned_names(&mut self, node: Node<'_>) {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        if node.kind() == "variable_assignment" {
            if let Some(name) = node.child_by_field_name("name") {
                let name = self.text(name).to_owned();
                if assignments::risk(&name) == assignments::Risk::Dangerous {
                    self.unanalyzable(format!("an assignment to `{name}`, which changes what programs run or load"));
                }
            }
            return;
        }
        for child in children {
            match child.kind() {
                "variable_assignment" | "variable_assignments" => self.check_assigned_names(child),
                "variable_name" | "word" => {
                    let text = self.text(child);
                    if text.starts_with('-') && text.contains(['i', 'n']) && node.kind() == "declaration_command" {
                        self.unanalyzable("`declare -i` or `-n` makes later assignments evaluate");
                    } else if assignments::risk(text) == assignments::Risk::Dangerous {
                        self.unanalyzable(format!(
                            "an assignment to `{text}`, which changes what programs run or load"
                        ));
                    }
                }
                _ => {
                    let value = words::word_value(child, self.source);
                    if value.dynamic || value.text.contains('[') {
                        self.unanalyzable("a variable name from an expansion or with a subscript");
                    }
                }
            }
        }
    }

    /// Whether `node` is a plain decimal number.
    fn is_number(&self, node: Node<'_>) -> bool {
        let text = self.text(node).trim();
        !text.is_empty() && text.trim_start_matches('-').chars().all(|c| c.is_ascii_digit())
    }

    /// Whether an arithmetic expression reads a variable (bash evaluates a variable's value
    /// as arithmetic again, and a subscript there runs `$( … )`).
    fn arithmetic_reads_variables(&self, node: Node<'_>) -> bool {
        let mut cursor = node.walk();
        let mut stack: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        while let Some(node) = stack.pop() {
            match node.kind() {
                // Seen by the walk like any other substitution.
                "command_substitution" | "comment" => {}
                "number"
                | "binary_expression"
                | "unary_expression"
                | "parenthesized_expression"
                | "ternary_expression" => {
                    let mut cursor = node.walk();
                    stack.extend(node.named_children(&mut cursor));
                }
                _ => return true,
            }
        }
        false
    }

    /// `[[ -v a[…] ]]` and `[[ x -eq y ]]` evaluate a subscript or arithmetic: unanalyzable
    /// unless every operand of an arithmetic comparison is a number.
    fn evaluating_test(&self, node: Node<'_>) -> Option<&'static str> {
        const ARITHMETIC: &[&str] = &["-eq", "-ne", "-lt", "-le", "-gt", "-ge"];
        let text = self.text(node);
        let tokens: Vec<&str> = text.split_whitespace().collect();
        let after_brackets = text.strip_prefix("[[").unwrap_or(text);
        if tokens.contains(&"-v") && after_brackets.contains(['[', '$', '`']) {
            return Some("`[[ -v … ]]` with an array subscript, which bash evaluates");
        }
        // `[ x -eq y ]` (the `test` builtin) compares integers without evaluating them.
        if text.starts_with("[[") && tokens.iter().any(|t| ARITHMETIC.contains(t)) {
            let numbers = tokens.iter().all(|t| {
                ARITHMETIC.contains(t)
                    || matches!(*t, "[[" | "]]" | "&&" | "||" | "!" | "(" | ")" | "$#" | "$?" | "\"$#\"" | "\"$?\"")
                    || t.trim_start_matches('-').chars().all(|c| c.is_ascii_digit())
            });
            if !numbers {
                return Some("an arithmetic comparison in `[[ … ]]`, which evaluates its operands");
            }
        }
        None
    }

    /// A heredoc delimiter bash and the grammar may read differently (`E"O"F`, `$'EOF'`): only
    /// a plain word, or one wholly in single or double quotes, or after one backslash.
    fn odd_heredoc_delimiter(&self, node: Node<'_>) -> Option<&'static str> {
        let mut cursor = node.walk();
        let start = node.children(&mut cursor).find(|c| c.kind() == "heredoc_start")?;
        let text = self.text(start);
        let plain = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        let inner = text
            .strip_prefix('\'')
            .and_then(|t| t.strip_suffix('\''))
            .or_else(|| text.strip_prefix('"').and_then(|t| t.strip_suffix('"')))
            .or_else(|| text.strip_prefix('\\'))
            .unwrap_or(text);
        (!plain(inner)).then_some("a heredoc delimiter with quotes inside it, which bash reads differently")
    }

    fn push(&mut self, words: Vec<String>) {
        let sub = self.sub_command(words);
        self.analysis.commands.push(sub);
    }

    fn sub_command(&self, words: Vec<String>) -> SubCommand {
        let text = join(&words);
        let mut deny_texts = vec![words.join(" ")];
        if let Some(first) = words.first()
            && first.contains('/')
        {
            let mut short = words.clone();
            short[0] = program_name(first).to_owned();
            deny_texts.push(join(&short));
        }
        deny_texts.retain(|t| *t != text);
        SubCommand { words, text, deny_texts }
    }
}

/// An unquoted heredoc body expands as a double-quoted string, but the grammar leaves some
/// of it as text: arithmetic (`$((x))`, `$[x]`) and the `${…}` forms that evaluate a value
/// (`${!x}`, `${x@P}`, `${a[i]}`, `${x:offset}`) are unanalyzable there.
fn heredoc_evaluates(body: &str) -> Option<&'static str> {
    if body.contains("$((") || body.contains("$[") {
        return Some("arithmetic in a heredoc");
    }
    let mut rest = body;
    while let Some(at) = rest.find("${") {
        let inner = &rest[at + 2..];
        let end = inner.find('}').unwrap_or(inner.len());
        let expansion = &inner[..end];
        let offset = expansion.find(':').is_some_and(|c| !expansion[c + 1..].starts_with(['-', '=', '?', '+']));
        if expansion.starts_with('!') || expansion.contains(['@', '[']) || offset {
            return Some("a `${…}` in a heredoc that evaluates a value");
        }
        rest = &inner[end..];
    }
    None
}

/// Builtins that take a variable name evaluate a subscript in it (`read 'a[$(rm v)]'`,
/// `printf -v`, `test -v`): a name with a subscript or from an expansion is unanalyzable.
fn names_a_variable(words: &[String], dynamic: &[bool]) -> Option<&'static str> {
    let names =
        |at: usize| words.get(at).is_some_and(|w| w.contains(['[', '$', '`']) || dynamic.get(at) == Some(&true));
    let name = words.first()?.as_str();
    let flagged = match name {
        "read" | "mapfile" | "readarray" | "getopts" | "unset" | "wait" | "export" | "readonly" | "local"
        | "declare" | "typeset" => (1..words.len()).any(names),
        "printf" | "test" | "[" => (1..words.len()).any(|at| words[at - 1] == "-v" && names(at)),
        _ => false,
    };
    flagged.then_some("a builtin given a variable name with a subscript or from an expansion, which bash evaluates")
}

/// A backslash-newline inside a word (`r\⏎m`): bash removes it before reading words, the
/// grammar splits the word there. Only a continuation between words (after a blank) is read
/// alike by both.
fn continuation_inside_word(command: &str) -> Option<&'static str> {
    let bytes = command.as_bytes();
    for (at, pair) in bytes.windows(2).enumerate() {
        if pair == b"\\\n" {
            let before = at.checked_sub(1).map(|b| bytes[b]);
            let after = bytes.get(at + 2).copied();
            let blank = |c: Option<u8>| c.is_none_or(|c| c == b' ' || c == b'\t' || c == b'\n');
            if !blank(before) || !blank(after) {
                return Some("a line continuation inside a word");
            }
        }
    }
    None
}

/// Words joined by spaces, a word holding whitespace (or nothing) in single quotes.
fn join(words: &[String]) -> String {
    let mut out = String::new();
    for word in words {
        if !out.is_empty() {
            out.push(' ');
        }
        if word.is_empty() || word.contains(char::is_whitespace) {
            out.push('\'');
            out.push_str(&word.replace('\'', r"'\''"));
            out.push('\'');
        } else {
            out.push_str(word);
        }
    }
    out
}

#[cfg(test)]
mod tests;
