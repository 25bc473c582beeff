//! `context-pilot hook …` end to end: the real binary fed the agents' payloads (fixtures),
//! on real git repositories, with callbacks running in the real console server. Background
//! runs carried between hook calls are in `hooks_background.rs`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::path::Path;
use std::time::Duration;

use crate::util::{canonical, create_callback, fixture, hook, hook_with_env, stop_console_server};
use cp_e2e::{TuiSession, git, git_repo};
use serde_json::json;

/// A repo with `src/greet.sh` committed and a blocking callback on `*.sh` that prints
/// `checked <files>` and exits with `exit_code`.
fn project_with_callback(exit_code: i32) -> (tempfile::TempDir, std::path::PathBuf) {
    let repo = git_repo();
    let root = canonical(repo.path());
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/greet.sh"), "echo hello\n").unwrap();
    create_callback(
        &root,
        &json!({
            "action": "create", "name": "greet-check", "pattern": ["*.sh"],
            "script_content": format!("echo \"checked $CP_CHANGED_FILES\"\nexit {exit_code}"),
            "blocking": true, "timeout": 60
        }),
    );
    (repo, root)
}

#[test]
fn claude_write_gets_the_blocking_callback_result_as_context() {
    let (_repo, root) = project_with_callback(0);
    let out = hook(
        "post-tool-use",
        &root,
        &fixture("claude_post_tool_use_write.json", &root, &root),
    );
    stop_console_server(&root);
    assert_eq!(out.code, Some(0), "{out:?}");
    let reply = out.json();
    assert_eq!(reply["hookSpecificOutput"]["hookEventName"], "PostToolUse");
    let context = reply["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        context.contains("Callback 'greet-check' passed"),
        "{context}"
    );
    assert!(reply.get("decision").is_none(), "{reply}");
}

#[test]
fn a_callbacks_erased_progress_bar_reaches_the_agent_as_a_terminal_shows_it() {
    let repo = git_repo();
    let root = canonical(repo.path());
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/greet.sh"), "echo hello\n").unwrap();
    // cargo's way: a coloured status, a progress bar, then `\r` and erase-to-end-of-line
    // (`ESC[K`) before the next message.
    let script = r"printf '\033[1;32m   Compiling\033[0m demo-crate v0.1.0\n'
printf '\033[1;36m    Building\033[0m [=====>     ] 2/3: demo-crate, demo-crate(test)'
printf '\r\033[K'
printf 'note: checks done\n'";
    create_callback(
        &root,
        &json!({
            "action": "create", "name": "cargo-like", "pattern": ["*.sh"],
            "script_content": script, "blocking": true, "timeout": 60
        }),
    );
    let out = hook(
        "post-tool-use",
        &root,
        &fixture("claude_post_tool_use_write.json", &root, &root),
    );
    stop_console_server(&root);
    assert_eq!(out.code, Some(0), "{out:?}");
    let reply = out.json();
    let context = reply["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    // Exactly the two lines a terminal shows: no remnant of the bar, no escape sequence.
    let shown =
        "Last lines of output:\n```\n   Compiling demo-crate v0.1.0\nnote: checks done\n```";
    assert!(context.contains(shown), "{context}");
    assert!(!context.contains("Building"), "{context}");
    assert!(!context.contains('\u{1b}'), "{context}");
}

#[test]
fn the_verdicts_are_reported_to_the_runner_that_started_the_agent() {
    let (_repo, root) = project_with_callback(0);
    let reports = tempfile::NamedTempFile::new().unwrap();
    let env = [(cp_agent_cli::HOOK_REPORT_ENV, reports.path())];
    let edit = hook_with_env(
        "after-tool",
        &root,
        &fixture("gemini_after_tool_write_file.json", &root, &root),
        &env,
    );
    assert_eq!(edit.code, Some(0), "{edit:?}");
    let stop = hook_with_env(
        "after-agent",
        &root,
        &fixture("gemini_after_agent.json", &root, &root),
        &env,
    );
    stop_console_server(&root);
    assert_eq!(stop.code, Some(0), "{stop:?}");
    let lines: Vec<cp_agent_cli::HookReport> = std::fs::read_to_string(reports.path())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0].event, "AfterTool");
    assert_eq!(lines[0].verdict, cp_agent_cli::HookReportKind::Context);
    // In full, the callback's output included.
    assert!(
        lines[0].text.contains("Callback 'greet-check' passed"),
        "{lines:?}"
    );
    assert!(lines[0].text.contains("checked src/greet.sh"), "{lines:?}");
    // The edit is uncommitted: the stop gate sends the agent back to verify.
    assert_eq!(lines[1].event, "AfterAgent");
    assert_eq!(lines[1].verdict, cp_agent_cli::HookReportKind::Blocked);
    assert!(lines[1].text.contains("Stop gate: verify"), "{lines:?}");
}

