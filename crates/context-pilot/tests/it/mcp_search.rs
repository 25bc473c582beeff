//! `File_glob` and `File_grep` over MCP: listed by `tools/list` and callable (issue 19).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use crate::util::{canonical, context_pilot};
use cp_e2e::git_repo;
use serde_json::{Value, json};

#[test]
fn search_tools_are_offered_and_answer_over_mcp() {
    let repo = git_repo();
    let root = canonical(repo.path());
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "pub fn needle() {}\n").unwrap();
    std::fs::write(root.join(".gitignore"), "ignored.rs\n").unwrap();
    std::fs::write(root.join("ignored.rs"), "pub fn needle() {}\n").unwrap();
    let mut child = context_pilot(&root)
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut call = |id: u64, method: &str, params: Value| -> Value {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(stdin, "{request}").unwrap();
        if method == "initialize" {
            let _ = writeln!(
                stdin,
                "{}",
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
            );
        }
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    };
    call(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "search-test", "version": "0"}}),
    );
    let listed = call(2, "tools/list", json!({}));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"File_glob") && names.contains(&"File_grep"),
        "{names:?}"
    );
    let grep = call(
        3,
        "tools/call",
        json!({"name": "File_grep", "arguments": {"pattern": "fn needle", "output": "lines"}}),
    );
    assert_eq!(
        grep["result"]["content"][0]["text"],
        json!("src/lib.rs\n1:pub fn needle() {}\n"),
        "{grep}"
    );
    let glob = call(
        4,
        "tools/call",
        json!({"name": "File_glob", "arguments": {"pattern": "*.rs"}}),
    );
    assert_eq!(
        glob["result"]["content"][0]["text"],
        json!("src/lib.rs\n"),
        "{glob}"
    );
    drop(stdin);
    child.wait().unwrap();
}
