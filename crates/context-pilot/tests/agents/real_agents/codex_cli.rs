//! Codex CLI: the scripted Responses stream against the real binary, and Codex wired with
//! `context-pilot init codex` (its hooks and Context Pilot's MCP server). Its subagent and
//! compaction hooks are in `codex_cli/hooks.rs`.

use super::*;

mod hooks;
mod plugin;

// Codex CLI: the scripted server's Responses API, checked against the real binary.

/// A private `CODEX_HOME` whose provider is the scripted server (Responses API).
fn codex_home(server: &LlmServer) -> tempfile::TempDir {
    // Codex warns that it makes no helper links under a temporary directory; it needs none
    // here (the shell and apply_patch still work, as the test checks).
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

#[test]
fn codex_cli_takes_the_scripted_responses_stream_apply_patch_and_shell_calls_included() {
    let repo = git_repo();
    let root = canonical(repo.path());
    let server = LlmServer::start().unwrap();
    let home = codex_home(&server);
    let patch = "*** Begin Patch\n*** Add File: notes.txt\n+hello\n*** End Patch\n";
    server.push(responses::items_turn(&[responses::Item::apply_patch(
        "call_patch",
        patch,
    )]));
    server.push(responses::items_turn(&[responses::Item::shell(
        "call_sed",
        "sed -i s/hello/HELLO/ notes.txt",
    )]));
    server.push(responses::text_turn("Edited notes.txt."));

    let mut command = Command::new(agent_bin("codex"));
    command
        .args([
            "exec",
            "--json",
            "--dangerously-bypass-approvals-and-sandbox",
            "Write notes.txt.",
        ])
        .current_dir(&root)
        .env("CODEX_HOME", home.path())
        .env("CP_SCRIPTED_KEY", "sk-scripted");
    let out = run(command);
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "HELLO\n",
        "{stdout}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "{stdout}\n{stderr}");
    assert!(requests.iter().all(|r| r.path == "/v1/responses"));
    // Each call's output goes back in the next request, paired by call id.
    let inputs = |i: usize| -> Vec<Value> {
        let body: Value = serde_json::from_str(&requests[i].raw_body).unwrap();
        body["input"].as_array().unwrap().clone()
    };
    assert!(
        inputs(1).iter().any(
            |item| item["type"] == "custom_tool_call_output" && item["call_id"] == "call_patch"
        )
    );
    assert!(
        inputs(2)
            .iter()
            .any(|item| item["type"] == "function_call_output" && item["call_id"] == "call_sed")
    );
    // `codex exec --json` reports the three items.
    for kind in ["file_change", "command_execution", "agent_message"] {
        assert!(
            stdout.contains(&format!("\"type\":\"{kind}\"")),
            "{kind}:\n{stdout}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Codex CLI wired with `context-pilot init codex`: its hooks and Context Pilot's MCP server.

/// [`codex_home`] with `root` trusted, so Codex reads the project's `.codex/config.toml`.
/// Codex starts MCP servers with a few environment variables only: the tests' trust store
/// (`XDG_CONFIG_HOME`) is passed to Context Pilot's explicitly, as the hooks inherit it.
fn trusting_codex_home(server: &LlmServer, root: &Path) -> tempfile::TempDir {
    let home = codex_home(server);
    let config = home.path().join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    write!(
        text,
        "\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n\n\
         [mcp_servers.context-pilot.env]\nXDG_CONFIG_HOME = \"{}\"\n",
        root.display(),
        cp_e2e::config_home().display()
    )
    .unwrap();
    std::fs::write(config, text).unwrap();
    home
}

/// `codex exec --json PROMPT` in `root`. Hook trust is bypassed for this invocation
/// (`--dangerously-bypass-hook-trust`): what is tested is what the hooks do, and trusting them
/// for real means reviewing them in Codex's `/hooks` screen.
fn codex(root: &Path, home: &Path, prompt: &str) -> Output {
    codex_with(root, home, &[], prompt)
}

/// `codex exec --json ARGS PROMPT` in `root`, as [`codex`] runs it.
fn codex_with(root: &Path, home: &Path, args: &[&str], prompt: &str) -> Output {
    let mut command = Command::new(agent_bin("codex"));
    command
        .args([
            "exec",
            "--json",
            "--dangerously-bypass-approvals-and-sandbox",
            "--dangerously-bypass-hook-trust",
        ])
        .args(args)
        .arg(prompt)
        .current_dir(root)
        .env("CODEX_HOME", home)
        .env("CP_SCRIPTED_KEY", "sk-scripted")
        .env_remove("CONTEXT_PILOT_WORKER");
    run(command)
}

/// `codex exec --json PROMPT` in `root` as a person runs it, with `env` added: hook trust NOT
/// bypassed, so Codex runs only the hooks the person trusted in `home`'s `config.toml`.
fn codex_trusting_only_what_home_trusts(
    root: &Path,
    home: &Path,
    prompt: &str,
    env: &[(&str, &str)],
) -> Output {
    let mut command = Command::new(agent_bin("codex"));
    command.envs(env.iter().copied());
    command
        .args([
            "exec",
            "--json",
            "--dangerously-bypass-approvals-and-sandbox",
            prompt,
        ])
        .current_dir(root)
        .env("CODEX_HOME", home)
        .env("CP_SCRIPTED_KEY", "sk-scripted")
        .env_remove("CONTEXT_PILOT_WORKER");
    run(command)
}

#[test]
fn codex_init_twice_changes_nothing_the_second_time() {
    let repo = project("codex");
    let root = repo.path();
    let config = std::fs::read_to_string(root.join(".codex/config.toml")).unwrap();
    assert!(config.contains("[mcp_servers.context-pilot]"), "{config}");
    assert!(config.contains("hook codex-post-tool-use"), "{config}");
    assert!(config.contains("hook codex-stop"), "{config}");
    let again = Command::new(binary_path())
        .args(["init", "codex"])
        .current_dir(root)
        .output()
        .unwrap();
    let said = text(&again.stdout);
    assert!(again.status.success(), "{again:?}");
    assert!(said.contains("nothing to change"), "{said}");
    assert!(said.contains("trust_level = \"trusted\""), "{said}");
    assert!(said.contains("/hooks"), "{said}");
    assert_eq!(
        std::fs::read_to_string(root.join(".codex/config.toml")).unwrap(),
        config
    );
    assert_eq!(git(root, &["status", "--porcelain"]), "");
}

/// The scripted model's MCP call creating a blocking callback on `*.txt` that echoes the
/// changed files.
fn create_callback_call() -> responses::Item {
    callback_call("txt-check", "echo \"callback saw: $CP_CHANGED_FILES\"")
}

/// The MCP call creating the blocking callback `name` on `*.txt` running `script`.
fn callback_call(name: &str, script: &str) -> responses::Item {
    let create = json!({"action": "create", "name": name,
        "description": "check the changed files", "pattern": "*.txt",
        "script_content": script, "blocking": true, "timeout": 20})
    .to_string();
    responses::Item::mcp_call("call_cb", "mcp__context_pilot", "Callback_upsert", &create)
}

#[test]
fn codex_callbacks_fire_on_apply_patch_and_sed_and_a_model_that_never_commits_ends_after_max_blocks()
 {
    let repo = project("codex");
    let root = canonical(repo.path());
    cp_e2e::trust(&root);
    let server = LlmServer::start().unwrap();
    let home = trusting_codex_home(&server, &root);
    server.push(responses::items_turn(&[create_callback_call()]));
    // A script beside the note: code the gate asks to commit (the callback itself is Context
    // Pilot's own config, and the note is docs: neither is).
    let patch = "*** Begin Patch\n*** Add File: notes.txt\n+hello\n*** Add File: src/run.sh\n+echo run\n*** End Patch\n";
    server.push(responses::items_turn(&[responses::Item::apply_patch(
        "call_patch",
        patch,
    )]));
    server.push(responses::items_turn(&[responses::Item::shell(
        "call_sed",
        "sed -i s/hello/HELLO/ notes.txt",
    )]));
    for said in ["Done.", "Everything is done.", "I am done."] {
        server.push(responses::text_turn(said));
    }

    let out = codex(&root, home.path(), "Write notes.txt.");
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    let all = bodies(&server);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}\n{all}");
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "HELLO\n"
    );
    let config = std::fs::read_to_string(root.join(".context-pilot/config.json")).unwrap();
    assert!(
        config.contains("txt-check"),
        "the MCP call made the callback: {config}"
    );
    // Measured on 0.169.0 and 0.171.0: MCP tools are deferred, not in the request's tools (the model finds
    // them with `tool_search`), yet a call naming the namespace `mcp__context_pilot` reaches
    // Context Pilot's server directly.
    let first: Value = serde_json::from_str(&server.requests()[0].raw_body).unwrap();
    let tools = first["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t["type"] == "tool_search"), "{first}");
    assert!(
        !first["tools"].to_string().contains("Callback_upsert"),
        "{first}"
    );
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        6,
        "callback, patch, sed, two blocked stops and the stop the limit lets through:\n{all}"
    );
    // The patch fired the callback, and its output reached the model's next request; the
    // `sed -i` through the shell fired it again.
    let saw = |i: usize| {
        requests[i]
            .raw_body
            .matches("callback saw: notes.txt")
            .count()
    };
    assert_eq!(saw(1), 0, "{all}");
    assert!(saw(2) >= 1, "after apply_patch:\n{all}");
    assert!(saw(3) > saw(2), "after sed -i:\n{all}");
    assert!(requests[4].raw_body.contains("Stop gate: verify"), "{all}");
    assert!(
        requests[5]
            .raw_body
            .contains("Commit your changes before stopping"),
        "{all}"
    );
    let report = saved_report(&root);
    assert!(report["gave_up"].is_string(), "{report}");
    assert_eq!(server.pending_replies(), 0);
}

#[test]
fn codex_that_commits_ends_cleanly() {
    let repo = project("codex");
    let root = canonical(repo.path());
    let server = LlmServer::start().unwrap();
    let home = trusting_codex_home(&server, &root);
    let patch = "*** Begin Patch\n*** Add File: src/new.sh\n+echo new\n*** End Patch\n";
    server.push(responses::items_turn(&[responses::Item::apply_patch(
        "call_patch",
        patch,
    )]));
    server.push(responses::items_turn(&[responses::Item::shell(
        "call_commit",
        "git add -A && git commit -qm 'Add src/new.sh'",
    )]));
    server.push(responses::text_turn("Committed and done."));

    let out = codex(&root, home.path(), "Add src/new.sh.");
    let stdout = text(&out.stdout);
    let all = bodies(&server);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    assert_eq!(
        server.requests().len(),
        3,
        "no block after the commit:\n{all}"
    );
    assert!(git(&root, &["log", "--format=%s"]).contains("Add src/new.sh"));
    let report = saved_report(&root);
    assert!(report["gave_up"].is_null(), "{report}");
    assert!(report["uncommitted_gated"].as_array().unwrap().is_empty());
}

#[test]
fn codex_gets_a_failing_callbacks_failure_and_keeps_the_patch_output() {
    let repo = project("codex");
    let root = canonical(repo.path());
    cp_e2e::trust(&root);
    let server = LlmServer::start().unwrap();
    let home = trusting_codex_home(&server, &root);
    server.push(responses::items_turn(&[callback_call(
        "txt-fail",
        "echo \"txt check failed: $CP_CHANGED_FILES\"; exit 3",
    )]));
    let patch = "*** Begin Patch\n*** Add File: notes.txt\n+hello\n*** End Patch\n";
    server.push(responses::items_turn(&[responses::Item::apply_patch(
        "call_patch",
        patch,
    )]));
    for said in ["Done.", "Everything is done.", "I am done."] {
        server.push(responses::text_turn(said));
    }

    let out = codex(&root, home.path(), "Write notes.txt.");
    let all = bodies(&server);
    assert_eq!(out.status.code(), Some(0), "{}\n{all}", text(&out.stderr));
    let requests = server.requests();
    assert!(requests.len() >= 3, "{all}");
    let after_patch = &requests[2].raw_body;
    assert!(after_patch.contains("Callback 'txt-fail' FAILED"), "{all}");
    assert!(after_patch.contains("txt check failed: notes.txt"), "{all}");
    // The failure came as context: the patch's own output is still there.
    let body: Value = serde_json::from_str(after_patch).unwrap();
    assert!(
        body["input"]
            .as_array()
            .unwrap()
            .iter()
            .any(|item| item["type"] == "custom_tool_call_output"
                && item["call_id"] == "call_patch"
                && item["output"].to_string().contains("notes.txt")),
        "{all}"
    );
}

#[test]
fn codex_runs_the_hooks_init_trust_in_codex_trusted_without_bypassing_hook_trust() {
    let repo = project("codex");
    let root = canonical(repo.path());
    let server = LlmServer::start().unwrap();
    // The project is trusted, its hooks are not yet: Codex skips them silently.
    let home = trusting_codex_home(&server, &root);
    let patch = |name: &str| {
        responses::items_turn(&[responses::Item::apply_patch(
            "call_patch",
            &format!("*** Begin Patch\n*** Add File: {name}\n+hello\n*** End Patch\n"),
        )])
    };
    server.push(patch("before.txt"));
    server.push(responses::text_turn("Done."));
    let out = codex_trusting_only_what_home_trusts(&root, home.path(), "Write before.txt.", &[]);
    let all = bodies(&server);
    assert_eq!(out.status.code(), Some(0), "{}\n{all}", text(&out.stderr));
    assert_eq!(
        server.requests().len(),
        2,
        "no stop gate without trust:\n{all}"
    );
    assert!(!all.contains("Stop gate"), "{all}");

    // The person asks init to trust our hooks in their Codex config.
    let init = Command::new(binary_path())
        .args(["init", "codex", "--trust-in-codex"])
        .current_dir(&root)
        .env("CODEX_HOME", home.path())
        .output()
        .unwrap();
    assert!(init.status.success(), "{init:?}");
    let config = std::fs::read_to_string(home.path().join("config.toml")).unwrap();
    assert!(config.contains("[hooks.state."), "{config}");
    assert!(
        config.contains("model_provider = \"scripted\""),
        "kept: {config}"
    );

    server.push(patch("after.txt"));
    for said in ["Done.", "Everything is done.", "I am done."] {
        server.push(responses::text_turn(said));
    }
    let out = codex_trusting_only_what_home_trusts(&root, home.path(), "Write after.txt.", &[]);
    let all = bodies(&server);
    assert_eq!(out.status.code(), Some(0), "{}\n{all}", text(&out.stderr));
    // Our Stop hook, keyed by the project's `.codex/config.toml`, ran and blocked the stop.
    let requests = server.requests();
    assert!(requests.len() >= 5, "patch, a blocked stop, a stop:\n{all}");
    let blocked = &requests[4].raw_body;
    // Codex names the run `stop:<the handler's place among the hooks>:<its source>`.
    let run_id = blocked
        .split("hook_run_id=\\\"stop:")
        .nth(1)
        .and_then(|rest| rest.split_once(':'))
        .map(|(_, source)| source);
    assert!(
        run_id.is_some_and(|source| source.starts_with(&format!(
            "{}/.codex/config.toml\\\">Stop gate",
            root.display()
        ))),
        "{all}"
    );
}
