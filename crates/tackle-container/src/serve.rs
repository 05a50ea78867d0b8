//! The tool server inside: `tackle mcp serve --workspace WORKDIR` started through an exec
//! with attached stdio, as a stream the MCP client reads lines from. Before each start (and
//! each restart after a crash) the container is looked at: one that stopped or was removed is
//! "gone", and the call that wanted it says so instead of waiting.

use std::sync::Arc;

use bollard::exec::{StartExecOptions, StartExecResults};
use bollard::models::ExecConfig;
use futures::StreamExt as _;
use tackle_mcp::client::transport::{OpenedStream, StreamOpener};
use tokio::io::AsyncWriteExt as _;
use tokio::sync::watch;

use crate::engine::{in_words, is_not_found};
use crate::{BINARY_IN_CONTAINER, Container};

/// Bytes buffered between the exec's output and the MCP client's reader.
const PIPE_BYTES: usize = 256 * 1024;

/// The most stderr bytes of the server inside kept for a message.
const STDERR_KEPT: usize = 4096;

/// Why the tool server inside could not be started; the text is for the person.
#[derive(Debug, thiserror::Error)]
pub enum ServeStreamError {
    /// The container stopped or was removed, or the engine did not answer ([`gone`]'s words).
    #[error("{0}")]
    Gone(String),
    /// The engine refused the exec.
    #[error("cannot start tackle in the container {container}: {}", in_words(.source))]
    Exec {
        container: String,
        #[source]
        source: bollard::errors::Error,
    },
    /// The engine started the exec without attaching its stdio.
    #[error("the container engine started tackle detached")]
    Detached,
}

/// An opener of the tool server in `container`.
pub fn opener(container: Container) -> StreamOpener {
    let container = Arc::new(container);
    StreamOpener(Arc::new(move || {
        let container = Arc::clone(&container);
        Box::pin(async move { open(&container).await.map_err(Into::into) })
    }))
}

/// Why the container cannot serve any more, if it cannot.
pub async fn gone(container: &Container) -> Option<String> {
    match container.engine.docker.inspect_container(&container.id, None).await {
        Ok(info) => {
            let state = info.state.unwrap_or_default();
            if state.running.unwrap_or(false) {
                return None;
            }
            let status = state.status.map(|s| s.to_string()).unwrap_or_else(|| "stopped".to_owned());
            let code = state.exit_code.map(|c| format!(", exit code {c}")).unwrap_or_default();
            Some(format!(
                "the container {} is gone ({status}{code}); the session's tools ran there, so start a new session",
                container.name
            ))
        }
        Err(err) if is_not_found(&err) => Some(format!(
            "the container {} is gone (it was removed); the session's tools ran there, so start a new session",
            container.name
        )),
        Err(err) => {
            Some(format!("the container engine at {} did not answer: {}", container.engine.address, in_words(&err)))
        }
    }
}

/// The tool server's command line inside `container`, with the host's path deny rules.
fn server_command(container: &Container) -> Vec<String> {
    let mut cmd: Vec<String> = [BINARY_IN_CONTAINER, "mcp", "serve", "--workspace", &container.workdir]
        .into_iter()
        .chain(["--tools", "all", "--no-container"])
        .map(str::to_owned)
        .collect();
    for rule in &container.deny_rules {
        cmd.push(format!("--deny={rule}"));
    }
    cmd
}

async fn open(container: &Container) -> Result<OpenedStream, ServeStreamError> {
    if let Some(reason) = gone(container).await {
        return Err(ServeStreamError::Gone(reason));
    }
    let docker = &container.engine.docker;
    let config = ExecConfig {
        attach_stdin: Some(true),
        attach_stdout: Some(true),
        attach_stderr: Some(true),
        tty: Some(false),
        env: Some(container.env.clone()),
        working_dir: Some(container.workdir.clone()),
        cmd: Some(server_command(container)),
        ..Default::default()
    };
    let exec = docker
        .create_exec(&container.id, config)
        .await
        .map_err(|source| ServeStreamError::Exec { container: container.name.clone(), source })?;
    let options = StartExecOptions { detach: false, tty: false, output_capacity: Some(PIPE_BYTES) };
    let started = docker
        .start_exec(&exec.id, Some(options))
        .await
        .map_err(|source| ServeStreamError::Exec { container: container.name.clone(), source })?;
    let StartExecResults::Attached { mut output, mut input } = started else {
        return Err(ServeStreamError::Detached);
    };
    // The client's writes go through a pipe, so that its end (the client closing stdin) is a
    // half-close the engine passes on as end of input, which ends the server inside.
    let (client_input, mut to_server) = tokio::io::duplex(PIPE_BYTES);
    tokio::spawn(async move {
        let _ = tokio::io::copy(&mut to_server, &mut input).await;
        let _ = input.shutdown().await;
    });
    let (reader, mut writer) = tokio::io::duplex(PIPE_BYTES);
    let (exit_tx, exit) = watch::channel(None);
    let watched = container.clone();
    tokio::spawn(async move {
        let mut stderr = Vec::new();
        let mut broke = None;
        while let Some(chunk) = output.next().await {
            match chunk {
                Ok(bollard::container::LogOutput::StdOut { message }) => {
                    if writer.write_all(&message).await.is_err() {
                        break;
                    }
                }
                Ok(bollard::container::LogOutput::StdErr { message }) => {
                    tracing::debug!(container = %watched.name, "tackle inside: {}", String::from_utf8_lossy(&message));
                    let room = STDERR_KEPT.saturating_sub(stderr.len());
                    stderr.extend_from_slice(&message[..message.len().min(room)]);
                }
                Ok(_) => {}
                Err(err) => {
                    broke = Some(in_words(&err));
                    break;
                }
            }
        }
        drop(writer);
        let reason = match gone(&watched).await {
            Some(reason) => reason,
            None => {
                let said = String::from_utf8_lossy(&stderr).trim().to_owned();
                let said = if said.is_empty() { String::new() } else { format!(": {said}") };
                match broke {
                    Some(broke) => format!("the connection to tackle in the container broke ({broke}){said}"),
                    None => format!("tackle in the container {} exited{said}", watched.name),
                }
            }
        };
        let _ = exit_tx.send(Some(reason));
    });
    Ok(OpenedStream { output: Box::new(reader), input: Box::new(client_input), exit })
}
