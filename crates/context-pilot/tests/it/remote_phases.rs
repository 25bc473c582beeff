//! End to end (issue 51): workflow phases on hosts of the `hosts` configuration, reached with
//! real OpenSSH (`cp_e2e::TestHost`), each host's built-in agent talking to the scripted model
//! server with the host's own credentials. Four independent phases spread over two hosts and
//! the run's machine: each host phase's commits come back to the run's machine, which alone
//! merges them (every merge tested first, its proof naming where), and the run's branch ends
//! green. The person's key never reaches a host; nothing is left running on one.

use std::path::Path;
use std::sync::Arc;

use crate::remote_hosts::{
    SECRET, assert_nothing_left_on, assert_the_key_never_reached, record_with, run_with_hosts,
    trust_clone_on,
};
use crate::util::agent_run::shown;
use crate::util::merge_queue::{
    SEMANTIC, assert_every_commit_green, feature_calls, feature_fix, rename_calls, semantic_project,
};
use crate::util::phase_runs::{PATIENCE, command};
use crate::util::phases::{Script, Seen, run_record, serve_back, write};
use cp_e2e::{LlmServer, TestHost, git};
use serde_json::json;

/// Four phases from the start: `one` on host-a, `two` on host-b, `three` here (`local`),
/// `four` wherever a slot is free (host-a: the host with the most free slots, first listed).
const SPREAD: &str = "\
name: spread
phases:
  - id: one
    depends_on: []
    host: host-a
    prompt: PHASE-one-MARK Add one.py with its test.
  - id: two
    depends_on: []
    host: host-b
    prompt: PHASE-two-MARK Add two.py with its test.
  - id: three
    depends_on: []
    host: local
    prompt: PHASE-three-MARK Add three.py with its test.
  - id: four
    depends_on: []
    prompt: PHASE-four-MARK Add four.py with its test.
";

/// What phase `name`'s agent writes: a module and its test.
fn module_calls(name: &'static str) -> Vec<crate::util::phases::Call> {
    vec![
        write(
            &format!("{name}.py"),
            &format!("def value():\n    return {name:?}\n"),
        ),
        write(
            &format!("test_{name}.py"),
            &format!(
                "import unittest\n\nimport {name}\n\n\nclass Test(unittest.TestCase):\n    \
                 def test_value(self):\n        self.assertEqual({name}.value(), {name:?})\n"
            ),
        ),
    ]
}

/// Makes `host` ready for phases of the run talking to `server`: its `context-pilot` (a
/// recording wrapper) has credentials of the host's own, and git an identity named after it.
fn credentials_on(host: &TestHost, server: &LlmServer) {
    record_with(
        host,
        &format!(
            "export ANTHROPIC_BASE_URL={}\nexport ANTHROPIC_API_KEY=key-of-{}\n",
            server.url_at(host.near()),
            host.alias()
        ),
    );
    std::fs::write(
        host.home().join(".gitconfig"),
        format!(
            "[user]\n\tname = {0}\n\temail = {0}@hosts.test\n",
            host.alias()
        ),
    )
    .unwrap();
}

/// Who wrote the commits (merges aside) that the merge `merge` brought into the run's branch.
fn authors_of(root: &Path, merge: &str) -> String {
    git(
        root,
        &[
            "log",
            "--no-merges",
            "--format=%an",
            &format!("{merge}^1..{merge}^2"),
        ],
    )
}

/// The merge of phase `phase` on the run's branch, with its git note.
fn merge_of(root: &Path, phase: &str, shown: &str) -> (String, String) {
    let record = run_record(root).unwrap();
    let merge = record["phase_runs"][phase]["proof"]["commit"]
        .as_str()
        .unwrap_or_else(|| panic!("no proof for {phase}: {record:#}\n{shown}"))
        .to_owned();
    let note = git(
        root,
        &["log", "-1", "--notes=context-pilot", "--format=%N", &merge],
    );
    (merge, note)
}

