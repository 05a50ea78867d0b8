//! The container step of the session assembly: `[container]` and the flags resolved, the
//! engine found, the container started (or attached to), the tool server inside started and
//! its tools put in the registry under the built-ins' names. Ctrl-C (the caller's token)
//! during any of it removes what was created.

use std::path::Path;
use std::sync::Arc;

use tackle_container::settings::{ContainerFlags, ContainerSection, ContainerSpec};
use tackle_container::{Container, ContainerError, Engine, InContainer, Progress};
use tackle_core::Registry;
use tackle_core::config::Config;
use tackle_core::permission::rule::ToolClass;
use tackle_core::permission::rules::{RuleBook, RuleKind};
use tokio_util::sync::CancellationToken;

use crate::error::BuildError;
use crate::notice::Notice;

/// What the builder was asked for.
pub(crate) struct ContainerStart {
    pub(crate) flags: ContainerFlags,
    pub(crate) progress: Arc<dyn Fn(Progress) + Send + Sync>,
    pub(crate) cancel: CancellationToken,
}

impl ContainerStart {
    /// Starts the container the flags and `[container]` name, if any, and replaces the
    /// registry's built-ins with its tools. The file tools then run inside, where the host's
    /// path rules cannot see their paths: `rules`' `Read(...)` and `Edit(...)` deny rules go
    /// to the tackle inside, which resolves them against the container's workspace.
    pub(crate) async fn run(
        &self,
        config: &Config,
        workspace: &Path,
        rules: &RuleBook,
        registry: &mut Registry,
        notice: &Notice,
    ) -> Result<Option<Arc<InContainer>>, BuildError> {
        let section: ContainerSection = config.section("container")?;
        let user: Option<ContainerSection> = config.user_section("container")?;
        let named_by_user = self.flags.target.clone().or_else(|| user.and_then(|u| u.image));
        let Some(mut spec) = ContainerSpec::resolve(section, self.flags.clone())? else {
            return Ok(None);
        };
        spec.deny_rules = path_deny_rules(rules);
        // The merged section's image may be the workspace's over the user's: attaching needs
        // the very target the person named.
        spec.may_attach = named_by_user.as_deref() == Some(spec.target.as_str());
        let engine = tokio::select! {
            engine = Engine::connect() => engine?,
            () = self.cancel.cancelled() => return Err(ContainerError::Cancelled.into()),
        };
        let session = format!("{}-{}", std::process::id(), unique());
        let container = Container::start(engine, &spec, &session, self.progress.as_ref(), &self.cancel).await?;
        let kept = container.clone();
        let connected = tokio::select! {
            connected = InContainer::connect(container, workspace) => connected?,
            () = self.cancel.cancelled() => {
                kept.close().await;
                return Err(ContainerError::Cancelled.into());
            }
        };
        let (in_container, listing) = connected;
        let replaced = in_container.import(registry, &listing);
        notice.say(&format!(
            "tools run in container {} (workdir {}): {}",
            in_container.container.name,
            in_container.container.workdir,
            replaced.join(", ")
        ));
        Ok(Some(Arc::new(in_container)))
    }
}

/// The text of every `Read(...)` and `Edit(...)` deny rule of `rules`.
fn path_deny_rules(rules: &RuleBook) -> Vec<String> {
    rules
        .list()
        .into_iter()
        .filter(|r| r.kind == RuleKind::Deny && matches!(r.rule.class, ToolClass::Read | ToolClass::Edit))
        .map(|r| r.rule.text)
        .collect()
}

/// A number unique to this start (the clock's nanoseconds).
fn unique() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
}
