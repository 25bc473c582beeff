//! `context-pilot init claude|gemini` on real project directories.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::path::Path;

use crate::util::{binary, canonical, context_pilot};
use serde_json::{Value, json};

fn init(root: &Path, args: &[&str]) -> (bool, String, String) {
    let out = context_pilot(root).arg("init").args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Not on PATH in tests, so the absolute path of the binary is used.
fn program() -> String {
    canonical(&binary()).display().to_string()
}

#[test]
fn claude_dry_run_prints_a_diff_and_writes_nothing_then_init_merges() {
    let dir = tempfile::tempdir().unwrap();
    let root = canonical(dir.path());
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    let settings = "{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"Stop\": [\n      {\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"notify-send done\"\n          }\n        ]\n      }\n    ]\n  }\n}\n";
    std::fs::write(root.join(".claude/settings.json"), settings).unwrap();

    let (ok, stdout, stderr) = init(&root, &["claude", "--dry-run"]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("--- /dev/null\n+++ b/.mcp.json"),
        "{stdout}"
    );
    assert!(
        stdout.contains("--- a/.claude/settings.json\n+++ b/.claude/settings.json"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "+            \"command\": \"{} hook stop\",",
            program()
        )),
        "{stdout}"
    );
    assert!(stdout.contains("nothing was written"), "{stdout}");
    assert!(!root.join(".mcp.json").exists());
    assert_eq!(
        std::fs::read_to_string(root.join(".claude/settings.json")).unwrap(),
        settings
    );

    let (ok, stdout, stderr) = init(&root, &["claude"]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("Created .mcp.json") && stdout.contains("Updated .claude/settings.json"),
        "{stdout}"
    );
    let mcp = read_json(&root.join(".mcp.json"));
    assert_eq!(
        mcp["mcpServers"]["context-pilot"],
        json!({"command": program(), "args": ["mcp"]})
    );
    let merged = read_json(&root.join(".claude/settings.json"));
    assert_eq!(merged["model"], "opus");
    let stop = merged["hooks"]["Stop"].as_array().unwrap();
    assert_eq!(stop.len(), 2, "{merged}");
    assert_eq!(stop[0]["hooks"][0]["command"], "notify-send done");
    // No Claude Code on PATH here: the newest release's wiring, callbacks once per batch.
    let batch = &merged["hooks"]["PostToolBatch"][0];
    assert!(batch.get("matcher").is_none(), "{merged}");
    assert_eq!(
        batch["hooks"][0]["command"],
        format!("{} hook post-tool-batch", program())
    );
    assert!(merged["hooks"].get("PostToolUse").is_none(), "{merged}");
    // Every start of a session (compaction included: the handoff back) runs session-start.
    let start = &merged["hooks"]["SessionStart"][0];
    assert!(start.get("matcher").is_none(), "{merged}");
    assert_eq!(
        start["hooks"][0]["command"],
        format!("{} hook session-start", program())
    );
    // Key order of the user's file is kept: "model" still comes first.
    let text = std::fs::read_to_string(root.join(".claude/settings.json")).unwrap();
    assert!(
        text.starts_with("{\n  \"model\": \"opus\",\n  \"hooks\""),
        "{text}"
    );

    // Idempotent.
    let (ok, stdout, _) = init(&root, &["claude"]);
    assert!(ok);
    assert!(stdout.contains("nothing to change"), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(root.join(".claude/settings.json")).unwrap(),
        text
    );
}

