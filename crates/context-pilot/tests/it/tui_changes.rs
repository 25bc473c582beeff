//! End to end: the Changes panel with the real binary in a PTY and the scripted model
//! server. The agent writes files and the panel shows their diff; a comment on a line goes
//! to the model's next request with its `path:line`; `r` reverts exactly one hunk (checked
//! on disk); `C` commits, and the agent's next stop passes at once. A commit a hook refuses
//! leaves a partly staged index exactly as it was; `l` on a binary file shows its sizes and
//! its changed bytes.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use cp_e2e::{LlmServer, TuiSession, anthropic, git, git_repo};

const WAIT: Duration = Duration::from_secs(60);

fn numbered(line: impl Fn(usize) -> String) -> String {
    let mut out = String::new();
    for i in 1..=30 {
        let _ = writeln!(out, "{}", line(i));
    }
    out
}

/// The sidebar number of the Changes panel, read off the screen.
fn changes_digit(screen: &str) -> u8 {
    for line in screen.lines() {
        let chars: Vec<char> = line.chars().collect();
        for (i, window) in chars.windows(9).enumerate() {
            let text: String = window[2..].iter().collect();
            if window[0].is_ascii_digit() && window[1] == ' ' && text == "Changes" && i > 0 {
                return u8::try_from(window[0]).unwrap();
            }
        }
    }
    panic!("no Changes row in the sidebar:\n{screen}");
}

/// Polls `check` until it holds (a durable fact on disk), or fails with `what` and the
/// screen.
fn wait_until(tui: &TuiSession, what: &str, check: impl Fn() -> bool) {
    cp_e2e::eventually_with(what, WAIT, check, || format!("screen:\n{}", tui.screen()));
}

/// The gated files the stop gate's last report lists as uncommitted (its saved state).
fn uncommitted_gated(root: &Path) -> Vec<String> {
    let path = root.join(".context-pilot/state/main/checkpoint.json");
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    state["last_report"]["uncommitted_gated"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_owned())
        .collect()
}

fn commits(repo: &Path) -> usize {
    git(repo, &["rev-list", "--count", "HEAD"])
        .trim()
        .parse()
        .unwrap()
}

/// A committed, trusted repository whose stop gate blocks once, runs no tests and gates
/// code; and a server scripted for the test: the agent changes two far-apart lines of
/// `src/app.txt` (two hunks), writes a plan and a code file, then answers each turn.
fn project_and_server() -> (tempfile::TempDir, LlmServer) {
    let repo = git_repo();
    let root = repo.path();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/app.txt"), numbered(|i| format!("line {i}"))).unwrap();
    std::fs::create_dir_all(root.join(".context-pilot")).unwrap();
    std::fs::write(
        root.join(".context-pilot/config.json"),
        r#"{"checkpoint": {"max_blocks": 1, "tests": {"command": ""}}}"#,
    )
    .unwrap();
    cp_e2e::trust(root);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "first"]);

    let edited = numbered(|i| match i {
        3 => "line three".to_owned(),
        25 => "line twenty-five".to_owned(),
        n => format!("line {n}"),
    });
    let app_args = serde_json::json!({"file_path": "src/app.txt", "content": edited}).to_string();
    let plan_args = r#"{"file_path": "notes/plan.md", "content": "step one\nstep two\n"}"#;
    let code_args = r#"{"file_path": "src/app.py", "content": "print('hi')\n"}"#;
    let server = LlmServer::start().unwrap();
    server.push(anthropic::tool_use_turn(&[
        ("toolu_1", "File_write", &app_args),
        ("toolu_2", "File_write", plan_args),
        ("toolu_3", "File_write", code_args),
    ]));
    server.push(anthropic::text_turn("I wrote it."));
    server.push(anthropic::text_turn("Noted."));
    server.push(anthropic::text_turn("Will do."));
    server.push(anthropic::text_turn("All done."));
    (repo, server)
}

