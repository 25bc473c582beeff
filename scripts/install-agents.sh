#!/bin/sh
# Installs the real agent CLIs used by the end-to-end tests (Claude Code, Gemini CLI, Codex CLI) under
# target/agents/, at pinned versions. The tests find them in target/agents/node_modules/.bin/.
# Needs node and npm, and network access to the npm registry. Safe to run again: npm skips
# what is already installed at the pinned version.
set -eu

CLAUDE_CODE_VERSION=2.1.332
GEMINI_CLI_VERSION=0.61.0
CODEX_CLI_VERSION=0.171.0

root=$(cd "$(dirname "$0")/.." && pwd)
prefix="$root/target/agents"

if ! command -v npm >/dev/null 2>&1; then
    echo "install-agents.sh: npm is not installed; install Node.js 20 or newer" >&2
    exit 1
fi

bin="$prefix/node_modules/.bin"
have() {
    [ -x "$bin/$1" ] && [ "$("$bin/$1" --version 2>/dev/null | grep -o "$2" | head -n1)" = "$2" ]
}
if have claude "$CLAUDE_CODE_VERSION" && have gemini "$GEMINI_CLI_VERSION" \
    && have codex "$CODEX_CLI_VERSION"; then
    echo "install-agents.sh: claude $CLAUDE_CODE_VERSION, gemini $GEMINI_CLI_VERSION and codex $CODEX_CLI_VERSION already in $bin"
    exit 0
fi

mkdir -p "$prefix"
npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error \
    "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" \
    "@google/gemini-cli@$GEMINI_CLI_VERSION" \
    "@openai/codex@$CODEX_CLI_VERSION"
echo "install-agents.sh: installed claude $CLAUDE_CODE_VERSION, gemini $GEMINI_CLI_VERSION and codex $CODEX_CLI_VERSION in $bin"
