//! The static description of a tool: everything a model, a permission engine, a scheduler or
//! a text call format needs to know about it without running it.

use serde_json::Value;

/// MCP-style behaviour hints (they also drive `hint:read-only` / `hint:destructive`
/// allowlist entries and the permission modes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Annotations {
    /// The tool never changes its environment, whatever the input.
    pub read_only: bool,
    /// The tool may destroy or overwrite data.
    pub destructive: bool,
    /// Calling it twice with the same input has no further effect.
    pub idempotent: bool,
    /// The tool reaches entities outside the workspace (the network, other systems).
    pub open_world: bool,
}

/// What a running call does when the user interrupts it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum InterruptBehavior {
    /// Cancel it at once; it still answers (e.g. "Cancelled by the user.").
    #[default]
    Cancel,
    /// Let it finish (a short write that must not be torn), then stop.
    Block,
}

/// Whether the tool's schema is sent to the model up front.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Loading {
    /// Sent with every request.
    #[default]
    Normal,
    /// Named in the system prompt with its search hint; its schema is sent only after
    /// `tool_search` loads it.
    Deferred,
    /// Never deferred, even where the deferral policy would defer it.
    AlwaysLoad,
}

/// Whether a tool can be used on this machine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Availability {
    /// The tool can be used.
    #[default]
    Available,
    /// Unavailable, with the reason shown to the person (naming it in an allowlist is a
    /// warning, not an error).
    Unavailable(String),
}

/// How the markdown and XML call formats map a fenced block onto the tool's parameters
/// (docs/reference/formats.md#langtag-dispatch). A tool without a mapping takes a JSON object as its block body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockMapping {
    /// The langtags that name this tool (`bash`, `shell`, `sh`).
    pub langtags: Vec<String>,
    /// The parameter that receives the block's body.
    pub body_param: String,
    /// The parameter that receives the rest of the langtag line (`save PATH`), if any. A
    /// tool without one refuses words after its langtag.
    pub words_param: Option<String>,
    /// Remove one leading `$ ` from the body (shell blocks).
    pub strip_prompt: bool,
}

/// A hint appended to a validation error about one parameter (docs/reference/tools.md#names-and-aliases).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamHint {
    /// The top-level parameter.
    pub param: String,
    /// The hint text.
    pub hint: String,
    /// Which problems it follows.
    pub on: HintOn,
}

/// Which of a parameter's validation problems a hint follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HintOn {
    /// Any problem.
    AnyProblem,
    /// Only a value above the maximum.
    AboveMaximum,
}

/// Another accepted name for a parameter (e.g. `nextThoughtNeeded` for
/// `next_thought_needed`). The executor renames it before validation; both given with
/// different values is an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamAlias {
    /// The other name (`nextThoughtNeeded`).
    pub alias: String,
    /// The parameter's name in the schema (`next_thought_needed`).
    pub name: String,
}

/// Whether a path parameter is read or written (for the path policy and `Read(...)` /
/// `Edit(...)` rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathAccess {
    /// The tool only reads the path.
    Read,
    /// The tool creates, changes or removes what is at the path.
    Write,
}

/// A parameter that holds a file-system path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathParam {
    /// The top-level parameter's name.
    pub name: String,
    /// Whether the tool reads or writes the path it holds.
    pub access: PathAccess,
}

