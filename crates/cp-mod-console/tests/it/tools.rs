//! The console tools through cp-base's registry (schema validation included), against real
//! processes.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] fns also fail loudly on any unexpected error"
)]

use std::time::Duration;

use crate::util::{assert_group_ended, group_members};
use cp_base::{
    Module, Notice, Notifier, Project, Registry, ToolCall, ToolEnv, ToolResult, WorkerId,
};
use cp_e2e::{eventually, eventually_with};
use cp_mod_console::ConsoleModule;
use serde_json::{Value, json};

const LONG: Duration = Duration::from_secs(30);

struct Host {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    registry: Registry,
    env: ToolEnv,
}

impl Host {
    fn new() -> Self {
        Self::with_module(|m| m)
    }

    fn with_module(tweak: impl FnOnce(ConsoleModule) -> ConsoleModule) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let module = tweak(ConsoleModule::with_client_config(crate::util::config(
            &root,
        )));
        let mut registry = Registry::new();
        registry.register(Box::new(module));
        let env = ToolEnv::new(Project::at(&root), WorkerId::default(), Notifier::new());
        Self {
            _dir: dir,
            root,
            registry,
            env,
        }
    }

    fn call(&self, tool: &str, args: Value) -> ToolResult {
        self.registry
            .call(&ToolCall::new("t", tool, args), &self.env)
    }

    fn create(&self, command: &str) -> String {
        let r = self.call("console_create", json!({"command": command}));
        assert!(!r.is_error, "{}", r.text);
        r.text.lines().next().unwrap().to_owned()
    }

    /// Runs `f` on the console module (waiting for it).
    fn module<R>(&self, f: impl FnOnce(&mut dyn Module) -> R) -> R {
        self.registry.with_module(ConsoleModule::ID, f).unwrap()
    }

    /// The console module's published panels.
    fn panels(&self) -> Vec<std::sync::Arc<dyn cp_base::Panel>> {
        self.registry.views().panels()
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let client = cp_mod_console::ConsoleClient::new(crate::util::config(&self.root)).unwrap();
        let _ = client.shutdown_server();
    }
}

#[test]
fn create_opens_a_panel_and_wait_reports_exit_and_output() {
    let h = Host::new();
    let r = h.call(
        "console_create",
        json!({"command": "echo hi; exit 2", "description": "demo"}),
    );
    assert!(!r.is_error, "{}", r.text);
    let id = r.text.lines().next().unwrap();
    assert!(
        uuid::Uuid::parse_str(id).is_ok(),
        "result must begin with the id: {}",
        r.text
    );
    let panel_id = format!("console:{id}");
    assert!(h.panels().iter().any(|p| p.id() == panel_id));
    assert!(
        h.env
            .notifier
            .drain()
            .contains(&Notice::OpenPanel(panel_id.clone()))
    );

    let r = h.call(
        "console_wait",
        json!({"id": id, "mode": "exit", "max_wait": 30}),
    );
    assert!(!r.is_error, "{}", r.text);
    assert!(r.text.starts_with("Condition met"), "{}", r.text);
    assert!(r.text.contains("exited with code 2"), "{}", r.text);
    assert!(r.text.contains("hi"), "{}", r.text);
}

#[test]
fn send_keys_types_into_the_console() {
    let h = Host::new();
    let id = h.create("read a; read b; echo \"got:$a:$b\"");
    let r = h.call(
        "console_send_keys",
        json!({"id": id, "input": "one\\ntwo\\n"}),
    );
    assert!(!r.is_error, "{}", r.text);
    let r = h.call(
        "console_wait",
        json!({"id": id, "mode": "pattern", "pattern": "^got:one:two$"}),
    );
    assert!(r.text.starts_with("Condition met"), "{}", r.text);
}

#[test]
fn ctrl_c_escape_interrupts_the_command() {
    let h = Host::new();
    let id = h.create("echo ready; sleep 100");
    let r = h.call(
        "console_wait",
        json!({"id": id, "mode": "pattern", "pattern": "ready"}),
    );
    assert!(r.text.starts_with("Condition met"), "{}", r.text);
    h.call("console_send_keys", json!({"id": id, "input": "\\x03"}));
    let r = h.call(
        "console_wait",
        json!({"id": id, "mode": "exit", "max_wait": 30}),
    );
    assert!(r.text.contains("terminated by SIGINT"), "{}", r.text);
}

