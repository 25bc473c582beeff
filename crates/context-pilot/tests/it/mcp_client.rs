//! `context-pilot mcp` against an official MCP client SDK (Python `mcp`, from the venv that
//! `scripts/test.sh` makes), and its shutdown on stdin EOF.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::util::{binary, canonical, context_pilot, stop_console_server};
use cp_e2e::{eventually_some, git_repo};

/// The Python that has the MCP SDK: `CP_TEST_PYTHON` if set, else the venv that
/// `scripts/test.sh` makes under `target/test-venv`. The test fails (never skips) without it,
/// saying how to get it.
fn python_with_sdk() -> std::path::PathBuf {
    let python = std::env::var_os("CP_TEST_PYTHON").map_or_else(
        || {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../target/test-venv/bin/python")
        },
        std::path::PathBuf::from,
    );
    let importable = Command::new(&python)
        .args(["-c", "import mcp.client.stdio"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        importable,
        "the Python MCP SDK is not importable with {}: run the tests with `bash scripts/test.sh`, \
         which makes that venv with the pinned `mcp`",
        python.display()
    );
    python
}

#[test]
fn the_python_sdk_lists_calls_and_sees_callback_results() {
    let python = python_with_sdk();
    let repo = git_repo();
    let root = canonical(repo.path());
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/client_test.py");
    let out = Command::new(&python)
        .arg(script)
        .arg(binary())
        .arg(&root)
        .env_remove("CP_WORKER")
        .env("XDG_CONFIG_HOME", cp_e2e::config_home())
        .output()
        .unwrap();
    stop_console_server(&root);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "client failed:\n{stdout}\n{stderr}");
    assert!(
        stdout.contains("callbacks: blocking and background results delivered"),
        "{stdout}"
    );
    assert!(stdout.trim_end().ends_with("ok"), "{stdout}");
    // A callback created over MCP lives in the shared config, where a TUI reads it.
    let config = std::fs::read_to_string(root.join(".context-pilot/config.json")).unwrap();
    assert!(config.contains("\"shout\""), "{config}");
}

#[test]
fn the_server_answers_initialize_and_exits_cleanly_on_stdin_eof() {
    let repo = git_repo();
    let root = canonical(repo.path());
    let mut child = context_pilot(&root)
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let init = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "raw-test", "version": "0"}}
    });
    writeln!(stdin, "{init}").unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let reply: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(reply["id"], 1, "{reply}");
    assert_eq!(
        reply["result"]["serverInfo"]["name"], "context-pilot",
        "{reply}"
    );
    assert_eq!(
        reply["result"]["serverInfo"]["version"],
        env!("CARGO_PKG_VERSION"),
        "{reply}"
    );
    assert!(
        reply["result"]["capabilities"]["tools"].is_object(),
        "{reply}"
    );
    drop(stdin);
    let status = eventually_some(
        "the server to exit on stdin EOF",
        Duration::from_secs(20),
        || child.try_wait().unwrap(),
    );
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "exit {status}: {stderr}");
}
