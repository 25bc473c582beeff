//! End to end (issue 51): the merge queue's tests on a host of the `hosts` configuration,
//! reached with real OpenSSH (`cp_e2e::TestHost`: a network namespace running sshd as an
//! ordinary user). The semantic conflict of `workflow_merge_queue.rs` is found by a test on
//! the host and goes back to the phase that made it; every proof names the host and the tree
//! it checked out; only the run's machine moves the branch. A project the host's user has not
//! trusted is refused before the run starts, with the reason. The person's API key never
//! reaches the host: neither the environment of anything started there, nor the bytes it
//! was sent, hold it. Nothing is left running on the host after the run.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::sync::Arc;

use crate::util::agent_run::shown;
use crate::util::merge_queue::{
    SEMANTIC, assert_every_commit_green, assert_proof, feature_calls, feature_fix, rename_calls,
    semantic_project,
};
use crate::util::phase_runs::{PATIENCE, command};
use crate::util::phases::{Script, Seen, run_record, serve_back};
use cp_e2e::{LlmServer, TestHost, git};
use serde_json::json;

/// A key shaped like the person's: it must never be seen on the host.
pub(crate) const SECRET: &str = "sk-ant-api03-PERSONAL-KEY-never-leaves-this-machine";

/// Puts a wrapper first on the host's `PATH`: each `context-pilot` started there writes its
/// environment and appends what it reads on standard input to files in the host's HOME.
fn record_on(host: &TestHost) {
    record_with(host, "");
}

/// [`record_on`], the wrapper running `setup` (shell lines: the host's own settings, such as
/// its credentials) after it wrote the environment it was given.
pub(crate) fn record_with(host: &TestHost, setup: &str) {
    let wrapper = host.bin().join("context-pilot");
    std::fs::remove_file(&wrapper).unwrap();
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nenv > \"$HOME/env.$$\"\n{setup}tee -a \"$HOME/sent.bin\" | {} \"$@\"\n",
            cp_e2e::binary_path().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let owner = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(host.home()).unwrap());
    std::process::Command::new("chown")
        .arg(owner.to_string())
        .arg(&wrapper)
        .status()
        .unwrap();
}

/// Each landed merge was tested on the host, on the candidate's own tree, and its proof and
/// note say so.
fn assert_tested_on_the_host(root: &std::path::Path, start: &str, shown: &str) {
    let record = run_record(root).unwrap();
    assert_eq!(assert_every_commit_green(root, start, shown), 2, "{shown}");
    for phase in ["rename", "feature"] {
        let merge = assert_proof(root, phase, shown);
        let proof = &record["phase_runs"][phase]["proof"];
        assert_eq!(proof["host"]["host"], "host-a", "{record:#}");
        assert_eq!(proof["host"]["tree"], proof["tree"], "{record:#}");
        assert!(proof["host"]["transfer_ms"].is_u64(), "{record:#}");
        let note = git(
            root,
            &["log", "-1", "--notes=context-pilot", "--format=%N", &merge],
        );
        assert!(note.contains("tested on host host-a"), "{note}");
    }
}

/// On the wire: what was started on `host`, and what it read, never held the key; nor the
/// run's own folders (the run has `XDG_CONFIG_HOME` set, and the host's ssh configuration
/// entry sends every variable): the host reads its trust and its clone from its own.
pub(crate) fn assert_the_key_never_reached(host: &TestHost) {
    let mut envs = 0;
    let run_config = cp_e2e::config_home().display().to_string();
    for entry in std::fs::read_dir(host.home()).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("env.") {
            envs += 1;
            let env = std::fs::read_to_string(entry.path()).unwrap();
            assert!(!env.contains(SECRET), "{name}: {env}");
            assert!(!env.contains("ANTHROPIC"), "{name}: {env}");
            assert!(!env.contains(&run_config), "{name}: {env}");
            assert!(!env.contains("XDG_"), "{name}: {env}");
        }
    }
    assert!(envs >= 4, "the wrapper ran {envs} times");
    let sent = std::fs::read(host.home().join("sent.bin")).unwrap();
    assert!(sent.len() > 100, "{} bytes sent", sent.len());
    assert!(
        !sent.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()),
        "the key was sent"
    );
}