#[test]
fn a_pattern_that_is_not_a_regex_is_matched_literally() {
    let h = Host::new();
    let id = h.create("echo 'value a(b'");
    let r = h.call(
        "console_wait",
        json!({"id": id, "mode": "pattern", "pattern": "a(b"}),
    );
    assert!(r.text.starts_with("Condition met"), "{}", r.text);
    assert!(r.text.contains("not a valid regex"), "{}", r.text);
}

#[test]
fn wait_times_out_while_the_command_runs() {
    let h = Host::new();
    let id = h.create("sleep 100");
    let r = h.call(
        "console_wait",
        json!({"id": id, "mode": "exit", "max_wait": 1}),
    );
    assert!(
        r.text.starts_with("Condition NOT met within 1s"),
        "{}",
        r.text
    );
    h.call("console_kill", json!({"id": id}));
}

#[test]
fn watch_notifies_when_the_console_exits() {
    let h = Host::new();
    let id = h.create("echo working; exit 4");
    let r = h.call("console_watch", json!({"id": id, "mode": "exit"}));
    assert!(r.text.starts_with("Watching console"), "{}", r.text);
    let mut seen = Vec::new();
    eventually("the watch's notification", LONG, || {
        seen.extend(h.env.notifier.drain());
        seen.iter().any(|n| matches!(n, Notice::Notify(_)))
    });
    let text = seen
        .iter()
        .find_map(|n| match n {
            Notice::Notify(n) => Some(n.clone()),
            _ => None,
        })
        .unwrap();
    assert!(text.wake_agent);
    assert!(text.text.contains("exited with code 4"), "{}", text.text);
    assert!(text.text.contains("working"), "{}", text.text);
}

#[test]
fn kill_takes_down_background_children() {
    let h = Host::new();
    let id = h.create("sleep 100 & sleep 100");
    let context = h.panels()[0].llm_context();
    assert!(context.contains(&id), "{context}");
    let client = cp_mod_console::ConsoleClient::new(crate::util::config(&h.root)).unwrap();
    let pid = client
        .attach(id.parse().unwrap())
        .unwrap()
        .info()
        .unwrap()
        .pid
        .unwrap();
    eventually("the console's three processes", LONG, || {
        group_members(pid).len() >= 3
    });
    let r = h.call("console_kill", json!({"id": id}));
    assert!(r.text.contains("killed on request"), "{}", r.text);
    assert_group_ended(pid);
    let r = h.call("console_kill", json!({"id": id}));
    assert!(r.text.contains("already ended"), "{}", r.text);
}

#[test]
fn easy_bash_returns_output_inline() {
    let h = Host::new();
    std::fs::create_dir(h.root.join("sub")).unwrap();
    let r = h.call(
        "console_easy_bash",
        json!({"command": "pwd; echo hello", "cwd": "sub"}),
    );
    assert!(!r.is_error, "{}", r.text);
    assert!(r.text.starts_with("exit code 0"), "{}", r.text);
    assert!(
        r.text.contains(&format!("{}/sub\nhello", h.root.display())),
        "{}",
        r.text
    );
}

#[test]
fn easy_bash_points_to_the_panel_when_output_is_long() {
    let h = Host::new();
    let r = h.call("console_easy_bash", json!({"command": "seq 1 20000"}));
    assert!(r.text.starts_with("exit code 0"), "{}", r.text);
    assert!(r.text.contains("too long"), "{}", r.text);
    assert!(r.text.contains("panel console:"), "{}", r.text);
    assert!(r.text.contains("\n20000\n"), "{}", r.text);
    assert!(r.text.len() < 8000, "{}", r.text.len());
}

#[test]
fn easy_bash_kills_the_group_on_timeout() {
    let h = Host::with_module(|m| m.easy_bash_timeout(Duration::from_millis(500)));
    let r = h.call(
        "console_easy_bash",
        json!({"command": "echo start; sleep 100 & sleep 100"}),
    );
    assert!(r.text.starts_with("timed out after"), "{}", r.text);
    assert!(r.text.contains("start"), "{}", r.text);
    let panel_id = h.panels()[0].id();
    let console = panel_id.strip_prefix("console:").unwrap().to_owned();
    let client = cp_mod_console::ConsoleClient::new(crate::util::config(&h.root)).unwrap();
    let pgid = client
        .attach(console.parse().unwrap())
        .unwrap()
        .info()
        .unwrap()
        .pid
        .unwrap();
    assert_group_ended(pgid);
}

