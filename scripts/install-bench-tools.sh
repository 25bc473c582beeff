#!/bin/sh
# Installs what the benchmark suite compares against and a machine may lack, under
# target/bench-tools/, at pinned versions, without touching the system: ripgrep (`rg`), the
# baseline of the `search` group (`File_grep` against `rg`). The suite runs this itself when
# the tool is missing (crates/context-pilot/benches/suite/search.rs), so the ratio is measured on a
# fresh machine too. Needs cargo (as the suite does) and access to crates.io. Safe to run
# again: nothing happens when the pinned version is already there.
set -eu

RIPGREP_VERSION=14.1.1

root=$(cd "$(dirname "$0")/.." && pwd)
prefix="$root/target/bench-tools"
rg="$prefix/bin/rg"

if [ -x "$rg" ] && [ "$("$rg" --version 2>/dev/null | head -n1)" = "ripgrep $RIPGREP_VERSION" ]; then
    echo "install-bench-tools.sh: ripgrep $RIPGREP_VERSION already in $prefix/bin"
    exit 0
fi

mkdir -p "$prefix"
# Its own build directory: the workspace's target/ keeps only the workspace's artifacts.
cargo install --locked --root "$prefix" --target-dir "$prefix/build" \
    ripgrep --version "$RIPGREP_VERSION"
rm -rf "$prefix/build"
echo "install-bench-tools.sh: installed ripgrep $RIPGREP_VERSION in $prefix/bin"
