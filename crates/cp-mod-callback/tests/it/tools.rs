//! The Callback_* tools through a real registry: storage, validation, editor, activation.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers outside #[test] fns also fail loudly on any unexpected error"
)]

use std::os::unix::fs::PermissionsExt;

use crate::util::Fixture;
use cp_base::ToolCall;
use serde_json::json;

#[test]
fn create_stores_the_definition_and_an_executable_documented_script() {
    let f = Fixture::new();
    let r = f.call(
        "Callback_upsert",
        json!({"action": "create", "name": "cargo-check", "description": "build check",
               "pattern": ["*.rs", "!target/"], "script_content": "cargo check 2>&1",
               "blocking": true, "timeout": 300, "success_message": "build ok"}),
    );
    assert!(!r.is_error, "{}", r.text);
    assert!(
        r.text.starts_with("Created CB1 'cargo-check'"),
        "{}",
        r.text
    );
    let script = f.root.join(".context-pilot/scripts/cargo-check.sh");
    let text = std::fs::read_to_string(&script).unwrap();
    assert!(text.starts_with("#!/usr/bin/env bash\n"));
    for var in [
        "CP_CHANGED_FILES",
        "CP_PROJECT_ROOT",
        "CP_CALLBACK_NAME",
        "CP_RUN_ID",
    ] {
        assert!(text.contains(var), "header documents {var}");
    }
    assert!(text.ends_with("cargo check 2>&1\n"));
    let mode = std::fs::metadata(&script).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o755);
    let cfg = f.config();
    let cb = &cfg["callbacks"];
    assert_eq!(cb["next_id"], 2);
    assert_eq!(cb["definitions"][0]["id"], "CB1");
    assert_eq!(cb["definitions"][0]["pattern"], json!(["*.rs", "!target/"]));
    assert_eq!(cb["definitions"][0]["timeout"], 300);
    assert_eq!(cb["active"], json!({"main": ["CB1"]}));
}

