//! `[container]` and the command-line flags, resolved into one [`ContainerSpec`].
//!
//! Which keys the workspace's `tackle.toml` may set is the configuration's rule table
//! (`crates/tackle-policy/src/config/rules.rs`, docs/configuration.md): `image`, `workdir`,
//! `keep`, `memory`, `cpus` and `pids_limit` may come from it; `mounts`, `network`, `env` and
//! `binary`, which weaken the container's isolation or choose what runs, only from the user's
//! config and flags.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use crate::ContainerError;

/// `[container]` as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ContainerSection {
    /// The image to create the container from, or a running container's id or name.
    pub image: Option<String>,
    /// The workspace inside the container (default: the image's working directory, else `/`).
    pub workdir: Option<String>,
    /// Keep the container at the end of the session.
    pub keep: Option<bool>,
    /// Memory limit: bytes, or a number with `k`, `m` or `g`.
    pub memory: Option<String>,
    /// CPUs (fractions allowed).
    pub cpus: Option<f64>,
    /// The most processes at once.
    pub pids_limit: Option<i64>,
    /// Bind mounts, `HOST:CONTAINER[:ro]` (user config only).
    pub mounts: Vec<String>,
    /// The network mode (default `none`; user config only).
    pub network: Option<String>,
    /// Environment of the tools inside (user config only).
    pub env: BTreeMap<String, String>,
    /// The tackle binary to put in (user config only; default: the running one).
    pub binary: Option<PathBuf>,
}

/// The flags of `tackle run`, `tools call|batch` and `mcp serve` about containers.
#[derive(Debug, Clone, Default)]
pub struct ContainerFlags {
    /// `--container IMAGE|ID`.
    pub target: Option<String>,
    /// `--container-workdir`.
    pub workdir: Option<String>,
    /// `--mount-workspace`: the host workspace, mounted at the workdir.
    pub mount_workspace: Option<PathBuf>,
    /// `--tackle-binary`.
    pub binary: Option<PathBuf>,
    /// `--keep-container`.
    pub keep: bool,
}

/// Everything needed to start (or attach to) the container of one session.
#[derive(Debug, Clone)]
pub struct ContainerSpec {
    /// An image, or a running container's id or name.
    pub target: String,
    /// The workspace inside; `None`: the image's working directory, else `/`.
    pub workdir: Option<String>,
    pub keep: bool,
    /// Bytes.
    pub memory: Option<i64>,
    /// Billionths of a CPU.
    pub nano_cpus: Option<i64>,
    pub pids_limit: Option<i64>,
    /// Binds in the engine's `HOST:CONTAINER[:ro]` form.
    pub mounts: Vec<String>,
    pub network: String,
    pub env: BTreeMap<String, String>,
    /// The binary to put in.
    pub binary: PathBuf,
    /// The host workspace to mount at the workdir.
    pub mount_workspace: Option<PathBuf>,
    /// The host session's `Read(...)` / `Edit(...)` deny rules, given to the tackle inside as
    /// `--deny` (resolved there against the container's workspace): the file tools run inside,
    /// so only it can hold them (docs/containers.md). Never from `[container]`: the session
    /// builder fills it in.
    pub deny_rules: Vec<String>,
    /// Whether `target` may name a running container to attach to: not when it came from the
    /// workspace's `tackle.toml` alone (a cloned repository could otherwise point the tools at
    /// any container of the machine, with whatever it mounts). The session builder decides.
    pub may_attach: bool,
}

/// The workdir used with `--mount-workspace` when none is given.
pub const MOUNTED_WORKDIR: &str = "/workspace";

impl ContainerSpec {
    /// The spec from the merged `[container]` section and the flags; `None` when neither names
    /// an image or container.
    pub fn resolve(section: ContainerSection, flags: ContainerFlags) -> Result<Option<ContainerSpec>, ContainerError> {
        let Some(target) = flags.target.or(section.image).filter(|t| !t.trim().is_empty()) else {
            if flags.mount_workspace.is_some() {
                return Err(ContainerError::Settings(
                    "--mount-workspace needs a container: add --container IMAGE (or [container] image)".to_owned(),
                ));
            }
            return Ok(None);
        };
        let binary = match flags.binary.or(section.binary) {
            Some(path) => path,
            None => std::env::current_exe().map_err(|err| {
                ContainerError::Settings(format!(
                    "cannot find the running tackle binary to put into the container ({err}); name one with --tackle-binary"
                ))
            })?,
        };
        let mut workdir = flags.workdir.or(section.workdir);
        if flags.mount_workspace.is_some() && workdir.is_none() {
            workdir = Some(MOUNTED_WORKDIR.to_owned());
        }
        if let Some(dir) = &workdir {
            check_workdir(dir, flags.mount_workspace.is_some())?;
        }
        let nano_cpus = match section.cpus {
            Some(cpus) if cpus.is_finite() && cpus > 0.0 && cpus <= 1024.0 => Some((cpus * 1e9).round() as i64),
            Some(cpus) => {
                return Err(ContainerError::Settings(format!(
                    "[container] cpus = {cpus} is not a number of CPUs between 0 and 1024"
                )));
            }
            None => None,
        };
        if let Some(limit) = section.pids_limit
            && limit < 1
        {
            return Err(ContainerError::Settings(format!("[container] pids_limit = {limit} must be at least 1")));
        }
        for mount in &section.mounts {
            check_mount(mount)?;
        }
        Ok(Some(ContainerSpec {
            target,
            workdir,
            keep: flags.keep || section.keep.unwrap_or(false),
            memory: section.memory.as_deref().map(parse_memory).transpose()?,
            nano_cpus,
            pids_limit: section.pids_limit,
            mounts: section.mounts,
            network: section.network.unwrap_or_else(|| "none".to_owned()),
            env: section.env,
            binary,
            mount_workspace: flags.mount_workspace,
            deny_rules: Vec::new(),
            may_attach: true,
        }))
    }
}

