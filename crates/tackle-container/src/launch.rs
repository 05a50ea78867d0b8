//! One session's container: created from an image (pulled first when it is not local) or
//! attached to when the target names a running container; the tackle binary put in (a
//! read-only bind mount when the engine is local, else an upload with `put_archive`); checked
//! before it starts (architecture, C library loader, `/bin/sh`, the workdir); removed again at
//! the end of the session unless `keep`, and at once when start-up fails or is cancelled. An
//! attached container is never stopped or removed.

use std::collections::HashMap;
use std::path::Path;

use bollard::models::{ContainerCreateBody, HostConfig, Mount, MountType};
use bollard::query_parameters::{
    ContainerArchiveInfoOptions, CreateContainerOptions, CreateImageOptions, RemoveContainerOptions,
    UploadToContainerOptions,
};
use futures::StreamExt as _;
use tokio_util::sync::CancellationToken;

use crate::binary::Needs;
use crate::engine::{Engine, in_words, is_not_found};
use crate::settings::ContainerSpec;
use crate::{BINARY_IN_CONTAINER, ContainerError, labels};

/// A start-up step, for a progress display.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaunchStep {
    /// Pulling an image that is not local.
    Pulling(String),
    /// Creating the container from the image.
    Creating(String),
    /// Attaching to a running container.
    Attaching(String),
    /// Copying the tackle binary in.
    Copying,
    /// Starting the container.
    Starting,
}

impl std::fmt::Display for LaunchStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LaunchStep::Pulling(image) => write!(f, "pulling {image}"),
            LaunchStep::Creating(image) => write!(f, "creating a container from {image}"),
            LaunchStep::Attaching(id) => write!(f, "attaching to container {id}"),
            LaunchStep::Copying => f.write_str("copying tackle into the container"),
            LaunchStep::Starting => f.write_str("starting the container"),
        }
    }
}

/// The container of a session.
#[derive(Debug, Clone)]
pub struct Container {
    /// The engine it runs on.
    pub engine: Engine,
    /// Its full id.
    pub id: String,
    /// Its name, for messages.
    pub name: String,
    /// The workspace inside.
    pub workdir: String,
    /// The environment of the tool server inside, as `NAME=value`.
    pub env: Vec<String>,
    /// Tackle created it (and so removes it, unless `keep`).
    pub created: bool,
    /// Keep it at the end of the session.
    pub keep: bool,
    /// The host's path deny rules, passed to the tool server inside as `--deny RULE`.
    pub deny_rules: Vec<String>,
}

impl Container {
    /// Creates and starts the container of `spec`, or attaches to the running container it
    /// names. When `cancel` fires first, whatever was created is removed and the answer is
    /// [`ContainerError::Cancelled`].
    pub async fn start(
        engine: Engine,
        spec: &ContainerSpec,
        session: &str,
        progress: &(dyn Fn(LaunchStep) + Send + Sync),
        cancel: &CancellationToken,
    ) -> Result<Container, ContainerError> {
        let needs = Needs::of(&spec.binary)?;
        let existing = match engine.docker.inspect_container(&spec.target, None).await {
            Ok(found) => Some(found),
            Err(err) if is_not_found(&err) => None,
            Err(err) => return Err(engine.failed(&format!("look up '{}'", spec.target), &err)),
        };
        if let Some(found) = existing {
            if !spec.may_attach {
                return Err(ContainerError::Unusable(format!(
                    "the workspace's tackle.toml names '{0}' as [container] image, and '{0}' is a container on this \
                     machine: Tackle attaches to a running container only when you name it yourself \
                     (--container {0}, or [container] image in your user config)",
                    spec.target
                )));
            }
            let id = found.id.clone().unwrap_or_else(|| spec.target.clone());
            if !found.state.as_ref().and_then(|state| state.running).unwrap_or(false) {
                return Err(ContainerError::Unusable(format!(
                    "container '{}' is not running; start it (`podman start {0}`) or name an image with --container",
                    spec.target
                )));
            }
            progress(LaunchStep::Attaching(spec.target.clone()));
            let image = found.image.clone().unwrap_or_default();
            let arch = engine.docker.inspect_image(&image).await.ok().and_then(|info| info.architecture);
            needs.check_arch(&spec.target, arch.as_deref())?;
            let workdir = spec
                .workdir
                .clone()
                .or_else(|| found.config.as_ref().and_then(|c| c.working_dir.clone()))
                .filter(|dir| !dir.is_empty())
                .unwrap_or_else(|| "/".to_owned());
            let container = Container {
                engine,
                id,
                name: spec.target.clone(),
                workdir,
                env: env_list(spec),
                created: false,
                keep: true,
                deny_rules: spec.deny_rules.clone(),
            };
            progress(LaunchStep::Copying);
            tokio::select! {
                outcome = async {
                    container.upload_binary(&spec.binary).await?;
                    container.check(&needs, &spec.target, spec.mount_workspace.is_some()).await
                } => outcome?,
                () = cancel.cancelled() => return Err(ContainerError::Cancelled),
            }
            return Ok(container);
        }
        let image = tokio::select! {
            image = local_image(&engine, &spec.target, progress) => image?,
            () = cancel.cancelled() => return Err(ContainerError::Cancelled),
        };
        needs.check_arch(&spec.target, image.architecture.as_deref())?;
        let workdir = spec
            .workdir
            .clone()
            .or_else(|| image.config.as_ref().and_then(|c| c.working_dir.clone()))
            .filter(|dir| !dir.is_empty())
            .unwrap_or_else(|| "/".to_owned());
        progress(LaunchStep::Creating(spec.target.clone()));
        let body = create_body(&engine, spec, session, &workdir);
        let created = engine
            .docker
            .create_container(None::<CreateContainerOptions>, body)
            .await
            .map_err(|err| engine.failed(&format!("create a container from {}", spec.target), &err))?;
        let container = Container {
            engine,
            id: created.id.clone(),
            name: created.id.chars().take(12).collect(),
            workdir,
            env: env_list(spec),
            created: true,
            keep: spec.keep,
            deny_rules: spec.deny_rules.clone(),
        };
        let finish = async {
            if !container.engine.local {
                progress(LaunchStep::Copying);
                container.upload_binary(&spec.binary).await?;
            }
            container.check(&needs, &spec.target, spec.mount_workspace.is_some()).await?;
            progress(LaunchStep::Starting);
            container
                .engine
                .docker
                .start_container(&container.id, None)
                .await
                .map_err(|err| container.engine.failed("start the container", &err))
        };
        let outcome = tokio::select! {
            outcome = finish => outcome,
            () = cancel.cancelled() => Err(ContainerError::Cancelled),
        };
        match outcome {
            Ok(()) => Ok(container),
            Err(err) => {
                container.remove().await;
                Err(err)
            }
        }
    }

