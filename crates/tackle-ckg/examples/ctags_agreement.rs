//! How far Tackle's definitions agree with universal-ctags on real code, per language
//! (docs/ckg.md, "Agreement with ctags"). Used by `bench/ckg.sh`.
//!
//! Usage: `ctags_agreement [--json] [--show N] DIR...`
//!
//! For each DIR, the files the index would read (the same walk) are given to `ctags
//! --output-format=json` on stdin, and both sides' definitions of the kinds both report are
//! compared: callables (functions, methods, constructors) and types (classes, structs,
//! unions, enums, interfaces, traits, records), by file, name and the line of the name.
//! Agreement is the share of the union found by both (`kind_differs` counts those found by
//! both with another kind group, e.g. a named function expression ctags calls a class).
//!
//! Before comparing, the systematic differences of docs/ckg.md are set aside, each counted.
//! Most are what universal-ctags 5.9 (Debian's) leaves out, told from the syntax tree of the
//! definition (the file is parsed again here for that):
//! - `anonymous`: ctags names anonymous structs and functions (`__anon…`,
//!   `AnonymousFunction…`); the index keeps named definitions only;
//! - `object_literal`: ctags calls a JavaScript object literal a class (`const config = {…}`);
//!   in TypeScript it tags no member of an object literal, the index tags its methods and
//!   its function-valued keys;
//! - `function_value`: ctags tags an arrow function as the constant, variable or property
//!   holding it (`const f = () => …`, `{ f: () => … }`, `X.f = () => …`), never as a
//!   function; in TypeScript the same for `const f = function …` and `X.f = function …`;
//! - `function_expression`: a named function expression that no name holds
//!   (`wrap(function impl() {…})`, `return function piped() {…}`): ctags tags none;
//! - `overload`: ctags reports an overloaded TypeScript function or method once, at its
//!   first signature; the index reports every signature and the implementation (only the
//!   first of a run is compared; interface signatures, which ctags reports each, are all
//!   compared);
//! - `local`: ctags leaves out definitions local to a function body in TypeScript (all of
//!   them), Go (`type span struct` inside a function, and its methods) and Java (a class
//!   declared in a method); the index keeps them (the function is their parent);
//! - `anonymous_class`: ctags leaves out the methods of Java's anonymous classes (`new
//!   Iterator<E>() { public boolean hasNext() … }`) and of enum constants' bodies; the index
//!   keeps them;
//! - `ctags_lost_class`: ctags's JavaScript and TypeScript parsers lose their way in some
//!   class bodies (after a property initialised with an arrow function, `static create =
//!   (…) => …`, or a method named `do`) and tag no member of the class from there to its
//!   end; the index's methods of the class after the last member ctags tagged are set aside;
//! - `ctags_lost_tail`: likewise, ctags gives up on the rest of some files (its Rust parser
//!   after some closures, `builder.run(|| { Box::new(move |result| { … }) })`): it tags
//!   nothing after some line; the index's definitions after the last line ctags tagged are set
//!   aside.
//!
//! `--show N` prints N examples of each side's extras per language.

use std::collections::{BTreeMap, HashMap};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, bail};
use tackle_ckg::Language;
use tackle_ckg::extract::{Kind, Symbol, Tagger, extract};
use tackle_ckg::walk;

/// A definition as compared: file, name, line.
type Key = (String, String, u32);

#[derive(Default)]
struct Tally {
    both: usize,
    kind_differs: usize,
    ours_only: Vec<Key>,
    ctags_only: Vec<Key>,
    set_aside: BTreeMap<&'static str, usize>,
}

/// ctags's definitions of one tree: key → kind group.
type Side = HashMap<Key, &'static str>;

/// One of the index's definitions, as compared.
struct Ours {
    group: &'static str,
    language: Language,
    /// The class of a method and the class's last line (for `ctags_lost_class`).
    class: Option<(String, u32)>,
}

/// Where ctags got in each file: the lines where it tagged each class or a member of it, by
/// (file, class name), and the last line it tagged anything, by file.
#[derive(Default)]
struct Reach {
    classes: HashMap<(String, String), Vec<u32>>,
    files: HashMap<String, u32>,
}

