//! The file tools against hostile or unusual files: hard links, symlinks, FIFOs, huge sparse
//! files, and a directory swapped for an escaping symlink while the tools run.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use cp_base::{Notifier, Project, Registry, ToolCall, ToolEnv, ToolResult, WorkerId};
use serde_json::{Value, json};

use super::FilesModule;

/// A project root `proj/` and a sibling directory `outside/` in one temp dir.
fn setup() -> (tempfile::TempDir, Registry, ToolEnv, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let root = base.join("proj");
    let outside = base.join("outside");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let mut registry = Registry::new();
    registry.register(Box::new(FilesModule));
    let env = ToolEnv::new(Project::at(root), WorkerId::default(), Notifier::new());
    (tmp, registry, env, outside)
}

fn call(registry: &Registry, env: &ToolEnv, name: &str, args: Value) -> ToolResult {
    registry.call(&ToolCall::new("t", name, args), env)
}

fn root(env: &ToolEnv) -> &Path {
    env.project.root()
}

#[test]
fn writing_or_editing_through_a_hard_link_leaves_the_outside_file_alone() {
    let (_t, r, env, outside) = setup();
    let target = outside.join("shared.txt");
    std::fs::write(&target, "outside original\n").unwrap();
    std::fs::hard_link(&target, root(&env).join("link.txt")).unwrap();
    std::fs::hard_link(&target, root(&env).join("link2.txt")).unwrap();
    let write = call(
        &r,
        &env,
        "File_write",
        json!({"file_path": "link.txt", "content": "new\n"}),
    );
    assert!(!write.is_error, "{}", write.text);
    let edit = call(
        &r,
        &env,
        "File_edit",
        json!({"file_path": "link2.txt", "old_string": "original", "new_string": "edited"}),
    );
    assert!(!edit.is_error, "{}", edit.text);
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "outside original\n"
    );
    assert_eq!(
        std::fs::read_to_string(root(&env).join("link.txt")).unwrap(),
        "new\n"
    );
    assert_eq!(
        std::fs::read_to_string(root(&env).join("link2.txt")).unwrap(),
        "outside edited\n"
    );
}

#[test]
fn write_and_edit_keep_the_file_mode_and_leave_no_temp_files() {
    let (_t, r, env, _) = setup();
    let script = root(&env).join("run.sh");
    std::fs::write(&script, "echo one\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o750)).unwrap();
    call(
        &r,
        &env,
        "File_edit",
        json!({"file_path": "run.sh", "old_string": "one", "new_string": "two"}),
    );
    assert_eq!(
        std::fs::metadata(&script).unwrap().permissions().mode() & 0o7777,
        0o750
    );
    call(
        &r,
        &env,
        "File_write",
        json!({"file_path": "run.sh", "content": "echo three\n"}),
    );
    assert_eq!(
        std::fs::metadata(&script).unwrap().permissions().mode() & 0o7777,
        0o750
    );
    assert_eq!(std::fs::read_to_string(&script).unwrap(), "echo three\n");
    let names: Vec<_> = std::fs::read_dir(root(&env))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n != ".context-pilot")
        .collect();
    assert_eq!(names, ["run.sh"]);
}

#[test]
fn deleting_a_symlink_removes_the_link_and_keeps_the_target() {
    let (_t, r, env, _) = setup();
    std::fs::write(root(&env).join("real.txt"), "keep me\n").unwrap();
    std::os::unix::fs::symlink("real.txt", root(&env).join("alias.txt")).unwrap();
    let result = call(&r, &env, "File_delete", json!({"file_path": "alias.txt"}));
    assert!(!result.is_error, "{}", result.text);
    assert!(result.text.contains("alias.txt"), "{}", result.text);
    assert!(std::fs::symlink_metadata(root(&env).join("alias.txt")).is_err());
    assert_eq!(
        std::fs::read_to_string(root(&env).join("real.txt")).unwrap(),
        "keep me\n"
    );
}

#[test]
fn a_trailing_slash_is_an_error_naming_the_parameter() {
    let (_t, r, env, _) = setup();
    let result = call(
        &r,
        &env,
        "File_write",
        json!({"file_path": "newdir/", "content": "x"}),
    );
    assert!(
        result.is_error
            && result.text.contains("'file_path'")
            && result.text.contains("ends with '/'"),
        "{}",
        result.text
    );
    assert!(!root(&env).join("newdir").exists());
}

/// Runs `f` on a thread and fails the test (instead of hanging it) if it takes over 60 s.
fn within_a_minute<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the tool call hung for 60 s")
}

#[test]
fn a_fifo_is_refused_without_hanging() {
    let (_t, r, env, _) = setup();
    let fifo = root(&env).join("pipe");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo has no other preconditions.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
    let r = Arc::new(r);
    for (name, args) in [
        ("File_read", json!({"file_path": "pipe"})),
        (
            "File_edit",
            json!({"file_path": "pipe", "old_string": "a", "new_string": "b"}),
        ),
    ] {
        let (r, env) = (Arc::clone(&r), env.clone());
        let result = within_a_minute(move || call(&r, &env, name, args));
        assert!(
            result.is_error && result.text.contains("not a regular file"),
            "{name}: {}",
            result.text
        );
    }
}

fn peak_rss_kib() -> i64 {
    // SAFETY: getrusage only writes into the struct we pass.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    assert_eq!(
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &raw mut usage) },
        0
    );
    usage.ru_maxrss
}

