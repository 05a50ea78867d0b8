//! `tackle mcp add`, `list`, `get` and `remove` (docs/mcp.md#managing-servers-from-the-command-line):
//! the servers Tackle imports, managed as Claude Code's `claude mcp` does. The definitions are
//! written by `tackle::mcp_servers`; this module is the grammar and the printing.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use serde_json::json;
use tackle::mcp_servers::{self as servers, Health, RawServer, Scope, ServerReport};

use crate::exit::{CommandResult, Failure, OK, TOOL_FAILED, write_failure};
use crate::session;

/// Where `add` writes and `remove` removes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScopeArg {
    /// The user config file: every workspace, yours only.
    User,
    /// The workspace's `.mcp.json`, shared with whoever clones it.
    Project,
}

impl From<ScopeArg> for Scope {
    fn from(scope: ScopeArg) -> Scope {
        match scope {
            ScopeArg::User => Scope::User,
            ScopeArg::Project => Scope::Project,
        }
    }
}

/// `--transport`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TransportArg {
    /// A command speaking MCP on stdio.
    Stdio,
    /// Streamable HTTP.
    Http,
    /// The legacy HTTP+SSE transport (refused).
    Sse,
}

#[derive(Debug, Args)]
pub struct AddArgs {
    /// The server's name (letters, digits, '-', '_'); its tools become mcp__NAME__TOOL.
    #[arg(value_name = "NAME")]
    pub name: String,
    /// The command that starts a stdio server and its arguments, best after `--`
    /// (`tackle mcp add git -- uvx mcp-server-git`); with `--transport http`, the URL.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "COMMAND")]
    pub command: Vec<String>,
    /// stdio (a command) or http (a URL: `--transport http NAME URL`, as `claude mcp add`
    /// takes it); sse is not supported.
    #[arg(long, short = 't', value_enum)]
    pub transport: Option<TransportArg>,
    /// The URL of a streamable HTTP server, instead of a command.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// With --url: a header sent with every request, `NAME: VALUE` (repeatable; `${VAR}`
    /// is expanded when the server starts, so quote it to keep a token out of the file).
    #[arg(long = "header", short = 'H', value_name = "K:V")]
    pub headers: Vec<String>,
    /// With a command: an environment variable for the server, `K=V` (repeatable).
    #[arg(long = "env", short = 'e', value_name = "K=V")]
    pub env: Vec<String>,
    /// user: your user config (the default); project: the workspace's .mcp.json.
    #[arg(long, short = 's', value_enum, default_value = "user")]
    pub scope: ScopeArg,
    /// The workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct McpListArgs {
    /// Start the servers the workspace defines without consent remembered for them (also
    /// TACKLE_ALLOW_PROJECT_MCP=1); without it they are listed as not approved, not started.
    #[arg(long)]
    pub allow_project_mcp: bool,
    /// The workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Print one JSON array.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct GetArgs {
    /// The server's name.
    #[arg(value_name = "NAME")]
    pub name: String,
    /// Start it even when the workspace defines it and consent is not remembered (also
    /// TACKLE_ALLOW_PROJECT_MCP=1).
    #[arg(long)]
    pub allow_project_mcp: bool,
    /// The workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RemoveArgs {
    /// The server's name.
    #[arg(value_name = "NAME")]
    pub name: String,
    /// Remove it from this scope only (needed when both define it).
    #[arg(long, short = 's', value_enum)]
    pub scope: Option<ScopeArg>,
    /// The workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
}

