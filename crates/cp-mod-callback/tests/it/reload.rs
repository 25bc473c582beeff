//! Background runs survive a host reload: the module's saved state carries them, and a fresh
//! module that loads it reports each one exactly once, through the same notification.
//!
//! A reload is simulated the way `exec` behaves: the old module is saved, then dropped (the
//! console server keeps running the script), and its notice queue is thrown away; a new
//! module with a new notice queue loads the state.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers outside #[test] fns also fail loudly on any unexpected error"
)]

use std::time::Duration;

use crate::util::{Fixture, console_config, edit, run_id};
use cp_base::{Level, Module, Notice, Notification, Notifier, Panel, ToolEnv, WorkerId};
use cp_mod_callback::CallbackModule;
use cp_mod_console::{ConsoleClient, ConsoleStatus};
use serde_json::{Value, json};
use uuid::Uuid;

/// A host process: a callback module and the notice queue it posts to.
struct Host {
    module: CallbackModule,
    env: ToolEnv,
}

impl Host {
    fn start(f: &Fixture) -> Self {
        Self {
            module: CallbackModule::with_console(
                f.project.clone(),
                WorkerId::default(),
                console_config(&f.root),
            ),
            env: ToolEnv::new(f.project.clone(), WorkerId::default(), Notifier::new()),
        }
    }

    /// Fires the batch hook for edits to `paths`; returns the note of the (only) call.
    fn edit(&mut self, paths: &[&str]) -> String {
        let response = self.module.on_batch(&edit(paths), &self.env);
        assert!(response.hold.is_none(), "background callbacks never hold");
        assert_eq!(response.notes.len(), 1, "{:?}", response.notes);
        response.notes[0].text.clone()
    }

    /// Saves the state and goes away, as the host does right before `exec`.
    fn reload(self) -> Value {
        let saved = self.module.save_state().unwrap();
        drop(self);
        saved
    }

    /// A new process that loads `saved`.
    fn resume(f: &Fixture, saved: &Value) -> Self {
        let mut host = Self::start(f);
        host.module.load_state(saved, &host.env);
        host
    }

    /// Waits (up to a safety limit) until every watched run has delivered its result.
    fn settle(&self) {
        cp_e2e::eventually_with(
            "every watched run to deliver its result",
            Duration::from_secs(60),
            || self.module.watched_runs() == 0,
            || format!("runs still watched: {}", self.module.watched_runs()),
        );
    }

    /// Everything posted so far: notifications and panels asked to open.
    fn drain(&self) -> (Vec<Notification>, Vec<String>) {
        let mut notes = Vec::new();
        let mut opened = Vec::new();
        for notice in self.env.notifier.drain() {
            match notice {
                Notice::Notify(n) => notes.push(n),
                Notice::OpenPanel(id) => opened.push(id),
                Notice::Refresh => {}
            }
        }
        (notes, opened)
    }

    fn panel_ids(&self) -> Vec<String> {
        self.module.panels().iter().map(|p| p.id()).collect()
    }
}

/// The console of the saved run `run`.
fn saved_console(saved: &Value, run: &str) -> Uuid {
    let runs = saved["runs"]["runs"].as_array().unwrap();
    let entry = runs
        .iter()
        .find(|r| r["run_id"] == run)
        .unwrap_or_else(|| panic!("run {run} not saved in {saved}"));
    entry["console"]
        .as_str()
        .expect("a started run is saved with its console")
        .parse()
        .unwrap()
}

fn status_of(f: &Fixture, console: Uuid) -> ConsoleStatus {
    ConsoleClient::new(console_config(&f.root))
        .unwrap()
        .attach(console)
        .unwrap()
        .status()
        .unwrap()
}

fn wait_until_ended(f: &Fixture, console: Uuid) {
    cp_e2e::eventually(
        &format!("console {console} to end"),
        Duration::from_secs(60),
        || !status_of(f, console).is_running(),
    );
}

