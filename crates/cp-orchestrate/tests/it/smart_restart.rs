//! Seed 003's integration tests (Tasks §5): the restart loop with a scripted driver against
//! real git repositories in temp dirs.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::process::Command;

use crate::util::Repo;
use crate::util::scripted::{Action, HandoffReply, ScriptedDriver, Session, Step, turn, write};
use cp_orchestrate::{
    HANDOFF_REQUEST, HandoffSource, HandoffStore, RestartConfig, RestartError, RestartEvent,
    RestartLoop, RestartOverrides, RestartTrigger,
};
use serde_json::json;

const PROMPT: &str = "Implement the parser in src/parser.rs.";
const WINDOW: u64 = 200_000;

fn repo() -> Repo {
    Repo::with_commit(&[("README.md", "# demo\n"), ("src/lib.rs", "pub fn a() {}\n")])
}

fn config() -> RestartConfig {
    RestartConfig::default()
}

/// Runs `phase` and collects the events.
fn run(
    repo: &Repo,
    config: RestartConfig,
    driver: &mut ScriptedDriver,
) -> (
    Result<cp_orchestrate::PhaseReport, RestartError>,
    Vec<RestartEvent>,
) {
    let restart = RestartLoop::new(repo.project(), config);
    restart.preflight(&[]).unwrap();
    let mut events = Vec::new();
    let mut observe = |e: &RestartEvent| events.push(e.clone());
    let result = restart.run_phase("impl", PROMPT, driver, &mut observe);
    (result, events)
}

/// A session that crosses `percent` % on its second turn, after writing `file`.
fn filling_session(file: &'static str, percent: u64) -> Session {
    Session::new(vec![
        turn(20_000, WINDOW, vec![write(file, "// part 1\n")]),
        turn(
            WINDOW * percent / 100,
            WINDOW,
            vec![write(file, "// part 1\n// part 2\n")],
        ),
        turn(10_000, WINDOW, vec![write("never.rs", "unreachable")]),
        Step::Finish,
    ])
}

fn done() -> Session {
    Session::new(vec![Step::Finish])
}

fn git_log(repo: &Repo) -> Vec<String> {
    repo.git(&["log", "--format=%s"])
        .lines()
        .map(str::to_owned)
        .collect()
}

fn tool_handoff() -> HandoffReply {
    HandoffReply::Tool(json!({
        "reason": "threshold_critical",
        "completed": [{"file": "src/parser.rs", "status": "done", "tests": "passed",
                       "notes": "tokenizer and expression parser"}],
        "remaining": [{"file": "src/writer.rs", "description": "write the encoder",
                       "reference_pattern": "src/parser.rs:1-40", "priority": "high"}],
        "decisions": ["errors are typed with thiserror"],
        "files_modified": ["src/parser.rs"]
    }))
}

// 5.2
#[test]
fn restart_is_triggered_when_the_context_threshold_is_exceeded() {
    let repo = repo();
    let mut driver = ScriptedDriver::new(
        &repo.project(),
        vec![filling_session("src/parser.rs", 85), done()],
    );
    let journal = driver.journal();
    let (result, events) = run(&repo, config(), &mut driver);
    let report = result.unwrap();
    assert_eq!(report.restarts, 1);
    assert_eq!(driver.sessions_run(), 2);
    // The crossing turn's batch finished; the next turn never ran.
    assert_eq!(journal.lock().unwrap().batches_done, ["s0t0", "s0t1"]);
    assert!(!repo.dir.path().join("never.rs").exists());
    let stopped = events
        .iter()
        .find_map(|e| match e {
            RestartEvent::Stopped { trigger, .. } => Some(*trigger),
            _ => None,
        })
        .unwrap();
    assert!(
        matches!(stopped, Some(RestartTrigger::Context { percent, threshold })
            if (percent - 85.0).abs() < 1e-9 && (threshold - 80.0).abs() < 1e-9),
        "{stopped:?}"
    );
    assert_eq!(journal.lock().unwrap().handoff_requests, [HANDOFF_REQUEST]);
}