#[test]
fn gemini_init_keeps_other_servers_and_hooks() {
    let dir = tempfile::tempdir().unwrap();
    let root = canonical(dir.path());
    std::fs::create_dir_all(root.join(".gemini")).unwrap();
    std::fs::write(
        root.join(".gemini/settings.json"),
        json!({
            "theme": "Dracula",
            "mcpServers": {"github": {"command": "gh-mcp"}},
            "hooks": {"AfterTool": [{"matcher": "run_shell_command",
                "hooks": [{"name": "audit", "type": "command", "command": "audit.sh"}]}]}
        })
        .to_string(),
    )
    .unwrap();
    let (ok, _, stderr) = init(&root, &["gemini"]);
    assert!(ok, "{stderr}");
    let doc = read_json(&root.join(".gemini/settings.json"));
    assert_eq!(doc["theme"], "Dracula");
    assert_eq!(doc["mcpServers"]["github"]["command"], "gh-mcp");
    assert_eq!(doc["mcpServers"]["context-pilot"]["args"], json!(["mcp"]));
    let after_tool = doc["hooks"]["AfterTool"].as_array().unwrap();
    assert_eq!(after_tool.len(), 2);
    assert_eq!(after_tool[0]["hooks"][0]["name"], "audit");
    assert_eq!(
        after_tool[1]["matcher"],
        "write_file|replace|run_shell_command"
    );
    assert_eq!(
        after_tool[1]["hooks"][0]["command"],
        format!("{} hook after-tool", program())
    );
    assert_eq!(after_tool[1]["hooks"][0]["timeout"], 600_000);
    assert_eq!(
        doc["hooks"]["AfterAgent"][0]["hooks"][0]["command"],
        format!("{} hook after-agent", program())
    );
    let (_, again, _) = init(&root, &["gemini", "--dry-run"]);
    assert!(again.contains("nothing to change"), "{again}");

    // A broken file is reported and kept as it is.
    std::fs::write(root.join(".gemini/settings.json"), "{ \"theme\": ").unwrap();
    let (ok, _, stderr) = init(&root, &["gemini"]);
    assert!(!ok);
    assert!(
        stderr.contains("is not valid JSON") && stderr.contains("nothing was written"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join(".gemini/settings.json")).unwrap(),
        "{ \"theme\": "
    );
}

/// `init` with no agent in a project that has `.claude/` and `.gemini/`: `--yes` wires both
/// (and not Codex, whose folder it lacks); without `--yes` and without a terminal it changes
/// nothing, says why and exits 2.
#[test]
fn init_without_an_agent_wires_the_agents_whose_folders_the_project_has() {
    let dir = tempfile::tempdir().unwrap();
    let root = canonical(dir.path());
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::create_dir_all(root.join(".gemini")).unwrap();

    // Not a terminal (stdin is /dev/null), no --yes: nothing changes.
    let out = context_pilot(&root)
        .arg("init")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
    assert!(
        stdout.contains("Claude Code (.claude/ in the project)")
            && stdout.contains("Gemini CLI (.gemini/ in the project)"),
        "{stdout}"
    );
    assert!(!stdout.contains("Codex"), "{stdout}");
    assert!(
        stderr.contains("stdin is not a terminal, so nothing was changed (exit 2)")
            && stderr.contains("context-pilot init --yes"),
        "{stderr}"
    );
    assert!(!root.join(".mcp.json").exists());
    assert!(!root.join(".claude/settings.json").exists());
    assert!(!root.join(".gemini/settings.json").exists());

    // --yes: both are wired as `init claude` and `init gemini` wire them.
    let (ok, stdout, stderr) = init(&root, &["--yes"]);
    assert!(ok, "{stdout}{stderr}");
    assert!(
        stdout.contains("Created .mcp.json")
            && stdout.contains("Created .claude/settings.json")
            && stdout.contains("Created .gemini/settings.json"),
        "{stdout}"
    );
    let claude = read_json(&root.join(".claude/settings.json"));
    assert_eq!(
        claude["hooks"]["Stop"][0]["hooks"][0]["command"],
        format!("{} hook stop", program())
    );
    let gemini = read_json(&root.join(".gemini/settings.json"));
    assert_eq!(
        gemini["mcpServers"]["context-pilot"]["command"],
        json!(program())
    );
    assert!(!root.join(".codex").exists());
    // Again: nothing to change, for either.
    let (ok, stdout, _) = init(&root, &["--yes"]);
    assert!(ok);
    assert_eq!(stdout.matches("nothing to change").count(), 2, "{stdout}");
}

/// `init` with no agent on a terminal asks once; `y` wires what it found.
#[test]
fn init_without_an_agent_asks_once_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let root = canonical(dir.path());
    std::fs::create_dir_all(root.join(".gemini")).unwrap();
    let config = cp_e2e::config_home();
    let env = [("XDG_CONFIG_HOME", config.to_str().unwrap())];
    let mut session = cp_e2e::TuiSession::start(&root, &["init"], &env).unwrap();
    let screen = session
        .wait_for("[y/N]", std::time::Duration::from_secs(30))
        .unwrap();
    assert!(
        screen.contains("Gemini CLI (.gemini/ in the project)"),
        "{screen}"
    );
    session.send(b"y\r");
    assert_eq!(
        session
            .wait_exit(std::time::Duration::from_secs(30))
            .unwrap(),
        0
    );
    let gemini = read_json(&root.join(".gemini/settings.json"));
    assert_eq!(
        gemini["mcpServers"]["context-pilot"]["command"],
        json!(program())
    );
}