#[test]
fn a_failure_running_at_reload_is_reported_once_by_the_next_process() {
    let f = Fixture::new();
    f.create(
        "slow-fail",
        json!("*.rs"),
        "echo starting\nsleep 2\necho 'error: it broke'\nexit 4",
        json!({}),
    );
    f.write("src/a.rs", "");
    let mut old = Host::start(&f);
    let note = old.edit(&["src/a.rs"]);
    assert!(note.contains("started in background"), "{note}");
    let run = run_id(&note);
    assert_eq!(old.module.watched_runs(), 1);
    let old_env = old.env.clone();
    let saved = old.reload();
    let console = saved_console(&saved, &run);
    assert!(status_of(&f, console).is_running(), "saved mid-run");

    let new = Host::resume(&f, &saved);
    assert_eq!(new.module.watched_runs(), 1);
    assert_eq!(
        new.module.panel().badge().as_deref(),
        Some("1/1 (1 running)")
    );
    new.settle();
    let (notes, opened) = new.drain();
    assert_eq!(notes.len(), 1, "exactly one notification: {notes:?}");
    let done = &notes[0];
    assert_eq!(done.level, Level::Error);
    assert!(done.wake_agent, "a failure wakes an idle agent");
    assert!(
        done.text
            .contains("Callback 'slow-fail' FAILED (exited with code 4)"),
        "{}",
        done.text
    );
    assert!(
        done.text.contains("triggered by File_edit src/a.rs"),
        "{}",
        done.text
    );
    assert!(done.text.contains("error: it broke"), "{}", done.text);
    assert!(done.text.contains(&run), "{}", done.text);
    let panel = format!("callback-run:{run}");
    assert_eq!(opened, vec![panel.clone()]);
    assert!(new.panel_ids().contains(&panel), "{:?}", new.panel_ids());
    let mut refreshed = new;
    refreshed.module.refresh();
    // No longer running, and failing (issue 17): the badge says so until a run passes.
    assert_eq!(refreshed.module.panel().badge().as_deref(), Some("1/1 ✗1"));
    // The old process delivered nothing after it was saved and dropped.
    assert!(
        !old_env
            .notifier
            .drain()
            .iter()
            .any(|n| matches!(n, Notice::Notify(_))),
        "the dropped module must not report the run too"
    );
}

#[test]
fn a_pass_survives_two_reloads_and_is_reported_once() {
    let f = Fixture::new();
    f.create(
        "slow-pass",
        json!("*.rs"),
        "sleep 2\necho fine",
        json!({"success_message": "all good"}),
    );
    f.write("a.rs", "");
    let mut first = Host::start(&f);
    let run = run_id(&first.edit(&["a.rs"]));
    let saved = first.reload();
    let second = Host::resume(&f, &saved);
    assert_eq!(second.module.watched_runs(), 1);
    // The resumed run is itself saved again by the next reload.
    let saved_again = second.reload();
    assert_eq!(
        saved_console(&saved_again, &run),
        saved_console(&saved, &run)
    );
    let third = Host::resume(&f, &saved_again);
    third.settle();
    let (notes, opened) = third.drain();
    assert_eq!(notes.len(), 1, "exactly one notification: {notes:?}");
    let done = &notes[0];
    assert_eq!(done.level, Level::Success);
    assert!(!done.wake_agent);
    assert!(
        done.text
            .starts_with(&format!("Callback 'slow-pass' passed: all good (run {run}")),
        "{}",
        done.text
    );
    assert!(done.text.contains("fine"), "{}", done.text);
    assert!(opened.is_empty(), "a pass opens no panel: {opened:?}");
    assert_eq!(third.panel_ids(), vec!["callbacks"]);
}

#[test]
fn a_run_that_ended_while_no_host_ran_is_reported_from_its_log() {
    let f = Fixture::new();
    f.create(
        "quick-fail",
        json!("*.rs"),
        "sleep 1\necho boom\nexit 2",
        json!({}),
    );
    f.write("a.rs", "");
    let mut old = Host::start(&f);
    let run = run_id(&old.edit(&["a.rs"]));
    let saved = old.reload();
    let console = saved_console(&saved, &run);
    wait_until_ended(&f, console);
    // Not even the console server is left: only its metadata and log on disk.
    ConsoleClient::new(console_config(&f.root))
        .unwrap()
        .shutdown_server()
        .unwrap();

    let new = Host::resume(&f, &saved);
    new.settle();
    let (notes, opened) = new.drain();
    assert_eq!(notes.len(), 1, "exactly one notification: {notes:?}");
    assert_eq!(notes[0].level, Level::Error);
    assert!(notes[0].wake_agent);
    assert!(
        notes[0].text.contains("FAILED (exited with code 2)"),
        "{}",
        notes[0].text
    );
    assert!(notes[0].text.contains("boom"), "{}", notes[0].text);
    assert_eq!(opened, vec![format!("callback-run:{run}")]);
}

