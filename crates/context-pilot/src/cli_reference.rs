//! The command-line reference page, `docs/reference/cli.md`, written from the clap
//! definition itself ([`crate::cli::Cli`]), so the page cannot drift from the binary: a test
//! fails when the checked-in page differs from what this module writes.
//!
//! To write the page again after changing a flag or a subcommand:
//! `CP_UPDATE_REFERENCE=1 cargo test -p context-pilot reference`.

use std::fmt::Write as _;

use clap::CommandFactory as _;

use crate::cli::Cli;

/// The page's path, relative to the repository root.
pub const CLI_PAGE: &str = "docs/reference/cli.md";

/// The whole page: every visible command's `--help`, the root first, then the subcommands
/// depth first in the order `context-pilot --help` lists them.
pub fn cli_page() -> String {
    let mut root = Cli::command().bin_name("context-pilot").term_width(100);
    root.build();
    let mut out = String::from(
        "# Command-line reference\n\n\
         Written by `cargo test -p context-pilot reference` from the command line's own \
         definition;\ndo not edit by hand: run it with `CP_UPDATE_REFERENCE=1` to write it \
         again.\n",
    );
    write_command(&mut out, &mut root, "context-pilot");
    out
}

fn write_command(out: &mut String, command: &mut clap::Command, path: &str) {
    let help = command.render_long_help().to_string();
    let _ = write!(out, "\n## `{path}`\n\n```text\n");
    for line in help.lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push_str("```\n");
    for sub in command.get_subcommands_mut() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        let name = format!("{path} {}", sub.get_name());
        write_command(out, sub, &name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_cli_page_is_current() {
        crate::reference_page::check(CLI_PAGE, &cli_page());
    }
}
