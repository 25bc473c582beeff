//! The four file tools through the registry, as a model or the palette calls them.

use cp_base::{
    ChangeKind, FileChange, Notifier, Project, Registry, ToolCall, ToolEnv, ToolResult, WorkerId,
};
use serde_json::{Value, json};

use super::FilesModule;

fn setup() -> (tempfile::TempDir, Registry, ToolEnv) {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let mut registry = Registry::new();
    registry.register(Box::new(FilesModule));
    let env = ToolEnv::new(Project::at(root), WorkerId::default(), Notifier::new());
    (tmp, registry, env)
}

fn call(registry: &Registry, env: &ToolEnv, name: &str, args: Value) -> ToolResult {
    registry.call(&ToolCall::new("t", name, args), env)
}

#[test]
fn write_creates_directories_and_reports_created_then_modified() {
    let (_t, r, env) = setup();
    let first = call(
        &r,
        &env,
        "File_write",
        json!({"file_path": "a/b/c.txt", "content": "one\ntwo\n"}),
    );
    assert!(!first.is_error, "{}", first.text);
    assert_eq!(
        first.changes,
        vec![FileChange::new("a/b/c.txt", ChangeKind::Created)]
    );
    let second = call(
        &r,
        &env,
        "File_write",
        json!({"file_path": "a/b/c.txt", "content": "x"}),
    );
    assert_eq!(
        second.changes,
        vec![FileChange::new("a/b/c.txt", ChangeKind::Modified)]
    );
    assert_eq!(
        std::fs::read_to_string(env.project.root().join("a/b/c.txt")).unwrap(),
        "x"
    );
}

#[test]
fn edit_needs_a_unique_existing_old_string() {
    let (_t, r, env) = setup();
    call(
        &r,
        &env,
        "File_write",
        json!({"file_path": "f.rs", "content": "let a = 1;\nlet a = 1;\nlet b = 2;\n"}),
    );
    let missing = call(
        &r,
        &env,
        "File_edit",
        json!({"file_path": "f.rs", "old_string": "let c", "new_string": "x"}),
    );
    assert!(
        missing.is_error && missing.text.contains("was not found"),
        "{}",
        missing.text
    );
    let twice = call(
        &r,
        &env,
        "File_edit",
        json!({"file_path": "f.rs", "old_string": "let a = 1;", "new_string": "x"}),
    );
    assert!(
        twice.is_error && twice.text.contains("occurs 2 times"),
        "{}",
        twice.text
    );
    assert!(twice.changes.is_empty());
    let all = call(
        &r,
        &env,
        "File_edit",
        json!({"file_path": "f.rs", "old_string": "let a = 1;", "new_string": "let a = 9;", "replace_all": true}),
    );
    assert!(!all.is_error, "{}", all.text);
    assert_eq!(
        all.changes,
        vec![FileChange::new("f.rs", ChangeKind::Modified)]
    );
    let one = call(
        &r,
        &env,
        "File_edit",
        json!({"file_path": "f.rs", "old_string": "let b = 2;", "new_string": "let b = 3;"}),
    );
    assert!(one.text.contains("replaced 1 occurrence"));
    let text = std::fs::read_to_string(env.project.root().join("f.rs")).unwrap();
    assert_eq!(text, "let a = 9;\nlet a = 9;\nlet b = 3;\n");
    let same = call(
        &r,
        &env,
        "File_edit",
        json!({"file_path": "f.rs", "old_string": "x", "new_string": "x"}),
    );
    assert!(same.is_error);
    let absent = call(
        &r,
        &env,
        "File_edit",
        json!({"file_path": "nope.rs", "old_string": "x", "new_string": "y"}),
    );
    assert!(
        absent.is_error && absent.text.contains("does not exist"),
        "{}",
        absent.text
    );
}

#[test]
fn read_numbers_lines_and_pages() {
    let (_t, r, env) = setup();
    let content: Vec<String> = (1..=10).map(|i| format!("line {i}")).collect();
    let content = content.join("\n") + "\n";
    call(
        &r,
        &env,
        "File_write",
        json!({"file_path": "r.txt", "content": content}),
    );
    let page = call(
        &r,
        &env,
        "File_read",
        json!({"file_path": "r.txt", "offset": 3, "limit": 2}),
    );
    assert_eq!(
        page.text,
        "     3\tline 3\n     4\tline 4\n[lines 3-4 of 10; use offset=5 to read on]"
    );
    assert!(page.changes.is_empty());
    let past = call(
        &r,
        &env,
        "File_read",
        json!({"file_path": "r.txt", "offset": 11}),
    );
    assert!(past.is_error && past.text.contains("past the end"));
    std::fs::write(env.project.root().join("bin"), [0xff, 0xfe, 0x00]).unwrap();
    let binary = call(&r, &env, "File_read", json!({"file_path": "bin"}));
    assert!(binary.is_error && binary.text.contains("not UTF-8"));
}

#[test]
fn delete_reports_the_change_and_refuses_directories() {
    let (_t, r, env) = setup();
    call(
        &r,
        &env,
        "File_write",
        json!({"file_path": "d/x.txt", "content": "x"}),
    );
    let dir = call(&r, &env, "File_delete", json!({"file_path": "d"}));
    assert!(dir.is_error && dir.text.contains("directory"));
    let ok = call(&r, &env, "File_delete", json!({"file_path": "d/x.txt"}));
    assert_eq!(
        ok.changes,
        vec![FileChange::new("d/x.txt", ChangeKind::Deleted)]
    );
    let again = call(&r, &env, "File_delete", json!({"file_path": "d/x.txt"}));
    assert!(again.is_error && again.text.contains("does not exist"));
}

#[test]
fn every_tool_refuses_paths_outside_the_root_and_changes_nothing() {
    let (tmp, r, env) = setup();
    let outside = tmp.path().parent().unwrap().join("cp-outside-target.txt");
    for (name, args) in [
        (
            "File_write",
            json!({"file_path": "../escape.txt", "content": "x"}),
        ),
        (
            "File_write",
            json!({"file_path": outside.to_str().unwrap(), "content": "x"}),
        ),
        ("File_read", json!({"file_path": "/etc/hostname"})),
        ("File_delete", json!({"file_path": "../x"})),
        (
            "File_edit",
            json!({"file_path": "../x", "old_string": "a", "new_string": "b"}),
        ),
    ] {
        let result = call(&r, &env, name, args);
        assert!(
            result.is_error && result.text.contains("outside the project root"),
            "{name}: {}",
            result.text
        );
        assert!(result.changes.is_empty());
    }
    assert!(!outside.exists());
    std::os::unix::fs::symlink("/tmp", env.project.root().join("tmplink")).unwrap();
    let link = call(
        &r,
        &env,
        "File_write",
        json!({"file_path": "tmplink/cp-escape.txt", "content": "x"}),
    );
    assert!(
        link.is_error && link.text.contains("symlink"),
        "{}",
        link.text
    );
}
