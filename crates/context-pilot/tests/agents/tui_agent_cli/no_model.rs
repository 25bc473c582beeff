//! The no-model screen (issue 29): no provider configured and agent CLIs on `PATH`; F6 runs
//! the turns with the one picked (Claude Code, or Codex CLI with Alt-Down) and remembers it.

use super::*;

/// A `bin` directory of stand-ins: `claude` runs the real Claude Code with the scripted
/// server's key (which the TUI itself never sees, so it has no provider), `gemini` reports a
/// version too old to use.
fn stand_in_agents(server: &LlmServer) -> tempfile::TempDir {
    let bin = tempfile::tempdir().unwrap();
    let real = crate::util::agents::agents_bin().join("claude");
    let scripts = [
        (
            "claude",
            format!(
                "#!/bin/sh\nANTHROPIC_API_KEY=sk-ant-scripted ANTHROPIC_BASE_URL='{}' exec '{}' \"$@\"\n",
                server.url(),
                real.display()
            ),
        ),
        ("gemini", "#!/bin/sh\necho 0.1.0\n".to_owned()),
    ];
    for (name, text) in scripts {
        let path = bin.path().join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    bin
}

/// `context-pilot` (no `--agent`, no provider) in a PTY with the stand-ins first on `PATH`
/// and `config` as the user's config directory.
fn start_no_model_tui(root: &Path, home: &Path, bin: &Path, config: &Path) -> TuiSession {
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let env = [
        ("PATH", path.as_str()),
        ("HOME", home.to_str().unwrap()),
        ("XDG_CONFIG_HOME", config.to_str().unwrap()),
        ("ANTHROPIC_API_KEY", ""),
        ("OPENAI_API_KEY", ""),
        ("OPENAI_BASE_URL", ""),
        ("CP_PROVIDER", ""),
        ("CP_WORKER", "main"),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
        ("DISABLE_AUTOUPDATER", "1"),
    ];
    let tui = TuiSession::start(root, &[], &env).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    tui
}

#[test]
fn the_no_model_screen_offers_claude_code_and_f6_runs_the_turns_with_it_and_remembers_it() {
    let repo = git_repo();
    let root = canonical(repo.path());
    std::fs::write(root.join("README.md"), "hello\n").unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "init"]);
    let server = server();
    let bin = stand_in_agents(&server);
    let home = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let mut tui = start_no_model_tui(&root, home.path(), bin.path(), config.path());

    // The offer: Claude Code with its version and the keys; the old Gemini CLI marked.
    let screen = tui.wait_for("F5 runs your messages with it", WAIT).unwrap();
    assert!(screen.contains("Claude Code 2.1."), "{screen}");
    assert!(screen.contains("Gemini CLI 0.1.0"), "{screen}");
    assert!(screen.contains("too old"), "{screen}");

    // F6: Claude Code runs the turns (the saved conversation says so), and the choice is in
    // the user's config.
    tui.send(b"\x1b[17~");
    wait_saved_session(&root, "Claude Code runs the turns", WAIT, |s| {
        saved_conversation(s).contains("runs your messages now")
    })
    .unwrap();
    let file = config.path().join("context-pilot/config.json");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(saved["agent"]["kind"], "claude", "{saved}");
    assert!(!root.join(".context-pilot/config.json").exists());

    server.push(anthropic::text_turn("NO-MODEL-ANSWER"));
    tui.type_text("NO-MODEL-TURN: hello");
    tui.send(b"\r");
    wait_saved_session(&root, "Claude Code answered", WAIT, |s| {
        saved_conversation(s).contains("NO-MODEL-ANSWER")
    })
    .unwrap();
    assert!(
        server
            .requests()
            .iter()
            .any(|r| r.raw_body.contains("NO-MODEL-TURN")),
        "Claude Code never asked the scripted server"
    );
    let pid = tui.pid();
    assert_no_claude_left(&root, pid);
    tui.quit(WAIT).unwrap();

    // The next start, still without a provider or --agent, uses the remembered agent.
    server.push(anthropic::text_turn("REMEMBERED-ANSWER"));
    let mut tui = start_no_model_tui(&root, home.path(), bin.path(), config.path());
    tui.type_text("REMEMBERED-TURN: still there?");
    tui.send(b"\r");
    wait_saved_session(&root, "the remembered agent answered", WAIT, |s| {
        saved_conversation(s).contains("REMEMBERED-ANSWER")
    })
    .unwrap();
    assert!(
        server
            .requests()
            .iter()
            .any(|r| r.raw_body.contains("REMEMBERED-TURN")),
        "the remembered agent never asked the scripted server"
    );
    let pid = tui.pid();
    assert_no_claude_left(&root, pid);
    tui.quit(WAIT).unwrap();
    stop_console_server(&root);
}

#[test]
fn on_the_no_model_screen_alt_down_picks_codex_cli_and_f6_starts_and_remembers_it() {
    let repo = git_repo();
    let root = canonical(repo.path());
    // Stand-ins that only tell their versions: Claude Code (listed first, so picked first) and
    // Codex CLI, which runs the TUI's turns too.
    let bin = tempfile::tempdir().unwrap();
    for (name, version) in [
        ("claude", "2.1.330 (Claude Code)"),
        ("codex", "codex-cli 0.169.0"),
    ] {
        let path = bin.path().join(name);
        std::fs::write(&path, format!("#!/bin/sh\necho '{version}'\n")).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    let home = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let mut tui = start_no_model_tui(&root, home.path(), bin.path(), config.path());
    let screen = tui.wait_for("F5 runs your messages with it", WAIT).unwrap();
    assert!(screen.contains("Codex CLI 0.169.0"), "{screen}");
    assert!(!screen.contains("cannot run"), "{screen}");

    // Alt-↓ picks the next usable agent, Codex CLI; F6 starts it and remembers it.
    tui.send(b"\x1b[1;3B");
    tui.wait_for("F5 starts Codex CLI", WAIT).unwrap();
    tui.send(b"\x1b[17~");
    wait_saved_session(&root, "Codex CLI runs the turns", WAIT, |s| {
        saved_conversation(s).contains("Codex CLI 0.169.0 runs your messages now")
    })
    .unwrap();
    let file = config.path().join("context-pilot/config.json");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(saved["agent"]["kind"], "codex", "{saved}");
    tui.quit(WAIT).unwrap();
    stop_console_server(&root);
}
