//! Writing server definitions from the command line (`tackle mcp add` and `tackle mcp remove`,
//! docs/mcp.md#managing-servers-from-the-command-line): the user config's
//! `[mcp.servers.NAME]`, edited in place so its comments and other keys stay, and replaced
//! whole by a rename; or the workspace's `.mcp.json`, with its other servers and keys kept,
//! written beneath the workspace root and never through a link (`tackle_core::fs::state`).

use std::io::Write as _;
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use serde_json::Value;
use tackle_core::fs::state::{self, StateError};

use super::config::{MCP_JSON, RawServer};

/// The largest `.mcp.json` or user config file read to be edited.
const MAX_FILE: u64 = 4 << 20;

/// Where a definition is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The user config file (`[mcp.servers.NAME]`): every workspace, no consent needed.
    User,
    /// The workspace's `.mcp.json` (Claude Code's format), shared with whoever clones it.
    Project,
}

impl Scope {
    /// The word the command line takes.
    pub fn word(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
        }
    }
}

/// Why a definition could not be written or removed.
#[derive(Debug, thiserror::Error)]
pub enum ManageError {
    /// The name is not one a server can have.
    #[error(
        "'{0}' cannot name an MCP server: use 1 to 64 letters, digits, '-' or '_' (it becomes part of tool names, mcp__NAME__TOOL)"
    )]
    BadName(String),
    /// A server of that name is already defined there.
    #[error(
        "an MCP server named '{name}' is already defined in {place}; remove it first (tackle mcp remove {name} --scope {scope})"
    )]
    Exists {
        /// The server.
        name: String,
        /// The file.
        place: String,
        /// Its scope's word.
        scope: &'static str,
    },
    /// No server of that name is defined there.
    #[error("no MCP server named '{name}' is defined in {place}")]
    NotFound {
        /// The server.
        name: String,
        /// The file.
        place: String,
    },
    /// The file is not what Tackle can edit without losing something.
    #[error("{place} was left as it is: {why}")]
    Unusable {
        /// The file.
        place: String,
        /// Why.
        why: String,
    },
    /// The workspace file is a link, or could not be written.
    #[error(transparent)]
    State(#[from] StateError),
    /// The user config could not be read or written.
    #[error("cannot {what} {path}: {source}")]
    Io {
        /// The step.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// Whether `name` can name a server: 1 to 64 of `[A-Za-z0-9_-]`.
pub fn check_name(name: &str) -> Result<(), ManageError> {
    let fits =
        !name.is_empty() && name.len() <= 64 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if fits { Ok(()) } else { Err(ManageError::BadName(name.to_owned())) }
}

/// Adds `[mcp.servers.NAME]` to the user config at `path` (made when missing); a server of
/// that name there already is an error.
pub fn add_to_user_config(path: &Path, name: &str, server: &RawServer) -> Result<(), ManageError> {
    check_name(name)?;
    let target = followed(path)?;
    let _one_writer = lock_beside(&target)?;
    let mut doc = read_toml(&target)?;
    let place = target.display().to_string();
    let servers = servers_table(&mut doc, &place, true)?.ok_or_else(|| unusable(&place, "no [mcp] table"))?;
    if servers.contains_key(name) {
        return Err(ManageError::Exists { name: name.to_owned(), place, scope: Scope::User.word() });
    }
    let text = toml::to_string(server).map_err(|err| unusable(&place, &err.to_string()))?;
    let entry: toml_edit::DocumentMut =
        text.parse().map_err(|err: toml_edit::TomlError| unusable(&place, &err.to_string()))?;
    let mut table = entry.as_table().clone();
    table.set_implicit(false);
    unplaced(&mut table);
    servers.insert(name, toml_edit::Item::Table(table));
    write_replacing(&target, doc.to_string().as_bytes())
}

/// Forgets where `table` and its sub-tables stood in the text they were parsed from, so they
/// are written after the file's own tables, each after its parent.
fn unplaced(table: &mut toml_edit::Table) {
    table.set_position(None);
    for (_, item) in table.iter_mut() {
        if let toml_edit::Item::Table(inner) = item {
            unplaced(inner);
        }
    }
}

/// Removes `[mcp.servers.NAME]` from the user config at `path`.
pub fn remove_from_user_config(path: &Path, name: &str) -> Result<(), ManageError> {
    let target = followed(path)?;
    let place = target.display().to_string();
    let not_found = || ManageError::NotFound { name: name.to_owned(), place: place.clone() };
    if !target.exists() {
        return Err(not_found());
    }
    let _one_writer = lock_beside(&target)?;
    let mut doc = read_toml(&target)?;
    let servers = servers_table(&mut doc, &place, false)?.ok_or_else(not_found)?;
    if servers.remove(name).is_none() {
        return Err(not_found());
    }
    write_replacing(&target, doc.to_string().as_bytes())
}

/// Adds `NAME` to the `mcpServers` of the workspace's `.mcp.json` (made when missing).
pub fn add_to_mcp_json(workspace: &Path, name: &str, server: &RawServer) -> Result<(), ManageError> {
    check_name(name)?;
    let mut file = read_mcp_json(workspace)?.unwrap_or_else(|| serde_json::json!({}));
    let servers = mcp_servers(&mut file, true)?.ok_or_else(|| unusable(MCP_JSON, "no \"mcpServers\""))?;
    if servers.contains_key(name) {
        return Err(ManageError::Exists {
            name: name.to_owned(),
            place: MCP_JSON.to_owned(),
            scope: Scope::Project.word(),
        });
    }
    let value = serde_json::to_value(server).map_err(|err| unusable(MCP_JSON, &err.to_string()))?;
    servers.insert(name.to_owned(), value);
    write_mcp_json(workspace, &file)
}

/// Removes `NAME` from the `mcpServers` of the workspace's `.mcp.json`.
pub fn remove_from_mcp_json(workspace: &Path, name: &str) -> Result<(), ManageError> {
    let not_found = || ManageError::NotFound { name: name.to_owned(), place: MCP_JSON.to_owned() };
    let mut file = read_mcp_json(workspace)?.ok_or_else(not_found)?;
    let servers = mcp_servers(&mut file, false)?.ok_or_else(not_found)?;
    if servers.shift_remove(name).is_none() {
        return Err(not_found());
    }
    write_mcp_json(workspace, &file)
}

fn unusable(place: &str, why: &str) -> ManageError {
    ManageError::Unusable { place: place.to_owned(), why: why.to_owned() }
}

/// The file `path` stands for: a user config kept as a link (into a dotfiles repository) is
/// edited where the link leads, so the link stays.
fn followed(path: &Path) -> Result<PathBuf, ManageError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => path.canonicalize().map_err(|source| ManageError::Io {
            what: "follow the link",
            path: path.to_owned(),
            source,
        }),
        _ => Ok(path.to_owned()),
    }
}

