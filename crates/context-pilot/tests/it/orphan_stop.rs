//! A stop's test run whose session is gone (issue 48): the `context-pilot hook stop` process
//! is killed (SIGKILL) while its suite runs in a console of the project's console server. The suite
//! finishes once, nothing of its console is left after it, and the next stop on the same tree
//! takes its verdict without running it again; a new edit, or the end of the agent's session
//! (its `context-pilot mcp` server's stdin closing), ends such a run at once.
//!
//! The suite waits for a file the test writes (`log/go`), so what each step sees is decided
//! by the test, never by timing.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use crate::util::processes::running;
use crate::util::{canonical, context_pilot, fixture, hook, stop_console_server};
use cp_e2e::{eventually, git, git_repo};
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(120);
/// How long "at once" may take on a loaded machine: the run's TERM grace period and more.
const AT_ONCE: Duration = Duration::from_secs(20);

/// A repository whose suite logs its pid (`log/started-PID`) and the pid of a child it leaves
/// in the background (`log/child-PID`), waits for `log/go`, and passes when `src/greet.sh` says
/// hello.
fn project(checkpoint: &Value) -> (tempfile::TempDir, PathBuf) {
    let repo = git_repo();
    let root = canonical(repo.path());
    std::fs::write(
        root.join("suite.sh"),
        "touch log/started-$$\n\
         sleep 300 &\n\
         touch log/child-$!\n\
         while [ ! -e log/go ]; do sleep 0.05; done\n\
         if grep -q hello src/greet.sh; then echo '1 passed'; exit 0; fi\n\
         echo 'FAILED test_greet'; echo '1 failed'; exit 1\n",
    )
    .unwrap();
    std::fs::write(root.join(".gitignore"), "log/\n").unwrap();
    std::fs::create_dir_all(root.join("log")).unwrap();
    std::fs::create_dir_all(root.join(".context-pilot")).unwrap();
    std::fs::write(
        root.join(".context-pilot/config.json"),
        json!({ "checkpoint": checkpoint }).to_string(),
    )
    .unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "init"]);
    crate::util::trust(&root);
    (repo, root)
}

/// The pids logged as `log/<prefix>PID`.
fn logged(root: &Path, prefix: &str) -> Vec<i32> {
    std::fs::read_dir(root.join("log"))
        .unwrap()
        .filter_map(|e| {
            e.unwrap()
                .file_name()
                .to_str()?
                .strip_prefix(prefix)?
                .parse()
                .ok()
        })
        .collect()
}

/// The process group of `pid`, while it runs.
fn group_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')')
        .next()?
        .split_whitespace()
        .nth(2)?
        .parse()
        .ok()
}

/// Whether a live process (not a zombie) of group `pgid` is left.
fn group_alive(pgid: i32) -> bool {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .any(|pid| group_of(pid) == Some(pgid) && running(pid))
}

