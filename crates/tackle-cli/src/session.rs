//! How the commands ask the library for a session: the options every command shares, given to
//! one `tackle::SessionBuilder` (no assembly here), with notices printed on stderr and the
//! terminal prompt for workspace MCP servers when someone can answer it.

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};

use tackle::config::LoadOptions;
use tackle::config::McpCandidate as Candidate;
use tackle::config::{TrustPrompt, TrustRequest};
use tackle::{BuildError, Config, McpImport, SessionBuilder, SessionTemplate};

use crate::cli::{SessionArgs, ToolSelection};
use crate::exit::Failure;

/// The default selection of the `tools` commands: every built-in, opt-in ones included, and
/// every imported MCP tool.
pub const TOOLS_DEFAULT: &str = "all,mcp";

impl From<BuildError> for Failure {
    /// Nothing ran: a usage or configuration error (exit 2), or the container engine or image
    /// failed (exit 3: worth a retry; docs/reference/cli.md#exit-codes).
    fn from(err: BuildError) -> Self {
        if err.is_infrastructure() {
            return Failure::infra(err.to_string());
        }
        Failure::usage(err.to_string())
    }
}

/// The workspace root: `--workspace` or the current directory, made absolute.
pub fn workspace(dir: Option<&PathBuf>) -> Result<PathBuf, Failure> {
    let dir = match dir {
        Some(dir) => dir.clone(),
        None => std::env::current_dir()
            .map_err(|err| Failure::usage(format!("cannot read the current directory: {err}")))?,
    };
    dir.canonicalize().map_err(|err| {
        Failure::usage(format!(
            "workspace {} is not usable: {err}; pass an existing directory to --workspace",
            dir.display()
        ))
    })
}

/// The configuration layers of `workspace`, with the workspace's settings trusted as the person
/// consented (asked on a terminal when `interactive`). Notices about ignored workspace settings
/// and about trust go to stderr, once.
pub fn config(workspace: &Path, trust_workspace: bool, interactive: bool) -> Result<Config, Failure> {
    let prompt: Option<TrustPrompt<'_>> = if interactive { Some(&ask_trust) } else { None };
    let options = LoadOptions { trust_flag: trust_workspace, prompt, store: None };
    let config = Config::load_with(workspace, options).map_err(|err| Failure::usage(err.to_string()))?;
    for notice in config.notices() {
        diagln!("tackle: {notice}");
    }
    Ok(config)
}

/// The terminal prompt for the workspace's settings (a yes is remembered until they change).
fn ask_trust(request: &TrustRequest<'_>) -> bool {
    let why = if request.changed.is_empty() {
        format!("has settings that need your consent: {}", request.wanted.join(", "))
    } else {
        format!("has settings that changed since you trusted them: {}", request.changed.join(", "))
    };
    // Each command the yes would let run, so the person knows what they agree to.
    let runs: String = match request.runs {
        [] => String::new(),
        runs => format!(
            "\nTrusting them lets these run:\n{}",
            runs.iter().map(|line| format!("  {line}\n")).collect::<String>()
        ),
    };
    let runs = runs.trim_end();
    diag!(
        "tackle: the workspace {} {why}{runs}\nTrust its settings (remembered until they change)? [y/N] ",
        request.workspace.display()
    );
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer).is_ok() && matches!(answer.trim(), "y" | "Y" | "yes" | "Yes")
}

/// A builder for `workspace` with `config`, printing notices on stderr and importing the MCP
/// servers of the configuration (asking about workspace servers when someone can answer).
pub fn builder(workspace: &Path, config: Config, selection: &ToolSelection) -> SessionBuilder {
    let mut builder = SessionBuilder::new(workspace)
        .config(config)
        .on_notice(|line| diagln!("tackle: {line}"))
        .mcp(McpImport::UserAndWorkspace)
        .mcp_required(false)
        .allow_project_mcp(selection.allow_project_mcp);
    if interactive() {
        builder = builder.mcp_consent_prompt(ask_consent);
    }
    match &selection.tools {
        Some(list) => builder.tools(list),
        None => builder,
    }
}

/// The builder of the commands that run tools (`tools call`, `tools batch`): the tools
/// commands' default selection and the permission mode of `--permission-mode`.
pub fn tools_builder(args: &SessionArgs) -> Result<SessionBuilder, Failure> {
    let workspace = workspace(args.workspace.as_ref())?;
    let config = config(&workspace, args.trust_workspace, interactive())?;
    let builder = builder(&workspace, config, &args.selection);
    Ok(crate::commands::containers::apply(builder, &args.container, &workspace)
        .default_tools(TOOLS_DEFAULT)
        .permission_mode(args.permission_mode)
        .rules(args.rules.flags()))
}

/// The terminal prompt for a workspace MCP server (the answer is remembered).
pub fn ask_consent(candidate: &Candidate) -> bool {
    let what = match (&candidate.raw.command, &candidate.raw.url) {
        (Some(command), _) => std::iter::once(command.as_str())
            .chain(candidate.raw.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        (None, Some(url)) => url.clone(),
        (None, None) => "(nothing to run)".to_owned(),
    };
    diag!(
        "tackle: {} defines the MCP server '{}', which runs: {what}\nStart it (the answer is remembered)? [y/N] ",
        candidate.origin.label(),
        candidate.name
    );
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer).is_ok() && matches!(answer.trim(), "y" | "Y" | "yes" | "Yes")
}

/// Whether prompts can be shown (stdin and stderr are terminals).
pub fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Resolves the sandbox of sessions that run commands now, before any work (the library
/// waits for the first command): an explicitly chosen sandbox that is unavailable is a usage
/// error, and the no-sandbox warning comes first.
pub fn check_sandbox(template: &SessionTemplate) -> Result<(), Failure> {
    // In a container the commands run there, under the tackle inside's sandbox.
    if template.container().is_some() {
        return Ok(());
    }
    match template.sandbox() {
        Some(Err(err)) => Err(err.into()),
        _ => Ok(()),
    }
}

/// [`check_sandbox`], then says on stderr which sandbox confines the session's commands
/// (`tackle: commands run under bubblewrap (network off)`), for `run`, `chat`, `tools call` and `mcp serve`:
/// only when the sessions have a shell tool, and not when Tackle already warned that commands
/// run without a sandbox.
pub fn announce_sandbox(template: &SessionTemplate) -> Result<(), Failure> {
    check_sandbox(template)?;
    if template.container().is_some() {
        return Ok(());
    }
    if let Some(Ok(sandbox)) = template.sandbox()
        && sandbox.warning().is_none()
    {
        diagln!("tackle: {}", sandbox.summary());
    }
    Ok(())
}
