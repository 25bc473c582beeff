//! End to end: the TUI with `--agent codex` (issue 25). The REAL Codex CLI (installed by
//! `scripts/install-agents.sh` under `target/agents/`) runs the person's turns against the
//! scripted LLM server's Responses API; the TUI runs in a PTY.
//!
//! Only durable facts are waited on: the session the TUI saves when a turn ends, the server's
//! request log, `/proc`. The stop gate's block is answered by content (the request whose last
//! input carries it).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::util::agents::{agent_processes, agents_path, sh_checked_project};
use crate::util::{assert_all_shown, stop_console_server};
use cp_e2e::{LlmServer, RecordedRequest, TuiSession, responses, saved_conversation};
use serde_json::json;

/// Generous: every turn starts Codex and runs hooks that run git.
const WAIT: Duration = Duration::from_secs(180);

/// A committed, trusted project whose checkpoint blocks at most once and runs no tests, with
/// a blocking callback on `*.sh` that prints the files it checked.
fn project() -> (tempfile::TempDir, PathBuf) {
    sh_checked_project(&json!({"stop_grace_secs": 20}))
}

/// The person's `CODEX_HOME`, whose provider is the scripted server (Responses API).
fn codex_home(server: &LlmServer) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "model = \"gpt-5.5\"\nmodel_provider = \"scripted\"\n\n\
             [model_providers.scripted]\nname = \"scripted\"\nbase_url = \"{}\"\n\
             env_key = \"CP_SCRIPTED_KEY\"\nwire_api = \"responses\"\n",
            server.openai_base_url()
        ),
    )
    .unwrap();
    home
}

/// The last input item of a Responses request, as JSON text.
fn last_input(request: &RecordedRequest) -> String {
    request.body["input"]
        .as_array()
        .and_then(|items| items.last())
        .map(ToString::to_string)
        .unwrap_or_default()
}

/// The TUI with `--agent codex`, Codex on `PATH` and `codex_home` as its home.
fn start_tui(root: &Path, home: &Path, codex_home: &Path) -> TuiSession {
    let path = agents_path();
    let env = [
        ("PATH", path.as_str()),
        ("HOME", home.to_str().unwrap()),
        ("CODEX_HOME", codex_home.to_str().unwrap()),
        ("CP_SCRIPTED_KEY", "sk-scripted"),
        ("ANTHROPIC_API_KEY", ""),
        ("OPENAI_API_KEY", ""),
        ("CP_WORKER", "main"),
    ];
    let tui = TuiSession::start(root, &["--agent", "codex"], &env).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    tui
}

#[test]
fn two_codex_turns_show_the_patch_the_callback_and_the_stop_gate_in_the_conversation() {
    let (_repo, root) = project();
    let server = LlmServer::start().unwrap();
    server.answer_side_requests(|request| {
        last_input(request)
            .contains("Stop gate:")
            .then(|| responses::text_turn("Verified."))
    });
    // Turn 1: Codex adds src/a.sh (the callback fires), then says so; the stop gate sends it
    // back once.
    let patch = "*** Begin Patch\n*** Add File: src/a.sh\n+echo hi\n*** End Patch\n";
    server.push(responses::items_turn(&[responses::Item::apply_patch(
        "call_patch",
        patch,
    )]));
    server.push(responses::text_turn("CODEX-WROTE src/a.sh."));
    // Turn 2: an answer in the same thread.
    server.push(responses::text_turn("CODEX-SECOND"));
    let home = tempfile::tempdir().unwrap();
    let codex_home = codex_home(&server);
    let mut tui = start_tui(&root, home.path(), codex_home.path());

    tui.type_text("CODEX-FIRST: write src/a.sh");
    tui.send(b"\r");
    let session = tui.wait_turn_end(&root, "Verified.", WAIT).unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("src/a.sh")).unwrap(),
        "echo hi\n"
    );
    let conversation = saved_conversation(&session);
    assert_all_shown(
        &conversation,
        &[
            "\"name\":\"apply_patch\"",
            "add ",
            "CODEX-WROTE src/a.sh.",
            // The hooks' own reports of their verdicts.
            "PostToolUse hook: Callback 'sh-check' passed",
            "checked src/a.sh",
            "Stop hook: blocked: Stop gate: verify",
        ],
    );

    tui.type_text("CODEX-TURN-TWO: anything else?");
    tui.send(b"\r");
    tui.wait_turn_end(&root, "CODEX-SECOND", WAIT).unwrap();
    // The second turn resumed the first one's thread (`codex exec resume`).
    let requests = server.requests();
    let second = &requests.last().unwrap().raw_body;
    assert!(second.contains("CODEX-TURN-TWO"), "{second}");
    assert!(
        second.contains("CODEX-FIRST") && second.contains("CODEX-WROTE src/a.sh."),
        "the second turn did not continue the thread: {second}"
    );
    let pid = tui.pid();
    tui.quit(WAIT).unwrap();
    assert!(
        agent_processes(&root, "codex", pid).is_empty(),
        "codex processes left behind"
    );
    stop_console_server(&root);
}
