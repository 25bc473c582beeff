//! `context-pilot hook …` end to end, for background callback runs: a run the agent's edit
//! starts outlives the hook process, is carried to the worker's next hook call, and is
//! reported exactly once, whichever process (hook, MCP server) started it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::path::Path;
use std::time::Duration;

use crate::util::{canonical, create_callback, fixture, hook, stop_console_server};
use cp_e2e::{git, git_repo};
use serde_json::json;

/// A repo with `src/greet.sh` and `README.md` committed, and a background callback on `*.sh`
/// that waits until the test releases it ([`let_the_run_end`]), prints a line and exits with
/// `exit_code`. The test decides when the run ends, so no step races the script's timing.
fn project_with_background_callback(exit_code: i32) -> (tempfile::TempDir, std::path::PathBuf) {
    let repo = git_repo();
    let root = canonical(repo.path());
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/greet.sh"), "echo hello\n").unwrap();
    std::fs::write(root.join("README.md"), "hi\n").unwrap();
    create_callback(
        &root,
        &json!({
            "action": "create", "name": "slow-check", "pattern": ["*.sh"],
            "script_content": format!("n=0; while [ ! -e \"$CP_PROJECT_ROOT/{RELEASE}\" ] && [ $n -lt 1200 ]; do sleep 0.05; n=$((n+1)); done\necho \"slow output for $CP_CHANGED_FILES\"\nexit {exit_code}"),
            "blocking": false, "success_message": "greet is fine"
        }),
    );
    (repo, root)
}

/// The agent edits `src/greet.sh`: the callback starts in the background. Returns the run id.
fn start_background_run(root: &Path) -> String {
    let first = hook(
        "post-tool-use",
        root,
        &fixture("claude_post_tool_use_write.json", root, root),
    );
    assert_eq!(first.code, Some(0), "{first:?}");
    let context = first.json()["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_, rest) = context
        .split_once("Callback 'slow-check' started in background (run ")
        .unwrap_or_else(|| panic!("not started in background: {context}"));
    rest.split(')').next().unwrap().to_owned()
}

/// The agent's next edit, of a file no callback matches.
fn next_edit(root: &Path) -> crate::util::HookRun {
    hook(
        "post-tool-use",
        root,
        &fixture("claude_post_tool_use_edit_readme.json", root, root),
    )
}

/// The file whose existence lets the background callback's script finish.
const RELEASE: &str = ".context-pilot/run/release-slow-check";

/// Lets the background run finish, and waits until the console server has recorded its end
/// (every session's metadata says it is no longer running): a durable fact, not a guess at how
/// long the script takes on this machine.
fn let_the_run_end(root: &Path) {
    std::fs::write(root.join(RELEASE), "").unwrap();
    let consoles = root.join(".context-pilot/run/consoles");
    let metas = || -> Vec<String> {
        std::fs::read_dir(&consoles)
            .map(|d| {
                d.flatten()
                    .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
                    .filter_map(|e| std::fs::read_to_string(e.path()).ok())
                    .collect()
            })
            .unwrap_or_default()
    };
    cp_e2e::eventually_with(
        "the background run to end",
        Duration::from_secs(60),
        || {
            let metas = metas();
            !metas.is_empty() && metas.iter().all(|m| !m.contains("\"running\""))
        },
        || format!("the consoles: {:?}", metas()),
    );
}

#[test]
fn a_failed_background_run_is_reported_once_on_a_later_hook_call() {
    let (_repo, root) = project_with_background_callback(3);
    let run_id = start_background_run(&root);
    let state = root.join(".context-pilot/state/main");
    assert!(
        state.join("hook-modules.json").exists(),
        "the run in flight is saved for the next hook"
    );
    let_the_run_end(&root);

    let second = next_edit(&root);
    assert_eq!(second.code, Some(0), "{second:?}");
    assert_eq!(second.stderr, "", "{second:?}");
    let reply = second.json();
    assert_eq!(reply["decision"], "block", "{reply}");
    let reason = reply["reason"].as_str().unwrap();
    assert!(reason.contains("Callback 'slow-check' FAILED"), "{reason}");
    assert!(reason.contains(&run_id), "{reason}");
    assert!(
        reason.contains("slow output for src/greet.sh"),
        "the output tail: {reason}"
    );

    let third = next_edit(&root);
    stop_console_server(&root);
    assert_eq!(third.code, Some(0), "{third:?}");
    assert_eq!(third.stdout, "", "delivered once: {third:?}");
    assert!(!state.join("hook-modules.json").exists());
    assert!(
        !state.join("session.json").exists(),
        "the TUI's session is not the hook's"
    );
}

#[test]
fn a_passing_background_run_is_reported_once_with_its_success_message() {
    let (_repo, root) = project_with_background_callback(0);
    let run_id = start_background_run(&root);
    let_the_run_end(&root);

    let second = next_edit(&root);
    let reply = second.json();
    assert!(reply.get("decision").is_none(), "{reply}");
    let context = reply["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        context.contains("Callback 'slow-check' passed: greet is fine"),
        "{context}"
    );
    assert!(context.contains(&run_id), "{context}");

    // The Stop hook comes next: nothing left to report, and the edits are committed.
    git(&root, &["add", "."]);
    git(&root, &["commit", "-qm", "edits"]);
    let stop = hook("stop", &root, &fixture("claude_stop.json", &root, &root));
    let again = next_edit(&root);
    stop_console_server(&root);
    assert_eq!((stop.code, stop.stdout.as_str()), (Some(0), ""), "{stop:?}");
    assert_eq!(again.stdout, "", "delivered once: {again:?}");
}

#[test]
fn a_run_still_going_stays_saved_until_it_ends() {
    let (_repo, root) = project_with_background_callback(3);
    let run_id = start_background_run(&root);
    // At once: the script still sleeps, so there is nothing to say yet.
    let early = next_edit(&root);
    assert_eq!(early.stdout, "", "{early:?}");
    assert!(
        root.join(".context-pilot/state/main/hook-modules.json")
            .exists()
    );
    let_the_run_end(&root);
    let late = next_edit(&root);
    stop_console_server(&root);
    let reason = late.json()["reason"].as_str().unwrap().to_owned();
    assert!(reason.contains(&run_id), "{reason}");
}

#[test]
fn parallel_hooks_of_one_worker_both_finish_and_report_once() {
    let (_repo, root) = project_with_background_callback(3);
    let run_id = start_background_run(&root);
    let_the_run_end(&root);

    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| next_edit(&root));
        let b = s.spawn(|| {
            hook(
                "post-tool-use",
                &root,
                &fixture("claude_post_tool_use_read.json", &root, &root),
            )
        });
        (a.join().unwrap(), b.join().unwrap())
    });
    let third = next_edit(&root);
    stop_console_server(&root);
    assert_eq!((a.code, b.code), (Some(0), Some(0)), "{a:?} {b:?}");
    let reports = [&a, &b, &third]
        .iter()
        .filter(|out| out.stdout.contains(&run_id))
        .count();
    assert_eq!(reports, 1, "{a:?}\n{b:?}\n{third:?}");
    assert_eq!(third.stdout, "", "{third:?}");
}