/// A stop hook process fed Claude Code's `Stop`, killed with SIGKILL once its suite runs;
/// returns the suite's pid and process group.
fn stop_killed_mid_run(root: &Path) -> (i32, i32) {
    let mut child = context_pilot(root)
        .args(["hook", "stop"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(fixture("claude_stop.json", root, root).as_bytes())
            .unwrap();
    }
    eventually("the stop's suite", LIMIT, || {
        logged(root, "started-").len() == 1 && logged(root, "child-").len() == 1
    });
    let suite = logged(root, "started-")[0];
    let pgid = group_of(suite).expect("the suite runs");
    child.kill().unwrap();
    child.wait().unwrap();
    (suite, pgid)
}

/// Waits until `path`'s modification and change times are older than the racy rule's slack,
/// so a fingerprint takes its stat data as settled.
fn settled(path: &Path) {
    use std::os::unix::fs::MetadataExt as _;
    let slack = cp_base::racy::SUBSECOND_SLACK * 2;
    eventually("the file's times to settle", LIMIT, || {
        let meta = std::fs::metadata(path).unwrap();
        let now = std::time::SystemTime::now();
        [
            (meta.mtime(), meta.mtime_nsec()),
            (meta.ctime(), meta.ctime_nsec()),
        ]
        .into_iter()
        .all(|(secs, nanos)| {
            let at = std::time::UNIX_EPOCH
                + Duration::new(u64::try_from(secs).unwrap(), u32::try_from(nanos).unwrap());
            now.duration_since(at).is_ok_and(|age| age > slack)
        })
    });
}

fn write_greet(root: &Path, content: &str) {
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/greet.sh"), content).unwrap();
}

#[test]
fn a_killed_stops_run_finishes_once_and_the_next_stop_takes_its_verdict() {
    let (_repo, root) = project(&json!({"tests": {"command": "sh suite.sh"},
        "warm": {"enabled": false}}));
    write_greet(&root, "echo hello\n");
    // The tree as both stops see it: a file written within a tick of a fingerprint is read
    // for its bytes (git's racy rule), which gives another key than the settled file does,
    // and this test is about the run, not about that.
    settled(&root.join("src/greet.sh"));
    let (suite, pgid) = stop_killed_mid_run(&root);
    assert!(
        running(suite),
        "the run may finish: it was cut off with its stop"
    );
    // Whether or not the stop wrote its console's id down before it was killed, the next stop
    // finds the run: take the id away to be sure that way works too.
    let _ = std::fs::remove_file(root.join(".context-pilot/state/stop-run.console"));

    std::fs::write(root.join("log/go"), "").unwrap();
    eventually("the suite to finish", LIMIT, || !running(suite));
    let child = logged(&root, "child-")[0];
    eventually("nothing of its console's group left", LIMIT, || {
        !group_alive(pgid) && !running(child)
    });

    let out = hook("stop", &root, &fixture("claude_stop.json", &root, &root));
    assert_eq!(out.code, Some(0), "{out:?}");
    let reply = out.json();
    let reason = reply["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("Tests passed"), "{reply}");
    assert!(
        reason.contains("session ended before the result"),
        "{reply}"
    );
    assert_eq!(
        logged(&root, "started-"),
        vec![suite],
        "the suite ran again"
    );
    stop_console_server(&root);
}

#[test]
fn a_new_edit_ends_the_run_of_a_stop_that_is_gone_at_once() {
    // A limit far past the test's wait: only the edit can end the run in time.
    let (_repo, root) = project(
        &json!({"tests": {"command": "sh suite.sh", "timeout_secs": 600},
        "warm": {"quiet_ms": 60000}}),
    );
    write_greet(&root, "echo hello\n");
    let (suite, pgid) = stop_killed_mid_run(&root);
    assert!(running(suite));

    // The agent's next edit: the orphaned run tests a tree that is no more.
    write_greet(&root, "echo hello again\n");
    edit_ends_the_orphan(&root, suite, pgid);
}

#[test]
fn a_run_whose_stop_died_before_noting_its_console_is_ended_too() {
    // The stop was killed after its suite started and before it wrote the console's id down
    // (a moment a loaded machine widens): the run is found by the test console that started
    // after it was recorded.
    let (_repo, root) = project(
        &json!({"tests": {"command": "sh suite.sh", "timeout_secs": 600},
        "warm": {"quiet_ms": 60000}}),
    );
    write_greet(&root, "echo hello\n");
    let (suite, pgid) = stop_killed_mid_run(&root);
    assert!(running(suite));
    // Often the kill came first anyway; when it did not, the id is taken away.
    let _ = std::fs::remove_file(root.join(".context-pilot/state/stop-run.console"));
    write_greet(&root, "echo hello again\n");
    edit_ends_the_orphan(&root, suite, pgid);
}

/// The agent's edit (Claude Code's `PostToolUse` of a Write): the orphaned run, its suite
/// `suite` in group `pgid`, ends at once, its background child too.
fn edit_ends_the_orphan(root: &Path, suite: i32, pgid: i32) {
    let root = root.to_path_buf();
    let out = hook(
        "post-tool-use",
        &root,
        &fixture("claude_post_tool_use_write.json", &root, &root),
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    let child = logged(&root, "child-")[0];
    eventually("the orphaned run's whole group to end", AT_ONCE, || {
        !group_alive(pgid) && !running(suite) && !running(child)
    });
    assert!(!root.join("log/go").exists());
    stop_console_server(&root);
}

#[test]
fn the_end_of_the_agents_session_ends_the_run_of_a_stop_that_is_gone_at_once() {
    // An agent CLI wired by `init` (or a plugin) starts `context-pilot mcp` for its session and
    // closes its stdin when the session ends, killed or not: that is when the run of a stop
    // the agent never waited for is ended. The limit is far past the test's wait.
    let (_repo, root) = project(
        &json!({"tests": {"command": "sh suite.sh", "timeout_secs": 600},
        "warm": {"enabled": false}}),
    );
    write_greet(&root, "echo hello\n");
    let mut mcp = context_pilot(&root)
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = mcp.stdin.take().unwrap();
    {
        use std::io::{BufRead as _, Write as _};
        let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "claude-code", "version": "2.1.332"}}});
        writeln!(stdin, "{initialize}").unwrap();
        let mut answer = String::new();
        std::io::BufReader::new(mcp.stdout.take().unwrap())
            .read_line(&mut answer)
            .unwrap();
        assert!(answer.contains("\"id\":1"), "{answer}");
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        writeln!(stdin, "{initialized}").unwrap();
    }
    let (suite, pgid) = stop_killed_mid_run(&root);
    assert!(running(suite));

    // The agent is gone: its MCP server's stdin closes.
    drop(stdin);
    let child = logged(&root, "child-")[0];
    eventually("the orphaned run's whole group to end", AT_ONCE, || {
        !group_alive(pgid) && !running(suite) && !running(child)
    });
    assert!(mcp.wait().unwrap().success());
    assert!(!root.join("log/go").exists());
    stop_console_server(&root);
}
