#!/usr/bin/env bash
# Builds the container tests' images offline (docs/containers.md#tests), with `podman import`
# of root filesystems made from Debian's packages on this machine: busybox-static and
# bash-static for the shell, libc6's loader and libraries for a tackle built here.
#   localhost/tackle-test:1         the shell, the C library, /testbed/hello.py (workdir /testbed)
#   localhost/tackle-test-nosh:1    the C library, no /bin/sh
#   localhost/tackle-test-musl:1    the shell, no glibc loader (as in an Alpine image)
#   localhost/tackle-test-arm64:1   the first one, labelled arm64
#   localhost/tackle-test-git:1     the first one with git, /testbed a repository (the run's diff)
# Needs CONTAINERS_CONF as scripts/test.sh sets it. Idempotent: the images are replaced.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

libs() {
  local root=$1
  mkdir -p "$root/lib/x86_64-linux-gnu" "$root/lib64"
  for lib in libc.so.6 libm.so.6 libgcc_s.so.1; do
    cp -L "/lib/x86_64-linux-gnu/$lib" "$root/lib/x86_64-linux-gnu/"
  done
  cp -L /lib64/ld-linux-x86-64.so.2 "$root/lib64/"
}

shell() {
  local root=$1
  mkdir -p "$root/bin" "$root/tmp" "$root/etc"
  chmod 1777 "$root/tmp"
  cp /bin/busybox "$root/bin/busybox"
  for applet in sh cat ls echo grep sed sleep mkdir rm mv cp test env head tail wc true false kill ps id mktemp sort; do
    ln -sf busybox "$root/bin/$applet"
  done
  cp /bin/bash-static "$root/bin/bash"
  echo 'root:x:0:0:root:/root:/bin/sh' >"$root/etc/passwd"
}

testbed() {
  local root=$1
  mkdir -p "$root/testbed"
  printf 'def greet():\n    return "hello"\n' >"$root/testbed/hello.py"
}

import() {
  local root=$1 name=$2
  shift 2
  tar -C "$root" -cf "$work/$name.tar" .
  podman import -q "$@" --change 'WORKDIR /testbed' --change 'ENV PATH=/bin' --change 'CMD ["/bin/sh"]' \
    "$work/$name.tar" "localhost/$name:1" >/dev/null
}

# git and its libraries from this machine, and /testbed committed as a repository.
with_git() {
  local root=$1
  cp /usr/bin/git "$root/bin/git"
  for lib in libpcre2-8.so.0 libz.so.1; do
    cp -L "/lib/x86_64-linux-gnu/$lib" "$root/lib/x86_64-linux-gnu/"
  done
  git -C "$root/testbed" init -q
  git -C "$root/testbed" add -A
  git -C "$root/testbed" -c user.name=test -c user.email=test@example.com commit -qm start
}

full="$work/full" nosh="$work/nosh" musl="$work/musl" withgit="$work/git"
shell "$full" && libs "$full" && testbed "$full"
shell "$withgit" && libs "$withgit" && testbed "$withgit" && with_git "$withgit"
libs "$nosh" && testbed "$nosh"
shell "$musl" && testbed "$musl"
import "$full" tackle-test
import "$nosh" tackle-test-nosh
import "$musl" tackle-test-musl
import "$full" tackle-test-arm64 --arch arm64
import "$withgit" tackle-test-git
echo "container test images: localhost/tackle-test{,-nosh,-musl,-arm64,-git}:1"
