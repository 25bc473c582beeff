//! Failures that predate the session (issue 48), through `context-pilot hook …` fed Claude
//! Code's payloads, with a real pytest: `SessionStart` on a clean tree starts a base run (a
//! warm run of the session's base commit), whose per-command verdict is kept under the
//! commit's tree hash. A stop then names a failure that already failed there "already failing
//! before this session" and holds the agent for new failures only.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::util::{canonical, fixture, hook, stop_console_server};
use cp_e2e::{eventually, git, git_repo, pytest_wheels};
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(120);
const SESSION: &str = "eb5b0174-0555-4601-804e-672d68069c89";

/// `<root>/.venv` with pytest; `false` (a failure under CI) when python3 or the wheels are
/// missing.
fn make_venv(root: &Path) -> bool {
    let ready = pytest_wheels().is_some_and(|wheels| {
        Command::new("python3")
            .args(["-m", "venv", ".venv"])
            .current_dir(root)
            .status()
            .is_ok_and(|s| s.success())
            && Command::new(root.join(".venv/bin/python"))
                .args(["-m", "pip", "install", "-q", "--no-index", "--find-links"])
                .arg(wheels)
                .arg("pytest")
                .current_dir(root)
                .status()
                .is_ok_and(|s| s.success())
    });
    assert!(
        ready || std::env::var_os("CI").is_none(),
        "python3 with venv and pytest (wheels) are needed; under CI this fails"
    );
    if !ready {
        eprintln!("python3 with venv, or pytest from PyPI, missing: skipped");
    }
    ready
}

fn calc(sub: &str) -> String {
    format!("def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return {sub}\n")
}

fn warm_record(root: &Path) -> Value {
    std::fs::read_to_string(root.join(".context-pilot/state/warm-run.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null)
}

fn stop(root: &Path, payload: &str) -> Value {
    let out = hook("stop", root, &fixture(payload, root, root));
    assert_eq!(out.code, Some(0), "{out:?}");
    if out.stdout.trim().is_empty() {
        Value::Null
    } else {
        out.json()
    }
}

fn last_tests(root: &Path) -> Value {
    let saved: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join(".context-pilot/state/main/checkpoint.json")).unwrap(),
    )
    .unwrap();
    saved["last_report"]["tests"][0].clone()
}

/// One test fails at the session's base (`test_old`), the agent breaks another (`test_sub`):
/// the verdict tells them apart and holds the agent; once `test_sub` is fixed the red run no
/// longer holds it (only the commit does), `test_old` still named as predating.
#[test]
fn a_failure_at_the_base_is_named_and_only_new_failures_hold_the_agent() {
    let repo = git_repo();
    let root = canonical(repo.path());
    if !make_venv(&root) {
        return;
    }
    std::fs::write(root.join("calc.py"), calc("a - b")).unwrap();
    std::fs::write(
        root.join("test_calc.py"),
        "from calc import add, sub\n\n\ndef test_add():\n    assert add(2, 2) == 4\n\n\n\
         def test_sub():\n    assert sub(3, 1) == 2\n\n\n\
         def test_old():\n    assert add(1, 1) == 3\n",
    )
    .unwrap();
    std::fs::write(
        root.join(".gitignore"),
        ".venv/\n__pycache__/\n.pytest_cache/\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join(".context-pilot")).unwrap();
    std::fs::write(
        root.join(".context-pilot/config.json"),
        json!({"checkpoint": {"tests": {"command": ".venv/bin/python -m pytest"},
            "warm": {"quiet_ms": 50}}})
        .to_string(),
    )
    .unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "init: test_old fails"]);
    crate::util::trust(&root);

    // The session starts on the clean tree: its base is tested in the background.
    let start = json!({"session_id": SESSION, "cwd": root, "hook_event_name": "SessionStart",
        "source": "startup"})
    .to_string();
    let started = hook("session-start", &root, &start);
    assert_eq!(started.code, Some(0), "{started:?}");
    eventually("the base run's verdict", LIMIT, || {
        warm_record(&root)["bases"]
            .as_array()
            .is_some_and(|b| !b.is_empty())
    });
    let base = &warm_record(&root)["bases"][0]["outcomes"][0];
    assert_eq!(
        base["summary"]["failing"],
        json!(["test_calc.py::test_old"]),
        "{base}"
    );

    // The agent breaks `sub`.
    std::fs::write(root.join("calc.py"), calc("a + b")).unwrap();
    let reply = stop(&root, "claude_stop.json");
    assert_eq!(reply["decision"], "block", "{reply}");
    let reason = reply["reason"].as_str().unwrap();
    assert!(reason.contains("Tests FAILED"), "{reason}");
    assert!(
        reason.contains("Already failing before this session (1): test_calc.py::test_old."),
        "{reason}"
    );
    assert!(
        reason.contains("New since this session began (1): test_calc.py::test_sub."),
        "{reason}"
    );
    assert!(reason.contains("Fix the new failures"), "{reason}");

    // Fixed: the run is red with test_old only, which does not hold the agent; the commit
    // gate does.
    std::fs::write(root.join("calc.py"), calc("a - b  # fixed")).unwrap();
    let reply = stop(&root, "claude_stop_active.json");
    assert_eq!(reply["decision"], "block", "{reply}");
    let reason = reply["reason"].as_str().unwrap();
    assert!(reason.contains("Commit your changes"), "{reason}");
    assert!(!reason.contains("Tests FAILED"), "{reason}");
    let tests = last_tests(&root);
    assert_eq!(tests["passed"], false, "{tests}");
    assert_eq!(
        tests["predating"],
        json!(["test_calc.py::test_old"]),
        "{tests}"
    );
    assert_eq!(
        tests["summary"]["failing"],
        json!(["test_calc.py::test_old"]),
        "{tests}"
    );

    git(&root, &["commit", "-qam", "fix sub"]);
    let reply = stop(&root, "claude_stop_active.json");
    assert!(
        reply.get("decision").is_none(),
        "the agent may stop: {reply}"
    );
    stop_console_server(&root);
}

/// Without a known base verdict nothing is said of what came before: the same red run holds.
#[test]
fn without_a_base_verdict_a_failure_is_not_called_old() {
    let repo = git_repo();
    let root = canonical(repo.path());
    if !make_venv(&root) {
        return;
    }
    std::fs::write(root.join("calc.py"), calc("a - b")).unwrap();
    std::fs::write(
        root.join("test_calc.py"),
        "from calc import add\n\n\ndef test_old():\n    assert add(1, 1) == 3\n",
    )
    .unwrap();
    std::fs::write(
        root.join(".gitignore"),
        ".venv/\n__pycache__/\n.pytest_cache/\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join(".context-pilot")).unwrap();
    std::fs::write(
        root.join(".context-pilot/config.json"),
        json!({"checkpoint": {"tests": {"command": ".venv/bin/python -m pytest"},
            "warm": {"enabled": false}}})
        .to_string(),
    )
    .unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "init"]);
    crate::util::trust(&root);
    std::fs::write(root.join("calc.py"), calc("a - b  # touched")).unwrap();
    let reply = stop(&root, "claude_stop.json");
    let reason = reply["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("Tests FAILED"), "{reply}");
    assert!(!reason.contains("before this session"), "{reason}");
    let reply = stop(&root, "claude_stop_active.json");
    let reason = reply["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("Tests FAILED"), "held again: {reply}");
    assert!(last_tests(&root).get("predating").is_none());
    stop_console_server(&root);
}