    /// Puts the binary at [`BINARY_IN_CONTAINER`] (mode 0755).
    async fn upload_binary(&self, binary: &Path) -> Result<(), ContainerError> {
        let bytes = tokio::fs::read(binary).await.map_err(|err| {
            ContainerError::Settings(format!("cannot read the tackle binary {}: {err}", binary.display()))
        })?;
        let archive = binary_archive(&bytes)
            .map_err(|err| ContainerError::Settings(format!("cannot pack the tackle binary: {err}")))?;
        let options = UploadToContainerOptions { path: "/".to_owned(), ..Default::default() };
        self.engine
            .docker
            .upload_to_container(&self.id, Some(options), bollard::body_full(archive.into()))
            .await
            .map_err(|err| self.engine.failed("copy tackle into the container", &err))
    }

    /// Whether `path` exists in the container (links not followed).
    async fn exists(&self, path: &str) -> Result<bool, ContainerError> {
        let options = ContainerArchiveInfoOptions { path: path.to_owned() };
        match self.engine.docker.get_container_archive_info(&self.id, Some(options)).await {
            Ok(_) => Ok(true),
            Err(err) if is_not_found(&err) => Ok(false),
            Err(err) => Err(self.engine.failed(&format!("look for {path} in the container"), &err)),
        }
    }

    /// The checks before anything runs inside: the loader, `/bin/sh`, the workdir.
    async fn check(&self, needs: &Needs, image: &str, mounted: bool) -> Result<(), ContainerError> {
        if let Some(loader) = &needs.interpreter
            && !self.exists(loader).await?
        {
            return Err(needs.missing_loader(image, loader));
        }
        if !self.exists("/bin/sh").await? {
            return Err(ContainerError::Unusable(format!(
                "{image} has no /bin/sh, which the bash tool runs commands with; use an image with a shell"
            )));
        }
        if !mounted && !self.exists(&self.workdir).await? {
            return Err(ContainerError::Unusable(format!(
                "the workdir {} does not exist in {image}; name one that does with --container-workdir \
                 (or [container] workdir), or create it in the image",
                self.workdir
            )));
        }
        Ok(())
    }

    /// Stops and removes the container if Tackle created it and it is not kept; an attached
    /// or kept container is left alone.
    pub async fn close(&self) {
        if self.created && !self.keep {
            self.remove().await;
        }
    }

    async fn remove(&self) {
        let options = RemoveContainerOptions { force: true, v: true, ..Default::default() };
        match self.engine.docker.remove_container(&self.id, Some(options)).await {
            Ok(()) => {}
            Err(err) if is_not_found(&err) => {}
            Err(err) => tracing::warn!(container = %self.name, "could not remove the container: {}", in_words(&err)),
        }
    }
}

