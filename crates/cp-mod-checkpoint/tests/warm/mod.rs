//! Warm runs against real repositories: the warm run itself ([`warm_run`], as the
//! `context-pilot warm-run` console runs it) and the stop that follows. The console side (an
//! edit starting it, a new edit ending it, a stop waiting for it) is tested with the real
//! binary in context-pilot's `tests/warm_hooks.rs` and, with real Claude Code, `tests/warm_runs.rs`.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use cp_base::{Project, WorkerId};
use cp_mod_checkpoint::{StopGateConfig, WarmNews, WarmPhase, WarmUse, current_warm_run, warm_run};

use crate::util::{Repo, Suite, preset, reason, stop, stop_in};

const CORE: &str = "src/app/core.py";

/// A repository whose suite passes only when `src/app/core.py` returns what
/// `tests/unit/test_core.py` expects, both read at run time: its verdict is the tree's.
struct Scene {
    repo: Repo,
    suite: Suite,
    project: Project,
    config: StopGateConfig,
    _config_home: tempfile::TempDir,
}

impl Scene {
    fn new(warm: bool) -> Self {
        let repo = Repo::with_commit(&[
            (CORE, "def run():\n    return 1\n"),
            ("tests/unit/test_core.py", "EXPECTED = 2\n"),
            (".gitignore", "__pycache__/\n"),
        ]);
        let suite = Suite::new();
        let command = suite.script(
            "want=$(sed -n 's/EXPECTED = //p' tests/unit/test_core.py)\n\
             if grep -q \"return $want\" src/app/core.py; then\n\
               echo '1 passed in 0.01s'; exit 0\n\
             else\n\
               echo \"FAILED tests/unit/test_core.py::test_run - assert run() == $want\"\n\
               echo '1 failed in 0.01s'; exit 1\n\
             fi",
        );
        let mut config = preset(&command, 30);
        config.warm.enabled = warm;
        config.warm.quiet_ms = 20;
        std::fs::create_dir_all(repo.root().join(".context-pilot")).unwrap();
        std::fs::write(
            repo.root().join(".context-pilot/config.json"),
            serde_json::json!({ "checkpoint": config }).to_string(),
        )
        .unwrap();
        repo.commit_all("config");
        let config_home = tempfile::tempdir().unwrap();
        let project = Project::at(repo.root()).with_trust_store(cp_base::TrustStore::at(
            config_home.path().join("context-pilot/trust.json"),
        ));
        project.grant_trust().unwrap();
        Self {
            repo,
            suite,
            project,
            config,
            _config_home: config_home,
        }
    }

    /// The warm run an edit of worker `w1` asked for just now, to its end.
    fn warm(&self) {
        warm_run(
            &self.project,
            &WorkerId::new("w1").unwrap(),
            "File_edit src/app/core.py",
            cp_base::now_ms(),
            &|_| {},
        )
        .unwrap();
    }

    fn phase(&self) -> WarmPhase {
        current_warm_run(&self.project).unwrap().phase
    }

    fn stop_in(&self, session: &str) -> cp_mod_checkpoint::StopOutcome {
        let gate = self.repo.checkpoint(&self.project, self.config.clone());
        stop_in(&gate, &self.project, session)
    }
}

fn warm_use(outcome: &cp_mod_checkpoint::StopOutcome) -> Option<WarmUse> {
    outcome.report.tests.first().and_then(|t| t.warm.clone())
}

#[test]
fn a_finished_warm_run_of_this_very_tree_is_the_verdict_and_the_suite_does_not_run_again() {
    let scene = Scene::new(true);
    scene.repo.write(CORE, "def run():\n    return 2\n");
    scene.warm();
    assert!(
        matches!(scene.phase(), WarmPhase::Done { passed: true, .. }),
        "{:?}",
        scene.phase()
    );
    assert_eq!(scene.suite.runs(), 1);

    let outcome = scene.stop_in("s1");
    let msg = reason(&outcome);
    assert!(msg.contains("Tests passed: 1 passed"), "{msg}");
    assert!(msg.contains("A warm run tested this very tree"), "{msg}");
    assert!(
        matches!(warm_use(&outcome), Some(WarmUse::Reused { .. })),
        "{outcome:?}"
    );
    assert_eq!(scene.suite.runs(), 1, "the stop ran the suite again");
    assert!(current_warm_run(&scene.project).unwrap().used.is_some());
}