#[test]
fn review_comment_revert_and_commit_from_the_changes_panel() {
    let (repo, server) = project_and_server();
    let root = repo.path();
    let url = server.url();
    let env = [
        ("ANTHROPIC_BASE_URL", url.as_str()),
        ("ANTHROPIC_API_KEY", "k"),
        ("OPENAI_API_KEY", ""),
    ];
    let mut tui = TuiSession::start(root, &[], &env).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    tui.type_text("please write the plan");
    tui.send(b"\r");
    tui.wait_turn_end(root, "Noted.", WAIT).unwrap();
    assert_eq!(server.requests().len(), 3);
    // The agent stopped with code uncommitted (the block limit let it): the stop gate says so.
    assert_eq!(uncommitted_gated(root), ["src/app.py"]);

    // The Changes panel shows the new file's diff.
    let screen = tui.wait_for("Changes", WAIT).unwrap();
    let digit = changes_digit(&screen);
    tui.send(b"\t");
    tui.send(&[digit]);
    tui.send(b"\r"); // Enter gives the panel the keys
    tui.wait_for("+step one", WAIT).unwrap();

    // A comment on `step one` (found with `/`), then S sends it to the agent.
    tui.type_text("/step one");
    tui.send(b"\r");
    tui.type_text("c");
    tui.type_text("say which step comes first");
    tui.send(b"\r");
    tui.wait_for("say which step comes first", WAIT).unwrap();
    tui.type_text("S");
    let requests = server.wait_for_requests(4, WAIT);
    let body = &requests[3].raw_body;
    assert!(body.contains("notes/plan.md:1"), "location missing: {body}");
    assert!(
        body.contains("say which step comes first"),
        "comment missing: {body}"
    );
    assert!(body.contains("+step one"), "hunk lines missing: {body}");
    tui.wait_turn_end(root, "Will do.", WAIT).unwrap();

    // `r` on the second hunk of src/app.txt reverts exactly that hunk, after a yes.
    tui.type_text("/twenty-five");
    tui.send(b"\r");
    tui.type_text("r");
    tui.wait_for("Revert?", WAIT).unwrap();
    tui.type_text("y");
    let app = root.join("src/app.txt");
    wait_until(&tui, "the second hunk to be reverted on disk", || {
        std::fs::read_to_string(&app).is_ok_and(|t| t.contains("line 25\n"))
    });
    let now = std::fs::read_to_string(&app).unwrap();
    assert_eq!(
        now,
        numbered(|i| if i == 3 {
            "line three".to_owned()
        } else {
            format!("line {i}")
        }),
        "only the second hunk was reverted"
    );

    // `C` commits with the suggested message exactly the files the dialog lists; the host's
    // own `.context-pilot/.gitignore` ignores itself, so nothing is left.
    tui.type_text("C");
    tui.wait_for("Commits exactly these 3 file(s)", WAIT)
        .unwrap();
    tui.send(b"\r");
    // The commit is made in an index of its own; the real index takes the committed files a
    // moment after `HEAD` moves: the commit is done once both happened.
    wait_until(&tui, "the commit, and the index updated after it", || {
        commits(root) == 2 && clean(root)
    });
    let message = git(root, &["log", "-1", "--format=%s"]);
    assert!(message.starts_with("Update"), "{message}");
    let committed = git(root, &["show", "--format=", "--name-only", "HEAD"]);
    assert_eq!(committed, "notes/plan.md\nsrc/app.py\nsrc/app.txt\n");
    let status = git(root, &["status", "--porcelain"]);
    assert_eq!(
        status, "",
        "git status is clean: nothing listed was left out"
    );
    // The stop gate's state follows at once: nothing is left uncommitted.
    wait_until(
        &tui,
        "the stop gate's report to have no uncommitted file",
        || uncommitted_gated(root).is_empty(),
    );

    // The agent's next stop passes at once: one request, no stop gate message.
    tui.send(b"\x1b"); // the panel gives the keys back to the sidebar
    tui.wait_until("the sidebar has the keys", WAIT, |s| {
        s.contains("Enter review keys")
    })
    .unwrap();
    tui.send(b"\t"); // the sidebar gives them to the input line
    tui.wait_until("the input has the keys", WAIT, |s| {
        s.contains("F1 help · Ctrl-P palette")
    })
    .unwrap();
    tui.type_text("anything else?");
    tui.send(b"\r");
    tui.wait_turn_end(root, "All done.", WAIT).unwrap();
    assert_eq!(server.requests().len(), 5, "the stop gate did not block");
    tui.send(b"\x03");
    assert_eq!(tui.wait_exit(WAIT).unwrap(), 0);
}