fn main() -> anyhow::Result<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let json = take_flag(&mut args, "--json");
    let show = match args.iter().position(|a| a == "--show") {
        Some(at) => {
            let n = args.get(at + 1).context("--show needs a number")?.parse()?;
            args.drain(at..at + 2);
            n
        }
        None => 0,
    };
    if args.is_empty() {
        bail!("usage: ctags_agreement [--json] [--show N] DIR...");
    }
    let mut tallies: BTreeMap<&'static str, Tally> = BTreeMap::new();
    for dir in &args {
        let root = PathBuf::from(dir).canonicalize().with_context(|| dir.clone())?;
        compare(&root, &mut tallies)?;
    }
    let mut report = serde_json::Map::new();
    for (language, tally) in &tallies {
        let union = tally.both + tally.ours_only.len() + tally.ctags_only.len();
        let agreement = if union == 0 { 1.0 } else { tally.both as f64 / union as f64 };
        if !json {
            println!(
                "{language:<11} agreement {:6.2}%  both {:>6} (kind differs {})  only tackle {:>5}  only ctags {:>5}  \
                 set aside {:?}",
                agreement * 100.0,
                tally.both,
                tally.kind_differs,
                tally.ours_only.len(),
                tally.ctags_only.len(),
                tally.set_aside
            );
            for (side, keys) in [("only tackle", &tally.ours_only), ("only ctags", &tally.ctags_only)] {
                for key in keys.iter().take(show) {
                    println!("    {side}: {}:{} {}", key.0, key.2, key.1);
                }
            }
        }
        report.insert(
            (*language).to_owned(),
            serde_json::json!({
                "agreement": agreement, "both": tally.both, "kind_differs": tally.kind_differs,
                "only_tackle": tally.ours_only.len(), "only_ctags": tally.ctags_only.len(),
                "set_aside": tally.set_aside,
            }),
        );
    }
    if json {
        println!("{}", serde_json::Value::Object(report));
    }
    Ok(())
}

fn take_flag(args: &mut Vec<String>, flag: &str) -> bool {
    let before = args.len();
    args.retain(|a| a != flag);
    args.len() != before
}

/// Compares one tree, adding to the per-language tallies.
fn compare(root: &Path, tallies: &mut BTreeMap<&'static str, Tally>) -> anyhow::Result<()> {
    let walked = walk::walk(root);
    let mut ours: HashMap<Key, Ours> = HashMap::new();
    let mut languages: BTreeMap<String, Language> = BTreeMap::new();
    let mut tagger = Tagger::new();
    let mut parser = tree_sitter::Parser::new();
    for entry in &walked.entries {
        let rel = String::from_utf8_lossy(&entry.rel).into_owned();
        let Ok(source) = walk::read(&walk::absolute(root, &entry.rel), entry.stamp.inode, walk::MAX_FILE_BYTES) else {
            continue;
        };
        let language = entry.language.of_source(&entry.rel, &source);
        let extraction = extract(&mut tagger, language, &rel, &source, None)?;
        let grammar = &language.tags().map_err(anyhow::Error::msg)?.language;
        parser.set_language(grammar)?;
        let tree = parser.parse(&source, None).context("tree-sitter gave no tree")?;
        let tally = tallies.entry(language.name()).or_default();
        for (symbol, rule) in classify(language, &extraction.symbols, &tree) {
            match (rule, our_group(symbol.kind)) {
                (Some(rule), Some(_)) => *tally.set_aside.entry(rule).or_default() += 1,
                (None, Some(group)) => {
                    let class = enclosing_class(&extraction.symbols, symbol);
                    ours.insert(
                        (rel.clone(), normalize(&symbol.name), symbol.name_line),
                        Ours { group, language, class },
                    );
                }
                _ => {}
            }
        }
        languages.insert(rel, language);
    }
    let (theirs, reach) = run_ctags(root, &languages, tallies)?;
    let keys: std::collections::BTreeSet<&Key> = ours.keys().chain(theirs.keys()).collect();
    for key in keys {
        let language = languages.get(&key.0).map_or("?", |l| l.name());
        let tally = tallies.entry(language).or_default();
        match (ours.get(key), theirs.get(key)) {
            (Some(a), Some(b)) => {
                tally.both += 1;
                if a.group != *b {
                    tally.kind_differs += 1;
                }
            }
            (Some(_), None) if reach.files.get(&key.0).is_some_and(|&last| key.2 > last) => {
                *tally.set_aside.entry("ctags_lost_tail").or_default() += 1;
            }
            (Some(a), None) if lost_by_ctags(a, key, &reach) => {
                *tally.set_aside.entry("ctags_lost_class").or_default() += 1;
            }
            (Some(_), None) => tally.ours_only.push(key.clone()),
            _ => tally.ctags_only.push(key.clone()),
        }
    }
    Ok(())
}

/// Whether `ours`, a method ctags did not tag, lies where ctags tagged nothing of its class
/// from there to the class's end (ctags's JavaScript and TypeScript parsers lose some class
/// bodies), in a class ctags did tag.
fn lost_by_ctags(ours: &Ours, key: &Key, reach: &Reach) -> bool {
    let ecmascript = matches!(ours.language, Language::JavaScript | Language::TypeScript | Language::Tsx);
    let Some((class, end)) = &ours.class else { return false };
    let Some(lines) = reach.classes.get(&(key.0.clone(), class.clone())) else { return false };
    ecmascript && !lines.iter().any(|line| (key.2..=*end).contains(line))
}