/// `context-pilot ARGS` in `root` with Codex's home at `codex_home`: success and stdout.
fn with_codex_home(root: &Path, codex_home: &Path, args: &[&str]) -> (bool, String) {
    let out = context_pilot(root)
        .args(args)
        .env("CODEX_HOME", codex_home)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    (out.status.success(), format!("{stdout}{stderr}"))
}

#[test]
fn codex_trust_in_codex_records_exactly_our_trust_and_doctor_checks_its_hash() {
    let repo = cp_e2e::git_repo();
    let root = canonical(repo.path());
    let home = tempfile::tempdir().unwrap();
    let config = canonical(home.path()).join("config.toml");
    let mine = "# my Codex settings\nmodel = \"gpt-5.5\" # keep me\n\n\
                [projects.\"/elsewhere\"]\ntrust_level = \"untrusted\"\n";
    std::fs::write(&config, mine).unwrap();

    // --trust-in-codex needs `codex`.
    let (ok, out) = with_codex_home(&root, home.path(), &["init", "claude", "--trust-in-codex"]);
    assert!(!ok, "{out}");
    assert!(
        out.contains("--trust-in-codex is for `init codex` only"),
        "{out}"
    );

    // A dry run shows both diffs and writes nothing.
    let args = ["init", "codex", "--trust-in-codex", "--dry-run"];
    let (ok, out) = with_codex_home(&root, home.path(), &args);
    assert!(ok, "{out}");
    assert!(out.contains("+++ b/.codex/config.toml"), "{out}");
    assert!(out.contains(&format!("+++ {}", config.display())), "{out}");
    assert!(out.contains("+trust_level = \"trusted\""), "{out}");
    assert!(out.contains("2 file(s) would change"), "{out}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), mine);
    assert!(!root.join(".codex").exists());

    let (ok, out) = with_codex_home(&root, home.path(), &["init", "codex", "--trust-in-codex"]);
    assert!(ok, "{out}");
    assert!(
        out.contains(&format!("Updated {}", config.display())),
        "{out}"
    );
    let written = std::fs::read_to_string(&config).unwrap();
    assert!(
        written.starts_with(mine),
        "kept as it was, trust added after:\n{written}"
    );
    let doc: toml_edit::DocumentMut = written.parse().unwrap();
    assert_eq!(
        doc["projects"][&root.display().to_string()]["trust_level"].as_str(),
        Some("trusted")
    );
    let state = doc["hooks"]["state"].as_table().unwrap();
    let source = root.join(".codex/config.toml").display().to_string();
    let mut keys: Vec<&str> = state.iter().map(|(key, _)| key).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            format!("{source}:post_tool_use:0:0"),
            format!("{source}:session_start:0:0"),
            format!("{source}:stop:0:0"),
            format!("{source}:subagent_stop:0:0"),
        ],
        "{written}"
    );
    assert!(state.iter().all(|(_, entry)| {
        entry["trusted_hash"]
            .as_str()
            .is_some_and(|h| h.starts_with("sha256:") && h.len() == 71)
    }));

    // A second run changes nothing.
    let (ok, out) = with_codex_home(&root, home.path(), &["init", "codex", "--trust-in-codex"]);
    assert!(ok, "{out}");
    assert!(out.contains("nothing to change"), "{out}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), written);

    // Doctor: both trusts hold, exactly.
    let (_, out) = with_codex_home(&root, home.path(), &["doctor"]);
    assert!(
        out.contains(&format!("✓ Codex CLI trusts {}", root.display())),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "✓ Codex CLI trusts Context Pilot's 4 hook(s) in {source}, as written"
        )),
        "{out}"
    );
    // The hooks change (the binary moved): their trust no longer holds.
    let project = std::fs::read_to_string(root.join(".codex/config.toml")).unwrap();
    std::fs::write(
        root.join(".codex/config.toml"),
        project.replace(&program(), "/moved/context-pilot"),
    )
    .unwrap();
    let (ok, out) = with_codex_home(&root, home.path(), &["doctor"]);
    assert!(!ok, "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("✗ 4 of Context Pilot's 4 hook(s)")
                && l.contains("changed since you trusted them")),
        "{out}"
    );
}

