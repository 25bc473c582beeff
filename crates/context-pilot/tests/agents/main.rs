//! The end-to-end tests that drive the real agent CLIs (Claude Code, Gemini CLI, Codex CLI,
//! installed by `scripts/install-agents.sh`), in one test binary: `scripts/test.sh` runs it as
//! the unprivileged user `cp-tests`, since the agents treat root differently and the people who
//! use Context Pilot are not root.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a step that fails fails the test loudly"
)]

#[path = "../util/mod.rs"]
mod util;

mod agent_cli;
mod agent_cli_codex;
mod agent_cli_parallel;
mod real_agents;
mod tui_agent_cli;
mod tui_agent_cli_codex;
mod warm_runs;