#[test]
fn a_failing_blocking_callback_blocks_with_its_output() {
    let (_repo, root) = project_with_callback(4);
    // The agent works in src/ and names the file relative to it.
    let out = hook(
        "post-tool-use",
        &root.join("src"),
        &fixture(
            "claude_post_tool_use_edit_relative.json",
            &root,
            &root.join("src"),
        ),
    );
    stop_console_server(&root);
    assert_eq!(out.code, Some(0), "{out:?}");
    let reply = out.json();
    assert_eq!(reply["decision"], "block", "{reply}");
    let reason = reply["reason"].as_str().unwrap();
    assert!(reason.contains("Callback 'greet-check' FAILED"), "{reason}");
    // The relative path was resolved against the payload's cwd.
    assert!(reason.contains("checked src/greet.sh"), "{reason}");
    assert!(reason.contains("Edit src/greet.sh"), "{reason}");
}

#[test]
fn gemini_after_tool_appends_context_and_never_hides_the_result() {
    let (_repo, root) = project_with_callback(4);
    let out = hook(
        "after-tool",
        &root,
        &fixture("gemini_after_tool_replace.json", &root, &root),
    );
    let ok_out = {
        // write_file on a file no callback matches: nothing to add, but valid JSON.
        let payload = fixture("gemini_after_tool_write_file.json", &root, &root)
            .replace("src/greet.sh", "README.md");
        std::fs::write(root.join("README.md"), "hi\n").unwrap();
        hook("AfterTool", &root, &payload)
    };
    stop_console_server(&root);
    let reply = out.json();
    assert!(reply.get("decision").is_none(), "{reply}");
    assert_eq!(reply["hookSpecificOutput"]["hookEventName"], "AfterTool");
    let context = reply["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        context.contains("Callback 'greet-check' FAILED"),
        "{context}"
    );
    assert!(
        reply["systemMessage"]
            .as_str()
            .unwrap()
            .contains("callback failed")
    );
    assert_eq!(ok_out.code, Some(0));
    assert_eq!(ok_out.json(), json!({}));
}

#[test]
fn edits_outside_the_project_and_non_edit_tools_are_ignored() {
    let (_repo, root) = project_with_callback(4);
    let outside = hook(
        "post-tool-use",
        &root,
        &fixture("claude_post_tool_use_multiedit_outside.json", &root, &root),
    );
    assert_eq!(outside.code, Some(0));
    assert_eq!(outside.stdout, "", "{outside:?}");
    assert_eq!(outside.stderr, "", "{outside:?}");
    let read = hook(
        "post-tool-use",
        &root,
        &fixture("claude_post_tool_use_read.json", &root, &root),
    );
    assert_eq!(read.code, Some(0));
    assert_eq!(read.stdout, "", "{read:?}");
    // The notebook is inside but no callback matches `*.ipynb`.
    std::fs::write(root.join("src/analysis.ipynb"), "{}").unwrap();
    let notebook = hook(
        "post-tool-use",
        &root,
        &fixture("claude_post_tool_use_notebook_edit.json", &root, &root),
    );
    stop_console_server(&root);
    assert_eq!(notebook.code, Some(0));
    assert_eq!(notebook.stdout, "", "{notebook:?}");
}

