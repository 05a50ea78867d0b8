//! Answering the calls of one reply (docs/reference/providers.md#rules-for-calls): at most 64 run; identical read-only
//! calls run once and share the output; `task_done` runs after its siblings, and is refused
//! when one of them failed; every call gets exactly one output, in call order in the history,
//! and in the trajectory as soon as it exists.

use serde_json::Value;
use tackle_core::{ErrorKind, ToolCall, ToolOutput};
use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::events::{AgentEvent, call_summary};
use crate::trajectory::TrajectoryEvent;

/// The wire name of the end-of-task tool.
pub const TASK_DONE: &str = "task_done";

/// One call of a reply, ready to answer.
#[derive(Debug, Clone)]
pub struct PlannedCall {
    pub call: ToolCall,
    /// The arguments as JSON (the raw text as a string when they do not parse).
    pub args: Value,
    /// Where the call starts in the message text (text formats).
    pub start: Option<usize>,
}

/// The answers to one reply.
#[derive(Debug)]
pub struct TurnOutcome {
    /// One output per call, in call order.
    pub outputs: Vec<ToolOutput>,
    /// `task_done` was called and accepted.
    pub task_done: bool,
}

/// The answer to `task_done` after calls of the run were denied permission: the task may not
/// be done, so the model hears what was denied and may try another way or explain.
pub fn denied_reminder(denied: &[String]) -> String {
    let list: Vec<String> = denied.iter().map(|call| format!("- {call}")).collect();
    format!(
        "task_done refused: {} call(s) in this run were denied permission, so the task may not be done:\n{}\n\
         Try another way the permissions allow, or tell the user what you could not do and why; then call task_done again.",
        denied.len(),
        list.join("\n")
    )
}

/// Whether `output` answers a call that was denied permission (by the mode, the approver or a hook).
pub fn is_denied(output: &ToolOutput) -> bool {
    output.meta.rejected && output.meta.error_kind == Some(ErrorKind::Denied)
}

/// A read-only call's output given to an identical call of the same turn.
fn answer_as(mut output: ToolOutput, call_id: &str) -> ToolOutput {
    output.call_id = call_id.to_owned();
    output
}

/// The calls of a run that were denied permission.
#[derive(Debug, Default)]
pub struct DeniedCalls {
    /// One line per denied call: the call and the first line of its denial.
    all: Vec<String>,
    /// Each denied call as a rule would name it (`Bash(python3 -m pytest -q)`).
    calls: Vec<String>,
    /// How many of them `task_done` already reminded the model of.
    reminded: usize,
}

impl DeniedCalls {
    fn add(&mut self, call: String, line: String) {
        self.calls.push(call);
        self.all.push(line);
    }

    /// Each denied call as a rule would name it (`Bash(python3 -m pytest -q)`), in order.
    pub fn calls(&self) -> &[String] {
        &self.calls
    }

    /// How many calls were denied.
    pub fn count(&self) -> usize {
        self.all.len()
    }

    /// The denials the model was not reminded of yet (now marked reminded), if any.
    fn take_unreminded(&mut self) -> Option<Vec<String>> {
        let new = self.all.get(self.reminded..).filter(|rest| !rest.is_empty())?.to_vec();
        self.reminded = self.all.len();
        Some(new)
    }
}

/// The output of a call that was never run.
pub fn not_run(call_id: &str, text: String) -> ToolOutput {
    let mut output = ToolOutput::error(text);
    output.call_id = call_id.to_owned();
    output.meta.rejected = true;
    output
}

