//! Issue 23: `.context-pilot/run/`, `logs/` and `state/` stay private under the umask most
//! people have (022). Every front-end runs under `umask 022` against one project: the console
//! server on its own, `context-pilot mcp` (a file write, a console), `context-pilot hook`
//! (Claude Code's `PostToolUse` with a callback, then Stop) and the TUI (a turn that writes a
//! file). Then every directory of the three trees must be 0700 and every file 0600.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::fs::{FileTypeExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::util::{binary, canonical, fixture, stop_console_server};
use cp_e2e::{LlmServer, TuiSession, anthropic, eventually, git, git_repo};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(60);

/// The shell line that sets the umask, then becomes `$0 "$@"`.
const UMASK_022: &str = "umask 022; exec \"$0\" \"$@\"";

/// `context-pilot args…` in `dir`, under `umask 022`, with the tests' isolated user config.
fn loose_umask(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(UMASK_022)
        .arg(binary())
        .args(args)
        .current_dir(dir)
        .env_remove("CP_WORKER")
        .env("XDG_CONFIG_HOME", cp_e2e::config_home());
    cmd
}

/// Runs `context-pilot args…` under `umask 022` with `stdin`; panics unless it succeeds.
fn run(dir: &Path, args: &[&str], stdin: &str) -> String {
    let mut child = loose_umask(dir, args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "context-pilot {args:?} failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Waits until a console server answers on the project's socket.
fn wait_for_server(root: &Path) {
    let socket = cp_mod_console::RunPaths::new(root).socket().to_path_buf();
    eventually(
        &format!("a console server on {}", socket.display()),
        WAIT,
        || std::os::unix::net::UnixStream::connect(&socket).is_ok(),
    );
}

/// A few tool calls over `context-pilot mcp`: a file write (a lock under `run/locks/`) and a
/// console (its log and metadata under `run/consoles/`).
fn mcp_session(root: &Path) {
    let mut child: Child = loose_umask(root, &["mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut request = |id: u64, method: &str, params: Value| -> Value {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
        loop {
            let line = lines.next().expect("the MCP server ended").unwrap();
            let reply: Value = serde_json::from_str(&line).unwrap();
            if reply["id"] == json!(id) {
                return reply;
            }
        }
    };
    let init = request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "private-modes", "version": "0"}}),
    );
    assert!(init["result"]["serverInfo"].is_object(), "{init}");
    let call = |name: &str, arguments: Value| json!({"name": name, "arguments": arguments});
    let write = request(
        2,
        "tools/call",
        call(
            "File_write",
            json!({"file_path": "notes/mcp.txt", "content": "from mcp\n"}),
        ),
    );
    assert_eq!(write["result"]["isError"], json!(false), "{write}");
    let bash = request(
        3,
        "tools/call",
        call("console_easy_bash", json!({"command": "echo from-mcp"})),
    );
    assert_eq!(bash["result"]["isError"], json!(false), "{bash}");
    assert!(bash.to_string().contains("from-mcp"), "{bash}");
    drop(stdin);
    if cp_e2e::within(WAIT, || child.try_wait().unwrap()).is_none() {
        let _ = child.kill();
    }
    let _ = child.wait();
}

/// A TUI turn under `umask 022`: the model writes a file and ends its turn (the stop
/// checkpoint blocks once).
fn tui_turn(root: &Path) {
    let server = LlmServer::start().unwrap();
    let args = r#"{"file_path": "notes/tui.txt", "content": "from the tui\n"}"#;
    server.push(anthropic::tool_use_turn(&[("toolu_1", "File_write", args)]));
    server.push(anthropic::text_turn("Wrote it."));
    server.push(anthropic::text_turn("Noted."));
    let url = server.url();
    let env = [
        ("ANTHROPIC_BASE_URL", url.as_str()),
        ("ANTHROPIC_API_KEY", "k"),
        ("OPENAI_API_KEY", ""),
        ("CP_WORKER", "main"),
    ];
    let exe = binary();
    let mut tui = TuiSession::start_exe(
        Path::new("/bin/sh"),
        root,
        &["-c", UMASK_022, exe.to_str().unwrap()],
        &env,
    )
    .unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    tui.type_text("please write the note");
    tui.send(b"\r");
    tui.wait_turn_end(root, "Noted.", WAIT).unwrap();
    assert_eq!(tui.quit(WAIT).unwrap(), 0);
}

