//! Make: a Makefile with a `test` target, the last resort when no manifest says more.

use super::probe::Probe;

pub(super) fn detect(probe: &Probe<'_>) -> Option<String> {
    ["GNUmakefile", "makefile", "Makefile"]
        .iter()
        .filter_map(|name| probe.read(name))
        .any(|text| text.lines().any(is_test_rule))
        .then(|| "make test".to_owned())
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
}
