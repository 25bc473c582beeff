//! Node: `package.json` with a real `scripts.test` (the project's declared command), run by the package manager its lockfile
//! names (pnpm, yarn, bun, npm). When that manager is not installed, npm runs the same script.

use std::path::Path;

use super::Found;
use super::probe::Probe;

/// Lockfile → the command that runs the package's `test` script. `bun test` would run bun's
/// own test runner instead of the script, hence `bun run test`.
const MANAGERS: &[(&str, &str, &str)] = &[
    ("pnpm-lock.yaml", "pnpm", "pnpm test"),
    ("yarn.lock", "yarn", "yarn test"),
    ("bun.lock", "bun", "bun run test"),
    ("bun.lockb", "bun", "bun run test"),
    ("package-lock.json", "npm", "npm test"),
];

pub(super) fn detect(probe: &Probe<'_>) -> Option<Found> {
    if !has_test_script(&probe.dir.join("package.json")) {
        return None;
    }
    let command = MANAGERS
        .iter()
        .find(|(lockfile, program, _)| probe.has_file(lockfile) && probe.on_path(program))
        .map_or("npm test", |(_, _, command)| command);
    Some(Found::new(
        command,
        "the project declares it: package.json's `test` script",
    ))
}

/// `npm init` writes a test script that always fails ("no test specified"); that is not a
/// test suite, and neither is a package.json without one.
fn has_test_script(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else {
        tracing::warn!(path = %path.display(), "package.json does not parse; not running its tests");
        return false;
    };
    json.pointer("/scripts/test")
        .and_then(serde_json::Value::as_str)
        .is_some_and(|script| !script.trim().is_empty() && !script.contains("no test specified"))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{detect, detect_with_path, tools};

    const PKG: &str = r#"{"scripts": {"test": "node --test"}}"#;

    #[test]
    fn placeholder_or_missing_test_script_is_not_a_suite() {
        let placeholder = r#"{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}"#;
        assert_eq!(detect(&[("package.json", placeholder)]), None);
        assert_eq!(detect(&[("package.json", "{}")]), None);
        assert_eq!(detect(&[("package.json", "{broken")]), None);
        assert_eq!(
            detect(&[("package.json", PKG)]).as_deref(),
            Some("npm test")
        );
    }

    #[test]
    fn the_lockfile_names_the_package_manager() {
        let bin = tools(&["pnpm", "yarn", "bun", "npm"]);
        let path = bin.path().as_os_str();
        for (lockfile, command) in [
            ("pnpm-lock.yaml", "pnpm test"),
            ("yarn.lock", "yarn test"),
            ("bun.lockb", "bun run test"),
            ("bun.lock", "bun run test"),
            ("package-lock.json", "npm test"),
        ] {
            assert_eq!(
                detect_with_path(&[("package.json", PKG), (lockfile, "")], path).as_deref(),
                Some(command),
                "{lockfile}"
            );
        }
    }

    #[test]
    fn a_missing_manager_falls_back_to_npm() {
        assert_eq!(
            detect(&[("package.json", PKG), ("pnpm-lock.yaml", "")]).as_deref(),
            Some("npm test")
        );
    }
}
