//! `--container` and `tackle containers`: the container flags handed to the session builder
//! (with start-up progress on a terminal, and Ctrl-C during start-up removing what was
//! created), `containers prune`, and `containers hold`, the main process of the containers
//! Tackle creates (docs/containers.md).

use std::io::IsTerminal as _;
use std::path::Path;
use std::process::ExitCode;

use tackle::ContainerFlags;
use tackle::SessionBuilder;

use crate::cli::{ContainerArgs, PruneArgs};
use crate::exit::{CommandResult, Failure, OK};
use crate::signals;

/// The builder with the container of `args` (or of `[container]`), unless `--no-container`.
pub fn apply(builder: SessionBuilder, args: &ContainerArgs, workspace: &Path) -> SessionBuilder {
    if args.no_container {
        return builder;
    }
    let flags = ContainerFlags {
        target: args.container.clone(),
        workdir: args.container_workdir.clone(),
        mount_workspace: args.mount_workspace.then(|| workspace.to_path_buf()),
        binary: args.tackle_binary.clone(),
        keep: args.keep_container,
    };
    let terminal = std::io::stderr().is_terminal();
    let progress = move |step: tackle::LaunchStep| {
        if terminal {
            diagln!("tackle: {step}…");
        }
    };
    builder.container(flags, progress, signals::interrupt().token)
}

/// `tackle containers prune`.
pub async fn prune(args: PruneArgs) -> CommandResult {
    let pruned = tackle::prune_containers(args.all).await.map_err(|err| Failure::failed(err.to_string()))?;
    let mut out = String::new();
    for name in &pruned.removed {
        out.push_str(&format!("removed {name}\n"));
    }
    for name in &pruned.left {
        out.push_str(&format!("left {name} (its session still runs, or it is kept: --all removes kept ones)\n"));
    }
    if out.is_empty() && pruned.failed.is_empty() {
        out.push_str("no Tackle containers\n");
    }
    crate::stdout::print(&out)?;
    if pruned.failed.is_empty() {
        return Ok(ExitCode::from(OK));
    }
    let failed: Vec<String> = pruned.failed.iter().map(|(name, reason)| format!("{name} ({reason})")).collect();
    Err(Failure::failed(format!("could not remove {}; run `tackle containers prune` again", failed.join(", "))))
}

/// `tackle containers hold`: waits for SIGTERM, SIGINT or SIGHUP (the engine's stop).
pub async fn hold() -> CommandResult {
    signals::terminated().await;
    Ok(ExitCode::from(OK))
}