/// Sets the host's cancel flag (Esc) once `ready` holds, from another thread.
fn cancel_when(h: &Host, ready: impl Fn() -> bool + Send + 'static) -> std::thread::JoinHandle<()> {
    let cancel = h.env.cancel.clone();
    std::thread::spawn(move || {
        // Cancels at the limit too, so a test that never got ready ends rather than hangs.
        let _ready = cp_e2e::within(LONG, || ready().then_some(()));
        cancel.cancel();
    })
}

#[test]
fn easy_bash_is_killed_as_a_group_when_the_turn_is_cancelled() {
    let h = Host::new();
    let marker = h.root.join("started");
    let seen = marker.clone();
    let canceller = cancel_when(&h, move || seen.exists());
    let r = h.call(
        "console_easy_bash",
        json!({"command": format!("sleep 100 & touch {}; sleep 100", marker.display())}),
    );
    canceller.join().unwrap();
    assert!(
        r.text.starts_with("cancelled by the user (Esc)"),
        "{}",
        r.text
    );
    let panel_id = h.panels()[0].id();
    let console = panel_id.strip_prefix("console:").unwrap().to_owned();
    let client = cp_mod_console::ConsoleClient::new(crate::util::config(&h.root)).unwrap();
    let info = client
        .attach(console.parse().unwrap())
        .unwrap()
        .info()
        .unwrap();
    assert!(!info.status.is_running(), "{}", info.status);
    assert_group_ended(info.pid.unwrap());
}

#[test]
fn console_wait_ends_on_cancel_and_leaves_the_console_running() {
    let h = Host::new();
    let id = h.create("sleep 100");
    let cancel = h.env.cancel.clone();
    cancel.cancel();
    let r = h.call(
        "console_wait",
        json!({"id": id, "mode": "exit", "max_wait": 60}),
    );
    assert!(
        r.text.starts_with("Wait cancelled by the user (Esc)"),
        "{}",
        r.text
    );
    assert!(r.text.contains("left running"), "{}", r.text);
    let r = h.call(
        "console_wait",
        json!({"id": id, "mode": "pattern", "pattern": "never", "max_wait": 60}),
    );
    assert!(
        r.text.starts_with("Wait cancelled by the user (Esc)"),
        "{}",
        r.text
    );
    let r = h.call("console_kill", json!({"id": id}));
    assert!(r.text.contains("killed on request"), "{}", r.text);
}

#[test]
fn easy_bash_timeout_ends_a_daemon_that_left_the_group_with_setsid() {
    let h = Host::with_module(|m| m.easy_bash_timeout(Duration::from_secs(2)));
    let stray = crate::util::Stray::new();
    let r = h.call("console_easy_bash", json!({"command": stray.script()}));
    assert!(r.text.starts_with("timed out after"), "{}", r.text);
    eventually_with(
        "the timed-out command's processes to end",
        LONG,
        || stray.pids().is_empty(),
        || format!("they survive: {:?}", stray.pids()),
    );
}

#[test]
fn console_kill_ends_a_daemon_that_left_the_group_with_setsid() {
    let h = Host::new();
    let stray = crate::util::Stray::new();
    let id = h.create(&stray.script());
    eventually("the setsid daemon to start", LONG, || {
        stray.daemon_running()
    });
    let r = h.call("console_kill", json!({"id": id}));
    assert!(r.text.contains("killed on request"), "{}", r.text);
    eventually_with(
        "the killed console's processes to end",
        LONG,
        || stray.pids().is_empty(),
        || format!("they survive: {:?}", stray.pids()),
    );
}

