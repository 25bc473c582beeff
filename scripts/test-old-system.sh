#!/usr/bin/env bash
# The binary on an old system with nothing but what Debian puts in a minimal root: Debian 11
# (bullseye: glibc 2.31, the oldest Debian the package mirrors still serve) made by mmdebstrap
# (essential packages and git; no compiler, no Rust, no Python, no Node), kept under
# target/old-system/ so it is made once. In it (chroot, in a mount and PID namespace of its
# own, so no process outlives the check), the binary runs `--version`, `doctor`, `trust` and
# `hook stop` on a small project: a red edit is held with its failing test, the fix lets the
# agent stop, and the tests ran in the project's directory (a console's spawn with a cwd).
#
# Each binary runs twice: as linked, and as a copy in which the glibc functions newer than
# 2.17 that it looks for (std's weak references, and the console server's lookup of
# posix_spawn_file_actions_addchdir_np) are renamed to names no glibc has, so it runs as on
# glibc 2.17, where they are absent, and std and the console server take their fallbacks
# (fork and exec for a spawn with a cwd).
#
#   bash scripts/test-old-system.sh [BINARY...]
#   bash scripts/test-old-system.sh --prepare   # only zig and the root (scripts/test.sh runs
#                                               # this while the tests build)
#
# Without arguments: the debug binary the tests built, linked again for glibc 2.17 (the same
# zig link as the release build, scripts/zig-cc.sh: seconds, where an optimized build would
# take many minutes), and the release tarball's binary when scripts/release.sh made one
# (target/dist). Needs root (chroot); otherwise it says so and checks nothing, except under
# CI, where that fails.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
say() { printf 'test-old-system.sh: %s\n' "$*"; }
fail() { say "FAILED: $*" >&2; exit 1; }
started=$(date +%s)

if [ "$(id -u)" -ne 0 ]; then
  [ -n "${CI:-}" ] && fail "needs root (chroot), and CI runs as root"
  say "skipped: needs root (chroot)"
  exit 0
fi
for tool in readelf unshare chroot /usr/bin/python3; do
  command -v "$tool" >/dev/null 2>&1 || fail "$tool is needed"
done
. scripts/glibc-floor.sh

# The root, made once.
suite=bullseye
system="$root/target/old-system/$suite"
make_root() {
  recipe="mmdebstrap --variant=essential --include=git $suite (no man, doc or locale files)"
  if [ "$(cat "$system/.cp-recipe" 2>/dev/null)" != "$recipe" ]; then
    if ! command -v mmdebstrap >/dev/null 2>&1; then
      say "installing mmdebstrap with apt-get"
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq
      apt-get install -y -qq mmdebstrap >/dev/null
    fi
    say "making the Debian $suite root in $system"
    rm -rf "$system" "$system.partial"
    mkdir -p "$(dirname "$system")"
    t=$(date +%s)
    mmdebstrap --quiet --variant=essential --include=git \
      --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
      --dpkgopt='path-exclude=/usr/share/locale/*' "$suite" "$system.partial"
    printf '%s\n' "$recipe" > "$system.partial/.cp-recipe"
    mv "$system.partial" "$system"
    say "made the root in $(($(date +%s) - t)) s ($(du -sh "$system" | cut -f1))"
  fi
}

if [ "${1:-}" = --prepare ]; then
  glibc_floor_zig
  make_root
  say "prepared in $(($(date +%s) - started)) s"
  exit 0
fi

