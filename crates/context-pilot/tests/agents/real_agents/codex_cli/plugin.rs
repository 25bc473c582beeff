//! Codex CLI with Context Pilot's plugin, installed from this checkout's marketplace
//! (`codex plugin marketplace add`, `codex plugin add`) into a project no `init` wired, and
//! trusted as the guide says: `doctor` names the untrusted hooks and how to trust them, then
//! sees them trusted; a patch that matches a callback gets the callback's output, and the red
//! edit is held at `Stop` with the failing test named, as after `init codex`.

use std::io::{BufRead as _, BufReader, Write as _};
use std::sync::mpsc;

use super::*;

/// `codex ARGS` with the private `home`; must succeed.
fn codex_setup(home: &Path, args: &[&str]) {
    agent_setup("codex", args, |command| {
        command.env("CODEX_HOME", home);
    });
}

/// Codex's app server on stdin and stdout (JSON-RPC, one message a line).
struct AppServer {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    messages: mpsc::Receiver<Value>,
    next_id: u64,
}

impl AppServer {
    fn start(home: &Path, root: &Path) -> Self {
        let mut child = Command::new(agent_bin("codex"))
            .arg("app-server")
            .current_dir(root)
            .env("CODEX_HOME", home)
            .env("CP_SCRIPTED_KEY", "sk-scripted")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (send, messages) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let Ok(message) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                if send.send(message).is_err() {
                    break;
                }
            }
        });
        let mut server = Self {
            child,
            stdin,
            messages,
            next_id: 0,
        };
        server.request(
            "initialize",
            &json!({"clientInfo": {"name": "cp-tests", "version": "1"}}),
        );
        writeln!(server.stdin, "{}", json!({"method": "initialized"})).unwrap();
        server
    }

    /// Sends the request and waits for its answer's `result`.
    fn request(&mut self, method: &str, params: &Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let request = json!({"id": id, "method": method, "params": params});
        writeln!(self.stdin, "{request}").unwrap();
        loop {
            let message = self
                .messages
                .recv_timeout(RUN_LIMIT)
                .unwrap_or_else(|e| panic!("{method}: no answer ({e})"));
            if message["id"] == id {
                assert!(message.get("error").is_none(), "{method}: {message}");
                return message["result"].clone();
            }
        }
    }

    /// The plugin's hooks Codex lists for `root`, each as (key, trust status, current hash).
    fn plugin_hooks(&mut self, root: &Path) -> Vec<(String, String, String)> {
        let listed = self.request("hooks/list", &json!({"cwds": [root]}));
        listed["data"][0]["hooks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|hook| {
                hook["pluginId"]
                    .as_str()
                    .is_some_and(|id| id.starts_with("context-pilot@"))
            })
            .map(|hook| {
                let field = |name: &str| hook[name].as_str().unwrap().to_owned();
                (field("key"), field("trustStatus"), field("currentHash"))
            })
            .collect()
    }
}

impl Drop for AppServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The guide's trust step without a terminal: Codex's own app server lists the hooks with
/// their current hashes (`hooks/list`) and records the plugin's as trusted in the person's
/// config (`config/batchWrite` into `hooks.state`), the record Codex's `/hooks` screen makes.
/// Checks Codex saw them untrusted before and trusted after.
fn trust_the_plugins_hooks_in_codex(home: &Path, root: &Path) {
    let mut server = AppServer::start(home, root);
    let before = server.plugin_hooks(root);
    assert_eq!(before.len(), 4, "{before:?}");
    assert!(
        before.iter().all(|(_, status, _)| status == "untrusted"),
        "{before:?}"
    );
    let state: serde_json::Map<String, Value> = before
        .into_iter()
        .map(|(key, _, hash)| (key, json!({"trusted_hash": hash})))
        .collect();
    let written = server.request(
        "config/batchWrite",
        &json!({"edits": [{"keyPath": "hooks.state", "value": state,
            "mergeStrategy": "upsert"}]}),
    );
    assert_eq!(written["status"], "ok", "{written}");
    let after = server.plugin_hooks(root);
    assert!(
        after.iter().all(|(_, status, _)| status == "trusted"),
        "{after:?}"
    );
}

/// `context-pilot doctor` in `root` with Codex's `home`; the line about the plugin's hooks.
fn doctor_line_on_plugin_hooks(root: &Path, home: &Path) -> String {
    let user_home = tempfile::tempdir().unwrap();
    let out = Command::new(binary_path())
        .arg("doctor")
        .current_dir(root)
        .env("HOME", user_home.path())
        .env("CODEX_HOME", home)
        .env("XDG_CONFIG_HOME", cp_e2e::config_home())
        .output()
        .unwrap();
    let said = text(&out.stdout);
    said.lines()
        .find(|line| line.contains("hook(s) of") && line.contains("plugin context-pilot@"))
        .unwrap_or_else(|| panic!("no line on the plugin's hooks:\n{said}"))
        .to_owned()
}

#[test]
fn codex_with_the_plugin_trusted_runs_callbacks_and_holds_red_work_as_after_init() {
    let (_repo, root, runs) = calc_project_with_py_callback();
    let server = LlmServer::start().unwrap();
    let home = codex_home(&server);
    let checkout = checkout();
    codex_setup(
        home.path(),
        &["plugin", "marketplace", "add", checkout.to_str().unwrap()],
    );
    codex_setup(
        home.path(),
        &["plugin", "add", "context-pilot@context-pilot"],
    );
    assert!(
        !root.join(".codex").exists(),
        "nothing wired into the project"
    );

    let untrusted = doctor_line_on_plugin_hooks(&root, home.path());
    assert!(
        untrusted.starts_with("✗ Codex CLI has not trusted 4 of the 4 hook(s)"),
        "{untrusted}"
    );
    assert!(
        untrusted.contains("fix: start `codex`, type `/hooks`"),
        "{untrusted}"
    );
    trust_the_plugins_hooks_in_codex(home.path(), &root);
    let trusted = doctor_line_on_plugin_hooks(&root, home.path());
    assert!(
        trusted.starts_with("✓ Codex CLI trusts the commands of the 4 hook(s) of its plugin"),
        "{trusted}"
    );

    let patch = "*** Begin Patch\n*** Update File: calc.py\n@@\n-    return a + b\n+    return a - b\n*** End Patch\n";
    server.push(responses::items_turn(&[responses::Item::apply_patch(
        "call_patch",
        patch,
    )]));
    server.push(responses::text_turn("Done."));
    server.push(responses::text_turn("I am done."));
    // As a person runs it: only the hooks they trusted run.
    let bin_path = path_with_binary();
    let out = codex_trusting_only_what_home_trusts(
        &root,
        home.path(),
        "Simplify add.",
        &[("PATH", bin_path.as_str())],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        text(&out.stderr),
        bodies(&server)
    );
    assert!(
        std::fs::read_to_string(root.join("calc.py"))
            .unwrap()
            .contains("a - b"),
        "the patch ran:\n{}",
        bodies(&server)
    );
    assert_callback_ran_and_red_work_held(&server, &root, runs.path(), "patch");
}
