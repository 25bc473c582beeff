#!/usr/bin/env bash
# The packages end to end, as a person installs them: packs BINARY (default: the debug binary
# the tests built) with scripts/package.sh, publishes both npm packages to a local registry on
# loopback (verdaccio, installed under target/tools/verdaccio), then, as an ordinary user
# (cp-tests when run as root) with no cargo and no target/ on PATH:
# - npm: `npm install -g --prefix FRESH context-pilot` from that registry;
# - pip: the wheel into a fresh venv;
# and for each: `--version` says the channel, `doctor` runs, `init claude` writes hooks that name
# the native binary, and the Stop hook runs with no node (nor python) process in its tree
# (strace of every exec).
#
#   bash scripts/test-packages.sh [BINARY]
#   bash scripts/test-packages.sh --prepare   # only installs verdaccio (scripts/test.sh runs
#                                             # this while the tests build)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
say() { printf 'test-packages.sh: %s\n' "$*"; }
fail() { say "FAILED: $*" >&2; exit 1; }

# The local registry, installed once under target/tools.
verdaccio_dir="$root/target/tools/verdaccio"
install_verdaccio() {
  [ -x "$verdaccio_dir/node_modules/.bin/verdaccio" ] && return 0
  say "installing verdaccio under $verdaccio_dir"
  mkdir -p "$verdaccio_dir"
  printf '%s\n' '{"private": true, "dependencies": {"verdaccio": "5.33.0"},' \
    ' "overrides": {"node-fetch": "2.7.0"}}' > "$verdaccio_dir/package.json"
  npm install --prefix "$verdaccio_dir" --no-audit --no-fund --loglevel=error
}
if [ "${1:-}" = --prepare ]; then
  install_verdaccio
  exit 0
fi

binary=$(realpath "${1:-$root/target/debug/context-pilot}")
[ -x "$binary" ] || fail "no binary at $binary (build it first: cargo build -p context-pilot)"
for tool in npm node strace /usr/bin/python3; do
  command -v "$tool" >/dev/null 2>&1 || fail "$tool is needed"
done

