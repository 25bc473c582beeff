//! Warm runs (issue 38) through `context-pilot hook …`: the real binary fed Claude Code's
//! payloads, the warm run a console of the project's real console server. An edit starts
//! one, a new edit ends it (its whole process tree) and starts another, a stop takes its
//! verdict; a first stop slower than its limit is not a silent timeout: the warm run goes on
//! and the next stop takes its verdict, a real cold `cargo test` build among them.
//!
//! The suite here waits for a file the test writes (`log/go`), so what each step sees is
//! decided by the test, never by timing. The cold build is the one exception: it is made to
//! take 5 s on one core of the CI machine against a one-second limit.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::util::{canonical, fixture, hook, stop_console_server};
use cp_e2e::{eventually, git, git_repo};
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(120);

/// A repository whose suite logs its pid (`log/started-PID`), waits for `log/go`, and passes
/// when `src/greet.sh` says hello; the checkpoint section is `checkpoint`.
fn project(checkpoint: &Value) -> (tempfile::TempDir, PathBuf) {
    let repo = git_repo();
    let root = canonical(repo.path());
    std::fs::write(
        root.join("suite.sh"),
        "touch log/started-$$\n\
         while [ ! -e log/go ]; do sleep 0.05; done\n\
         if grep -q hello src/greet.sh; then echo '1 passed'; exit 0; fi\n\
         echo 'FAILED test_greet'; echo '1 failed'; exit 1\n",
    )
    .unwrap();
    std::fs::write(root.join(".gitignore"), "log/\n").unwrap();
    std::fs::create_dir_all(root.join("log")).unwrap();
    configure_commit_and_trust(&root, checkpoint);
    (repo, root)
}

/// Writes `checkpoint` as the project's checkpoint section, commits everything, and trusts
/// the project.
fn configure_commit_and_trust(root: &Path, checkpoint: &Value) {
    std::fs::create_dir_all(root.join(".context-pilot")).unwrap();
    std::fs::write(
        root.join(".context-pilot/config.json"),
        json!({ "checkpoint": checkpoint }).to_string(),
    )
    .unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "init"]);
    crate::util::trust(root);
}

/// Claude Code's `Write` of `src/greet.sh` with `content`: the file, then the hook.
fn write_greet(root: &Path, content: &str) {
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/greet.sh"), content).unwrap();
    let out = hook(
        "post-tool-use",
        root,
        &fixture("claude_post_tool_use_write.json", root, root),
    );
    assert_eq!(out.code, Some(0), "{out:?}");
}

/// The pids of the suite runs that started, in no order.
fn started(root: &Path) -> Vec<u32> {
    std::fs::read_dir(root.join("log"))
        .unwrap()
        .filter_map(|e| {
            e.unwrap()
                .file_name()
                .to_str()?
                .strip_prefix("started-")?
                .parse()
                .ok()
        })
        .collect()
}

