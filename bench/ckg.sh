#!/usr/bin/env bash
# Side by side: the code index (`tackle ckg`, whole processes as a user runs them) and
# universal-ctags (`ctags -R --output-format=json`, the reference) on the same trees, and how
# far their definitions agree, per language (docs/ckg.md has the figures):
#   - cold index of _pytest and pip (pytest==9.2.0 and pip==26.3 from PyPI, in a virtualenv)
#     and of this repository's crates, each against ctags (issue 17: <= 6x ctags);
#   - on pip: a query with nothing changed (<= 20 ms; the query itself <= 1 ms), the refresh
#     after one file changed plus its query (<= 10% of the cold index), repo_map (<= 200 ms);
#   - agreement with ctags: Python (_pytest, pip), TypeScript (rxjs 7.8.1's sources, npm),
#     JavaScript (rxjs's ES modules), Rust (this repository, and tokio, serde_json, ignore and
#     clap_builder from the cargo registry at the versions Cargo.lock pins), C (tree-sitter's
#     runtime, BLAKE3's C code), C++ (Debian's googletest), Go (Debian's Go 1.19 sources),
#     Java (java.util from Debian's OpenJDK 17 sources).
# The corpora are installed once, pinned, into target/bench-ckg/ (and with apt); a run with
# them in place downloads nothing.
#
# Usage: bench/ckg.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=target/bench-ckg
mkdir -p "$OUT"

# ctags is a program: installed with apt. The C++, Go and Java corpora are Debian source
# packages, unpacked into $OUT/deb without installing them.
if ! command -v ctags >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq universal-ctags=5.9.20210829.0-1 >/dev/null
fi
unpack() {
  if [ ! -d "$OUT/deb/$1" ]; then
    mkdir -p "$OUT/deb"
    (cd "$OUT/deb" && apt-get download -qq "$1=$2" && dpkg-deb -x "$1"_*.deb "$1" && rm -f "$1"_*.deb)
  fi
}
unpack googletest 1.12.1-0.2
unpack golang-1.19-src 1.19.8-2
unpack openjdk-17-source 17.0.21.1+2-1~deb12u1

if ! "$OUT/venv/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("pytest") != "9.2.0" or m.version("pip") != "26.3")' 2>/dev/null; then
  python3 -m venv "$OUT/venv"
  "$OUT/venv/bin/pip" install --quiet --disable-pip-version-check 'pytest==9.2.0' 'pip==26.3'
fi
if [ "$(node -p "require('./$OUT/npm/node_modules/rxjs/package.json').version" 2>/dev/null)" != "7.8.1" ]; then
  npm install --prefix "$OUT/npm" --no-audit --no-fund --silent rxjs@7.8.1
fi
if [ ! -d "$OUT/jdk/java.base/java/util" ]; then
  mkdir -p "$OUT/jdk"
  unzip -q -o "$OUT/deb/openjdk-17-source/usr/lib/jvm/openjdk-17/lib/src.zip" 'java.base/java/util/*' -d "$OUT/jdk"
fi

cargo build --release --quiet -p tackle-cli
cargo build --release --quiet -p tackle-ckg --example ctags_agreement
exec python3 bench/ckg.py target/release/tackle target/release/examples/ctags_agreement "$OUT" "${1:-5}"
