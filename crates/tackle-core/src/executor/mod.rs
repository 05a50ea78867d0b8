//! The executor: the pipeline every call goes through, as small layers (docs/architecture.md#one-pipeline).
//!
//! A turn runs in two phases. **Admission**, in call order: resolve the name, decode and
//! validate the arguments, ask the permission policy, run pre-call hooks, and resolve "ask"
//! with the approver (so prompts come one at a time, in order). **Execution**: the admitted
//! calls are grouped by [`schedule::batches`] (consecutive concurrency-safe calls together,
//! every other call alone, in order), each run under its deadline and the turn's
//! cancellation, with panics caught; then the output is cleaned (ANSI escapes), fitted to the
//! budget, and passed through post-call hooks. Outputs always come back in call order, one per
//! call, whatever happened.

pub(crate) mod budget;
mod decode;
mod edits;
pub mod schedule;

pub use budget::{DEFAULT_MAX_OUTPUT_CHARS, OutputBudget};

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::FutureExt as _;
use futures::StreamExt as _;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::call::{CallArgs, ToolCall};
use crate::error::{ToolError, internal_error_text};
use crate::events::ExecEvent;
use crate::hooks::{HookCall, PreHookOutcome, ToolHook};
use crate::output::{ContentPart, ToolOutput};
use crate::paths::Access;
use crate::permission::{AllowAll, Approval, Approver, Decision, PermissionPolicy, PermissionRequest};
use crate::registry::ToolHandle;
use crate::session::ToolSession;
use crate::spec::{InterruptBehavior, PathAccess, ToolSpec};
use crate::text::strip_ansi;
use crate::tool::{BoxFuture, PreparedCall};

/// The executor's default deadline for a tool without its own (`[tools] timeout_ms`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// How long a cancelled or timed-out call may take to report its own (partial) output
/// before the executor gives up on it.
pub const DEFAULT_ABORT_GRACE: Duration = Duration::from_secs(5);

/// The output of a call cancelled by the user before it ran to its end (docs/reference/providers.md#rules-for-calls).
pub const CANCELLED: &str = "Cancelled by the user.";

/// The output of a call that never started because the user cancelled the run.
const NOT_RUN_CANCELLED: &str = "Not executed: the run stopped (cancelled by the user).";

/// Settings of an executor.
#[derive(Debug, Clone)]
pub struct ExecutorConfig {
    /// The deadline of a call whose tool sets none ([`DEFAULT_TIMEOUT`] unless configured).
    pub default_timeout: Duration,
    /// How long a cancelled or timed-out call may still take to report its own output.
    pub abort_grace: Duration,
    /// How outputs are cut to fit what the model is shown (tools that manage their own are spared).
    pub budget: OutputBudget,
}

impl Default for ExecutorConfig {
    fn default() -> Self {
        ExecutorConfig {
            default_timeout: DEFAULT_TIMEOUT,
            abort_grace: DEFAULT_ABORT_GRACE,
            budget: OutputBudget::default(),
        }
    }
}

/// Runs calls against a session.
#[derive(Clone)]
pub struct Executor {
    config: ExecutorConfig,
    policy: Arc<dyn PermissionPolicy>,
    approver: Arc<dyn Approver>,
    hooks: Vec<Arc<dyn ToolHook>>,
}

impl Default for Executor {
    fn default() -> Self {
        Executor::new(ExecutorConfig::default())
    }
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor")
            .field("config", &self.config)
            .field("hooks", &self.hooks.len())
            .finish_non_exhaustive()
    }
}

/// A call that passed admission.
struct Admitted {
    call_id: String,
    handle: Arc<ToolHandle>,
    args: Value,
    prepared: PreparedCall,
    coerced: Vec<String>,
    /// Allowed only because it was judged read-only: runs restricted.
    read_only_restricted: bool,
}

/// Where a call stands between the phases.
enum Slot {
    Ready(Box<Admitted>),
    Done(Box<ToolOutput>),
}