#[test]
fn below_the_threshold_nothing_restarts() {
    let repo = repo();
    let mut driver = ScriptedDriver::new(&repo.project(), vec![filling_session("src/p.rs", 79)]);
    let (result, _) = run(&repo, config(), &mut driver);
    assert_eq!(result.unwrap().restarts, 0);
    assert_eq!(driver.sessions_run(), 1);
    assert!(repo.dir.path().join("never.rs").exists());
}

// 5.3
#[test]
fn the_agents_handoff_is_injected_before_the_original_prompt() {
    let repo = repo();
    let mut driver = ScriptedDriver::new(
        &repo.project(),
        vec![
            filling_session("src/parser.rs", 90).handoff(tool_handoff()),
            done(),
        ],
    );
    let journal = driver.journal();
    let (result, events) = run(&repo, config(), &mut driver);
    result.unwrap();
    let prompts = journal.lock().unwrap().prompts.clone();
    assert_eq!(prompts[0], PROMPT);
    let second = &prompts[1];
    assert!(
        second.contains("## Handoff from `main` (threshold_critical"),
        "{second}"
    );
    assert!(
        second
            .contains("- [high] `src/writer.rs`: write the encoder (follow `src/parser.rs:1-40`)"),
        "{second}"
    );
    assert!(
        second.contains("errors are typed with thiserror"),
        "{second}"
    );
    let handoff_at = second.find("write the encoder").unwrap();
    let prompt_at = second.find(PROMPT).unwrap();
    assert!(handoff_at < prompt_at);
    assert!(second.ends_with(PROMPT));
    assert!(events.iter().any(|e| matches!(
        e,
        RestartEvent::Handoff {
            source: HandoffSource::Agent,
            ..
        }
    )));
}

// 5.4
#[test]
fn progress_entries_appear_in_the_restart_context() {
    let repo = repo();
    let mut driver = ScriptedDriver::new(
        &repo.project(),
        vec![
            Session::new(vec![
                turn(
                    1_000,
                    WINDOW,
                    vec![
                        Action::Read("src/lib.rs"),
                        write("src/parser.rs", "fn p() {}\n"),
                    ],
                ),
                turn(190_000, WINDOW, vec![write("src/ast.rs", "enum Ast {}\n")]),
            ])
            .handoff(tool_handoff()),
            done(),
        ],
    );
    let journal = driver.journal();
    run(&repo, config(), &mut driver).0.unwrap();
    let second = journal.lock().unwrap().prompts[1].clone();
    // The agent's completed items…
    assert!(
        second.contains("- `src/parser.rs`: done, tests passed: tokenizer and expression parser"),
        "{second}"
    );
    // …and the session's own progress, from the tool history.
    assert!(
        second.contains("### Progress of the previous session"),
        "{second}"
    );
    assert!(second.contains("4 tool calls:"), "{second}");
    for line in [
        "- File_read `src/lib.rs`",
        "- File_write `src/parser.rs`",
        "- File_write `src/ast.rs`",
        "- Checkpoint_handoff",
    ] {
        assert!(second.contains(line), "missing {line}: {second}");
    }
}

// 5.5
#[test]
fn modified_files_appear_in_the_restart_context_even_without_a_handoff() {
    let repo = repo();
    let mut driver = ScriptedDriver::new(
        &repo.project(),
        vec![
            Session::new(vec![turn(
                170_000,
                WINDOW,
                vec![
                    write("src/lib.rs", "pub fn a() { changed() }\n"),
                    write("src/new.rs", "fn changed() {}\n"),
                ],
            )]),
            done(),
        ],
    );
    let journal = driver.journal();
    let (result, events) = run(&repo, config(), &mut driver);
    let report = result.unwrap();
    let second = journal.lock().unwrap().prompts[1].clone();
    assert!(
        second.contains("### Files changed by the previous session"),
        "{second}"
    );
    assert!(second.contains("- M `src/lib.rs`"), "{second}");
    assert!(second.contains("- ?? `src/new.rs`"), "{second}");
    assert!(second.contains("without submitting a handoff"), "{second}");
    assert!(events.iter().any(|e| matches!(
        e,
        RestartEvent::Handoff {
            source: HandoffSource::Fallback,
            ..
        }
    )));
    // The fallback is a real record: threshold_critical, with the changed files.
    let store = HandoffStore::new(&repo.project());
    let fallback = store.load(&report.handoffs[0]).unwrap();
    assert_eq!(fallback.reason.as_str(), "threshold_critical");
    assert_eq!(
        fallback.context.files_modified,
        ["src/lib.rs", "src/new.rs"]
    );
}

