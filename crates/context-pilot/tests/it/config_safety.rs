//! Issue 14 §3 and §5 (hooks): callbacks defined in `config.json` are held to the rules of
//! `Callback_upsert` when they are loaded, a broken config is reported rather than silently
//! turning callbacks off, file names cannot smuggle paths into `CP_CHANGED_FILES`, and hooks
//! outside any project write nothing. The real binary, real git repositories, real scripts.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::path::{Path, PathBuf};

use crate::util::{HookRun, canonical, context_pilot, hook, stop_console_server};
use cp_e2e::git_repo;
use serde_json::{Value, json};

/// A Claude Code `PostToolUse` payload for a `Write` of `file` (absolute).
fn write_payload(cwd: &Path, file: &Path) -> String {
    json!({
        "session_id": "s-1",
        "cwd": cwd,
        "hook_event_name": "PostToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": file, "content": "x\n"},
        "tool_response": {"type": "update", "filePath": file},
    })
    .to_string()
}

/// Writes the callbacks section by hand (as a committed or hand-edited file would), every
/// definition active for the default worker, and trusts the project as it now is.
fn write_config(root: &Path, definitions: &Value) {
    let ids: Vec<Value> = definitions
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].clone())
        .collect();
    let config = json!({"callbacks": {
        "next_id": ids.len() + 1,
        "definitions": definitions,
        "active": {"main": ids},
    }});
    let dir = root.join(".context-pilot");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    // The person trusts what they wrote; what these tests check is the validation, which
    // holds for trusted projects too. Scripts are written before the config.
    crate::util::trust(root);
}

/// Writes `.context-pilot/scripts/{name}.sh`.
fn write_script(root: &Path, name: &str, body: &str) {
    let dir = root.join(".context-pilot/scripts");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join(format!("{name}.sh")),
        format!("#!/usr/bin/env bash\n{body}\n"),
    )
    .unwrap();
}

/// A blocking callback on `*.sh` named `name`.
fn def(id: &str, name: &str, extra: &Value) -> Value {
    let mut d = json!({
        "id": id, "name": name, "pattern": ["*.sh"], "blocking": true, "timeout": 60
    });
    for (k, v) in extra.as_object().unwrap() {
        d[k] = v.clone();
    }
    d
}

/// A git repository at `outer/proj`, with `src/greet.sh`. Returns (outer dir, root).
fn nested_repo() -> (tempfile::TempDir, PathBuf) {
    let outer = tempfile::tempdir().unwrap();
    let root = canonical(outer.path()).join("proj");
    std::fs::create_dir_all(root.join("src")).unwrap();
    cp_e2e::git(&root, &["init", "-q", "-b", "main"]);
    std::fs::write(root.join("src/greet.sh"), "echo hello\n").unwrap();
    (outer, root)
}

fn edit_greet(root: &Path) -> HookRun {
    let out = hook(
        "post-tool-use",
        root,
        &write_payload(root, &root.join("src/greet.sh")),
    );
    stop_console_server(root);
    out
}

