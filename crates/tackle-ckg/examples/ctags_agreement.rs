//! How far Tackle's definitions agree with universal-ctags on real code, per language
//! (docs/ckg.md, "Agreement with ctags"). Used by `bench/ckg.sh` and the agreement test.
//!
//! Usage: `ctags_agreement [--json] [--show N] DIR...`
//!
//! For each DIR, the files the index would read (the same walk) are given to `ctags
//! --output-format=json` on stdin, and both sides' definitions of the kinds both report are
//! compared: callables (functions, methods, constructors) and types (classes, structs,
//! unions, enums, interfaces, traits, records), by file, name and the line of the name.
//! Agreement is the share of the union found by both with the same kind group. `--show N`
//! prints N examples of each side's extras per language.

use std::collections::{BTreeMap, HashSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, bail};
use tackle_ckg::Language;
use tackle_ckg::extract::{Kind, Tagger, extract};
use tackle_ckg::walk;

/// A definition as compared: file, name, line, kind group.
type Key = (String, String, u32, &'static str);

#[derive(Default)]
struct Tally {
    both: usize,
    ours_only: Vec<Key>,
    ctags_only: Vec<Key>,
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
                "{language:<11} agreement {:6.2}%  both {:>6}  only tackle {:>5}  only ctags {:>5}",
                agreement * 100.0,
                tally.both,
                tally.ours_only.len(),
                tally.ctags_only.len()
            );
            for (side, keys) in [("only tackle", &tally.ours_only), ("only ctags", &tally.ctags_only)] {
                for key in keys.iter().take(show) {
                    println!("    {side}: {}:{} {} ({})", key.0, key.2, key.1, key.3);
                }
            }
        }
        report.insert(
            (*language).to_owned(),
            serde_json::json!({
                "agreement": agreement, "both": tally.both,
                "only_tackle": tally.ours_only.len(), "only_ctags": tally.ctags_only.len()
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
    let mut ours: HashSet<Key> = HashSet::new();
    let mut languages: BTreeMap<String, Language> = BTreeMap::new();
    let mut tagger = Tagger::new();
    let mut listed = Vec::new();
    for entry in &walked.entries {
        let rel = String::from_utf8_lossy(&entry.rel).into_owned();
        let Ok(source) = walk::read(&walk::absolute(root, &entry.rel), entry.stamp.inode, walk::MAX_FILE_BYTES) else {
            continue;
        };
        let extraction = extract(&mut tagger, entry.language, &rel, &source, None)?;
        for symbol in &extraction.symbols {
            if let Some(group) = our_group(symbol.kind) {
                ours.insert((rel.clone(), normalize(&symbol.name), symbol.name_line, group));
            }
        }
        languages.insert(rel.clone(), entry.language);
        listed.push(rel);
    }
    let theirs = run_ctags(root, &listed, &languages)?;
    for key in ours.union(&theirs) {
        let language = languages.get(&key.0).map_or("?", |l| l.name());
        let tally = tallies.entry(language).or_default();
        match (ours.contains(key), theirs.contains(key)) {
            (true, true) => tally.both += 1,
            (true, false) => tally.ours_only.push(key.clone()),
            _ => tally.ctags_only.push(key.clone()),
        }
    }
    Ok(())
}

/// universal-ctags' definitions of the compared kinds, for the listed files.
fn run_ctags(root: &Path, files: &[String], languages: &BTreeMap<String, Language>) -> anyhow::Result<HashSet<Key>> {
    let mut child = Command::new("ctags")
        .current_dir(root)
        .args(["--output-format=json", "--fields=+nK", "-L", "-", "-f", "-"])
        // ctags reads .h as C++ by default; the index reads it as C, so ask ctags to as well.
        .arg("--langmap=C:+.h")
        .arg("--langmap=C++:-.h")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .context("ctags (universal-ctags) is needed")?;
    let mut stdin = child.stdin.take().context("ctags stdin")?;
    let list = files.join("\n");
    let writer = std::thread::spawn(move || stdin.write_all(list.as_bytes()));
    let output = child.wait_with_output()?;
    writer.join().map_err(|_| anyhow::anyhow!("writer thread"))??;
    let mut keys = HashSet::new();
    for line in output.stdout.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let Ok(tag) = serde_json::from_slice::<serde_json::Value>(line) else { continue };
        let (Some(path), Some(name), Some(kind), Some(line)) =
            (tag["path"].as_str(), tag["name"].as_str(), tag["kind"].as_str(), tag["line"].as_u64())
        else {
            continue;
        };
        let Some(language) = languages.get(path) else { continue };
        if let Some(group) = ctags_group(*language, kind) {
            keys.insert((path.to_owned(), normalize(name), u32::try_from(line)?, group));
        }
    }
    Ok(keys)
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