// 5.6
#[test]
fn the_restart_counter_increments_with_each_restart() {
    let repo = repo();
    let mut driver = ScriptedDriver::new(
        &repo.project(),
        vec![
            filling_session("a.rs", 81),
            filling_session("b.rs", 82),
            filling_session("c.rs", 83),
            done(),
        ],
    );
    let journal = driver.journal();
    let (result, events) = run(&repo, config(), &mut driver);
    assert_eq!(result.unwrap().restarts, 3);
    let journal = journal.lock().unwrap();
    assert_eq!(journal.attempts, [0, 1, 2, 3]);
    for (i, prompt) in journal.prompts.iter().enumerate().skip(1) {
        assert!(
            prompt.starts_with(&format!(
                "# Continuing phase `impl` (restart {i} of at most 3)"
            )),
            "{prompt}"
        );
    }
    let restarts: Vec<u32> = events
        .iter()
        .filter_map(|e| match e {
            RestartEvent::Restarting {
                restart, max: 3, ..
            } => Some(*restart),
            _ => None,
        })
        .collect();
    assert_eq!(restarts, [1, 2, 3]);
}

// 5.7
#[test]
fn max_restarts_is_respected_and_the_phase_fails_after_3() {
    let repo = repo();
    let mut driver =
        ScriptedDriver::new(&repo.project(), vec![filling_session("loop.rs", 95)]).repeating();
    let (result, events) = run(&repo, config(), &mut driver);
    let err = result.unwrap_err();
    assert!(matches!(
        err,
        RestartError::MaxRestartsExceeded {
            hits: 4,
            max: 3,
            ..
        }
    ));
    let message = err.to_string();
    assert!(
        message.starts_with(
            "phase impl hit the context limit 4 times; split it into smaller phases or raise \
             --max-restarts (now 3); its last handoff is in "
        ),
        "{message}"
    );
    // The first session and three restarts ran; no fifth.
    assert_eq!(driver.sessions_run(), 4);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, RestartEvent::LimitExceeded { hits: 4, .. }))
    );
    // Failed work is not committed by default.
    let log = git_log(&repo);
    assert_eq!(log.len(), 4, "{log:?}");
    assert!(!repo.git(&["status", "--porcelain"]).is_empty());
}

#[test]
fn commit_on_failure_commits_the_failed_phase() {
    let repo = repo();
    let mut driver = ScriptedDriver::new(
        &repo.project(),
        vec![Session::new(vec![
            turn(1_000, WINDOW, vec![write("half.rs", "// half done\n")]),
            Step::Fail("provider returned 529 overloaded"),
        ])],
    );
    let cfg = RestartConfig {
        commit_on_failure: true,
        ..config()
    };
    let err = run(&repo, cfg, &mut driver).0.unwrap_err().to_string();
    assert_eq!(
        err,
        "phase impl: the agent session failed: provider returned 529 overloaded"
    );
    assert_eq!(
        git_log(&repo)[0],
        "context-pilot: auto-commit after phase impl failed"
    );
}