fn read_toml(path: &Path) -> Result<toml_edit::DocumentMut, ManageError> {
    let text = match std::fs::read(path) {
        Ok(bytes) if bytes.len() as u64 > MAX_FILE => {
            return Err(unusable(&path.display().to_string(), &format!("it is larger than {MAX_FILE} bytes")));
        }
        Ok(bytes) => String::from_utf8(bytes).map_err(|_| unusable(&path.display().to_string(), "it is not UTF-8"))?,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => return Err(ManageError::Io { what: "read", path: path.to_owned(), source }),
    };
    text.parse().map_err(|err: toml_edit::TomlError| {
        unusable(&path.display().to_string(), &format!("it is not valid TOML ({})", err.message()))
    })
}

/// `[mcp.servers]` of `doc`, made (as implicit tables: no empty headers) when `create`.
fn servers_table<'a>(
    doc: &'a mut toml_edit::DocumentMut,
    place: &str,
    create: bool,
) -> Result<Option<&'a mut toml_edit::Table>, ManageError> {
    let mut table = doc.as_table_mut();
    for key in ["mcp", "servers"] {
        if !table.contains_key(key) {
            if !create {
                return Ok(None);
            }
            let mut made = toml_edit::Table::new();
            made.set_implicit(true);
            table.insert(key, toml_edit::Item::Table(made));
        }
        table = match table.get_mut(key) {
            Some(toml_edit::Item::Table(inner)) => inner,
            _ => {
                let path = if key == "mcp" { "mcp" } else { "mcp.servers" };
                return Err(unusable(place, &format!("`{path}` is not a table written with a [header]")));
            }
        };
    }
    Ok(Some(table))
}

