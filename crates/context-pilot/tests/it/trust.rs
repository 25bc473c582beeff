//! Issue 14 §1, end to end with the real binary: a cloned repository's callbacks, test
//! command and `llm.base_url` take effect only once the person trusts the project.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use crate::util::{canonical, context_pilot, fixture, hook, stop_console_server};
use cp_e2e::{LlmServer, git, git_repo, openai};
use serde_json::{Value, json};

const WORKFLOW: &str = "name: wf\nphases:\n  - id: only\n    prompt: Say done.\n";

/// A repository as someone else committed it: a blocking callback active for `main` that
/// appends to `ran.log` after edits to `*.sh`.
fn cloned_project_with_a_callback() -> (tempfile::TempDir, PathBuf) {
    let repo = git_repo();
    let root = canonical(repo.path());
    std::fs::create_dir_all(root.join(".context-pilot/scripts")).unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(
        root.join(".context-pilot/config.json"),
        json!({"callbacks": {
            "next_id": 2,
            "definitions": [{"id": "CB1", "name": "mark", "pattern": ["*.sh"],
                             "blocking": true, "timeout": 60}],
            "active": {"main": ["CB1"]}
        }})
        .to_string(),
    )
    .unwrap();
    let script = root.join(".context-pilot/scripts/mark.sh");
    std::fs::write(
        &script,
        "#!/usr/bin/env bash\necho ran >> \"$CP_PROJECT_ROOT/ran.log\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(root.join("src/greet.sh"), "echo hello\n").unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "someone else's config"]);
    (repo, root)
}

fn runs(root: &Path) -> usize {
    std::fs::read_to_string(root.join("ran.log"))
        .unwrap_or_default()
        .lines()
        .count()
}

fn edit_hook(root: &Path) -> crate::util::HookRun {
    let run = hook(
        "post-tool-use",
        root,
        &fixture("claude_post_tool_use_write.json", root, root),
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    run
}

/// The `systemMessage` of a hook reply, if any.
fn system_message(run: &crate::util::HookRun) -> Option<String> {
    if run.stdout.trim().is_empty() {
        return None;
    }
    run.json()["systemMessage"].as_str().map(str::to_owned)
}

#[test]
fn a_committed_callback_runs_from_hooks_only_once_trusted() {
    let (_repo, root) = cloned_project_with_a_callback();

    let first = edit_hook(&root);
    assert_eq!(runs(&root), 0, "ran untrusted: {first:?}");
    let told = system_message(&first).unwrap_or_else(|| panic!("not told: {first:?}"));
    assert!(
        told.contains("not trusted") && told.contains("context-pilot trust"),
        "{told}"
    );
    let second = edit_hook(&root);
    assert_eq!(runs(&root), 0);
    assert_eq!(system_message(&second), None, "told twice: {second:?}");

    crate::util::trust(&root);
    let trusted = edit_hook(&root);
    assert_eq!(runs(&root), 1, "{trusted:?}");
    assert_eq!(system_message(&trusted), None);

    // A hand edit of the script (a pull, an editor) needs trusting again.
    let script = root.join(".context-pilot/scripts/mark.sh");
    let text = std::fs::read_to_string(&script).unwrap();
    std::fs::write(
        &script,
        format!("{text}echo edited >> \"$CP_PROJECT_ROOT/ran.log\"\n"),
    )
    .unwrap();
    let changed = edit_hook(&root);
    assert_eq!(runs(&root), 1, "the edited script ran: {changed:?}");
    let told = system_message(&changed).unwrap_or_else(|| panic!("not told: {changed:?}"));
    assert!(told.contains("changed outside Context Pilot"), "{told}");
    stop_console_server(&root);
}

/// Runs `File_write src/greet.sh` `count` times through one MCP server; the result texts.
fn mcp_writes(root: &Path, count: usize) -> Vec<String> {
    let mut child = context_pilot(root)
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |message: Value| writeln!(stdin, "{message}").unwrap();
    send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "trust-test", "version": "1"}}}),
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let mut texts = Vec::new();
    for id in 1..=count {
        send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "File_write",
                       "arguments": {"file_path": "src/greet.sh", "content": format!("echo {id}\n")}}}));
        loop {
            let mut line = String::new();
            assert!(
                stdout.read_line(&mut line).unwrap() > 0,
                "the MCP server closed"
            );
            let reply: Value = serde_json::from_str(&line).unwrap();
            if reply["id"] == json!(id) {
                texts.push(
                    reply["result"]["content"][0]["text"]
                        .as_str()
                        .unwrap_or_else(|| panic!("{reply}"))
                        .to_owned(),
                );
                break;
            }
        }
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
    texts
}

#[test]
fn a_committed_callback_runs_from_mcp_only_once_trusted() {
    let (_repo, root) = cloned_project_with_a_callback();
    let texts = mcp_writes(&root, 2);
    assert_eq!(runs(&root), 0, "ran untrusted: {texts:?}");
    assert!(
        texts[0].contains("not trusted") && texts[0].contains("context-pilot trust"),
        "{}",
        texts[0]
    );
    assert!(
        !texts[1].contains("not trusted"),
        "told twice: {}",
        texts[1]
    );

    crate::util::trust(&root);
    let texts = mcp_writes(&root, 1);
    assert_eq!(runs(&root), 1, "{texts:?}");

    // A File_write into .context-pilot/ is a change from outside the callback tools.
    let script = ".context-pilot/scripts/mark.sh";
    let out = context_pilot(&root)
        .args(["tool", "File_write"])
        .arg(
            json!({"file_path": script, "content": "#!/usr/bin/env bash\necho evil >> ran.log\n"})
                .to_string(),
        )
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let texts = mcp_writes(&root, 1);
    assert_eq!(runs(&root), 1, "the rewritten script ran: {texts:?}");
    stop_console_server(&root);
}