#[test]
fn bad_input_gets_clear_errors_and_changes_nothing() {
    let h = Host::new();
    let id = h.create("sleep 100");
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "console_wait",
            json!({"id": "nope", "mode": "exit"}),
            "unknown console id `nope`",
        ),
        (
            "console_kill",
            json!({"id": uuid::Uuid::new_v4().to_string()}),
            "unknown console id",
        ),
        (
            "console_send_keys",
            json!({"id": "x", "input": "a"}),
            "unknown console id `x`",
        ),
        (
            "console_wait",
            json!({"id": id, "mode": "pattern", "pattern": "(?:a{1000}){1000}"}),
            "invalid regex",
        ),
        (
            "console_wait",
            json!({"id": id, "mode": "pattern"}),
            "'pattern' is required",
        ),
        (
            "console_wait",
            json!({"id": id, "mode": "exit", "max_wait": 0}),
            "'max_wait'",
        ),
        (
            "console_wait",
            json!({"id": id, "mode": "exit", "max_wait": 601}),
            "'max_wait'",
        ),
        ("console_wait", json!({"id": id, "mode": "later"}), "'mode'"),
        (
            "console_create",
            json!({"command": "true", "cwd": "missing"}),
            "does not exist",
        ),
        (
            "console_create",
            json!({"command": "true", "cwd": ".."}),
            "outside the project root",
        ),
        (
            "console_easy_bash",
            json!({"command": "true", "cwd": "/"}),
            "outside the project root",
        ),
        (
            "console_create",
            json!({"command": "   "}),
            "'command' is empty",
        ),
        ("console_easy_bash", json!({"command": ""}), "'command'"),
        (
            "console_send_keys",
            json!({"id": id, "input": "\\xZ"}),
            "valid byte escape",
        ),
    ];
    for (tool, args, expected) in cases {
        let r = h.call(tool, args.clone());
        assert!(r.is_error, "{tool} {args} should fail: {}", r.text);
        assert!(r.text.contains(expected), "{tool} {args}: {}", r.text);
        assert!(r.text.starts_with(tool), "{tool} {args}: {}", r.text);
    }
    // The handler checks max_wait itself too, for hosts that skip schema validation.
    let r = h
        .module(|m| {
            m.call_tool(
                "console_wait",
                &json!({"id": id, "mode": "exit", "max_wait": 900}),
                &h.env,
            )
        })
        .finish();
    assert!(
        r.is_error && r.text.contains("expected 1 to 600"),
        "{}",
        r.text
    );
    assert_eq!(h.panels().len(), 1, "a failed call must not open panels");
    h.call("console_kill", json!({"id": id}));
}

#[test]
fn a_restarted_host_reattaches_and_shows_output_printed_meanwhile() {
    let h = Host::new();
    let id = h.create("echo before; read x; echo \"after $x\"");
    let r = h.call(
        "console_wait",
        json!({"id": id, "mode": "pattern", "pattern": "before"}),
    );
    assert!(r.text.starts_with("Condition met"), "{}", r.text);
    let saved = h.module(|m| m.save_state()).unwrap();
    // The host goes away; the console keeps running and prints while no host runs.
    h.module(|m| m.close_panel(&format!("console:{id}")));
    let client = cp_mod_console::ConsoleClient::new(crate::util::config(&h.root)).unwrap();
    let console = client.attach(id.parse().unwrap()).unwrap();
    console.send(b"meanwhile\n").unwrap();
    console.wait_exit(LONG).unwrap();

    let mut fresh = ConsoleModule::with_client_config(crate::util::config(&h.root));
    fresh.load_state(&saved, &h.env);
    assert_eq!(fresh.console_ids(), vec![id.parse::<uuid::Uuid>().unwrap()]);
    let panels = fresh.panels();
    eventually("the panel to show \"after meanwhile\"", LONG, || {
        panels[0].llm_context().contains("after meanwhile")
    });
    assert!(panels[0].llm_context().contains("before"));
}

#[test]
fn quick_commands_that_passed_leave_no_panel_and_failures_keep_theirs() {
    let h = Host::new();
    let ok = h.call("console_easy_bash", json!({"command": "echo fine"}));
    assert!(ok.text.starts_with("exit code 0"), "{}", ok.text);
    let bad = h.call(
        "console_easy_bash",
        json!({"command": "echo broken; exit 3"}),
    );
    assert!(bad.text.starts_with("exit code 3"), "{}", bad.text);
    // The panels learn the exit from their feeders; ticks drop the passed one.
    eventually_with(
        "only the failed console's panel",
        LONG,
        || {
            h.registry.tick(&h.env);
            let panels = h.panels();
            panels.len() == 1 && panels[0].title() == "echo broken; exit 3"
        },
        || {
            let titles: Vec<String> = h.panels().iter().map(|p| p.title()).collect();
            format!("the panels: {titles:?}")
        },
    );
}