#[test]
fn a_malformed_payload_exits_zero_and_says_why() {
    let repo = git_repo();
    let root = canonical(repo.path());
    let out = hook(
        "post-tool-use",
        &root,
        &fixture("malformed_truncated.json", &root, &root),
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr
            .starts_with("context-pilot hook post-tool-use: ignored a malformed payload: the payload is not valid JSON"),
        "{}",
        out.stderr
    );
    let wrong_shape = hook(
        "post-tool-use",
        &root,
        r#"{"tool_name": "Write", "tool_input": "x"}"#,
    );
    assert_eq!(wrong_shape.code, Some(0));
    assert!(
        wrong_shape
            .stderr
            .contains("'tool_input' must be an object"),
        "{wrong_shape:?}"
    );
    let empty_gemini = hook("after-agent", &root, "");
    assert_eq!(empty_gemini.code, Some(0));
    assert_eq!(
        empty_gemini.json(),
        json!({}),
        "Gemini parses stdout as JSON"
    );
    assert!(empty_gemini.stderr.contains("stdin is empty"));
    let log = std::fs::read_to_string(root.join(".context-pilot/logs/context-pilot.log")).unwrap();
    assert!(log.contains("ignored a malformed payload"), "{log}");
}

fn stop(root: &Path, name: &str, event: &str) -> crate::util::HookRun {
    hook(event, root, &fixture(name, root, root))
}

#[test]
fn claude_stop_blocks_then_gates_the_commit_then_passes() {
    let repo = git_repo();
    let root = canonical(repo.path());
    std::fs::write(root.join("run.sh"), "echo v1\n").unwrap();
    // The first hook call lays out `.context-pilot/`; commit it with the code.
    let _ = stop(&root, "claude_stop.json", "stop");
    git(&root, &["add", "."]);
    git(&root, &["commit", "-qm", "init"]);
    // Nothing changed: the agent may stop.
    let clean = stop(&root, "claude_stop.json", "stop");
    assert_eq!(
        (clean.code, clean.stdout.as_str()),
        (Some(0), ""),
        "{clean:?}"
    );

    std::fs::write(root.join("run.sh"), "echo v2\n").unwrap();
    let first = stop(&root, "claude_stop.json", "stop").json();
    assert_eq!(first["decision"], "block", "{first}");
    assert!(
        first["reason"].as_str().unwrap().contains("run.sh"),
        "{first}"
    );

    let second = stop(&root, "claude_stop_active.json", "stop").json();
    assert_eq!(second["decision"], "block", "{second}");
    assert!(
        second["reason"]
            .as_str()
            .unwrap()
            .contains("Commit your changes before stopping"),
        "{second}"
    );

    git(&root, &["commit", "-qam", "v2"]);
    let committed = stop(&root, "claude_stop_active.json", "stop");
    assert_eq!(committed.code, Some(0));
    assert_eq!(committed.stdout, "", "{committed:?}");
}

