#!/usr/bin/env bash
# Packs a built context-pilot binary for every channel, into OUTDIR:
# - npm: context-pilot-VERSION.tgz (the launcher, with the platform package as an optional
#   dependency) and context-pilot-linux-x64-VERSION.tgz (@context-pilot/linux-x64: the binary,
#   os/cpu set);
# - PyPI: context_pilot-VERSION-py3-none-manylinux2014_x86_64.whl (the binary in the
#   environment's bin/).
#
#   bash scripts/package.sh BINARY OUTDIR
#
# The release script runs it on the glibc 2.17 release binary; CI on the binary its tests
# built, to install and check the packages without a second build. Needs node/npm and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=$(mkdir -p "$2" && realpath "$2")
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# Without debug info (a debug build's is nine tenths of it); the symbols stay.
binary="$stage/native"
cp "$1" "$binary"
command -v strip >/dev/null 2>&1 && strip --strip-debug "$binary"

fill() { # template dir → staged dir, with @VERSION@ filled in
  cp -R "$1" "$2"
  sed -i "s/@VERSION@/$version/g" "$2/package.json"
}

fill packaging/npm/linux-x64 "$stage/linux-x64"
mkdir -p "$stage/linux-x64/bin" "$stage/linux-x64/share/context-pilot"
cp "$binary" "$stage/linux-x64/bin/context-pilot"
chmod 755 "$stage/linux-x64/bin/context-pilot"
echo npm > "$stage/linux-x64/share/context-pilot/install-channel"
fill packaging/npm/context-pilot "$stage/context-pilot"

(cd "$out" && npm pack --silent "$stage/linux-x64" "$stage/context-pilot" >/dev/null)
python3 packaging/wheel/build_wheel.py "$binary" "$version" "$out" >/dev/null
echo "package.sh: packed $1 (version $version) into $out:"
ls -1 "$out" | sed 's/^/  /'
