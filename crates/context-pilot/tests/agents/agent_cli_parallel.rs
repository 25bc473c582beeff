//! End to end (issue 26) with the REAL agent CLIs (installed by `scripts/install-agents.sh`
//! under `target/agents/`) against the scripted model server: workflows whose phases run at
//! once, each agent in its own git worktree. Claude Code's phases overlap and both merge; a
//! dependent sees both results; a conflict exits 3 with a clean tree; `--resume` after
//! `SIGKILL` mid-wave keeps every commit; a phase with `agent: gemini` runs beside a
//! Claude Code phase; and (issue 37) a merge that is red on the combined tree goes back to
//! Claude Code, which fixes it.
//!
//! The phases' requests interleave, so the scripted model answers by phase (`crate::util::phases`):
//! each prompt carries a marker, the first turn makes the phase's tool calls (Context Pilot's
//! MCP tools, paths relative to the phase's worktree), later turns say "Done.".

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::util::agent_run::{
    RUN_LIMIT, agent_command, claude_config, claude_endpoint, gemini_endpoint, shown, wait_output,
};
use crate::util::agents::{assert_none_under, console_servers_under};
use crate::util::merge_queue::{
    SEMANTIC, assert_every_commit_green, assert_proof, feature_calls, feature_fix, rename_calls,
    semantic_project,
};
use crate::util::phases::{
    CLASH, FEATURE, SENT_BACK, Script, Seen, TWO, assert_clash_stopped, assert_clean,
    assert_nothing_left, clash_script, feature_script, marker, phase_branch_gone, run_record,
    serve, serve_back, serve_script,
};
use cp_e2e::{LlmServer, RecordedRequest, git, git_repo};
use serde_json::{Value, json};

/// How long a killed agent may take to disappear from `/proc`.
const GONE_LIMIT: Duration = Duration::from_secs(60);

/// A committed project with the workflow `yaml` (whose prompts carry the phases' markers), a
/// `shared.txt`, and a checkpoint that blocks once and runs no tests; the run's agent is
/// Claude Code.
fn graph_project(yaml: &str) -> (tempfile::TempDir, PathBuf) {
    let repo = git_repo();
    let root = std::fs::canonicalize(repo.path()).unwrap();
    std::fs::create_dir_all(root.join(".context-pilot/workflows")).unwrap();
    std::fs::write(
        root.join(".context-pilot/config.json"),
        json!({"checkpoint": {"max_blocks": 1, "tests": {"command": ""}}, "agent": claude_config()})
            .to_string(),
    )
    .unwrap();
    std::fs::write(root.join(".context-pilot/workflows/wf.yaml"), yaml).unwrap();
    std::fs::write(root.join("shared.txt"), "base\n").unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "init"]);
    (repo, root)
}

/// `context-pilot FIRST… --agent claude` in `root`, both agents' endpoints at `server`.
fn command(root: &Path, home: &Path, server: &LlmServer, first: &[&str]) -> Command {
    let mut command = agent_command(root, home, first, "claude", &[]);
    claude_endpoint(&mut command, server);
    gemini_endpoint(&mut command, server);
    command
}

/// `context-pilot run wf.yaml --headless --agent claude` to its end.
fn run(root: &Path, server: &LlmServer) -> String {
    let home = tempfile::tempdir().unwrap();
    let workflow = ["run", ".context-pilot/workflows/wf.yaml", "--headless"];
    let child = command(root, home.path(), server, &workflow)
        .spawn()
        .unwrap();
    let out = wait_output(child);
    shown(&out)
}

/// Every phase of the record is merged and was run by `agent` (per phase).
fn assert_merged(root: &Path, agents: &[(&str, &str)], shown: &str) {
    let record = run_record(root).unwrap();
    for (phase, agent) in agents {
        let run = &record["phase_runs"][phase];
        assert_eq!(run["status"], "merged", "{record:#}\n{shown}");
        assert_eq!(run["agent"], *agent, "{record:#}\n{shown}");
    }
}

/// Each of `phases` ran in a worktree of its own, on a branch of its own.
fn assert_in_worktrees(root: &Path, phases: &[&str], shown: &str) {
    let record = run_record(root).unwrap();
    for phase in phases {
        let run = &record["phase_runs"][phase];
        let tree = run["worktree"].as_str().unwrap_or_default();
        let branch = run["branch"].as_str().unwrap_or_default();
        assert!(
            tree.starts_with(".context-pilot/worktrees/")
                && tree.ends_with(&format!("/{phase}"))
                && branch.ends_with(&format!("/{phase}")),
            "{record:#}\n{shown}"
        );
    }
}