/// Issue 15: neither agent's `stop_hook_active` is trusted (Claude Code resets it after any
/// tool call; Gemini CLI does not send it reliably). Every payload here says `false`; the
/// blocks are counted per `session_id` across hook processes, and after `max_blocks` the
/// agent may stop and the person gets a `systemMessage` with what is left.
#[test]
fn the_block_limit_ends_the_loop_with_a_system_message_for_both_agents() {
    for (fixture_name, event, block_key) in [
        ("claude_stop.json", "stop", "decision"),
        ("gemini_after_agent.json", "after-agent", "decision"),
    ] {
        let repo = git_repo();
        let root = canonical(repo.path());
        std::fs::write(root.join("run.sh"), "echo v1\n").unwrap();
        let _ = stop(&root, fixture_name, event);
        git(&root, &["add", "."]);
        git(&root, &["commit", "-qm", "init"]);
        std::fs::create_dir_all(root.join(".context-pilot")).unwrap();
        std::fs::write(
            root.join(".context-pilot/config.json"),
            r#"{"checkpoint": {"max_blocks": 2, "tests": {"command": ""}}}"#,
        )
        .unwrap();
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-qm", "config"]);
        // A clean stop resets the count the layout call above started.
        let clean = stop(&root, fixture_name, event);
        assert!(
            clean.stdout.is_empty() || clean.json() == json!({}),
            "{clean:?}"
        );
        std::fs::write(root.join("run.sh"), "echo v2\n").unwrap();

        for n in 1..=2 {
            let blocked = stop(&root, fixture_name, event).json();
            assert!(
                blocked.get(block_key).is_some(),
                "{event} block {n}: {blocked}"
            );
            assert!(blocked.get("systemMessage").is_none(), "{blocked}");
        }
        let last = stop(&root, fixture_name, event);
        assert_eq!(last.code, Some(0), "{last:?}");
        let reply = last.json();
        assert!(
            reply.get("decision").is_none(),
            "{event}: the agent may stop: {reply}"
        );
        let message = reply["systemMessage"].as_str().unwrap_or_default();
        assert!(message.contains("blocked it 2 time(s) in a row"), "{reply}");
        assert!(message.contains("Uncommitted files (1): run.sh"), "{reply}");
        let state = std::fs::read_to_string(root.join(".context-pilot/state/main/checkpoint.json"))
            .unwrap();
        let state: serde_json::Value = serde_json::from_str(&state).unwrap();
        assert!(state["last_report"]["gave_up"].is_string(), "{state}");
    }
}

#[test]
fn gemini_after_agent_asks_for_a_retry_and_outside_git_passes() {
    let repo = git_repo();
    let root = canonical(repo.path());
    std::fs::write(root.join("run.sh"), "echo v1\n").unwrap();
    let retry = stop(&root, "gemini_after_agent.json", "after-agent").json();
    assert_eq!(retry["decision"], "deny", "{retry}");
    assert!(
        retry["reason"].as_str().unwrap().contains("run.sh"),
        "{retry}"
    );

    // Not a repository: the checkpoint fails open.
    let plain = tempfile::tempdir().unwrap();
    let plain_root = canonical(plain.path());
    std::fs::write(plain_root.join("run.sh"), "echo\n").unwrap();
    let pass = stop(&plain_root, "gemini_after_agent.json", "after-agent");
    assert_eq!(pass.code, Some(0));
    assert_eq!(pass.json(), json!({}));
}

#[test]
fn background_results_reach_the_agent_on_the_next_hook_call() {
    let repo = git_repo();
    let root = canonical(repo.path());
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/greet.sh"), "echo hello\n").unwrap();
    // A notification left by an earlier process of this worker (an MCP server that exited,
    // or a background run that reported after its hook replied).
    let outbox = root.join(".context-pilot/state/main/notices.json");
    std::fs::create_dir_all(outbox.parent().unwrap()).unwrap();
    std::fs::write(
        &outbox,
        json!({"undelivered": [{"source": "callback", "level": "error",
            "text": "Callback 'slow-tests' FAILED (exited with code 1)"}]})
        .to_string(),
    )
    .unwrap();
    let out = hook(
        "post-tool-use",
        &root,
        &fixture("claude_post_tool_use_write.json", &root, &root),
    );
    let reply = out.json();
    assert_eq!(reply["decision"], "block", "{reply}");
    assert!(
        reply["reason"].as_str().unwrap().contains("slow-tests"),
        "{reply}"
    );
    // Delivered once.
    let again = hook(
        "post-tool-use",
        &root,
        &fixture("claude_post_tool_use_write.json", &root, &root),
    );
    stop_console_server(&root);
    assert_eq!(again.stdout, "", "{again:?}");
}

