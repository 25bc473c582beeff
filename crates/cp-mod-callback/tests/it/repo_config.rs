//! This repository's own callbacks (`.context-pilot/` at the workspace root) are valid.

#![allow(clippy::unwrap_used, reason = "test code")]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use cp_base::{Project, WorkerId};
use cp_mod_callback::{
    CONFIG_KEY, CallbackId, CallbackModule, CallbackSection, Matcher, SCRIPT_HEADER,
};

#[test]
fn the_workspace_callbacks_parse_compile_and_have_executable_scripts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap();
    let project = Project::at(&root);
    let section: CallbackSection = project.config().section(CONFIG_KEY).unwrap();
    let names: Vec<_> = section
        .definitions
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    assert_eq!(names, vec!["cargo-check", "rustfmt-check"]);
    assert!(section.next_id > 2);
    for def in &section.definitions {
        assert!(def.blocking && def.timeout.is_some(), "{}", def.name);
        let script = project.scripts_dir().join(format!("{}.sh", def.name));
        let text = std::fs::read_to_string(&script).unwrap();
        assert!(text.starts_with("#!/usr/bin/env bash\n"), "{}", def.name);
        assert!(text.contains(SCRIPT_HEADER), "{}", def.name);
        let mode = std::fs::metadata(&script).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755, "{}", def.name);
    }
    let matcher = Matcher::new(
        section
            .definitions
            .iter()
            .map(|d| (d.id, d.pattern.as_slice())),
    );
    assert!(matcher.invalid().is_empty());
    assert_eq!(
        matcher.matches("crates/cp-base/src/lib.rs"),
        vec![CallbackId(1), CallbackId(2)]
    );
    assert_eq!(matcher.matches("Cargo.toml"), vec![CallbackId(1)]);
    assert!(matcher.matches("target/debug/build/x/out.rs").is_empty());
    assert!(matcher.matches("README.md").is_empty());
    // The module reads it without complaint.
    let module = CallbackModule::new(project, WorkerId::default());
    assert_eq!(module.panel().problem, None);
    assert_eq!(module.section().definitions.len(), 2);
}
