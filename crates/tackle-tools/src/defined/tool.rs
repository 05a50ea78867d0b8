//! A tool defined in a file, as the registry holds it: a [`DynTool`] whose calls run the
//! file's `command` or `script` as one process in the session's sandbox, with the session's
//! command environment, in the workspace (docs/reference/tools.md#tools-defined-in-files).
//!
//! It goes through everything a `bash` command does: the sandbox and environment of
//! [`crate::shell::ShellEnvironment`], a process session of its own that a timeout, a
//! cancellation or the end of the session kills whole, output captured with bounded memory
//! and cut to the budget with the rest spilled ([`crate::shell::capture`],
//! [`crate::shell::render`]). A tool whose read-only claim counts only because it runs
//! restricted (a workspace tool) runs under the read-only restriction
//! (`tackle_sandbox::process::restrict`) on every call, and is refused where it cannot be.

use std::ffi::{OsStr, OsString};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tackle_core::spill::safe_file_stem;
use tackle_core::{BoxFuture, DynTool, PreparedCall, ToolContext, ToolError, ToolOutput, ToolSpec};
use tackle_sandbox::process::{ProcessSessions, SandboxKind, restrict, spawn_session};
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWriteExt as _};

use super::definition::{Runner, ToolDefinition};
use super::env_names;
use crate::shell::ShellEnvironment;
use crate::shell::capture::{Capture, SpillTarget};
use crate::shell::render::{fit, split_budget};

/// Time the executor's deadline leaves after the tool's own, so the tool's own message (and
/// the kill) comes first.
const TIMEOUT_MARGIN: Duration = Duration::from_secs(5);

/// Where a definition comes from, which decides whether its read-only claim counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    /// The person's own config directory: the claim counts as written.
    User,
    /// The workspace (with consent): the claim counts only when the tool can run under the
    /// read-only restriction, and then it always does.
    Workspace {
        /// The session can run commands read-only restricted.
        restriction_available: bool,
    },
}

/// A tool defined in a file.
#[derive(Debug)]
pub struct DefinedTool {
    spec: ToolSpec,
    definition: Arc<ToolDefinition>,
    /// Every call runs under the read-only restriction.
    restricted: bool,
}

impl DefinedTool {
    /// The tool of `definition`, trusted as `trust` says.
    pub fn new(definition: ToolDefinition, trust: Trust) -> DefinedTool {
        // A workspace's hints are believed only where they are enforced: a read-only claim
        // when calls run restricted; a claim not to destroy anything never (as an untrusted
        // MCP server's).
        let (read_only, restricted, destructive) = match trust {
            Trust::User => (definition.read_only, false, definition.destructive),
            Trust::Workspace { restriction_available } => {
                let counts = definition.read_only && restriction_available;
                (counts, counts, true)
            }
        };
        let (schema, _) = tackle_core::schema::sanitize(definition.input_schema.clone());
        let mut spec = ToolSpec::new(&definition.name, &definition.description).input_schema(schema);
        spec.search_hint = Some(spec.summary().to_owned());
        spec.annotations.read_only = read_only;
        spec.annotations.destructive = !read_only && destructive;
        spec.concurrency_safe = definition.concurrency_safe;
        spec.manages_output_budget = true;
        DefinedTool { spec, definition: Arc::new(definition), restricted }
    }

    /// The definition it runs.
    pub fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    /// Whether its read-only claim counts, and so whether every call runs restricted.
    pub fn runs_restricted(&self) -> bool {
        self.restricted
    }
}

impl DynTool for DefinedTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn prepare(&self, args: &Value) -> Result<PreparedCall, ToolError> {
        let Value::Object(args) = args else {
            return Err(ToolError::InvalidInput(format!("The arguments of {} must be an object.", self.spec.name)));
        };
        let call = Call { definition: Arc::clone(&self.definition), args: args.clone(), restricted: self.restricted };
        let timeout = self.definition.timeout.map(|t| t + TIMEOUT_MARGIN);
        Ok(PreparedCall::new(self.spec.annotations.read_only, self.spec.concurrency_safe, timeout, move |ctx| {
            Box::pin(async move { call.run(&ctx).await })
        }))
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

/// One call being run.
struct Call {
    definition: Arc<ToolDefinition>,
    args: serde_json::Map<String, Value>,
    restricted: bool,
}

/// Kills the call's process session when the call ends in any way but the process's own exit
/// (a timeout, a cancellation, the executor dropping the call).
struct KillOnDrop {
    root: i32,
    armed: bool,
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if self.armed && self.root > 0 {
            ProcessSessions::of_session(self.root).kill_now();
        }
    }
}

/// How the process ended.
enum Ended {
    Exited(i32),
    TimedOut(Duration),
}