impl Agent {
    /// Answers the calls of one reply. Denied calls are added to `denied` (one line each);
    /// `task_done` after denials not yet reminded of is answered with [`denied_reminder`].
    pub(crate) async fn answer(
        &self,
        step: u32,
        calls: &[PlannedCall],
        cancel: &CancellationToken,
        denied: &mut DeniedCalls,
    ) -> TurnOutcome {
        let limit = self.config.max_calls_per_reply;
        let tools = self.session.tools();
        let resolved: Vec<Option<String>> =
            calls.iter().map(|c| tools.resolve(&c.call.name).map(|h| h.spec().name.clone())).collect();
        for (planned, name) in calls.iter().zip(&resolved) {
            let spec = tools.resolve(&planned.call.name).map(|handle| handle.spec());
            let name = name.clone().unwrap_or_else(|| planned.call.name.clone());
            self.record_call(step, planned, &name);
            self.observe(AgentEvent::CallQueued {
                call_id: planned.call.id.clone(),
                summary: call_summary(spec, &planned.args),
                name,
            });
        }

        let mut outputs: Vec<Option<ToolOutput>> = vec![None; calls.len()];
        // Index of the call whose output a duplicate copies.
        let mut copy_of: Vec<Option<usize>> = vec![None; calls.len()];
        let mut task_done = Vec::new();
        let mut runnable = Vec::new();
        for (index, planned) in calls.iter().enumerate() {
            if index >= limit {
                outputs[index] = Some(not_run(
                    &planned.call.id,
                    format!("Too many tool calls in one reply (limit {limit}); this call was not executed."),
                ));
                continue;
            }
            if resolved[index].as_deref() == Some(TASK_DONE) {
                task_done.push(index);
                continue;
            }
            let read_only = resolved[index]
                .as_deref()
                .and_then(|name| tools.resolve(name))
                .is_some_and(|h| h.spec().annotations.read_only);
            let earlier = runnable.iter().copied().find(|&other: &usize| {
                read_only && resolved[other] == resolved[index] && calls[other].args == planned.args
            });
            match earlier {
                Some(other) => copy_of[index] = Some(other),
                None => runnable.push(index),
            }
        }

        // Each output goes to the trajectory when it exists (a crash later in the turn loses
        // none of them); history and the observer still get them in call order below.
        let mut recorded = vec![false; calls.len()];
        let batch: Vec<ToolCall> = runnable.iter().map(|&i| calls[i].call.clone()).collect();
        let mut finished = |position: usize, output: &ToolOutput| {
            let index = runnable[position];
            self.record_output(step, output);
            recorded[index] = true;
            for (copy_index, _) in copy_of.iter().enumerate().filter(|(_, source)| **source == Some(index)) {
                self.record_output(step, &answer_as(output.clone(), &calls[copy_index].call.id));
                recorded[copy_index] = true;
            }
        };
        let ran = self.run_calls(batch, cancel, &mut finished).await;
        for (index, output) in runnable.iter().zip(ran) {
            outputs[*index] = Some(output);
        }
        for (index, source) in copy_of.iter().enumerate() {
            if let Some(source) = source {
                let output = outputs[*source].clone().unwrap_or_else(|| ToolOutput::error(""));
                outputs[index] = Some(answer_as(output, &calls[index].call.id));
            }
        }

        for (index, output) in outputs.iter().enumerate() {
            if let Some(output) = output.as_ref().filter(|o| is_denied(o)) {
                let spec = resolved[index].as_deref().and_then(|name| tools.resolve(name)).map(|h| h.spec());
                let name = resolved[index].clone().unwrap_or_else(|| calls[index].call.name.clone());
                let summary = call_summary(spec, &calls[index].args);
                let reason = output.text_content().lines().next().unwrap_or_default().to_owned();
                let rule_name = spec.map_or(name.as_str(), |spec| spec.claude_name());
                let call = if summary.is_empty() { rule_name.to_owned() } else { format!("{rule_name}({summary})") };
                denied.add(call, format!("{name} {summary}: {reason}").replace("  ", " "));
            }
        }
        let failed = outputs.iter().flatten().filter(|o| o.is_error).count();
        let mut accepted = false;
        for index in task_done {
            let id = &calls[index].call.id;
            let output = if cancel.is_cancelled() {
                not_run(id, "Not executed: the run stopped (cancelled by the user).".to_owned())
            } else if failed > 0 {
                not_run(
                    id,
                    format!(
                        "task_done refused: {failed} other call(s) in this reply failed. Check their errors, then call task_done again."
                    ),
                )
            } else if let Some(unreminded) = denied.take_unreminded() {
                not_run(id, denied_reminder(&unreminded))
            } else {
                let mut ran = self.run_calls(vec![calls[index].call.clone()], cancel, &mut |_, _| {}).await;
                ran.pop().unwrap_or_else(|| not_run(id, "task_done was not answered.".to_owned()))
            };
            accepted |= !output.is_error;
            outputs[index] = Some(output);
        }

        let outputs: Vec<ToolOutput> = outputs
            .into_iter()
            .zip(calls)
            .map(|(output, planned)| {
                output.unwrap_or_else(|| {
                    not_run(&planned.call.id, "Not executed: the run stopped (no output was produced).".to_owned())
                })
            })
            .collect();
        for (((output, planned), name), recorded) in outputs.iter().zip(calls).zip(&resolved).zip(recorded) {
            if !recorded {
                self.record_output(step, output);
            }
            self.observe(AgentEvent::CallAnswered {
                call_id: output.call_id.clone(),
                name: name.clone().unwrap_or_else(|| planned.call.name.clone()),
                is_error: output.is_error,
                first_line: output.text_content().lines().next().unwrap_or_default().to_owned(),
                duration_ms: output.meta.duration_ms,
            });
            if let Some(diff) = &output.meta.diff {
                self.observe(AgentEvent::Edited { call_id: output.call_id.clone(), diff: diff.clone() });
            }
        }
        TurnOutcome { outputs, task_done: accepted }
    }

    /// Runs calls through the executor, passing its events on to the observer and each output
    /// to `finished` as it exists.
    async fn run_calls(
        &self,
        calls: Vec<ToolCall>,
        cancel: &CancellationToken,
        finished: &mut (dyn FnMut(usize, &ToolOutput) + Send),
    ) -> Vec<ToolOutput> {
        if calls.is_empty() {
            return Vec::new();
        }
        let mut events = self.session.subscribe();
        let turn = self.executor.run_turn_each(&self.session, calls, cancel, finished);
        tokio::pin!(turn);
        let outputs = loop {
            tokio::select! {
                outputs = &mut turn => break outputs,
                event = events.recv() => {
                    if let Ok(event) = event {
                        self.observe(AgentEvent::Exec(event));
                    }
                }
            }
        };
        while let Ok(event) = events.try_recv() {
            self.observe(AgentEvent::Exec(event));
        }
        outputs
    }

    /// Records a call about to be answered, under `name` (the tool's canonical name when the
    /// call resolved).
    pub(crate) fn record_call(&self, step: u32, planned: &PlannedCall, name: &str) {
        self.record(TrajectoryEvent::ToolCall {
            step,
            call_id: planned.call.id.clone(),
            name: name.to_owned(),
            args: planned.args.clone(),
            format: self.config.call_format.name().to_owned(),
            start: planned.start,
        });
    }

    pub(crate) fn record_output(&self, step: u32, output: &ToolOutput) {
        self.record(TrajectoryEvent::tool_output(step, output));
    }
}
