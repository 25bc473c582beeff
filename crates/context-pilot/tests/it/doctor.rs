//! `context-pilot doctor` on real project directories: a fresh repository, one wired with
//! `init claude`, and a broken one (the binary its hooks run moved away, an untrusted project
//! with a callback, a provider URL that refuses, `run/` readable by others, a hook that
//! failed), each with its ✓/✗ lines and exit code.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use crate::util::{binary, canonical, context_pilot};
use cp_e2e::{ListedModel, LlmServer, git_repo};
use serde_json::json;

/// A directory holding a stand-in `claude` that reports `version`.
fn stand_in_claude(version: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let claude = dir.path().join("claude");
    std::fs::write(
        &claude,
        format!("#!/bin/sh\necho '{version} (Claude Code)'\n"),
    )
    .unwrap();
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// `PATH` with `dir` first.
fn path_with(dir: &Path) -> String {
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// `context-pilot doctor ARGS` in `root` with `env`: exit code and stdout.
fn doctor(root: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String) {
    let mut command = context_pilot(root);
    command
        .arg("doctor")
        .args(args)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("CP_PROVIDER")
        .env_remove("CP_MODEL")
        .env_remove("CODEX_HOME");
    for (key, value) in env {
        command.env(key, value);
    }
    let out = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code().unwrap_or(-1), stdout)
}

/// Whether `text` has a line starting with `start` that contains each of `parts`.
fn has_line(text: &str, start: &str, parts: &[&str]) -> bool {
    text.lines()
        .any(|line| line.starts_with(start) && parts.iter().all(|p| line.contains(p)))
}

fn server_with_models() -> LlmServer {
    let server = LlmServer::start().unwrap();
    server.set_models(
        vec![ListedModel::new(
            "claude-sonnet-4-5-20250929",
            1_759_104_000,
        )],
        100,
    );
    server
}

#[test]
fn a_fresh_repository_passes_and_doctor_creates_nothing() {
    let repo = git_repo();
    let root = canonical(repo.path());
    let claude = stand_in_claude("2.1.330");
    let server = server_with_models();
    let path = path_with(claude.path());
    let url = server.url();
    let env = [
        ("PATH", path.as_str()),
        ("ANTHROPIC_API_KEY", "sk-ant-scripted"),
        ("ANTHROPIC_BASE_URL", url.as_str()),
    ];
    let (code, out) = doctor(&root, &[], &env);
    assert_eq!(code, 0, "{out}");
    assert!(has_line(&out, "✓ git: ", &["git version"]), "{out}");
    assert!(has_line(&out, "✓ bash: ", &["bash"]), "{out}");
    assert!(
        has_line(&out, "✓ Claude Code: 2.1.330 at ", &["2.0.31 or newer"]),
        "{out}"
    );
    assert!(
        has_line(
            &out,
            "· Claude Code: not wired into this project",
            &["context-pilot init claude"]
        ),
        "{out}"
    );
    assert!(has_line(&out, "✓ project needs no trust", &[]), "{out}");
    assert!(has_line(&out, "✓ Anthropic (", &["key set"]), "{out}");
    assert!(
        has_line(
            &out,
            "✓ Anthropic (",
            &["the model list answers (1 models)"]
        ),
        "{out}"
    );
    assert!(
        has_line(&out, "✓ model `claude-sonnet-4-5-20250929` is listed", &[]),
        "{out}"
    );
    assert!(
        has_line(&out, "✓ console server: not running", &[]),
        "{out}"
    );
    assert!(
        has_line(&out, "✓ .context-pilot/run/: not created yet", &[]),
        "{out}"
    );
    assert!(out.ends_with("No problems found.\n"), "{out}");
    assert!(!out.contains('✗'), "{out}");
    // Doctor only reads.
    assert!(!root.join(".context-pilot").exists());
}

#[test]
fn a_wired_repository_shows_each_agent_s_wiring() {
    let repo = git_repo();
    let root = canonical(repo.path());
    let out = context_pilot(&root)
        .args(["init", "claude"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let claude = stand_in_claude("2.1.330");
    let server = server_with_models();
    let path = path_with(claude.path());
    let url = server.url();
    let env = [
        ("PATH", path.as_str()),
        ("ANTHROPIC_API_KEY", "sk-ant-scripted"),
        ("ANTHROPIC_BASE_URL", url.as_str()),
    ];
    let (code, out) = doctor(&root, &[], &env);
    assert_eq!(code, 0, "{out}");
    let program = canonical(&binary()).display().to_string();
    assert!(
        has_line(
            &out,
            "✓ Claude Code: wired (.mcp.json, .claude/settings.json), running ",
            &[&program]
        ),
        "{out}"
    );
    assert!(
        has_line(&out, "· Gemini CLI: not wired into this project", &[]),
        "{out}"
    );
}

/// A repository wired by a binary that then moved away (returned: its path), untrusted with a
/// callback, with a failed hook in its log and `run/` readable by others.
fn broken_repository() -> (tempfile::TempDir, std::path::PathBuf, String) {
    let repo = git_repo();
    let root = canonical(repo.path());
    // Wired by a binary that then moved away.
    let elsewhere = tempfile::tempdir().unwrap();
    let copy = elsewhere.path().join("context-pilot");
    std::fs::copy(binary(), &copy).unwrap();
    let out = Command::new(&copy)
        .args(["init", "claude"])
        .current_dir(&root)
        .env("XDG_CONFIG_HOME", cp_e2e::config_home())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let moved = canonical(&copy).display().to_string();
    std::fs::remove_file(&copy).unwrap();
    // An untrusted project with a callback.
    std::fs::create_dir_all(root.join(".context-pilot/scripts")).unwrap();
    std::fs::write(
        root.join(".context-pilot/config.json"),
        json!({"callbacks": {"next_id": 2, "definitions": [
            {"id": "CB1", "name": "lint", "description": "lint", "pattern": ["*.rs"],
             "blocking": true, "timeout": 60}
        ]}})
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        root.join(".context-pilot/scripts/lint.sh"),
        "#!/bin/bash\necho linted\n",
    )
    .unwrap();
    // A hook that failed (its payload was not JSON), logged under .context-pilot/logs/.
    let mut hook = context_pilot(&root)
        .args(["hook", "stop"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut hook.stdin.take().unwrap(), b"not json").unwrap();
    assert!(hook.wait().unwrap().success(), "a hook always exits 0");
    // run/ left readable by others (as an older version made it).
    std::fs::create_dir_all(root.join(".context-pilot/run")).unwrap();
    std::fs::set_permissions(
        root.join(".context-pilot/run"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    (repo, root, moved)
}

#[test]
fn a_broken_repository_names_each_problem_with_its_fix_and_exits_1() {
    let (_repo, root, moved) = broken_repository();
    let claude = stand_in_claude("2.1.330");
    let path = path_with(claude.path());
    // A provider URL where nothing listens.
    let env = [
        ("PATH", path.as_str()),
        ("ANTHROPIC_API_KEY", "sk-ant-scripted"),
        ("ANTHROPIC_BASE_URL", "http://127.0.0.1:1"),
    ];
    let (code, out) = doctor(&root, &[], &env);
    assert_eq!(code, 1, "{out}");
    assert!(
        has_line(
            &out,
            "✗ Claude Code: the MCP server in .mcp.json runs ",
            &[
                &moved,
                "not there any more",
                "fix: run `context-pilot init claude` again"
            ]
        ),
        "{out}"
    );
    assert!(
        has_line(
            &out,
            "✗ project is not trusted, so these are off: its callbacks `lint`",
            &["fix: review it with `context-pilot trust --show"]
        ),
        "{out}"
    );
    assert!(
        has_line(
            &out,
            "✗ Anthropic (http://127.0.0.1:1): the model list does not answer",
            &["fix: check that the server runs"]
        ),
        "{out}"
    );
    assert!(
        has_line(
            &out,
            "✗ .context-pilot/run/: mode 755, not 700",
            &["fix: `chmod -R go-rwx "]
        ),
        "{out}"
    );
    assert!(
        has_line(
            &out,
            "✗ hook log: 1 hook error(s) in ",
            &["malformed payload", "fix: "]
        ),
        "{out}"
    );
    assert!(has_line(&out, "✓ git: ", &[]), "{out}");
    assert!(out.ends_with("5 problem(s) found.\n"), "{out}");

    let (code, json) = doctor(&root, &["--json"], &env);
    assert_eq!(code, 1, "{json}");
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["ok"], false);
    let failed: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "fail")
        .map(|c| c["group"].as_str().unwrap())
        .collect();
    assert_eq!(
        failed,
        ["wiring", "trust", "provider", "modes", "hooks"],
        "{json}"
    );
}

#[test]
fn half_wiring_fails_and_agent_command_from_config_is_what_is_checked() {
    let repo = git_repo();
    let root = canonical(repo.path());
    let out = context_pilot(&root)
        .args(["init", "claude"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    // Claude Code only at the path config names, not on PATH.
    let claude = stand_in_claude("2.1.330");
    let command = canonical(&claude.path().join("claude"))
        .display()
        .to_string();
    let config = |command: &str| {
        std::fs::write(
            root.join(".context-pilot/config.json"),
            json!({"agent": {"kind": "claude", "command": command}}).to_string(),
        )
        .unwrap();
        cp_e2e::trust(&root);
    };
    std::fs::create_dir_all(root.join(".context-pilot")).unwrap();
    config(&command);
    let (_, out) = doctor(&root, &[], &[]);
    assert!(
        has_line(
            &out,
            "✓ Claude Code: 2.1.330 at ",
            &[&command, "(agent.command)"]
        ),
        "{out}"
    );
    assert!(
        has_line(
            &out,
            "✓ Claude Code: wired (.mcp.json, .claude/settings.json)",
            &[]
        ),
        "{out}"
    );
    config("/nonexistent/claude");
    let (code, out) = doctor(&root, &[], &[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        has_line(
            &out,
            "✗ Claude Code: agent.command `/nonexistent/claude` is not found",
            &["fix: fix agent.command"]
        ),
        "{out}"
    );
    // The MCP server entry removed: the hooks alone are half the wiring.
    std::fs::remove_file(root.join(".mcp.json")).unwrap();
    let (code, out) = doctor(&root, &[], &[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        has_line(
            &out,
            "✗ Claude Code: half wired — .mcp.json / .claude/settings.json has no Context Pilot \
             entry for the MCP server",
            &["fix: run `context-pilot init claude` again"]
        ),
        "{out}"
    );
}

/// Issue 41: doctor says which test command the stop gate will run here and why, whether
/// its runner is installed (with the install command when not), and that git works in the
/// project: a repository git refuses switches the gate off, and doctor says so.
#[test]
fn the_stop_gate_group_names_the_test_command_its_runner_and_git() {
    let repo = git_repo();
    let root = canonical(repo.path());
    std::fs::write(root.join("Makefile"), "test:\n\tpython3 -m unittest\n").unwrap();
    let (_, out) = doctor(&root, &[], &[]);
    assert!(
        has_line(&out, "✓ git works here (repository ", &[]),
        "{out}"
    );
    assert!(
        has_line(
            &out,
            "✓ tests: `make test` in ",
            &[
                "the project declares it: Makefile's `test` target",
                "limit 30s",
                "its runner is installed"
            ]
        ),
        "{out}"
    );

    std::fs::remove_file(root.join("Makefile")).unwrap();
    std::fs::write(
        root.join("package.json"),
        r#"{"scripts": {"test": "jest"}, "devDependencies": {"jest": "29.7.0"}}"#,
    )
    .unwrap();
    std::fs::write(root.join("package-lock.json"), "{}").unwrap();
    let (code, out) = doctor(&root, &[], &[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        has_line(
            &out,
            "✗ tests: `npm test` in ",
            &["not installed: node_modules", "— fix: `npm ci`"]
        ),
        "{out}"
    );

    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        assert!(
            std::env::var_os("CI").is_none(),
            "a repository owned by another user needs root; under CI this fails"
        );
        eprintln!("not root: the dubious-ownership check is skipped");
        return;
    }
    let chowned = Command::new("chown")
        .args(["-R", "nobody"])
        .arg(&root)
        .status()
        .is_ok_and(|s| s.success());
    assert!(chowned);
    let (code, out) = doctor(&root, &[], &[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        has_line(
            &out,
            "✗ git refuses this project (fatal: detected dubious ownership",
            &[
                "the stop gate is off",
                &format!(
                    "git config --global --add safe.directory {}",
                    root.display()
                )
            ]
        ),
        "{out}"
    );
}