#[test]
fn at_an_approval_gate_review_comments_repeat_the_phase_with_them_as_feedback() {
    let repo = git_repo();
    let root = repo.path();
    std::fs::create_dir_all(root.join(".context-pilot/workflows")).unwrap();
    std::fs::write(
        root.join(".context-pilot/workflows/notes.yaml"),
        "name: notes\nphases:\n  - id: write\n    prompt: Write the notes.\n    approval:\n      \
         prompt: Good notes?\n      options:\n        - { label: Continue, on_select: { action: continue } }\n        \
         - { label: Redo, with_feedback: true, on_select: { action: repeat_phase, target: current } }\n",
    )
    .unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "workflow"]);
    let server = LlmServer::start().unwrap();
    let args = r#"{"file_path": "notes.md", "content": "step one\nstep two\n"}"#;
    server.push(anthropic::tool_use_turn(&[("toolu_1", "File_write", args)]));
    server.push(anthropic::text_turn("Wrote the notes."));
    server.push(anthropic::text_turn("Noted."));
    server.push(anthropic::text_turn("Redone."));
    server.push(anthropic::text_turn("Noted again."));
    let url = server.url();
    let env = [
        ("ANTHROPIC_BASE_URL", url.as_str()),
        ("ANTHROPIC_API_KEY", "k"),
        ("OPENAI_API_KEY", ""),
    ];
    let mut tui =
        TuiSession::start(root, &["run", ".context-pilot/workflows/notes.yaml"], &env).unwrap();
    tui.wait_for("┌ Approval gate · phase write", WAIT).unwrap();
    let requests = server.requests().len();
    // F3: the gate hides, the Changes panel has the keys.
    tui.send(b"\x1bOR");
    // The phase's work was committed when it ended: the panel shows it since the phase began.
    tui.wait_for("+step one", WAIT).unwrap();
    tui.wait_for("The phase's changes since", WAIT).unwrap();
    tui.type_text("/step two");
    tui.send(b"\r");
    tui.type_text("c");
    tui.type_text("REDO-NOTE number the steps");
    tui.send(b"\r");
    tui.wait_for("REDO-NOTE number the steps", WAIT).unwrap();
    tui.type_text("S");
    // The phase runs again, its prompt carrying the comment with its location.
    let again = server.wait_for_requests(requests + 1, WAIT);
    let body = &again[requests].raw_body;
    assert!(body.contains("REDO-NOTE number the steps"), "{body}");
    assert!(body.contains("notes.md:2"), "{body}");
    tui.wait_for("┌ Approval gate · phase write", WAIT).unwrap();
    tui.send(b"\r"); // Continue
    wait_until(&tui, "the run to be completed", || {
        run_statuses(root).iter().any(|s| s == "completed")
    });
    // The run is saved as completed a moment before the TUI hears of its end; a quit before
    // that would be asked about and end the TUI with 1 (a run it never saw end), so the test
    // waits for the TUI's own notice in the conversation (Alt-1 shows it; a frame drawn since
    // that key cannot be missed).
    tui.send(b"\x1b1");
    tui.wait_for("Workflow finished.", WAIT).unwrap();
    assert_eq!(tui.quit(WAIT).unwrap(), 0);
}