#[test]
fn ids_are_never_reused_or_renumbered() {
    let f = Fixture::new();
    assert_eq!(f.create("a", json!("*.a"), "true", json!({})), "CB1");
    assert_eq!(f.create("b", json!("*.b"), "true", json!({})), "CB2");
    let r = f.call("Callback_upsert", json!({"action": "delete", "id": "CB2"}));
    assert!(r.text.contains("will not be reused"), "{}", r.text);
    assert!(!f.root.join(".context-pilot/scripts/b.sh").exists());
    assert_eq!(f.create("c", json!("*.c"), "true", json!({})), "CB3");
    f.call("Callback_upsert", json!({"action": "delete", "id": "CB1"}));
    assert_eq!(f.create("d", json!("*.d"), "true", json!({})), "CB4");
    let ids: Vec<_> = f.config()["callbacks"]["definitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, vec!["CB3", "CB4"]);
    assert_eq!(
        f.config()["callbacks"]["active"],
        json!({"main": ["CB3", "CB4"]})
    );
}

/// Every bad call is an error naming the problem, and changes nothing on disk.
#[test]
fn bad_inputs_are_rejected_with_a_precise_message_and_change_nothing() {
    let f = Fixture::new();
    f.create("ok", json!("*.rs"), "true", json!({}));
    let before = f.config();
    for (args, expected) in bad_upsert_calls() {
        let r = f.call("Callback_upsert", args.clone());
        assert!(r.is_error, "{args} should fail");
        assert!(r.text.starts_with("Callback_upsert: "), "{}", r.text);
        assert!(r.text.contains(expected), "{args}: got {}", r.text);
    }
    for (tool, args, expected) in [
        (
            "Callback_toggle",
            json!({"id": "CB7", "active": true}),
            "no callback CB7",
        ),
        (
            "Callback_open_editor",
            json!({"id": "CB7"}),
            "no callback CB7",
        ),
    ] {
        let r = f.call(tool, args);
        assert!(r.is_error && r.text.contains(expected), "{}", r.text);
    }
    assert_eq!(f.config(), before);
    assert!(!f.root.join(".context-pilot/scripts/e.sh").exists());
}

/// Bad `Callback_upsert` arguments (with CB1 `ok` existing) and what the error must say.
fn bad_upsert_calls() -> Vec<(serde_json::Value, &'static str)> {
    vec![
        (
            json!({"action": "create", "name": "../x", "pattern": "*.rs", "script_content": "true"}),
            "'name' `../x` is invalid",
        ),
        (
            json!({"action": "create", "name": "e", "pattern": "", "script_content": "true"}),
            "'pattern' has 0 characters",
        ),
        (
            json!({"action": "create", "name": "e", "pattern": [], "script_content": "true"}),
            "'pattern' has 0 items",
        ),
        (
            json!({"action": "create", "name": "e", "pattern": "src/[", "script_content": "true"}),
            "'pattern' `src/[` is not a valid glob: unclosed character class; missing ']'; example: `src/**/*.rs`",
        ),
        (
            json!({"action": "create", "name": "e", "pattern": "!*.rs", "script_content": "true"}),
            "only exclusions",
        ),
        (
            json!({"action": "create", "name": "e", "pattern": "*.rs", "script_content": "true", "blocking": true}),
            "'blocking' callbacks need a 'timeout'",
        ),
        (
            json!({"action": "create", "name": "e", "pattern": "*.rs", "script_content": "true", "blocking": true, "timeout": 0}),
            "'timeout' is 0, expected 1 to 3600",
        ),
        (
            json!({"action": "create", "name": "e", "pattern": "*.rs", "script_content": "true", "timeout": 100_000}),
            "'timeout' is 100000, expected 1 to 3600",
        ),
        (
            json!({"action": "create", "name": "e", "pattern": "*.rs", "script_content": "true", "cwd": "../up"}),
            "'cwd' `../up` is invalid: '..' would leave the project",
        ),
        (
            json!({"action": "create", "name": "e", "pattern": "*.rs", "script_content": "true", "cwd": "/etc"}),
            "'cwd' `/etc` is invalid: it is absolute",
        ),
        (
            json!({"action": "create", "name": "e", "pattern": "*.rs", "script_content": "true", "cwd": "nope"}),
            "no such directory under the project root",
        ),
        (
            json!({"action": "create", "name": "ok", "pattern": "*.rs", "script_content": "true"}),
            "'name' `ok` is already used by CB1",
        ),
        (
            json!({"action": "create", "name": "e", "pattern": "*.rs"}),
            "'script_content' is required for action=create",
        ),
        (
            json!({"action": "update", "id": "CB9", "timeout": 5}),
            "no callback CB9; existing: CB1 ok",
        ),
        (
            json!({"action": "update", "id": "nine", "timeout": 5}),
            "`nine` is not a callback id; ids look like `CB1`",
        ),
        (json!({"action": "delete", "id": "CB9"}), "no callback CB9"),
        (
            json!({"action": "update", "id": "CB1"}),
            "nothing to change",
        ),
        (
            json!({"action": "update", "id": "CB1", "blocking": true}),
            "'blocking' callbacks need a 'timeout'",
        ),
        (
            json!({"action": "remove", "id": "CB1"}),
            "'action' must be one of \"create\", \"update\", \"delete\"",
        ),
        (
            json!({"action": "create", "nme": "x"}),
            "unknown parameter 'nme'",
        ),
    ]
}

#[test]
fn diff_edits_need_the_editor_and_an_exact_unique_old_string() {
    let f = Fixture::new();
    f.create(
        "lint",
        json!("*.py"),
        "echo one\necho two\necho two",
        json!({}),
    );
    let script = || f.read(".context-pilot/scripts/lint.sh");
    // Editor closed: not applied, a warning, and the editor opens on that callback.
    let r = f.call(
        "Callback_upsert",
        json!({"action": "update", "id": "CB1", "old_string": "echo one", "new_string": "echo 1"}),
    );
    assert!(r.is_error, "{}", r.text);
    assert!(r.text.contains("not applied"), "{}", r.text);
    assert!(r.text.contains("It is open now"), "{}", r.text);
    assert!(
        r.text.contains("| echo one"),
        "the script is shown: {}",
        r.text
    );
    assert!(script().contains("echo one"));
    {
        let views = f.registry.views();
        let ctx = views.modules()[0].panels()[0].llm_context();
        assert!(ctx.contains("### Editor: CB1 lint"), "{ctx}");
    }
    // Now it applies.
    let r = f.call(
        "Callback_upsert",
        json!({"action": "update", "id": "CB1", "old_string": "echo one", "new_string": "echo 1"}),
    );
    assert!(!r.is_error, "{}", r.text);
    assert!(r.text.contains("changed script"), "{}", r.text);
    assert!(script().contains("echo 1\n") && !script().contains("echo one"));
    let r = f.call(
        "Callback_upsert",
        json!({"action": "update", "id": "CB1", "old_string": "echo three", "new_string": "x"}),
    );
    assert!(
        r.is_error && r.text.contains("'old_string' was not found"),
        "{}",
        r.text
    );
    let r = f.call(
        "Callback_upsert",
        json!({"action": "update", "id": "CB1", "old_string": "echo two", "new_string": "x"}),
    );
    assert!(
        r.is_error && r.text.contains("occurs 2 times"),
        "{}",
        r.text
    );
    let r = f.call(
        "Callback_upsert",
        json!({"action": "update", "id": "CB1", "old_string": "echo two"}),
    );
    assert!(r.is_error && r.text.contains("go together"), "{}", r.text);
    let r = f.call("Callback_close_editor", json!({}));
    assert_eq!(r.text, "Closed the editor on CB1.");
    assert_eq!(
        f.call("Callback_close_editor", json!({})).text,
        "No callback editor was open."
    );
}

#[test]
fn rename_moves_the_script_and_keeps_the_id() {
    let f = Fixture::new();
    f.create("old-name", json!("*.md"), "echo hi", json!({}));
    let r = f.call(
        "Callback_upsert",
        json!({"action": "update", "id": "CB1", "name": "new-name", "timeout": 10,
               "blocking": true, "script_content": "echo bye"}),
    );
    assert!(!r.is_error, "{}", r.text);
    assert!(!f.root.join(".context-pilot/scripts/old-name.sh").exists());
    let text = f.read(".context-pilot/scripts/new-name.sh");
    assert!(text.starts_with("#!/usr/bin/env bash") && text.ends_with("echo bye\n"));
    let def = &f.config()["callbacks"]["definitions"][0];
    assert_eq!(def["id"], "CB1");
    assert_eq!(def["name"], "new-name");
    assert_eq!(def["blocking"], true);
    // A rename alone keeps the script text.
    f.call(
        "Callback_upsert",
        json!({"action": "update", "id": "CB1", "name": "third"}),
    );
    assert_eq!(f.read(".context-pilot/scripts/third.sh"), text);
}

#[test]
fn a_new_callback_is_active_only_for_its_creator_and_toggles_are_per_worker() {
    let f = Fixture::new();
    f.create("a", json!("*.rs"), "true", json!({}));
    let other = f.registry_for("agent-2");
    let env2 = f.env_for("agent-2");
    let badge = |r: &cp_base::Registry| r.views().modules()[0].panels()[0].badge();
    assert_eq!(badge(&f.registry), Some("1/1".into()));
    assert_eq!(badge(&other), Some("0/1".into()));
    let r = other.call(
        &ToolCall::new("1", "Callback_toggle", json!({"id": "CB1", "active": true})),
        &env2,
    );
    assert!(
        r.text.contains("now active for you (worker agent-2)"),
        "{}",
        r.text
    );
    assert_eq!(badge(&other), Some("1/1".into()));
    let r = f.call("Callback_toggle", json!({"id": "CB1", "active": false}));
    assert!(!r.is_error, "{}", r.text);
    assert_eq!(badge(&f.registry), Some("0/1".into()));
    assert_eq!(badge(&other), Some("1/1".into()), "agent-2 is unaffected");
    assert_eq!(
        f.config()["callbacks"]["active"],
        json!({"agent-2": ["CB1"]})
    );
}

#[test]
fn toggle_all_pauses_and_resumes_only_this_worker() {
    let f = Fixture::new();
    f.create("a", json!("*.rs"), "true", json!({}));
    f.create("b", json!("*.md"), "true", json!({}));
    f.call("Callback_toggle", json!({"id": "CB2", "active": false}));
    let other = f.registry_for("w2");
    let env2 = f.env_for("w2");
    other.call(
        &ToolCall::new("1", "Callback_toggle", json!({"id": "CB1", "active": true})),
        &env2,
    );
    let r = f.call("Callback_toggle", json!({"id": "all", "active": false}));
    assert!(
        r.text
            .starts_with("Paused every callback for you (worker main)"),
        "{}",
        r.text
    );
    let ctx = f.registry.views().modules()[0].panels()[0].llm_context();
    assert!(ctx.contains("PAUSED"), "{ctx}");
    assert_eq!(
        f.registry.views().modules()[0].panels()[0].badge(),
        Some("0/2".into())
    );
    assert_eq!(
        other.views().modules()[0].panels()[0].badge(),
        Some("1/2".into())
    );
    let r = f.call("Callback_toggle", json!({"id": "all", "active": true}));
    assert!(r.text.contains("Active: CB1 a."), "{}", r.text);
    assert_eq!(
        f.registry.views().modules()[0].panels()[0].badge(),
        Some("1/2".into())
    );
}

/// Issue 17: `Callback_toggle id=CB1` from the palette, without `active`, flips the switch.
#[test]
fn toggle_without_active_flips_the_current_state() {
    let f = Fixture::new();
    f.create("a", json!("*.rs"), "true", json!({}));
    let badge = |r: &cp_base::Registry| r.views().modules()[0].panels()[0].badge();
    assert_eq!(badge(&f.registry), Some("1/1".into()));
    let r = f.call("Callback_toggle", json!({"id": "CB1"}));
    assert!(r.text.contains("is now inactive"), "{}", r.text);
    assert_eq!(badge(&f.registry), Some("0/1".into()));
    let r = f.call("Callback_toggle", json!({"id": "CB1"}));
    assert!(r.text.contains("is now active"), "{}", r.text);
    assert_eq!(badge(&f.registry), Some("1/1".into()));
    let r = f.call("Callback_toggle", json!({"id": "all"}));
    assert!(r.text.starts_with("Paused every callback"), "{}", r.text);
    let r = f.call("Callback_toggle", json!({"id": "all"}));
    assert!(r.text.starts_with("Resumed callbacks"), "{}", r.text);
}

#[test]
fn changes_by_another_process_are_picked_up() {
    let f = Fixture::new();
    let other = f.registry_for("main");
    let env = f.env_for("main");
    other.call(
        &ToolCall::new(
            "1",
            "Callback_upsert",
            json!({"action": "create", "name": "remote", "pattern": "*.txt", "script_content": "true"}),
        ),
        &env,
    );
    assert!(f.registry.tick(&f.env), "the tick notices the change");
    assert!(
        f.registry.views().modules()[0].panels()[0]
            .llm_context()
            .contains("| CB1 | remote |")
    );
    assert!(!f.registry.tick(&f.env), "nothing changed since");
}

#[test]
fn open_editor_shows_settings_and_numbered_script() {
    let f = Fixture::new();
    f.create(
        "fmt",
        json!(["*.rs"]),
        "rustfmt $CP_CHANGED_FILES",
        json!({"description": "format"}),
    );
    let r = f.call("Callback_open_editor", json!({"id": "CB1"}));
    assert!(!r.is_error, "{}", r.text);
    assert!(r.text.starts_with("Editor open on CB1 'fmt'"), "{}", r.text);
    // Where the script runs reads as words, not as `cwd ..`.
    assert!(r.text.contains("runs in the project root.\n"), "{}", r.text);
    assert!(!r.text.contains(".."), "{}", r.text);
    assert!(r.text.contains(" 1 | #!/usr/bin/env bash"), "{}", r.text);
    assert!(r.text.contains("| rustfmt $CP_CHANGED_FILES"), "{}", r.text);
    // Deleting the open callback closes the editor.
    f.call("Callback_upsert", json!({"action": "delete", "id": "CB1"}));
    let ctx = f.registry.views().modules()[0].panels()[0].llm_context();
    assert!(ctx.starts_with("No callbacks are defined."), "{ctx}");
}
