//! Issue 38 end to end through the built-in agent in the TUI (the real binary in a PTY, the
//! scripted Anthropic server as the model): warm runs of the stop gate's tests.
//!
//! The agent makes a green change and "thinks" (the scripted model answers the next request
//! only once the warm run's verdict is kept: a durable fact, where a person would see a pause),
//! then says "Done.": the stop gate takes the warm run's verdict, and the suite does not run
//! again for that tree. Then a red edit and at once "Done.": the verdict names the failing
//! test (a warm run of an older tree never stands for the red one).

use std::path::Path;
use std::time::{Duration, Instant};

use cp_e2e::{LlmServer, RecordedRequest, TuiSession, anthropic, git, git_repo};
use serde_json::{Value, json};

/// How long the suite's one test takes: long enough that a stop which ran it could not pass
/// for one that took a warm run's verdict.
const SUITE_SECS: u64 = 3;
/// How long the scripted model "thinks" at most, waiting for the warm run's verdict.
const THINK_LIMIT: Duration = Duration::from_secs(120);
const WAIT: Duration = Duration::from_secs(180);

const GREEN_TOOL: &str = "toolu_01Green";
const RED_TOOL: &str = "toolu_02Red";

/// A committed, trusted Python project: `calc.py` and a unittest suite that logs, at its
/// start, the line of `calc.py` it tests (to `runs.log`, ignored by git).
fn project() -> tempfile::TempDir {
    let repo = git_repo();
    let root = std::fs::canonicalize(repo.path()).unwrap();
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
    cp_e2e::trust(&root);
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "init"]);
    repo
}

/// `calc.py` whose `add` returns `expression`.
fn calc(expression: &str) -> String {
    format!("def add(a, b):\n    return {expression}\n")
}

/// The lines of `calc.py` the suite's runs tested, in order.
fn runs(root: &Path) -> Vec<String> {
    std::fs::read_to_string(root.join("runs.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The project's warm-run record.
fn warm_record(root: &Path) -> Value {
    std::fs::read_to_string(root.join(".context-pilot/state/warm-run.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null)
}

/// The last message of a request holds the result of the tool call `id`.
fn answers(request: &RecordedRequest, id: &str) -> bool {
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
fn told_by_the_gate(request: &RecordedRequest) -> String {
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

/// The built-in agent's `File_write` of `calc.py` with `add` returning `expression`.
fn write_calc(id: &str, expression: &str) -> cp_e2e::Reply {
    let args = json!({"file_path": "calc.py", "content": calc(expression)}).to_string();
    anthropic::tool_use_turn(&[(id, "File_write", &args)])
}

#[test]
fn the_built_in_agent_stops_on_the_warm_verdict_and_a_red_edit_right_before_a_stop_is_caught() {
    let repo = project();
    let root = std::fs::canonicalize(repo.path()).unwrap();
    let server = LlmServer::start().unwrap();
    {
        let root = root.clone();
        server.answer_side_requests(move |request| {
            // The model thinks after the green edit until the warm run kept its verdict; the
            // script's next reply ("Done.") then goes out.
            if answers(request, GREEN_TOOL) {
                let deadline = Instant::now() + THINK_LIMIT;
                while warm_record(&root)["current"]["phase"]["phase"] != "done"
                    && Instant::now() < deadline
                {
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
            None
        });
    }
    server.push(write_calc(GREEN_TOOL, "b + a"));
    server.push(anthropic::text_turn("Done."));
    server.push(write_calc(RED_TOOL, "a - b"));
    server.push(anthropic::text_turn("Done."));
    server.push(anthropic::text_turn("Still done."));
    server.push(anthropic::text_turn("Really done."));

    let url = server.url();
    let env = [
        ("ANTHROPIC_BASE_URL", url.as_str()),
        ("ANTHROPIC_API_KEY", "k"),
        ("OPENAI_API_KEY", ""),
    ];
    let mut tui = TuiSession::start(&root, &[], &env).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    tui.type_text("Tidy calc.add.");
    tui.send(b"\r");
    // The turn ends once the stop gate lets the agent stop (its last words end in "done.").
    tui.wait_turn_end(&root, "done.", WAIT).unwrap();
    let requests = server.requests();
    let shown = || format!("{} requests\nscreen:\n{}", requests.len(), tui.screen());
    assert!(requests.len() >= 5, "{}", shown());
    let record = warm_record(&root);

    // The stop after the green change: the warm run's verdict, and the suite ran once for the
    // green tree.
    assert!(answers(&requests[1], GREEN_TOOL), "{}", shown());
    let told = &told_by_the_gate(&requests[2]);
    assert!(told.contains("Stop gate: verify"), "{told}");
    assert!(told.contains("Tests passed"), "{told}");
    assert!(
        told.contains("A warm run tested this very tree"),
        "the stop did not take the warm run's verdict: {told}\nwarm record: {record}"
    );
    let green_runs = runs(&root)
        .iter()
        .filter(|line| line.as_str() == "return b + a")
        .count();
    assert_eq!(green_runs, 1, "runs: {:?}", runs(&root));
    let turn_end = server.replied_at(1).unwrap();
    let latency = requests[2].received.saturating_duration_since(turn_end);
    eprintln!(
        "built-in agent: the verdict after the green change reached the model {:.2} s after \
         it said Done. (the suite takes {SUITE_SECS} s)",
        latency.as_secs_f64()
    );

    // The red edit and at once "Done.": the red tree's own verdict, naming the failing test.
    assert!(answers(&requests[3], RED_TOOL), "{}", shown());
    let told = &told_by_the_gate(&requests[4]);
    assert!(told.contains("Stop gate: verify"), "{told}");
    assert!(told.contains("test_calc.TestCalc.test_add"), "{told}");
    assert!(!told.contains("Tests passed"), "{told}");
    assert!(
        runs(&root).iter().any(|line| line == "return a - b"),
        "{:?}",
        runs(&root)
    );

    assert_eq!(tui.quit(WAIT).unwrap(), 0);
    // Nothing of the warm runs is left running once the TUI ended.
    crate::util::agents::assert_none_under(&root, "warm-run", Duration::from_secs(30));
    crate::util::stop_console_server(&root);
}