/// The statuses of the workflow runs recorded under `root`.
fn run_statuses(root: &Path) -> Vec<String> {
    std::fs::read_dir(root.join(".context-pilot/runs"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|run| std::fs::read_to_string(run.path().join("context.json")).ok())
        .filter_map(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .map(|run| run["status"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// `git status --porcelain=v2` and `git ls-files -s`: the index and work tree as git sees them.
fn repository_state(root: &Path) -> (String, String) {
    (
        git(root, &["status", "--porcelain=v2", "--untracked-files=all"]),
        git(root, &["ls-files", "-s"]),
    )
}

/// The TUI on `root` (a scripted server that is never asked anything), with the Changes
/// panel shown and given the keys.
fn tui_on_changes(root: &Path, server: &LlmServer) -> TuiSession {
    let url = server.url();
    let env = [
        ("ANTHROPIC_BASE_URL", url.as_str()),
        ("ANTHROPIC_API_KEY", "k"),
        ("OPENAI_API_KEY", ""),
    ];
    let mut tui = TuiSession::start(root, &[], &env).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    let screen = tui.wait_for("Changes", WAIT).unwrap();
    let digit = changes_digit(&screen);
    tui.send(b"\t");
    tui.send(&[digit]);
    tui.send(b"\r"); // Enter gives the panel the keys
    tui
}

#[test]
fn a_commit_a_hook_refuses_leaves_a_partly_staged_index_exactly_as_it_was() {
    let repo = git_repo();
    let root = repo.path();
    std::fs::write(root.join("app.txt"), numbered(|i| format!("line {i}"))).unwrap();
    std::fs::write(root.join("b.txt"), "b\n").unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "first"]);
    // app.txt: one hunk staged, another edited after; b.txt edited; c.txt new.
    let staged = numbered(|i| {
        if i == 3 {
            "line three".into()
        } else {
            format!("line {i}")
        }
    });
    std::fs::write(root.join("app.txt"), staged).unwrap();
    git(root, &["add", "app.txt"]);
    let both = numbered(|i| match i {
        3 => "line three".into(),
        25 => "line twenty-five".into(),
        n => format!("line {n}"),
    });
    std::fs::write(root.join("app.txt"), both).unwrap();
    std::fs::write(root.join("b.txt"), "B\n").unwrap();
    std::fs::write(root.join("c.txt"), "new\n").unwrap();
    let marker = root.join("hook-ran");
    let hook = root.join(".git/hooks/pre-commit");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\ntouch '{}'\necho 'lint says no' >&2\nexit 1\n",
            marker.display()
        ),
    )
    .unwrap();
    let mut perms = std::fs::metadata(&hook).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&hook, perms).unwrap();
    let head = git(root, &["rev-parse", "HEAD"]);

    let server = LlmServer::start().unwrap();
    let mut tui = tui_on_changes(root, &server);
    tui.wait_for("+line twenty-five", WAIT).unwrap();
    // Taken once the host is up (it writes its own .context-pilot/.gitignore at start).
    let before = repository_state(root);
    tui.type_text("C");
    tui.wait_for("Commit message", WAIT).unwrap();
    tui.send(b"\r");
    wait_until(&tui, "the pre-commit hook to run", || marker.exists());
    tui.wait_for("lint says no", WAIT).unwrap();
    std::fs::remove_file(&marker).unwrap();
    assert_eq!(
        git(root, &["rev-parse", "HEAD"]),
        head,
        "nothing was committed"
    );
    assert_eq!(
        repository_state(root),
        before,
        "staged stays staged, unstaged stays unstaged"
    );
    tui.send(b"\x03");
    assert_eq!(tui.wait_exit(WAIT).unwrap(), 0);
}

#[test]
fn l_on_a_binary_file_shows_its_sizes_and_its_changed_bytes() {
    let repo = git_repo();
    let root = repo.path();
    let old: Vec<u8> = (0..=255u8).cycle().take(600).collect();
    std::fs::write(root.join("logo.bin"), &old).unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "first"]);
    let mut new = old;
    new[300] = b'Z';
    new.extend_from_slice(b"tail");
    std::fs::write(root.join("logo.bin"), &new).unwrap();

    let server = LlmServer::start().unwrap();
    let mut tui = tui_on_changes(root, &server);
    tui.wait_for(
        "binary file not shown · l shows its sizes and changed bytes",
        WAIT,
    )
    .unwrap();
    tui.type_text("l");
    tui.wait_for(
        "600 bytes → 604 bytes · bytes differ from offset 0x12c",
        WAIT,
    )
    .unwrap();
    // The row of the changed byte, before and after, in hex and as text.
    tui.wait_for(
        "00000120  20 21 22 23 24 25 26 27  28 29 2a 2b 5a 2d 2e 2f",
        WAIT,
    )
    .unwrap();
    tui.send(b"\x03");
    assert_eq!(tui.wait_exit(WAIT).unwrap(), 0);
}

/// Whether `git status` lists nothing, asked without taking the index's lock (which the
/// panel's own git commands may hold at that moment).
fn clean(root: &Path) -> bool {
    git(root, &["--no-optional-locks", "status", "--porcelain"]).is_empty()
}

/// Sets the modification time of `path` to `to`, to the nanosecond (`utimensat`).
fn set_mtime(path: &Path, to: std::time::SystemTime) {
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.set_times(std::fs::FileTimes::new().set_modified(to))
        .unwrap();
}