// 5.8
#[test]
fn auto_commit_happens_before_each_restart() {
    let repo = repo();
    let mut driver = ScriptedDriver::new(
        &repo.project(),
        vec![
            filling_session("one.rs", 85),
            // This session changes nothing before it fills up: nothing to commit.
            Session::new(vec![turn(180_000, WINDOW, vec![Action::Read("one.rs")])]),
            Session::new(vec![
                turn(1_000, WINDOW, vec![write("two.rs", "2\n")]),
                Step::Finish,
            ]),
        ],
    );
    let (result, events) = run(&repo, config(), &mut driver);
    let report = result.unwrap();
    let log = git_log(&repo);
    assert_eq!(
        log[..3],
        [
            "context-pilot: phase impl completed",
            "context-pilot: auto-commit before restart 2 of phase impl",
            "context-pilot: auto-commit before restart 1 of phase impl",
        ],
        "{log:?}"
    );
    // Before restart 1 the work of session 1 (and its handoff record) went in.
    let first = repo.git(&["show", "--name-only", "--format=", "HEAD~2"]);
    assert!(first.lines().any(|l| l == "one.rs"), "{first}");
    assert!(
        first
            .lines()
            .any(|l| l.starts_with(".context-pilot/handoffs/")),
        "{first}"
    );
    // Session 2 wrote no file, so restart 2 only committed its fallback handoff.
    let second = repo.git(&["show", "--name-only", "--format=", "HEAD~1"]);
    assert!(
        second
            .lines()
            .all(|l| l.starts_with(".context-pilot/handoffs/")),
        "{second}"
    );
    let last = repo.git(&["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(last.trim(), "two.rs");
    assert_eq!(report.commits.len(), 3);
    assert_eq!(report.commits[2], repo.git(&["rev-parse", "HEAD"]).trim());
    assert!(repo.git(&["status", "--porcelain"]).is_empty());
    // The commit before each restart is reported before the restart itself.
    let committed = events
        .iter()
        .position(|e| matches!(e, RestartEvent::Committed { .. }))
        .unwrap();
    let restarting = events
        .iter()
        .position(|e| matches!(e, RestartEvent::Restarting { .. }))
        .unwrap();
    assert!(committed < restarting);
}

#[test]
fn nothing_to_commit_is_skipped_without_an_error() {
    let repo = repo();
    let mut driver = ScriptedDriver::new(&repo.project(), vec![done()]);
    let (result, events) = run(&repo, config(), &mut driver);
    assert!(result.unwrap().commits.is_empty());
    assert!(
        events
            .iter()
            .any(|e| matches!(e, RestartEvent::Committed { commit: None, .. }))
    );
    assert_eq!(git_log(&repo).len(), 1);
}

// 5.9
#[test]
fn request_stop_lets_the_current_batch_finish_first() {
    let repo = repo();
    let mut driver = ScriptedDriver::new(
        &repo.project(),
        vec![
            Session::new(vec![
                turn(1_000, WINDOW, vec![write("a.rs", "a\n")]),
                // A stop is requested from outside at the start of this batch…
                turn(
                    2_000,
                    WINDOW,
                    vec![
                        Action::RequestStop,
                        write("b.rs", "b\n"),
                        write("c.rs", "c\n"),
                    ],
                ),
                turn(3_000, WINDOW, vec![write("d.rs", "d\n")]),
            ]),
            done(),
        ],
    );
    let journal = driver.journal();
    let (result, events) = run(&repo, config(), &mut driver);
    assert_eq!(result.unwrap().restarts, 1);
    // …yet every call of that batch ran, and no later turn did.
    assert_eq!(journal.lock().unwrap().batches_done, ["s0t0", "s0t1"]);
    for f in ["a.rs", "b.rs", "c.rs"] {
        assert!(repo.dir.path().join(f).exists(), "{f}");
    }
    assert!(!repo.dir.path().join("d.rs").exists());
    assert!(
        events
            .iter()
            .any(|e| matches!(e, RestartEvent::Stopped { trigger: None, .. }))
    );
    assert!(journal.lock().unwrap().prompts[1].contains("it was stopped by hand"));
}

// 5.10
#[test]
fn cli_flags_override_the_config_file() {
    let repo = repo();
    let project = repo.project();
    std::fs::create_dir_all(project.dir()).unwrap();
    std::fs::write(
        project.config().path(),
        r#"{"restart": {"context_threshold": 50, "max_restarts": 1, "auto_commit": false}}"#,
    )
    .unwrap();
    let session = || Session::new(vec![turn(120_000, WINDOW, vec![]), Step::Finish]);

    // From the file alone: 60 % is past the 50 % threshold.
    let from_file = RestartConfig::resolve(&project, &RestartOverrides::default()).unwrap();
    assert!((from_file.context_threshold - 50.0).abs() < f64::EPSILON);
    assert_eq!(from_file.max_restarts, 1);
    assert!(!from_file.auto_commit);
    let mut driver = ScriptedDriver::new(&project, vec![session(), done()]);
    assert_eq!(run(&repo, from_file, &mut driver).0.unwrap().restarts, 1);

    // --context-threshold 90 --max-restarts 5: the same session runs through.
    let flags = RestartOverrides {
        context_threshold: Some(90.0),
        max_restarts: Some(5),
        ..RestartOverrides::default()
    };
    let merged = RestartConfig::resolve(&project, &flags).unwrap();
    assert_eq!(merged.max_restarts, 5);
    assert!(!merged.auto_commit, "unset flags keep the file's value");
    let mut driver = ScriptedDriver::new(&project, vec![session()]);
    assert_eq!(run(&repo, merged, &mut driver).0.unwrap().restarts, 0);

    // A bad flag value is rejected with the fix.
    let bad = RestartOverrides {
        context_threshold: Some(-1.0),
        ..RestartOverrides::default()
    };
    let err = RestartConfig::resolve(&project, &bad)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("context_threshold is -1") && err.contains("e.g. 80"),
        "{err}"
    );
}

// 5.11
#[test]
fn restarts_are_disabled_at_threshold_100_and_at_max_restarts_0() {
    for cfg in [
        RestartConfig {
            context_threshold: 100.0,
            tool_call_threshold: 2,
            ..config()
        },
        RestartConfig {
            max_restarts: 0,
            tool_call_threshold: 2,
            ..config()
        },
    ] {
        let repo = repo();
        let mut driver = ScriptedDriver::new(
            &repo.project(),
            vec![Session::new(vec![
                turn(
                    199_000,
                    WINDOW,
                    vec![write("x.rs", "1"), write("y.rs", "2")],
                ),
                turn(199_900, WINDOW, vec![write("z.rs", "3")]),
                Step::Finish,
            ])],
        );
        let journal = driver.journal();
        let (result, events) = run(&repo, cfg.clone(), &mut driver);
        assert_eq!(result.unwrap().restarts, 0, "{cfg:?}");
        assert_eq!(driver.sessions_run(), 1);
        assert!(journal.lock().unwrap().handoff_requests.is_empty());
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, RestartEvent::Stopped { .. }))
        );
        assert!(repo.dir.path().join("z.rs").exists());
    }
}