impl Call {
    async fn run(self, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let name = self.definition.name.clone();
        let env = crate::shell::session_environment(ctx)?;
        let Launch { program, mut args, stdin: stdin_json, vars: extra_vars, notes } = self.launch()?;
        let restricted = self.restricted || ctx.read_only_restricted();
        let program = if restricted {
            let helper = restriction_helper(&env, &name)?;
            args.splice(0..0, [OsString::from(restrict::SUBCOMMAND), "--".into(), program.into()]);
            helper.into_os_string()
        } else {
            program.into()
        };
        let command_env = env.env.with_vars(extra_vars);
        let arg_refs: Vec<&OsStr> = args.iter().map(OsString::as_os_str).collect();
        let program = program.to_string_lossy().into_owned();
        let failed = |what: &str, err: &dyn std::fmt::Display| ToolError::Failed(format!("{name}: {what}: {err}"));
        let mut sandboxed = env
            .sandbox
            .command(&program, &arg_refs, ctx.workspace(), &command_env)
            .map_err(|err| failed("cannot prepare the sandbox", &err))?;
        let stdin = if stdin_json.is_some() { Stdio::piped() } else { Stdio::null() };
        sandboxed.command.stdin(stdin).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = spawn_session(sandboxed.command, sandboxed.pass_fds)
            .await
            .map_err(|err| failed(&format!("cannot start {program}"), &err))?;
        let root = child.id().and_then(|pid| i32::try_from(pid).ok()).unwrap_or(0);
        let mut guard = KillOnDrop { root, armed: true };

        let memory = env.max_output_chars.saturating_mul(4);
        let stem = format!("{}-{}", safe_file_stem(&name), safe_file_stem(ctx.call_id()));
        let spill = ctx.spill_dir();
        let mut out = Capture::new(memory, memory, Some(SpillTarget::new(spill, format!("{stem}.stdout.txt"))));
        let mut err = Capture::new(memory, memory, Some(SpillTarget::new(spill, format!("{stem}.stderr.txt"))));
        let feed = {
            let stdin = child.stdin.take();
            async move {
                if let (Some(mut stdin), Some(json)) = (stdin, stdin_json) {
                    // A program that does not read its input closes the pipe: not an error.
                    let _ = stdin.write_all(json.as_bytes()).await;
                    let _ = stdin.shutdown().await;
                }
            }
        };
        let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
        let grace = env.kill_grace;
        let run = async {
            let exited = async {
                let status = child.wait().await;
                // What the program left running in its session would keep the pipes open (and
                // the call waiting, its input unread): it ends with the program.
                ProcessSessions::of_session(root).kill_all(grace).await;
                status
            };
            let (status, (), (), ()) = tokio::join!(exited, feed, drain(stdout, &mut out), drain(stderr, &mut err));
            status
        };
        let ended = match self.definition.timeout {
            Some(limit) => match tokio::time::timeout(limit, run).await {
                Ok(status) => Ended::Exited(exit_code(status)),
                Err(_) => Ended::TimedOut(limit),
            },
            None => Ended::Exited(exit_code(run.await)),
        };
        // On a timeout the whole session goes (after an exit, nothing is left of it).
        ProcessSessions::of_session(root).kill_all(grace).await;
        guard.armed = false;
        Ok(render(&env, out, err, ended, notes))
    }

    /// What this call starts.
    fn launch(&self) -> Result<Launch, ToolError> {
        match &self.definition.runner {
            Runner::Command(argv) => Ok(Launch {
                program: argv[0].clone(),
                args: argv[1..].iter().map(OsString::from).collect(),
                stdin: Some(Value::Object(self.args.clone()).to_string()),
                vars: Vec::new(),
                notes: Vec::new(),
            }),
            Runner::Script(script) => {
                let vars =
                    env_names::argument_vars(&self.args).map_err(|err| ToolError::InvalidInput(err.to_string()))?;
                Ok(Launch {
                    program: "bash".to_owned(),
                    args: vec!["-c".into(), script.into(), self.definition.name.clone().into()],
                    stdin: None,
                    vars: vars.vars,
                    notes: vars.skipped.iter().map(|why| format!("[note: {why}; read it from TACKLE_ARGS]")).collect(),
                })
            }
        }
    }
}

/// What one call starts: the program and its arguments, what goes to its stdin (none:
/// `/dev/null`), the variables added to the command environment, and notes for the output.
struct Launch {
    program: String,
    args: Vec<OsString>,
    stdin: Option<String>,
    vars: Vec<(OsString, OsString)>,
    notes: Vec<String>,
}