/// The full description of one tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The wire name (`^[A-Za-z0-9_-]{1,64}$`).
    pub name: String,
    /// A human title (MCP `title`).
    pub title: Option<String>,
    /// Other names that resolve to this tool (Claude Code's `Bash`, `Read`, …).
    pub aliases: Vec<String>,
    /// The model-facing description.
    pub description: String,
    /// The input JSON Schema in Tackle's canonical form (see [`crate::schema`]).
    pub input_schema: Value,
    /// The schema of `ToolOutput::structured`, set only when **every** successful call
    /// returns a structured payload that matches it (MCP `outputSchema`; clients reject a
    /// success without matching `structuredContent` once it is advertised). An object at
    /// its root; optional fields are omitted, never `null`.
    pub output_schema: Option<Value>,
    /// Behaviour hints.
    pub annotations: Annotations,
    /// True when every call of this tool may run alongside other safe calls; a tool whose
    /// safety depends on the input says so in `Tool::is_concurrency_safe`.
    pub concurrency_safe: bool,
    /// What an interrupt does to a running call.
    pub interrupt: InterruptBehavior,
    /// Deferred or always loaded.
    pub loading: Loading,
    /// One line used by `tool_search` and the deferred-tools list.
    pub search_hint: Option<String>,
    /// Whether it can run here.
    pub availability: Availability,
    /// The text formats' block mapping, if the tool has one.
    pub block: Option<BlockMapping>,
    /// Parameter aliases.
    pub param_aliases: Vec<ParamAlias>,
    /// Hints appended to validation errors about a parameter (`timeout` → "use
    /// run_in_background for longer commands").
    pub param_hints: Vec<ParamHint>,
    /// Parameters that hold paths.
    pub path_params: Vec<PathParam>,
    /// Whether non-read-only calls of this tool are file edits (the `accept-edits` mode
    /// allows them; other writes still ask).
    pub edits_files: bool,
    /// The tool keeps its own output within the budget (the executor does not cut it).
    pub manages_output_budget: bool,
    /// The parameter that holds a shell command, for a tool that runs one (`bash`,
    /// `background_run`): permission rules, approval prompts and summaries read it.
    pub command_param: Option<String>,
    /// The parameter a rule's specifier is matched against for a tool that is not a shell or
    /// a file tool (`Subagent(type)` → the subagent tool's type, `Skill(name)` → the skill's
    /// name; docs/reference/safety.md#rule-syntax).
    pub specifier_param: Option<String>,
    /// The parameter holding a URL the tool reaches (`web_fetch`'s `url`): a rule's
    /// `domain:HOST` specifier is matched against that URL's host
    /// (docs/reference/safety.md#rule-syntax).
    pub url_param: Option<String>,
}