impl Executor {
    /// An executor that allows every call (use [`Executor::with_policy`] to choose a mode, for
    /// instance tackle-policy's `ModePolicy` or `RulePolicy`) and, until
    /// [`Executor::with_approver`] sets one, refuses what a hook asks about.
    pub fn new(config: ExecutorConfig) -> Self {
        Executor { config, policy: Arc::new(AllowAll), approver: Arc::new(NoApprover), hooks: Vec::new() }
    }

    /// Sets the permission policy.
    pub fn with_policy(mut self, policy: Arc<dyn PermissionPolicy>) -> Self {
        self.policy = policy;
        self
    }

    /// Sets the approver for calls that need approval.
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = approver;
        self
    }

    /// Adds a hook.
    pub fn with_hook(mut self, hook: Arc<dyn ToolHook>) -> Self {
        self.hooks.push(hook);
        self
    }

    /// The settings.
    pub fn config(&self) -> &ExecutorConfig {
        &self.config
    }

    /// The permission policy.
    pub fn policy(&self) -> &Arc<dyn PermissionPolicy> {
        &self.policy
    }

    /// The approver.
    pub fn approver(&self) -> &Arc<dyn Approver> {
        &self.approver
    }

    /// The hooks, in the order they run.
    pub fn hooks(&self) -> &[Arc<dyn ToolHook>] {
        &self.hooks
    }

    /// Runs one call.
    pub async fn run(&self, session: &ToolSession, call: ToolCall, cancel: &CancellationToken) -> ToolOutput {
        let mut outputs = self.run_turn(session, vec![call], cancel).await;
        outputs.pop().unwrap_or_else(|| ToolOutput::error(internal_error_text("executor")))
    }

    /// Runs the calls of one turn; returns one output per call, in call order.
    pub async fn run_turn(
        &self,
        session: &ToolSession,
        calls: Vec<ToolCall>,
        cancel: &CancellationToken,
    ) -> Vec<ToolOutput> {
        self.run_turn_each(session, calls, cancel, &mut |_, _| {}).await
    }

    /// [`Executor::run_turn`], also handing each output to `finished` (with the call's index)
    /// as soon as it exists, in the order the calls finish: a rejection at once, a run when it
    /// ends. A caller that records outputs as they happen loses none to a crash later in the turn.
    pub async fn run_turn_each(
        &self,
        session: &ToolSession,
        calls: Vec<ToolCall>,
        cancel: &CancellationToken,
        finished: &mut (dyn FnMut(usize, &ToolOutput) + Send),
    ) -> Vec<ToolOutput> {
        let mut slots = Vec::with_capacity(calls.len());
        for call in calls {
            // A call's duration leaves out the time a person took to answer its approval.
            let mut started = Instant::now();
            let call_id = call.id.clone();
            let slot = match self.admit(session, call, &mut started, cancel).await {
                Ok(admitted) => Slot::Ready(Box::new(admitted)),
                Err(Rejected { error, tool }) => {
                    let mut output = error.into_output(&tool);
                    output.call_id = call_id;
                    output.meta.rejected = true;
                    output.meta.duration_ms = Some(elapsed_ms(started));
                    finished(slots.len(), &output);
                    Slot::Done(Box::new(output))
                }
            };
            slots.push(slot);
        }

        let safe: Vec<Option<bool>> = slots
            .iter()
            .map(|slot| match slot {
                Slot::Ready(admitted) => Some(admitted.prepared.concurrency_safe),
                Slot::Done(_) => None,
            })
            .collect();
        let mut outputs: Vec<Option<ToolOutput>> = Vec::with_capacity(slots.len());
        let mut ready: Vec<Option<Box<Admitted>>> = Vec::with_capacity(slots.len());
        for slot in slots {
            match slot {
                Slot::Ready(admitted) => {
                    outputs.push(None);
                    ready.push(Some(admitted));
                }
                Slot::Done(output) => {
                    outputs.push(Some(*output));
                    ready.push(None);
                }
            }
        }

        for batch in schedule::batches(&safe) {
            let runs = batch.iter().filter_map(|&index| ready[index].take().map(|admitted| (index, admitted)));
            let mut running: futures::stream::FuturesUnordered<_> = runs
                .map(|(index, admitted)| async move { (index, self.execute(session, *admitted, cancel).await) })
                .collect();
            while let Some((index, output)) = running.next().await {
                finished(index, &output);
                outputs[index] = Some(output);
            }
        }
        outputs
            .into_iter()
            .map(|output| output.unwrap_or_else(|| ToolOutput::error(internal_error_text("executor"))))
            .collect()
    }

    /// Resolution, decoding, validation, permission and pre-hooks.
    async fn admit(
        &self,
        session: &ToolSession,
        call: ToolCall,
        started: &mut Instant,
        cancel: &CancellationToken,
    ) -> Result<Admitted, Rejected> {
        let Some(handle) = session.tools().resolve(&call.name) else {
            let message = session.tools().not_found_message(&call.name);
            return Err(Rejected { error: ToolError::NotFound(message), tool: call.name });
        };
        let handle = Arc::clone(handle);
        let spec = handle.spec();
        let tool_name = spec.name.clone();

        let reject = |error: ToolError| Rejected { error, tool: tool_name.clone() };
        let (mut args, mut coerced, mut prepared) = self.check_args(session, &handle, call.args).map_err(reject)?;
        let mut hooks_ran = false;
        loop {
            let request = PermissionRequest {
                call_id: &call.id,
                spec,
                args: &args,
                read_only: prepared.read_only,
                written_paths: &prepared.written_paths,
                preview: None,
            };
            let mut decision = self.policy.decide(&request);
            if let Decision::Deny { message } = decision {
                return Err(reject(ToolError::Denied(message)));
            }
            if !hooks_ran {
                hooks_ran = true;
                let hook_call = HookCall { call_id: &call.id, session: session.info(), spec, args: &args };
                match self.run_pre_hooks(&hook_call, &mut decision).await {
                    HookResult::Proceed => {}
                    HookResult::Denied(message) => return Err(reject(ToolError::Denied(message))),
                    HookResult::Replaced(new_args) => {
                        (args, coerced, prepared) =
                            self.check_args(session, &handle, CallArgs::Json(new_args)).map_err(reject)?;
                        continue;
                    }
                }
            }
            if let Decision::Ask { reason, from_rule } = &decision {
                if cancel.is_cancelled() {
                    return Err(reject(ToolError::Cancelled(NOT_RUN_CANCELLED.into())));
                }
                let ctx = session.context(&call.id, spec.name.as_str(), CancellationToken::new());
                let preview = handle.tool.preview(&args, &ctx);
                let request = PermissionRequest {
                    call_id: &call.id,
                    spec,
                    args: &args,
                    read_only: prepared.read_only,
                    written_paths: &prepared.written_paths,
                    preview: preview.as_deref(),
                };
                // Ctrl-C answers a pending prompt: the approver (a blocking terminal read) is
                // abandoned, not awaited.
                let asked = Instant::now();
                let approval = tokio::select! {
                    biased;
                    () = cancel.cancelled() => return Err(reject(ToolError::Cancelled(CANCELLED.into()))),
                    approval = self.approver.approve(&request, reason, *from_rule) => approval,
                };
                *started += asked.elapsed();
                if let Approval::Deny { message } = approval {
                    return Err(reject(ToolError::Denied(message)));
                }
            }
            // `--yes` allows what would ask, so it allows a read-only command outright too.
            let read_only_restricted = decision == Decision::AllowReadOnly && !self.approver.allows_everything();
            return Ok(Admitted { call_id: call.id, handle, args, prepared, coerced, read_only_restricted });
        }
    }

    /// Decode, validate and prepare.
    fn check_args(
        &self,
        session: &ToolSession,
        handle: &ToolHandle,
        raw: CallArgs,
    ) -> Result<(Value, Vec<String>, PreparedCall), ToolError> {
        let spec = handle.spec();
        let decoded = decode::decode(spec, raw, session.json_text_params(&spec.name))
            .map_err(|err| ToolError::InvalidInput(err.to_string()))?;
        handle.validator().check(spec, &decoded.args).map_err(|err| ToolError::InvalidInput(err.into_message()))?;
        // `prepare` runs tool code too (a command classifier, a timeout rule): a panic there
        // is caught like one in `call`.
        let prepared = std::panic::catch_unwind(AssertUnwindSafe(|| handle.tool.prepare(&decoded.args)));
        let prepared = flatten(prepared, &spec.name)?;
        check_paths(session, spec, &decoded.args, prepared.read_only)?;
        Ok((decoded.args, decoded.coerced, prepared))
    }

    async fn run_pre_hooks(&self, call: &HookCall<'_>, decision: &mut Decision) -> HookResult {
        let mut lift_ask = false;
        let mut ask = None;
        for hook in &self.hooks {
            match hook.before_call(call).await {
                PreHookOutcome::Continue => {}
                PreHookOutcome::Allow => lift_ask = true,
                PreHookOutcome::Ask { reason } => ask = Some(reason),
                PreHookOutcome::Deny { message } => return HookResult::Denied(message),
                PreHookOutcome::ReplaceInput(args) => return HookResult::Replaced(args),
            }
        }
        if let Some(reason) = ask {
            // A hook that asks wants the person: an "always" answered earlier does not count.
            *decision = Decision::Ask { reason, from_rule: true };
        } else if lift_ask && matches!(decision, Decision::Ask { from_rule: false, .. } | Decision::AllowReadOnly) {
            *decision = Decision::Allow;
        }
        HookResult::Proceed
    }

    /// Runs an admitted call and finishes its output. Its duration starts here: not while the
    /// person answered the approvals of the calls admitted after it, nor while earlier calls
    /// ran.
    async fn execute(&self, session: &ToolSession, admitted: Admitted, cancel: &CancellationToken) -> ToolOutput {
        let started = Instant::now();
        let Admitted { call_id, handle, args, prepared, coerced, read_only_restricted } = admitted;
        let spec = handle.spec();
        let tool = spec.name.as_str();
        if cancel.is_cancelled() {
            let mut output = ToolError::Cancelled(NOT_RUN_CANCELLED.into()).into_output(tool);
            output.call_id = call_id;
            return output;
        }
        session.events().send(ExecEvent::Started { call_id: call_id.clone(), tool: tool.to_owned() });

        let edited =
            if prepared.read_only { None } else { edits::before(session, spec, &args, &prepared.written_paths) };
        let call_token = CancellationToken::new();
        let mut ctx = session.context(&call_id, tool, call_token.clone());
        if read_only_restricted {
            ctx = ctx.restricted_to_read_only();
        }
        let deadline = prepared.timeout.unwrap_or(self.config.default_timeout);
        let run = AssertUnwindSafe(prepared.run(ctx)).catch_unwind();
        let mut run = std::pin::pin!(run);
        let user_cancel = async {
            match spec.interrupt {
                InterruptBehavior::Cancel => cancel.cancelled().await,
                InterruptBehavior::Block => std::future::pending().await,
            }
        };

        let finished = tokio::select! {
            result = &mut run => Finished::Ran(result),
            () = tokio::time::sleep(deadline) => Finished::Aborted(Abort::Timeout),
            () = user_cancel => Finished::Aborted(Abort::Cancelled),
        };
        let result = match finished {
            Finished::Ran(result) => flatten(result, tool),
            Finished::Aborted(abort) => {
                call_token.cancel();
                let error = abort.error(tool, started.elapsed().as_secs_f64());
                let own = tokio::time::timeout(self.config.abort_grace, &mut run).await;
                match own {
                    Ok(Ok(Ok(mut output))) => {
                        output.is_error = true;
                        output.meta.error_kind = Some(error.kind());
                        Ok(output)
                    }
                    _ => Err(error),
                }
            }
        };

        // A refusal by the path policy inside the tool (a path found in the arguments, such
        // as a patch's file names) comes before the tool changed anything: it is a call
        // refused before it ran, like one refused at admission.
        let refused = matches!(result, Err(ToolError::Denied(_)));
        let mut output = match result {
            Ok(output) => output,
            Err(error) => error.into_output(tool),
        };
        output.meta.rejected |= refused;
        output.call_id = call_id;
        output.meta.coerced = coerced;
        // The spill file keeps the raw text; the model's text loses its escape sequences.
        if !spec.manages_output_budget {
            self.config.budget.apply(&mut output, &session.info().spill);
        }
        clean_text(&mut output);
        let hook_call = HookCall { call_id: &output.call_id.clone(), session: session.info(), spec, args: &args };
        for hook in &self.hooks {
            hook.after_call(&hook_call, &mut output).await;
        }
        if let Some(before) = edited.as_ref().filter(|_| !output.is_error) {
            output.meta.diff = edits::after(before);
        }
        output.meta.duration_ms = Some(elapsed_ms(started));
        session.events().send(ExecEvent::Finished {
            call_id: output.call_id.clone(),
            tool: tool.to_owned(),
            is_error: output.is_error,
            duration_ms: output.meta.duration_ms.unwrap_or_default(),
        });
        output
    }
}