/// Every directory below `dir` (and `dir`) that is not 0700, every regular file or socket
/// that is not 0600; symbolic links are skipped.
fn loose_entries(dir: &Path, found: &mut Vec<String>) {
    fn check(path: &Path, want: u32, found: &mut Vec<String>) {
        let mode = std::fs::symlink_metadata(path)
            .unwrap()
            .permissions()
            .mode()
            & 0o7777;
        if mode != want {
            found.push(format!("{} is {mode:o}, not {want:o}", path.display()));
        }
    }
    check(dir, 0o700, found);
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let kind = entry.file_type().unwrap();
        let path: PathBuf = entry.path();
        if kind.is_dir() {
            loose_entries(&path, found);
        } else if kind.is_file() || kind.is_socket() {
            check(&path, 0o600, found);
        }
    }
}

/// What is not private under the three trees right now, each line naming `stage`. Checked
/// after each front-end, since the next one's start fixes what an earlier one left loose.
fn loose_after(root: &Path, stage: &str, found: &mut Vec<String>) {
    let dot = root.join(cp_base::STATE_DIR);
    let mut here = Vec::new();
    for name in cp_base::private::PRIVATE_DIRS {
        if dot.join(name).exists() {
            loose_entries(&dot.join(name), &mut here);
        }
    }
    found.extend(
        here.into_iter()
            .map(|line| format!("after {stage}: {line}")),
    );
}

#[test]
fn every_front_end_keeps_run_logs_and_state_private_under_umask_022() {
    let repo = git_repo();
    let root = canonical(repo.path());
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/greet.sh"), "echo hello\n").unwrap();
    let callback = json!({
        "action": "create", "name": "greet-check", "pattern": ["*.sh"],
        "script_content": "echo \"checked $CP_CHANGED_FILES\"",
        "blocking": true, "timeout": 60
    });
    run(
        &root,
        &["tool", "Callback_upsert", &callback.to_string()],
        "",
    );
    // Committed, so the TUI's stop gate only asks to verify its own note.
    git(&root, &["add", "."]);
    git(&root, &["commit", "-qm", "setup"]);
    let mut found = Vec::new();

    // The console server on its own; the MCP session's console runs in it.
    let mut server = loose_umask(&root, &["console-server", "--project"])
        .arg(&root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_server(&root);
    mcp_session(&root);
    loose_after(
        &root,
        "the console server and `context-pilot mcp`",
        &mut found,
    );
    stop_console_server(&root);
    let _ = server.wait();

    // The hooks start a server of their own through the client.
    let edit = run(
        &root,
        &["hook", "post-tool-use"],
        &fixture("claude_post_tool_use_write.json", &root, &root),
    );
    assert!(edit.contains("greet-check"), "{edit}");
    run(
        &root,
        &["hook", "stop"],
        &fixture("claude_stop.json", &root, &root),
    );
    loose_after(&root, "`context-pilot hook`", &mut found);
    stop_console_server(&root);

    tui_turn(&root);
    loose_after(&root, "the TUI", &mut found);
    stop_console_server(&root);

    let dot = root.join(cp_base::STATE_DIR);
    for expected in [
        "run/locks",
        "run/consoles",
        "logs/context-pilot.log",
        "state/main",
    ] {
        assert!(dot.join(expected).exists(), "{expected} was not created");
    }
    assert!(
        found.is_empty(),
        "world-readable entries under umask 022:\n{}",
        found.join("\n")
    );
}