impl ToolSpec {
    /// A spec with a name and description; everything else takes its default, and the
    /// schema is filled in by [`crate::TypedTool`] from the tool's input type.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        ToolSpec {
            name: name.into(),
            title: None,
            aliases: Vec::new(),
            description: description.into(),
            input_schema: Value::Null,
            output_schema: None,
            annotations: Annotations::default(),
            concurrency_safe: false,
            interrupt: InterruptBehavior::Cancel,
            loading: Loading::Normal,
            search_hint: None,
            availability: Availability::Available,
            block: None,
            param_aliases: Vec::new(),
            param_hints: Vec::new(),
            path_params: Vec::new(),
            edits_files: false,
            command_param: None,
            specifier_param: None,
            url_param: None,
            manages_output_budget: false,
        }
    }

    /// Sets the human title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Adds an alias.
    pub fn alias(mut self, alias: impl Into<String>) -> Self {
        self.aliases.push(alias.into());
        self
    }

    /// Marks the tool read-only (and so non-destructive).
    pub fn read_only(mut self) -> Self {
        self.annotations.read_only = true;
        self.annotations.destructive = false;
        self
    }

    /// Marks the tool destructive.
    pub fn destructive(mut self) -> Self {
        self.annotations.destructive = true;
        self
    }

    /// Marks the tool idempotent.
    pub fn idempotent(mut self) -> Self {
        self.annotations.idempotent = true;
        self
    }

    /// Marks the tool open-world.
    pub fn open_world(mut self) -> Self {
        self.annotations.open_world = true;
        self
    }

    /// Marks every call of the tool safe to run alongside other safe calls.
    pub fn concurrency_safe(mut self) -> Self {
        self.concurrency_safe = true;
        self
    }

    /// Sets the interrupt behaviour.
    pub fn interrupt(mut self, behavior: InterruptBehavior) -> Self {
        self.interrupt = behavior;
        self
    }

    /// Sets the loading policy.
    pub fn loading(mut self, loading: Loading) -> Self {
        self.loading = loading;
        self
    }

    /// Sets the search hint.
    pub fn search_hint(mut self, hint: impl Into<String>) -> Self {
        self.search_hint = Some(hint.into());
        self
    }

    /// Marks the tool unavailable on this machine.
    pub fn unavailable(mut self, reason: impl Into<String>) -> Self {
        self.availability = Availability::Unavailable(reason.into());
        self
    }

    /// Sets the block mapping.
    pub fn block(mut self, mapping: BlockMapping) -> Self {
        self.block = Some(mapping);
        self
    }

    /// Adds a parameter alias.
    pub fn param_alias(mut self, alias: impl Into<String>, name: impl Into<String>) -> Self {
        self.param_aliases.push(ParamAlias { alias: alias.into(), name: name.into() });
        self
    }

    /// Adds a hint that follows any validation problem of a parameter.
    pub fn param_hint(mut self, param: impl Into<String>, hint: impl Into<String>) -> Self {
        self.param_hints.push(ParamHint { param: param.into(), hint: hint.into(), on: HintOn::AnyProblem });
        self
    }

    /// Adds a hint that follows only a parameter's "must be <= n" problem.
    pub fn param_hint_above_maximum(mut self, param: impl Into<String>, hint: impl Into<String>) -> Self {
        self.param_hints.push(ParamHint { param: param.into(), hint: hint.into(), on: HintOn::AboveMaximum });
        self
    }

    /// Declares a path parameter.
    pub fn path_param(mut self, name: impl Into<String>, access: PathAccess) -> Self {
        self.path_params.push(PathParam { name: name.into(), access });
        self
    }

    /// Declares that non-read-only calls edit files.
    pub fn edits_files(mut self) -> Self {
        self.edits_files = true;
        self
    }

    /// Declares that parameter `name` holds a shell command the tool runs.
    pub fn command_param(mut self, name: impl Into<String>) -> Self {
        self.command_param = Some(name.into());
        self
    }

    /// Declares that rules such as `Skill(name)` match parameter `name` of this tool.
    pub fn specifier_param(mut self, name: impl Into<String>) -> Self {
        self.specifier_param = Some(name.into());
        self
    }

    /// Declares that parameter `name` holds the URL the tool reaches: rules such as
    /// `WebFetch(domain:example.com)` match its host.
    pub fn url_param(mut self, name: impl Into<String>) -> Self {
        self.url_param = Some(name.into());
        self
    }

    /// The shell command of a call of this tool, when it runs one.
    pub fn command<'a>(&self, args: &'a Value) -> Option<&'a str> {
        args.get(self.command_param.as_deref()?)?.as_str()
    }

    /// Claude Code's name of the tool (its capitalized alias, `Bash`), else the wire name:
    /// what hooks see as `tool_name` and what rules for the tool are written with.
    pub fn claude_name(&self) -> &str {
        self.aliases.iter().find(|a| a.starts_with(char::is_uppercase)).unwrap_or(&self.name)
    }

    /// Declares that the tool keeps its output within the budget itself.
    pub fn manages_output_budget(mut self) -> Self {
        self.manages_output_budget = true;
        self
    }

    /// Sets the input schema (for tools defined at run time).
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input_schema = schema;
        self
    }

    /// Sets the output schema: a promise that every successful call returns a matching
    /// `structured` payload (see [`ToolSpec::output_schema`]).
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// The names of the required top-level parameters, in schema order.
    pub fn required_params(&self) -> Vec<&str> {
        self.input_schema
            .get("required")
            .and_then(Value::as_array)
            .map(|req| req.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }

    /// The first line of the description.
    pub fn summary(&self) -> &str {
        self.description.lines().next().unwrap_or_default()
    }
}