/// The image, pulled first when the engine does not have it.
async fn local_image(
    engine: &Engine,
    image: &str,
    progress: &(dyn Fn(LaunchStep) + Send + Sync),
) -> Result<bollard::models::ImageInspect, ContainerError> {
    match engine.docker.inspect_image(image).await {
        Ok(found) => return Ok(found),
        Err(err) if is_not_found(&err) => {}
        Err(err) => return Err(engine.failed(&format!("look up image {image}"), &err)),
    }
    progress(LaunchStep::Pulling(image.to_owned()));
    let options = CreateImageOptions { from_image: Some(image.to_owned()), ..Default::default() };
    let mut pull = engine.docker.create_image(Some(options), None, None);
    while let Some(step) = pull.next().await {
        if let Err(err) = step {
            return Err(ContainerError::NoImage {
                image: image.to_owned(),
                engine: engine.address.clone(),
                detail: format!("it is not local and pulling it failed: {}", in_words(&err)),
            });
        }
    }
    engine.docker.inspect_image(image).await.map_err(|err| ContainerError::NoImage {
        image: image.to_owned(),
        engine: engine.address.clone(),
        detail: in_words(&err),
    })
}

fn env_list(spec: &ContainerSpec) -> Vec<String> {
    spec.env.iter().map(|(name, value)| format!("{name}={value}")).collect()
}

/// The container's settings: labels, the binary as its main process (`containers hold`,
/// which waits until it is stopped), limits, mounts, the network.
fn create_body(engine: &Engine, spec: &ContainerSpec, session: &str, workdir: &str) -> ContainerCreateBody {
    let labels: HashMap<String, String> = [
        (labels::SESSION, session.to_owned()),
        (labels::CREATED_BY, "tackle".to_owned()),
        (labels::PID, std::process::id().to_string()),
        (labels::KEEP, spec.keep.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    // Tackle's own mounts are structured, so no path can be read as a bind's options.
    let mut mounts = Vec::new();
    if engine.local {
        mounts.push(bind(&spec.binary, BINARY_IN_CONTAINER.to_owned(), true));
    }
    if let Some(host) = &spec.mount_workspace {
        mounts.push(bind(host, workdir.to_owned(), false));
        mounts.extend(protected_entries(host).map(|(name, path)| bind(&path, format!("{workdir}/{name}"), true)));
    }
    ContainerCreateBody {
        image: Some(spec.target.clone()),
        entrypoint: Some(vec![BINARY_IN_CONTAINER.to_owned(), "containers".to_owned(), "hold".to_owned()]),
        cmd: Some(Vec::new()),
        labels: Some(labels),
        env: Some(env_list(spec)),
        host_config: Some(HostConfig {
            binds: Some(spec.mounts.clone()),
            mounts: Some(mounts),
            network_mode: Some(spec.network.clone()),
            memory: spec.memory,
            nano_cpus: spec.nano_cpus,
            pids_limit: spec.pids_limit,
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A bind mount of `source` (host) at `target` (container).
fn bind(source: &Path, target: String, read_only: bool) -> Mount {
    Mount {
        target: Some(target),
        source: Some(source.to_string_lossy().into_owned()),
        typ: Some(MountType::BIND),
        read_only: Some(read_only),
        ..Default::default()
    }
}

/// The entries of the mounted workspace that stay read-only inside, as the process sandbox
/// keeps them on the host (`.git`, `.tackle`, `.claude`, `tackle.toml`, `.mcp.json`): nothing
/// in the container can plant a git hook, a setting or an MCP server the host runs later.
/// Only real directories and files are bound: a symlink resolves inside the container, to
/// nothing of the host's, and binding it would hand the container what it points to.
fn protected_entries(host: &Path) -> impl Iterator<Item = (&'static str, std::path::PathBuf)> + '_ {
    let names = tackle_sandbox::process::PROTECTED_IN_ROOT.iter().chain(tackle_sandbox::process::PROTECTED_GIT);
    names.map(|name| (*name, host.join(name))).filter(|(_, path)| {
        std::fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_dir() || meta.file_type().is_file())
    })
}

/// A tar archive holding the binary at [`BINARY_IN_CONTAINER`].
fn binary_archive(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut builder = tar::Builder::new(Vec::new());
    for dir in [".tackle/", ".tackle/bin/"] {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Directory);
        header.set_mode(0o755);
        header.set_size(0);
        builder.append_data(&mut header, dir, std::io::empty())?;
    }
    let mut header = tar::Header::new_gnu();
    header.set_mode(0o755);
    header.set_size(bytes.len() as u64);
    builder.append_data(&mut header, BINARY_IN_CONTAINER.trim_start_matches('/'), bytes)?;
    builder.into_inner()
}