/// The clone of the project at `root` on `host` keeps nothing of the run: no branch, no
/// phase's ref, no worktree.
fn assert_clone_keeps_nothing(host: &TestHost, root: &Path) {
    let clone = host
        .home()
        .join(".local/share/context-pilot/remote")
        .join(cp_remote::project_key(root));
    let clone = clone.display().to_string();
    let on_host = |args: &[&str]| {
        let out = host.ssh(&[&["git", "-C", clone.as_str()], args].concat());
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let refs = on_host(&["for-each-ref", "refs/heads", "refs/context-pilot"]);
    assert!(refs.trim().is_empty(), "{}: {refs}", host.alias());
    let trees = on_host(&["worktree", "list"]);
    assert_eq!(trees.lines().count(), 1, "{}: {trees}", host.alias());
}

#[test]
fn four_phases_spread_over_two_hosts_and_here_land_green_each_merge_proof_naming_its_host() {
    if !TestHost::can_start() {
        return;
    }
    let host_a = TestHost::start("host-a");
    let host_b = TestHost::start("host-b");
    let server = LlmServer::start_for_hosts().unwrap();
    credentials_on(&host_a, &server);
    credentials_on(&host_b, &server);
    let ssh = tempfile::tempdir().unwrap();
    let ssh_config = cp_e2e::hosts::ssh_config(ssh.path(), &[&host_a, &host_b]);
    let (_repo, root) = semantic_project(
        SPREAD,
        json!({"hosts": [{"ssh": "host-a", "slots": 2}, {"ssh": "host-b", "slots": 2}]}),
        &[],
    );
    // Each host refuses the project until its user trusts it there.
    for host in [&host_a, &host_b] {
        let (code, refused) = run_with_hosts(&root, &ssh_config);
        assert_ne!(code, Some(0), "{refused}");
        assert!(
            refused.contains(&format!("host {} refused the project", host.alias())),
            "{refused}"
        );
        trust_clone_on(host, &root);
    }
    let start = git(&root, &["rev-parse", "HEAD"]).trim().to_owned();

    serve_back(
        &server,
        Script {
            phases: vec![
                ("one", module_calls("one")),
                ("two", module_calls("two")),
                ("three", module_calls("three")),
                ("four", module_calls("four")),
            ],
        },
        Vec::new(),
        Arc::new(Seen::default()),
        None,
        Arc::default(),
    );
    let out = command(&root, &server, &[".context-pilot/workflows/wf.yaml"])
        .env(cp_remote::SSH_CONFIG_ENV, &ssh_config)
        .env("ANTHROPIC_API_KEY", SECRET)
        .output()
        .unwrap();
    let shown = shown(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");

    // Where each phase ran: its headless lines say it, and its commits are by that host's
    // git identity (the run's machine's for the phase that ran here).
    for (phase, host) in [("one", "host-a"), ("two", "host-b"), ("four", "host-a")] {
        assert!(
            shown.contains(&format!("[{phase}@{host}]   started on host {host} from "))
                && shown.contains("ms)"),
            "{phase}: {shown}"
        );
        let (merge, _) = merge_of(&root, phase, &shown);
        let authors = authors_of(&root, &merge);
        assert!(
            !authors.trim().is_empty() && authors.lines().all(|a| a == host),
            "{phase}: {authors}"
        );
    }
    assert!(!shown.contains("[three@"), "{shown}");
    let (merge, _) = merge_of(&root, "three", &shown);
    assert!(
        !authors_of(&root, &merge).contains("host-"),
        "three ran here"
    );

    // Only the run's machine merged: four merges, every commit on the branch green, each
    // proof's note naming where its test ran.
    assert_eq!(
        assert_every_commit_green(&root, &start, &shown),
        4,
        "{shown}"
    );
    for phase in ["one", "two", "three", "four"] {
        let (_, note) = merge_of(&root, phase, &shown);
        assert!(
            note.contains("tested on host ") || note.contains("tested on the run's machine, "),
            "{phase}: {note}"
        );
        let record = run_record(&root).unwrap();
        assert_eq!(
            record["phase_runs"][phase]["proof"]["outcome"], "passed",
            "{record:#}"
        );
    }
    for file in ["one.py", "two.py", "three.py", "four.py"] {
        assert!(root.join(file).exists(), "{file}: {shown}");
    }

    for host in [&host_a, &host_b] {
        assert_the_key_never_reached(host);
        assert_nothing_left_on(host);
        assert_clone_keeps_nothing(host, &root);
    }
}

/// Two phases from the start: `one` on the host `doomed`, `two` here.
const DOOMED: &str = "\
name: doomed
phases:
  - id: one
    depends_on: []
    host: doomed
    prompt: PHASE-one-MARK Add one.py with its test.
  - id: two
    depends_on: []
    host: local
    prompt: PHASE-two-MARK Add two.py with its test.
";

/// A host killed while its phase runs (its sshd and every process of it ended): the run waits
/// its `reconnect_secs` for it, leaves it out, and the phase starts again on the run's machine
/// from the last commit it sent back; the run ends green with the phase's work merged.
#[test]
fn a_host_killed_mid_phase_hands_the_phase_to_the_runs_machine_which_finishes_it() {
    if !TestHost::can_start() {
        return;
    }
    let mut doomed = TestHost::start("doomed");
    let server = LlmServer::start_for_hosts().unwrap();
    credentials_on(&doomed, &server);
    let ssh = tempfile::tempdir().unwrap();
    let ssh_config = cp_e2e::hosts::ssh_config(ssh.path(), &[&doomed]);
    let (_repo, root) = semantic_project(
        DOOMED,
        json!({"hosts": [{"ssh": "doomed", "reconnect_secs": 1}]}),
        &[],
    );
    let (code, refused) = run_with_hosts(&root, &ssh_config);
    assert_ne!(code, Some(0), "{refused}");
    trust_clone_on(&doomed, &root);

    // `one`'s agent hangs once its tools ran, until the host is gone.
    let seen = Arc::new(Seen::default());
    let stall: crate::util::phases::Stall = Arc::new(std::sync::Mutex::new(Some("one")));
    serve_back(
        &server,
        Script {
            phases: vec![("one", module_calls("one")), ("two", module_calls("two"))],
        },
        Vec::new(),
        Arc::clone(&seen),
        None,
        Arc::clone(&stall),
    );
    let child = command(&root, &server, &[".context-pilot/workflows/wf.yaml"])
        .env(cp_remote::SSH_CONFIG_ENV, &ssh_config)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    assert!(
        seen.wait_requests("one", 2, PATIENCE),
        "one's agent on the host called its tools"
    );
    *stall.lock().unwrap() = None;
    doomed.kill();
    let out = child.wait_with_output().unwrap();
    let shown = shown(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    assert!(shown.contains("[one@doomed]"), "{shown}");
    assert!(
        shown.contains("host doomed takes no more phases in this run, and phase one starts again"),
        "{shown}"
    );
    // It started again here, told that it had stopped elsewhere; its work was merged.
    assert!(
        seen.bodies("one")
            .iter()
            .any(|b| b.contains("stopped on another machine")),
        "{shown}"
    );
    let (merge, _) = merge_of(&root, "one", &shown);
    let authors = authors_of(&root, &merge);
    assert!(
        !authors.trim().is_empty() && !authors.contains("doomed"),
        "{authors}"
    );
    for file in ["one.py", "two.py"] {
        assert!(root.join(file).exists(), "{file}: {shown}");
    }
    let record = run_record(&root).unwrap();
    assert_eq!(record["verdict"]["outcome"], "passed", "{record:#}");
}

/// The semantic conflict of the merge queue's tests between two phases on two hosts: each
/// branch is green alone, merged together they are red. The merge test finds it, and feature
/// goes back to work (on a host again) from its branch with the run's branch merged in; the
/// run ends green, every commit on its branch green.
#[test]
fn a_semantic_conflict_between_two_host_phases_goes_back_to_the_phase_that_made_it() {
    if !TestHost::can_start() {
        return;
    }
    let host_a = TestHost::start("host-a");
    let host_b = TestHost::start("host-b");
    let server = LlmServer::start_for_hosts().unwrap();
    credentials_on(&host_a, &server);
    credentials_on(&host_b, &server);
    let ssh = tempfile::tempdir().unwrap();
    let ssh_config = cp_e2e::hosts::ssh_config(ssh.path(), &[&host_a, &host_b]);
    let (_repo, root) = semantic_project(
        SEMANTIC,
        json!({"hosts": [{"ssh": "host-a"}, {"ssh": "host-b"}]}),
        &[],
    );
    for host in [&host_a, &host_b] {
        let (code, refused) = run_with_hosts(&root, &ssh_config);
        assert_ne!(code, Some(0), "{refused}");
        trust_clone_on(host, &root);
    }
    let start = git(&root, &["rev-parse", "HEAD"]).trim().to_owned();
    serve_back(
        &server,
        Script {
            phases: vec![
                ("rename", rename_calls()),
                ("feature", feature_calls(false)),
            ],
        },
        vec![("feature", feature_fix())],
        Arc::new(Seen::default()),
        None,
        Arc::default(),
    );
    let out = command(&root, &server, &[".context-pilot/workflows/wf.yaml"])
        .env(cp_remote::SSH_CONFIG_ENV, &ssh_config)
        .output()
        .unwrap();
    let shown = shown(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    assert!(
        shown.contains("[rename@host-a]   started on host host-a"),
        "{shown}"
    );
    assert!(
        shown.contains("[feature@host-b]   started on host host-b"),
        "{shown}"
    );
    assert!(
        shown.contains("phase feature: sent back (try 1 of 2)"),
        "{shown}"
    );
    // Its second try ran on a host too.
    let tries = shown
        .lines()
        .filter(|l| l.starts_with("[feature@host-") && l.contains("started on host"))
        .count();
    assert_eq!(tries, 2, "{shown}");
    assert_eq!(
        assert_every_commit_green(&root, &start, &shown),
        2,
        "{shown}"
    );
    for phase in ["rename", "feature"] {
        let (merge, _) = merge_of(&root, phase, &shown);
        let authors = authors_of(&root, &merge);
        assert!(
            !authors.trim().is_empty() && authors.lines().all(|a| a.starts_with("host-")),
            "{phase}: {authors}"
        );
    }
    let lib = git(&root, &["show", "HEAD:feature.py"]);
    assert!(lib.contains("lib.hello"), "{lib}");
    for host in [&host_a, &host_b] {
        assert_nothing_left_on(host);
        assert_clone_keeps_nothing(host, &root);
    }
}
