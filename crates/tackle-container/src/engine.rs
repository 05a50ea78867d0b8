//! Finding the container engine: `DOCKER_HOST` when it is set, else the default sockets of
//! Docker and Podman, each asked for a ping. No engine answering is an error that names every
//! socket tried and how to start Podman's service.

use std::path::PathBuf;
use std::time::Duration;

use bollard::Docker;

use crate::ContainerError;

/// How long one ping may take before the next socket is tried.
const PING_TIMEOUT: Duration = Duration::from_secs(3);

/// Seconds one API request may take (pulls and big uploads included).
const REQUEST_TIMEOUT_S: u64 = 600;

/// A reachable engine.
#[derive(Debug, Clone)]
pub struct Engine {
    /// The client.
    pub docker: Docker,
    /// Where it was reached (`unix:///run/podman/podman.sock`), for messages.
    pub address: String,
    /// Whether the engine runs on this machine (a unix socket), so host paths can be bind
    /// mounted.
    pub local: bool,
}

/// The sockets tried without `DOCKER_HOST`, in order.
pub fn default_sockets() -> Vec<PathBuf> {
    let mut sockets = vec![PathBuf::from("/var/run/docker.sock")];
    if let Some(runtime) = std::env::var_os("XDG_RUNTIME_DIR").filter(|dir| !dir.is_empty()) {
        sockets.push(PathBuf::from(runtime).join("podman/podman.sock"));
    }
    sockets.push(PathBuf::from("/run/podman/podman.sock"));
    sockets
}

impl Engine {
    /// Connects to the first engine that answers.
    pub async fn connect() -> Result<Engine, ContainerError> {
        let candidates: Vec<String> = match std::env::var("DOCKER_HOST") {
            Ok(host) if !host.trim().is_empty() => vec![host.trim().to_owned()],
            _ => default_sockets().iter().map(|path| format!("unix://{}", path.display())).collect(),
        };
        let mut tried = Vec::new();
        for address in candidates {
            match Self::try_one(&address).await {
                Ok(engine) => return Ok(engine),
                Err(reason) => tried.push(format!("{address} ({reason})")),
            }
        }
        Err(ContainerError::NoEngine(format!(
            "no container engine answered; tried {}. Start Docker, or Podman's API service: \
             `podman system service --time=0 unix://$XDG_RUNTIME_DIR/podman/podman.sock &` \
             (as root: unix:///run/podman/podman.sock), or set DOCKER_HOST to the engine's socket \
             (DOCKER_HOST=unix:///path/to/podman.sock)",
            tried.join(", ")
        )))
    }

    async fn try_one(address: &str) -> Result<Engine, ProbeError> {
        let local = address.starts_with("unix://") || address.starts_with('/');
        let address = if address.starts_with('/') { format!("unix://{address}") } else { address.to_owned() };
        if let Some(path) = address.strip_prefix("unix://")
            && !std::path::Path::new(path).exists()
        {
            return Err(ProbeError::NoSocket);
        }
        let docker = Docker::connect_with_host(&address)
            .map_err(ProbeError::Client)?
            .with_timeout(Duration::from_secs(REQUEST_TIMEOUT_S));
        match tokio::time::timeout(PING_TIMEOUT, docker.ping()).await {
            Ok(Ok(_)) => Ok(Engine { docker, address, local }),
            Ok(Err(err)) => Err(ProbeError::Ping(err)),
            Err(_) => Err(ProbeError::Silent(PING_TIMEOUT)),
        }
    }

    /// An engine error as a [`ContainerError`] naming what was being done.
    pub fn failed(&self, action: &str, err: &bollard::errors::Error) -> ContainerError {
        ContainerError::Engine { engine: self.address.clone(), action: action.to_owned(), detail: in_words(err) }
    }
}

/// Why one address did not give an engine; the text goes in the list of sockets tried.
#[derive(Debug, thiserror::Error)]
enum ProbeError {
    #[error("no such socket")]
    NoSocket,
    /// The address cannot make a client.
    #[error("{0}")]
    Client(#[source] bollard::errors::Error),
    /// The ping failed.
    #[error("{}", in_words(.0))]
    Ping(#[source] bollard::errors::Error),
    /// The ping was not answered in time.
    #[error("no answer within {} s", .0.as_secs())]
    Silent(Duration),
}

/// A bollard error in words: the engine's own message when it sent one.
pub fn in_words(err: &bollard::errors::Error) -> String {
    match err {
        bollard::errors::Error::DockerResponseServerError { status_code, message } => {
            format!("{message} (HTTP {status_code})")
        }
        other => {
            let mut text = other.to_string();
            let mut source = std::error::Error::source(other);
            while let Some(inner) = source {
                text = format!("{text}: {inner}");
                source = inner.source();
            }
            text
        }
    }
}

/// Whether the engine answered 404 (no such image, container or path).
pub fn is_not_found(err: &bollard::errors::Error) -> bool {
    matches!(err, bollard::errors::Error::DockerResponseServerError { status_code: 404, .. })
}