#[test]
fn reading_one_line_of_a_3_gb_sparse_file_reads_only_a_bounded_part() {
    let (_t, r, env, _) = setup();
    let path = root(&env).join("huge.log");
    std::fs::write(&path, "first line\nsecond line\n").unwrap();
    // Sparse: the 3 GB of zeros cost no disk.
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(3 << 30)
        .unwrap();
    let before = peak_rss_kib();
    let result = call(
        &r,
        &env,
        "File_read",
        json!({"file_path": "huge.log", "limit": 1}),
    );
    let grown_mib = (peak_rss_kib() - before) / 1024;
    assert!(!result.is_error, "{}", result.text);
    assert!(
        result.text.starts_with("     1\tfirst line\n"),
        "{}",
        result.text
    );
    assert!(result.text.contains("reading stopped"), "{}", result.text);
    assert!(
        grown_mib < 512,
        "the read grew the process by {grown_mib} MiB"
    );
}

/// `renameat2(RENAME_EXCHANGE)` of two paths: each atomically takes the other's place.
fn exchange(a: &std::ffi::CStr, b: &std::ffi::CStr) {
    // SAFETY: valid NUL-terminated paths; the syscall reads them and nothing else.
    unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        );
    }
}

#[test]
fn swapping_a_directory_with_an_escaping_symlink_never_reaches_outside() {
    let (_t, r, env, outside) = setup();
    std::fs::create_dir(root(&env).join("real")).unwrap();
    std::fs::write(root(&env).join("real/f.txt"), "inside\n").unwrap();
    std::fs::write(outside.join("f.txt"), "OUTSIDE SECRET\n").unwrap();
    std::os::unix::fs::symlink(&outside, root(&env).join("evil")).unwrap();
    let real = std::ffi::CString::new(root(&env).join("real").to_str().unwrap()).unwrap();
    let evil = std::ffi::CString::new(root(&env).join("evil").to_str().unwrap()).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                exchange(&real, &evil);
            }
        })
    };
    let mut leaks = Vec::new();
    for i in 0..1500 {
        // Either call may fail while `real` is the symlink; neither may reach outside.
        call(
            &r,
            &env,
            "File_write",
            json!({"file_path": "real/w.txt", "content": format!("write {i}\n")}),
        );
        let shown = call(&r, &env, "File_read", json!({"file_path": "real/f.txt"}));
        if shown.text.contains("OUTSIDE") {
            leaks.push(shown.text);
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    let mut outside_names: Vec<_> = std::fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    outside_names.sort();
    assert_eq!(outside_names, ["f.txt"], "a file was created outside");
    assert_eq!(
        std::fs::read_to_string(outside.join("f.txt")).unwrap(),
        "OUTSIDE SECRET\n"
    );
    assert!(
        leaks.is_empty(),
        "File_read returned outside content {} times, e.g. {:?}",
        leaks.len(),
        leaks.first()
    );
}

#[test]
fn symlinks_that_stay_inside_keep_working_and_writes_replace_the_target() {
    let (_t, r, env, _) = setup();
    let root = root(&env).to_path_buf();
    std::fs::create_dir(root.join("src")).unwrap();
    std::fs::write(root.join("real.txt"), "one\n").unwrap();
    std::os::unix::fs::symlink("real.txt", root.join("alias.txt")).unwrap();
    // An absolute link to a directory inside the project works too.
    std::os::unix::fs::symlink(root.join("src"), root.join("inner")).unwrap();
    let write = call(
        &r,
        &env,
        "File_write",
        json!({"file_path": "alias.txt", "content": "two\n"}),
    );
    assert!(!write.is_error, "{}", write.text);
    assert!(
        std::fs::symlink_metadata(root.join("alias.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        std::fs::read_to_string(root.join("real.txt")).unwrap(),
        "two\n"
    );
    let edit = call(
        &r,
        &env,
        "File_edit",
        json!({"file_path": "alias.txt", "old_string": "two", "new_string": "three"}),
    );
    assert!(!edit.is_error, "{}", edit.text);
    let shown = call(&r, &env, "File_read", json!({"file_path": "alias.txt"}));
    assert_eq!(shown.text, "     1\tthree\n");
    let nested = call(
        &r,
        &env,
        "File_write",
        json!({"file_path": "inner/new/a.rs", "content": "fn a() {}\n"}),
    );
    assert!(!nested.is_error, "{}", nested.text);
    assert_eq!(
        std::fs::read_to_string(root.join("src/new/a.rs")).unwrap(),
        "fn a() {}\n"
    );
}

#[test]
fn a_file_name_near_the_length_limit_can_be_written_and_user_temp_files_stay() {
    let (_t, r, env, _) = setup();
    // Looks like a temp file of a dead writer, but is not one of ours: it must survive.
    let lookalike = root(&env).join(format!(".draft.tmp.{}.1", u32::MAX));
    std::fs::write(&lookalike, "mine").unwrap();
    let name = "n".repeat(250);
    let result = call(
        &r,
        &env,
        "File_write",
        json!({"file_path": name, "content": "x"}),
    );
    assert!(!result.is_error, "{}", result.text);
    assert_eq!(
        std::fs::read_to_string(root(&env).join(&name)).unwrap(),
        "x"
    );
    assert_eq!(std::fs::read_to_string(&lookalike).unwrap(), "mine");
}
