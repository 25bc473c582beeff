//! Go: a module (`go.mod`) tests every package below it.

use super::Found;
use super::probe::Probe;

pub(super) fn detect(probe: &Probe<'_>) -> Option<Found> {
    probe
        .has_file("go.mod")
        .then(|| Found::new("go test ./...", "go.mod (no test command declared)"))
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