/// The approver of an executor given none: nobody can be asked, so what asks is refused.
struct NoApprover;

impl Approver for NoApprover {
    fn approve<'a>(&'a self, request: &'a PermissionRequest<'a>, _: &'a str, _: bool) -> BoxFuture<'a, Approval> {
        let message = format!("{} needs approval, but this executor has no approver to ask.", request.spec.name);
        Box::pin(async move { Approval::Deny { message } })
    }
}

enum HookResult {
    Proceed,
    Denied(String),
    Replaced(Value),
}

#[allow(clippy::large_enum_variant)] // lives on the stack for one match
enum Finished {
    Ran(Result<Result<ToolOutput, ToolError>, Box<dyn std::any::Any + Send>>),
    Aborted(Abort),
}

#[derive(Clone, Copy)]
enum Abort {
    Timeout,
    Cancelled,
}

impl Abort {
    fn error(self, tool: &str, seconds: f64) -> ToolError {
        match self {
            Abort::Timeout => {
                ToolError::Timeout(format!("Tool '{tool}' timed out and was aborted after {seconds:.1} s."))
            }
            Abort::Cancelled => {
                ToolError::Cancelled(format!("Cancelled by the user. The call was aborted after {seconds:.1} s."))
            }
        }
    }
}

/// A panic becomes an internal error (its payload goes to the log).
fn flatten<T>(result: Result<Result<T, ToolError>, Box<dyn std::any::Any + Send>>, tool: &str) -> Result<T, ToolError> {
    result.unwrap_or_else(|payload| {
        let detail = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic with a non-string payload".to_owned());
        Err(ToolError::Internal(format!("tool {tool} panicked: {detail}")))
    })
}

