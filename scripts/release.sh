#!/usr/bin/env bash
# The release: builds every artifact into target/dist/, with a SHA256SUMS file:
# - context-pilot-VERSION-x86_64-linux-gnu.tar.gz: the release binary (bin/context-pilot) and
#   its install-channel marker (`release`), for unpacking by hand;
# - context-pilot-VERSION.tgz and context-pilot-linux-x64-VERSION.tgz: the npm launcher and its
#   platform package, and context_pilot-VERSION-py3-none-manylinux2014_x86_64.whl, all packed
#   from the same binary by scripts/package.sh.
#
#   bash scripts/release.sh
#
# The binary runs on glibc 2.17 or newer (manylinux2014's floor) and needs no other shared
# library: cargo builds it for x86_64-unknown-linux-gnu with zig cc as linker and C compiler
# (scripts/zig-cc.sh), aimed at that glibc. zig comes from PyPI (the `ziglang` package, pinned)
# into target/tools/ziglang; nothing is installed into the system. The script then reads the
# binary's version needs and dynamic section and fails when a symbol needs a newer glibc or a
# library outside glibc is needed, and prints what it found.
#
# Needs cargo, python3 with pip, node/npm (for npm pack), readelf and sha256sum.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
say() { printf 'release.sh: %s\n' "$*"; }
fail() { say "FAILED: $*" >&2; exit 1; }

triple=x86_64-unknown-linux-gnu
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)
target_dir=${CARGO_TARGET_DIR:-$root/target}
dist="$root/target/dist"
started=$(date +%s)

for tool in cargo npm readelf sha256sum; do
  command -v "$tool" >/dev/null 2>&1 || fail "$tool is needed"
done

# 1. The build, with zig from PyPI under target/tools (scripts/glibc-floor.sh).
. scripts/glibc-floor.sh
glibc_floor_zig
export CC_x86_64_unknown_linux_gnu="$root/scripts/zig-cc.sh"
export CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER="$root/scripts/zig-cc.sh"
say "cargo build --release --locked --target $triple -p context-pilot (glibc $glibc_floor)"
cargo build --release --locked --target "$triple" -p context-pilot
binary="$target_dir/$triple/release/context-pilot"
built=$(date +%s)

# 2. The checks: every glibc symbol version it needs is at most the floor, and every library
#    it needs is part of glibc.
glibc_floor_check "$binary"

# 3. The artifacts.
rm -rf "$dist"
mkdir -p "$dist"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
name="context-pilot-$version-x86_64-linux-gnu"
mkdir -p "$stage/$name/bin" "$stage/$name/share/context-pilot"
cp "$binary" "$stage/$name/bin/context-pilot"
echo release > "$stage/$name/share/context-pilot/install-channel"
cp README.md CHANGELOG.md "$stage/$name/"
tar -C "$stage" --owner=0 --group=0 --numeric-owner -czf "$dist/$name.tar.gz" "$name"
bash scripts/package.sh "$binary" "$dist" >/dev/null
(cd "$dist" && sha256sum -- * > SHA256SUMS)
say "built in $((built - started)) s, packed in $(($(date +%s) - built)) s; target/dist:"
(cd "$dist" && ls -l --time-style=+ | tail -n +2 | awk '{print "  " $5 "\t" $NF}')