/// The tool results in the last message of an Anthropic request, as JSON text, when they
/// answer calls whose ids start with `prefix`.
fn tool_results(request: &RecordedRequest, prefix: &str) -> Option<String> {
    let blocks = request.body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_array())?;
    let results: Vec<&Value> = blocks
        .iter()
        .filter(|b| {
            b["type"] == "tool_result"
                && b["tool_use_id"]
                    .as_str()
                    .is_some_and(|id| id.starts_with(prefix))
        })
        .collect();
    (!results.is_empty()).then(|| results.iter().map(ToString::to_string).collect())
}

/// Runs `yaml` (phases api and ui from the start, as in [`TWO`]) with api's first request
/// held until ui's has arrived, and checks: the run succeeded with both requests in flight at
/// once; both phases ran in worktrees of their own, with `agents`, and were merged with their
/// work; no worktree or branch is left. Returns the project, the server and the run's output.
fn two_at_once(
    yaml: &str,
    agents: &[(&str, &str)],
) -> (tempfile::TempDir, PathBuf, LlmServer, String) {
    let (repo, root) = graph_project(yaml);
    let server = LlmServer::start().unwrap();
    let overlapped = Arc::new(Mutex::new(None));
    serve(
        &server,
        feature_script(),
        Arc::default(),
        Some(("api", "ui", Arc::clone(&overlapped))),
        Arc::default(),
    );
    let all = run(&root, &server);
    assert!(all.starts_with("exit Some(0)"), "{all}");
    assert_eq!(*overlapped.lock().unwrap(), Some(true), "{all}");
    for phase in ["api", "ui"] {
        assert_eq!(
            std::fs::read_to_string(root.join(format!("{phase}.txt"))).unwrap(),
            format!("{phase} was here\n"),
            "{all}"
        );
        let log = git(&root, &["log", "--format=%s"]);
        assert!(log.contains(&format!("Merge phase {phase} ")), "{log}");
    }
    assert_merged(&root, agents, &all);
    assert_in_worktrees(&root, &["api", "ui"], &all);
    assert_nothing_left(&root, &all);
    (repo, root, server, all)
}

/// Two phases of a workflow with `depends_on: []` run at once, each Claude Code in its own
/// worktree (its MCP server rooted there), and both branches are merged.
#[test]
fn two_claude_code_phases_run_at_once_in_worktrees_and_both_merge() {
    let (_repo, root, _, _) = two_at_once(TWO, &[("api", "claude"), ("ui", "claude")]);
    assert_none_under(&root, "claude", GONE_LIMIT);
}

/// A phase that depends on two parallel phases starts from the run's branch with both merged,
/// and its agent's tool results carry both results.
#[test]
fn a_claude_code_phase_depending_on_two_parallel_phases_sees_both_results() {
    let (_repo, root) = graph_project(FEATURE);
    let server = LlmServer::start().unwrap();
    let seen = Arc::new(Seen::default());
    serve(
        &server,
        feature_script(),
        Arc::clone(&seen),
        None,
        Arc::default(),
    );
    let all = run(&root, &server);
    assert!(all.starts_with("exit Some(0)"), "{all}");
    let agents = [("api", "claude"), ("ui", "claude"), ("integrate", "claude")];
    assert_merged(&root, &agents, &all);
    // The scripted server's log: integrate's last request holds both files' contents, as the
    // results of its two reads.
    let integrate: Vec<RecordedRequest> = server
        .side_requests()
        .into_iter()
        .filter(|r| feature_script().phase_of(r) == Some("integrate"))
        .collect();
    let last = integrate.last().expect("integrate never asked the model");
    let results = tool_results(last, "toolu_integrate").unwrap_or_default();
    assert!(
        results.contains("api was here") && results.contains("ui was here"),
        "{}",
        last.raw_body
    );
    assert_nothing_left(&root, &all);
    assert_none_under(&root, "claude", GONE_LIMIT);
}

