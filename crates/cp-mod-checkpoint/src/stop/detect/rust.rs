//! Rust: `Cargo.toml`. A workspace root tests every member (`cargo test --workspace`; a root
//! package's plain `cargo test` would test only itself); a member crate's directory tests
//! that crate, with cargo finding the workspace above it.

use super::probe::Probe;

pub(super) fn detect(probe: &Probe<'_>) -> Option<String> {
    let manifest = probe.read("Cargo.toml")?;
    let workspace = manifest.lines().any(|l| l.trim() == "[workspace]");
    Some(if workspace {
        "cargo test --workspace".to_owned()
    } else {
        "cargo test".to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::detect;

    #[test]
    fn workspace_root_and_member() {
        assert_eq!(
            detect(&[("Cargo.toml", "[workspace]\nmembers = [\"crates/*\"]\n")]).as_deref(),
            Some("cargo test --workspace")
        );
        assert_eq!(
            detect(&[("Cargo.toml", "[package]\nname = \"calc\"\n")]).as_deref(),
            Some("cargo test")
        );
    }
}