/// `tackle mcp add`.
pub fn add(args: AddArgs) -> CommandResult {
    let workspace = session::workspace(args.workspace.as_ref())?;
    let server = definition(&args)?;
    let scope = Scope::from(args.scope);
    let written =
        servers::add(scope, &workspace, &args.name, &server).map_err(|err| Failure::failed(err.to_string()))?;
    let what = match &server.url {
        Some(url) => format!("HTTP server {url}"),
        None => format!("stdio server `{}`", servers::target(&server)),
    };
    diagln!("Added MCP server '{}' ({what}) to {}.", args.name, written.display());
    if scope == Scope::Project {
        diagln!(
            "It is shared with whoever uses this workspace; others are asked before it starts, you are not (you added it)."
        );
        let literal: Vec<&str> = server
            .env
            .iter()
            .chain(&server.headers)
            .filter(|(_, value)| !value.is_empty() && !value.contains("${"))
            .map(|(key, _)| key.as_str())
            .collect();
        if !literal.is_empty() {
            diagln!(
                "tackle: {} written into .mcp.json as given; a secret there is shared with the repository: write it as ${{VAR}} (quoted) to take it from the environment instead.",
                literal.join(", ")
            );
        }
    }
    Ok(ExitCode::from(OK))
}

/// The definition `add` writes.
fn definition(args: &AddArgs) -> Result<RawServer, Failure> {
    servers::check_name(&args.name).map_err(|err| Failure::usage(err.to_string()))?;
    let mut server = RawServer::default();
    let positional_url;
    let (url, command): (Option<&String>, &[String]) = match args.transport {
        Some(TransportArg::Sse) => {
            return Err(Failure::usage(
                "the legacy HTTP+SSE transport is not supported; most servers also speak streamable HTTP (--transport http)",
            ));
        }
        Some(TransportArg::Http) if args.url.is_none() => match args.command.as_slice() {
            [url] => {
                positional_url = url.clone();
                (Some(&positional_url), &[])
            }
            _ => {
                return Err(Failure::usage(format!(
                    "--transport http takes one URL: tackle mcp add --transport http {} https://…/mcp",
                    args.name
                )));
            }
        },
        Some(TransportArg::Stdio) if args.url.is_some() => {
            return Err(Failure::usage("--transport stdio takes a command, not --url"));
        }
        _ => (args.url.as_ref(), args.command.as_slice()),
    };
    match (url, command.split_first()) {
        (Some(_), Some(_)) => {
            return Err(Failure::usage("give either --url URL or a command after `--`, not both"));
        }
        (None, None) => {
            return Err(Failure::usage(format!(
                "give the server's command after `--` (tackle mcp add {0} -- npx -y some-server) or its URL (tackle mcp add {0} --url https://…/mcp)",
                args.name
            )));
        }
        (Some(url), None) => {
            if !args.env.is_empty() {
                return Err(Failure::usage("--env is for a command's environment; an HTTP server takes --header"));
            }
            let rest = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://"));
            if !rest.is_some_and(|rest| !rest.is_empty() && !rest.starts_with('/'))
                || url.chars().any(|c| c.is_whitespace() || c.is_control())
            {
                return Err(Failure::usage(format!("--url '{url}' is not an http:// or https:// URL")));
            }
            server.kind = Some("http".to_owned());
            server.url = Some(url.clone());
            server.headers = pairs(&args.headers, ':', "--header", "NAME: VALUE")?;
        }
        (None, Some((command, rest))) => {
            if !args.headers.is_empty() {
                return Err(Failure::usage("--header is for an HTTP server (--url); a command takes --env"));
            }
            server.command = Some(command.clone());
            server.args = rest.to_vec();
            server.env = pairs(&args.env, '=', "--env", "K=V")?;
        }
    }
    Ok(server)
}

/// `K=V` (or `K: V`) items as a map; a repeated key is an error.
fn pairs(items: &[String], separator: char, flag: &str, shape: &str) -> Result<BTreeMap<String, String>, Failure> {
    let mut map = BTreeMap::new();
    for item in items {
        let (key, value) = item
            .split_once(separator)
            .map(|(k, v)| (k.trim(), if separator == ':' { v.trim() } else { v }))
            .filter(|(k, _)| !k.is_empty() && !k.chars().any(|c| c.is_whitespace() || c.is_control()))
            .ok_or_else(|| Failure::usage(format!("{flag} '{item}' is not {shape}")))?;
        if map.insert(key.to_owned(), value.to_owned()).is_some() {
            return Err(Failure::usage(format!("{flag} gives {key} twice")));
        }
    }
    Ok(map)
}