/// The text a Claude Code reply gives the model, whatever its shape.
fn model_text(reply: &Value) -> String {
    reply["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .or_else(|| reply["reason"].as_str())
        .unwrap_or_default()
        .to_owned()
}

fn tool(root: &Path, name: &str, args: &Value) -> String {
    let out = context_pilot(root)
        .args(["tool", name, &args.to_string()])
        .output()
        .unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_definition_named_to_leave_scripts_never_runs_and_the_tools_leave_the_outside_file_alone() {
    let (outer, root) = nested_repo();
    let outer = canonical(outer.path());
    // `.context-pilot/scripts/../../../victim.sh` is `outer/victim.sh`.
    let victim = outer.join("victim.sh");
    let victim_text = format!("#!/usr/bin/env bash\ntouch {}/PWNED\n", outer.display());
    std::fs::write(&victim, &victim_text).unwrap();
    write_script(&root, "fine", "touch \"$CP_PROJECT_ROOT/fine-ran\"");
    write_config(
        &root,
        &json!([
            def("CB1", "../../../victim", &json!({})),
            def("CB2", "fine", &json!({}))
        ]),
    );

    let out = edit_greet(&root);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(!outer.join("PWNED").exists(), "the outside script ran");
    assert!(
        root.join("fine-ran").exists(),
        "the valid callback must still run: {out:?}"
    );
    let config = root
        .join(".context-pilot/config.json")
        .display()
        .to_string();
    assert!(
        out.stderr.contains(&config) && out.stderr.contains("CB1 `../../../victim` is disabled"),
        "{out:?}"
    );
    let message = out.json()["systemMessage"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        message.contains("../../../victim") && message.contains(&config),
        "{out:?}"
    );

    // Update, rename and delete through the tool never touch the outside file.
    let text = tool(
        &root,
        "Callback_upsert",
        &json!({"action": "update", "id": "CB1", "script_content": "echo overwritten"}),
    );
    assert!(text.contains("invalid name"), "{text}");
    let text = tool(
        &root,
        "Callback_upsert",
        &json!({"action": "update", "id": "CB1", "name": "moved"}),
    );
    assert!(text.contains("invalid name"), "{text}");
    assert!(!root.join(".context-pilot/scripts/moved.sh").exists());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), victim_text);
    let text = tool(
        &root,
        "Callback_upsert",
        &json!({"action": "delete", "id": "CB1"}),
    );
    assert!(text.contains("Deleted CB1"), "{text}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), victim_text);
    assert!(!outer.join("PWNED").exists());
}

#[test]
fn callback_upsert_never_overwrites_a_script_no_callback_owns() {
    let repo = git_repo();
    let root = canonical(repo.path());
    write_script(&root, "mine", "echo my own script");
    let before = std::fs::read_to_string(root.join(".context-pilot/scripts/mine.sh")).unwrap();
    let text = tool(
        &root,
        "Callback_upsert",
        &json!({"action": "create", "name": "mine", "pattern": "*.rs", "script_content": "rm -rf /"}),
    );
    assert!(
        text.contains("already exists and no callback owns it"),
        "{text}"
    );
    let after = std::fs::read_to_string(root.join(".context-pilot/scripts/mine.sh")).unwrap();
    assert_eq!(before, after);
    // A rename onto it is refused the same way.
    let text = tool(
        &root,
        "Callback_upsert",
        &json!({"action": "create", "name": "other", "pattern": "*.rs", "script_content": "true"}),
    );
    assert!(text.contains("Created CB1"), "{text}");
    let text = tool(
        &root,
        "Callback_upsert",
        &json!({"action": "update", "id": "CB1", "name": "mine"}),
    );
    assert!(
        text.contains("already exists and no callback owns it"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join(".context-pilot/scripts/mine.sh")).unwrap(),
        before
    );
}

#[test]
fn timeouts_out_of_range_on_load_are_reported_without_a_panic() {
    for timeout in [json!(u64::MAX), json!(i64::MAX), json!(0)] {
        let repo = git_repo();
        let root = canonical(repo.path());
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/greet.sh"), "echo hello\n").unwrap();
        write_script(&root, "slow", "touch \"$CP_PROJECT_ROOT/slow-ran\"");
        write_config(
            &root,
            &json!([def("CB1", "slow", &json!({"timeout": timeout}))]),
        );
        let out = edit_greet(&root);
        assert_eq!(out.code, Some(0), "timeout {timeout}: {out:?}");
        assert!(
            !out.stderr.contains("panicked"),
            "timeout {timeout}: {out:?}"
        );
        assert!(
            out.stderr
                .contains(&format!("'timeout' is {timeout} s, expected 1 to 3600")),
            "timeout {timeout}: {out:?}"
        );
        assert!(
            out.json()["systemMessage"]
                .as_str()
                .is_some_and(|m| m.contains("'timeout'")),
            "{out:?}"
        );
        assert!(!root.join("slow-ran").exists(), "timeout {timeout}");
    }
}

#[test]
fn a_cwd_that_leads_out_of_the_project_is_refused() {
    let (outer, root) = nested_repo();
    let outside = tempfile::tempdir().unwrap();
    let outside = canonical(outside.path());
    std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
    // A name of its own, so a stray file from elsewhere cannot pass or fail the test.
    let marker = format!(
        "ran-here-{}",
        outer.path().file_name().unwrap().to_string_lossy()
    );
    for name in ["via-link", "via-dots"] {
        write_script(&root, name, &format!("touch {marker}"));
    }
    write_config(
        &root,
        &json!([
            def("CB1", "via-link", &json!({"cwd": "link"})),
            def("CB2", "via-dots", &json!({"cwd": "../../.."})),
        ]),
    );
    let out = edit_greet(&root);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        !outside.join(&marker).exists(),
        "ran in the symlink's target"
    );
    let dots = canonical(&root.join("../../.."));
    assert!(!dots.join(&marker).exists(), "ran in {}", dots.display());
    let reply = out.json();
    // The symlink is caught when the run starts, the `..` when the config is loaded.
    let text = model_text(&reply);
    assert!(
        text.contains("could not start") && text.contains("outside the project root"),
        "{reply}"
    );
    assert!(
        out.stderr.contains("CB2 `via-dots` is disabled") && out.stderr.contains("'..'"),
        "{out:?}"
    );
    // The tool refuses the symlink too.
    let text = tool(
        &root,
        "Callback_upsert",
        &json!({"action": "update", "id": "CB1", "cwd": "link"}),
    );
    assert!(text.contains("outside the project root"), "{text}");
}

