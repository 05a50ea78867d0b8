//! The command line uses the front door only (issue 26, point 1): no path in `src/` names a
//! module below `tackle` (`tackle::core`, `tackle::policy`, …: those whole-crate modules are
//! gone, and one coming back must not be used by the CLI), and `Cargo.toml`'s
//! `[dependencies]` name no lower crate. The scanner is tested on written samples too, so a
//! scanner that finds nothing cannot pass for a clean CLI.

use std::path::{Path, PathBuf};

/// The module names below the front door that the CLI must not name.
const LOWER_MODULES: &[&str] =
    &["core", "tools", "mcp", "calls", "ckg", "sandbox", "container", "containers", "policy"];

/// The crates below the front door.
const LOWER_CRATES: &[&str] = &[
    "tackle-core",
    "tackle-policy",
    "tackle-calls",
    "tackle-tools",
    "tackle-ckg",
    "tackle-sandbox",
    "tackle-llm",
    "tackle-agent",
    "tackle-mcp",
    "tackle-container",
];

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The first path segments written right after `tackle::` in `source`, grouped imports
/// (`tackle::{core::X, Agent}`) included, nested groups at any depth.
fn front_door_segments(source: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = source;
    while let Some(at) = rest.find("tackle::") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "tackle::".len()..];
        if before.is_some_and(is_ident_char) {
            continue; // `my_tackle::`, not the front door.
        }
        let after = rest.trim_start();
        if let Some(group) = after.strip_prefix('{') {
            segments_of_group(group, &mut found);
        } else {
            found.push(after.chars().take_while(|c| is_ident_char(*c)).collect());
        }
    }
    found
}

/// The first segment of each path of a `{...}` group (`group` starts after the `{`).
fn segments_of_group(group: &str, found: &mut Vec<String>) {
    let mut depth = 0usize;
    let mut word: Option<String> = Some(String::new()); // `Some` while reading a first segment
    for c in group.chars() {
        if let Some(current) = &mut word {
            if is_ident_char(c) {
                current.push(c);
                continue;
            }
            if !(c.is_whitespace() && current.is_empty()) {
                if !current.is_empty() {
                    found.push(std::mem::take(current));
                }
                word = None;
            }
        }
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return,
            '}' => depth -= 1,
            ',' if depth == 0 => word = Some(String::new()),
            _ => {}
        }
    }
}

/// The lower modules `source` names under `tackle::`.
fn lower_paths(source: &str) -> Vec<String> {
    front_door_segments(source).into_iter().filter(|segment| LOWER_MODULES.contains(&segment.as_str())).collect()
}

/// The lower crates a `Cargo.toml`'s build dependencies name (`[dependencies]` and
/// `[target.'…'.dependencies]`; dev- and build-dependencies are not the command's).
fn lower_dependencies(manifest: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut in_dependencies = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            let header = line.trim_matches(|c| c == '[' || c == ']');
            in_dependencies = header == "dependencies" || header.ends_with(".dependencies");
            // `[dependencies.tackle-core]` is a dependency too.
            if let Some(name) = header.strip_prefix("dependencies.") {
                if LOWER_CRATES.contains(&name) {
                    found.push(name.to_owned());
                }
                in_dependencies = false;
            }
            continue;
        }
        if !in_dependencies {
            continue;
        }
        let name = line.split(['=', '.', ' ']).next().unwrap_or("").trim_matches('"');
        if LOWER_CRATES.contains(&name) {
            found.push(name.to_owned());
        }
        // A renamed dependency: `core = { package = "tackle-core", ... }`.
        for krate in LOWER_CRATES {
            if line.contains(&format!("package = \"{krate}\"")) {
                found.push((*krate).to_owned());
            }
        }
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_cli_names_no_module_below_the_front_door() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 10, "the CLI's sources were not found under {}", src.display());
    let mut offences = Vec::new();
    let mut front_door_uses = 0;
    for file in &files {
        let source = std::fs::read_to_string(file).unwrap();
        front_door_uses += front_door_segments(&source).len();
        for lower in lower_paths(&source) {
            offences.push(format!("{}: tackle::{lower}", file.strip_prefix(&src).unwrap().display()));
        }
    }
    assert!(front_door_uses > 50, "the scan saw only {front_door_uses} front-door paths: is it reading the CLI?");
    assert!(offences.is_empty(), "the CLI reaches below the front door:\n{}", offences.join("\n"));
}

#[test]
fn the_cli_depends_on_no_lower_crate() {
    let manifest = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    assert!(manifest.contains("tackle.workspace = true"), "the CLI no longer depends on tackle?");
    assert_eq!(lower_dependencies(&manifest), Vec::<String>::new());
}

#[test]
fn the_scanner_finds_every_spelling_of_a_lower_path() {
    let sample = r#"
        use tackle::core::fs::state;
        use tackle::{Agent, policy::secrets::var};
        use tackle::{
            SessionBuilder,
            sandbox::process::{restrict, Sandbox},
        };
        fn f() -> tackle::containers::Progress { tackle:: container::x() }
        let g = tackle::ckg::Index::open();
        let h = my_tackle::core::Thing; // not the front door
        let i = tackle::tool_catalog::Registry::default(); // a front-door module
        let j = tackle::mcp_serve::AuthToken::new("x"); // a front-door module
        let k = tackle::mcp::server::AuthToken::new("x");
    "#;
    assert_eq!(lower_paths(sample), ["core", "policy", "sandbox", "containers", "container", "ckg", "mcp"]);
    assert_eq!(
        lower_paths("use tackle::{Agent, SessionBuilder};\nlet x = tackle::agent::render_diff;"),
        Vec::<String>::new()
    );
}

#[test]
fn the_manifest_check_finds_lower_crates_only_in_build_dependencies() {
    let manifest = r#"
[package]
name = "tackle-cli"

[dependencies]
tackle.workspace = true
tackle-core.workspace = true
serde = "1"
internals = { package = "tackle-policy", version = "0" }

[target.'cfg(unix)'.dependencies]
tackle-sandbox = { path = "../tackle-sandbox" }

[dependencies.tackle-mcp]
path = "../tackle-mcp"

[dev-dependencies]
tackle-tools.workspace = true
"#;
    assert_eq!(lower_dependencies(manifest), ["tackle-core", "tackle-policy", "tackle-sandbox", "tackle-mcp"]);
}