/// Two parallel phases rewrite the same file; the second merge conflicts, the headless run
/// exits 3 naming the file and both phases, the project's tree is clean (no merge in
/// progress), and the conflicting phase's branch is kept.
#[test]
fn a_conflict_between_claude_code_phases_exits_3_and_leaves_the_tree_clean() {
    let (_repo, root) = graph_project(CLASH);
    let server = serve_script(clash_script());
    let all = run(&root, &server);
    assert!(all.starts_with("exit Some(3)"), "{all}");
    assert_clash_stopped(&root, &all);
    assert_none_under(&root, "claude", GONE_LIMIT);
}

/// A process group this test started, killed (`SIGKILL`) by [`GroupGuard::kill`] or, when the
/// test fails first, when the guard is dropped.
struct GroupGuard(Option<i32>);

impl GroupGuard {
    fn kill(&mut self) {
        if let Some(group) = self.0.take() {
            // SAFETY: signalling the process group this test started (not yet reaped: its
            // leader is this test's child until `wait`).
            unsafe {
                libc::kill(-group, libc::SIGKILL);
            }
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The run is killed (`SIGKILL`) mid-wave (api merged, ui's Claude Code waiting on the
/// model), then `run --resume` finishes it: api's commit is kept, ui and integrate are merged,
/// and no Claude Code process is left. The kill may land while the git that deletes api's
/// branch is still at work (the branch is gone from the list before git has let go of
/// `packed-refs.lock`): the resumed run removes the lock it left.
#[test]
fn resume_after_sigkill_of_a_claude_code_run_mid_wave_keeps_every_commit() {
    let (_repo, root) = graph_project(FEATURE);
    let server = LlmServer::start().unwrap();
    // ui's agent hangs after its write: the run is killed with api merged and ui running.
    let stall = Arc::new(Mutex::new(Some("ui")));
    let seen = Arc::new(Seen::default());
    serve(
        &server,
        feature_script(),
        Arc::clone(&seen),
        None,
        Arc::clone(&stall),
    );
    let home = tempfile::tempdir().unwrap();
    let workflow = ["run", ".context-pilot/workflows/wf.yaml", "--headless"];
    let mut killed = command(&root, home.path(), &server, &workflow);
    // The killed run's progress and errors, for a failure's message.
    let first_log = home.path().join("first-run.log");
    let log = std::fs::File::create(&first_log).unwrap();
    killed.stdout(log.try_clone().unwrap()).stderr(log);
    let first = || std::fs::read_to_string(&first_log).unwrap_or_default();
    std::os::unix::process::CommandExt::process_group(&mut killed, 0);
    let mut child = killed.spawn().unwrap();
    // A failure before the kill must not leave the run (and its agents) running.
    let mut guard = GroupGuard(i32::try_from(child.id()).ok());
    let record = cp_e2e::eventually_some_with(
        "the run record: api merged, ui at work",
        RUN_LIMIT,
        || {
            if let Some(record) = run_record(&root)
                && record["phase_runs"]["api"]["status"] == "merged"
                && record["phase_runs"]["ui"]["status"] == "running"
                && phase_branch_gone(&root, "api")
                && seen
                    .bodies("ui")
                    .iter()
                    .any(|b| b.contains("\"tool_result\""))
            {
                return Some(record);
            }
            assert!(
                child.try_wait().unwrap().is_none(),
                "the run ended before the awaited state\n{}",
                first()
            );
            None
        },
        first,
    );
    let run_id = record["run_id"].as_str().unwrap().to_owned();
    let merge = record["phase_runs"]["api"]["merge_commit"]
        .as_str()
        .unwrap()
        .to_owned();
    let api_commit = git(&root, &["rev-parse", &format!("{merge}^2")])
        .trim()
        .to_owned();
    guard.kill();
    child.wait().unwrap();
    assert_none_under(&root, "claude", GONE_LIMIT);

    *stall.lock().unwrap() = None;
    let resume = ["run", "--resume", &run_id, "--headless"];
    let resumed = command(&root, home.path(), &server, &resume)
        .spawn()
        .unwrap();
    let out = wait_output(resumed);
    let all = format!("killed run:\n{}\nresumed run: {}", first(), shown(&out));
    assert_eq!(out.status.code(), Some(0), "{all}");
    let kept = Command::new("git")
        .args(["merge-base", "--is-ancestor", &api_commit, "HEAD"])
        .current_dir(&root)
        .status()
        .unwrap();
    assert!(kept.success(), "{api_commit} lost\n{all}");
    for (file, content) in [("api.txt", "api was here\n"), ("ui.txt", "ui was here\n")] {
        assert_eq!(
            std::fs::read_to_string(root.join(file)).unwrap(),
            content,
            "{all}"
        );
    }
    let agents = [("api", "claude"), ("ui", "claude"), ("integrate", "claude")];
    assert_merged(&root, &agents, &all);
    assert_nothing_left(&root, &all);
    assert_none_under(&root, "claude", GONE_LIMIT);
}

/// A phase with `agent: gemini` runs at once with a Claude Code phase (the run's agent), each
/// in its own worktree: Gemini CLI calls Context Pilot's tools there, passes its stop gate,
/// and both branches merge. Gemini CLI is not handed the Claude model of the `agent` section,
/// and no worktree, branch, agent or console server is left.
#[test]
fn a_gemini_cli_phase_runs_beside_a_claude_code_phase_and_both_merge() {
    // TWO with ui's phase given to Gemini CLI; api runs with the run's agent, Claude Code.
    let mixed = TWO.replace("  - id: ui\n", "  - id: ui\n    agent: gemini\n");
    let (_repo, root, server, all) = two_at_once(&mixed, &[("api", "claude"), ("ui", "gemini")]);
    // ui's conversation went over Gemini's wire, through Context Pilot's MCP tool, its stop
    // gate sent it back once, and none of its requests asked for the Claude model.
    let ui: Vec<RecordedRequest> = server
        .side_requests()
        .into_iter()
        .filter(|r| r.path.contains(":streamGenerateContent") && r.raw_body.contains(&marker("ui")))
        .collect();
    let gated = ui
        .iter()
        .any(|r| r.raw_body.contains("\"functionResponse\"") && r.raw_body.contains("Stop gate:"));
    assert!(gated, "ui's stop gate never reached Gemini CLI\n{all}");
    let models: Vec<&str> = ui.iter().map(|r| r.path.as_str()).collect();
    assert!(
        models.iter().all(|p| !p.contains("claude")),
        "Gemini CLI was asked for a Claude model: {models:?}"
    );
    assert_none_under(&root, "claude", GONE_LIMIT);
    assert_none_under(&root, "gemini", GONE_LIMIT);
    let consoles = console_servers_under(&root.join(".context-pilot/worktrees"));
    assert!(consoles.is_empty(), "console servers left: {consoles:?}");
}

/// Issue 37 with Claude Code as both phases' agent: rename turns `lib.greet` into
/// `lib.hello`, feature calls `lib.greet`; each passes its stop gate in its worktree, the
/// merge queue finds the combined tree red, and the failure goes back to feature's Claude
/// Code, in its worktree on its branch brought up to date, which fixes the call. Every
/// commit the run made on the branch is green, and both merges carry their proof.
#[test]
fn a_red_merge_goes_back_to_claude_code_which_fixes_it() {
    let config = json!({"checkpoint": {"max_blocks": 1}, "agent": claude_config()});
    let (_repo, root) = semantic_project(SEMANTIC, config, &[]);
    let start = git(&root, &["rev-parse", "HEAD"]).trim().to_owned();
    let server = LlmServer::start().unwrap();
    let seen = Arc::new(Seen::default());
    serve_back(
        &server,
        Script {
            phases: vec![
                ("rename", rename_calls()),
                ("feature", feature_calls(false)),
            ],
        },
        vec![("feature", feature_fix())],
        Arc::clone(&seen),
        None,
        Arc::default(),
    );
    let all = run(&root, &server);
    assert!(all.starts_with("exit Some(0)"), "{all}");
    let told: Vec<String> = seen
        .bodies("feature")
        .into_iter()
        .filter(|b| b.contains(SENT_BACK))
        .collect();
    assert!(
        told.iter().any(|b| b.contains("AttributeError")),
        "Claude Code was never told the failure\n{all}"
    );
    let feature = std::fs::read_to_string(root.join("feature.py")).unwrap();
    assert!(feature.contains("lib.hello"), "{feature}\n{all}");
    assert_eq!(assert_every_commit_green(&root, &start, &all), 2, "{all}");
    assert_proof(&root, "rename", &all);
    assert_proof(&root, "feature", &all);
    assert_merged(&root, &[("rename", "claude"), ("feature", "claude")], &all);
    assert!(all.contains("branch main is green at"), "{all}");
    assert_nothing_left(&root, &all);
    assert_clean(&root, &all);
    assert_none_under(&root, "claude", GONE_LIMIT);
}