#[test]
fn a_broken_config_is_reported_by_the_hook() {
    // Truncated JSON: every callback is off, and the person is told.
    let repo = git_repo();
    let root = canonical(repo.path());
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/greet.sh"), "echo hello\n").unwrap();
    write_script(&root, "fine", "touch \"$CP_PROJECT_ROOT/fine-ran\"");
    write_config(&root, &json!([def("CB1", "fine", &json!({}))]));
    let config = root.join(".context-pilot/config.json");
    let full = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, &full[..full.len() / 2]).unwrap();
    let out = edit_greet(&root);
    assert_eq!(out.code, Some(0), "{out:?}");
    let shown = config.display().to_string();
    assert!(
        out.stderr.contains(&shown) && out.stderr.contains("no callback runs"),
        "{out:?}"
    );
    let message = out.json()["systemMessage"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(message.contains(&shown), "{out:?}");

    // One invalid glob disables only its definition; the other still fires.
    write_script(&root, "broken", "touch \"$CP_PROJECT_ROOT/broken-ran\"");
    write_config(
        &root,
        &json!([
            def("CB1", "fine", &json!({})),
            def("CB2", "broken", &json!({"pattern": ["src/["]})),
        ]),
    );
    let out = edit_greet(&root);
    assert!(root.join("fine-ran").exists(), "{out:?}");
    assert!(
        out.stderr.contains("CB2 `broken` is disabled")
            && out.stderr.contains("`src/[` is not a valid glob"),
        "{out:?}"
    );
    assert!(
        out.json()["systemMessage"]
            .as_str()
            .is_some_and(|m| m.contains("src/[")),
        "{out:?}"
    );

    // Gemini CLI gets the same systemMessage.
    let payload = json!({
        "session_id": "g-1", "cwd": root, "hook_event_name": "AfterTool",
        "tool_name": "write_file",
        "tool_input": {"file_path": root.join("src/greet.sh"), "content": "x"},
    });
    let out = hook("after-tool", &root, &payload.to_string());
    stop_console_server(&root);
    assert!(
        out.json()["systemMessage"]
            .as_str()
            .is_some_and(|m| m.contains("src/[")),
        "{out:?}"
    );
}

