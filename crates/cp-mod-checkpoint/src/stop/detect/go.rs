//! Go: a module (`go.mod`) tests every package below it.

use super::probe::Probe;

pub(super) fn detect(probe: &Probe<'_>) -> Option<String> {
    probe.has_file("go.mod").then(|| "go test ./...".to_owned())
}

#[cfg(test)]
mod tests {
    use super::super::tests::detect;

    #[test]
    fn module() {
        assert_eq!(
            detect(&[("go.mod", "module example.com/calc\n")]).as_deref(),
            Some("go test ./...")
        );
    }
}