fn alive(pid: u32) -> bool {
    // A zombie is gone already: only its parent has not reaped it.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

fn warm_phase(root: &Path) -> String {
    std::fs::read_to_string(root.join(".context-pilot/state/warm-run.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v["current"]["phase"]["phase"].as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn stop_reason(root: &Path, payload: &str) -> String {
    let out = hook("stop", root, &fixture(payload, root, root));
    assert_eq!(out.code, Some(0), "{out:?}");
    let reply = out.json();
    assert_eq!(reply["decision"], "block", "{reply}");
    reply["reason"].as_str().unwrap().to_owned()
}

#[test]
fn an_edit_starts_a_warm_run_a_new_edit_ends_it_and_the_stop_takes_the_verdict() {
    let (_repo, root) = project(&json!({"tests": {"command": "sh suite.sh"},
        "warm": {"quiet_ms": 50}}));
    write_greet(&root, "echo hello\n");
    eventually("the first warm run's suite", LIMIT, || {
        started(&root).len() == 1
    });
    let first = started(&root)[0];
    assert_eq!(warm_phase(&root), "running");

    // A new edit before it finished: that run is ended, its whole tree, and the new tree is
    // tested.
    write_greet(&root, "echo hello again\n");
    eventually("the first run's suite to be ended", LIMIT, || !alive(first));
    eventually("the second warm run's suite", LIMIT, || {
        started(&root).len() == 2
    });
    std::fs::write(root.join("log/go"), "").unwrap();
    eventually("the warm run's verdict", LIMIT, || {
        warm_phase(&root) == "done"
    });

    let reason = stop_reason(&root, "claude_stop.json");
    assert!(reason.contains("Tests passed"), "{reason}");
    assert!(
        reason.contains("A warm run tested this very tree"),
        "{reason}"
    );
    assert_eq!(started(&root).len(), 2, "the stop ran the suite again");
    crate::util::agents::assert_none_under(&root, "warm-run", LIMIT);
    stop_console_server(&root);
}

/// Sends `signal` to the process `pid`.
fn signal(pid: u32, signal: i32) {
    let pid = i32::try_from(pid).unwrap();
    // SAFETY: kill(2) on a pid of our own console server; no memory is involved.
    assert_eq!(
        unsafe { libc::kill(pid, signal) },
        0,
        "kill({pid}, {signal})"
    );
}

/// Lets a stopped console server go on when dropped, whatever the test did meanwhile.
struct Resume(u32);

impl Drop for Resume {
    fn drop(&mut self) {
        signal(self.0, libc::SIGCONT);
    }
}

/// An edit's hook asks for its warm run without waiting for the console server's answer
/// (issue 52): with the server stopped (`SIGSTOP`), the hook still returns, and once the
/// server runs again it ends the warm run before and starts the edit's own.
#[test]
fn an_edits_hook_does_not_wait_for_the_console_server_and_its_warm_run_still_starts() {
    let (_repo, root) = project(&json!({"tests": {"command": "sh suite.sh"},
        "warm": {"quiet_ms": 50}}));
    write_greet(&root, "echo hello\n");
    eventually("the first warm run's suite", LIMIT, || {
        started(&root).len() == 1
    });
    let first = started(&root)[0];
    let server = cp_mod_console::ConsoleClient::for_project(&root)
        .unwrap()
        .server_pid()
        .expect("the console server's pid");
    signal(server, libc::SIGSTOP);
    let resume = Resume(server);
    eventually("the console server to be stopped", LIMIT, || {
        std::fs::read_to_string(format!("/proc/{server}/stat")).is_ok_and(|stat| {
            stat.rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('T'))
        })
    });

    let (done, hook_ended) = std::sync::mpsc::channel();
    let edit = {
        let root = root.clone();
        std::thread::spawn(move || {
            write_greet(&root, "echo hello again\n");
            let _ = done.send(());
        })
    };
    let returned = cp_e2e::within(Duration::from_secs(60), || hook_ended.try_recv().ok());
    let first_ran_on = alive(first);
    // The server goes on before any assertion, so a failure leaves nothing stopped.
    drop(resume);
    assert!(
        returned.is_some(),
        "the hook waited for the stopped console server"
    );
    edit.join().unwrap();
    assert!(first_ran_on, "the hook itself ended the warm run before");

    eventually("the first run's suite to be ended", LIMIT, || !alive(first));
    eventually("the edit's warm run's suite", LIMIT, || {
        started(&root).len() == 2
    });
    std::fs::write(root.join("log/go"), "").unwrap();
    eventually("the warm run's verdict", LIMIT, || {
        warm_phase(&root) == "done"
    });
    let reason = stop_reason(&root, "claude_stop.json");
    assert!(
        reason.contains("A warm run tested this very tree"),
        "{reason}"
    );
    crate::util::agents::assert_none_under(&root, "warm-run", LIMIT);
    stop_console_server(&root);
}

/// After a green warm run, a formatter rewrites the file with the same size and sets its
/// modification time back to the nanosecond (`utimensat`): the stop does not take the warm
/// verdict for the new bytes, it runs the suite again and reports what it says now.
#[test]
fn a_same_size_rewrite_with_its_time_set_back_after_a_warm_run_is_tested_again() {
    let (_repo, root) = project(&json!({"tests": {"command": "sh suite.sh"},
        "warm": {"quiet_ms": 50}}));
    std::fs::write(root.join("log/go"), "").unwrap();
    write_greet(&root, "echo hello\n");
    eventually("the warm run's verdict", LIMIT, || {
        warm_phase(&root) == "done"
    });
    assert_eq!(started(&root).len(), 1);
    let greet = root.join("src/greet.sh");
    let modified = std::fs::metadata(&greet).unwrap().modified().unwrap();
    std::fs::write(&greet, "echo jello\n").unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&greet)
        .unwrap()
        .set_times(std::fs::FileTimes::new().set_modified(modified))
        .unwrap();
    assert_eq!(
        std::fs::metadata(&greet).unwrap().modified().unwrap(),
        modified
    );

    let reason = stop_reason(&root, "claude_stop.json");
    assert!(reason.contains("FAILED test_greet"), "{reason}");
    assert!(
        !reason.contains("A warm run tested this very tree"),
        "{reason}"
    );
    assert_eq!(started(&root).len(), 2, "the stop ran the suite again");
    stop_console_server(&root);
}

/// A cold build slower than the stop's limit: the stop says the tests go on in the
/// background (not a silent timeout), the warm run is not cut off, and the next stop takes
/// its verdict; the suite ran once.
#[test]
fn a_first_stop_slower_than_its_limit_leaves_the_warm_run_going_and_the_next_stop_takes_it() {
    let (_repo, root) = project(
        &json!({"tests": {"command": "sh suite.sh", "timeout_secs": 1},
        "warm": {"quiet_ms": 50}}),
    );
    write_greet(&root, "echo hello\n");
    eventually("the warm run's suite", LIMIT, || started(&root).len() == 1);
    let suite = started(&root)[0];

    let reason = stop_reason(&root, "claude_stop.json");
    assert!(reason.contains("still runs at low priority"), "{reason}");
    assert!(reason.contains("go on in the background"), "{reason}");
    assert!(reason.contains("timeout_secs"), "{reason}");
    assert!(alive(suite), "the stop cut the warm run off");

    std::fs::write(root.join("log/go"), "").unwrap();
    eventually("the warm run's verdict", LIMIT, || {
        warm_phase(&root) == "done"
    });
    // The tests passed (the warm run's verdict): what is left is the commit.
    let reason = stop_reason(&root, "claude_stop_active.json");
    assert!(reason.contains("Commit your changes"), "{reason}");
    let saved: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join(".context-pilot/state/main/checkpoint.json")).unwrap(),
    )
    .unwrap();
    let tests = &saved["last_report"]["tests"][0];
    assert_eq!(tests["passed"], true, "{saved}");
    assert_eq!(tests["warm"]["kind"], "reused", "{saved}");
    assert_eq!(started(&root), vec![suite], "the suite ran again");
    stop_console_server(&root);
}