// 5.12
#[test]
fn the_tool_call_threshold_is_a_fallback_when_usage_is_unknown() {
    let repo = repo();
    let cfg = RestartConfig {
        tool_call_threshold: 5,
        ..config()
    };
    let mut driver = ScriptedDriver::new(
        &repo.project(),
        vec![
            Session::new(vec![
                // Window 0: the provider reports no usage the estimator can use.
                turn(
                    0,
                    0,
                    vec![write("1.rs", "1"), write("2.rs", "2"), write("3.rs", "3")],
                ),
                turn(
                    0,
                    0,
                    vec![write("4.rs", "4"), write("5.rs", "5"), write("6.rs", "6")],
                ),
                turn(0, 0, vec![write("7.rs", "7")]),
            ]),
            done(),
        ],
    );
    let (result, events) = run(&repo, cfg, &mut driver);
    assert_eq!(result.unwrap().restarts, 1);
    assert!(repo.dir.path().join("6.rs").exists());
    assert!(!repo.dir.path().join("7.rs").exists());
    assert!(events.iter().any(|e| matches!(
        e,
        RestartEvent::Stopped {
            trigger: Some(RestartTrigger::ToolCalls {
                calls: 5,
                threshold: 5
            }),
            ..
        }
    )));
}

// 5.14
#[test]
fn end_to_end_restart_cycle() {
    let repo = repo();
    let project = repo.project();
    let returned = cp_orchestrate::HandoffBuilder::new(
        "main",
        cp_orchestrate::HandoffReason::ThresholdCritical,
    )
    .add_decision("the encoder mirrors the decoder")
    .add_file_modified("src/writer.rs")
    .build();
    let mut driver = ScriptedDriver::new(
        &project,
        vec![
            filling_session("src/parser.rs", 88).handoff(tool_handoff()),
            Session::new(vec![
                turn(5_000, WINDOW, vec![write("src/writer.rs", "// encoder\n")]),
                turn(175_000, WINDOW, vec![]),
            ])
            .handoff(HandoffReply::Return(returned)),
            Session::new(vec![turn(
                176_000,
                WINDOW,
                vec![write("src/tests.rs", "//\n")],
            )]),
            Session::new(vec![
                turn(3_000, WINDOW, vec![write("src/done.rs", "// done\n")]),
                Step::Finish,
            ]),
        ],
    );
    let journal = driver.journal();
    let (result, events) = run(&repo, config(), &mut driver);
    let report = result.unwrap();
    assert_eq!(report.restarts, 3);
    assert_eq!(report.handoffs.len(), 3);
    let store = HandoffStore::new(&project);
    assert_eq!(store.list().unwrap().len(), 3);
    let sources: Vec<HandoffSource> = events
        .iter()
        .filter_map(|e| match e {
            RestartEvent::Handoff { source, .. } => Some(*source),
            _ => None,
        })
        .collect();
    assert_eq!(
        sources,
        [
            HandoffSource::Agent,
            HandoffSource::Agent,
            HandoffSource::Fallback
        ]
    );
    let journal = journal.lock().unwrap();
    assert!(journal.prompts[1].contains("write the encoder"));
    assert!(journal.prompts[2].contains("the encoder mirrors the decoder"));
    // Each restart prompt carries only the latest handoff, then the original task once.
    assert!(!journal.prompts[2].contains("write the encoder"));
    assert!(journal.prompts[3].contains("src/tests.rs"));
    for prompt in &journal.prompts[1..] {
        assert_eq!(prompt.matches(PROMPT).count(), 1);
    }
    assert_eq!(git_log(&repo).len(), 5);
    assert!(repo.git(&["status", "--porcelain"]).is_empty());
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| match e {
            RestartEvent::SessionStarted { .. } => "start",
            RestartEvent::Stopped { .. } => "stop",
            RestartEvent::Handoff { .. } => "handoff",
            RestartEvent::Committed { .. } => "commit",
            RestartEvent::Restarting { .. } => "restart",
            RestartEvent::LimitExceeded { .. } => "limit",
            RestartEvent::PhaseCompleted { .. } => "done",
        })
        .collect();
    let cycle = ["start", "stop", "handoff", "commit", "restart"];
    let mut expected: Vec<&str> = cycle.repeat(3);
    expected.extend(["start", "commit", "done"]);
    assert_eq!(kinds, expected);
    // Every event has a one-line description for the status bar.
    for e in &events {
        let line = e.to_string();
        assert!(
            line.starts_with("phase impl: ") && !line.contains('\n'),
            "{line}"
        );
    }
}

