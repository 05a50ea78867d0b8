//! Where the tools defined in files come from and which of them a session offers
//! (docs/reference/tools.md#tools-defined-in-files): the person's own `tools/` directory
//! beside the user config the configuration was loaded from (trusted as written; none for a
//! configuration an embedder made from tables), then the workspace's `.tackle/tools/`, read
//! once with the workspace's settings (`tackle_policy::config::snapshot`), so that the
//! consent to those settings covers exactly these files and a changed file needs consent
//! again. Without that consent the workspace's files are not loaded.
//!
//! A file that cannot be used (not TOML, a missing key, a bad schema, a name that is taken or
//! that no dialect accepts, a link) is reported with its error, and the others still load:
//! `tackle tools list` names each one.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tackle_core::registry::{NameIndex, Registry, ToolSource, normalize};
use tackle_core::{DynTool, ToolSpec};
use tackle_policy::config::Config;
use tackle_policy::config::snapshot::{MAX_SETTINGS_BYTES, SettingsFile, TOOL_FILE_SUFFIX};
use tackle_sandbox::process::{SandboxPolicy, restrict};
use tackle_tools::defined::{DefinedTool, Trust, parse_definition};

use crate::notice::Notice;

/// The directory of the person's own tool files in the user config directory.
pub const USER_TOOLS_DIR: &str = "tools";

/// The toolset every tool defined in a file belongs to (besides the toolsets MCP tools join).
pub const FILES_TOOLSET: &str = "files";

/// A tool file that was not loaded, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedToolFile {
    /// The file as the person sees it (`.tackle/tools/x.toml`, or the user file's full path).
    pub path: String,
    /// Why it was not loaded.
    pub error: String,
}

/// What the tool files of a session came to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileToolReport {
    /// The tools loaded: `(name, file)`.
    pub loaded: Vec<(String, String)>,
    /// The files not loaded.
    pub skipped: Vec<SkippedToolFile>,
}

/// One file to load: its path as shown, its bytes or why they could not be read, and who wrote it.
struct Candidate {
    path: String,
    bytes: Result<Vec<u8>, String>,
    workspace: bool,
}

/// Loads the tool files for `workspace` into `registry`; notices for the person go to
/// `notice`. A name already in `registry` (a built-in's or an embedder's name or alias, or a
/// langtag of a text call format) is refused, and so is a second file with a name taken.
pub(crate) fn load(config: &Config, workspace: &Path, registry: &mut Registry, notice: &Notice) -> FileToolReport {
    let mut report = load_quietly(config, workspace, registry, notice);
    // A file's name and what it holds reach the person's terminal: no control characters.
    for skipped in &mut report.skipped {
        skipped.path = escape_controls(&skipped.path);
        skipped.error = escape_controls(&skipped.error);
    }
    for skipped in &report.skipped {
        notice.say(&format!("tool file {} skipped: {}", skipped.path, skipped.error));
    }
    report
}

/// [`load`] but for the notices of skipped files.
fn load_quietly(config: &Config, workspace: &Path, registry: &mut Registry, notice: &Notice) -> FileToolReport {
    let mut report = FileToolReport::default();
    let mut candidates = config.user_dir().map(user_candidates).unwrap_or_default();
    let workspace_files = config.snapshot().tool_files();
    if !workspace_files.is_empty() && !config.workspace_trusted {
        for (path, _) in workspace_files {
            report.skipped.push(SkippedToolFile {
                path: path.clone(),
                error: "not loaded: tools defined by the workspace need your consent to its settings (answer the \
                        prompt on a terminal, pass --trust-workspace or set TACKLE_TRUST_WORKSPACE=1, or list the \
                        workspace in trusted_workspaces in your user config)"
                    .to_owned(),
            });
        }
    } else {
        candidates.extend(workspace_files.iter().map(|(path, file)| Candidate {
            path: escape_controls(path),
            bytes: match file {
                SettingsFile::Present(bytes) => Ok(bytes.clone()),
                SettingsFile::Unusable(why) => Err(why.clone()),
                SettingsFile::Absent => Err("it does not exist".to_owned()),
            },
            workspace: true,
        }));
    }
    if candidates.is_empty() {
        return report;
    }
    let restriction_available = candidates.iter().any(|c| c.workspace) && restriction_available(config, workspace);
    let mut toolsets: Vec<String> =
        registry.import_toolsets().into_iter().filter(|toolset| toolset != tackle_mcp::client::MCP_TOOLSET).collect();
    toolsets.push(FILES_TOOLSET.to_owned());
    let toolsets: Vec<&str> = toolsets.iter().map(String::as_str).collect();
    for candidate in candidates {
        let skip = |error: String| SkippedToolFile { path: candidate.path.clone(), error };
        let parsed = match &candidate.bytes {
            Ok(bytes) => parse_definition(bytes).map_err(|err| err.to_string()),
            Err(why) => Err(why.clone()),
        };
        let definition = match parsed {
            Ok(definition) => definition,
            Err(error) => {
                report.skipped.push(skip(error));
                continue;
            }
        };
        if let Some(taken) = taken_by(registry, &definition.name) {
            report.skipped.push(skip(format!("the name '{}' {taken}; rename the tool", definition.name)));
            continue;
        }
        let trust = if candidate.workspace { Trust::Workspace { restriction_available } } else { Trust::User };
        let tool = Arc::new(DefinedTool::new(definition, trust));
        if candidate.workspace && tool.definition().read_only && !tool.runs_restricted() {
            notice.say(&format!(
                "the workspace tool {} claims to be read-only, but commands cannot run read-only restricted here, so \
                 the claim does not count ({})",
                tool.definition().name,
                candidate.path
            ));
        }
        report.loaded.push((tool.definition().name.clone(), candidate.path.clone()));
        let tool: Arc<dyn DynTool> = tool;
        registry.register_dyn(&toolsets, ToolSource::File(candidate.path), Arc::new(move || Arc::clone(&tool)));
    }
    report
}