/// The class of a method: its name and last line.
fn enclosing_class(symbols: &[Symbol], method: &Symbol) -> Option<(String, u32)> {
    if method.kind != Kind::Method {
        return None;
    }
    symbols
        .iter()
        .filter(|s| s.kind.is_class_like() && s.start_byte <= method.start_byte && method.end_byte <= s.end_byte)
        .min_by_key(|s| s.end_byte - s.start_byte)
        .map(|s| (s.name.clone(), s.end_line))
}

/// Whether the definition at `node` is in the body of an anonymous class (`new X() { … }`)
/// or of an enum constant (`A { … }`).
fn anonymous_class(node: Option<tree_sitter::Node<'_>>) -> bool {
    let body = node.and_then(|n| n.parent()).and_then(|body| body.parent());
    body.is_some_and(|holder| matches!(holder.kind(), "object_creation_expression" | "enum_constant"))
}

/// Syntax nodes that open a function body, in JavaScript and TypeScript.
const FUNCTION_NODES: [&str; 7] = [
    "function_declaration",
    "function_expression",
    "function",
    "arrow_function",
    "method_definition",
    "generator_function",
    "generator_function_declaration",
];

/// Each symbol with the systematic difference that sets it aside, if any (`tree` is the
/// file's syntax tree, for what the definition is).
fn classify<'a>(
    language: Language,
    symbols: &'a [Symbol],
    tree: &tree_sitter::Tree,
) -> Vec<(&'a Symbol, Option<&'static str>)> {
    let ecmascript = matches!(language, Language::JavaScript | Language::TypeScript | Language::Tsx);
    let typescript = matches!(language, Language::TypeScript | Language::Tsx);
    let mut sorted: Vec<&Symbol> = symbols.iter().collect();
    sorted.sort_by_key(|s| (s.start_byte, std::cmp::Reverse(s.end_byte)));
    let mut out = Vec::with_capacity(sorted.len());
    let mut open: Vec<&Symbol> = Vec::new();
    let mut previous_callable: HashMap<Option<&str>, &str> = HashMap::new();
    for symbol in sorted {
        while open.last().is_some_and(|o| !(o.start_byte <= symbol.start_byte && symbol.end_byte <= o.end_byte)) {
            open.pop();
        }
        let callable = matches!(symbol.kind, Kind::Function | Kind::Method);
        let is_callable = |s: &&Symbol| matches!(s.kind, Kind::Function | Kind::Method);
        let node = tree.root_node().descendant_for_byte_range(symbol.start_byte as usize, symbol.end_byte as usize);
        let kind = node.map_or("", |n| n.kind());
        let parent_kind = node.and_then(|n| n.parent()).map_or("", |p| p.kind());
        let value_field = if kind == "assignment_expression" { "right" } else { "value" };
        let value_kind = node.and_then(|n| n.child_by_field_name(value_field)).map_or("", |v| v.kind());
        let in_function = node.is_some_and(|n| {
            std::iter::successors(n.parent(), tree_sitter::Node::parent).any(|a| FUNCTION_NODES.contains(&a.kind()))
        });
        let holder = matches!(kind, "variable_declarator" | "pair" | "assignment_expression");
        let interface_signature = kind == "method_signature" && matches!(parent_kind, "interface_body" | "object_type");
        let local = match language {
            Language::TypeScript | Language::Tsx => in_function,
            Language::Go | Language::Java => open.iter().any(is_callable),
            _ => false,
        };
        let rule = if local {
            Some("local")
        } else if language == Language::Java && callable && parent_kind == "class_body" && anonymous_class(node) {
            Some("anonymous_class")
        } else if ecmascript && holder && value_kind == "arrow_function" {
            Some("function_value")
        } else if typescript && (kind == "pair" || (kind == "method_definition" && parent_kind == "object")) {
            Some("object_literal")
        } else if typescript && holder {
            Some("function_value")
        } else if ecmascript && kind == "function_expression" {
            Some("function_expression")
        } else if typescript
            && callable
            && !interface_signature
            && previous_callable.get(&symbol.parent.as_deref()) == Some(&symbol.name.as_str())
        {
            Some("overload")
        } else {
            None
        };
        if callable && !interface_signature {
            previous_callable.insert(symbol.parent.as_deref(), &symbol.name);
        }
        out.push((symbol, rule));
        open.push(symbol);
    }
    out
}