/// The figure "a changed tree always gets the new tree's verdict": after each warm run the
/// tree changes without any edit event (the person's editor, a shell) and at once the agent
/// stops; the verdict must be the new tree's every time. With a verdict keyed by anything less
/// than the tree, a green warm verdict would be repeated for the red tree.
#[test]
fn a_tree_changed_after_the_warm_run_gets_its_own_verdict_every_time() {
    let scene = Scene::new(true);
    for (i, (warmed, stopped)) in [("return 2", "return 3"), ("return 3", "return 2")]
        .into_iter()
        .cycle()
        .take(6)
        .enumerate()
    {
        scene
            .repo
            .write(CORE, &format!("def run():\n    {warmed}\n"));
        scene.warm();
        // Same size, same second: only the content differs.
        scene
            .repo
            .write(CORE, &format!("def run():\n    {stopped}\n"));
        let outcome = scene.stop_in(&format!("s{i}"));
        let tests = outcome.report.tests.first().unwrap();
        assert_eq!(
            tests.passed,
            stopped == "return 2",
            "round {i}: the verdict of the warm run's tree was used for another: {outcome:?}"
        );
        assert_eq!(tests.warm, None, "round {i}");
        assert_eq!(scene.suite.runs(), 2 * (i + 1), "round {i}");
    }
}

#[test]
fn another_commit_under_the_same_uncommitted_file_is_another_tree() {
    let scene = Scene::new(true);
    // A branch whose test expects 3: checking it out keeps the uncommitted core.py as it is
    // and changes no listed file, only HEAD.
    scene.repo.git(&["checkout", "-q", "-b", "expects-3"]);
    scene
        .repo
        .write("tests/unit/test_core.py", "EXPECTED = 3\n");
    scene.repo.commit_all("expect 3");
    scene.repo.git(&["checkout", "-q", "-"]);
    scene.repo.write(CORE, "def run():\n    return 2\n");
    scene.warm();
    assert!(matches!(
        scene.phase(),
        WarmPhase::Done { passed: true, .. }
    ));
    scene.repo.git(&["checkout", "-q", "expects-3"]);
    let outcome = scene.stop_in("s1");
    assert!(reason(&outcome).contains("FAILED"), "{outcome:?}");
    assert_eq!(warm_use(&outcome), None);
    assert_eq!(scene.suite.runs(), 2);
}

#[test]
fn another_environment_is_another_key() {
    let scene = Scene::new(true);
    scene.repo.write(CORE, "def run():\n    return 2\n");
    scene.warm();
    let path = format!("/usr/bin:/bin:{}", scene.suite.dir.path().display());
    let gate = scene
        .repo
        .checkpoint(&scene.project, scene.config.clone())
        .with_path_env(path);
    let outcome = stop(&gate, &scene.project);
    assert_eq!(warm_use(&outcome), None, "{outcome:?}");
    assert_eq!(scene.suite.runs(), 2);
}

