#!/usr/bin/env bash
# The test command of the README: installs what the tests need, then runs the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-test-deps.sh
# The MCP peer tests fail, rather than skip, when a peer is missing, and the container tests
# when Podman is (no socket below).
export TACKLE_REQUIRE_PEERS=1

# The container tests talk to Podman's API service on a socket in a temporary directory,
# started here and stopped after the tests (docs/containers.md#tests). These machines use
# hybrid cgroups: runc, cgroupfs and explicit ulimits (crun and the default ulimits fail).
if command -v podman >/dev/null 2>&1; then
  PODMAN_DIR=$(mktemp -d)
  cat >"$PODMAN_DIR/containers.conf" <<'CONF'
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
CONF
  export CONTAINERS_CONF="$PODMAN_DIR/containers.conf"
  podman system service --time=0 "unix://$PODMAN_DIR/podman.sock" >"$PODMAN_DIR/service.log" 2>&1 &
  PODMAN_PID=$!
  trap 'kill "$PODMAN_PID" 2>/dev/null; wait "$PODMAN_PID" 2>/dev/null; rm -rf "$PODMAN_DIR"' EXIT
  for _ in $(seq 100); do [ -S "$PODMAN_DIR/podman.sock" ] && break; sleep 0.1; done
  # The container tests fail, rather than skip, when this socket does not answer.
  export TACKLE_TEST_PODMAN_SOCKET="$PODMAN_DIR/podman.sock"
  scripts/container-test-images.sh
fi

status=0
cargo nextest run --workspace --no-fail-fast "$@" || status=$?
# nextest does not run doctests: the front door's examples in its docs (crates/tackle/src/lib.rs)
# are part of the contract (docs/library.md).
if [[ $# -eq 0 ]]; then
  cargo test --doc --workspace || status=$?
fi
exit "$status"