#[test]
fn a_file_name_with_a_newline_never_becomes_another_path() {
    let repo = git_repo();
    let root = canonical(repo.path());
    let tricky = root.join("x\n/etc/passwd");
    std::fs::create_dir_all(tricky.parent().unwrap()).unwrap();
    std::fs::write(&tricky, "not the real one\n").unwrap();
    write_script(
        &root,
        "lister",
        "printf '%s' \"$CP_CHANGED_FILES\" > \"$CP_PROJECT_ROOT/list.txt\"\ncp \"$CP_CHANGED_FILES0\" \"$CP_PROJECT_ROOT/list0.bin\"",
    );
    write_config(
        &root,
        &json!([def("CB1", "lister", &json!({"pattern": ["passwd"]}))]),
    );
    let out = hook("post-tool-use", &root, &write_payload(&root, &tricky));
    stop_console_server(&root);
    assert_eq!(out.code, Some(0), "{out:?}");
    let list = std::fs::read_to_string(root.join("list.txt")).unwrap();
    assert!(!list.contains("/etc/passwd"), "{list:?}");
    assert_eq!(list, "");
    assert_eq!(
        std::fs::read(root.join("list0.bin")).unwrap(),
        b"x\n/etc/passwd\0"
    );
    let text = model_text(&out.json());
    assert!(
        text.contains("Left out of CP_CHANGED_FILES") && text.contains("`x\\n/etc/passwd`"),
        "{text}"
    );
}

#[test]
fn a_hook_outside_any_project_creates_nothing() {
    let outside = tempfile::tempdir().unwrap();
    let dir = canonical(outside.path());
    std::fs::write(dir.join("a.sh"), "echo\n").unwrap();
    let out = hook(
        "post-tool-use",
        &dir,
        &write_payload(&dir, &dir.join("a.sh")),
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    let stop = json!({"session_id": "s", "cwd": dir, "hook_event_name": "Stop", "stop_hook_active": false});
    let out2 = hook("stop", &dir, &stop.to_string());
    assert_eq!(out2.code, Some(0), "{out2:?}");
    let out3 = hook("after-agent", &dir, &stop.to_string());
    assert_eq!(out3.code, Some(0), "{out3:?}");
    let entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        entries,
        vec![std::ffi::OsString::from("a.sh")],
        "{out:?} {out2:?}"
    );
    // Inside a directory that already has `.context-pilot/`, hooks act.
    std::fs::create_dir(dir.join(".context-pilot")).unwrap();
    let out = hook("stop", &dir, &stop.to_string());
    stop_console_server(&dir);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(dir.join(".context-pilot/logs").exists(), "{out:?}");
}

/// Every file under `dir`, recursively, read as (lossy) text.
fn all_text_under(dir: &Path) -> String {
    let mut out = String::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.push_str(&all_text_under(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
    out
}

#[test]
fn the_tui_tells_the_person_about_a_broken_config_and_keeps_it_in_the_session() {
    let repo = git_repo();
    let root = canonical(repo.path());
    write_script(&root, "broken", "true");
    write_config(
        &root,
        &json!([def("CB1", "broken", &json!({"pattern": ["src/["]}))]),
    );
    let wait = std::time::Duration::from_secs(60);
    let mut tui = cp_e2e::TuiSession::start(&root, &[], &[]).unwrap();
    let screen = tui.wait_for("Callbacks config problem", wait).unwrap();
    assert!(screen.contains("broken"), "{screen}");
    tui.send(b"\x03"); // Ctrl-C with nothing running quits at once.
    assert_eq!(tui.wait_exit(wait).unwrap(), 0);
    // The warning is part of the saved conversation: a durable fact, not a passing flash.
    let saved = all_text_under(&root.join(".context-pilot/state"));
    assert!(
        saved.contains("Callbacks config problem") && saved.contains("src/["),
        "not in the saved session"
    );
}
