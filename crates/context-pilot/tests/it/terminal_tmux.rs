//! In tmux, as a person would run it: quitting restores the terminal exactly (`stty -a`) and
//! gives back the title it had before (the alerts of a run change it).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::path::Path;
use std::process::Command;
use std::time::Duration;

fn tmux(args: &[&str]) -> String {
    let out = Command::new("tmux")
        .args(args)
        .output()
        .expect("tmux must be installed (.ci/run installs it)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A test's tmux server: killed when dropped, so a test that fails leaves none behind.
struct TmuxServer(String);

impl Drop for TmuxServer {
    fn drop(&mut self) {
        tmux(&["-S", &self.0, "kill-server"]);
    }
}

/// A detached 120×32 tmux session `session` on `socket`, running `script` in a plain bash.
fn start_session(socket: &str, session: &str, script: &str) -> TmuxServer {
    tmux(&[
        "-S",
        socket,
        "new-session",
        "-d",
        "-s",
        session,
        "-x",
        "120",
        "-y",
        "32",
        "bash",
        "--norc",
        "-c",
        script,
    ]);
    TmuxServer(socket.to_owned())
}

/// Waits for `path`, which the script writes aside and renames, so it appears whole.
fn wait_file(path: &Path) {
    cp_e2e::eventually(&path.display().to_string(), Duration::from_secs(60), || {
        path.exists()
    });
}

#[test]
fn quitting_restores_stty_exactly() {
    let repo = cp_e2e::git_repo();
    let dir = repo.path();
    let session = format!("cp-stty-{}", std::process::id());
    let socket = dir.join("tmux.sock");
    let socket = socket.to_str().unwrap();
    let bin = env!("CARGO_BIN_EXE_context-pilot");
    let script = format!(
        "cd {d}; export XDG_CONFIG_HOME={c}; stty -a > {d}/before.txt; {bin}; stty -a > {d}/after.tmp; mv {d}/after.tmp {d}/after.txt; sleep 30",
        d = dir.display(),
        c = cp_e2e::config_home().display()
    );
    let _tmux = start_session(socket, &session, &script);
    let screen = || tmux(&["-S", socket, "capture-pane", "-p", "-t", &session]);
    cp_e2e::eventually_with(
        "the TUI to open",
        Duration::from_secs(60),
        || {
            let screen = screen();
            screen.contains("Conversation") && screen.contains("worker main")
        },
        || format!("the screen:\n{}", screen()),
    );
    tmux(&["-S", socket, "send-keys", "-t", &session, "C-c"]);
    wait_file(&dir.join("after.txt"));
    let before = std::fs::read_to_string(dir.join("before.txt")).unwrap();
    let after = std::fs::read_to_string(dir.join("after.txt")).unwrap();
    assert!(before.contains("speed"), "stty output missing: {before}");
    assert_eq!(before, after, "the terminal settings changed");
}

/// A TUI running `workflow` (its one phase `only`) in tmux, against a model that refuses
/// every request (`refuse`) or answers "Done.", its alerts written to `alert.json` by the
/// person's `notify.command`, the terminal's title `title-before-cp` before it starts.
struct TitledRun {
    repo: tempfile::TempDir,
    config: tempfile::TempDir,
    _server: cp_e2e::LlmServer,
    _tmux: TmuxServer,
    socket: String,
    session: String,
}

impl TitledRun {
    fn start(workflow: &str, refuse: bool) -> Self {
        let repo = cp_e2e::git_repo();
        let dir = repo.path();
        std::fs::write(dir.join("wf.yaml"), workflow).unwrap();
        cp_e2e::git(dir, &["add", "wf.yaml"]);
        cp_e2e::git(dir, &["commit", "-q", "-m", "workflow"]);
        let server = cp_e2e::LlmServer::start().unwrap();
        server.answer_side_requests(move |request| {
            cp_e2e::anthropic::side_reply(request).or_else(|| {
                Some(if refuse {
                    cp_e2e::anthropic::error(400, "invalid_request_error", "scripted refusal")
                } else {
                    cp_e2e::anthropic::text_turn("Done.")
                })
            })
        });
        // The person's own config: the alert command leaves a durable trace of each alert.
        let config = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(config.path().join("context-pilot")).unwrap();
        std::fs::write(
            config.path().join("context-pilot/config.json"),
            serde_json::json!({"notify": {"command": format!("cat >> '{}/alert.json'", dir.display())}})
                .to_string(),
        )
        .unwrap();
        let session = format!("cp-title-{}-{}", std::process::id(), u8::from(refuse));
        let socket = dir.join("tmux.sock").to_str().unwrap().to_owned();
        let bin = env!("CARGO_BIN_EXE_context-pilot");
        let script = format!(
            "cd {d}; export XDG_CONFIG_HOME={c} ANTHROPIC_BASE_URL={u} ANTHROPIC_API_KEY=test-key; \
             unset OPENAI_API_KEY OPENAI_BASE_URL; printf '\\033]2;title-before-cp\\033\\\\'; \
             {bin} run wf.yaml --max-restarts 0; echo $? > {d}/exited.txt; sleep 30",
            d = dir.display(),
            c = config.path().display(),
            u = server.url(),
        );
        let tmux = start_session(&socket, &session, &script);
        Self {
            repo,
            config,
            _server: server,
            _tmux: tmux,
            socket,
            session,
        }
    }

    fn dir(&self) -> &Path {
        self.repo.path()
    }

    fn title(&self) -> String {
        let shown = tmux(&[
            "-S",
            &self.socket,
            "display",
            "-p",
            "-t",
            &self.session,
            "#{pane_title}",
        ]);
        shown.trim_end().to_owned()
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["-S", &self.socket, "send-keys", "-t", &self.session];
        args.extend_from_slice(keys);
        tmux(&args);
    }

    /// Waits until `done` holds, failing with `what`, the title and the screen after two
    /// minutes.
    fn wait(&self, what: &str, done: &dyn Fn() -> bool) {
        cp_e2e::eventually_with(what, Duration::from_secs(120), done, || {
            format!("title {:?}\n{}", self.title(), self.screen())
        });
    }

    fn screen(&self) -> String {
        tmux(&[
            "-S",
            &self.socket,
            "capture-pane",
            "-p",
            "-t",
            &self.session,
        ])
    }

    fn alerted(&self) -> bool {
        self.dir().join("alert.json").exists()
    }

    fn exited(&self) -> bool {
        self.dir().join("exited.txt").exists()
    }
}

/// A workflow alert (a failed phase) changes the terminal's title; once the run is over the
/// person's own title is back, while the TUI still runs, and still after it exits.
#[test]
fn the_title_an_alert_changed_is_given_back_when_the_run_ends_and_at_exit() {
    let run = TitledRun::start(
        "name: failing\nphases:\n  - id: only\n    prompt: Do it.\n",
        true,
    );
    run.wait("an alert of the failed phase", &|| run.alerted());
    run.wait("the run's end to give the title back", &|| {
        run.title() == "title-before-cp"
    });
    assert!(!run.exited(), "the TUI exited");
    // The run is over: Ctrl-C quits at once.
    run.keys(&["C-c"]);
    run.wait("the TUI to exit", &|| run.exited());
    assert_eq!(run.title(), "title-before-cp");
    drop(run.config);
}

/// The TUI quit while an alert's title is shown (an approval gate waits) gives the terminal
/// the title it had before it started: it was saved on the terminal's title stack.
#[test]
fn quitting_while_an_alert_shows_restores_the_terminals_title() {
    let run = TitledRun::start(
        "name: gated\nphases:\n  - id: only\n    prompt: Do it.\n    approval:\n      approval_required: true\n",
        false,
    );
    run.wait("an alert of the approval gate", &|| run.alerted());
    run.wait("the alert to set the title", &|| {
        run.title().starts_with("Context Pilot: ")
    });
    // Ctrl-C at the gate asks whether to quit while the run waits (the question stays on
    // screen until answered); y quits.
    run.keys(&["C-c"]);
    run.wait("the TUI to ask whether to quit", &|| {
        run.screen().contains("Quit anyway? (y/n)")
    });
    run.keys(&["y"]);
    run.wait("the TUI to exit", &|| run.exited());
    assert_eq!(run.title(), "title-before-cp");
    drop(run.config);
}
