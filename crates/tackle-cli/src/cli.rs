//! The command-line grammar (docs/reference/cli.md), as clap derive types.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use tackle::agent::CallFormat;
use tackle::{Dialect, PermissionMode};

/// Tackle: the hands of an LLM agent.
///
/// Tackle gives a model tools to read, search and edit files and run commands in your
/// project, with permissions, a sandbox and a trajectory of every step. Run a task with
/// `tackle run "TASK"` or talk with `tackle chat` (with OPENAI_API_KEY or ANTHROPIC_API_KEY
/// set), call the tools yourself with `tackle tools`, or serve them to another agent with
/// `tackle mcp serve`.
#[derive(Debug, Parser)]
#[command(name = "tackle", version, about, long_about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a task with a model: the agent reads, edits and runs commands until it is done.
    Run(RunArgs),
    /// Talk with a model in a session on this terminal; each message is a task.
    Chat(ChatArgs),
    /// Write a commented tackle.toml (and an AGENTS.md stub when there is none).
    Init(InitArgs),
    /// Print a shell completion script (e.g. `tackle completions bash > ~/.local/share/bash-completion/completions/tackle`).
    Completions(CompletionsArgs),
    /// Show, check, re-run or export (as ATIF) a trajectory written by `tackle run`.
    Replay(ReplayArgs),
    /// List, describe and call tools.
    Tools {
        #[command(subcommand)]
        command: ToolsCommand,
    },
    /// Find the tool calls (or the code blocks) in a model message read from stdin.
    Parse(ParseArgs),
    /// Serve Tackle's tools to MCP clients (Claude Code, Codex, Cursor, ...), and manage the
    /// MCP servers Tackle imports.
    Mcp {
        #[command(subcommand)]
        command: McpCommand,
    },
    /// Index source code and ask it: definitions, references, outlines, a repository map.
    Ckg {
        #[command(subcommand)]
        command: crate::commands::ckg::CkgCommand,
    },
    /// Check what the permission rules decide for a call, or list every rule.
    Permissions {
        #[command(subcommand)]
        command: PermissionsCommand,
    },
    /// Manage the containers Tackle creates for --container sessions.
    Containers {
        #[command(subcommand)]
        command: ContainersCommand,
    },
    /// Show the workspace's task board (.tackle/tasks.json).
    Tasks {
        #[command(subcommand)]
        command: crate::commands::tasks::TasksCommand,
    },
    /// Run many tasks, each as `tackle run`, and collect their results (SWE-bench style).
    Fleet {
        #[command(subcommand)]
        command: crate::commands::fleet::FleetCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum ContainersCommand {
    /// Remove the containers of Tackle sessions that are over (crashed or killed).
    Prune(PruneArgs),
    /// The main process of a container Tackle created: waits until the container is stopped.
    #[command(hide = true)]
    Hold,
}

#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Also remove containers kept with `keep`.
    #[arg(long)]
    pub all: bool,
}

/// Where a session's tools run: inside a Docker or Podman container (docs/containers.md).
#[derive(Debug, Args, Clone, Default)]
pub struct ContainerArgs {
    /// Run the tools inside a container: an image to create one from, or a running
    /// container's id or name (also [container] image).
    #[arg(long, value_name = "IMAGE|ID")]
    pub container: Option<String>,
    /// The workspace inside the container (default: [container] workdir, else the image's
    /// working directory).
    #[arg(long, value_name = "DIR")]
    pub container_workdir: Option<String>,
    /// Mount the host workspace into the container at the workdir (/workspace by default).
    #[arg(long)]
    pub mount_workspace: bool,
    /// The tackle binary to put into the container (default: [container] binary, else this
    /// one); a static musl build runs in any image of its architecture.
    #[arg(long, value_name = "PATH")]
    pub tackle_binary: Option<PathBuf>,
    /// Keep the container at the end of the session (also [container] keep).
    #[arg(long)]
    pub keep_container: bool,
    /// Ignore [container]: run the tools here (the tackle inside a container runs with it).
    #[arg(long, conflicts_with = "container")]
    pub no_container: bool,
}

#[derive(Debug, Subcommand)]
pub enum PermissionsCommand {
    /// Print the decision (allow, ask, deny) for a call, the rule and the file it came from.
    Check(CheckArgs),
    /// Print every rule with its source.
    List(PermissionsListArgs),
}