#[test]
fn a_hook_fired_while_the_tui_runs_shares_its_callbacks() {
    let repo = git_repo();
    let root = canonical(repo.path());
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/greet.sh"), "echo hello\n").unwrap();
    let wait = Duration::from_secs(20);
    let mut tui = TuiSession::start(&root, &[], &[("CP_WORKER", "main")]).unwrap();
    tui.wait_for("Callbacks", wait).unwrap();

    // Created by another process while the TUI runs: the TUI's panel shows it.
    create_callback(
        &root,
        &json!({
            "action": "create", "name": "greet-check", "pattern": ["*.sh"],
            "script_content": "echo \"checked $CP_CHANGED_FILES\"", "blocking": true, "timeout": 60
        }),
    );
    tui.send(b"\x1b2"); // Alt-2: the Callbacks panel.
    tui.wait_for("greet-check", wait).unwrap();

    // The agent outside edits; the hook runs the callback in the shared console server.
    let out = hook(
        "post-tool-use",
        &root,
        &fixture("claude_post_tool_use_write.json", &root, &root),
    );
    let context = out.json()["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        context.contains("Callback 'greet-check' passed"),
        "{context}"
    );
    // The TUI is still alive and responsive.
    tui.wait_for("greet-check", wait).unwrap();
    tui.send(b"\x03");
    assert_eq!(tui.wait_exit(wait).unwrap(), 0);
    stop_console_server(&root);
}

#[test]
fn a_shell_edit_fires_callbacks_for_claude_and_gemini_and_can_be_turned_off() {
    let (_repo, root) = project_with_callback(0);
    let shell = |event: &str, tool: &str, session: &str| {
        let payload = json!({"session_id": session, "cwd": root, "tool_name": tool,
            "tool_input": {"command": "sed -i s/hello/bye/ src/greet.sh"}})
        .to_string();
        hook(event, &root, &payload)
    };
    for (event, tool, session) in [
        ("post-tool-use", "Bash", "claude-session"),
        ("after-tool", "run_shell_command", "gemini-session"),
    ] {
        // The session's first hook call has nothing to compare with: it only looks.
        let first = shell(event, tool, session);
        assert_eq!(first.code, Some(0), "{first:?}");
        assert!(!first.stdout.contains("checked"), "{first:?}");
        // What `sed -i` did through the shell.
        std::fs::write(root.join("src/greet.sh"), format!("echo {session}\n")).unwrap();
        let second = shell(event, tool, session);
        assert!(
            second.stdout.contains("checked src/greet.sh"),
            "{tool}: {second:?}"
        );
        // Nothing changed since: nothing fires.
        let third = shell(event, tool, session);
        assert!(!third.stdout.contains("checked"), "{third:?}");
    }

    // Turned off in config.json.
    let config_path = root.join(".context-pilot/config.json");
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
    config["hooks"] = json!({"shell_edits": false});
    std::fs::write(&config_path, config.to_string()).unwrap();
    std::fs::write(root.join("src/greet.sh"), "echo off\n").unwrap();
    let off = shell("post-tool-use", "Bash", "claude-session");
    stop_console_server(&root);
    assert!(!off.stdout.contains("checked"), "{off:?}");
    assert!(
        off.stderr.is_empty() || !off.stderr.contains("hooks"),
        "{off:?}"
    );
}

/// A `git` on `PATH` that writes each command line to `log` and runs the real one.
fn logging_git(dir: &Path, log: &Path) -> std::ffi::OsString {
    let real = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|d| d.join("git"))
        .find(|p| p.is_file())
        .unwrap();
    let script = dir.join("git");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            real.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut path = std::ffi::OsString::from(dir);
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap());
    path
}