/// Rewrites `a.py` with `text`, of the size it had, so that git's stat data says it is
/// unchanged: its modification time set back (to the nanosecond) to the one the index
/// records, in the second the index was written, as when the last commit and this write fall
/// in one second. `core.trustctime` is off in these repositories, so the change time (which
/// no tool sets back) does not tell the writes apart either: only git's racy rule does.
fn rewrite_in_the_commit_s_second(root: &Path, at: std::time::SystemTime, text: &str) {
    let a = root.join("a.py");
    assert_eq!(std::fs::metadata(&a).unwrap().len(), text.len() as u64);
    set_mtime(&a, at);
    // `git add` of a file whose bytes are as recorded records its stat data anew. The panel's
    // own git may hold the index lock a moment (its refresh): then it is asked again.
    cp_e2e::eventually("git add of a.py, past the panel's index lock", WAIT, || {
        std::process::Command::new("git")
            .args(["add", "--", "a.py"])
            .current_dir(root)
            .output()
            .is_ok_and(|out| out.status.success())
    });
    set_mtime(&root.join(".git/index"), at);
    std::fs::write(&a, text).unwrap();
    set_mtime(&a, at);
}

/// A committed repository with `a.py` and `b.py`, its stat data trusted without the change
/// time.
fn racy_repo() -> tempfile::TempDir {
    let repo = git_repo();
    let root = repo.path();
    git(root, &["config", "core.trustctime", "false"]);
    std::fs::write(root.join("a.py"), "x = 10\n").unwrap();
    std::fs::write(root.join("b.py"), "y = 10\n").unwrap();
    cp_e2e::trust(root);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "first"]);
    repo
}

#[test]
fn a_same_size_rewrite_in_the_commit_s_second_is_committed_every_round() {
    let repo = racy_repo();
    let root = repo.path();
    let server = LlmServer::start().unwrap();
    let mut tui = tui_on_changes(root, &server);
    let at = std::time::SystemTime::now() - Duration::from_secs(100);
    for round in 11..31 {
        let a = format!("x = {round}\n");
        let b = format!("y = {round}, {round}\n");
        rewrite_in_the_commit_s_second(root, at, &a);
        std::fs::write(root.join("b.py"), &b).unwrap();
        tui.wait_for(&format!("+x = {round}"), WAIT).unwrap();
        tui.type_text("C");
        tui.wait_for("Commits exactly these 2 file(s)", WAIT)
            .unwrap();
        tui.send(b"\r");
        let expected = usize::try_from(round).unwrap() - 9;
        wait_until(&tui, "the commit, and the index updated after it", || {
            commits(root) == expected && clean(root)
        });
        assert_eq!(git(root, &["show", "HEAD:a.py"]), a, "round {round}");
        assert_eq!(git(root, &["show", "HEAD:b.py"]), b, "round {round}");
    }
    tui.send(b"\x03");
    assert_eq!(tui.wait_exit(WAIT).unwrap(), 0);
}

#[test]
fn one_racy_file_is_committed_and_an_empty_commit_shows_git_s_words() {
    let repo = racy_repo();
    let root = repo.path();
    let server = LlmServer::start().unwrap();
    let mut tui = tui_on_changes(root, &server);
    let at = std::time::SystemTime::now() - Duration::from_secs(100);
    rewrite_in_the_commit_s_second(root, at, "x = 42\n");
    tui.wait_for("+x = 42", WAIT).unwrap();
    tui.type_text("C");
    tui.wait_for("Commits exactly these 1 file(s)", WAIT)
        .unwrap();
    tui.send(b"\r");
    wait_until(&tui, "the one file committed", || {
        commits(root) == 2 && clean(root)
    });
    assert_eq!(git(root, &["show", "HEAD:a.py"]), "x = 42\n");
    tui.wait_for("committed", WAIT).unwrap();

    // Listed, then put back before the commit: git has nothing to commit, and says so on
    // its standard output; the panel shows those words.
    std::fs::write(root.join("a.py"), "x = 43\n").unwrap();
    tui.wait_for("+x = 43", WAIT).unwrap();
    tui.type_text("C");
    tui.wait_for("Commits exactly these 1 file(s)", WAIT)
        .unwrap();
    std::fs::write(root.join("a.py"), "x = 42\n").unwrap();
    tui.send(b"\r");
    tui.wait_for("nothing to commit", WAIT).unwrap();
    assert_eq!(commits(root), 2, "nothing was committed");
    tui.send(b"\x03");
    assert_eq!(tui.wait_exit(WAIT).unwrap(), 0);
}