# 1. The binaries.
work=$(mktemp -d /tmp/cp-old-system.XXXXXX)
trap 'rm -rf "$work"' EXIT
binaries=()
if [ $# -gt 0 ]; then
  for b in "$@"; do binaries+=("$(realpath "$b")"); done
else
  [ -x target/debug/context-pilot ] || fail "no target/debug/context-pilot (build it first)"
  glibc_floor_zig
  # Only the binary crate is compiled again, with zig as its linker; the libraries are the
  # tests' own. (Cargo links it its usual way again at the next build.)
  cargo rustc --quiet -p context-pilot --bin context-pilot -- -C "linker=$root/scripts/zig-cc.sh"
  cp target/debug/context-pilot "$work/context-pilot-debug"
  binaries+=("$work/context-pilot-debug")
  tarball=$(ls target/dist/context-pilot-*-x86_64-linux-gnu.tar.gz 2>/dev/null | tail -n1 || true)
  if [ -n "$tarball" ]; then
    mkdir -p "$work/release"
    tar -C "$work/release" -xzf "$tarball"
    binaries+=("$(ls "$work"/release/*/bin/context-pilot)")
  else
    say "no release tarball in target/dist (scripts/release.sh makes one): the debug binary only"
  fi
fi
for b in "${binaries[@]}"; do
  glibc_floor_check "$b"
done

# 2. The root.
make_root

glibc=$(chroot "$system" /bin/sh -c 'ls /lib/x86_64-linux-gnu/libc-*.so' | sed 's/.*libc-\(.*\)\.so/\1/')
for tool in cc gcc rustc cargo python3 node; do
  chroot "$system" /bin/sh -c "command -v $tool" >/dev/null && fail "the root has $tool"
done

# 3. As on glibc 2.17: a copy with the names of the newer functions it looks for renamed.
as_on_floor() { # BINARY COPY
  local names
  names=$(readelf --dyn-syms --wide "$1" | awk '$5 == "WEAK" && $7 == "UND" {print $8}' |
    grep -v '^_' || true)
  /usr/bin/python3 - "$1" "$2" posix_spawn_file_actions_addchdir_np $names <<'PY'
import subprocess, sys
src, dst, looked_up, *weak = sys.argv[1:]
data = bytearray(open(src, "rb").read())
def dynamic_names(path):
    out = subprocess.run(["readelf", "--dyn-syms", "--wide", path], capture_output=True,
                         text=True, check=True).stdout
    return [l.split()[7] for l in out.splitlines() if len(l.split()) >= 8 and l.split()[0][:-1].isdigit()]
before = dynamic_names(src)
# In the dynamic string table: each weak name, exactly.
sections = subprocess.run(["readelf", "--section-headers", "--wide", src], capture_output=True,
                          text=True, check=True).stdout
line = next(l for l in sections.splitlines() if " .dynstr " in l)
fields = line.split("]", 1)[1].split()
off, size = int(fields[3], 16), int(fields[4], 16)
renamed = {}
for name in weak:
    old = b"\0" + name.encode() + b"\0"
    new = b"\0Q" + name.encode()[1:] + b"\0"
    at = data.find(old, off - 1, off + size)
    if at < 0:
        sys.exit(f"{name} is not in .dynstr on its own")
    data[at:at + len(old)] = new
    renamed[name] = "Q" + name[1:]
# The console server's lookup by name: the C string anywhere.
old = looked_up.encode() + b"\0"
count = data.count(old)
if count == 0:
    sys.exit(f"no {looked_up} string to rename")
data = data.replace(old, b"Q" + old[1:])
open(dst, "wb").write(data)
after = dynamic_names(dst)
expected = [renamed.get(n, n) for n in before]
if after != expected:
    sys.exit("renaming changed other dynamic symbols: "
             + str([(a, b) for a, b in zip(expected, after) if a != b]))
print(f"renamed {len(renamed)} weak references and {count} looked-up name(s)")
PY
  chmod 755 "$2"
}

# 4. The checks, inside the root.
cat > "$system/cp-check.sh" <<'CHECK'
#!/bin/sh
# Runs inside the old root: BINARY; prints what each step gave, exits 1 on the first failure.
set -eu
cp=$1
fail() { echo "FAILED: $*" >&2; exit 1; }
export HOME=/root XDG_CONFIG_HOME=/tmp/cp-xdg PATH=/usr/bin:/bin
rm -rf /tmp/cp-xdg /tmp/app /tmp/test-runs.log
version=$("$cp" --version)
echo "--version: $version"
mkdir /tmp/app
cd /tmp/app
git init -q .
git config user.email old-system@context-pilot.invalid
git config user.name "old system"
mkdir .context-pilot
printf '{"checkpoint": {"tests": {"command": "sh test.sh"}}}\n' > .context-pilot/config.json
printf 'add() { echo $(($1 + $2)); }\n' > calc.sh
printf '%s\n' 'pwd >> /tmp/test-runs.log' '. ./calc.sh' 'echo 1..1' \
  'if [ "$(add 2 2)" = 4 ]; then echo "ok 1 - add"; else echo "not ok 1 - add"; exit 1; fi' \
  > test.sh
git add -A
git commit -qm init
"$cp" trust >/dev/null
doctor=$("$cp" doctor || true)
for line in "✓ Context Pilot" "✓ git: git version" "✓ bash: GNU bash" "✓ project is trusted" \
    "✓ tests: \`sh test.sh\`"; do
  printf '%s\n' "$doctor" | grep -qF "$line" || fail "doctor has no '$line': $doctor"
done
echo "doctor: $(printf '%s\n' "$doctor" | grep -c '✓') checks pass"
stop() { # STOP_HOOK_ACTIVE
  printf '{"session_id": "old", "cwd": "/tmp/app", "hook_event_name": "Stop", "stop_hook_active": %s}' "$1" |
    "$cp" hook stop
}
printf 'add() { echo $(($1 - $2)); }\n' > calc.sh
red=$(stop false)
case "$red" in
  *'"decision":"block"'*'Tests FAILED'*'failing: add'*) ;;
  *) fail "the red edit was not held with its failing test: $red" ;;