#[test]
fn an_edit_no_blocking_callback_answers_runs_no_git_status_and_shell_edits_are_still_seen() {
    let (_repo, root) = project_with_callback(0);
    let config_path = root.join(".context-pilot/config.json");
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
    config["checkpoint"] = json!({"warm": {"enabled": false}});
    std::fs::write(&config_path, config.to_string()).unwrap();
    let bin = tempfile::tempdir().unwrap();
    let log = bin.path().join("git.log");
    let path = logging_git(bin.path(), &log);
    let env = [("PATH", Path::new(&path))];
    let statuses = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .filter(|line| line.contains(" status "))
            .count()
    };
    let shell = || {
        let payload = json!({"session_id": "s", "cwd": root, "tool_name": "Bash",
            "tool_input": {"command": "sed -i s/hello/bye/ src/greet.sh"}})
        .to_string();
        hook_with_env("post-tool-use", &root, &payload, &env)
    };
    let write = |file: &str, text: &str| {
        std::fs::write(root.join(file), text).unwrap();
        let payload = json!({"session_id": "s", "cwd": root, "tool_name": "Write",
            "tool_input": {"file_path": root.join(file), "content": text}})
        .to_string();
        hook_with_env("post-tool-use", &root, &payload, &env)
    };
    // The session's first call takes the work tree's snapshot.
    let first = shell();
    assert_eq!(first.code, Some(0), "{first:?}");
    assert_eq!(statuses(), 1, "{first:?}");
    // Edits no callback matches: their files are restamped, git is not asked.
    for text in ["a\n", "ab\n"] {
        let out = write("notes.txt", text);
        assert_eq!(out.code, Some(0), "{out:?}");
        assert_eq!(statuses(), 1, "{out:?}");
    }
    // A shell call that changed nothing fires nothing.
    let quiet = shell();
    assert!(!quiet.stdout.contains("checked"), "{quiet:?}");
    assert_eq!(statuses(), 2, "one status for the shell call: {quiet:?}");
    // What the shell changed after the edits is seen.
    write("notes.txt", "abc\n");
    std::fs::write(root.join("src/greet.sh"), "echo bye\n").unwrap();
    let seen = shell();
    assert!(seen.stdout.contains("checked src/greet.sh"), "{seen:?}");
    // An edit a blocking callback answered (it may have written files): the listed files
    // and the edit's are restamped, git is not asked either (see the next test).
    let before = statuses();
    let answered = write("src/greet.sh", "echo again\n");
    stop_console_server(&root);
    assert!(
        answered.stdout.contains("checked src/greet.sh"),
        "{answered:?}"
    );
    assert_eq!(statuses(), before, "{answered:?}");
}

/// After an edit, a blocking callback writes files of its own: a new one, one that was
/// modified already and a committed one. No `git status` follows it, and the session's next
/// shell call fires callbacks for what the shell changed, never for what the callback wrote.
#[test]
fn a_blocking_callbacks_own_writes_are_not_taken_for_the_next_shell_calls() {
    let (_repo, root) = project_with_callback(0);
    std::fs::write(root.join("dirty.txt"), "one\n").unwrap();
    std::fs::write(root.join("clean.txt"), "one\n").unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "texts"]);
    std::fs::write(root.join("dirty.txt"), "two\n").unwrap();
    // It writes, then works on: its writes are older than its end.
    create_callback(
        &root,
        &json!({
            "action": "create", "name": "generate", "pattern": ["*.sh"],
            "script_content": "echo new > out.txt\necho three >> dirty.txt\n\
                echo two >> clean.txt\nsleep 0.2\necho generated",
            "blocking": true, "timeout": 60
        }),
    );
    create_callback(
        &root,
        &json!({
            "action": "create", "name": "texts", "pattern": ["*.txt"],
            "script_content": "echo \"texts: $CP_CHANGED_FILES\"",
            "blocking": true, "timeout": 60
        }),
    );
    let config_path = root.join(".context-pilot/config.json");
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
    config["checkpoint"] = json!({"warm": {"enabled": false}});
    std::fs::write(&config_path, config.to_string()).unwrap();
    let bin = tempfile::tempdir().unwrap();
    let log = bin.path().join("git.log");
    let path = logging_git(bin.path(), &log);
    let env = [("PATH", Path::new(&path))];
    let statuses = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .filter(|line| line.contains(" status "))
            .count()
    };
    let shell = || {
        let payload = json!({"session_id": "s", "cwd": root, "tool_name": "Bash",
            "tool_input": {"command": "echo x > notes.txt"}})
        .to_string();
        hook_with_env("post-tool-use", &root, &payload, &env)
    };
    let first = shell();
    assert_eq!(statuses(), 1, "{first:?}");

    std::fs::write(root.join("src/greet.sh"), "echo bye\n").unwrap();
    let payload = json!({"session_id": "s", "cwd": root, "tool_name": "Write",
        "tool_input": {"file_path": root.join("src/greet.sh"), "content": "echo bye\n"}})
    .to_string();
    let edit = hook_with_env("post-tool-use", &root, &payload, &env);
    assert!(edit.stdout.contains("generated"), "{edit:?}");
    assert_eq!(
        std::fs::read_to_string(root.join("clean.txt")).unwrap(),
        "one\ntwo\n"
    );
    assert_eq!(statuses(), 1, "no git status after the callback: {edit:?}");

    // The shell writes one file; the callback's three are not its edits.
    std::fs::write(root.join("notes.txt"), "x\n").unwrap();
    let seen = shell();
    stop_console_server(&root);
    assert!(seen.stdout.contains("texts: notes.txt"), "{seen:?}");
    for theirs in ["out.txt", "dirty.txt", "clean.txt"] {
        assert!(!seen.stdout.contains(theirs), "{theirs}: {seen:?}");
    }
}

