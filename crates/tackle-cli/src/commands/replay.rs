//! `tackle replay FILE [--check | --rerun [--workspace DIR] | --format text|atif]`.

use std::process::ExitCode;
use std::sync::Arc;

use tackle::permission::AutoApprover;
use tackle::replay::{copy_workspace, read_events, recorded_setup, rerun, transcript};
use tackle::{PermissionMode, SessionBuilder};

use crate::cli::{ReplayArgs, ReplayFormat};
use crate::exit::{CommandResult, Failure, OK, TOOL_FAILED};
use crate::session;
use crate::stdout;

/// `tackle replay`.
pub async fn replay(args: ReplayArgs) -> CommandResult {
    if args.check {
        let file = std::fs::File::open(&args.file)
            .map_err(|e| Failure::usage(format!("cannot read {}: {e}", args.file.display())))?;
        return match tackle::trajectory::check(std::io::BufReader::new(file)) {
            Ok(summary) => {
                let unknown = if summary.unknown.is_empty() {
                    String::new()
                } else {
                    format!(", events of types this version does not know: {}", summary.unknown.join(", "))
                };
                stdout::print(&format!(
                    "{}: valid ({} events, {} tool calls{}{unknown})\n",
                    args.file.display(),
                    summary.events,
                    summary.tool_calls,
                    if summary.ended { "" } else { ", no session_end" }
                ))?;
                Ok(ExitCode::from(OK))
            }
            Err(violation) => {
                stdout::print(&format!("{}: {violation}\n", args.file.display()))?;
                Ok(ExitCode::from(TOOL_FAILED))
            }
        };
    }
    if args.format == ReplayFormat::Atif {
        let export = tackle::trajectory::atif::export_file(&args.file).map_err(|e| Failure::usage(e.to_string()))?;
        if !export.unknown.is_empty() {
            diagln!("tackle: left out events of types this version does not know: {}", export.unknown.join(", "));
        }
        let mut json = serde_json::to_string_pretty(&export.document)
            .map_err(|e| Failure::failed(format!("cannot write the ATIF document: {e}")))?;
        json.push('\n');
        stdout::print(&json)?;
        return Ok(ExitCode::from(OK));
    }
    let events = read_events(&args.file).map_err(|e| Failure::usage(e.to_string()))?;
    if !args.rerun {
        stdout::print(&transcript(&events))?;
        return Ok(ExitCode::from(OK));
    }
    let (tools, recorded_workspace) = recorded_setup(&events).map_err(|e| Failure::usage(e.to_string()))?;
    let scratch;
    let workspace = match &args.workspace {
        Some(dir) => session::workspace(Some(dir))?,
        None => {
            let source = session::workspace(Some(&recorded_workspace))?;
            scratch = Scratch::new()?;
            copy_workspace(&source, &scratch.0)
                .map_err(|e| Failure::failed(format!("cannot copy {} for the re-run: {e}", source.display())))?;
            diagln!("Re-running in a scratch copy of {} ({}).", source.display(), scratch.0.display());
            scratch.0.clone()
        }
    };
    let config = session::config(&workspace, false, false)?;
    // Read-before-edit stays on: the recorded reads are re-run too, so the edits behave as they
    // did. Calls that were denied in the run are skipped; the rest ran then and run again now.
    let tackle = SessionBuilder::new(&workspace)
        .config(config)
        .on_notice(|line| diagln!("tackle: {line}"))
        .default_tools("all")
        .tools(&tools.join(","))
        .permission_mode(PermissionMode::Bypass)
        .approver(Arc::new(AutoApprover))
        .build()
        .await?;
    let report = rerun(&events, tackle.session(), tackle.executor()).await;
    tackle.close().await;
    for difference in &report.differences {
        let flag = |error: bool| if error { " (error)" } else { "" };
        stdout::print(&format!(
            "call {} ({}) differs:\n  recorded{}: {}\n  now{}: {}\n",
            difference.call_id,
            difference.name,
            flag(difference.recorded_error),
            difference.recorded.replace('\n', "\n    "),
            flag(difference.now_error),
            difference.now.replace('\n', "\n    ")
        ))?;
    }
    stdout::print(&format!(
        "{} call(s) re-run, {} differ, {} skipped\n",
        report.rerun,
        report.differences.len(),
        report.skipped.len()
    ))?;
    Ok(ExitCode::from(if report.differences.is_empty() { OK } else { TOOL_FAILED }))
}

/// A scratch directory removed when the command ends.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new() -> Result<Scratch, Failure> {
        let dir = std::env::temp_dir().join(format!("tackle-rerun-{}-{:x}", std::process::id(), rand_suffix()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| Failure::failed(format!("cannot create a scratch directory {}: {e}", dir.display())))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn rand_suffix() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0)
}