#[test]
fn callback_upsert_in_a_trusted_project_keeps_it_trusted() {
    let (_repo, root) = cloned_project_with_a_callback();
    crate::util::trust(&root);
    crate::util::create_callback(
        &root,
        &json!({"action": "update", "id": "CB1",
                "script_content": "echo upserted >> \"$CP_PROJECT_ROOT/ran.log\""}),
    );
    let show = context_pilot(&root)
        .args(["trust", "--show"])
        .output()
        .unwrap();
    let show = String::from_utf8_lossy(&show.stdout).into_owned();
    assert!(
        show.contains("is trusted") && show.contains("echo upserted"),
        "{show}"
    );
    edit_hook(&root);
    assert_eq!(
        std::fs::read_to_string(root.join("ran.log"))
            .unwrap()
            .trim(),
        "upserted"
    );
    stop_console_server(&root);
}

/// `context-pilot run --headless` in a repository whose config points `llm.base_url` at the
/// scripted server, with the provider's key variable `key` set to `secret`.
fn run_with_committed_base_url(
    provider: &str,
    url: &str,
    key: &str,
) -> (tempfile::TempDir, Output) {
    let repo = git_repo();
    let root = canonical(repo.path());
    std::fs::create_dir_all(root.join(".context-pilot")).unwrap();
    std::fs::write(
        root.join(".context-pilot/config.json"),
        json!({"llm": {"provider": provider, "base_url": url}}).to_string(),
    )
    .unwrap();
    std::fs::write(root.join("wf.yaml"), WORKFLOW).unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "someone else's config"]);
    let out = run_in(&root, key);
    (repo, out)
}

fn run_in(root: &Path, key: &str) -> Output {
    context_pilot(root)
        .args(["run", "wf.yaml", "--headless"])
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_BASE_URL")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("CP_PROVIDER")
        .env(key, "secret")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn key_sent(server: &LlmServer) -> bool {
    server
        .requests()
        .iter()
        .any(|r| r.headers.iter().any(|(_, value)| value.contains("secret")))
}

#[test]
fn an_untrusted_repository_base_url_never_receives_the_openai_key() {
    let server = LlmServer::start().unwrap();
    let (repo, out) =
        run_with_committed_base_url("openai", &server.openai_base_url(), "OPENAI_API_KEY");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{out:?}");
    assert!(
        stderr.contains("not trusted") && stderr.contains("llm.base_url"),
        "{stderr}"
    );
    assert!(server.requests().is_empty(), "{:?}", server.requests());

    // Once trusted, the person's choice is honoured.
    let root = canonical(repo.path());
    crate::util::trust(&root);
    server.push(openai::error(400, "scripted refusal"));
    let _ = run_in(&root, "OPENAI_API_KEY");
    server.wait_for_requests(1, Duration::from_secs(60));
    assert!(key_sent(&server), "{:?}", server.requests());
    stop_console_server(&root);
}

#[test]
fn an_untrusted_repository_base_url_never_receives_the_anthropic_key() {
    let server = LlmServer::start().unwrap();
    let (repo, out) = run_with_committed_base_url("anthropic", &server.url(), "ANTHROPIC_API_KEY");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{out:?}");
    assert!(
        stderr.contains("not trusted") && stderr.contains("llm.base_url"),
        "{stderr}"
    );
    assert!(server.requests().is_empty(), "{:?}", server.requests());
    assert!(!key_sent(&server));
    stop_console_server(&canonical(repo.path()));
}

/// Whether `context-pilot trust --show` reports the project as trusted.
fn shown_trusted(root: &Path) -> bool {
    let out = context_pilot(root)
        .args(["trust", "--show"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).contains(" is trusted.")
}

#[test]
fn the_tui_asks_on_first_start_and_trusts_on_yes() {
    let (_repo, root) = cloned_project_with_a_callback();
    let mut tui = cp_e2e::TuiSession::start(&root, &[], &[]).unwrap();
    // The question stays on screen until answered, with what would run.
    tui.wait_for("Trust this project?", Duration::from_secs(60))
        .unwrap();
    tui.wait_for("CP_PROJECT_ROOT/ran.log", Duration::from_secs(60))
        .unwrap();
    assert!(!shown_trusted(&root));
    tui.send(b"y");
    cp_e2e::eventually_with(
        "the project to be trusted",
        Duration::from_secs(60),
        || shown_trusted(&root),
        || tui.screen(),
    );
    tui.send(b"\x03");
    tui.wait_exit(Duration::from_secs(60)).unwrap();
    stop_console_server(&root);
}

#[test]
fn the_tui_stays_usable_when_trust_is_declined() {
    let (_repo, root) = cloned_project_with_a_callback();
    let mut tui = cp_e2e::TuiSession::start(&root, &[], &[]).unwrap();
    tui.wait_for("Trust this project?", Duration::from_secs(60))
        .unwrap();
    tui.send(b"n");
    tui.wait_for("Not trusted", Duration::from_secs(60))
        .unwrap();
    assert!(!shown_trusted(&root));
    tui.send(b"\x03");
    tui.wait_exit(Duration::from_secs(60)).unwrap();
    stop_console_server(&root);
}
