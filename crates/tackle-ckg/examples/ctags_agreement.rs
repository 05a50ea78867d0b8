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
//! Before comparing, the systematic differences of docs/ckg.md are set aside, each counted:
//! - `anonymous`: ctags names anonymous structs and functions (`__anon…`,
//!   `AnonymousFunction…`); the index keeps named definitions only;
//! - `object_literal`: ctags calls a JavaScript object literal a class (`const config = {…}`);
//! - `overload`: ctags reports an overloaded TypeScript function or method once, at its
//!   first signature; the index reports every signature and the implementation (only the
//!   first of a run is compared);
//! - `local`: ctags leaves out definitions local to a function body in JavaScript and
//!   TypeScript (`const reset = () => …`; function declarations excepted), Go (`type span
//!   struct` inside a function, and its methods) and Java (a class declared in a method); the
//!   index keeps them (the function is their parent);
//! - `anonymous_class`: ctags leaves out the methods of Java's anonymous classes (`new
//!   Iterator<E>() { public boolean hasNext() … }`); the index keeps them.
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

/// One side's definitions of one tree: key → kind group.
type Side = HashMap<Key, &'static str>;

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
    let mut ours: Side = HashMap::new();
    let mut languages: BTreeMap<String, Language> = BTreeMap::new();
    let mut tagger = Tagger::new();
    let mut listed = Vec::new();
    for entry in &walked.entries {
        let rel = String::from_utf8_lossy(&entry.rel).into_owned();
        let Ok(source) = walk::read(&walk::absolute(root, &entry.rel), entry.stamp.inode, walk::MAX_FILE_BYTES) else {
            continue;
        };
        let extraction = extract(&mut tagger, entry.language, &rel, &source, None)?;
        let tally = tallies.entry(entry.language.name()).or_default();
        for (symbol, rule) in classify(entry.language, &extraction.symbols) {
            match (rule, our_group(symbol.kind)) {
                (Some(rule), Some(_)) => *tally.set_aside.entry(rule).or_default() += 1,
                (None, Some(group)) => {
                    ours.insert((rel.clone(), normalize(&symbol.name), symbol.name_line), group);
                }
                _ => {}
            }
        }
        languages.insert(rel.clone(), entry.language);
        listed.push(rel);
    }
    let theirs = run_ctags(root, &listed, &languages, tallies)?;
    let keys: std::collections::BTreeSet<&Key> = ours.keys().chain(theirs.keys()).collect();
    for key in keys {
        let language = languages.get(&key.0).map_or("?", |l| l.name());
        let tally = tallies.entry(language).or_default();
        match (ours.get(key), theirs.get(key)) {
            (Some(a), Some(b)) => {
                tally.both += 1;
                if a != b {
                    tally.kind_differs += 1;
                }
            }
            (Some(_), None) => tally.ours_only.push(key.clone()),
            _ => tally.ctags_only.push(key.clone()),
        }
    }
    Ok(())
}

/// Each symbol with the systematic difference that sets it aside, if any.
fn classify(language: Language, symbols: &[Symbol]) -> Vec<(&Symbol, Option<&'static str>)> {
    let ecmascript = matches!(language, Language::JavaScript | Language::TypeScript | Language::Tsx);
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
        let in_function = open.iter().any(is_callable);
        // A function declaration stays: ctags reports those inside functions too.
        let declaration = symbol.signature.split_whitespace().any(|word| word == "function" || word == "function*");
        let rule = if in_function && ((ecmascript && !declaration) || matches!(language, Language::Go | Language::Java))
        {
            Some("local")
        } else if language == Language::Java && callable && open.last().is_some_and(is_callable) {
            Some("anonymous_class")
        } else if matches!(language, Language::TypeScript | Language::Tsx)
            && callable
            && previous_callable.get(&symbol.parent.as_deref()) == Some(&symbol.name.as_str())
        {
            Some("overload")
        } else {
            None
        };
        if callable {
            previous_callable.insert(symbol.parent.as_deref(), &symbol.name);
        }
        out.push((symbol, rule));
        open.push(symbol);
    }
    out
}

/// universal-ctags' definitions of the compared kinds, for the listed files.
fn run_ctags(
    root: &Path,
    files: &[String],
    languages: &BTreeMap<String, Language>,
    tallies: &mut BTreeMap<&'static str, Tally>,
) -> anyhow::Result<Side> {
    let mut child = Command::new("ctags")
        .current_dir(root)
        .args(["--output-format=json", "--fields=+nK", "-L", "-", "-f", "-"])
        // ctags reads .h as C++; the index reads it as C (docs/ckg.md), so ask ctags to as well.
        .args(["--map-C++=-.h", "--map-C=+.h"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("ctags (universal-ctags) is needed")?;
    let mut stdin = child.stdin.take().context("ctags stdin")?;
    let list = files.join("\n");
    let writer = std::thread::spawn(move || stdin.write_all(list.as_bytes()));
    let output = child.wait_with_output()?;
    writer.join().map_err(|_| anyhow::anyhow!("writer thread"))??;
    let mut side = Side::new();
    for line in output.stdout.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let Ok(tag) = serde_json::from_slice::<serde_json::Value>(line) else { continue };
        let (Some(path), Some(name), Some(kind), Some(line)) =
            (tag["path"].as_str(), tag["name"].as_str(), tag["kind"].as_str(), tag["line"].as_u64())
        else {
            continue;
        };
        let Some(language) = languages.get(path) else { continue };
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
        side.insert((path.to_owned(), normalize(name), u32::try_from(line).unwrap_or(u32::MAX)), group);
    }
    Ok(side)
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