/// The same through the built-in agent in a `run` phase: its `File_write` asks for the warm
/// run, the scripted model "thinks" until the warm run kept its verdict (a durable fact), says
/// it is done, and the stop's message, which the model reads next, is the warm run's.
#[test]
fn a_run_phase_of_the_built_in_agent_stops_on_the_warm_verdict() {
    use cp_e2e::{LlmServer, anthropic};
    let (_repo, root) = project(
        &json!({"max_blocks": 1, "tests": {"command": "sh suite.sh"},
        "warm": {"quiet_ms": 50}}),
    );
    std::fs::create_dir_all(root.join(".context-pilot/workflows")).unwrap();
    std::fs::write(
        root.join(".context-pilot/workflows/one.yaml"),
        "name: one\nphases:\n  - id: build\n    prompt: Greet.\n",
    )
    .unwrap();
    // The suite goes on at once: this test waits on the warm run's record instead.
    std::fs::write(root.join("log/go"), "").unwrap();
    let server = LlmServer::start().unwrap();
    {
        let root = root.clone();
        server.answer_side_requests(move |request| {
            let answers_w1 = request.body["messages"]
                .as_array()
                .and_then(|m| m.last())
                .and_then(|m| m["content"].as_array())
                .is_some_and(|b| b.iter().any(|b| b["tool_use_id"] == "w1"));
            if answers_w1 {
                // The reply goes out at the limit either way; the test then says what is wrong.
                let _done = cp_e2e::within(LIMIT, || (warm_phase(&root) == "done").then_some(()));
            }
            None
        });
    }
    let write = r#"{"file_path": "src/greet.sh", "content": "echo hello\n"}"#;
    server.push(anthropic::tool_use_turn(&[("w1", "File_write", write)]));
    server.push(anthropic::text_turn("Done."));
    server.push(anthropic::text_turn("Verified."));
    let out = std::process::Command::new(crate::util::binary())
        .args([
            "run",
            ".context-pilot/workflows/one.yaml",
            "--headless",
            "--no-auto-commit",
            "--max-restarts",
            "0",
        ])
        .current_dir(&root)
        .env("XDG_CONFIG_HOME", cp_e2e::config_home())
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let shown = format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = server.requests();
    assert!(requests.len() >= 3, "{shown}");
    let told = &requests[2].raw_body;
    assert!(told.contains("Tests passed"), "{told}\n{shown}");
    assert!(
        told.contains("A warm run tested this very tree"),
        "{told}\n{shown}"
    );
    assert_eq!(started(&root).len(), 1, "the stop ran the suite again");
    crate::util::agents::assert_none_under(&root, "warm-run", LIMIT);
    stop_console_server(&root);
}