work=$(mktemp -d /tmp/cp-packages.XXXXXX)
chmod 755 "$work"
registry_pid=
cleanup() {
  if [ -n "$registry_pid" ]; then
    kill "$registry_pid" 2>/dev/null || true
    wait "$registry_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# 1. The packages.
bash scripts/package.sh "$binary" "$work/dist" >/dev/null
chmod -R a+rX "$work/dist"

# 2. The registry, on loopback, with no uplink: only what is published here can be installed.
install_verdaccio
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url="http://127.0.0.1:$port/"
cat > "$work/verdaccio.yaml" <<YAML
storage: $work/storage
auth:
  htpasswd:
    file: $work/htpasswd
uplinks: {}
max_body_size: 200mb
packages:
  '**':
    access: \$all
    publish: \$authenticated
listen: 127.0.0.1:$port
log: { type: stdout, format: pretty, level: warn }
YAML
"$verdaccio_dir/node_modules/.bin/verdaccio" --config "$work/verdaccio.yaml" > "$work/verdaccio.log" 2>&1 &
registry_pid=$!
for _ in $(seq 1 120); do
  curl -fs "$url-/ping" >/dev/null 2>&1 && break
  kill -0 "$registry_pid" 2>/dev/null || fail "verdaccio exited: $(cat "$work/verdaccio.log")"
  sleep 0.5
done
curl -fs "$url-/ping" >/dev/null || fail "verdaccio does not answer on $url"
token=$(curl -fs -X PUT -H 'content-type: application/json' \
  -d '{"name": "cp-packages", "password": "cp-packages"}' \
  "${url}-/user/org.couchdb.user:cp-packages" |
  /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["token"])')
printf 'registry=%s\n//127.0.0.1:%s/:_authToken=%s\n' "$url" "$port" "$token" > "$work/npmrc"
chmod 644 "$work/npmrc"
for tgz in "$work"/dist/context-pilot-linux-x64-*.tgz "$work"/dist/context-pilot-[0-9]*.tgz; do
  npm publish --userconfig "$work/npmrc" --loglevel=error "$tgz" >/dev/null
done
say "published both npm packages to $url"

# 3. The ordinary user, and a PATH with node and python but no cargo and no target/.
clean_path=/usr/bin:/bin
if [ "$(id -u)" -eq 0 ]; then
  user=cp-tests
  id -u "$user" >/dev/null 2>&1 || useradd --create-home --user-group --shell /bin/sh "$user"
  home=$(getent passwd "$user" | cut -d: -f6)
  as_user() { setpriv --reuid="$user" --regid="$user" --init-groups env -i HOME="$home" USER="$user" "$@"; }
else
  home="$work/home"
  mkdir -p "$home"
  as_user() { env -i HOME="$home" USER="$(id -un)" "$@"; }
fi
chown -R "$(as_user /usr/bin/id -u):$(as_user /usr/bin/id -g)" "$work" 2>/dev/null || true
as_user PATH="$clean_path" /bin/sh -c 'command -v cargo rustc' >/dev/null && fail "cargo is on the clean PATH"

# checks CHANNEL BIN_DIR: --version, doctor, init claude, the Stop hook without node/python.
checks() {
  local channel=$1 bin=$2 project="$work/project-$1"
  local path="$bin:$clean_path"
  local version
  version=$(as_user PATH="$path" context-pilot --version)
  case "$version" in
    *"installed with $channel"*) ;;
    *) fail "$channel: --version says '$version'" ;;
  esac
  as_user /bin/sh -c "mkdir -p '$project' && cd '$project' && git init -q ."
  local doctor
  doctor=$(cd "$project" && as_user PATH="$path" context-pilot doctor || true)
  printf '%s\n' "$doctor" | grep -q "✓ Context Pilot .*installed with $channel" ||
    fail "$channel: doctor says: $doctor"
  (cd "$project" && as_user PATH="$path" context-pilot init claude >/dev/null) ||
    fail "$channel: init claude failed"
  local command program resolved
  command=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["hooks"]["Stop"][0]["hooks"][0]["command"])' "$project/.claude/settings.json")
  program=${command% hook stop}
  program=${program//\'/}
  resolved=$(as_user PATH="$path" /bin/sh -c "command -v '$program'")
  [ "$(head -c 4 "$resolved" | od -An -c | tr -d ' ')" = '177ELF' ] ||
    fail "$channel: the Stop hook runs $resolved, which is not the native binary"
  printf '{"session_id": "s1", "cwd": "%s", "hook_event_name": "Stop", "stop_hook_active": false}' "$project" > "$work/stop.json"
  chmod 644 "$work/stop.json"
  (cd "$project" && as_user PATH="$path" strace -f -qq -e trace=execve -o "$work/trace-$channel" \
    /bin/sh -c "$command < '$work/stop.json'" >/dev/null) || fail "$channel: the Stop hook failed"
  if grep -E 'execve\("[^"]*/(node|python[0-9.]*)"' "$work/trace-$channel"; then
    fail "$channel: the Stop hook started node or python"
  fi
  say "$channel: $version; doctor, init claude and the Stop hook ($resolved, $(grep -c execve "$work/trace-$channel") execs, no node or python) work"
}

# 4. npm, from the local registry.
as_user PATH="$clean_path" npm install -g --prefix "$work/npm" --userconfig "$work/npmrc" \
  --no-audit --no-fund --loglevel=error context-pilot >/dev/null
checks npm "$work/npm/bin"

# 5. pip, into a fresh venv.
as_user /usr/bin/python3 -m venv "$work/venv"
as_user "$work/venv/bin/pip" install --quiet --no-index --disable-pip-version-check \
  "$work"/dist/*.whl
checks pip "$work/venv/bin"
say "all checks passed"
