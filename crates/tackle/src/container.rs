//! The container step of the session assembly: `[container]` and the flags resolved, the
//! engine found, the container started (or attached to), the tool server inside started and
//! its tools put in the registry under the built-ins' names. Ctrl-C (the caller's token)
//! during any of it removes what was created.

use std::path::Path;
use std::sync::Arc;

use tackle_container::settings::{ContainerSection, ContainerSpec, parse_memory};
use tackle_container::{Container, Engine, InContainer};
use tackle_core::Registry;
use tackle_policy::config::Config;
use tackle_policy::permission::rule::ToolClass;
use tackle_policy::permission::rules::{RuleBook, RuleKind};
use tokio_util::sync::CancellationToken;

use crate::error::BuildError;
use crate::notice::Notice;

pub use tackle_container::ContainerError;
/// A step of starting a container, reported while the session is built.
pub use tackle_container::LaunchStep;
/// What [`prune_containers`] removed, left and failed to remove.
pub use tackle_container::prune::Pruned as PrunedContainers;
/// The container flags of the command line (`--container`, `--container-workdir`,
/// `--mount-workspace`, `--tackle-binary`, `--keep-container`), for
/// [`SessionBuilder::container`](crate::SessionBuilder::container).
pub use tackle_container::settings::ContainerFlags;

/// Removes the containers Tackle started whose session has ended (`tackle containers
/// prune`); `kept_too` removes those started with `--keep-container` as well
/// (docs/containers.md).
pub async fn prune_containers(kept_too: bool) -> Result<PrunedContainers, ContainerError> {
    let engine = Engine::connect().await?;
    tackle_container::prune::prune(&engine, kept_too).await
}

/// What the builder was asked for.
pub(crate) struct ContainerStart {
    pub(crate) flags: ContainerFlags,
    pub(crate) progress: Arc<dyn Fn(LaunchStep) + Send + Sync>,
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
        let mut section: ContainerSection = config.section("container")?;
        narrow_limits(config, &mut section, notice)?;
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

/// The workspace's `memory`, `cpus` and `pids_limit` count only where they are below the
/// user's (or the user set none): a cloned repository may tighten its container, never loosen
/// it. `section` holds the user's values (the merge leaves `Narrowing` keys out).
fn narrow_limits(config: &Config, section: &mut ContainerSection, notice: &Notice) -> Result<(), BuildError> {
    let mut notices = Vec::new();
    let user_memory = section.memory.as_deref().map(parse_memory).transpose()?;
    let lower_memory =
        |theirs: &String| parse_memory(theirs).is_ok_and(|bytes| user_memory.is_none_or(|user| bytes <= user));
    if let Some(memory) = config.narrowing("container.memory", lower_memory, &mut notices)? {
        section.memory = Some(memory);
    }
    let user_cpus = section.cpus;
    if let Some(cpus) = config.narrowing("container.cpus", |c: &f64| user_cpus.is_none_or(|u| *c <= u), &mut notices)? {
        section.cpus = Some(cpus);
    }
    let user_pids = section.pids_limit;
    let lower_pids = |p: &i64| user_pids.is_none_or(|u| *p <= u);
    if let Some(pids) = config.narrowing("container.pids_limit", lower_pids, &mut notices)? {
        section.pids_limit = Some(pids);
    }
    for line in notices {
        notice.say(&line);
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    fn narrowed(user: &str, workspace: &str) -> (ContainerSection, Vec<String>) {
        let config = Config::from_tables(user.parse().unwrap(), workspace.parse().unwrap(), false);
        let mut section: ContainerSection = config.section("container").unwrap();
        let said = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&said);
        let notice = Notice::new(move |line| sink.lock().unwrap().push(line.to_owned()));
        narrow_limits(&config, &mut section, &notice).unwrap();
        // The numbers' bounds (tackle_policy::config::rules::NUMBERS) speak when the file is loaded.
        let said = [config.notices(), &said.lock().unwrap()[..]].concat();
        (section, said)
    }

    #[test]
    fn a_workspace_may_lower_the_limits_never_raise_them() {
        let user = "[container]\nmemory = '2g'\ncpus = 2.0\npids_limit = 256\n";
        let (lower, said) = narrowed(user, "[container]\nmemory = '512m'\ncpus = 1.0\npids_limit = 64\n");
        assert_eq!((lower.memory.as_deref(), lower.cpus, lower.pids_limit), (Some("512m"), Some(1.0), Some(64)));
        assert!(said.is_empty(), "{said:?}");
        let (higher, said) = narrowed(user, "[container]\nmemory = '64g'\ncpus = 64.0\npids_limit = 100000\n");
        assert_eq!((higher.memory.as_deref(), higher.cpus, higher.pids_limit), (Some("2g"), Some(2.0), Some(256)));
        assert_eq!(said.len(), 3, "{said:?}");
        // No user limit: any workspace limit narrows.
        let (set, _) = narrowed("", "[container]\nmemory = '1g'\npids_limit = 10\n");
        assert_eq!((set.memory.as_deref(), set.pids_limit), (Some("1g"), Some(10)));
    }
}
