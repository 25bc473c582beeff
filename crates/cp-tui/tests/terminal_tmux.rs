//! In tmux, as a person would run it: quitting restores the terminal exactly (`stty -a`) and
//! gives back the title it had before (the alerts of a run change it).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

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

fn wait_file(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(200));
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
        "cd {d}; export XDG_CONFIG_HOME={c}; stty -a > {d}/before.txt; {bin}; stty -a > {d}/after.txt; sleep 30",
        d = dir.display(),
        c = cp_e2e::config_home().display()
    );
    let _tmux = start_session(socket, &session, &script);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let screen = tmux(&["-S", socket, "capture-pane", "-p", "-t", &session]);
        if screen.contains("Conversation") && screen.contains("worker main") {
            break;
        }
        assert!(Instant::now() < deadline, "the TUI did not open:\n{screen}");
        std::thread::sleep(Duration::from_millis(50));
    }
    tmux(&["-S", socket, "send-keys", "-t", &session, "C-c"]);
    wait_file(&dir.join("after.txt"));
    let before = std::fs::read_to_string(dir.join("before.txt")).unwrap();
    let after = std::fs::read_to_string(dir.join("after.txt")).unwrap();
    assert!(before.contains("speed"), "stty output missing: {before}");
    assert_eq!(before, after, "the terminal settings changed");
}

/// The title the terminal had before the TUI started is back once it exits, though a
/// workflow alert changed it meanwhile (a failed phase): the TUI saves it on the terminal's
/// title stack and restores it on the way out.
#[test]
fn quitting_restores_the_terminals_title() {
    let repo = cp_e2e::git_repo();
    let dir = repo.path();
    std::fs::write(
        dir.join("wf.yaml"),
        "name: failing\nphases:\n  - id: only\n    prompt: Do it.\n",
    )
    .unwrap();
    cp_e2e::git(dir, &["add", "wf.yaml"]);
    cp_e2e::git(dir, &["commit", "-q", "-m", "workflow"]);
    let server = cp_e2e::LlmServer::start().unwrap();
    // Every turn fails at once (a request the API refuses): the phase fails, which alerts.
    server.answer_side_requests(|request| {
        cp_e2e::anthropic::side_reply(request).or_else(|| {
            Some(cp_e2e::anthropic::error(
                400,
                "invalid_request_error",
                "scripted refusal",
            ))
        })
    });
    let session = format!("cp-title-{}", std::process::id());
    let socket = dir.join("tmux.sock");
    let socket = socket.to_str().unwrap();
    let bin = env!("CARGO_BIN_EXE_context-pilot");
    let script = format!(
        "cd {d}; export XDG_CONFIG_HOME={c} ANTHROPIC_BASE_URL={u} ANTHROPIC_API_KEY=test-key; \
         unset OPENAI_API_KEY OPENAI_BASE_URL; printf '\\033]2;title-before-cp\\033\\\\'; \
         {bin} run wf.yaml --max-restarts 0; echo $? > {d}/exited.txt; sleep 30",
        d = dir.display(),
        c = cp_e2e::config_home().display(),
        u = server.url(),
    );
    let _tmux = start_session(socket, &session, &script);
    let title = || {
        tmux(&[
            "-S",
            socket,
            "display",
            "-p",
            "-t",
            &session,
            "#{pane_title}",
        ])
    };
    let wait = |what: &str, done: &dyn Fn() -> bool| {
        let deadline = Instant::now() + Duration::from_secs(120);
        while !done() {
            let screen = tmux(&["-S", socket, "capture-pane", "-p", "-t", &session]);
            assert!(
                Instant::now() < deadline,
                "{what}; title {:?}\n{screen}",
                title()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    // The alert set the title ("Context Pilot: phase … failed"), and the run's end set it
    // back to the TUI's own: the TUI has the run's end.
    wait("the alert and the run's end did not set the title", &|| {
        title().trim_end() == "Context Pilot"
    });
    // The run is over: Ctrl-C quits at once.
    tmux(&["-S", socket, "send-keys", "-t", &session, "C-c"]);
    wait("the TUI did not exit", &|| dir.join("exited.txt").exists());
    let after = title();
    assert_eq!(after.trim_end(), "title-before-cp");
}
