//! Checked-in files written by code (the reference pages `docs/reference/*.md`, the plugins
//! under `plugins/` and `.claude-plugin/`): the test that keeps each one current, and the
//! switch that writes it again.

use std::path::PathBuf;

/// The repository root, from this crate's manifest directory.
fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Fails when the page at `relative` differs from `expected`; with `CP_UPDATE_REFERENCE=1` in
/// the environment it writes `expected` there instead.
#[expect(clippy::panic, reason = "a test's failure message")]
pub(crate) fn check(relative: &str, expected: &str) {
    let path = repo_root().join(relative);
    if std::env::var_os("CP_UPDATE_REFERENCE").is_some() {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        }
        std::fs::write(&path, expected).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        return;
    }
    let found = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        found == expected,
        "{relative} is stale: it no longer says what the code says. Write it again with \
         `CP_UPDATE_REFERENCE=1 cargo test -p context-pilot reference` and commit it."
    );
}

#[cfg(test)]
mod tests {
    /// The plugins and the extension (`plugins/`, `.claude-plugin/`), written from the agent
    /// descriptors `init` uses.
    #[test]
    fn reference_plugins_are_current() {
        for file in cp_setup::plugins::files() {
            super::check(&file.path, &file.text);
        }
    }

    #[test]
    fn reference_keys_page_is_current() {
        super::check(cp_tui::KEYS_PAGE, &cp_tui::keys_page());
    }
}
