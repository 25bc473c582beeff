#!/usr/bin/env bash
# Runs every test, after setting up what the tests need beyond the Rust toolchain, bash and git.
#
#   bash scripts/test.sh [extra cargo test arguments]
#
# Nothing is installed into the system Python or the user's git configuration:
# - the Python MCP SDK (pinned) goes into a venv under target/test-venv, where the tests find it;
# - tmux and ps come from the system package manager when missing (root or sudo needed once);
# - the pinned Claude Code and Gemini CLI go under target/agents (npm), where the tests find them;
# - the stop gate's real runners: pytest wheels under target/pytest-wheels, jest and vitest
#   under target/node-tools;
# - commits made by tests get an identity from the environment when git has none;
# - as root (as in CI), the tests that drive the real agent CLIs run as the unprivileged user
#   cp-tests (made here once), as a person would run the agents: see step 5.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

started=$SECONDS
say() { printf 'test.sh: [%4ds] %s\n' "$((SECONDS - started))" "$*"; }

# A whole run (no arguments) prepares what the tests need (steps 2, 3 and 3b, and the
# old-system and packages checks' tools) in the background while cargo builds the tests:
# on a clean clone that is minutes of downloads the build no longer waits for.
full_run=0
[ $# -eq 0 ] && full_run=1

# 1. System tools the end-to-end tests drive, installed first and one after another (the
#    package manager takes one install at a time): tmux and ps, Node.js when missing, sshd and
#    its tools for the remote tests' hosts, and for a whole run as root the old-system check's
#    mmdebstrap.
need_apt=()
command -v tmux >/dev/null 2>&1 || need_apt+=(tmux)
command -v ps >/dev/null 2>&1 || need_apt+=(procps)
command -v npm >/dev/null 2>&1 || need_apt+=(nodejs npm)
if [ "$full_run" -eq 1 ] && [ "$(id -u)" -eq 0 ] && ! command -v mmdebstrap >/dev/null 2>&1; then
  need_apt+=(mmdebstrap)
fi
# The remote tests' hosts (cp_e2e::TestHost): network namespaces running Debian's sshd.
command -v ip >/dev/null 2>&1 || need_apt+=(iproute2)
command -v ssh >/dev/null 2>&1 || need_apt+=(openssh-client)
[ -x /usr/sbin/sshd ] || need_apt+=(openssh-server)
command -v setpriv >/dev/null 2>&1 || need_apt+=(util-linux)
if [ ${#need_apt[@]} -gt 0 ]; then
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  if ! command -v apt-get >/dev/null 2>&1; then
    say "please install: ${need_apt[*]} (no apt-get here; Node.js 20 or newer)"
    exit 1
  fi
  say "installing ${need_apt[*]} with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# 2. The Python MCP SDK, in a venv of our own (the MCP client test looks for it here).
python_sdk() {
  local mcp_version=2.3.0
  local venv="$root/target/test-venv"
  local stamp="$venv/.mcp-$mcp_version"
  [ -f "$stamp" ] && return 0
  local python
  python=$(command -v python3 || true)
  if [ -z "$python" ]; then
    say "python3 is required for the MCP client test; please install it"
    return 1
  fi
  say "creating $venv with mcp==$mcp_version"
  rm -rf "$venv"
  if ! "$python" -m venv "$venv" 2>/dev/null; then
    # Debian's python3 without python3-venv: fall back to virtualenv from PyPI, installed for
    # the user only, never into the system's site-packages.
    "$python" -m pip install --quiet --user --disable-pip-version-check virtualenv
    "$python" -m virtualenv --quiet "$venv"
  fi
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "mcp==$mcp_version"
  touch "$stamp"
}

# 3. The real agent CLIs (Claude Code, Gemini CLI, Codex CLI) the end-to-end tests drive,
#    pinned, from npm, under target/agents (needs Node.js 20+ and npm).
agents() {
  sh scripts/install-agents.sh
}

# 3b. The test runners the stop gate's tests drive for real (crates/cp-mod-checkpoint/tests):
#     pytest as wheels under target/pytest-wheels (each test makes its own venv from them),
#     jest and vitest under target/node-tools (the list is NODE_TOOLS_PACKAGE in the tests'
#     util/mod.rs; keep both the same).
runners() {
  local wheels="$root/target/pytest-wheels"
  if ! ls "$wheels"/pytest-*.whl >/dev/null 2>&1; then
    say "downloading pytest wheels into $wheels"
    rm -rf "$wheels.partial"
    python3 -m pip download --quiet --disable-pip-version-check pytest -d "$wheels.partial"
    mv "$wheels.partial" "$wheels"
  fi
  local node_tools="$root/target/node-tools"
  if [ ! -x "$node_tools/node_modules/.bin/jest" ] ||
      [ ! -x "$node_tools/node_modules/.bin/vitest" ]; then
    say "installing jest and vitest into $node_tools"
    mkdir -p "$node_tools"
    printf '%s\n' '{"name": "cp-node-tools", "private": true, "devDependencies": {"jest": "29.7.0", "vitest": "3.2.4"}}' \
      > "$node_tools/package.json"
    (cd "$node_tools" && npm install --no-audit --no-fund --loglevel=error)
  fi
}

# 3c. For a whole run: the tools of the checks after the tests (step 7), made ready now.
after_checks() {
  bash scripts/test-packages.sh --prepare
  bash scripts/test-old-system.sh --prepare
}

prepare_steps=(python_sdk agents runners)
[ "$full_run" -eq 1 ] && prepare_steps+=(after_checks)
prepare_logs="$root/target/test-prepare"
prepare_pids=()
if [ "$full_run" -eq 1 ]; then
  mkdir -p "$prepare_logs"
  for step in "${prepare_steps[@]}"; do
    "$step" > "$prepare_logs/$step.log" 2>&1 &
    prepare_pids+=("$!")
  done
  say "preparing ${prepare_steps[*]} in the background (logs in $prepare_logs)"
else
  for step in "${prepare_steps[@]}"; do "$step"; done
fi

# Waits for the background preparation; prints each step's log, fails on the first failure.
await_preparation() {
  local i failed=0
  for i in "${!prepare_pids[@]}"; do
    local step=${prepare_steps[$i]}
    if ! wait "${prepare_pids[$i]}"; then
      say "preparing $step FAILED:"
      failed=1
    fi
    sed "s/^/  $step: /" "$prepare_logs/$step.log"
  done
  [ "$failed" -eq 0 ] || exit 1
  say "prepared ${prepare_steps[*]}"
}

# 4. A git identity for the commits tests make, without touching the user's configuration.
if ! git config user.email >/dev/null 2>&1; then
  export GIT_AUTHOR_EMAIL=tests@context-pilot.invalid GIT_COMMITTER_EMAIL=tests@context-pilot.invalid
fi
if ! git config user.name >/dev/null 2>&1; then
  export GIT_AUTHOR_NAME="Context Pilot tests" GIT_COMMITTER_NAME="Context Pilot tests"
fi

# 5. As root, the test binaries that drive the real agent CLIs (built by cargo as root, as
#    usual) are run by cargo's runner, scripts/test-runner.sh, as the unprivileged user
#    cp-tests: the agents treat root differently (Gemini CLI trusts only root-owned system
#    settings), and the people who use Context Pilot are not root. Everything else runs as
#    before. The user reads the repository, target/ and the agents (all world-readable) and
#    writes only its own HOME and /tmp; cargo never runs as it.
if [ "$(id -u)" -eq 0 ]; then
  test_user=cp-tests
  if ! id -u "$test_user" >/dev/null 2>&1; then
    say "creating the unprivileged user $test_user for the real-agent tests"
    useradd --create-home --user-group --shell /bin/sh "$test_user"
  fi
  # The user must reach the checkout: a clone below a private directory (/root/…) is out of
  # its reach, and then these tests run as root, saying so, rather than fail on permissions.
  if setpriv --reuid="$test_user" --regid="$test_user" --init-groups \
      test -r "$root/Cargo.toml" -a -x "$root/scripts/test-runner.sh"; then
    host=$(rustc -vV | sed -n 's/^host: //p')
    runner_var="CARGO_TARGET_$(printf '%s' "$host" | tr 'a-z.-' 'A-Z__')_RUNNER"
    export "$runner_var=$root/scripts/test-runner.sh"
    export CP_TEST_USER="$test_user"
    export CP_UNPRIVILEGED_TESTS="agents"
    say "running $CP_UNPRIVILEGED_TESTS as $test_user"
  else
    say "WARNING: $test_user cannot read $root (a directory above it is private); the real-agent tests run as root this time"
  fi
fi

# 6. The whole run builds the console server with the tests (cp-mod-console has integration
#    tests), with the features the whole workspace turns on: the other crates' tests use that
#    one (cp_mod_console::server_exe_for_tests) instead of building it again with
#    cp-mod-console's own features, which compiles cp-base and cp-mod-console twice.
if [ $# -eq 0 ]; then
  export CP_TEST_CONSOLE_SERVER="${CARGO_TARGET_DIR:-$root/target}/debug/cp-console-server"
fi

if [ "$full_run" -eq 1 ]; then
  say "cargo test --workspace --no-run"
  cargo test --workspace --no-run
  await_preparation
fi

status=0
if [ "$full_run" -eq 1 ]; then
  # Every test binary and doc test, two binaries at a time (scripts/test-lanes.sh says why).
  say "bash scripts/test-lanes.sh"
  bash scripts/test-lanes.sh || status=1
else
  # --no-fail-fast: one failing test binary must not hide the others' results.
  say "cargo test --workspace --no-fail-fast $*"
  cargo test --workspace --no-fail-fast "$@" || status=$?
fi

# 7. The whole run (no arguments) also packs the binary the tests built into the npm packages
#    and the wheel, and installs and checks them as a person would (scripts/test-packages.sh:
#    a local npm registry, a fresh venv, an ordinary user, no cargo on PATH); then runs that
#    binary, linked again for glibc 2.17 as the release is (seconds), in a minimal Debian root
#    with no compiler (scripts/test-old-system.sh; the root is made once under
#    target/old-system, and as root only). The optimized release build itself
#    (scripts/release.sh) is not part of the tests: it takes many minutes; test-old-system.sh
#    checks its binary too when target/dist holds one.
if [ $# -eq 0 ]; then
  say "bash scripts/test-packages.sh"
  bash scripts/test-packages.sh || status=1
  say "bash scripts/test-old-system.sh"
  bash scripts/test-old-system.sh || status=1
fi
say "done"
exit "$status"