#[test]
fn merge_tests_run_on_a_host_the_proof_names_it_and_the_key_stays_here() {
    if !TestHost::can_start() {
        return;
    }
    let host = TestHost::start("host-a");
    record_on(&host);
    let ssh = tempfile::tempdir().unwrap();
    let ssh_config = cp_e2e::hosts::ssh_config(ssh.path(), &[&host]);
    let (_repo, root) = semantic_project(
        SEMANTIC,
        json!({"hosts": [{"ssh": "host-a", "slots": 2}]}),
        &[],
    );
    let start = git(&root, &["rev-parse", "HEAD"]).trim().to_owned();
    let server = LlmServer::start().unwrap();
    let run = || {
        let out = command(&root, &server, &[".context-pilot/workflows/wf.yaml"])
            .env(cp_remote::SSH_CONFIG_ENV, &ssh_config)
            .env("ANTHROPIC_API_KEY", SECRET)
            .output()
            .unwrap();
        (out.status.code(), shown(&out))
    };

    // Not trusted there yet: refused before anything starts, saying why and what to do.
    let (code, shown_first) = run();
    assert_ne!(code, Some(0), "{shown_first}");
    assert!(
        shown_first.contains("host host-a refused the project")
            && shown_first.contains("not trusted")
            && shown_first.contains("context-pilot trust"),
        "{shown_first}"
    );
    assert!(
        run_record(&root).is_none(),
        "nothing started: {shown_first}"
    );

    // The host's user trusts its clone, as a person would after reviewing it.
    let clone = host
        .home()
        .join(".local/share/context-pilot/remote")
        .join(cp_remote::project_key(&root));
    let clone_text = clone.display().to_string();
    let out = host.ssh(&["cd", &clone_text, "&&", "context-pilot", "trust"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

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
    // The run's only key is SECRET: its model turns below were made with it.
    let (code, shown) = run();
    assert_eq!(code, Some(0), "{shown}");

    // The host has no credentials for an agent of its own: it refused the phases, which ran
    // here.
    assert!(
        shown.contains("host host-a refused the phase: it cannot start the phase's agent there")
            && shown.contains("runs here"),
        "{shown}"
    );
    // The failure found on the host went back to feature's agent.
    assert!(
        shown.contains("phase feature: sent back (try 1 of 2)"),
        "{shown}"
    );
    let record = run_record(&root).unwrap();
    let red = &record["phase_runs"]["feature"]["red_merges"][0];
    assert_eq!(red["outcome"], "failed", "{record:#}");
    assert_eq!(red["host"]["host"], "host-a", "{record:#}");
    assert!(
        red["runs"][0]["tail"].as_array().is_some_and(|t| t
            .iter()
            .any(|l| l.as_str().unwrap().contains("AttributeError"))),
        "{record:#}"
    );

    assert_tested_on_the_host(&root, &start, &shown);
    // Only the run's machine moved the branch: the host's clone has no branch of the run.
    let branches = host.ssh(&[
        "git",
        "-C",
        &clone_text,
        "for-each-ref",
        "refs/heads",
        "refs/context-pilot",
    ]);
    assert!(
        String::from_utf8_lossy(&branches.stdout).trim().is_empty(),
        "{}",
        String::from_utf8_lossy(&branches.stdout)
    );

    assert_the_key_never_reached(&host);
    assert_nothing_left_on(&host);
}

/// Nothing runs on `host` but its sshd (an ssh session that just ended may take a moment to
/// exit; a process of the run would stay).
pub(crate) fn assert_nothing_left_on(host: &TestHost) {
    cp_e2e::eventually_with(
        "nothing left running on the host",
        std::time::Duration::from_secs(10),
        || host.leftovers().is_empty(),
        || format!("{:?}", host.leftovers()),
    );
}

/// `context-pilot run` of the semantic workflow with `hosts` as its only host, the ssh
/// configuration of `hosts`; its exit code and output.
pub(crate) fn run_with_hosts(
    root: &std::path::Path,
    ssh_config: &std::path::Path,
) -> (Option<i32>, String) {
    let server = LlmServer::start().unwrap();
    let out = command(root, &server, &[".context-pilot/workflows/wf.yaml"])
        .env(cp_remote::SSH_CONFIG_ENV, ssh_config)
        .output()
        .unwrap();
    (out.status.code(), shown(&out))
}

#[test]
fn a_host_that_does_not_answer_or_lacks_context_pilot_stops_the_run_before_it_starts() {
    if !TestHost::can_start() {
        return;
    }
    let bare = TestHost::start("bare");
    std::fs::remove_file(bare.bin().join("context-pilot")).unwrap();
    let mut gone = TestHost::start("gone");
    let ssh = tempfile::tempdir().unwrap();
    let ssh_config = cp_e2e::hosts::ssh_config(ssh.path(), &[&bare, &gone]);
    gone.kill();

    let (_repo, root) = semantic_project(SEMANTIC, json!({"hosts": [{"ssh": "bare"}]}), &[]);
    let (code, shown) = run_with_hosts(&root, &ssh_config);
    assert_ne!(code, Some(0), "{shown}");
    assert!(
        shown.contains("host bare lacks context-pilot on its PATH"),
        "{shown}"
    );
    assert!(run_record(&root).is_none(), "nothing started: {shown}");

    let (_repo, root) = semantic_project(SEMANTIC, json!({"hosts": [{"ssh": "gone"}]}), &[]);
    let (code, shown) = run_with_hosts(&root, &ssh_config);
    assert_ne!(code, Some(0), "{shown}");
    assert!(
        shown.contains("host gone does not answer over ssh"),
        "{shown}"
    );
    assert!(run_record(&root).is_none(), "nothing started: {shown}");

    // A bad entry is refused like any other configuration, naming the host.
    let (_repo, root) = semantic_project(
        SEMANTIC,
        json!({"hosts": [{"ssh": "-oProxyCommand=touch /tmp/x", "slots": 1}]}),
        &[],
    );
    let (code, shown) = run_with_hosts(&root, &ssh_config);
    assert_ne!(code, Some(0), "{shown}");
    assert!(shown.contains("starts with '-'"), "{shown}");
    assert_nothing_left_on(&bare);
}

/// A host without git (its `PATH` holds `context-pilot` only) stops the run before it
/// starts, naming the host and what to install there.
#[test]
fn a_host_without_git_stops_the_run_before_it_starts_saying_what_to_install() {
    if !TestHost::can_start() {
        return;
    }
    let host = TestHost::start_bare("nogit");
    let ssh = tempfile::tempdir().unwrap();
    let ssh_config = cp_e2e::hosts::ssh_config(ssh.path(), &[&host]);
    let (_repo, root) = semantic_project(SEMANTIC, json!({"hosts": [{"ssh": "nogit"}]}), &[]);
    let (code, shown) = run_with_hosts(&root, &ssh_config);
    assert_ne!(code, Some(0), "{shown}");
    assert!(
        shown.contains("host nogit lacks git on its PATH") && shown.contains("install git there"),
        "{shown}"
    );
    assert!(run_record(&root).is_none(), "nothing started: {shown}");
    assert_nothing_left_on(&host);
}

/// A host that does not let the run's key in, or whose key this machine does not know,
/// stops the run before it starts, saying which and what to do (ssh's own words with it).
#[test]
fn a_host_that_refuses_the_key_or_whose_key_is_unknown_stops_the_run_saying_what_to_do() {
    if !TestHost::can_start() {
        return;
    }
    let host = TestHost::start("strict");
    let ssh = tempfile::tempdir().unwrap();
    let entry = host.ssh_config_entry();
    let with_line = |key: &str, value: &str| {
        entry
            .lines()
            .map(|l| {
                if l.trim_start().starts_with(key) {
                    format!("  {key} {value}")
                } else {
                    l.to_owned()
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let other_key = ssh.path().join("other_key");
    let made = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&other_key)
        .status()
        .unwrap();
    assert!(made.success());
    let no_hosts = ssh.path().join("known_hosts");
    std::fs::write(&no_hosts, "").unwrap();
    for (config, expected) in [
        (
            with_line("IdentityFile", &other_key.display().to_string()),
            "host strict refused the login over ssh",
        ),
        (
            with_line("UserKnownHostsFile", &no_hosts.display().to_string()),
            "host strict was not let in because its key is not one this machine knows",
        ),
    ] {
        let path = ssh.path().join("ssh_config");
        std::fs::write(&path, config).unwrap();
        let (_repo, root) = semantic_project(SEMANTIC, json!({"hosts": [{"ssh": "strict"}]}), &[]);
        let (code, shown) = run_with_hosts(&root, &path);
        assert_ne!(code, Some(0), "{shown}");
        assert!(shown.contains(expected), "{shown}");
        assert!(run_record(&root).is_none(), "nothing started: {shown}");
    }
    assert_nothing_left_on(&host);
}

const RENAME_ONLY: &str = "\
name: rename-only
phases:
  - id: rename
    depends_on: []
    prompt: PHASE-rename-MARK Rename lib.greet to lib.hello, with its test.
";

/// A Python test that holds (sleeps) on `host` only (its HOME is the host's), saying so in a
/// file `holding` there; with `once`, only the first time. Each time it runs on the host it
/// adds a line to `runs` there.
fn hold_test(host: &TestHost, once: bool) -> String {
    format!(
        "import os, time, unittest\n\n\nclass HoldTest(unittest.TestCase):\n    \
         def test_hold_on_the_host(self):\n        home = os.environ.get(\"HOME\")\n        \
         if home != {:?}:\n            return\n        \
         with open(os.path.join(home, \"runs\"), \"a\") as runs:\n            \
         runs.write(\"run\\n\")\n        \
         holding = os.path.join(home, \"holding\")\n        \
         if {} and os.path.exists(holding):\n            return\n        \
         open(holding, \"w\").close()\n        time.sleep(600)\n",
        host.home().display().to_string(),
        if once { "True" } else { "False" },
    )
}

/// The rename-only project, its merge test holding on `host` (and only there) until the
/// host's end, its `hosts` naming `host` (waiting `reconnect_secs` for it after its link
/// drops), trusted there; with its ssh configuration. With `once`, only the first test on
/// the host holds. Each test on the host adds a line to `runs` in the host's HOME.
fn holding_project(
    host: &TestHost,
    once: bool,
    reconnect_secs: u64,
) -> (
    tempfile::TempDir,
    std::path::PathBuf,
    tempfile::TempDir,
    std::path::PathBuf,
) {
    let ssh = tempfile::tempdir().unwrap();
    let ssh_config = cp_e2e::hosts::ssh_config(ssh.path(), &[host]);
    let hold = hold_test(host, once);
    let (repo, root) = semantic_project(
        RENAME_ONLY,
        json!({"hosts": [{"ssh": host.alias(), "reconnect_secs": reconnect_secs}]}),
        &[("test_hold.py", &hold)],
    );
    // Refused at first (not trusted there), which makes the host's clone; then trusted.
    let (code, refused) = run_with_hosts(&root, &ssh_config);
    assert_ne!(code, Some(0), "{refused}");
    let clone = host
        .home()
        .join(".local/share/context-pilot/remote")
        .join(cp_remote::project_key(&root));
    let clone_text = clone.display().to_string();
    let out = host.ssh(&["cd", &clone_text, "&&", "context-pilot", "trust"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    (repo, root, ssh, ssh_config)
}

/// Runs the rename-only project whose merge test holds on `host`; once it holds, `cut` is
/// done to the host; returns the run's exit code and output.
fn run_cut_mid_test(
    host: &mut TestHost,
    root: &std::path::Path,
    ssh_config: &std::path::Path,
    cut: impl FnOnce(&mut TestHost),
) -> (Option<i32>, String) {
    let server = LlmServer::start().unwrap();
    serve_back(
        &server,
        Script {
            phases: vec![("rename", rename_calls())],
        },
        Vec::new(),
        Arc::new(Seen::default()),
        None,
        Arc::default(),
    );
    let child = command(root, &server, &[".context-pilot/workflows/wf.yaml"])
        .env(cp_remote::SSH_CONFIG_ENV, ssh_config)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    cp_e2e::eventually("the merge test holds on the host", PATIENCE, || {
        host.home().join("holding").exists()
    });
    cut(host);
    let out = child.wait_with_output().unwrap();
    (out.status.code(), shown(&out))
}

/// The run ended green with rename's merge tested on its own machine, saying the host left.
fn assert_tested_here(root: &std::path::Path, code: Option<i32>, shown: &str, host: &str) {
    assert_eq!(code, Some(0), "{shown}");
    assert!(
        shown.contains(&format!("host {host}")) && shown.contains("takes no more work in this run"),
        "{shown}"
    );
    let record = run_record(root).unwrap();
    let proof = &record["phase_runs"]["rename"]["proof"];
    assert_eq!(proof["outcome"], "passed", "{record:#}");
    assert!(proof["host"].is_null(), "tested here: {record:#}");
}

/// The link to a host goes down while it tests a merge, and comes back after the run: the
/// run noticed (ssh's keepalives), tested the tree here and ended green; once the link is
/// back, the host finds its run gone (its `alive` line cannot be delivered) and ends the
/// test: nothing is left running there.
#[test]
fn a_link_down_mid_test_is_noticed_and_the_host_ends_its_test_once_it_is_back() {
    if !TestHost::can_start() {
        return;
    }
    let mut host = TestHost::start("cut");
    let (_repo, root, _ssh, ssh_config) = holding_project(&host, false, 2);
    let (code, shown) = run_cut_mid_test(&mut host, &root, &ssh_config, |h| h.set_link(false));
    assert_tested_here(&root, code, &shown, "cut");
    assert!(
        !host.leftovers().is_empty(),
        "the host's test still runs while cut off"
    );
    host.set_link(true);
    cp_e2e::eventually_with(
        "the host ends the test of a run that is gone",
        PATIENCE,
        || host.leftovers().is_empty(),
        || format!("{:?}", host.leftovers()),
    );
}

/// A host killed while it tests a merge (its sshd and every process of it ended): the run
/// leaves it out, tests that tree on its own machine, and ends green, saying so.
#[test]
fn a_host_killed_mid_test_leaves_the_run_which_tests_here_and_ends_green() {
    if !TestHost::can_start() {
        return;
    }
    let mut host = TestHost::start("doomed");
    let (_repo, root, _ssh, ssh_config) = holding_project(&host, false, 2);
    let (code, shown) = run_cut_mid_test(&mut host, &root, &ssh_config, TestHost::kill);
    assert_tested_here(&root, code, &shown, "doomed");
    assert_nothing_left_on(&host);
}

/// What `context-pilot test-tree --json` prints on `host` for `request` (one JSON line), as
/// the lines it wrote.
fn test_tree_on(host: &TestHost, request: &serde_json::Value) -> Vec<serde_json::Value> {
    let line = cp_base::shell_word(&request.to_string());
    let out = host.ssh(&["echo", &line, "|", "context-pilot", "test-tree", "--json"]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A host tests exactly the trees whose configuration its user trusted there, reading its
/// trust from its own folders though the run has its own `XDG_CONFIG_HOME` and the host's ssh
/// entry sends every variable. Others are refused, saying why and where trust was read.
#[test]
fn a_host_tests_only_what_its_user_trusted_there_and_says_why_it_refuses_the_rest() {
    if !TestHost::can_start() {
        return;
    }
    let host = TestHost::start("trusty");
    let ssh = tempfile::tempdir().unwrap();
    let ssh_config = cp_e2e::hosts::ssh_config(ssh.path(), &[&host]);
    let (_repo, root) =
        semantic_project(RENAME_ONLY, json!({"hosts": [{"ssh": host.alias()}]}), &[]);
    let store = host.home().join(".config/context-pilot/trust.json");
    let (code, refused) = run_with_hosts(&root, &ssh_config);
    assert_ne!(code, Some(0), "{refused}");
    assert!(
        refused.contains("it was never trusted there")
            && refused.contains(&format!("trust is read from {}", store.display())),
        "{refused}"
    );

    let key = cp_remote::project_key(&root);
    let clone = host
        .home()
        .join(".local/share/context-pilot/remote")
        .join(&key);
    let clone_text = clone.display().to_string();
    let out = host.ssh(&["cd", &clone_text, "&&", "context-pilot", "trust"]);
    assert!(out.status.success(), "{out:?}");
    let trusted = host.ssh(&["git", "-C", &clone_text, "rev-parse", "HEAD"]);
    let trusted = String::from_utf8_lossy(&trusted.stdout).trim().to_owned();

    // The trusted tree: ready.
    let events = test_tree_on(
        &host,
        &json!({"project": key, "commit": trusted, "check_only": true}),
    );
    assert_eq!(events.last().unwrap()["event"], "ready", "{events:?}");

    // A commit whose test command is another: refused, and that command never runs.
    let changed = host.home().join("changed");
    let script = format!(
        "set -e; git -C {clone} worktree add -q --detach {changed} HEAD; cd {changed}; \
         sed -i 's|python3 -m unittest|touch $HOME/ran; python3 -m unittest|' \
         .context-pilot/config.json; git -c user.name=t -c user.email=t@t commit -qam other; \
         git rev-parse HEAD; cd /; git -C {clone} worktree remove --force {changed}",
        clone = cp_base::shell_word(&clone_text),
        changed = cp_base::shell_word(&changed.display().to_string()),
    );
    let out = host.ssh(&["sh", "-c", &cp_base::shell_word(&script)]);
    assert!(out.status.success(), "{out:?}");
    let other = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert_ne!(other, trusted);
    let events = test_tree_on(&host, &json!({"project": key, "commit": other}));
    let last = events.last().unwrap();
    assert_eq!(last["event"], "refused", "{events:?}");
    let reason = last["reason"].as_str().unwrap();
    assert!(
        reason.contains("differs from what was trusted there")
            && reason.contains(&store.display().to_string())
            && reason.contains("context-pilot trust"),
        "{reason}"
    );
    assert!(!host.home().join("ran").exists(), "the other command ran");
    assert_nothing_left_on(&host);
}

/// The processes of the run `run` that hold a test on a host (its `ssh … test-tree`).
fn host_tests_of(run: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // `pid (comm) state ppid …`: the fields after the last ')'.
        let parent = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if parent == Some(run) && String::from_utf8_lossy(&cmdline).contains("test-tree") {
            found.push(pid);
        }
    }
    found
}

/// The link to a host drops while it tests a merge, long enough for the run to notice (ssh's
/// keepalives), and comes back within the host's `reconnect_secs`: the run waits for it,
/// tests the tree there again and ends green with the host's proof; no phase runs twice, the
/// test the host had is ended, and nothing is left running there.
#[test]
fn a_link_that_drops_mid_test_and_comes_back_is_waited_for_and_the_host_tests_again() {
    if !TestHost::can_start() {
        return;
    }
    let host = TestHost::start("flaky");
    let (_repo, root, _ssh, ssh_config) = holding_project(&host, true, 60);
    let server = LlmServer::start().unwrap();
    serve_back(
        &server,
        Script {
            phases: vec![("rename", rename_calls())],
        },
        Vec::new(),
        Arc::new(Seen::default()),
        None,
        Arc::default(),
    );
    let child = command(&root, &server, &[".context-pilot/workflows/wf.yaml"])
        .env(cp_remote::SSH_CONFIG_ENV, &ssh_config)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    cp_e2e::eventually("the merge test holds on the host", PATIENCE, || {
        host.home().join("holding").exists()
    });
    let held = host_tests_of(child.id());
    assert!(!held.is_empty(), "the run's ssh to the host");
    host.set_link(false);
    cp_e2e::eventually("the run finds the link gone", PATIENCE, || {
        held.iter()
            .all(|pid| !std::path::Path::new(&format!("/proc/{pid}")).exists())
    });
    host.set_link(true);
    let out = child.wait_with_output().unwrap();
    let shown = shown(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    assert!(
        shown.contains("the link to host flaky dropped")
            && shown.contains("waiting up to 60 s for it to answer again")
            && shown.contains("host flaky answers again"),
        "{shown}"
    );
    assert!(!shown.contains("takes no more work"), "{shown}");
    let record = run_record(&root).unwrap();
    let proof = &record["phase_runs"]["rename"]["proof"];
    assert_eq!(proof["outcome"], "passed", "{record:#}");
    assert_eq!(proof["host"]["host"], "flaky", "{record:#}");
    assert_eq!(proof["host"]["tree"], proof["tree"], "{record:#}");
    // The phase ran once; its test ran twice on the host: the one cut off, and the one after.
    assert_eq!(shown.matches("phase rename: started").count(), 1, "{shown}");
    assert_eq!(
        shown.matches("phase rename: committed").count(),
        1,
        "{shown}"
    );
    let runs = std::fs::read_to_string(host.home().join("runs")).unwrap();
    assert_eq!(runs.lines().count(), 2, "{runs}");
    assert_nothing_left_on(&host);
}

/// Trusts the project at `root` on `host`: its clone there (made by a run the host refused),
/// as the host's user would after reviewing it.
pub(crate) fn trust_clone_on(host: &TestHost, root: &std::path::Path) {
    let clone = host
        .home()
        .join(".local/share/context-pilot/remote")
        .join(cp_remote::project_key(root));
    let clone_text = clone.display().to_string();
    let out = host.ssh(&["cd", &clone_text, "&&", "context-pilot", "trust"]);
    assert!(out.status.success(), "{out:?}");
}

/// A host killed while it tests a merge, with another host free: the run waits its
/// `reconnect_secs` for it, leaves it out, and the other host tests the tree; the proof names
/// that host. Nothing is left on either.
#[test]
fn a_host_killed_mid_test_hands_the_tree_to_another_host_which_tests_it() {
    if !TestHost::can_start() {
        return;
    }
    let mut lost = TestHost::start("lost");
    let spare = TestHost::start("spare");
    let ssh = tempfile::tempdir().unwrap();
    let ssh_config = cp_e2e::hosts::ssh_config(ssh.path(), &[&lost, &spare]);
    let (_repo, root) = semantic_project(
        RENAME_ONLY,
        json!({"hosts": [{"ssh": "lost", "reconnect_secs": 1}, {"ssh": "spare"}]}),
        &[("test_hold.py", &hold_test(&lost, false))],
    );
    // Each host refuses the project until its user trusts it there, in the order listed.
    for host in [&lost, &spare] {
        let (code, refused) = run_with_hosts(&root, &ssh_config);
        assert_ne!(code, Some(0), "{refused}");
        assert!(
            refused.contains(&format!("host {} refused the project", host.alias())),
            "{refused}"
        );
        trust_clone_on(host, &root);
    }

    let (code, shown) = run_cut_mid_test(&mut lost, &root, &ssh_config, TestHost::kill);
    assert_eq!(code, Some(0), "{shown}");
    assert!(
        shown.contains("host lost")
            && shown.contains(
                "takes no more work in this run, and the tree is tested on host spare instead"
            ),
        "{shown}"
    );
    let record = run_record(&root).unwrap();
    let proof = &record["phase_runs"]["rename"]["proof"];
    assert_eq!(proof["outcome"], "passed", "{record:#}");
    assert_eq!(proof["host"]["host"], "spare", "{record:#}");
    assert_eq!(proof["host"]["tree"], proof["tree"], "{record:#}");
    assert_eq!(shown.matches("phase rename: started").count(), 1, "{shown}");
    assert_nothing_left_on(&spare);
    assert_nothing_left_on(&lost);
}

/// The run is killed with SIGKILL (itself only, as the kernel's OOM killer would) while a host
/// tests its merge: its ssh sees its input close, the host ends the test, and nothing of the
/// run is left here or there. `--resume` then ends green with the phase's work on the branch.
/// (It does not reattach to the host's test: the resumed run does the phase's unlanded work
/// again, and its end is tested on the run's machine.)
#[test]
fn a_run_killed_mid_test_leaves_nothing_on_the_host_and_resume_lands_its_work() {
    if !TestHost::can_start() {
        return;
    }
    let host = TestHost::start("resumed");
    let (_repo, root, _ssh, ssh_config) = holding_project(&host, true, 2);
    let server = LlmServer::start().unwrap();
    serve_back(
        &server,
        Script {
            phases: vec![("rename", rename_calls())],
        },
        Vec::new(),
        Arc::new(Seen::default()),
        None,
        Arc::default(),
    );
    let mut child = command(&root, &server, &[".context-pilot/workflows/wf.yaml"])
        .env(cp_remote::SSH_CONFIG_ENV, &ssh_config)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    cp_e2e::eventually("the merge test holds on the host", PATIENCE, || {
        host.home().join("holding").exists()
    });
    let held = host_tests_of(child.id());
    assert!(!held.is_empty(), "the run's ssh to the host");
    assert!(!host.leftovers().is_empty(), "the host's test runs");
    child.kill().unwrap();
    child.wait().unwrap();
    cp_e2e::eventually_with(
        "the host ends the test of a killed run, and its ssh here ends",
        PATIENCE,
        || {
            host.leftovers().is_empty()
                && held
                    .iter()
                    .all(|pid| !std::path::Path::new(&format!("/proc/{pid}")).exists())
        },
        || format!("{:?}", host.leftovers()),
    );

    let record = run_record(&root).unwrap();
    let run_id = record["run_id"].as_str().unwrap().to_owned();
    let out = command(&root, &server, &["--resume", &run_id])
        .env(cp_remote::SSH_CONFIG_ENV, &ssh_config)
        .output()
        .unwrap();
    let shown = shown(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    let lib = git(&root, &["show", "HEAD:lib.py"]);
    assert!(lib.contains("def hello"), "{lib}\n{shown}");
    assert_eq!(
        run_record(&root).unwrap()["verdict"]["outcome"],
        "passed",
        "{shown}"
    );
    assert_nothing_left_on(&host);
}

/// A short drop of the link (shorter than ssh's keepalive allows) while the host tests a
/// merge: the connection lives through it, the host's test goes on and its result comes back;
/// the test ran once, and the run never took the host for gone.
#[test]
fn a_short_link_drop_mid_test_is_lived_through_and_the_test_runs_once() {
    if !TestHost::can_start() {
        return;
    }
    let mut host = TestHost::start("blip");
    let ssh = tempfile::tempdir().unwrap();
    let ssh_config = cp_e2e::hosts::ssh_config(ssh.path(), &[&host]);
    // On the host only: counts its runs, then waits for `release` (two minutes at most).
    let wait = format!(
        "import os, time, unittest\n\n\nclass WaitTest(unittest.TestCase):\n    \
         def test_wait_on_the_host(self):\n        home = os.environ.get(\"HOME\")\n        \
         if home != {:?}:\n            return\n        \
         with open(os.path.join(home, \"runs\"), \"a\") as runs:\n            \
         runs.write(\"run\\n\")\n        \
         open(os.path.join(home, \"holding\"), \"w\").close()\n        \
         for _ in range(1200):\n            \
         if os.path.exists(os.path.join(home, \"release\")):\n                return\n            \
         time.sleep(0.1)\n",
        host.home().display().to_string()
    );
    let (_repo, root) = semantic_project(
        RENAME_ONLY,
        json!({"hosts": [{"ssh": "blip", "reconnect_secs": 0}]}),
        &[("test_wait.py", &wait)],
    );
    let (code, refused) = run_with_hosts(&root, &ssh_config);
    assert_ne!(code, Some(0), "{refused}");
    trust_clone_on(&host, &root);

    let (code, shown) = run_cut_mid_test(&mut host, &root, &ssh_config, |h| {
        h.set_link(false);
        // The outage's length, not a wait for something: longer than the host's `alive`
        // period (3 s), shorter than what ssh's keepalives allow (15 s).
        std::thread::sleep(std::time::Duration::from_secs(5));
        h.set_link(true);
        std::fs::write(h.home().join("release"), "").unwrap();
    });
    assert_eq!(code, Some(0), "{shown}");
    assert!(!shown.contains("dropped"), "{shown}");
    assert!(!shown.contains("takes no more work"), "{shown}");
    let record = run_record(&root).unwrap();
    let proof = &record["phase_runs"]["rename"]["proof"];
    assert_eq!(proof["outcome"], "passed", "{record:#}");
    assert_eq!(proof["host"]["host"], "blip", "{record:#}");
    assert_eq!(proof["host"]["tree"], proof["tree"], "{record:#}");
    let runs = std::fs::read_to_string(host.home().join("runs")).unwrap();
    assert_eq!(runs.lines().count(), 1, "{runs}");
    assert_nothing_left_on(&host);
}
