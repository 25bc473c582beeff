//! The warm-run end-to-end tests' project and facts (issue 38): a Python project whose one
//! test takes [`SUITE_SECS`] and logs which `calc.py` it tested, the project's warm-run record,
//! and what the model was told. Used by `agents/warm_runs.rs` (Claude Code) and
//! `it/warm_tui.rs` (the built-in agent in the TUI).

use std::path::Path;
use std::time::Duration;

use cp_e2e::RecordedRequest;
use serde_json::{Value, json};

/// How long the suite's one test takes: long enough that a stop which ran it could not pass
/// for one that took a warm run's verdict.
pub const SUITE_SECS: u64 = 3;
/// How long the scripted model "thinks" at most, waiting for the warm run's verdict.
pub const THINK_LIMIT: Duration = Duration::from_secs(120);

pub const GREEN_TOOL: &str = "toolu_01Green";
pub const RED_TOOL: &str = "toolu_02Red";

/// Writes, in the repository at `root`, `calc.py`, a unittest suite that logs at its start the
/// line of `calc.py` it tests (to `runs.log`, ignored by git), and a config whose stop gate runs
/// it (at most two blocks).
pub fn write_suite(root: &Path) {
    std::fs::write(root.join("calc.py"), calc("a + b")).unwrap();
    std::fs::write(
        root.join("test_calc.py"),
        format!(
            "import time\nimport unittest\n\nimport calc\n\n\n\
             class TestCalc(unittest.TestCase):\n    \
             def test_add(self):\n        \
             with open('calc.py') as src, open('runs.log', 'a') as log:\n            \
             log.write(src.read().splitlines()[1].strip() + '\\n')\n        \
             time.sleep({SUITE_SECS})\n        \
             self.assertEqual(calc.add(2, 3), 5)\n"
        ),
    )
    .unwrap();
    std::fs::write(root.join(".gitignore"), "__pycache__/\nruns.log\n").unwrap();
    std::fs::create_dir_all(root.join(".context-pilot")).unwrap();
    std::fs::write(
        root.join(".context-pilot/config.json"),
        json!({"checkpoint": {"max_blocks": 2, "tests": {"command": "python3 -m unittest"}}})
            .to_string(),
    )
    .unwrap();
}

/// `calc.py` whose `add` returns `expression`.
pub fn calc(expression: &str) -> String {
    format!("def add(a, b):\n    return {expression}\n")
}

/// The lines of `calc.py` the suite's runs tested, in order.
pub fn runs(root: &Path) -> Vec<String> {
    std::fs::read_to_string(root.join("runs.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The project's warm-run record.
pub fn warm_record(root: &Path) -> Value {
    std::fs::read_to_string(root.join(".context-pilot/state/warm-run.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null)
}

/// The model "thinks" after the green edit until the warm run kept its verdict: for the
/// scripted server's side-request hook, which lets the script's next reply go out after it.
pub fn think_until_warm_verdict(root: &Path, request: &RecordedRequest) {
    if answers(request, GREEN_TOOL) {
        // The reply goes out at the limit either way; the test then says what is wrong.
        let _done = cp_e2e::within(THINK_LIMIT, || {
            (warm_record(root)["current"]["phase"]["phase"] == "done").then_some(())
        });
    }
}

/// The last message of a request holds the result of the tool call `id`.
pub fn answers(request: &RecordedRequest, id: &str) -> bool {
    request.body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_array())
        .is_some_and(|blocks| {
            blocks
                .iter()
                .any(|b| b["type"] == "tool_result" && b["tool_use_id"] == id)
        })
}

/// What the stop gate just told the model: the last message of a request, as JSON text,
/// without the panels' context the built-in agent sends along (which shows the previous
/// stop's Checkpoint panel).
pub fn told_by_the_gate(request: &RecordedRequest) -> String {
    let last = request.body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map(Value::to_string)
        .unwrap_or_default();
    match last.split_once("<panels>") {
        Some((gate, _)) => gate.to_owned(),
        None => last,
    }
}