/// A workdir must be a plain absolute path (it may come from the workspace's `tackle.toml`):
/// no `.` or `..`, no empty component, no control character, no `:` or `,` an engine could read
/// as options; a mounted workspace may not cover the whole container nor the tackle binary.
fn check_workdir(dir: &str, mounted: bool) -> Result<(), ContainerError> {
    let refuse = |why: &str| {
        Err(ContainerError::Settings(format!(
            "[container] workdir '{}' {why}; name an absolute path such as /testbed",
            dir.escape_debug()
        )))
    };
    if !dir.starts_with('/') {
        return refuse("must be an absolute path inside the container");
    }
    if dir.chars().any(|c| c.is_control() || c == ':' || c == ',') {
        return refuse("may not hold a control character, ':' or ','");
    }
    let parts: Vec<&str> = dir[1..].split('/').collect();
    if dir != "/" && parts.iter().any(|p| p.is_empty() || *p == "." || *p == "..") {
        return refuse("must be a plain path, without '.', '..' or '//'");
    }
    if mounted && (dir == "/" || parts.first() == Some(&".tackle")) {
        return refuse("cannot take the mounted workspace (it would cover the system or the tackle binary)");
    }
    Ok(())
}

/// `512m`, `2g`, `1048576` → bytes.
pub fn parse_memory(text: &str) -> Result<i64, ContainerError> {
    let text = text.trim().to_ascii_lowercase();
    let (digits, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((at, _)) => text.split_at(at),
        None => (text.as_str(), ""),
    };
    let factor: i64 = match unit.trim_end_matches('b') {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        _ => 0,
    };
    match digits.parse::<i64>().ok().and_then(|n| n.checked_mul(factor)).filter(|n| *n > 0) {
        Some(bytes) if bytes >= 6 << 20 => Ok(bytes),
        _ => Err(ContainerError::Settings(format!(
            "[container] memory = '{text}' is not a size of at least 6m (write bytes or a number with k, m or g)"
        ))),
    }
}

fn check_mount(mount: &str) -> Result<(), ContainerError> {
    let parts: Vec<&str> = mount.split(':').collect();
    let ok = match parts.as_slice() {
        [host, inside] => host.starts_with('/') && inside.starts_with('/'),
        [host, inside, mode] => host.starts_with('/') && inside.starts_with('/') && matches!(*mode, "ro" | "rw"),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(ContainerError::Settings(format!(
            "[container] mounts entry '{mount}' is not HOST:CONTAINER[:ro] with absolute paths"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(target: &str) -> ContainerFlags {
        ContainerFlags {
            target: Some(target.to_owned()),
            binary: Some("/bin/true".into()),
            ..ContainerFlags::default()
        }
    }

    #[test]
    fn nothing_named_means_no_container() {
        assert!(ContainerSpec::resolve(ContainerSection::default(), ContainerFlags::default()).unwrap().is_none());
    }

    #[test]
    fn the_flag_wins_over_the_section_and_network_defaults_to_none() {
        let section = ContainerSection { image: Some("a".into()), memory: Some("512m".into()), ..Default::default() };
        let spec = ContainerSpec::resolve(section, flags("b")).unwrap().unwrap();
        assert_eq!(spec.target, "b");
        assert_eq!(spec.network, "none");
        assert_eq!(spec.memory, Some(512 << 20));
    }

    #[test]
    fn bad_values_are_refused_with_the_key() {
        for section in [
            ContainerSection { memory: Some("lots".into()), ..Default::default() },
            ContainerSection { cpus: Some(-1.0), ..Default::default() },
            ContainerSection { pids_limit: Some(0), ..Default::default() },
            ContainerSection { mounts: vec!["relative:/x".into()], ..Default::default() },
            ContainerSection { workdir: Some("testbed".into()), ..Default::default() },
        ] {
            let err = ContainerSpec::resolve(section, flags("img")).unwrap_err().to_string();
            assert!(err.contains("[container]"), "{err}");
        }
    }

    #[test]
    fn a_workdir_is_a_plain_absolute_path_and_a_mount_covers_neither_root_nor_binary() {
        let resolve = |dir: &str, mounted: bool| {
            let section = ContainerSection { workdir: Some(dir.into()), ..Default::default() };
            let flags = ContainerFlags { mount_workspace: mounted.then(|| "/tmp".into()), ..flags("img") };
            ContainerSpec::resolve(section, flags).map(|spec| spec.map(|s| s.workdir))
        };
        for (dir, mounted) in [
            ("/w:/etc", true),
            ("/w,ro", false),
            ("/w/../etc", true),
            ("/w//x", false),
            ("/w\n", false),
            ("/", true),
            ("/.tackle", true),
            ("/.tackle/bin", true),
        ] {
            let dir = dir.replace("\\n", "\n");
            let err = resolve(&dir, mounted).unwrap_err().to_string();
            assert!(err.contains("[container] workdir"), "{dir}: {err}");
        }
        assert_eq!(resolve("/testbed/src", true).unwrap().unwrap(), Some("/testbed/src".to_owned()));
        assert_eq!(resolve("/", false).unwrap().unwrap(), Some("/".to_owned()));
    }

    #[test]
    fn mount_workspace_without_a_container_is_refused() {
        let flags = ContainerFlags { mount_workspace: Some("/tmp".into()), ..ContainerFlags::default() };
        let err = ContainerSpec::resolve(ContainerSection::default(), flags).unwrap_err().to_string();
        assert!(err.contains("--container"), "{err}");
    }
}