#[test]
fn an_invalid_hooks_section_is_told_and_shell_edits_stay_on() {
    let (_repo, root) = project_with_callback(0);
    let config_path = root.join(".context-pilot/config.json");
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
    config["hooks"] = json!({"shell_edit": false});
    std::fs::write(&config_path, config.to_string()).unwrap();
    let payload = json!({"session_id": "s", "cwd": root, "tool_name": "Bash",
        "tool_input": {"command": "sed -i s/hello/bye/ src/greet.sh"}})
    .to_string();
    let _ = hook("post-tool-use", &root, &payload);
    std::fs::write(root.join("src/greet.sh"), "echo bye\n").unwrap();
    let out = hook("post-tool-use", &root, &payload);
    stop_console_server(&root);
    assert!(out.stderr.contains("config.json 'hooks'"), "{out:?}");
    assert!(out.stderr.contains("shell_edit"), "{out:?}");
    let reply = out.json();
    let told = reply["systemMessage"].as_str().unwrap_or_default();
    assert!(told.contains("config.json 'hooks'"), "{reply}");
    assert!(out.stdout.contains("checked src/greet.sh"), "{out:?}");
}

/// A committed project whose Makefile's `test` target (detected by the gate) passes while
/// `run.sh` says `v1`.
fn project_with_make_test() -> (tempfile::TempDir, std::path::PathBuf) {
    let repo = git_repo();
    let root = canonical(repo.path());
    std::fs::write(root.join("run.sh"), "echo v1\n").unwrap();
    std::fs::write(
        root.join("Makefile"),
        "test:\n\tgrep -q v1 run.sh || { echo 'FAILED test_run'; exit 1; }\n",
    )
    .unwrap();
    // The first hook call lays out `.context-pilot/`; commit it with the code.
    let _ = stop(&root, "claude_stop.json", "stop");
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "init"]);
    (repo, root)
}