#[test]
fn a_run_lost_with_its_console_server_is_a_clear_failure() {
    let f = Fixture::new();
    f.create("long", json!("*.rs"), "echo waiting\nsleep 30", json!({}));
    f.write("a.rs", "");
    let mut old = Host::start(&f);
    let run = run_id(&old.edit(&["a.rs"]));
    let saved = old.reload();
    let console = saved_console(&saved, &run);
    let client = ConsoleClient::new(console_config(&f.root)).unwrap();
    let pid = client.server_pid().expect("the server runs the script");
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    cp_e2e::eventually(
        "the killed server to stop answering",
        Duration::from_secs(30),
        || {
            ConsoleClient::new(console_config(&f.root))
                .unwrap()
                .server_pid()
                .is_none()
        },
    );

    let new = Host::resume(&f, &saved);
    new.settle();
    let (notes, opened) = new.drain();
    assert_eq!(notes.len(), 1, "exactly one notification: {notes:?}");
    assert_eq!(notes[0].level, Level::Error);
    assert!(notes[0].wake_agent);
    assert!(
        notes[0]
            .text
            .contains("FAILED (lost: the console server running it stopped"),
        "{}",
        notes[0].text
    );
    assert_eq!(opened, vec![format!("callback-run:{run}")]);
    assert!(
        matches!(status_of(&f, console), ConsoleStatus::Lost { .. }),
        "{:?}",
        status_of(&f, console)
    );
}

#[test]
fn a_queued_one_at_a_time_trigger_is_saved_and_fired_after_the_reload() {
    let f = Fixture::new();
    f.create(
        "serial",
        json!("*.rs"),
        "printf '%s\\n' \"$CP_CHANGED_FILES\" | paste -sd, >> runs.out\nsleep 1.5",
        json!({"one_at_a_time": true}),
    );
    for file in ["a.rs", "b.rs", "c.rs", "d.rs"] {
        f.write(file, "");
    }
    let mut old = Host::start(&f);
    let first = run_id(&old.edit(&["a.rs"]));
    let queued_note = old.edit(&["b.rs"]);
    assert!(queued_note.contains("is already running"), "{queued_note}");
    let queued = queued_note
        .split("queued as run ")
        .nth(1)
        .unwrap()
        .get(..36)
        .unwrap()
        .to_owned();
    old.edit(&["c.rs"]);
    let saved = old.reload();
    assert_eq!(saved["runs"]["queued"][0]["run_id"], queued.as_str());

    let mut new = Host::resume(&f, &saved);
    // A trigger after the reload joins the restored queue instead of overlapping.
    let late = new.edit(&["d.rs"]);
    assert!(
        late.contains(&format!("is already running (run {first})")),
        "{late}"
    );
    assert!(
        late.contains(&format!("queued as run {queued}, merged")),
        "{late}"
    );
    new.settle();
    let (notes, _) = new.drain();
    let runs: Vec<String> = notes.iter().map(|n| run_id(&n.text)).collect();
    assert_eq!(runs, vec![first, queued], "{notes:?}");
    assert!(notes.iter().all(|n| n.level == Level::Success), "{notes:?}");
    let lines: Vec<String> = f.read("runs.out").lines().map(str::to_owned).collect();
    assert_eq!(
        lines,
        vec!["a.rs", "b.rs,c.rs,d.rs"],
        "the queued run ran once"
    );
}

#[test]
fn state_without_runs_still_restores_the_editor() {
    let f = Fixture::new();
    f.create("x", json!("*.rs"), "true", json!({}));
    let mut host = Host::start(&f);
    host.module.load_state(&json!({"editor": "CB1"}), &host.env);
    assert_eq!(
        host.module.editor().map(|id| id.to_string()).as_deref(),
        Some("CB1")
    );
    let bad = json!({"editor": null, "runs": {"runs": "not a list"}});
    host.module.load_state(&bad, &host.env);
    let (notes, _) = host.drain();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(notes[0].level, Level::Warning);
    assert!(
        notes[0].text.contains("could not be read"),
        "{}",
        notes[0].text
    );
}