/// Permission rules given on the command line (Claude Code syntax, repeatable).
#[derive(Debug, Args, Clone, Default)]
pub struct RuleArgs {
    /// Allow calls this rule matches, e.g. 'Bash(npm test:*)' or 'Edit(src/**)'.
    #[arg(long = "allow", value_name = "RULE")]
    pub allow: Vec<String>,
    /// Ask before calls this rule matches, e.g. 'Bash(git push:*)'.
    #[arg(long = "ask", value_name = "RULE")]
    pub ask: Vec<String>,
    /// Deny calls this rule matches, e.g. 'Read(./.env)' or 'Bash(rm -rf *)'.
    #[arg(long = "deny", value_name = "RULE")]
    pub deny: Vec<String>,
}

impl RuleArgs {
    /// The flags as the builder takes them.
    pub fn flags(&self) -> tackle::RuleFlags {
        tackle::RuleFlags { allow: self.allow.clone(), ask: self.ask.clone(), deny: self.deny.clone() }
    }
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The call as a rule names it, e.g. 'Bash(git push origin main)' or 'Edit(src/a.rs)'.
    #[arg(value_name = "CALL", required_unless_present = "tool")]
    pub call: Option<String>,
    /// The tool to check (with --args).
    #[arg(long, value_name = "NAME", conflicts_with = "call")]
    pub tool: Option<String>,
    /// The arguments of --tool as one JSON object (default: `{}`).
    #[arg(long, value_name = "JSON", requires = "tool")]
    pub args: Option<String>,
    #[command(flatten)]
    pub rules: RuleArgs,
    /// default, accept-edits, plan, dont-ask or bypass.
    #[arg(long, value_name = "MODE", default_value = "default")]
    pub permission_mode: PermissionMode,
    /// The workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Consent to the workspace's own settings for this run; also TACKLE_TRUST_WORKSPACE=1.
    #[arg(long)]
    pub trust_workspace: bool,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PermissionsListArgs {
    #[command(flatten)]
    pub rules: RuleArgs,
    /// The workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Consent to the workspace's own settings for this run; also TACKLE_TRUST_WORKSPACE=1.
    #[arg(long)]
    pub trust_workspace: bool,
    /// Print one JSON array.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
// Parsed once per process: the size of the largest variant costs nothing worth a Box.
#[allow(clippy::large_enum_variant)]
pub enum McpCommand {
    /// Serve the tools over MCP: stdio by default, streamable HTTP with --http.
    Serve(ServeArgs),
    /// Sign in to an HTTP MCP server with OAuth and keep its tokens in the user config dir.
    Login(crate::commands::mcp_login::SignInArgs),
    /// Forget the stored sign-in of an HTTP MCP server.
    Logout(crate::commands::mcp_login::SignInArgs),
    /// Add an MCP server to import: `tackle mcp add NAME -- COMMAND ARGS…` or `--url URL`.
    Add(crate::commands::mcp_manage::AddArgs),
    /// List the MCP servers defined for this workspace, connecting to each.
    List(crate::commands::mcp_manage::McpListArgs),
    /// Show one MCP server's definition and whether it connects.
    Get(crate::commands::mcp_manage::GetArgs),
    /// Remove an MCP server from the user config or the workspace's .mcp.json.
    Remove(crate::commands::mcp_manage::RemoveArgs),
    /// Print an MCP server's prompt filled in with --arg k=v (without PROMPT: list its prompts).
    Prompt(crate::commands::mcp_manage::PromptArgs),
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Serve streamable HTTP at this loopback address (127.0.0.1:PORT, [::1]:PORT,
    /// localhost:PORT; port 0 picks a free one) instead of stdio.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// Allowlist of tools to serve (default: the default toolset plus the file editors,
    /// without loop-control tools). A list of only +NAME and -NAME items adjusts that default
    /// (`+apply_patch`, `-bash`); `all` serves every built-in; imported MCP tools only when
    /// named, e.g. mcp__git__*.
    #[arg(long, value_name = "LIST")]
    pub tools: Option<String>,
    /// The workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// default, accept-edits, plan, dont-ask or bypass (default: bypass, since the MCP client
    /// asks its own user; deny rules, the path policy and the sandbox still apply).
    #[arg(long, value_name = "MODE", default_value = "bypass")]
    pub permission_mode: PermissionMode,
    /// List at most N tools per tools/list page (default: all in one page).
    #[arg(long, value_name = "N", value_parser = at_least_one)]
    pub page_size: Option<u64>,
    /// With --http: at most N sessions at once (default 64, or [mcp.serve] max_sessions);
    /// when full, the session idle the longest ends.
    #[arg(long, value_name = "N", value_parser = at_least_one)]
    pub max_sessions: Option<u64>,
    /// With --http: every request must carry `Authorization: Bearer TOKEN` (also
    /// TACKLE_MCP_TOKEN, which other users cannot read in the process list).
    #[arg(long, value_name = "TOKEN", value_parser = parse_token)]
    pub auth_token: Option<tackle::mcp_serve::AuthToken>,
    /// Consent to the workspace's own settings for this run (provider endpoints, MCP servers;
    /// never the sandbox, paths or environment); also TACKLE_TRUST_WORKSPACE=1.
    #[arg(long)]
    pub trust_workspace: bool,
    /// Start the MCP servers the workspace defines without asking (used only when --tools
    /// names imported tools; also TACKLE_ALLOW_PROJECT_MCP=1).
    #[arg(long)]
    pub allow_project_mcp: bool,
    #[command(flatten)]
    pub rules: RuleArgs,
    #[command(flatten)]
    pub container: ContainerArgs,
}

/// `--auth-token`: the token, kept where `Debug` cannot show it.
/// A count of at least 1 (`mcp serve --page-size`, `--max-sessions`), refused in words rather
/// than as clap's `0 is not in 1..18446744073709551615`.
fn at_least_one(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("'{text}' is not a whole number of 1 or more (--page-size and --max-sessions take a count)")),
    }
}

fn parse_token(token: &str) -> Result<tackle::mcp_serve::AuthToken, String> {
    tackle::mcp_serve::AuthToken::new(token).map_err(|err| err.to_string())
}

#[derive(Debug, Subcommand)]
pub enum ToolsCommand {
    /// List the tools.
    List(ListArgs),
    /// Print tool definitions in a provider's schema dialect, as one JSON array.
    Schema(SchemaArgs),
    /// Call one tool and print its output (`tackle tools schema NAME` shows its arguments).
    Call(CallArgs),
    /// Run calls read as JSON Lines from stdin in one session, writing one JSON output per call.
    Batch(BatchArgs),
}

/// Options that choose the tools of a command.
#[derive(Debug, Args, Clone)]
pub struct ToolSelection {
    /// Allowlist: toolsets, names, globs, hint:read-only, hint:destructive, -NAME to drop
    /// (default: every built-in and every imported MCP tool).
    #[arg(long, value_name = "LIST")]
    pub tools: Option<String>,
    /// Start the MCP servers the workspace defines (.mcp.json, tackle.toml) without asking
    /// (also TACKLE_ALLOW_PROJECT_MCP=1).
    #[arg(long)]
    pub allow_project_mcp: bool,
}

/// Options of the commands that run tools.
#[derive(Debug, Args, Clone)]
pub struct SessionArgs {
    #[command(flatten)]
    pub selection: ToolSelection,
    /// The workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// default, accept-edits, plan, dont-ask or bypass (default: bypass, since the person
    /// typing the command is the approver).
    #[arg(long, value_name = "MODE", default_value = "bypass")]
    pub permission_mode: PermissionMode,
    /// Consent to the workspace's own settings for this run (provider endpoints, MCP servers;
    /// never the sandbox, paths or environment); also TACKLE_TRUST_WORKSPACE=1.
    #[arg(long)]
    pub trust_workspace: bool,
    #[command(flatten)]
    pub rules: RuleArgs,
    #[command(flatten)]
    pub container: ContainerArgs,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub selection: ToolSelection,
    /// Print one JSON array instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Tools to describe (default: all selected).
    pub names: Vec<String>,
    /// openai, openai-strict, anthropic, gemini or mcp.
    #[arg(long, default_value = "openai")]
    pub dialect: Dialect,
    #[command(flatten)]
    pub selection: ToolSelection,
}

#[derive(Debug, Args)]
#[command(after_help = "The arguments of a tool: tackle tools schema NAME (e.g. tackle tools schema read_file).")]
pub struct CallArgs {
    /// The tool to call (its name, a Claude Code alias, or any case/separator variant).
    pub name: String,
    /// The arguments as one JSON object, or `-` to read them from stdin (default: `{}`).
    pub args: Option<String>,
    #[command(flatten)]
    pub session: SessionArgs,
    /// Print the output as one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct BatchArgs {
    #[command(flatten)]
    pub session: SessionArgs,
}

/// The options of the commands that run an agent (`run`, `chat`).
#[derive(Debug, Args)]
pub struct AgentArgs {
    /// PROVIDER/MODEL, e.g. openai/gpt-4.1, anthropic/claude-sonnet-4-5, openai/llama3.2 (default:
    /// TACKLE_MODEL, else a default for whichever API key is set).
    #[arg(long, value_name = "P/M")]
    pub model: Option<String>,
    /// The provider's endpoint, with or without /v1 (Ollama http://localhost:11434, vLLM,
    /// llama.cpp, OpenRouter, Azure, an Anthropic gateway).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Allowlist of tools (default: the `default` toolset, plus save, append and patch with
    /// --call-format markdown).
    #[arg(long, value_name = "LIST")]
    pub tools: Option<String>,
    /// How the model calls tools: native, markdown, xml or tool.
    #[arg(long, value_name = "FORMAT", default_value = "native")]
    pub call_format: CallFormat,
    /// default, accept-edits, plan, dont-ask or bypass.
    #[arg(long, value_name = "MODE", default_value = "default")]
    pub permission_mode: PermissionMode,
    /// Approve every call that would ask (like --permission-mode bypass, but deny rules still apply).
    #[arg(long)]
    pub yes: bool,
    #[command(flatten)]
    pub rules: RuleArgs,
    /// Stop a task after this many model requests.
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub max_steps: u32,
    /// Where to write the trajectory (default: .tackle/trajectories/ in the workspace).
    #[arg(long, value_name = "FILE")]
    pub trajectory: Option<PathBuf>,
    /// Record each model request's complete body in the trajectory.
    #[arg(long)]
    pub trajectory_full: bool,
    /// The workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Ask for whole responses instead of streams.
    #[arg(long)]
    pub no_stream: bool,
    /// Consent to the workspace's own settings for this run (provider endpoints, MCP servers;
    /// never the sandbox, paths or environment); also TACKLE_TRUST_WORKSPACE=1.
    #[arg(long)]
    pub trust_workspace: bool,
    /// Start the MCP servers the workspace defines (.mcp.json, tackle.toml) without asking
    /// (also TACKLE_ALLOW_PROJECT_MCP=1).
    #[arg(long)]
    pub allow_project_mcp: bool,
    #[command(flatten)]
    pub container: ContainerArgs,
}

#[derive(Debug, Args)]
#[command(after_help = RUN_AFTER_HELP)]
pub struct RunArgs {
    /// The task, as you would tell a colleague; `-` reads it from stdin.
    #[arg(required_unless_present = "task_file", conflicts_with = "task_file")]
    pub task: Option<String>,
    /// Read the task from this file.
    #[arg(long, value_name = "FILE")]
    pub task_file: Option<PathBuf>,
    /// Carry on the conversation of the latest trajectory in this workspace.
    #[arg(long = "continue", conflicts_with = "resume")]
    pub continue_latest: bool,
    /// Carry on the conversation of this trajectory file.
    #[arg(long, value_name = "TRAJECTORY")]
    pub resume: Option<PathBuf>,
    /// Print one JSON object at the end instead of the transcript.
    #[arg(long)]
    pub json: bool,
    /// The final answer must be one JSON value matching this JSON Schema (implies --json; the
    /// value is the result's `output`; a mismatch is sent back once, then exits 1).
    #[arg(long, value_name = "FILE")]
    pub output_schema: Option<PathBuf>,
    #[command(flatten)]
    pub limits: RunLimits,
    #[command(flatten)]
    pub agent: AgentArgs,
}

/// The limits of one run besides its steps (docs/reference/cli.md#limits-and-budgets).
#[derive(Debug, Clone, Default, Args)]
pub struct RunLimits {
    /// Stop the run after this much wall-clock time (90s, 30m, 1h30m), calls answered and
    /// processes killed: status `timeout`, exit 4.
    #[arg(long, value_name = "DURATION", value_parser = crate::duration::parse)]
    pub timeout: Option<std::time::Duration>,
    /// Stop once the run has cost this many US dollars (priced from [pricing] in the user
    /// config or the built-in list): status `budget`, exit 4.
    #[arg(long, value_name = "USD", value_parser = parse_usd)]
    pub max_cost: Option<f64>,
    /// Stop once the run has used this many tokens (input, cached input and output, summed
    /// over every request): status `budget`, exit 4.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_tokens: Option<u64>,
    /// Shell commands run with the bash tool in the workspace (or container) before the agent
    /// starts, under the same sandbox, without asking: the task's own set-up. A failure ends
    /// the command with exit 3 before any model request.
    #[arg(long, value_name = "COMMANDS")]
    pub setup: Option<String>,
}

/// A positive, finite amount of US dollars.
fn parse_usd(text: &str) -> Result<f64, String> {
    match text.trim().trim_start_matches('$').parse::<f64>() {
        Ok(usd) if usd.is_finite() && usd > 0.0 => Ok(usd),
        _ => Err(format!("'{text}' is not an amount of US dollars above zero, e.g. 2.50")),
    }
}

/// The variables `tackle run --help` names.
const RUN_AFTER_HELP: &str = "\
Environment:
  OPENAI_API_KEY, ANTHROPIC_API_KEY  the provider's key (also api_key_env in [providers.NAME])
  TACKLE_MODEL                       the model when --model is not given
  TACKLE_TRUST_WORKSPACE=1           like --trust-workspace
  TACKLE_ALLOW_PROJECT_MCP=1         like --allow-project-mcp
  TACKLE_LOG                         log filter (default warn), e.g. debug

Exit codes: 0 done; 1 the agent failed (an error, an empty reply, incomplete because calls were
denied, an answer that did not match --output-schema); 2 usage error; 3 infrastructure, retry
it (provider unreachable or 5xx after retries, rate limit exhausted, container engine or image
failure); 4 a limit was reached (--max-steps, --timeout, --max-cost, --max-tokens);
130 interrupted; 143 terminated (SIGTERM: the run ends cleanly, its result written).
In CI, allow the edits and the commands the task needs; anything else is denied and the run
ends incomplete (exit 1):
  tackle run --permission-mode accept-edits --allow 'Bash(npm test:*)' --json \"TASK\"";

#[derive(Debug, Args)]
pub struct ChatArgs {
    #[command(flatten)]
    pub agent: AgentArgs,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The workspace to set up (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// bash, zsh, fish, elvish or powershell.
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The trajectory file (.jsonl).
    pub file: PathBuf,
    /// Validate the file; exit 1 with the first violation and its line number.
    #[arg(long, conflicts_with = "rerun")]
    pub check: bool,
    /// Run the recorded tool calls again and report each result that differs.
    #[arg(long)]
    pub rerun: bool,
    /// With --rerun: the directory to run in (default: a scratch copy of the recorded workspace).
    #[arg(long, value_name = "DIR", requires = "rerun")]
    pub workspace: Option<PathBuf>,
    /// What to print: `text`, the run as a readable transcript, or `atif`, the run as one JSON
    /// document in Harbor's Agent Trajectory Interchange Format (ATIF-v1.7), subagents and
    /// teammates embedded, for Harbor's viewer and training pipelines.
    #[arg(long, value_enum, default_value = "text", conflicts_with_all = ["check", "rerun"])]
    pub format: ReplayFormat,
}

/// What `tackle replay` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReplayFormat {
    /// A readable transcript.
    Text,
    /// Harbor's Agent Trajectory Interchange Format (JSON).
    Atif,
}

#[derive(Debug, Args)]
pub struct ParseArgs {
    /// The call format: markdown, xml or tool.
    #[arg(long, default_value = "markdown")]
    pub format: tackle::text_calls::TextFormat,
    /// Feed stdin through the incremental parser as it arrives.
    #[arg(long)]
    pub streaming: bool,
    /// Print the fenced code blocks instead of the calls.
    #[arg(long)]
    pub codeblocks: bool,
    /// Print one JSON line per call or block when it is found, with `fed_bytes`.
    #[arg(long)]
    pub events: bool,
    #[command(flatten)]
    pub selection: ToolSelection,
}
