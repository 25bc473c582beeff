//! The key reference page, `docs/reference/keys.md`, written from the key table
//! ([`BINDINGS`]) and the command table's docs, so the page says what the TUI does: a test
//! fails when the checked-in page differs from what this module writes.
//!
//! To write the page again after changing a key:
//! `CP_UPDATE_REFERENCE=1 cargo test -p context-pilot reference` (the test that compares it
//! lives in the binary crate, beside the command-line page's).

use std::fmt::Write as _;

use crate::app::commands::doc;
use crate::keymap::{BINDINGS, Scope};

/// The page's path, relative to the repository root.
pub const KEYS_PAGE: &str = "docs/reference/keys.md";

/// Where a group of keys holds, in the order the page lists them, with its heading.
const SCOPES: [(Scope, &str, &str); 4] = [
    (
        Scope::Everywhere,
        "Everywhere",
        "These hold while typing and in the sidebar, unless the focus's own keys take the key first.",
    ),
    (
        Scope::Text,
        "Typing",
        "In the input line, the command palette and a dialog's feedback field.",
    ),
    (
        Scope::Sidebar,
        "The sidebar",
        "After Esc or a click on the sidebar, when no text field has the keys.",
    ),
    (
        Scope::Changes,
        "The Changes panel",
        "While the Changes panel has the keys (F3, or select it in the sidebar).",
    ),
];

/// The whole page.
pub fn keys_page() -> String {
    let mut out = String::from(
        "# Key reference\n\n\
         Written by `cargo test -p context-pilot reference` from the TUI's key table; do not edit\n\
         by hand: run it with `CP_UPDATE_REFERENCE=1` to write it again. In the TUI, F1 (or `?`\n\
         where nothing is typed) shows the keys of the focus.\n",
    );
    for (scope, heading, intro) in SCOPES {
        let _ = write!(
            out,
            "\n## {heading}\n\n{intro}\n\n| keys | what they do |\n|---|---|\n"
        );
        for binding in BINDINGS.iter().filter(|b| b.scope == scope) {
            let help = binding.help(doc);
            let _ = writeln!(
                out,
                "| {} | {} |",
                cell(binding.label),
                cell(if help.is_empty() {
                    "(types the key)"
                } else {
                    help
                })
            );
        }
    }
    out.push_str(
        "\n## Questions and the mouse\n\n\
         - A yes/no question takes `y` for yes; any other key is no, and Ctrl-C confirms a quit.\n\
         - The wheel scrolls the main area; a click selects a sidebar entry, a file of the\n  \
         Changes panel or a line of its diff.\n",
    );
    out
}

/// A table cell: `|` escaped, so a key like `|` stays in its column.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_binding_is_on_the_page() {
        let page = keys_page();
        for binding in &BINDINGS {
            assert!(
                page.contains(&cell(binding.label)),
                "{} missing",
                binding.label
            );
        }
    }
}
