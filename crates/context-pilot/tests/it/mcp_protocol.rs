//! Issue 14 §5: `context-pilot mcp` answers every line it gets, good or bad, keeps serving
//! after a bad one, does not offer `system_reload`, and notes a broken callbacks config in
//! tool results. A raw JSON-RPC client over the real binary's stdin and stdout.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::Duration;

use crate::util::{canonical, context_pilot, stop_console_server};
use cp_e2e::git_repo;
use serde_json::{Value, json};

/// A generous safety limit for one reply, not a timing assertion.
const REPLY_WAIT: Duration = Duration::from_secs(60);

struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Client {
    fn start(root: &Path) -> Self {
        let mut child = context_pilot(root)
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let mut client = Self {
            stdin: child.stdin.take(),
            child,
            lines,
        };
        let init = client.request(&json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "raw-test", "version": "0"}}
        }));
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        client.send_raw(
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
                .to_string()
                .as_bytes(),
        );
        client
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// The next message whose id is `id` (other messages, e.g. notifications, are skipped).
    fn reply_with_id(&self, id: &Value) -> Value {
        cp_e2e::eventually_some(&format!("a reply with id {id}"), REPLY_WAIT, || {
            // Every line written so far, up to the reply.
            loop {
                let line = match self.lines.try_recv() {
                    Ok(line) => line,
                    Err(TryRecvError::Empty) => return None,
                    Err(TryRecvError::Disconnected) => {
                        panic!("no reply with id {id}: the server's output ended")
                    }
                };
                let value: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
                    panic!("the server wrote a line that is not JSON ({e}): {line}")
                });
                if value.get("id") == Some(id) {
                    return Some(value);
                }
            }
        })
    }

    fn request(&mut self, message: &Value) -> Value {
        self.send_raw(message.to_string().as_bytes());
        self.reply_with_id(&message["id"])
    }

    /// A request that must still be answered: the server is alive and serving.
    fn still_serving(&mut self, id: u64) {
        let reply = self.request(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}));
        assert!(reply["result"]["tools"].is_array(), "{reply}");
    }

    fn call(&mut self, id: u64, name: &str, arguments: &Value) -> Value {
        self.request(&json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}
        }))
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        drop(self.stdin.take());
        if cp_e2e::within(REPLY_WAIT, || self.child.try_wait().ok().flatten()).is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn error_code(reply: &Value) -> i64 {
    reply["error"]["code"].as_i64().unwrap_or_default()
}

#[test]
fn bad_lines_get_json_rpc_errors_and_the_server_keeps_serving() {
    let repo = git_repo();
    let root = canonical(repo.path());
    let mut client = Client::start(&root);

    // Invalid JSON: parse error, id null.
    client.send_raw(b"{\"jsonrpc\": \"2.0\", \"id\": 10, \"method\": ");
    let reply = client.reply_with_id(&Value::Null);
    assert_eq!(error_code(&reply), -32700, "{reply}");
    client.still_serving(11);

    // A lone surrogate is not valid JSON text.
    client.send_raw(
        br#"{"jsonrpc": "2.0", "id": 12, "method": "tools/list", "params": {"x": "\ud800"}}"#,
    );
    let reply = client.reply_with_id(&Value::Null);
    assert_eq!(error_code(&reply), -32700, "{reply}");
    client.still_serving(13);

    // Bytes that are not UTF-8.
    client
        .send_raw(b"{\"jsonrpc\": \"2.0\", \"id\": 14, \"method\": \"ping\", \"x\": \"\xff\xfe\"}");
    let reply = client.reply_with_id(&Value::Null);
    assert_eq!(error_code(&reply), -32700, "{reply}");
    client.still_serving(15);

    // Valid JSON that is not a request: invalid request, with its id when it has one.
    let reply = client.request(&json!({"id": 16, "hello": "world"}));
    assert_eq!(error_code(&reply), -32600, "{reply}");
    client.send_raw(b"[1, 2, 3]");
    let reply = client.reply_with_id(&Value::Null);
    assert_eq!(error_code(&reply), -32600, "{reply}");
    client.still_serving(17);

    // Over the 16 MiB limit: an error with the id, read from the start of the line.
    let pad = "A".repeat(17 * 1024 * 1024);
    let huge = format!(
        r#"{{"jsonrpc": "2.0", "id": 18, "method": "tools/call", "params": {{"name": "File_read", "arguments": {{"file_path": "{pad}"}}}}}}"#
    );
    client.send_raw(huge.as_bytes());
    let reply = client.reply_with_id(&json!(18));
    assert_eq!(error_code(&reply), -32600, "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("size limit"),
        "{reply}"
    );
    client.still_serving(19);
    drop(client);
    stop_console_server(&root);
}

#[test]
fn system_reload_is_not_offered_over_mcp() {
    let repo = git_repo();
    let root = canonical(repo.path());
    let mut client = Client::start(&root);
    let list = client.request(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"File_read"), "{names:?}");
    assert!(!names.contains(&"system_reload"), "{names:?}");
    let reply = client.call(3, "system_reload", &json!({}));
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    assert!(
        reply["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("not offered over MCP"),
        "{reply}"
    );
    drop(client);
    stop_console_server(&root);
}

#[test]
fn a_broken_callbacks_config_is_noted_in_tool_results() {
    let repo = git_repo();
    let root = canonical(repo.path());
    std::fs::write(root.join("notes.txt"), "hello\n").unwrap();
    let dir = root.join(".context-pilot");
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("config.json");
    std::fs::write(
        &config,
        r#"{"callbacks": {"definitions": [{"id": "CB1", "name": "x", "pa"#,
    )
    .unwrap();
    let mut client = Client::start(&root);
    let reply = client.call(2, "File_read", &json!({"file_path": "notes.txt"}));
    let text = reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(text.contains("hello"), "{text}");
    assert!(
        text.contains("callbacks config has a problem")
            && text.contains(&config.display().to_string()),
        "{text}"
    );
    drop(client);
    stop_console_server(&root);
}

/// An MCP server whose project is deleted while it runs (a test's temporary project, a
/// worktree removed) ends without making the project's directories again.
#[test]
fn a_server_whose_project_was_deleted_ends_without_making_it_again() {
    let repo = git_repo();
    let root = canonical(repo.path());
    let mut client = Client::start(&root);
    client.still_serving(2);
    stop_console_server(&root);
    std::fs::remove_dir_all(&root).unwrap();
    // Its stdin closes: it saves what it carries, and ends.
    drop(client);
    assert!(!root.exists(), "{} was made again", root.display());
}
