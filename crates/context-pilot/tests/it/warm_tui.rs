//! Issue 38 end to end through the built-in agent in the TUI (the real binary in a PTY, the
//! scripted Anthropic server as the model): warm runs of the stop gate's tests.
//!
//! The agent makes a green change and "thinks" (the scripted model answers the next request
//! only once the warm run's verdict is kept: a durable fact, where a person would see a pause),
//! then says "Done.": the stop gate takes the warm run's verdict, and the suite does not run
//! again for that tree. Then a red edit and at once "Done.": the verdict names the failing
//! test (a warm run of an older tree never stands for the red one).

use std::time::Duration;

use cp_e2e::{LlmServer, TuiSession, anthropic, git, git_repo};
use serde_json::json;

use crate::util::warm::{
    GREEN_TOOL, RED_TOOL, SUITE_SECS, answers, calc, runs, think_until_warm_verdict,
    told_by_the_gate, warm_record, write_suite,
};

const WAIT: Duration = Duration::from_secs(180);

/// A committed, trusted Python project: [`write_suite`]'s.
fn project() -> tempfile::TempDir {
    let repo = git_repo();
    let root = std::fs::canonicalize(repo.path()).unwrap();
    write_suite(&root);
    cp_e2e::trust(&root);
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "init"]);
    repo
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
            // The script's next reply ("Done.") goes out once the warm run kept its verdict.
            think_until_warm_verdict(&root, request);
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
