#!/usr/bin/env bash
# Runs every test of the workspace as `cargo test --workspace --no-fail-fast` does, but in two
# lanes side by side instead of one binary after another.
#
#   bash scripts/test-lanes.sh      # scripts/test.sh runs it for a whole run
#
# Why: most of the slowest tests wait on processes (TUIs in PTYs, real agent CLIs, workflows
# with scripted agents, ssh hosts), so one binary at a time left the two cores idle for about
# two thirds of the time. Lane 1 runs the binary crate's end-to-end binaries (`it`, `agents`),
# lane 2 every other test binary and then the doc tests. Each binary runs as cargo runs it: in
# its package's directory, with cargo's variables, through the runner cargo would use
# (scripts/test-runner.sh as root, see test.sh), with the same output. Lane 1 prints as it
# goes; lane 2's output follows it.
#
# The list of binaries is cargo's own (`--no-run --message-format=json`), so a new test
# target runs without being named here. Exits 1 if any binary or doc test failed, naming them.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
say() { printf 'test-lanes.sh: %s\n' "$*"; }

out="${CARGO_TARGET_DIR:-$root/target}/test-lanes"
rm -rf "$out"
mkdir -p "$out"

# 1. Build everything (as `cargo test` would) and list the test binaries it made.
cargo test --workspace --no-run --message-format=json-render-diagnostics > "$out/artifacts.json"
/usr/bin/env python3 - "$out/artifacts.json" "$root" > "$out/binaries.tsv" <<'PY'
import json, os, sys
artifacts, root = sys.argv[1], sys.argv[2]
for line in open(artifacts, encoding="utf-8"):
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if msg.get("reason") != "compiler-artifact" or not msg.get("executable"):
        continue
    if not msg.get("profile", {}).get("test"):
        continue
    target = msg["target"]
    package_dir = os.path.dirname(msg["manifest_path"])
    # "path+file:///…/crates/cp-base#0.1.0" names its package by its folder, and
    # "path+file:///…#name@0.1.0" by name.
    tail = msg["package_id"].rsplit("#", 1)[-1]
    package = tail.split("@", 1)[0] if "@" in tail else os.path.basename(package_dir)
    kind = target["kind"][0]
    source = os.path.relpath(target["src_path"], package_dir)
    shown = f"unittests {source}" if kind in ("lib", "bin") else source
    lane = 1 if package == "context-pilot" and target["name"] in ("it", "agents") else 2
    print("\t".join([str(lane), package, target["name"], kind, msg["executable"],
                     package_dir, shown]))
PY
count=$(wc -l < "$out/binaries.tsv")
[ "$count" -gt 0 ] || { say "cargo listed no test binaries"; exit 1; }

host=$(rustc -vV | sed -n 's/^host: //p')
runner_var="CARGO_TARGET_$(printf '%s' "$host" | tr 'a-z.-' 'A-Z__')_RUNNER"
runner=${!runner_var:-}
cargo_bin=$(command -v cargo)

# Runs the binaries of lane $1, one after another; a failure is noted in failed-$1.
lane() {
  local lane=$1 want exe dir package name kind shown flag
  while IFS=$'\t' read -r want package name kind exe dir shown; do
    [ "$want" = "$lane" ] || continue
    printf '     Running %s (%s)\n' "$shown" "${exe#"$root"/}"
    case $kind in
      lib) flag="--lib" ;;
      bin) flag="--bin $name" ;;
      *) flag="--test $name" ;;
    esac
    # shellcheck disable=SC2086 # $runner is a command line, as cargo splits it
    if ! (cd "$dir" && CARGO="$cargo_bin" CARGO_MANIFEST_DIR="$dir" \
        CARGO_MANIFEST_PATH="$dir/Cargo.toml" CARGO_PKG_NAME="$package" \
        CARGO_CRATE_NAME="${name//-/_}" $runner "$exe"); then
      echo "-p $package $flag" >> "$out/failed-$lane"
    fi
  done < "$out/binaries.tsv"
}

say "$count test binaries, in two lanes; then the doc tests"
lane 1 &
lane_one=$!
{
  lane 2
  printf '   Doc-tests (cargo test --workspace --doc)\n'
  cargo test --workspace --doc --no-fail-fast || echo "--doc" >> "$out/failed-2"
} > "$out/lane-2.log" 2>&1 || true
wait "$lane_one" || true
say "lane 2 (every other test binary, then the doc tests):"
cat "$out/lane-2.log"

failed=$(cat "$out"/failed-* 2>/dev/null || true)
if [ -n "$failed" ]; then
  say "FAILED: $(printf '%s\n' "$failed" | grep -c .) target(s):"
  printf '%s\n' "$failed" | sed 's/^/  /'
  exit 1
fi
say "every test binary and doc test passed"