/// `tackle mcp remove`.
pub async fn remove(args: RemoveArgs) -> CommandResult {
    let workspace = session::workspace(args.workspace.as_ref())?;
    let scope = match args.scope {
        Some(scope) => Scope::from(scope),
        None => only_scope_defining(&workspace, &args.name).await?,
    };
    let written = servers::remove(scope, &workspace, &args.name).map_err(|err| Failure::failed(err.to_string()))?;
    diagln!("Removed MCP server '{}' from {}.", args.name, written.display());
    Ok(ExitCode::from(OK))
}

/// The one scope that defines `name` (user config or `.mcp.json`); both is an error asking for
/// `--scope`.
async fn only_scope_defining(workspace: &std::path::Path, name: &str) -> Result<Scope, Failure> {
    let config = session::config(workspace, false, false)?;
    let (reports, _) = servers::check(&config, workspace, false, Some(name), false).await;
    let definitions: Vec<servers::Origin> =
        reports.into_iter().flat_map(|report| report.definitions.into_iter().map(|d| d.origin)).collect();
    let scopes: Vec<Scope> = definitions
        .iter()
        .filter_map(|origin| match origin {
            servers::Origin::User => Some(Scope::User),
            servers::Origin::McpJson => Some(Scope::Project),
            servers::Origin::WorkspaceToml => None,
        })
        .collect();
    match scopes.as_slice() {
        [one] => Ok(*one),
        [] if definitions.contains(&servers::Origin::WorkspaceToml) => Err(Failure::failed(format!(
            "MCP server '{name}' is defined in the workspace's tackle.toml, which tackle mcp does not edit; remove it there"
        ))),
        [] => Err(Failure::failed(format!(
            "no MCP server named '{name}' is defined in {} or {}",
            servers::place(Scope::User),
            servers::place(Scope::Project)
        ))),
        _ => Err(Failure::usage(format!(
            "MCP server '{name}' is defined in both {} and {}; say which with --scope user or --scope project",
            servers::place(Scope::User),
            servers::place(Scope::Project)
        ))),
    }
}

/// `tackle mcp list`.
pub async fn list(args: McpListArgs) -> CommandResult {
    let workspace = session::workspace(args.workspace.as_ref())?;
    let config = session::config(&workspace, false, false)?;
    if !args.json {
        diagln!("Checking MCP servers…");
    }
    let (reports, notices) = servers::check(&config, &workspace, args.allow_project_mcp, None, true).await;
    for notice in notices {
        diagln!("tackle: {notice}");
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        let array: Vec<_> = reports.iter().map(as_json).collect();
        writeln!(out, "{}", serde_json::Value::Array(array)).map_err(write_failure)?;
        return Ok(ExitCode::from(OK));
    }
    if reports.is_empty() {
        diagln!(
            "No MCP servers are defined. Add one with `tackle mcp add NAME -- COMMAND ARGS…` or `tackle mcp add NAME --url URL`."
        );
        return Ok(ExitCode::from(OK));
    }
    for report in &reports {
        writeln!(
            out,
            "{}: {} ({}, {}) - {}",
            escaped(&report.name),
            escaped(&report.target()),
            servers::origin_label(report.chosen.origin),
            escaped(&report.transport()),
            escaped(&report.health.phrase())
        )
        .map_err(write_failure)?;
    }
    Ok(ExitCode::from(OK))
}

