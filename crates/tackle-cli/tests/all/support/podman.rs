//! The Podman API service the container tests run against (docs/containers.md#tests):
//! `scripts/test.sh` starts it and exports its socket as `TACKLE_TEST_PODMAN_SOCKET`. Without
//! that variable the tests say they are skipped, unless `TACKLE_REQUIRE_PEERS` is set (as
//! `scripts/test.sh` and so `.ci/run` do): then a missing socket fails them, so a suite without
//! Podman cannot pass by skipping. With it, a socket that does not answer fails them. Requests are plain HTTP/1.0 over the socket, so the tests need no client library.

#![allow(dead_code)]

use std::io::{Read as _, Write as _};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

/// The variable `scripts/test.sh` sets.
pub const SOCKET_VAR: &str = "TACKLE_TEST_PODMAN_SOCKET";

/// The image the test script builds (shell, C library, /testbed/hello.py).
pub const IMAGE: &str = "localhost/tackle-test:1";

/// The engine's socket; `None` (with a note) when the test script did not start one and
/// `TACKLE_REQUIRE_PEERS` is unset; a panic when it is set.
pub fn socket() -> Option<PathBuf> {
    let Some(path) = std::env::var_os(SOCKET_VAR).filter(|v| !v.is_empty()) else {
        assert!(
            std::env::var_os("TACKLE_REQUIRE_PEERS").is_none(),
            "{SOCKET_VAR} is not set and TACKLE_REQUIRE_PEERS is: Podman is required (scripts/test.sh starts it)"
        );
        eprintln!("skipped: {SOCKET_VAR} is not set (scripts/test.sh starts Podman's service and sets it)");
        return None;
    };
    let path = PathBuf::from(path);
    let (status, body) = request(&path, "GET", "/_ping", None);
    assert_eq!(status, 200, "{SOCKET_VAR}={} does not answer a ping: {body}", path.display());
    Some(path)
}

/// One request; the status and the body.
pub fn request(socket: &std::path::Path, method: &str, path: &str, body: Option<&Value>) -> (u16, String) {
    let mut stream = UnixStream::connect(socket)
        .unwrap_or_else(|err| panic!("the Podman socket {} does not answer: {err}", socket.display()));
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let payload = body.map(Value::to_string).unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.0\r\nHost: podman\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        payload.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(payload.as_bytes()).unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let text = String::from_utf8_lossy(&response).into_owned();
    let status = text.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
    (status, body)
}

/// The ids of every container (running or not) whose label `key` is `value`.
pub fn labelled(socket: &std::path::Path, key: &str, value: &str) -> Vec<String> {
    let filters = format!(r#"{{"label":["{key}={value}"]}}"#);
    let encoded: String = filters
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b == b'.' || b == b'-' {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    let (status, body) = request(socket, "GET", &format!("/containers/json?all=true&filters={encoded}"), None);
    assert_eq!(status, 200, "{body}");
    let list: Vec<Value> = serde_json::from_str(&body).unwrap();
    list.iter().filter_map(|c| c["Id"].as_str().map(str::to_owned)).collect()
}

/// The containers a tackle process created.
pub fn created_by(socket: &std::path::Path, pid: u32) -> Vec<String> {
    labelled(socket, "tackle.pid", &pid.to_string())
}

/// Starts a container of [`IMAGE`] that sleeps, named `name` and labelled `label=1`; its id.
pub fn start_sleeper(socket: &std::path::Path, name: &str, label: &str) -> String {
    let _ = request(socket, "DELETE", &format!("/containers/{name}?force=true"), None);
    let body = serde_json::json!({
        "Image": IMAGE,
        "Cmd": ["sleep", "600"],
        "Labels": {label: "1"},
        "HostConfig": {"NetworkMode": "none"}
    });
    let (status, created) = request(socket, "POST", &format!("/containers/create?name={name}"), Some(&body));
    assert_eq!(status, 201, "{created}");
    let id = serde_json::from_str::<Value>(&created).unwrap()["Id"].as_str().unwrap().to_owned();
    let (status, started) = request(socket, "POST", &format!("/containers/{id}/start"), None);
    assert!(status == 204 || status == 304, "{started}");
    id
}

/// Whether the container is running.
pub fn running(socket: &std::path::Path, id: &str) -> bool {
    let (status, body) = request(socket, "GET", &format!("/containers/{id}/json"), None);
    status == 200 && serde_json::from_str::<Value>(&body).unwrap()["State"]["Running"] == Value::Bool(true)
}

/// Kills a container (SIGKILL).
pub fn kill(socket: &std::path::Path, id: &str) {
    let (status, body) = request(socket, "POST", &format!("/containers/{id}/kill"), None);
    assert_eq!(status, 204, "{body}");
}

/// Removes a container, running or not.
pub fn remove(socket: &std::path::Path, id: &str) {
    let _ = request(socket, "DELETE", &format!("/containers/{id}?force=true"), None);
}
