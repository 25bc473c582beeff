//! Gemini CLI: the gate's blocks and the person's message, a commit that ends cleanly, and the
//! extension of `plugins/gemini` installed with `gemini extensions install`.

use super::*;

/// A test `HOME` for Gemini CLI: API-key auth, and `root` trusted.
fn gemini_home(root: &Path) -> tempfile::TempDir {
    gemini_home_trusting(&[root])
}

/// A test `HOME` for Gemini CLI: API-key auth, and each of `folders` trusted.
fn gemini_home_trusting(folders: &[&Path]) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".gemini");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("settings.json"),
        json!({"security": {"auth": {"selectedType": "gemini-api-key"}}}).to_string(),
    )
    .unwrap();
    let mut trusted = serde_json::Map::new();
    for folder in folders {
        trusted.insert(folder.display().to_string(), json!("TRUST_FOLDER"));
    }
    std::fs::write(
        dir.join("trustedFolders.json"),
        Value::Object(trusted).to_string(),
    )
    .unwrap();
    home
}

fn gemini_cli(root: &Path, home: &Path, server: &LlmServer) -> Output {
    gemini_cli_with(root, home, server, &[])
}

/// `gemini -p …` in `root` with the test `home`, against `server`, with `env` added.
fn gemini_cli_with(root: &Path, home: &Path, server: &LlmServer, env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(agent_bin("gemini"));
    for (key, value) in env {
        command.env(key, value);
    }
    command
        .args(["-p", "Add src/new.sh.", "--yolo", "--output-format", "json"])
        .current_dir(root)
        .env("HOME", home)
        .env("GEMINI_API_KEY", "scripted")
        .env("GOOGLE_GEMINI_BASE_URL", server.url())
        .env("GEMINI_CLI_NO_RELAUNCH", "true")
        .env_remove("CONTEXT_PILOT_WORKER");
    run(command)
}

fn gemini_server() -> LlmServer {
    let server = LlmServer::start().unwrap();
    server.answer_side_requests(gemini::side_reply);
    server
}

#[test]
fn gemini_cli_that_never_commits_stops_after_max_blocks_and_the_person_is_told() {
    let repo = project("gemini");
    let root = canonical(repo.path());
    let home = gemini_home(&root);
    let server = gemini_server();
    let write = json!({"file_path": root.join("src/new.sh"), "content": "echo new\n"}).to_string();
    server.push(gemini::tool_call_turn(&[("write_file", &write)]));
    for said in ["Done.", "Everything is done.", "I am done."] {
        server.push(gemini::text_turn(said));
    }

    let out = gemini_cli(&root, home.path(), &server);
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        root.join("src/new.sh").exists(),
        "write_file ran:\n{stdout}\n{stderr}"
    );
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        4,
        "one tool turn, two blocked stops, the stop the limit lets through:\n{stdout}\n{stderr}"
    );
    assert!(requests[2].raw_body.contains("Stop gate: verify"));
    assert!(
        requests[3]
            .raw_body
            .contains("Commit your changes before stopping")
    );
    let all = format!("{stdout}\n{stderr}");
    assert!(
        all.contains("the agent stopped with work left"),
        "no systemMessage in Gemini CLI's output:\n{all}"
    );
    let report = saved_report(&root);
    assert!(report["gave_up"].is_string(), "{report}");
}

#[test]
fn gemini_cli_that_commits_ends_cleanly() {
    let repo = project("gemini");
    let root = canonical(repo.path());
    let home = gemini_home(&root);
    let server = gemini_server();
    let write = json!({"file_path": root.join("src/new.sh"), "content": "echo new\n"}).to_string();
    server.push(gemini::tool_call_turn(&[("write_file", &write)]));
    let commit = json!({"command": "git add -A && git commit -qm 'Add src/new.sh'",
        "description": "Commit the change"})
    .to_string();
    server.push(gemini::tool_call_turn(&[("run_shell_command", &commit)]));
    server.push(gemini::text_turn("Committed and done."));

    let out = gemini_cli(&root, home.path(), &server);
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(
        server.requests().len(),
        3,
        "no block after the commit:\n{stdout}\n{stderr}"
    );
    assert!(git(&root, &["log", "--format=%s"]).contains("Add src/new.sh"));
    assert!(!stdout.contains("stopped with work left"), "{stdout}");
    let report = saved_report(&root);
    assert!(report["gave_up"].is_null(), "{report}");
}

/// `gemini extensions ARGS` with the test `home`; must succeed. Its output.
fn gemini_extensions(home: &Path, args: &[&str]) -> String {
    let args = [&["extensions"], args].concat();
    agent_setup("gemini", &args, |command| {
        command
            .env("HOME", home)
            .env("GEMINI_CLI_NO_RELAUNCH", "true");
    })
}

/// The extension of `plugins/gemini`, installed with `gemini extensions install` (its source
/// folder trusted, `--consent` given for the prompt) and with `context-pilot` on `PATH`, in a
/// project no `init` wired: a `write_file` that matches a callback gets the callback's output,
/// and the red edit is held at `AfterAgent` with the failing test named, as after `init gemini`.
#[test]
fn gemini_cli_with_the_extension_runs_callbacks_and_holds_red_work_as_after_init() {
    let (_repo, root, runs) = calc_project_with_py_callback();
    let extension = checkout().join("plugins/gemini");
    // Gemini CLI installs an extension only from a folder the person trusts.
    let home = gemini_home_trusting(&[&root, &extension]);
    let source = extension.to_str().unwrap();
    // Each starts node and loads the CLI for seconds: both at once.
    let validated = std::thread::scope(|scope| {
        let validate = scope.spawn(|| gemini_extensions(home.path(), &["validate", source]));
        gemini_extensions(home.path(), &["install", source, "--consent"]);
        validate.join().unwrap()
    });
    assert!(
        !said_a_problem(&validated),
        "`gemini extensions validate` is not clean: {validated}"
    );
    let installed = home.path().join(".gemini/extensions/context-pilot");
    assert!(
        installed.join("hooks/hooks.json").is_file(),
        "the extension's hooks were installed"
    );
    assert!(
        !root.join(".gemini").exists(),
        "the extension wired nothing into the project"
    );

    let server = gemini_server();
    let red = json!({"file_path": root.join("calc.py"),
        "content": "def add(a, b):\n    return a - b\n"})
    .to_string();
    server.push(gemini::tool_call_turn(&[("write_file", &red)]));
    server.push(gemini::text_turn("Done."));
    server.push(gemini::text_turn("I am done."));
    let path = path_with_binary();
    let out = gemini_cli_with(&root, home.path(), &server, &[("PATH", path.as_str())]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        text(&out.stderr),
        bodies(&server)
    );
    assert_callback_ran_and_red_work_held(&server, &root, runs.path(), "write");
}

/// Whether a CLI's report names a warning or an error.
fn said_a_problem(said: &str) -> bool {
    let lower = said.to_lowercase();
    ["warn", "error", "invalid", "fail"]
        .iter()
        .any(|word| lower.contains(word))
}
