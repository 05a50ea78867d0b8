#!/usr/bin/env bash
# Installs what the test suite needs on a fresh machine (idempotent; a second run is quick).
# Each later part of Tackle adds its own pinned tools here: system packages with apt, MCP and
# LLM test peers from npm and PyPI into test-only directories.
set -euo pipefail
cd "$(dirname "$0")/.."

# cargo-nextest runs the suite; fall back to installing it when the machine lacks it.
if ! cargo nextest --version >/dev/null 2>&1; then
  cargo install --locked cargo-nextest
fi

# ripgrep: the grep and glob tools are tested against the real rg (same files, same matches).
if ! command -v rg >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ripgrep=13.0.0-4+b2 >/dev/null
fi

# bubblewrap: the process-sandbox tests (bash, background jobs) run commands inside it.
if ! command -v bwrap >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap=0.8.0-2+deb12u1 >/dev/null
fi

# jq: the Claude Code guard-hook test runs a PreToolUse script written as Claude Code's docs
# show it, which reads tool_input.command with jq.
if ! command -v jq >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq jq=1.6-2.1+deb12u1 >/dev/null
fi

# Podman with runc: the container tests (docs/containers.md#tests) run against Podman's
# Docker-compatible API service, which scripts/test.sh starts; busybox-static and bash-static
# make the test images offline (scripts/container-test-images.sh).
if ! command -v podman >/dev/null 2>&1 || ! command -v runc >/dev/null 2>&1 \
  || [ ! -x /bin/busybox ] || [ ! -x /bin/bash-static ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    podman=4.3.1+ds1-8+deb12u1+b3 runc=1.1.5+ds1-1+deb12u1 conmon=2.1.6+ds1-1 \
    golang-github-containers-common=0.50.1+ds1-4 \
    busybox-static=1:1.35.0-4+deb12u1+b1 bash-static=5.2.15-2+b13 >/dev/null
fi

# MCP peers for the interop tests (docs/mcp.md#tests): npm and PyPI packages, pinned.
scripts/install-mcp-peers.sh

# gptme 0.35.1, the reference for the text call formats' fence rules (tackle-calls'
# differential test), in a test-only virtualenv.
GPTME_VENV=.venv-test
if ! "$GPTME_VENV/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("gptme") != "0.35.1")' 2>/dev/null; then
  python3 -m venv "$GPTME_VENV"
  "$GPTME_VENV/bin/pip" install --quiet --disable-pip-version-check 'gptme==0.35.1' 'lxml==6.1.3'
fi

# PyYAML in the same virtualenv: the test that parses docs/scale-out.md's manifests.
if ! "$GPTME_VENV/bin/python" -c 'import yaml' 2>/dev/null; then
  "$GPTME_VENV/bin/pip" install --quiet --disable-pip-version-check 'PyYAML==6.0.3'
fi

# The official Kubernetes Python client in the same virtualenv: `tackle fleet k8s`'s manifests
# are deserialized into its API types (V1Job, V1ConfigMap) and must round-trip. 33.1.0 with
# python-dateutil 2.9 keeps gptme's requirement (dateutil < 3) satisfied.
if ! "$GPTME_VENV/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("kubernetes") != "33.1.0")' 2>/dev/null; then
  "$GPTME_VENV/bin/pip" install --quiet --disable-pip-version-check 'kubernetes==33.1.0' 'python-dateutil==2.9.0.post0'
fi

# nbformat in the same virtualenv: the notebook tests validate what notebook_edit writes
# (crates/tackle-tools/tests/all/notebooks.rs).
if ! "$GPTME_VENV/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("nbformat") != "5.10.4")' 2>/dev/null; then
  "$GPTME_VENV/bin/pip" install --quiet --disable-pip-version-check 'nbformat==5.10.4'
fi

# The third-party fake LLM server for the end-to-end `tackle run` check (docs/reference/providers.md#cross-checks),
# pinned, into a test-only directory.
AIMOCK_VERSION=1.43.0
AIMOCK_DIR=.test-deps/npm
if [ "$(node -p "require('./$AIMOCK_DIR/node_modules/@copilotkit/aimock/package.json').version" 2>/dev/null)" != "$AIMOCK_VERSION" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null
  fi
  mkdir -p "$AIMOCK_DIR"
  npm install --prefix "$AIMOCK_DIR" --no-audit --no-fund --silent "@copilotkit/aimock@$AIMOCK_VERSION"
fi

# The official OpenAI and Anthropic Python SDKs: the oracle for stream assembly
# (docs/reference/providers.md#cross-checks), pinned, in a test-only virtualenv.
LLM_VENV=.venv-llm
if ! "$LLM_VENV/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("openai") != "3.57.0" or m.version("anthropic") != "2.14.0")' 2>/dev/null; then
  python3 -m venv "$LLM_VENV"
  "$LLM_VENV/bin/pip" install --quiet --disable-pip-version-check 'openai==3.57.0' 'anthropic==2.14.0'
fi

# Harbor's ATIF validator, the oracle for `tackle replay --format atif` (docs/agent.md#atif-export):
# only the files of the pinned harbor wheel it needs (harbor/models/trajectories,
# harbor/utils/trajectory_validator.py, harbor/__init__.py and the wheel's metadata, which that
# __init__ reads), unpacked under .test-deps/harbor, so running it imports nothing else of
# harbor; its one dependency, pydantic, pinned in .venv-test. Run it as
# `PYTHONPATH=.test-deps/harbor .venv-test/bin/python -m harbor.utils.trajectory_validator FILE`.
HARBOR_VERSION=0.25.0
HARBOR_WHEEL_SHA256=51923ac567fc57b03279e93468b105f689628bcac2cd3d541d4e44aa5c0ec309
HARBOR_DIR=.test-deps/harbor
if ! "$GPTME_VENV/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("pydantic") != "2.14.4")' 2>/dev/null; then
  "$GPTME_VENV/bin/pip" install --quiet --disable-pip-version-check 'pydantic==2.14.4'
fi
if [ ! -f "$HARBOR_DIR/harbor-$HARBOR_VERSION.dist-info/METADATA" ]; then
  harbor_tmp=$(mktemp -d)
  "$GPTME_VENV/bin/pip" download --quiet --disable-pip-version-check --no-deps --python-version 3.12 \
    --only-binary=:all: --dest "$harbor_tmp" "harbor==$HARBOR_VERSION"
  harbor_wheel="$harbor_tmp/harbor-$HARBOR_VERSION-py3-none-any.whl"
  echo "$HARBOR_WHEEL_SHA256  $harbor_wheel" | sha256sum --check --quiet
  "$GPTME_VENV/bin/python" - "$harbor_wheel" "$harbor_tmp/unpacked" "$HARBOR_VERSION" <<'PY'
import sys
import zipfile

wheel, target, version = sys.argv[1:]
wanted = ("harbor/models/trajectories/", f"harbor-{version}.dist-info/")
with zipfile.ZipFile(wheel) as archive:
    names = [
        name
        for name in archive.namelist()
        if name.startswith(wanted) or name in ("harbor/__init__.py", "harbor/utils/trajectory_validator.py")
    ]
    archive.extractall(target, members=names)
PY
  rm -rf "$HARBOR_DIR"
  mkdir -p "$(dirname "$HARBOR_DIR")"
  mv "$harbor_tmp/unpacked" "$HARBOR_DIR"
  rm -rf "$harbor_tmp"
fi

# Ray, for `tackle fleet run --engine ray` (docs/scale-out.md#on-ray-engine-ray): the test starts a head
# and a worker node on 127.0.0.1 and talks to the Jobs REST API of its dashboard, pinned, in a
# test-only virtualenv.
RAY_VENV=.venv-ray
if ! "$RAY_VENV/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("ray") != "2.60.0")' 2>/dev/null; then
  python3 -m venv "$RAY_VENV"
  "$RAY_VENV/bin/pip" install --quiet --disable-pip-version-check 'ray[default]==2.60.0'
fi