#[test]
fn a_change_while_the_warm_run_tests_is_no_verdict_and_the_settled_tree_is_tested_again() {
    let scene = Scene::new(true);
    // The suite (the same script, rewritten) says it started, then waits for the test to let
    // it go on.
    let started = scene.suite.path("started");
    let go = scene.suite.path("go");
    scene.suite.script(&format!(
        "touch '{started}'\nwhile [ ! -e '{go}' ]; do sleep 0.02; done\n\
         if grep -q 'return 2' src/app/core.py; then echo '1 passed in 0.01s'; exit 0; fi\n\
         echo 'FAILED tests/unit/test_core.py::test_run'; echo '1 failed in 0.01s'; exit 1",
        started = started.display(),
        go = go.display()
    ));
    scene.repo.write(CORE, "def run():\n    return 2\n");
    let project = scene.project.clone();
    let told = std::sync::Mutex::new(Vec::new());
    let warm = std::thread::scope(|s| {
        let told = &told;
        let warm = s.spawn(move || {
            warm_run(
                &project,
                &WorkerId::new("w1").unwrap(),
                "File_edit src/app/core.py",
                cp_base::now_ms(),
                &|news| told.lock().unwrap().push(news.clone()),
            )
        });
        cp_e2e::eventually("the warm run's suite to start", crate::util::SOON, || {
            started.exists()
        });
        scene.repo.write(CORE, "def run():\n    return 3\n");
        std::fs::write(&go, "").unwrap();
        warm.join().unwrap()
    });
    warm.unwrap();
    // The first run saw a tree that changed under it; the second tested the settled one.
    assert_eq!(scene.suite.runs(), 2);
    let told = told.into_inner().unwrap();
    assert_eq!(
        told.iter().filter(|n| **n == WarmNews::Again).count(),
        1,
        "{told:?}"
    );
    assert!(
        matches!(told.last(), Some(WarmNews::Done { passed: false, .. })),
        "{told:?}"
    );
    assert!(
        matches!(scene.phase(), WarmPhase::Done { passed: false, .. }),
        "{:?}",
        scene.phase()
    );
    let outcome = scene.stop_in("s1");
    assert!(reason(&outcome).contains("FAILED"), "{outcome:?}");
    assert!(matches!(warm_use(&outcome), Some(WarmUse::Reused { .. })));
    assert_eq!(scene.suite.runs(), 2);
}

#[test]
fn a_warm_run_asked_for_before_a_stop_is_not_wanted_after_it() {
    let scene = Scene::new(true);
    scene.repo.write(CORE, "def run():\n    return 2\n");
    // Asked for a millisecond before the stop, which records its own time (`now_ms`) after.
    let asked = cp_base::now_ms() - 1;
    let outcome = scene.stop_in("s1");
    assert!(reason(&outcome).contains("Tests passed"), "{outcome:?}");
    assert_eq!(scene.suite.runs(), 1);
    warm_run(
        &scene.project,
        &WorkerId::new("w1").unwrap(),
        "File_edit src/app/core.py",
        asked,
        &|news| assert!(matches!(news, WarmNews::Superseded { .. }), "{news:?}"),
    )
    .unwrap();
    assert_eq!(scene.suite.runs(), 1, "the warm run ran after the stop");
}

#[test]
fn a_red_verdict_is_used_once_and_a_later_stop_runs_the_tests_again() {
    let scene = Scene::new(true);
    scene.repo.write(CORE, "def run():\n    return 9\n");
    scene.warm();
    let first = scene.stop_in("s1");
    assert!(reason(&first).contains("FAILED"), "{first:?}");
    assert!(matches!(warm_use(&first), Some(WarmUse::Reused { .. })));
    assert_eq!(scene.suite.runs(), 1);
    // Red tests run again at the next stop (a flaky test may pass): not the same verdict
    // over and over.
    let second = scene.stop_in("s1");
    assert!(reason(&second).contains("FAILED"), "{second:?}");
    assert_eq!(warm_use(&second), None);
    assert_eq!(scene.suite.runs(), 2);
}

#[test]
fn with_warm_runs_off_nothing_runs_in_the_background() {
    let scene = Scene::new(false);
    scene.repo.write(CORE, "def run():\n    return 2\n");
    scene.warm();
    assert_eq!(scene.suite.runs(), 0);
    assert!(current_warm_run(&scene.project).is_none());
    let outcome = scene.stop_in("s1");
    assert!(reason(&outcome).contains("Tests passed"), "{outcome:?}");
    assert_eq!(warm_use(&outcome), None);
    assert_eq!(scene.suite.runs(), 1);
}

#[test]
fn only_documentation_changed_nothing_to_run() {
    let scene = Scene::new(true);
    scene.repo.write("docs/guide.md", "# guide\n");
    scene.warm();
    assert!(
        matches!(scene.phase(), WarmPhase::Skipped { .. }),
        "{:?}",
        scene.phase()
    );
    assert_eq!(scene.suite.runs(), 0);
}
