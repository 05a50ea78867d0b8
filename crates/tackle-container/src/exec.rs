//! One shell script run in a session's container with its output collected: what the host
//! asks of the container itself, beside the tool server inside (the run's diff of the
//! container's workspace, `crates/tackle/src/changes.rs`).

use bollard::exec::{StartExecOptions, StartExecResults};
use bollard::models::ExecConfig;
use futures::StreamExt as _;

use crate::engine::in_words;
use crate::{Container, ContainerError};

/// What a script printed and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptOutput {
    /// Its exit code (`-1` when the engine did not say).
    pub code: i64,
    /// Its standard output, at most the `max_stdout` asked for.
    pub stdout: Vec<u8>,
    /// Whether standard output went past `max_stdout` (the rest was dropped).
    pub cut: bool,
    /// The first 4 KiB of its standard error.
    pub stderr: String,
}

impl Container {
    /// Runs `script` with `/bin/sh -c` in the container's workdir, as root, with the tool
    /// server's environment.
    pub async fn run_script(&self, script: &str, max_stdout: usize) -> Result<ScriptOutput, ContainerError> {
        let docker = &self.engine.docker;
        let failed = |err: bollard::errors::Error| ContainerError::Engine {
            engine: self.engine.address.clone(),
            action: "run a command in the container".to_owned(),
            detail: in_words(&err),
        };
        let config = ExecConfig {
            attach_stdout: Some(true),
            attach_stderr: Some(true),
            tty: Some(false),
            env: Some(self.env.clone()),
            working_dir: Some(self.workdir.clone()),
            cmd: Some(vec!["/bin/sh".to_owned(), "-c".to_owned(), script.to_owned()]),
            ..Default::default()
        };
        let exec = docker.create_exec(&self.id, config).await.map_err(failed)?;
        let options = StartExecOptions { detach: false, tty: false, output_capacity: None };
        let StartExecResults::Attached { mut output, .. } =
            docker.start_exec(&exec.id, Some(options)).await.map_err(failed)?
        else {
            return Err(ContainerError::Unusable("the container engine ran the command detached".to_owned()));
        };
        let (mut stdout, mut stderr, mut cut) = (Vec::new(), Vec::new(), false);
        while let Some(chunk) = output.next().await {
            match chunk.map_err(failed)? {
                bollard::container::LogOutput::StdOut { message } => {
                    let room = max_stdout.saturating_sub(stdout.len());
                    cut |= message.len() > room;
                    stdout.extend_from_slice(&message[..message.len().min(room)]);
                }
                bollard::container::LogOutput::StdErr { message } => {
                    let room = 4096usize.saturating_sub(stderr.len());
                    stderr.extend_from_slice(&message[..message.len().min(room)]);
                }
                _ => {}
            }
        }
        let code = docker.inspect_exec(&exec.id).await.map_err(failed)?.exit_code.unwrap_or(-1);
        Ok(ScriptOutput { code, stdout, cut, stderr: String::from_utf8_lossy(&stderr).into_owned() })
    }
}
