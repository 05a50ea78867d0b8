//! `tackle containers prune`: removes the containers Tackle created whose session is over
//! (the tackle that created them is no longer running on this machine), kept ones only when
//! asked. A container Tackle did not create carries no `tackle.created-by` label and is never
//! touched. A container inherits its image's labels, so an image may hand that label to
//! containers Tackle never made: a container whose image carries it is left alone.

use std::collections::HashMap;

use bollard::query_parameters::{ListContainersOptions, RemoveContainerOptions};

use crate::engine::{Engine, in_words, is_not_found};
use crate::{ContainerError, labels};

/// What prune did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Pruned {
    /// The names of the containers removed.
    pub removed: Vec<String>,
    /// Containers left because their session still runs or they are kept.
    pub left: Vec<String>,
    /// Containers that could not be removed, with the engine's reason.
    pub failed: Vec<(String, String)>,
}

/// Removes leftovers; `kept_too` also removes containers kept with `keep`.
pub async fn prune(engine: &Engine, kept_too: bool) -> Result<Pruned, ContainerError> {
    let filters: HashMap<String, Vec<String>> =
        [("label".to_owned(), vec![format!("{}=tackle", labels::CREATED_BY)])].into_iter().collect();
    let found = list_with_retry(engine, filters).await.map_err(|err| {
        let mut failure = engine.failed("list the containers", &err);
        if let (ContainerError::Engine { detail, .. }, true) = (&mut failure, vanished_while_listing(&err)) {
            // Still there after the retries: a container Podman left half-removed, which its
            // list stumbles on until it is removed by hand.
            detail.push_str(
                "; a container the engine left half-removed blocks the list: `podman ps -a` shows it as Removing, \
                 `podman rm -f ID` clears it",
            );
        }
        failure
    })?;
    let mut pruned = Pruned::default();
    for summary in found {
        let Some(id) = summary.id.clone() else { continue };
        let name = summary
            .names
            .as_ref()
            .and_then(|names| names.first())
            .map_or_else(|| id.chars().take(12).collect(), |n| n.trim_start_matches('/').to_owned());
        let labels = summary.labels.clone().unwrap_or_default();
        let kept = labels.get(labels::KEEP).is_some_and(|v| v == "true");
        let alive = labels.get(labels::PID).and_then(|pid| pid.parse::<u32>().ok()).is_some_and(is_tackle_alive);
        if alive || (kept && !kept_too) || !image_leaves_the_label_to_us(engine, &summary).await {
            pruned.left.push(name);
            continue;
        }
        let options = RemoveContainerOptions { force: true, v: true, ..Default::default() };
        match engine.docker.remove_container(&id, Some(options)).await {
            Ok(()) => pruned.removed.push(name),
            // Gone meanwhile, or its own session is removing it right now.
            Err(err) if is_not_found(&err) || is_conflict(&err) => {}
            Err(err) => pruned.failed.push((name, in_words(&err))),
        }
    }
    Ok(pruned)
}

/// Lists Tackle's containers. Podman answers 500 "container not known" when a container is
/// removed while it builds the list (another session ending at that moment); the list is asked
/// again a few times before that counts as a failure.
async fn list_with_retry(
    engine: &Engine,
    filters: HashMap<String, Vec<String>>,
) -> Result<Vec<bollard::models::ContainerSummary>, bollard::errors::Error> {
    const ATTEMPTS: u32 = 5;
    let mut attempt = 1;
    loop {
        let options = ListContainersOptions { all: true, filters: Some(filters.clone()), ..Default::default() };
        match engine.docker.list_containers(Some(options)).await {
            Err(err) if attempt < ATTEMPTS && vanished_while_listing(&err) => {
                attempt += 1;
                tokio::time::sleep(std::time::Duration::from_millis(50 * u64::from(attempt))).await;
            }
            result => return result,
        }
    }
}

/// Whether a list failed only because one of the containers went away meanwhile.
fn vanished_while_listing(err: &bollard::errors::Error) -> bool {
    match err {
        bollard::errors::Error::DockerResponseServerError { status_code: 500, message } => {
            message.contains("container not known") || message.contains("no such container")
        }
        _ => false,
    }
}

/// Whether the container's image does not carry `tackle.created-by` (so the container's label
/// is the one Tackle set when it created it). An image that cannot be inspected counts as one
/// that does.
async fn image_leaves_the_label_to_us(engine: &Engine, summary: &bollard::models::ContainerSummary) -> bool {
    let Some(image) = summary.image_id.as_deref().or(summary.image.as_deref()) else { return false };
    match engine.docker.inspect_image(image).await {
        Ok(info) => {
            let labels = info.config.and_then(|config| config.labels).unwrap_or_default();
            !labels.contains_key(labels::CREATED_BY)
        }
        Err(_) => false,
    }
}

/// Whether the engine said a removal is already in progress (Docker answers 409; Podman may
/// answer 500 with that message).
fn is_conflict(err: &bollard::errors::Error) -> bool {
    match err {
        bollard::errors::Error::DockerResponseServerError { status_code: 409, .. } => true,
        bollard::errors::Error::DockerResponseServerError { message, .. } => {
            message.contains("in progress") || message.contains("being removed")
        }
        _ => false,
    }
}

/// Whether `pid` is a running tackle on this machine.
fn is_tackle_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .ok()
        .and_then(|cmdline| cmdline.split(|b| *b == 0).next().map(|arg0| arg0.ends_with(b"tackle")))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::vanished_while_listing;
    use bollard::errors::Error;

    fn server_error(status_code: u16, message: &str) -> Error {
        Error::DockerResponseServerError { status_code, message: message.to_owned() }
    }

    #[test]
    fn only_a_container_vanishing_mid_list_is_asked_again() {
        assert!(vanished_while_listing(&server_error(
            500,
            "getting container from store \"58cf\": container not known"
        )));
        assert!(!vanished_while_listing(&server_error(500, "database is locked")));
        assert!(!vanished_while_listing(&server_error(404, "container not known")));
    }
}