/// The mode bits of `path` (following links).
fn mode(path: &Path) -> u32 {
    std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(path).unwrap().permissions()) & 0o777
}

#[test]
fn a_symlinked_settings_file_is_written_through_and_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let top = canonical(dir.path());
    let root = top.join("app");
    std::fs::create_dir_all(root.join(".codex")).unwrap();
    std::fs::create_dir_all(top.join("shared")).unwrap();
    let mcp = top.join("shared/mcp.json");
    let secret = "{\n  \"mcpServers\": {\n    \"pg\": {\n      \"command\": \"pg-mcp\",\n      \"env\": {\"PGPASSWORD\": \"hunter2\"}\n    }\n  }\n}\n";
    std::fs::write(&mcp, secret).unwrap();
    std::fs::set_permissions(&mcp, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::os::unix::fs::symlink("../shared/mcp.json", root.join(".mcp.json")).unwrap();
    let codex = top.join("shared/codex.toml");
    std::fs::write(&codex, "# mine\nmodel = \"gpt-5.5\"\n").unwrap();
    std::fs::set_permissions(&codex, std::fs::Permissions::from_mode(0o640)).unwrap();
    std::os::unix::fs::symlink("../../shared/codex.toml", root.join(".codex/config.toml")).unwrap();

    for agent in ["claude", "codex"] {
        let (ok, stdout, stderr) = init(&root, &[agent]);
        assert!(ok, "{stdout}{stderr}");
        assert!(stdout.contains("(through the link, in "), "{stdout}");
    }
    for (link, target, bits) in [
        (".mcp.json", &mcp, 0o600),
        (".codex/config.toml", &codex, 0o640),
    ] {
        let meta = std::fs::symlink_metadata(root.join(link)).unwrap();
        assert!(meta.file_type().is_symlink(), "{link} is still a link");
        assert_eq!(mode(target), bits, "{} keeps its mode", target.display());
    }
    let shared = read_json(&mcp);
    assert_eq!(shared["mcpServers"]["pg"]["env"]["PGPASSWORD"], "hunter2");
    assert_eq!(
        shared["mcpServers"]["context-pilot"]["command"],
        json!(program())
    );
    let toml = std::fs::read_to_string(&codex).unwrap();
    assert!(
        toml.starts_with("# mine\n") && toml.contains("[mcp_servers.context-pilot]"),
        "{toml}"
    );

    // A link to nothing is refused, and nothing is written.
    std::fs::remove_file(root.join(".mcp.json")).unwrap();
    std::os::unix::fs::symlink("../shared/gone.json", root.join(".mcp.json")).unwrap();
    std::fs::write(root.join(".claude/settings.json"), "{}\n").unwrap();
    let (ok, stdout, stderr) = init(&root, &["claude"]);
    assert!(!ok, "{stdout}");
    assert!(
        stderr.contains(".mcp.json is a symlink to ../shared/gone.json"),
        "{stderr}"
    );
    assert!(stderr.contains("nothing was written"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(root.join(".claude/settings.json")).unwrap(),
        "{}\n"
    );
    assert!(!top.join("shared/gone.json").exists());
}

#[test]
fn trust_in_codex_never_turns_an_explicit_untrusted_into_trusted() {
    let repo = cp_e2e::git_repo();
    let root = canonical(repo.path());
    let home = tempfile::tempdir().unwrap();
    let config = canonical(home.path()).join("config.toml");
    let mine = format!(
        "[projects.\"{}\"]\ntrust_level = \"untrusted\"\n",
        root.display()
    );
    std::fs::write(&config, &mine).unwrap();
    let (ok, out) = with_codex_home(&root, home.path(), &["init", "codex", "--trust-in-codex"]);
    assert!(!ok, "{out}");
    assert!(out.contains("does not overrule your own choice"), "{out}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), mine);
    assert!(!root.join(".codex").exists(), "nothing was written");
}