/// The helper that runs a command read-only restricted in this session, or the refusal.
fn restriction_helper(env: &ShellEnvironment, name: &str) -> Result<std::path::PathBuf, ToolError> {
    match env.sandbox.kind() {
        SandboxKind::None => Err(restrict::Unrestricted::Unsandboxed),
        _ => restrict::availability(env.sandbox.policy()),
    }
    .map_err(|why| {
        ToolError::Denied(format!(
            "The tool {name} comes from the workspace and claims to be read-only, so it must run read-only \
             restricted, which is not possible here ({why}). It was not run."
        ))
    })
}

/// Reads all of `stream` into `capture`.
async fn drain(stream: Option<impl AsyncRead + Unpin>, capture: &mut Capture) {
    let Some(mut stream) = stream else { return };
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => capture.push(&buffer[..n]),
        }
    }
}

/// The exit code, 128 + n for a signal.
fn exit_code(status: std::io::Result<std::process::ExitStatus>) -> i32 {
    use std::os::unix::process::ExitStatusExt as _;
    match status {
        Ok(status) => status.code().or_else(|| status.signal().map(|n| 128 + n)).unwrap_or(-1),
        Err(_) => -1,
    }
}

/// The model's text, the structured payload and the meta of one call.
fn render(env: &ShellEnvironment, out: Capture, err: Capture, ended: Ended, notes: Vec<String>) -> ToolOutput {
    let (stdout, stderr) = (out.finish(), err.finish());
    let (out_budget, err_budget) = split_budget(env.max_output_chars, stdout.chars, stderr.chars);
    let (out, err) = (fit(stdout, out_budget), fit(stderr, err_budget));
    let mut parts: Vec<String> = Vec::new();
    if !out.text.is_empty() {
        parts.push(out.text.clone());
    }
    if !err.text.is_empty() {
        parts.push(format!("[stderr]\n{}", err.text));
    }
    let exit_code = match ended {
        Ended::Exited(code) => {
            if code != 0 {
                parts.push(format!("[exit code: {code}]"));
                if let Some(hint) = env.sandbox.hint(&err.text) {
                    parts.push(hint);
                }
            }
            Some(code)
        }
        Ended::TimedOut(limit) => {
            parts.push(format!("[Timed out after {} ms and was killed.]", limit.as_millis()));
            None
        }
    };
    parts.extend(notes);
    let text = if parts.is_empty() { "(no output)".to_owned() } else { parts.join("\n") };
    let mut structured = json!({ "stdout": out.text, "stderr": err.text, "exit_code": exit_code });
    if let Some(spill) = &out.spill {
        structured["stdout_spill"] = json!(spill);
    }
    if let Some(spill) = &err.spill {
        structured["stderr_spill"] = json!(spill);
    }
    let mut output = if exit_code == Some(0) { ToolOutput::text(text) } else { ToolOutput::error(text) };
    output.meta.exit_code = exit_code;
    output.meta.truncated = out.truncated || err.truncated;
    output.meta.spill_path = out.spill.clone().or_else(|| err.spill.clone());
    output.with_structured(structured)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::defined::parse_definition;

    fn definition(hints: &str) -> ToolDefinition {
        let text =
            format!("name = \"t\"\ndescription = \"d\"\nscript = \"x\"\n{hints}\n[input_schema]\ntype = \"object\"\n");
        parse_definition(text.as_bytes()).unwrap()
    }

    fn hints(tool: &DefinedTool) -> (bool, bool, bool) {
        (tool.spec().annotations.read_only, tool.spec().annotations.destructive, tool.runs_restricted())
    }

    #[test]
    fn a_workspace_tool_is_believed_only_where_its_claim_is_enforced() {
        let read_only = || definition("read_only = true");
        let harmless = || definition("destructive = false");
        assert_eq!(hints(&DefinedTool::new(read_only(), Trust::User)), (true, false, false));
        assert_eq!(hints(&DefinedTool::new(harmless(), Trust::User)), (false, false, false));
        let enforced = Trust::Workspace { restriction_available: true };
        let unenforced = Trust::Workspace { restriction_available: false };
        assert_eq!(hints(&DefinedTool::new(read_only(), enforced)), (true, false, true));
        assert_eq!(hints(&DefinedTool::new(read_only(), unenforced)), (false, true, false));
        assert_eq!(hints(&DefinedTool::new(harmless(), enforced)), (false, true, false));
    }

    #[test]
    fn arguments_must_be_an_object_and_the_deadline_leaves_a_margin() {
        let tool = DefinedTool::new(definition("timeout = 2"), Trust::User);
        assert!(matches!(tool.prepare(&serde_json::json!([1])), Err(ToolError::InvalidInput(_))));
        let prepared = tool.prepare(&serde_json::json!({})).unwrap();
        assert_eq!(prepared.timeout, Some(Duration::from_secs(2) + TIMEOUT_MARGIN));
        assert!(!prepared.read_only);
    }
}
