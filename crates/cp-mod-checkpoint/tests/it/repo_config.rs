//! This repository's own `.context-pilot/config.json` is valid for the checkpoint and restart
//! sections, and its rules say what they should about our own code.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::path::Path;

use cp_base::Project;
use cp_mod_checkpoint::StopGateConfig;
use cp_orchestrate::RestartConfig;

fn repo() -> Project {
    Project::at(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .canonicalize()
            .unwrap(),
    )
}

#[test]
fn our_checkpoint_rules_load_and_ask_for_a_reload_after_tui_changes() {
    let config = StopGateConfig::load(&repo()).unwrap();
    let tui = config
        .rules
        .iter()
        .find(|r| r.name == "tui code")
        .expect("a rule for the TUI's code");
    let instruction = tui.instruction.as_deref().unwrap();
    assert!(
        instruction.contains("SIGUSR2") || instruction.contains("-USR2"),
        "{instruction}"
    );
    assert!(tui.gated);
    let tests = config.tests.as_ref().unwrap();
    assert!(tests.command.as_deref().unwrap().contains("cargo test"));
}

#[test]
fn our_restart_policy_loads() {
    let config = RestartConfig::load(&repo()).unwrap();
    assert!(config.restarts_enabled());
    config.validate().unwrap();
}