/// `tackle mcp get`.
pub async fn get(args: GetArgs) -> CommandResult {
    let workspace = session::workspace(args.workspace.as_ref())?;
    let config = session::config(&workspace, false, false)?;
    let (reports, notices) = servers::check(&config, &workspace, args.allow_project_mcp, Some(&args.name), true).await;
    for notice in notices {
        diagln!("tackle: {notice}");
    }
    let Some(report) = reports.first() else {
        return Err(Failure {
            code: ExitCode::from(TOOL_FAILED),
            message: format!("no MCP server named '{}' is defined", args.name),
        });
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", as_json(report)).map_err(write_failure)?;
        return Ok(ExitCode::from(OK));
    }
    let raw = &report.chosen.raw;
    let mut lines = vec![
        escaped(&report.name),
        format!("  scope: {}", servers::origin_label(report.chosen.origin)),
        format!("  transport: {}", escaped(&report.transport())),
    ];
    if report.transport() == "stdio" {
        lines.push(format!("  command: {}", escaped(&report.target())));
        lines.extend(raw.env.iter().map(|(k, v)| format!("  env: {}={}", escaped(k), escaped(v))));
    } else {
        lines.push(format!("  url: {}", escaped(&report.target())));
        lines.extend(raw.headers.iter().map(|(k, v)| format!("  header: {}: {}", escaped(k), escaped(v))));
    }
    lines.push(format!("  status: {}", escaped(&report.health.phrase())));
    for other in report.definitions.iter().filter(|d| d.origin != report.chosen.origin) {
        lines.push(format!("  also defined in: {} (not used)", servers::origin_label(other.origin)));
    }
    writeln!(out, "{}", lines.join("\n")).map_err(write_failure)?;
    Ok(ExitCode::from(OK))
}

/// A value from a definition or a server, its control characters escaped (a workspace's
/// `.mcp.json` or a server's answer cannot draw on the terminal).
fn escaped(text: &str) -> String {
    text.chars().flat_map(|c| if c.is_control() { c.escape_default().collect::<Vec<_>>() } else { vec![c] }).collect()
}

fn as_json(report: &ServerReport) -> serde_json::Value {
    let (status, tools, reason) = match &report.health {
        Health::Connected { tools } => ("connected", Some(*tools), None),
        Health::NeedsLogin => ("needs_login", None, None),
        Health::Failed(why) => ("failed", None, Some(why.clone())),
        Health::NotApproved => ("not_approved", None, None),
        Health::Disabled => ("disabled", None, None),
        Health::Invalid(why) => ("invalid", None, Some(why.clone())),
        Health::Unchecked => ("unchecked", None, None),
    };
    json!({
        "name": report.name,
        "scope": match report.chosen.origin {
            servers::Origin::User => "user",
            servers::Origin::McpJson => "project",
            servers::Origin::WorkspaceToml => "tackle.toml",
        },
        "transport": report.transport(),
        "target": report.target(),
        "definition": report.chosen.raw,
        "status": status,
        "tools": tools,
        "reason": reason,
    })
}

#[derive(Debug, Args)]
pub struct PromptArgs {
    /// The server's name.
    #[arg(value_name = "SERVER")]
    pub server: String,
    /// The prompt's name; without it, the server's prompts are listed.
    #[arg(value_name = "PROMPT")]
    pub prompt: Option<String>,
    /// An argument of the prompt, `k=v` (repeatable).
    #[arg(long = "arg", short = 'a', value_name = "K=V")]
    pub args: Vec<String>,
    /// Start the server even when the workspace defines it and consent is not remembered
    /// (also TACKLE_ALLOW_PROJECT_MCP=1).
    #[arg(long)]
    pub allow_project_mcp: bool,
    /// The workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
}

/// `tackle mcp prompt`.
pub async fn prompt(args: PromptArgs) -> CommandResult {
    for arg in &args.args {
        if arg.split_once('=').is_none_or(|(key, _)| key.is_empty()) {
            return Err(Failure::usage(format!("--arg '{arg}' is not K=V")));
        }
    }
    let workspace = session::workspace(args.workspace.as_ref())?;
    let config = session::config(&workspace, false, false)?;
    let name = args.prompt.as_deref().unwrap_or_default();
    let text = servers::prompt_text(&config, &workspace, args.allow_project_mcp, &args.server, name, &args.args)
        .await
        .map_err(|err| Failure::failed(err.to_string()))?;
    // The server's text, control characters escaped (new lines and tabs kept).
    let text: String = text
        .split('\n')
        .map(|line| line.split('\t').map(escaped).collect::<Vec<_>>().join("\t"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}").map_err(write_failure)?;
    Ok(ExitCode::from(OK))
}