/// universal-ctags' definitions of the compared kinds for the files of `languages`, and
/// where ctags tagged each class and its members. ctags reads a `.h` file as C++; it is told to read each
/// header as the index does (C, or C++ when it reads as C++).
fn run_ctags(
    root: &Path,
    languages: &BTreeMap<String, Language>,
    tallies: &mut BTreeMap<&'static str, Tally>,
) -> anyhow::Result<(Side, Reach)> {
    let header = |path: &String| path.ends_with(".h");
    let groups: [(Vec<&String>, &[&str]); 3] = [
        (languages.keys().filter(|p| !header(p)).collect(), &[]),
        (
            languages.iter().filter(|(p, l)| header(p) && **l == Language::C).map(|(p, _)| p).collect(),
            &["--language-force=C"],
        ),
        (
            languages.iter().filter(|(p, l)| header(p) && **l == Language::Cpp).map(|(p, _)| p).collect(),
            &["--language-force=C++"],
        ),
    ];
    let mut side = Side::new();
    let mut reach = Reach::default();
    for (files, extra) in groups {
        if files.is_empty() {
            continue;
        }
        for tag in ctags(root, &files, extra)? {
            let (Some(path), Some(name), Some(kind), Some(line)) =
                (tag["path"].as_str(), tag["name"].as_str(), tag["kind"].as_str(), tag["line"].as_u64())
            else {
                continue;
            };
            let Some(language) = languages.get(path) else { continue };
            let line = u32::try_from(line).unwrap_or(u32::MAX);
            let class = match tag["scope"].as_str() {
                Some(scope) => scope.rsplit(['.', ':']).next(),
                None => (kind == "class").then_some(name),
            };
            if let Some(class) = class {
                reach.classes.entry((path.to_owned(), class.to_owned())).or_default().push(line);
            }
            let last = reach.files.entry(path.to_owned()).or_default();
            *last = (*last).max(line);
            let Some(group) = ctags_group(*language, kind) else { continue };
            let pattern = tag["pattern"].as_str().unwrap_or_default();
            let rule = if name.starts_with("__anon") || name.starts_with("AnonymousFunction") {
                Some("anonymous")
            } else if matches!(language, Language::JavaScript) && kind == "class" && !pattern.contains("class") {
                Some("object_literal")
            } else {
                None
            };
            if let Some(rule) = rule {
                *tallies.entry(language.name()).or_default().set_aside.entry(rule).or_default() += 1;
                continue;
            }
            side.insert((path.to_owned(), normalize(name), line), group);
        }
    }
    Ok((side, reach))
}

/// Runs ctags on `files` (relative to `root`) with `extra` options: its JSON tags.
fn ctags(root: &Path, files: &[&String], extra: &[&str]) -> anyhow::Result<Vec<serde_json::Value>> {
    let mut child = Command::new("ctags")
        .current_dir(root)
        .args(["--output-format=json", "--fields=+nK", "-L", "-", "-f", "-"])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("ctags (universal-ctags) is needed")?;
    let mut stdin = child.stdin.take().context("ctags stdin")?;
    let list = files.iter().map(|f| f.as_str()).collect::<Vec<_>>().join("\n");
    let writer = std::thread::spawn(move || stdin.write_all(list.as_bytes()));
    let output = child.wait_with_output()?;
    writer.join().map_err(|_| anyhow::anyhow!("writer thread"))??;
    Ok(output
        .stdout
        .split(|&b| b == b'\n')
        .filter_map(|line| serde_json::from_slice::<serde_json::Value>(line).ok())
        .collect())
}

fn our_group(kind: Kind) -> Option<&'static str> {
    match kind {
        Kind::Function | Kind::Method => Some("callable"),
        Kind::Class | Kind::Interface => Some("type"),
        _ => None,
    }
}

/// The kind group of a ctags kind, for the kinds both tools report in `language`.
fn ctags_group(language: Language, kind: &str) -> Option<&'static str> {
    let callable = match language {
        Language::Python => &["function", "member"][..],
        Language::Rust => &["function", "method"],
        Language::JavaScript => &["function", "method", "generator", "getter", "setter"],
        Language::TypeScript | Language::Tsx => &["function", "method", "generator"],
        Language::Go => &["func", "methodSpec"],
        Language::Java => &["method"],
        Language::C | Language::Cpp => &["function"],
    };
    let types = match language {
        Language::Python => &["class"][..],
        Language::Rust => &["struct", "enum", "union", "interface"],
        Language::JavaScript => &["class"],
        Language::TypeScript | Language::Tsx => &["class", "interface"],
        Language::Go => &["struct", "interface"],
        Language::Java => &["class", "interface", "enum", "record"],
        Language::C => &["struct", "union"],
        Language::Cpp => &["class", "struct", "union"],
    };
    if callable.contains(&kind) {
        Some("callable")
    } else if types.contains(&kind) {
        Some("type")
    } else {
        None
    }
}

/// `operator ==` and `operator==` are one name.
fn normalize(name: &str) -> String {
    name.split_whitespace().collect()
}