#[test]
fn an_unreadable_saved_state_is_set_aside_and_the_hook_goes_on() {
    let repo = git_repo();
    let root = canonical(repo.path());
    std::fs::write(root.join("README.md"), "hi\n").unwrap();
    let state = root.join(".context-pilot/state/main");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("hook-modules.json"), "{\"snapshots\": [tru").unwrap();

    let out = next_edit(&root);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "", "{out:?}");
    assert!(
        out.stderr.contains("hook-modules.json is unreadable")
            && out.stderr.contains("set aside as"),
        "{}",
        out.stderr
    );
    assert!(!state.join("hook-modules.json").exists());
    let aside: Vec<_> = std::fs::read_dir(&state)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("hook-modules.json.unreadable-")
        })
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    assert_eq!(
        std::fs::read_to_string(&aside[0]).unwrap(),
        "{\"snapshots\": [tru",
        "nothing is lost"
    );
    // The next call is quiet: the bad file is not read again.
    let next = next_edit(&root);
    assert_eq!((next.stdout.as_str(), next.stderr.as_str()), ("", ""));
}

#[test]
fn a_background_run_an_mcp_server_left_behind_is_reported_by_the_next_hook() {
    use std::io::{BufRead as _, BufReader, Write as _};
    use std::process::Stdio;

    let (_repo, root) = project_with_background_callback(3);
    let mut child = crate::util::context_pilot(&root)
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "raw-test", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "File_write",
                       "arguments": {"file_path": "src/greet.sh", "content": "echo hello, mcp\n"}}}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    let mut call = serde_json::Value::Null;
    for _ in 0..10 {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let reply: serde_json::Value = serde_json::from_str(&line).unwrap();
        if reply["id"] == 2 {
            call = reply;
            break;
        }
    }
    let text = call["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{call}"))
        .to_owned();
    let (_, rest) = text
        .split_once("Callback 'slow-check' started in background (run ")
        .unwrap_or_else(|| panic!("{text}"));
    let run_id = rest.split(')').next().unwrap().to_owned();
    // The client goes away while the script still runs.
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");

    let_the_run_end(&root);
    let next = next_edit(&root);
    let again = next_edit(&root);
    stop_console_server(&root);
    let reason = next.json()["reason"].as_str().unwrap().to_owned();
    assert!(reason.contains(&run_id), "{reason}");
    assert!(reason.contains("slow output for src/greet.sh"), "{reason}");
    assert_eq!(again.stdout, "", "delivered once: {again:?}");
}