/// Holds an exclusive lock on `.NAME.lock` beside the user config `path` until dropped, so two
/// `tackle mcp add`/`remove` at once each read what the other wrote (without it the second
/// rename would drop the first one's server). The lock file stays, empty, in the user config
/// dir (never in a workspace).
fn lock_beside(path: &Path) -> Result<std::fs::File, ManageError> {
    let io = |what: &'static str| move |source| ManageError::Io { what, path: path.to_owned(), source };
    let dir = path.parent().ok_or_else(|| unusable(&path.display().to_string(), "it has no directory"))?;
    std::fs::create_dir_all(dir).map_err(io("make the directory of"))?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(dir.join(format!(".{name}.lock")))
        .map_err(io("lock"))?;
    lock.lock().map_err(io("lock"))?;
    Ok(lock)
}

/// Replaces the user config whole: a temporary file beside it (with the old file's mode, or
/// 0600 for a new one: it may hold tokens), renamed over it.
fn write_replacing(path: &Path, bytes: &[u8]) -> Result<(), ManageError> {
    let io = |what: &'static str| move |source| ManageError::Io { what, path: path.to_owned(), source };
    let dir = path.parent().ok_or_else(|| unusable(&path.display().to_string(), "it has no directory"))?;
    std::fs::create_dir_all(dir).map_err(io("make the directory of"))?;
    let mode = std::fs::metadata(path).map_or(0o600, |meta| meta.permissions().mode() & 0o7777);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let written = (|| {
        let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(&temp)?;
        file.set_permissions(std::fs::Permissions::from_mode(mode))?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written.map_err(io("write"))
}

/// `.mcp.json` as JSON, read beneath the workspace (a link is refused); `None` when missing.
fn read_mcp_json(workspace: &Path) -> Result<Option<Value>, ManageError> {
    let Some(bytes) = state::MCP_JSON.read(workspace, MAX_FILE)? else { return Ok(None) };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    serde_json::from_slice(&bytes).map(Some).map_err(|err| {
        unusable(MCP_JSON, &format!("it is not valid JSON ({err}); fix it or remove the server by hand"))
    })
}

/// The `mcpServers` object of `file`, made when `create`.
fn mcp_servers(file: &mut Value, create: bool) -> Result<Option<&mut serde_json::Map<String, Value>>, ManageError> {
    let root = file.as_object_mut().ok_or_else(|| unusable(MCP_JSON, "it is not a JSON object"))?;
    if !root.contains_key("mcpServers") {
        if !create {
            return Ok(None);
        }
        root.insert("mcpServers".to_owned(), Value::Object(serde_json::Map::new()));
    }
    match root.get_mut("mcpServers") {
        Some(Value::Object(servers)) => Ok(Some(servers)),
        _ => Err(unusable(MCP_JSON, "\"mcpServers\" is not an object")),
    }
}

fn write_mcp_json(workspace: &Path, file: &Value) -> Result<(), ManageError> {
    let mut text = serde_json::to_vec_pretty(file).map_err(|err| unusable(MCP_JSON, &err.to_string()))?;
    text.push(b'\n');
    state::MCP_JSON.replace(workspace, &text)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn adds_at_the_same_moment_all_stay() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let before = "# mine\ndefault_tools = \"default\"\n";
        std::fs::write(&path, before).unwrap();
        let threads: Vec<_> = (0..12)
            .map(|i| {
                let path = path.clone();
                std::thread::spawn(move || add_to_user_config(&path, &format!("s{i}"), &stdio("true")).unwrap())
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        let text = std::fs::read_to_string(&path).unwrap();
        let doc: toml::Table = text.parse().unwrap();
        let servers = doc["mcp"]["servers"].as_table().unwrap();
        assert_eq!(servers.len(), 12, "{text}");
        assert!(text.starts_with(before), "{text}");
    }

    fn stdio(command: &str) -> RawServer {
        RawServer {
            command: Some(command.to_owned()),
            args: vec!["--flag".into(), "two words".into()],
            env: [("TOKEN".to_owned(), "${TOKEN}".to_owned())].into(),
            ..RawServer::default()
        }
    }

    #[test]
    fn the_user_config_keeps_its_comments_and_other_keys() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let before = "# my settings\ndefault_tools = \"default\" # inline\n\n[mcp]\n# servers below\ndefer_threshold = 5\n\n[mcp.servers.old]\ncommand = \"old\" # keep me\n";
        std::fs::write(&path, before).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        add_to_user_config(&path, "git", &stdio("uvx")).unwrap();
        let after = std::fs::read_to_string(&path).unwrap();
        assert!(after.starts_with(before), "{after}");
        let parsed: toml::Table = after.parse().unwrap();
        let git: RawServer = parsed["mcp"]["servers"]["git"].clone().try_into().unwrap();
        assert_eq!(git, stdio("uvx"));
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o640);
        assert!(matches!(add_to_user_config(&path, "git", &stdio("x")), Err(ManageError::Exists { .. })));
        remove_from_user_config(&path, "git").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
        assert!(matches!(remove_from_user_config(&path, "git"), Err(ManageError::NotFound { .. })));
        // No temporary file is left beside it; the (empty) lock file stays.
        let mut left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        left.sort();
        assert_eq!(left, [".config.toml.lock", "config.toml"]);
    }

    #[test]
    fn a_new_user_config_is_private_and_a_linked_one_stays_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/config.toml");
        add_to_user_config(&path, "a", &stdio("a")).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert!(std::fs::read_to_string(&path).unwrap().starts_with("[mcp.servers.a]\n"));
        let dotfiles = dir.path().join("dotfiles.toml");
        std::fs::write(&dotfiles, "# dotfiles\n").unwrap();
        let link = dir.path().join("linked.toml");
        std::os::unix::fs::symlink(&dotfiles, &link).unwrap();
        add_to_user_config(&link, "b", &stdio("b")).unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert!(std::fs::read_to_string(&dotfiles).unwrap().contains("[mcp.servers.b]"));
    }

    #[test]
    fn bad_names_and_unusable_files_are_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        for name in ["", "a b", "a.b", "../x", "a\nb", &"x".repeat(65)] {
            assert!(matches!(add_to_user_config(&path, name, &stdio("x")), Err(ManageError::BadName(_))), "{name:?}");
        }
        assert!(!path.exists());
        for text in ["mcp = 1\n", "mcp = { servers = {} }\n", "[mcp\n"] {
            std::fs::write(&path, text).unwrap();
            assert!(matches!(add_to_user_config(&path, "a", &stdio("x")), Err(ManageError::Unusable { .. })), "{text}");
            assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        }
    }

    #[test]
    fn mcp_json_keeps_its_other_servers_and_keys_and_refuses_links() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        let before = r#"{"other": true, "mcpServers": {"zeta": {"command": "z", "custom": [1]}}}"#;
        std::fs::write(ws.join(MCP_JSON), before).unwrap();
        add_to_mcp_json(&ws, "alpha", &stdio("a")).unwrap();
        let after: Value = serde_json::from_slice(&std::fs::read(ws.join(MCP_JSON)).unwrap()).unwrap();
        assert_eq!(after["other"], true);
        assert_eq!(after["mcpServers"]["zeta"]["custom"], serde_json::json!([1]));
        let names: Vec<&String> = after["mcpServers"].as_object().unwrap().keys().collect();
        assert_eq!(names, ["zeta", "alpha"]);
        assert!(matches!(add_to_mcp_json(&ws, "zeta", &stdio("x")), Err(ManageError::Exists { .. })));
        remove_from_mcp_json(&ws, "alpha").unwrap();
        let again: Value = serde_json::from_slice(&std::fs::read(ws.join(MCP_JSON)).unwrap()).unwrap();
        assert_eq!(again, serde_json::from_str::<Value>(before).unwrap());
        // A linked .mcp.json is refused, and what it points to is left alone.
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("secret.json");
        std::fs::write(&target, "{}").unwrap();
        std::fs::remove_file(ws.join(MCP_JSON)).unwrap();
        std::os::unix::fs::symlink(&target, ws.join(MCP_JSON)).unwrap();
        assert!(matches!(add_to_mcp_json(&ws, "a", &stdio("a")), Err(ManageError::State(err)) if err.is_link()));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "{}");
        assert!(std::fs::symlink_metadata(ws.join(MCP_JSON)).unwrap().file_type().is_symlink());
        // Broken JSON is left as it is.
        std::fs::remove_file(ws.join(MCP_JSON)).unwrap();
        std::fs::write(ws.join(MCP_JSON), "{broken").unwrap();
        assert!(matches!(add_to_mcp_json(&ws, "a", &stdio("a")), Err(ManageError::Unusable { .. })));
        assert_eq!(std::fs::read_to_string(ws.join(MCP_JSON)).unwrap(), "{broken");
    }
}