/// Issue 36: where a session began is recorded at its first event (here Gemini CLI's
/// `AfterTool`, as no session-start hook is wired for it), and what the session commits after
/// that is tested at its stop and listed as committed.
#[test]
fn a_commit_after_the_sessions_first_event_is_tested_at_its_stop() {
    let (_repo, root) = project_with_make_test();
    let session = "4f0c2a57-7c1e-4d55-9d1b-2a6b1f3e8c90";
    let look = json!({"session_id": session, "cwd": root, "tool_name": "run_shell_command",
        "tool_input": {"command": "ls"}})
    .to_string();
    assert_eq!(hook("after-tool", &root, &look).code, Some(0));
    std::fs::write(root.join("run.sh"), "echo v2\n").unwrap();
    git(&root, &["commit", "-qam", "v2"]);
    let out = stop(&root, "gemini_after_agent.json", "after-agent");
    let reply = out.json();
    assert_eq!(reply["decision"], "deny", "{reply}");
    let reason = reply["reason"].as_str().unwrap();
    assert!(reason.contains("Tests FAILED"), "{reason}");
    assert!(reason.contains("Committed in this session"), "{reason}");
    assert!(reason.contains("modified run.sh"), "{reason}");
    // Another session that began after the commit has nothing of its own to be held for.
    let other = fixture("gemini_after_agent.json", &root, &root).replace(session, "other");
    let passed = hook("after-agent", &root, &other);
    assert!(!passed.stdout.contains("deny"), "{passed:?}");
    stop_console_server(&root);
}

/// Claude Code's `SessionStart` records where the session began and says nothing; a driver's
/// `CP_SESSION_BASE` (where its phase began) comes first.
#[test]
fn session_start_records_the_base_and_a_drivers_base_comes_first() {
    let (_repo, root) = project_with_make_test();
    let before = git(&root, &["rev-parse", "HEAD"]);
    std::fs::write(root.join("run.sh"), "echo v2\n").unwrap();
    git(&root, &["commit", "-qam", "v2 before the session"]);
    let start = json!({"session_id": "s-1", "cwd": root, "hook_event_name": "SessionStart",
        "source": "startup"})
    .to_string();
    let started = hook("session-start", &root, &start);
    assert_eq!(
        (started.code, started.stdout.as_str()),
        (Some(0), ""),
        "{started:?}"
    );
    let payload = fixture("claude_stop.json", &root, &root)
        .replace("eb5b0174-0555-4601-804e-672d68069c89", "s-1");
    // The session began after the red commit: nothing of its own to hold it for.
    let own = hook("stop", &root, &payload);
    assert_eq!(own.stdout, "", "{own:?}");
    // Its driver says the phase began before it.
    let base = json!({"commit": before.trim(), "branch": "main"}).to_string();
    let env = [(cp_orchestrate::SESSION_BASE_ENV, Path::new(&base))];
    let driven = hook_with_env("stop", &root, &payload, &env);
    stop_console_server(&root);
    let reply = driven.json();
    assert_eq!(reply["decision"], "block", "{reply}");
    assert!(
        reply["reason"].as_str().unwrap().contains("Tests FAILED"),
        "{reply}"
    );
}

/// Issue 41 item 9: a repository git refuses ("dubious ownership": owned by another user)
/// switched the gate off with an empty reply; now the person gets a `systemMessage` saying
/// the gate is off and how to fix it, and the agent may still stop.
#[test]
fn a_repository_git_refuses_is_told_to_the_person() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        assert!(
            std::env::var_os("CI").is_none(),
            "a repository owned by another user needs root; under CI this fails"
        );
        eprintln!("not root: skipped");
        return;
    }
    let repo = git_repo();
    let root = canonical(repo.path());
    std::fs::write(root.join("run.sh"), "echo v1\n").unwrap();
    let chowned = std::process::Command::new("chown")
        .args(["-R", "nobody"])
        .arg(&root)
        .status()
        .is_ok_and(|s| s.success());
    assert!(chowned);
    let reply = stop(&root, "claude_stop.json", "stop");
    assert_eq!(reply.code, Some(0), "{reply:?}");
    let json = reply.json();
    assert!(json.get("decision").is_none(), "the agent may stop: {json}");
    let message = json["systemMessage"].as_str().unwrap_or_default();
    assert!(message.contains("the stop gate is OFF"), "{json}");
    assert!(message.contains("dubious ownership"), "{json}");
    assert!(message.contains("safe.directory"), "{json}");
}
