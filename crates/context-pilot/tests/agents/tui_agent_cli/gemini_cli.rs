//! The TUI with `--agent gemini`: a turn without its hooks says why it stopped; with them, the
//! callback's result and the checkpoint show in the conversation.

use super::*;

/// The text of a Gemini request's last content.
fn gemini_last_content(request: &RecordedRequest) -> String {
    request.body["contents"]
        .as_array()
        .and_then(|c| c.last())
        .map(ToString::to_string)
        .unwrap_or_default()
}

/// The TUI with `--agent gemini` against `server`, the person's home being `home`.
fn start_gemini_tui(root: &Path, home: &Path, server: &LlmServer) -> TuiSession {
    let path = agents_path();
    let url = server.url();
    let env = [
        ("PATH", path.as_str()),
        ("HOME", home.to_str().unwrap()),
        ("GEMINI_API_KEY", "scripted"),
        ("GOOGLE_GEMINI_BASE_URL", url.as_str()),
        // The run's private Gemini CLI home goes below the test's HOME.
        ("XDG_RUNTIME_DIR", ""),
        ("XDG_CACHE_HOME", ""),
        ("GEMINI_CLI_HOME", ""),
        ("GEMINI_CLI_NO_RELAUNCH", "true"),
        ("ANTHROPIC_API_KEY", ""),
        ("OPENAI_API_KEY", ""),
        ("CP_WORKER", "main"),
    ];
    let tui = TuiSession::start(root, &["--agent", "gemini"], &env).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    tui
}

#[test]
fn a_gemini_turn_without_its_hooks_stops_and_the_conversation_says_why() {
    let (_repo, root) = sh_checked_project(&json!({"stop_grace_secs": 20}));
    let server = LlmServer::start().unwrap();
    server.answer_side_requests(gemini::side_reply);
    server.push(gemini::text_turn("UNWIRED-ANSWER"));
    let home = tempfile::tempdir().unwrap();
    // The person's own settings turn Gemini CLI's hooks off.
    let settings = home.path().join(".gemini/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(
        &settings,
        json!({"hooksConfig": {"enabled": false}}).to_string(),
    )
    .unwrap();
    let mut tui = start_gemini_tui(&root, home.path(), &server);
    tui.type_text("Do something.");
    tui.send(b"\r");
    let session = wait_saved_session(&root, "the turn failed", WAIT, |s| {
        saved_conversation(s).contains("started without")
    })
    .unwrap();
    let conversation = saved_conversation(&session);
    assert!(
        conversation.contains("Gemini CLI started without Context Pilot's hooks (no hook ran"),
        "{conversation}"
    );
    assert!(!conversation.contains("UNWIRED-ANSWER"), "{conversation}");
    let pid = tui.pid();
    tui.quit(WAIT).unwrap();
    assert!(
        agent_processes(&root, "gemini", pid).is_empty(),
        "gemini processes left behind"
    );
    stop_console_server(&root);
}

#[test]
fn two_gemini_turns_show_the_callback_and_the_checkpoint_in_the_conversation() {
    let (_repo, root) = sh_checked_project(&json!({"stop_grace_secs": 20}));
    let server = LlmServer::start().unwrap();
    server.answer_side_requests(|request| {
        gemini::side_reply(request).or_else(|| {
            gemini_last_content(request)
                .contains("Stop gate:")
                .then(|| gemini::text_turn("Verified."))
        })
    });
    let args = json!({"file_path": root.join("src/a.sh"), "content": "echo hi\n"}).to_string();
    // Turn 1: Gemini CLI writes src/a.sh (the callback fires), then says so; the stop
    // checkpoint sends it back once.
    server.push(gemini::tool_call_turn(&[("write_file", &args)]));
    server.push(gemini::text_turn("GEMINI-WROTE src/a.sh."));
    // Turn 2: an answer in the same session.
    server.push(gemini::text_turn("GEMINI-SECOND"));
    let home = tempfile::tempdir().unwrap();
    let mut tui = start_gemini_tui(&root, home.path(), &server);

    tui.type_text("GEMINI-FIRST: write src/a.sh");
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
            "\"name\":\"write_file\"",
            "GEMINI-WROTE src/a.sh.",
            // Gemini CLI does not echo its hooks: these came from the hooks' own reports.
            "AfterTool hook: Callback 'sh-check' passed",
            "checked src/a.sh",
            "AfterAgent hook: blocked: Stop gate: verify",
        ],
    );

    tui.type_text("GEMINI-TURN-TWO: anything else?");
    tui.send(b"\r");
    tui.wait_turn_end(&root, "GEMINI-SECOND", WAIT).unwrap();
    // The second turn continued the first one's conversation: its request carries the first
    // turn. Gemini CLI 0.61's `--resume` would send the write's result twice, which the API
    // refuses; a fresh session is given the conversation instead.
    let requests = server.requests();
    let second = &requests.last().unwrap().raw_body;
    assert!(second.contains("GEMINI-TURN-TWO"), "{second}");
    assert!(
        second.contains("GEMINI-FIRST") && second.contains("GEMINI-WROTE src/a.sh."),
        "the second turn did not continue the conversation: {second}"
    );
    let refused = server.refused_requests();
    assert!(
        refused.is_empty(),
        "refused as the API would: {:?}",
        refused.iter().map(|r| &r.raw_body).collect::<Vec<_>>()
    );
    // Gemini CLI was offered Context Pilot's tools.
    assert!(
        requests[0].raw_body.contains("File_edit"),
        "no MCP tools offered"
    );
    let pid = tui.pid();
    tui.quit(WAIT).unwrap();
    assert!(
        agent_processes(&root, "gemini", pid).is_empty(),
        "gemini processes left behind"
    );
    stop_console_server(&root);
}