/// The person's tool files, `tools/*.toml` in the user config directory `user_dir`, sorted
/// by name.
fn user_candidates(user_dir: &Path) -> Vec<Candidate> {
    let dir = user_dir.join(USER_TOOLS_DIR);
    let Ok(entries) = std::fs::read_dir(&dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(TOOL_FILE_SUFFIX)))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| Candidate {
            path: escape_controls(&path.display().to_string()),
            bytes: read_user_file(&path),
            workspace: false,
        })
        .collect()
}

/// A user tool file: a regular file (links are the person's own) of at most
/// [`MAX_SETTINGS_BYTES`].
fn read_user_file(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).map_err(|err| format!("cannot read it: {err}"))?;
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err("it is not a regular file".to_owned());
    }
    let mut bytes = Vec::new();
    file.take(MAX_SETTINGS_BYTES + 1).read_to_end(&mut bytes).map_err(|err| format!("cannot read it: {err}"))?;
    if bytes.len() as u64 > MAX_SETTINGS_BYTES {
        return Err(format!("it is too large (over {MAX_SETTINGS_BYTES} bytes)"));
    }
    Ok(bytes)
}

/// What already answers to `name` in `registry`, if anything: a tool's name, alias or
/// normalized name (a model's call of `Bash` or `read-file` must keep reaching the
/// built-in), a langtag of the text call formats (`sh`, `save`), or a name the MCP hub
/// takes later.
fn taken_by(registry: &Registry, name: &str) -> Option<String> {
    // The MCP hub adds these later, when an imported server offers resources.
    let later = [tackle_mcp::client::resources::LIST_RESOURCES, tackle_mcp::client::resources::READ_RESOURCE];
    if let Some(reserved) = later.iter().find(|reserved| normalize(reserved) == normalize(name)) {
        return Some(format!("is reserved for the MCP tool {reserved}"));
    }
    let specs: Vec<&ToolSpec> = registry.entries().iter().map(|entry| &entry.spec).collect();
    if let Some(position) = NameIndex::new(specs.iter().copied()).resolve(name) {
        let entry = &registry.entries()[position];
        let taken = &entry.spec.name;
        return Some(match &entry.source {
            ToolSource::Builtin => format!("would shadow the built-in tool {taken}"),
            ToolSource::Mcp(_) => format!("would shadow the MCP tool {taken}"),
            ToolSource::Embedded => format!("would shadow the embedded tool {taken}"),
            ToolSource::File(path) => format!("is already taken by the tool defined in {path}"),
        });
    }
    specs
        .iter()
        .find(|spec| spec.block.as_ref().is_some_and(|block| block.langtags.iter().any(|tag| tag == name)))
        .map(|spec| format!("is a langtag of the tool {} in the text call formats", spec.name))
}

/// Whether commands can run read-only restricted under the configuration's sandbox, as the
/// session's settings decide it (`crate::settings`).
fn restriction_available(config: &Config, workspace: &Path) -> bool {
    SandboxPolicy::from_config(config, workspace).is_ok_and(|(policy, _)| restrict::availability(&policy).is_ok())
}

/// `text` with every control character escaped (`\u{1b}`), for the person's terminal.
fn escape_controls(text: &str) -> String {
    text.chars().flat_map(|c| if c.is_control() { c.escape_default().collect::<Vec<_>>() } else { vec![c] }).collect()
}