#[test]
fn preflight_refuses_a_dirty_tree_unless_allowed() {
    let repo = repo();
    repo.write("src/lib.rs", "pub fn a() { dirty() }\n");
    repo.write("notes.txt", "mine\n");
    let err = RestartLoop::new(repo.project(), config())
        .preflight(&[])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("uncommitted changes (2 files: notes.txt, src/lib.rs)")
            && err.contains("--allow-dirty"),
        "{err}"
    );
    let allowed = RestartConfig {
        allow_dirty: true,
        ..config()
    };
    RestartLoop::new(repo.project(), allowed)
        .preflight(&[])
        .unwrap();
    // Without auto-commit there is nothing to sweep up.
    let manual = RestartConfig {
        auto_commit: false,
        ..config()
    };
    RestartLoop::new(repo.project(), manual)
        .preflight(&[])
        .unwrap();
    // The host's runtime files do not make a tree dirty.
    let clean = self::repo();
    clean.write(".context-pilot/state/main/session.json", "{}");
    clean.write(".context-pilot/run/console.pid", "1");
    RestartLoop::new(clean.project(), config())
        .preflight(&[])
        .unwrap();
}

#[test]
fn runtime_files_are_never_auto_committed() {
    let repo = repo();
    let mut driver = ScriptedDriver::new(
        &repo.project(),
        vec![Session::new(vec![
            turn(
                1_000,
                WINDOW,
                vec![
                    write(".context-pilot/run/consoles/1.log", "output"),
                    write("src/x.rs", "x"),
                ],
            ),
            Step::Finish,
        ])],
    );
    run(&repo, config(), &mut driver).0.unwrap();
    let files = repo.git(&["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(files.trim(), "src/x.rs");
}

/// Issue 42, item 6: a directory with a repository of its own (a vendored project, or a
/// worktree made inside the project) is never auto-committed as a gitlink.
#[test]
fn nested_repositories_and_worktrees_are_never_auto_committed() {
    let repo = repo();
    repo.write("vendor/lib/x.rs", "x");
    repo.git(&["-C", "vendor/lib", "init", "-q"]);
    repo.git(&["worktree", "add", "-q", "wt"]);
    let config = RestartConfig {
        allow_dirty: true,
        ..config()
    };
    let mut driver = ScriptedDriver::new(
        &repo.project(),
        vec![Session::new(vec![
            turn(1_000, WINDOW, vec![write("src/x.rs", "x")]),
            Step::Finish,
        ])],
    );
    run(&repo, config, &mut driver).0.unwrap();
    let files = repo.git(&["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(files.trim(), "src/x.rs");
    let index = repo.git(&["ls-files", "-s"]);
    assert!(!index.contains("160000"), "{index}");
}

#[test]
fn outside_a_repository_auto_commit_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let project = cp_base::Project::at(std::fs::canonicalize(dir.path()).unwrap());
    let err = RestartLoop::new(project.clone(), config())
        .preflight(&[])
        .unwrap_err();
    assert!(matches!(err, RestartError::NotARepository(_)), "{err}");
    assert!(
        err.to_string()
            .contains("run `git init` there or pass --no-auto-commit")
    );
    let manual = RestartConfig {
        auto_commit: false,
        ..config()
    };
    // Without auto-commit a restart works outside git: the fallback simply lists no files.
    let mut driver = ScriptedDriver::new(&project, vec![filling_session("a.rs", 90), done()]);
    let restart = RestartLoop::new(project, manual);
    restart.preflight(&[]).unwrap();
    let report = restart
        .run_phase("impl", PROMPT, &mut driver, &mut |_: &RestartEvent| {})
        .unwrap();
    assert_eq!(report.restarts, 1);
}

const NO_GIT_CHILD: &str = "CP_CHECKPOINT_TEST_NO_GIT";

/// Child mode for the test below: preflight with a `PATH` that holds no git.
#[test]
#[ignore = "helper process, started by name by the test below"]
fn no_git_child() {
    let Ok(dir) = std::env::var(NO_GIT_CHILD) else {
        return;
    };
    let project = cp_base::Project::at(dir);
    match RestartLoop::new(project, config()).preflight(&[]) {
        Ok(()) => println!("unexpected success"),
        Err(e) => println!("ERR {e}"),
    }
}

#[test]
fn without_git_auto_commit_fails_with_a_clear_error() {
    let repo = repo();
    let empty_path = tempfile::tempdir().unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "smart_restart::no_git_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(NO_GIT_CHILD, repo.root())
        .env("PATH", empty_path.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("ERR auto-commit needs git, which could not be started")
            && stdout.contains("install git or pass --no-auto-commit"),
        "{stdout}"
    );
}
