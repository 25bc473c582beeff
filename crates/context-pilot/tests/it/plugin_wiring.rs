//! A project wired by `init claude` and by Context Pilot's Claude Code plugin: `doctor` names
//! the double wiring and how to clear it, and each hook runs once (the plugin's hook leaves
//! the event to the one `init` wrote).

use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::Stdio;

use crate::util::{canonical, context_pilot, fixture};
use cp_e2e::git_repo;

/// `PATH` with a stand-in `claude` (2.1.330) first.
fn path_with_claude(dir: &Path) -> String {
    let claude = dir.join("claude");
    std::fs::write(&claude, "#!/bin/sh\necho '2.1.330 (Claude Code)'\n").unwrap();
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Runs `context-pilot hook ARGS` in `root` with Claude Code's Stop payload; the lines it
/// reported to `CP_HOOK_REPORT`.
fn stop_hook(root: &Path, args: &[&str]) -> usize {
    let reports = tempfile::tempdir().unwrap();
    let report = reports.path().join("reports.jsonl");
    // Hooks append to a report file the driver made, and never make one.
    std::fs::write(&report, "").unwrap();
    let mut child = context_pilot(root)
        .arg("hook")
        .args(args)
        .env("CP_HOOK_REPORT", &report)
        .env_remove("CLAUDE_PROJECT_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let payload = fixture("claude_stop.json", root, root);
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
    std::fs::read_to_string(&report)
        .unwrap_or_default()
        .lines()
        .count()
}

#[test]
fn a_project_wired_by_init_and_the_plugin_is_named_and_runs_each_hook_once() {
    let repo = git_repo();
    let root = canonical(repo.path());
    let bin = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let path = path_with_claude(bin.path());

    // Only the plugin: its hook does the work.
    assert_eq!(stop_hook(&root, &["--plugin", "stop"]), 1);

    let init = context_pilot(&root)
        .args(["init", "claude"])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(init.status.success(), "{init:?}");
    // `claude plugin install context-pilot@context-pilot --scope project` records this.
    let settings_path = root.join(".claude/settings.json");
    let mut settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&settings_path).unwrap()).unwrap();
    settings["enabledPlugins"] = serde_json::json!({"context-pilot@context-pilot": true});
    std::fs::write(&settings_path, settings.to_string()).unwrap();

    // Both: init's hook runs, the plugin's does nothing.
    assert_eq!(stop_hook(&root, &["stop"]), 1);
    assert_eq!(stop_hook(&root, &["--plugin", "stop"]), 0);

    let out = context_pilot(&root)
        .arg("doctor")
        .env("PATH", &path)
        .env("HOME", home.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("✗ Claude Code: wired twice"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains("claude plugin uninstall context-pilot@context-pilot --scope project"),
        "{line}"
    );
    assert!(
        line.contains(".mcp.json and .claude/settings.json"),
        "{line}"
    );
    assert_eq!(out.status.code(), Some(1), "{text}");
}
