//! Esc during a blocking callback (issue 17): the real binary in a PTY, the scripted LLM
//! server, a real callback script in the real console server. The turn ends long before the
//! script's sleep would, the script's whole process group is gone, the result says
//! cancelled, and the next request answers every tool call.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::util::{canonical, create_callback, stop_console_server, trust};
use cp_e2e::{
    LlmServer, TuiSession, anthropic, eventually, eventually_some, git_repo, wait_saved_session,
};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(60);
/// The script's sleep; the turn must end well before it would.
const SLEEP_SECS: u64 = 30;

/// The process group of `pid`, from `/proc/<pid>/stat` (`None` once it is gone).
fn group_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces; the fields after its `)` are fixed.
    let after = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = after.split_whitespace().collect();
    // state, ppid, pgrp: pgrp is the third field after the name.
    let state = fields.first()?;
    if *state == "Z" {
        return None;
    }
    fields.get(2)?.parse().ok()
}

/// Live (non-zombie) processes whose process group is `group`.
fn group_members(group: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| group_of(pid) == Some(group))
        .collect()
}

/// Waits until `path` holds a pid.
fn wait_pid_file(path: &Path) -> u32 {
    eventually_some("the callback's pid", WAIT, || {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|t| t.trim().parse().ok())
    })
}

/// Every `tool_use` id of an Anthropic request and every `tool_result`'s `tool_use_id`.
fn tool_ids(body: &Value) -> (HashSet<String>, HashSet<String>) {
    let mut uses = HashSet::new();
    let mut results = HashSet::new();
    for message in body["messages"].as_array().into_iter().flatten() {
        for block in message["content"].as_array().into_iter().flatten() {
            match block["type"].as_str() {
                Some("tool_use") => {
                    uses.insert(block["id"].as_str().unwrap_or_default().to_owned());
                }
                Some("tool_result") => {
                    results.insert(block["tool_use_id"].as_str().unwrap_or_default().to_owned());
                }
                _ => {}
            }
        }
    }
    (uses, results)
}

#[test]
fn esc_kills_a_blocking_callback_and_answers_every_tool_call() {
    let repo = git_repo();
    let root = canonical(repo.path());
    create_callback(
        &root,
        &json!({
            "action": "create", "name": "slow-check", "pattern": ["*.txt"],
            "script_content": format!(
                "echo $$ > \"$CP_PROJECT_ROOT/cb.pid.tmp\" && mv \"$CP_PROJECT_ROOT/cb.pid.tmp\" \"$CP_PROJECT_ROOT/cb.pid\"\nsleep {SLEEP_SECS}\necho slept"
            ),
            "blocking": true, "timeout": 120
        }),
    );
    trust(&root);

    let server = LlmServer::start().unwrap();
    // Two calls in one batch: the write fires the callback; the read is answered at once.
    server.push(anthropic::tool_use_turn(&[
        (
            "toolu_w",
            "File_write",
            r#"{"file_path": "notes.txt", "content": "hello\n"}"#,
        ),
        ("toolu_g", "File_glob", r#"{"pattern": "*.md"}"#),
    ]));
    // The next turn (after the cancel): text answers for it and any stop-gate blocks.
    for text in ["Carrying on.", "Noted.", "Noted again.", "Stopping."] {
        server.push(anthropic::text_turn(text));
    }
    let url = server.url();
    let env = [
        ("ANTHROPIC_BASE_URL", url.as_str()),
        ("ANTHROPIC_API_KEY", "k"),
        ("OPENAI_API_KEY", ""),
    ];
    let mut tui = TuiSession::start(&root, &[], &env).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    tui.type_text("write the notes");
    tui.send(b"\r");

    let pid = wait_pid_file(&root.join("cb.pid"));
    let group = group_of(pid).expect("the callback script runs");
    assert!(group_members(group).contains(&pid));

    let pressed = Instant::now();
    tui.send(b"\x1b");
    let session = wait_saved_session(&root, "the cancelled turn is saved", WAIT, |s| {
        cp_e2e::saved_conversation(s).contains("Turn cancelled.")
    })
    .unwrap();
    let took = pressed.elapsed();
    // The acceptance asks for a second; this bound only has to tell "killed" from "waited
    // for the sleep" on a loaded machine.
    assert!(
        took < Duration::from_secs(10),
        "the turn took {took:?} to end after Esc"
    );
    let conversation = cp_e2e::saved_conversation(&session);
    assert!(
        conversation.contains("CANCELLED"),
        "the result does not say cancelled: {conversation}"
    );
    // Killed as a group and reaped: neither the script nor its sleep is left.
    eventually("the callback's process group to be gone", WAIT, || {
        group_members(group).is_empty()
    });
    assert!(group_of(pid).is_none(), "the script still runs");

    // The next request answers every tool call of the cancelled batch.
    let before = server.requests().len();
    tui.type_text("go on");
    tui.send(b"\r");
    eventually("a request after the cancel", WAIT, || {
        server.requests().len() > before
    });
    let next = &server.requests()[before];
    let (uses, results) = tool_ids(&next.body);
    assert!(
        uses.contains("toolu_w") && uses.contains("toolu_g"),
        "{uses:?}"
    );
    assert_eq!(uses, results, "every tool_use needs its tool_result");
    assert!(
        next.raw_body.contains("CANCELLED"),
        "the model is not told the callback was cancelled: {}",
        next.raw_body
    );
    assert!(next.raw_body.contains("go on"), "{}", next.raw_body);

    tui.wait_turn_end(&root, "Stopping.", WAIT).unwrap();
    tui.quit(WAIT).unwrap();
    stop_console_server(&root);
}