esac
printf 'add() { echo $(($1 + $2)); }\n' > calc.sh
green=$(stop true)
[ -z "$green" ] || fail "the fixed edit was held: $green"
[ "$(cat /tmp/test-runs.log)" = "$(printf '/tmp/app\n/tmp/app')" ] ||
  fail "the tests ran twice in /tmp/app, not: $(cat /tmp/test-runs.log)"
echo "hook stop: the red edit held (Tests FAILED, failing: add), the fix let it stop; both runs in /tmp/app"
CHECK
chmod 755 "$system/cp-check.sh"

in_root() { # BINARY (a path inside the root)
  unshare --mount --pid --fork --propagation private /bin/sh -c '
    set -e
    mount -t proc proc "$1/proc"
    mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$1/dev/pts"
    mount --bind "$1/dev/pts/ptmx" "$1/dev/ptmx"
    mount -t tmpfs tmpfs "$1/tmp"
    exec chroot "$1" /usr/bin/env -i /bin/sh /cp-check.sh "$2"
  ' sh "$system" "$1"
}

n=0
for b in "${binaries[@]}"; do
  n=$((n + 1))
  dir="$system/opt/cp-$n"
  rm -rf "$dir"
  mkdir -p "$dir/bin"
  cp "$b" "$dir/bin/context-pilot"
  # The release tarball's channel marker comes along.
  marker="$(dirname "$(dirname "$b")")/share"
  [ -f "$marker/context-pilot/install-channel" ] && cp -R "$marker" "$dir/"
  say "$b in Debian $suite (glibc $glibc):"
  in_root "/opt/cp-$n/bin/context-pilot" 2>&1 | sed 's/^/  /' ||
    fail "$b failed in the old root"
  as_on_floor "$b" "$dir/bin/context-pilot-floor" | sed 's/^/  /'
  say "$b with the functions glibc 2.17 lacks taken away:"
  in_root "/opt/cp-$n/bin/context-pilot-floor" 2>&1 | sed 's/^/  /' ||
    fail "$b failed in the old root as on glibc 2.17"
  rm -rf "$dir"
done
rm -f "$system/cp-check.sh"
say "all checks passed in $(($(date +%s) - started)) s"