/// The path-policy layer (docs/reference/safety.md#order-of-evaluation, step 1): every path parameter the call gives must
/// resolve under the session's policy, before any rule, hook or approver sees the call. A
/// write parameter of a call that is read-only for this input (`view`) is checked for
/// reading. Tools resolve the path again when they use it, so a path that changes between
/// admission and execution is still checked.
fn check_paths(session: &ToolSession, spec: &ToolSpec, args: &Value, read_only: bool) -> Result<(), ToolError> {
    for param in &spec.path_params {
        let Some(raw) = args.get(&param.name).and_then(Value::as_str) else {
            continue;
        };
        let access = match param.access {
            PathAccess::Write if !read_only => Access::Write,
            _ => Access::Read,
        };
        session.path_policy().resolve(raw, access)?;
    }
    Ok(())
}

/// A call refused before it ran.
struct Rejected {
    error: ToolError,
    tool: String,
}

/// Removes terminal escapes from model-facing text.
fn clean_text(output: &mut ToolOutput) {
    for part in &mut output.content {
        if let ContentPart::Text { text } = part
            && let std::borrow::Cow::Owned(clean) = strip_ansi(text)
        {
            *text = clean;
        }
    }
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

impl ToolError {
    /// The error as an `is_error` output.
    pub fn into_output(self, tool: &str) -> ToolOutput {
        let mut output = ToolOutput::error(self.model_text(tool));
        output.meta.error_kind = Some(self.kind());
        output
    }
}
