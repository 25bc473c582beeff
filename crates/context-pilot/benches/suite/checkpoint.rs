//! The stop gate on a git repository with 10,000 changed files, tests off.

use std::time::Instant;

use cp_base::{Project, WorkerId};
use cp_mod_checkpoint::StopGate;
use cp_orchestrate::{Decision, StopInput};

use super::Options;
use super::common::{many_files_project, time_git_status};
use super::stats::{Row, ms};

pub fn stop_gate(opts: &Options) -> Vec<Row> {
    let (files, rounds) = if opts.quick { (300, 3) } else { (10_000, 7) };
    let (_repo, root) = many_files_project(files);
    for i in 0..files {
        let path = root.join(format!("src/d{}/f{i}.rs", i / 100));
        std::fs::write(path, format!("// file {i}, changed\n")).unwrap();
    }
    let project = Project::at(&root);
    project.ensure_layout().unwrap();
    // The session began at HEAD and committed nothing: the usual stop.
    let base = cp_git::Git { path_env: None }.head_state(&root).unwrap();
    std::fs::write(
        root.join(".context-pilot/config.json"),
        r#"{"checkpoint": {"tests": {"command": ""}}}"#,
    )
    .unwrap();

    // Each round times the stop gate and then `git status` on the same tree, so both see
    // the same machine load; the ratio is taken per round.
    let (mut samples, mut git, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        // A fresh worker each round: a worker's second stop on unchanged files passes at
        // once, and that shortcut is not what is measured here.
        let worker = WorkerId::new(format!("bench{round}")).unwrap();
        let started = Instant::now();
        let outcome = StopGate::for_project(&project)
            .unwrap()
            .evaluate(&StopInput {
                project: project.clone(),
                worker,
                session: "bench".into(),
                gate_commits: true,
                base: Some(base.clone()),
            });
        let checkpoint = ms(started.elapsed());
        assert!(
            matches!(outcome.decision, Decision::Block { .. }),
            "{:?}",
            outcome.decision
        );
        assert!(outcome.report.files.len() >= files, "every change listed");
        assert!(outcome.report.tests.is_empty(), "tests are off");
        let status = time_git_status(&root);
        samples.push(checkpoint);
        git.push(status);
        ratios.push(checkpoint / status);
    }
    vec![
        Row::new(
            format!("stop gate: {files} changed files, tests off"),
            "ms",
            samples,
        )
        .note("git inspection, categories, fingerprint, message, saved state; `\"tests\": {\"command\": \"\"}`"),
        Row::new(
            "reference: `git status --porcelain -uall` on that repo",
            "ms",
            git,
        )
        .note("timed right after the stop gate in each round"),
        Row::new(
            "stop gate ÷ `git status` (same round)",
            "×",
            ratios,
        )
        .note("the goal is at most 1.5×"),
    ]
}
