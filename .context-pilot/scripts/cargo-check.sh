#!/usr/bin/env bash
# Context Pilot callback script. It runs after the agent edits matching files.
# Environment:
#   CP_CHANGED_FILES  matched files, one per line, relative to CP_PROJECT_ROOT
#                     (a name holding a newline is left out; see CP_CHANGED_FILES0)
#   CP_CHANGED_FILES0 path of a file listing every matched file, each followed by a NUL
#                     byte (complete and safe for any name): xargs -0 -a "$CP_CHANGED_FILES0"
#   CP_PROJECT_ROOT   absolute path of the project root
#   CP_CALLBACK_NAME  name of this callback
#   CP_RUN_ID         UUID of this run (its console output can be reopened by it)
# Exit status 0 reports success; anything else is a failure shown to the agent.

set -o pipefail
# Type-check the whole workspace (tests and benches too); short messages keep the tail useful.
cargo check --workspace --all-targets --quiet --message-format short 2>&1 | tail -n 80
