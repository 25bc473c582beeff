//! Make: a Makefile with a `test` target is the project's own declared way to test, and wins
//! over any guess from a manifest.

use super::Found;
use super::probe::Probe;

pub(super) fn detect(probe: &Probe<'_>) -> Option<Found> {
    let name = ["GNUmakefile", "makefile", "Makefile"]
        .into_iter()
        .find(|name| {
            probe
                .read(name)
                .is_some_and(|text| text.lines().any(is_test_rule))
        })?;
    Some(Found::new(
        "make test",
        format!("the project declares it: {name}'s `test` target"),
    ))
}

/// `test:` or `test check: deps`, but not a variable assignment such as `test := x`.
fn is_test_rule(line: &str) -> bool {
    let Some((targets, rest)) = line.split_once(':') else {
        return false;
    };
    !line.starts_with(['\t', ' ', '#'])
        && !rest.starts_with('=')
        && targets.split_whitespace().any(|t| t == "test")
}

#[cfg(test)]
mod tests {
    use super::super::tests::detect;

    #[test]
    fn test_target_only() {
        assert_eq!(
            detect(&[("Makefile", "build:\n\tcc x.c\n\ntest: build\n\t./run\n")]).as_deref(),
            Some("make test")
        );
        assert_eq!(detect(&[("Makefile", "test := 1\nbuild:\n\tcc\n")]), None);
        assert_eq!(detect(&[("Makefile", "build:\n\tmake test\n")]), None);
    }

    #[test]
    fn a_declared_target_wins_over_a_manifest() {
        let files = [
            ("Makefile", "test:\n\tpython -m unittest\n"),
            ("pyproject.toml", "[project]\nname = \"x\"\n"),
            ("Cargo.toml", "[package]\nname = \"x\"\n"),
        ];
        assert_eq!(detect(&files).as_deref(), Some("make test"));
    }
}
