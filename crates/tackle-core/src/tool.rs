//! The tool abstraction: a typed [`Tool`] trait that tool authors implement, and its
//! object-safe twin [`DynTool`] that the registry and executor store and call.
//!
//! The twin exists so that each tool keeps a typed input (decoded by serde, described by
//! schemars) while the registry holds `Arc<dyn DynTool>`. Tools defined at run time (MCP
//! imports, configuration) implement [`DynTool`] directly with a raw schema.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize as _;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::context::ToolContext;
use crate::error::ToolError;
use crate::output::ToolOutput;
use crate::schema;
use crate::spec::ToolSpec;

/// The boxed future type of the object-safe seams of this crate ([`DynTool`], the permission
/// and hook traits, [`crate::SessionResource`]).
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A tool with a typed input.
///
/// `spec()` describes the tool; its `input_schema` is generated from `Input` and may be left
/// empty. The static `read_only` annotation and `concurrency_safe` flag of the spec hold for
/// every input; `is_read_only` and `is_concurrency_safe` can add input-dependent truth on top
/// (a `bash` call of `ls` is read-only though `bash` is not).
pub trait Tool: Send + Sync + 'static {
    /// The decoded arguments.
    type Input: DeserializeOwned + JsonSchema + Send + 'static;

    /// The tool's description.
    fn spec(&self) -> ToolSpec;

    /// Whether this particular call only reads (beyond the spec's static annotation).
    fn is_read_only(&self, _input: &Self::Input) -> bool {
        false
    }

    /// Whether this particular call may run alongside others (beyond the spec's flag).
    fn is_concurrency_safe(&self, _input: &Self::Input) -> bool {
        false
    }

    /// Checks of the arguments that the schema cannot express (a parameter required unless
    /// another is set). Run at admission, with the schema's checks, so a failure is a call
    /// refused before it ran (`meta.rejected`; `tools call` exits 2).
    fn validate(&self, _input: &Self::Input) -> Result<(), ToolError> {
        Ok(())
    }

    /// The deadline the executor enforces for this call; `None` means the executor's default.
    /// A tool with its own timeout parameter returns that plus its own clean-up margin, and
    /// reports its own timeout message before the executor's deadline fires.
    fn timeout(&self, _input: &Self::Input) -> Option<Duration> {
        None
    }

    /// What this call would change, shown to the person asked to approve it (a unified diff
    /// for a file edit); `None` when there is nothing better than the arguments to show.
    /// Called only when someone is asked, before the call runs; it must change nothing.
    fn preview(&self, _input: &Self::Input, _ctx: &ToolContext) -> Option<String> {
        None
    }

    /// Paths this call writes that no path parameter holds (the files of a multi-file
    /// patch), relative to the workspace or absolute: `Edit(...)` rules check each.
    fn written_paths(&self, _input: &Self::Input) -> Vec<String> {
        Vec::new()
    }

    /// Runs the call.
    fn call(&self, input: Self::Input, ctx: &ToolContext)
    -> impl Future<Output = Result<ToolOutput, ToolError>> + Send;

    /// Releases what the tool holds (processes, connections) at the end of the session.
    fn close(&self) -> impl Future<Output = ()> + Send {
        async {}
    }
}

/// The function that runs a prepared call.
type RunFn = Box<dyn FnOnce(ToolContext) -> BoxFuture<'static, Result<ToolOutput, ToolError>> + Send>;

/// A call whose arguments have been decoded into the tool's input, ready to schedule.
pub struct PreparedCall {
    /// The call only reads (permission modes allow it everywhere).
    pub read_only: bool,
    /// The call may run alongside other safe calls.
    pub concurrency_safe: bool,
    /// The deadline for this call, if the tool sets one.
    pub timeout: Option<Duration>,
    /// Paths the call writes beyond its path parameters ([`Tool::written_paths`]).
    pub written_paths: Vec<String>,
    run: RunFn,
}

impl PreparedCall {
    /// A prepared call from its traits and the future-producing function.
    pub fn new(
        read_only: bool,
        concurrency_safe: bool,
        timeout: Option<Duration>,
        run: impl FnOnce(ToolContext) -> BoxFuture<'static, Result<ToolOutput, ToolError>> + Send + 'static,
    ) -> Self {
        PreparedCall { read_only, concurrency_safe, timeout, written_paths: Vec::new(), run: Box::new(run) }
    }

    /// Starts the call.
    pub fn run(self, ctx: ToolContext) -> BoxFuture<'static, Result<ToolOutput, ToolError>> {
        (self.run)(ctx)
    }
}

impl std::fmt::Debug for PreparedCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedCall")
            .field("read_only", &self.read_only)
            .field("concurrency_safe", &self.concurrency_safe)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// The object-safe face of a tool.
pub trait DynTool: Send + Sync + 'static {
    /// The tool's spec, with its canonical input schema.
    fn spec(&self) -> &ToolSpec;

    /// Decodes validated arguments into a runnable call. An error here is an
    /// `InvalidInput` the model can fix.
    fn prepare(&self, args: &Value) -> Result<PreparedCall, ToolError>;

    /// What a call with these (validated) arguments would change, for an approval prompt.
    fn preview(&self, _args: &Value, _ctx: &ToolContext) -> Option<String> {
        None
    }

    /// Releases what the tool holds at the end of the session.
    fn close(&self) -> BoxFuture<'_, ()>;
}

/// Adapts a typed [`Tool`] to [`DynTool`], caching its spec with the generated schema.
pub struct TypedTool<T: Tool> {
    tool: Arc<T>,
    spec: ToolSpec,
}

impl<T: Tool> TypedTool<T> {
    /// Wraps a tool, generating its canonical input schema from `T::Input`.
    pub fn new(tool: T) -> Self {
        let mut spec = tool.spec();
        spec.input_schema = schema::schema_for::<T::Input>();
        TypedTool { tool: Arc::new(tool), spec }
    }

    /// The wrapped tool.
    pub fn inner(&self) -> &T {
        &self.tool
    }
}

impl<T: Tool> DynTool for TypedTool<T> {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn prepare(&self, args: &Value) -> Result<PreparedCall, ToolError> {
        // The schema passed, but serde can be stricter (an integer too big for `u32`): say
        // which parameter, in the validation layer's words. The path is tracked only on that
        // rare failure, decoding again: tracking it costs an allocation per key.
        let input = match T::Input::deserialize(args) {
            Ok(input) => input,
            Err(_) => serde_path_to_error::deserialize(args).map_err(|err| {
                let path = err.path().to_string();
                let problem = crate::schema::validate::describe_deserialize_error(&path, &err.into_inner().to_string());
                ToolError::InvalidInput(format!("Invalid parameters for tool '{}': {problem}", self.spec.name))
            })?,
        };
        self.tool.validate(&input)?;
        let read_only = self.spec.annotations.read_only || self.tool.is_read_only(&input);
        let concurrency_safe = self.spec.concurrency_safe || self.tool.is_concurrency_safe(&input);
        let timeout = self.tool.timeout(&input);
        let written_paths = self.tool.written_paths(&input);
        let tool = Arc::clone(&self.tool);
        let mut prepared = PreparedCall::new(read_only, concurrency_safe, timeout, move |ctx| {
            Box::pin(async move { tool.call(input, &ctx).await })
        });
        prepared.written_paths = written_paths;
        Ok(prepared)
    }

    fn preview(&self, args: &Value, ctx: &ToolContext) -> Option<String> {
        let input = T::Input::deserialize(args).ok()?;
        self.tool.preview(&input, ctx)
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.tool.close())
    }
}