/// A real cold Rust build at the first stop (issue 38): no test command is configured, so the
/// gate detects `cargo test --no-fail-fast`, and the crate's first test build takes seconds
/// (5 s on the CI machine, one core), past the one-second limit set here. The first stop says the build goes on in
/// the background and what the person can set, rather than a silent timeout; the warm run is
/// not cut off, and the next stop takes its verdict without building again.
#[test]
fn a_cold_cargo_build_at_the_first_stop_is_no_silent_timeout() {
    let repo = git_repo();
    let root = canonical(repo.path());
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"greeter\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [dependencies]\n",
    )
    .unwrap();
    std::fs::write(root.join(".gitignore"), "target/\nCargo.lock\n").unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/lib.rs"), slow_to_build_crate("hi")).unwrap();
    configure_commit_and_trust(
        &root,
        &json!({"tests": {"timeout_secs": 1}, "warm": {"quiet_ms": 50}}),
    );

    // The agent's edit: `greet` now says what its test expects.
    std::fs::write(root.join("src/lib.rs"), slow_to_build_crate("hello")).unwrap();
    write_greet(&root, "echo hello\n");
    eventually("the warm run to start", LIMIT, || {
        warm_phase(&root) == "running"
    });

    let reason = stop_reason(&root, "claude_stop.json");
    assert!(reason.contains("still runs at low priority"), "{reason}");
    assert!(reason.contains("go on in the background"), "{reason}");
    assert!(reason.contains("timeout_secs"), "{reason}");

    eventually("the warm run's verdict", LIMIT, || {
        warm_phase(&root) == "done"
    });
    let reason = stop_reason(&root, "claude_stop_active.json");
    assert!(reason.contains("Commit your changes"), "{reason}");
    let saved: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join(".context-pilot/state/main/checkpoint.json")).unwrap(),
    )
    .unwrap();
    let tests = &saved["last_report"]["tests"][0];
    assert_eq!(tests["command"], "cargo test --no-fail-fast", "{saved}");
    assert_eq!(tests["passed"], true, "{saved}");
    assert_eq!(tests["warm"]["kind"], "reused", "{saved}");
    crate::util::agents::assert_none_under(&root, "warm-run", LIMIT);
    stop_console_server(&root);
}

/// A crate whose test build takes seconds on any machine: its test module computes a
/// constant in a long loop, which the compiler evaluates on one thread; what `greet` says is
/// `greeting`, and the test expects "hello".
fn slow_to_build_crate(greeting: &str) -> String {
    format!(
        "#![allow(long_running_const_eval)]\n\n\
         pub fn greet() -> &'static str {{\n    \"{greeting}\"\n}}\n\n\
         #[cfg(test)]\nmod tests {{\n    \
         const fn spin(n: u64) -> u64 {{\n        let mut x = 1u64;\n        let mut i = 0;\n        \
         while i < n {{\n            x = x.wrapping_mul(6364136223846793005).wrapping_add(i);\n            \
         i += 1;\n        }}\n        x\n    }}\n\n    \
         const SEED: u64 = spin(1_500_000);\n\n    \
         #[test]\n    fn greets() {{\n        assert_ne!(SEED, 0);\n        \
         assert_eq!(super::greet(), \"hello\");\n    }}\n}}\n"
    )
}
