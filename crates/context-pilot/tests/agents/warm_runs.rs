//! Issue 38 end to end with the REAL Claude Code, wired by `context-pilot init claude`, driven
//! by the scripted Anthropic server: warm runs of the stop gate's tests.
//!
//! The agent makes a green change and "thinks" (the scripted model answers the next request
//! only once the warm run's verdict is kept: a durable fact, where a person would see a
//! 12 s pause), then says "Done.": the stop takes the warm run's verdict and the suite does
//! not run again for that tree. Then a red edit and at once "Done.": the verdict names the
//! failing test (the warm run asked for by that edit never gives the red tree a green
//! verdict).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::util::agent_run::{text, wait_output};
use crate::util::agents::agents_bin;
use crate::util::warm::{
    GREEN_TOOL, RED_TOOL, SUITE_SECS, answers, runs, think_until_warm_verdict, told_by_the_gate,
    warm_record, write_suite,
};
use cp_e2e::{LlmServer, anthropic, binary_path, git, git_repo};
use serde_json::json;

/// A committed Python project ([`write_suite`]'s) wired with `init claude`.
fn project() -> tempfile::TempDir {
    let repo = git_repo();
    let root = std::fs::canonicalize(repo.path()).unwrap();
    write_suite(&root);
    let init = Command::new(binary_path())
        .args(["init", "claude"])
        .current_dir(&root)
        .env("XDG_CONFIG_HOME", cp_e2e::config_home())
        .output()
        .unwrap();
    assert!(init.status.success(), "init claude: {init:?}");
    cp_e2e::trust(&root);
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "init"]);
    repo
}

fn claude(root: &Path, home: &Path, server: &LlmServer) -> Output {
    let mut command = Command::new(agents_bin().join("claude"));
    command
        .args([
            "-p",
            "Tidy calc.add.",
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            "claude-sonnet-4-5",
            "--permission-mode",
            "acceptEdits",
            "--allowedTools",
            "Read,Edit",
        ])
        .current_dir(root)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", cp_e2e::config_home())
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("ANTHROPIC_API_KEY", "sk-ant-scripted")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env_remove("CONTEXT_PILOT_WORKER")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    wait_output(command.spawn().unwrap())
}

/// Claude Code's `Edit` of `calc.py`, replacing `old` by `new`.
fn edit(root: &Path, id: &str, old: &str, new: &str) -> cp_e2e::Reply {
    let args = json!({"file_path": root.join("calc.py"), "old_string": old, "new_string": new})
        .to_string();
    anthropic::tool_use_turn(&[(id, "Edit", &args)])
}

#[test]
fn claude_code_stops_on_the_warm_verdict_and_a_red_edit_right_before_a_stop_is_caught() {
    let repo = project();
    let root = std::fs::canonicalize(repo.path()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let server = LlmServer::start().unwrap();
    {
        let root = root.clone();
        server.answer_side_requests(move |request| {
            if let Some(reply) = anthropic::side_reply(request) {
                return Some(reply);
            }
            // The script's next reply ("Done.") goes out once the warm run kept its verdict.
            think_until_warm_verdict(&root, request);
            None
        });
    }
    // Claude Code edits only a file it has read.
    let read = json!({"file_path": root.join("calc.py")}).to_string();
    server.push(anthropic::tool_use_turn(&[("toolu_00Read", "Read", &read)]));
    server.push(edit(&root, GREEN_TOOL, "return a + b", "return b + a"));
    server.push(anthropic::text_turn("Done."));
    server.push(edit(&root, RED_TOOL, "return b + a", "return a - b"));
    server.push(anthropic::text_turn("Done."));
    server.push(anthropic::text_turn("Still done."));
    server.push(anthropic::text_turn("Really done."));

    let out = claude(&root, home.path(), &server);
    let shown = format!(
        "stdout:\n{}\nstderr:\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{shown}");
    let requests = server.requests();
    assert!(requests.len() >= 6, "{} requests\n{shown}", requests.len());
    let record = warm_record(&root);

    // The stop after the green change: the warm run's verdict, and the suite ran once for
    // the green tree.
    assert!(answers(&requests[2], GREEN_TOOL));
    let told = &told_by_the_gate(&requests[3]);
    assert!(told.contains("Stop gate: verify"), "{told}");
    assert!(told.contains("Tests passed"), "{told}");
    assert!(
        told.contains("A warm run tested this very tree"),
        "the stop did not take the warm run's verdict: {told}\nwarm record: {record}"
    );
    let green_runs = runs(&root)
        .iter()
        .filter(|line| line.as_str() == "return b + a")
        .count();
    assert_eq!(green_runs, 1, "runs: {:?}\n{shown}", runs(&root));
    let turn_end = server.replied_at(2).unwrap();
    let latency = requests[3].received.saturating_duration_since(turn_end);
    eprintln!(
        "verdict after the green change reached the model {:.2} s after the turn ended \
         (the suite takes {SUITE_SECS} s)",
        latency.as_secs_f64()
    );

    // The red edit and at once "Done.": the red tree's own verdict, naming the failing test.
    assert!(answers(&requests[4], RED_TOOL));
    let told = &told_by_the_gate(&requests[5]);
    assert!(told.contains("Stop gate: verify"), "{told}");
    assert!(told.contains("test_calc.TestCalc.test_add"), "{told}");
    assert!(!told.contains("Tests passed"), "{told}");
    assert!(
        runs(&root).iter().any(|line| line == "return a - b"),
        "{:?}",
        runs(&root)
    );

    // Nothing of the warm runs is left running once the session ended.
    crate::util::agents::assert_none_under(&root, "warm-run", Duration::from_secs(30));
    crate::util::stop_console_server(&root);
}
