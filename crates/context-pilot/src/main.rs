//! The `context-pilot` binary: the command line, and nothing else. Each command is a crate of
//! its own, and this one only parses the arguments and dispatches (`cli`):
//!
//! | command | crate |
//! |---|---|
//! | no subcommand: the terminal UI | `cp-tui` |
//! | `hook <event>` | `cp-hook` |
//! | `mcp` | `cp-mcp` |
//! | `run WORKFLOW` | `cp-run` (headless), `cp-tui` (on screen) |
//! | `init`, `doctor`, `models` | `cp-setup` |
//! | `trust`, `tool` | `cp-host` |
//! | `console-server`, `warm-run` | `cp-mod-console`, `cp-mod-checkpoint` |
//!
//! Its tests check what only the whole binary can: the checked-in reference pages, the docs,
//! and (under `tests/`) every front-end end to end.

#[cfg(test)]
mod agent_table;
mod cli;
#[cfg(test)]
mod cli_reference;
#[cfg(test)]
mod crate_graph;
#[cfg(test)]
mod docs_check;
#[cfg(test)]
mod reference_page;

fn main() -> std::process::ExitCode {
    cli::main()
}
