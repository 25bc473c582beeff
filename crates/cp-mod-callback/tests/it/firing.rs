//! Firing through real scripts in real consoles.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers outside #[test] fns also fail loudly on any unexpected error"
)]

use crate::util::{Fixture, batch, edit, group_members, run_id};
use cp_base::{ChangeKind, Level, Module, WorkerId};
use cp_mod_callback::CallbackModule;
use serde_json::json;

/// Lines of a file the script appended to (empty when it never ran).
fn lines(f: &Fixture, rel: &str) -> Vec<String> {
    f.read(rel).lines().map(str::to_owned).collect()
}

#[test]
fn blocking_pass_shows_the_success_message_and_opens_no_panel() {
    let f = Fixture::new();
    f.create(
        "check",
        json!("*.rs"),
        "echo \"$CP_CALLBACK_NAME|$CP_PROJECT_ROOT|$CP_RUN_ID\" > env.out",
        json!({"blocking": true, "timeout": 60, "success_message": "all good"}),
    );
    f.write("src/a.rs", "fn main() {}");
    let (now, held) = f.fire(&edit(&["src/a.rs"]));
    assert!(now.is_empty(), "{now:?}");
    assert_eq!(held.len(), 1);
    assert_eq!(held[0].call_index, 0);
    let note = &held[0].text;
    assert!(
        note.starts_with("Callback 'check' passed: all good (run "),
        "{note}"
    );
    let env = f.read("env.out");
    assert_eq!(
        env.trim(),
        format!("check|{}|{}", f.root.display(), run_id(note))
    );
    assert!(f.opened_panels().is_empty());
    assert_eq!(f.panel_ids(), vec!["callbacks"]);
}

#[test]
fn blocking_failure_names_the_edit_shows_the_tail_and_opens_the_panel() {
    let f = Fixture::new();
    f.create(
        "check",
        json!("*.rs"),
        "for i in 1 2 3 4 5 6 7; do echo \"out $i\"; done\nexit 3",
        json!({"blocking": true, "timeout": 60}),
    );
    f.write("x.md", "");
    f.write("src/a.rs", "");
    let (_, held) = f.fire(&batch(&[
        &[("x.md", ChangeKind::Modified)],
        &[("src/a.rs", ChangeKind::Modified)],
    ]));
    assert_eq!(held.len(), 1);
    assert_eq!(
        held[0].call_index, 1,
        "the note goes with the edit that triggered it"
    );
    let note = &held[0].text;
    assert!(
        note.contains("Callback 'check' FAILED (exited with code 3)"),
        "{note}"
    );
    assert!(note.contains("triggered by File_edit src/a.rs"), "{note}");
    assert!(
        note.contains("```\nout 3\nout 4\nout 5\nout 6\nout 7\n```"),
        "{note}"
    );
    assert!(!note.contains("out 2"), "{note}");
    assert!(note.contains("The edit itself was applied."), "{note}");
    let panel = format!("callback-run:{}", run_id(note));
    assert!(
        note.contains(&format!("panel `{panel}` (opened)")),
        "{note}"
    );
    assert_eq!(f.opened_panels(), vec![panel.clone()]);
    assert!(f.panel_ids().contains(&panel));
    let ctx = {
        let panels = f.registry.with_module("callback", |m| m.panels()).unwrap();
        let p = panels.iter().find(|p| p.id() == panel).unwrap();
        p.llm_context()
    };
    assert!(ctx.contains("out 1") && ctx.contains("FAILED"), "{ctx}");
    // The user can close it.
    assert!(f.registry.close_panel(&panel));
    assert_eq!(f.panel_ids(), vec!["callbacks"]);
}

#[test]
fn blocking_timeout_kills_the_whole_process_group() {
    let f = Fixture::new();
    f.create(
        "slow",
        json!("*.rs"),
        "echo $$ > pgid.out\nsleep 300 &\nsleep 300",
        json!({"blocking": true, "timeout": 1}),
    );
    f.write("a.rs", "");
    let (_, held) = f.fire(&edit(&["a.rs"]));
    let note = &held[0].text;
    assert!(
        note.contains("Callback 'slow' TIMED OUT after 1s and its process group was killed"),
        "{note}"
    );
    let pgid: u32 = f.read("pgid.out").trim().parse().unwrap();
    assert!(
        group_members(pgid).is_empty(),
        "left behind: {:?}",
        group_members(pgid)
    );
}

/// Live processes whose command line carries a unique tag; killed on drop, so a failing
/// test leaves none behind.
struct Tagged(String);

impl Tagged {
    fn new() -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        Self(format!("{}{nanos:09}", std::process::id()))
    }

    fn pids(&self) -> Vec<u32> {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter(|&pid| {
                let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                let zombie =
                    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| {
                        s.rsplit_once(')')
                            .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
                    });
                !zombie && String::from_utf8_lossy(&cmd).contains(&self.0)
            })
            .collect()
    }
}

impl Drop for Tagged {
    fn drop(&mut self) {
        for pid in self.pids() {
            let _ = std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status();
        }
    }
}

#[test]
fn blocking_timeout_ends_a_daemon_the_script_started_with_setsid() {
    let f = Fixture::new();
    let tag = Tagged::new();
    f.create(
        "daemonizes",
        json!("*.rs"),
        &format!(
            "(setsid bash -c 'sleep 200.{t}' &)\nsleep 300.{t}",
            t = tag.0
        ),
        json!({"blocking": true, "timeout": 1}),
    );
    f.write("a.rs", "");
    let (_, held) = f.fire(&edit(&["a.rs"]));
    assert!(held[0].text.contains("TIMED OUT"), "{}", held[0].text);
    // Safety limit only: the kill is complete before the run reports.
    cp_e2e::eventually_with(
        "the run's processes to end",
        std::time::Duration::from_secs(60),
        || tag.pids().is_empty(),
        || format!("processes of the run survive: {:?}", tag.pids()),
    );
}

#[test]
fn background_runs_note_at_once_and_notify_when_done() {
    let f = Fixture::new();
    f.create(
        "bg",
        json!("*.txt"),
        "case \"$CP_CHANGED_FILES\" in *bad*) echo broken; exit 1;; esac",
        json!({}),
    );
    f.write("good.txt", "");
    let (now, held) = f.fire(&edit(&["good.txt"]));
    assert!(held.is_empty());
    assert_eq!(now.len(), 1);
    assert!(
        now[0]
            .text
            .starts_with("Callback 'bg' started in background (run "),
        "{}",
        now[0].text
    );
    let done = f.next_notification();
    assert_eq!(done.level, Level::Success);
    assert!(!done.wake_agent);
    assert!(done.text.contains(&run_id(&now[0].text)), "{}", done.text);
    assert!(f.opened_panels().is_empty());

    f.write("bad.txt", "");
    let (now, _) = f.fire(&edit(&["bad.txt"]));
    let done = f.next_notification();
    assert_eq!(done.level, Level::Error);
    assert!(done.wake_agent, "a failure wakes an idle agent");
    assert!(
        done.text.contains("FAILED (exited with code 1)"),
        "{}",
        done.text
    );
    assert!(done.text.contains("broken"), "{}", done.text);
    let panel = format!("callback-run:{}", run_id(&now[0].text));
    assert_eq!(f.opened_panels(), vec![panel]);
}

#[test]
fn once_per_batch_runs_once_with_every_matched_file() {
    let f = Fixture::new();
    f.create(
        "all",
        json!("*.rs"),
        "mkdir -p runs; printf '%s\\n' \"$CP_CHANGED_FILES\" > \"runs/$CP_RUN_ID\"",
        json!({"blocking": true, "timeout": 60, "once_per_batch": true}),
    );
    for p in ["a.rs", "b/b.rs", "c.rs", "d.md"] {
        f.write(p, "");
    }
    let (_, held) = f.fire(&edit(&["a.rs", "b/b.rs", "c.rs", "d.md"]));
    let runs: Vec<_> = std::fs::read_dir(f.root.join("runs")).unwrap().collect();
    assert_eq!(runs.len(), 1);
    let id = run_id(&held.last().unwrap().text);
    assert_eq!(
        lines(&f, &format!("runs/{id}")),
        vec!["a.rs", "b/b.rs", "c.rs"]
    );
    // The result goes with the last triggering edit; the others point to it.
    assert_eq!(held.last().unwrap().call_index, 2);
    let pointers: Vec<_> = held
        .iter()
        .filter(|n| n.text.contains("ran for this edit too"))
        .collect();
    assert_eq!(pointers.len(), 2);
}

#[test]
fn per_file_callbacks_run_once_per_file() {
    let f = Fixture::new();
    f.create(
        "each",
        json!("*.rs"),
        "mkdir -p runs; printf '%s\\n' \"$CP_CHANGED_FILES\" > \"runs/$CP_RUN_ID\"",
        json!({"blocking": true, "timeout": 60, "once_per_batch": false}),
    );
    for p in ["a.rs", "b.rs", "c.rs"] {
        f.write(p, "");
    }
    let (_, held) = f.fire(&edit(&["a.rs", "b.rs", "c.rs"]));
    assert_eq!(held.len(), 3);
    let mut seen: Vec<String> = std::fs::read_dir(f.root.join("runs"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    seen.sort();
    assert_eq!(seen, vec!["a.rs\n", "b.rs\n", "c.rs\n"]);
    for (i, note) in held.iter().enumerate() {
        assert_eq!(note.call_index, i);
        assert!(
            note.text.starts_with("Callback 'each' passed"),
            "{}",
            note.text
        );
    }
}

#[test]
fn the_blocking_runs_of_one_batch_run_side_by_side() {
    let f = Fixture::new();
    // Each run waits (up to 20 s) until all three have started: it passes only if they
    // overlap, as they did when each started on a thread of its own.
    f.create(
        "each",
        json!("*.rs"),
        "mkdir -p started; touch \"started/$CP_CHANGED_FILES\"\n\
         for _ in $(seq 200); do [ \"$(ls started | wc -l)\" -ge 3 ] && exit 0; sleep 0.1; done\n\
         echo alone; exit 1",
        json!({"blocking": true, "timeout": 60, "once_per_batch": false}),
    );
    for p in ["a.rs", "b.rs", "c.rs"] {
        f.write(p, "");
    }
    let (_, held) = f.fire(&edit(&["a.rs", "b.rs", "c.rs"]));
    assert_eq!(held.len(), 3);
    for note in &held {
        assert!(
            note.text.starts_with("Callback 'each' passed"),
            "{}",
            note.text
        );
    }
}

#[test]
fn a_blocking_run_whose_hold_is_dropped_still_runs() {
    let f = Fixture::new();
    f.create(
        "check",
        json!("*.rs"),
        "echo ran > ran.out",
        json!({"blocking": true, "timeout": 60}),
    );
    f.write("a.rs", "");
    let response = f
        .registry
        .with_module("callback", |m| m.on_batch(&edit(&["a.rs"]), &f.env))
        .unwrap();
    assert!(response.hold.is_some());
    drop(response);
    cp_e2e::eventually("the run", std::time::Duration::from_secs(60), || {
        f.read("ran.out").trim() == "ran"
    });
}

#[test]
fn one_at_a_time_never_overlaps_and_coalesces_queued_triggers() {
    let f = Fixture::new();
    let script = "if ! mkdir lock.d 2>/dev/null; then echo overlap >> overlap.out; fi\n\
                  printf '%s\\n' \"$CP_CHANGED_FILES\" | paste -sd, >> runs.out\n\
                  sleep 0.5\nrmdir lock.d 2>/dev/null\ntrue";
    f.create(
        "serial",
        json!("*.rs"),
        script,
        json!({"blocking": true, "timeout": 60, "once_per_batch": false, "one_at_a_time": true}),
    );
    for p in ["a.rs", "b.rs", "c.rs"] {
        f.write(p, "");
    }
    let (_, held) = f.fire(&edit(&["a.rs", "b.rs", "c.rs"]));
    assert_eq!(f.read("overlap.out"), "", "two runs overlapped");
    // a.rs ran first; b.rs and c.rs were queued behind it and coalesced into one run.
    assert_eq!(lines(&f, "runs.out"), vec!["a.rs", "b.rs,c.rs"]);
    assert_eq!(held.len(), 3);
    let queued: Vec<_> = held
        .iter()
        .filter(|n| n.text.contains("waited for the earlier run"))
        .collect();
    assert_eq!(queued.len(), 2);
    assert_eq!(
        run_id(&queued[0].text.replace("(waited", "")),
        run_id(&queued[1].text.replace("(waited", ""))
    );
}

#[test]
fn one_at_a_time_background_triggers_queue_behind_a_running_run() {
    let f = Fixture::new();
    f.create(
        "serial-bg",
        json!("*.rs"),
        "printf '%s\\n' \"$CP_CHANGED_FILES\" | paste -sd, >> runs.out\nsleep 0.5",
        json!({"one_at_a_time": true}),
    );
    f.write("a.rs", "");
    f.write("b.rs", "");
    let (first, _) = f.fire(&edit(&["a.rs"]));
    let (second, _) = f.fire(&edit(&["b.rs"]));
    let (third, _) = f.fire(&edit(&["a.rs"]));
    assert!(
        first[0].text.contains("started in background"),
        "{}",
        first[0].text
    );
    assert!(
        second[0].text.contains("is already running"),
        "{}",
        second[0].text
    );
    assert!(
        third[0]
            .text
            .contains("merged with triggers queued earlier"),
        "{}",
        third[0].text
    );
    f.next_notification();
    f.next_notification();
    assert_eq!(lines(&f, "runs.out"), vec!["a.rs", "a.rs,b.rs"]);
}

#[test]
fn inactive_paused_and_excluded_callbacks_do_not_fire() {
    let f = Fixture::new();
    f.create(
        "mark",
        json!(["*.rs", "!gen/"]),
        "echo ran >> ran.out",
        json!({"blocking": true, "timeout": 60}),
    );
    f.write("gen/x.rs", "");
    f.write("a.rs", "");
    // Excluded path.
    let (now, held) = f.fire(&edit(&["gen/x.rs"]));
    assert!(now.is_empty() && held.is_empty());
    // Another worker, for whom it is inactive.
    let other = f.registry_for("w2");
    let env2 = f.env_for("w2");
    let (now, held) = crate::util::fire_as(&other, &env2, &edit(&["a.rs"]));
    assert!(now.is_empty() && held.is_empty());
    // Paused, then toggled off.
    f.call("Callback_toggle", json!({"id": "all", "active": false}));
    assert!(f.fire(&edit(&["a.rs"])).1.is_empty());
    f.call("Callback_toggle", json!({"id": "all", "active": true}));
    f.call("Callback_toggle", json!({"id": "CB1", "active": false}));
    assert!(f.fire(&edit(&["a.rs"])).1.is_empty());
    assert_eq!(f.read("ran.out"), "");
    // Back on: a deleted file counts as changed.
    f.call("Callback_toggle", json!({"id": "CB1", "active": true}));
    let (_, held) = f.fire(&batch(&[&[("gone.rs", ChangeKind::Deleted)]]));
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!(f.read("ran.out"), "ran\n");
}

#[test]
fn a_formatter_that_rewrites_the_file_is_reported() {
    let f = Fixture::new();
    f.create(
        "fmt",
        json!("*.rs"),
        "while read -r file; do printf '// formatted\\n' >> \"$file\"; done <<< \"$CP_CHANGED_FILES\"",
        json!({"blocking": true, "timeout": 60, "success_message": "formatted"}),
    );
    f.write("src/a.rs", "fn a(){}\n");
    f.write("src/b.rs", "fn b(){}\n");
    let (_, held) = f.fire(&edit(&["src/a.rs"]));
    let note = &held[0].text;
    assert!(
        note.ends_with("Callback 'fmt' modified src/a.rs; re-read it before editing again."),
        "{note}"
    );
    assert_eq!(f.read("src/a.rs"), "fn a(){}\n// formatted\n");
    // A check that leaves files alone says nothing of the sort.
    f.call(
        "Callback_upsert",
        json!({"action": "update", "id": "CB1", "script_content": "true"}),
    );
    let (_, held) = f.fire(&edit(&["src/b.rs"]));
    assert!(!held[0].text.contains("modified"), "{}", held[0].text);
}

#[test]
fn scripts_run_in_their_cwd_and_missing_scripts_are_reported() {
    let f = Fixture::new();
    std::fs::create_dir_all(f.root.join("sub")).unwrap();
    f.create(
        "where",
        json!("*.rs"),
        "pwd > \"$CP_PROJECT_ROOT/where.out\"",
        json!({"blocking": true, "timeout": 60, "cwd": "sub"}),
    );
    f.write("a.rs", "");
    f.fire(&edit(&["a.rs"]));
    assert_eq!(
        f.read("where.out").trim(),
        f.root.join("sub").display().to_string()
    );
    std::fs::remove_file(f.root.join(".context-pilot/scripts/where.sh")).unwrap();
    // Removing a script by hand is a change from outside the tools: trust it again.
    crate::util::trust(&f.project);
    let (_, held) = f.fire(&edit(&["a.rs"]));
    assert!(held[0].text.contains("could not start"), "{}", held[0].text);
    assert!(
        held[0].text.contains("recreate it with Callback_upsert"),
        "{}",
        held[0].text
    );
}

#[test]
fn patterns_compile_once_per_config_change_not_per_edit() {
    let f = Fixture::new();
    let mut module = CallbackModule::with_console(
        crate::util::project(&f.root),
        WorkerId::default(),
        crate::util::console_config(&f.root),
    );
    let create = |m: &mut CallbackModule, name: &str| {
        let args = json!({"action": "create", "name": name, "pattern": "*.none", "script_content": "true"});
        let r = m.call_tool("Callback_upsert", &args, &f.env).finish();
        assert!(!r.is_error, "{}", r.text);
    };
    create(&mut module, "n");
    let before = module.pattern_builds();
    for _ in 0..5 {
        let response = module.on_batch(&edit(&["a.rs"]), &f.env);
        assert!(response.hold.is_none() && response.notes.is_empty());
    }
    assert_eq!(module.pattern_builds(), before);
    // Another process changes the config: one rebuild, at the next batch.
    f.create("m", json!("*.other"), "true", json!({}));
    module.on_batch(&edit(&["a.rs"]), &f.env);
    module.on_batch(&edit(&["b.rs"]), &f.env);
    assert_eq!(module.pattern_builds(), before + 1);
}

/// Issue 14 §1: a callback created through `Callback_upsert` keeps the project trusted and
/// runs; a hand edit of its script (from outside Context Pilot) stops it until the person
/// trusts the project again.
#[test]
fn a_hand_edited_script_does_not_run_until_trusted_again() {
    let f = Fixture::new();
    f.create(
        "mark",
        json!("*.rs"),
        "echo ran >> ran.log",
        json!({"blocking": true, "timeout": 60}),
    );
    assert!(f.project.is_trusted(), "{:?}", f.project.trust_state());
    f.write("src/a.rs", "");
    let (_, held) = f.fire(&edit(&["src/a.rs"]));
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!(lines(&f, "ran.log").len(), 1);

    let script = f.root.join(".context-pilot/scripts/mark.sh");
    let text = std::fs::read_to_string(&script).unwrap();
    std::fs::write(&script, format!("{text}echo edited >> ran.log\n")).unwrap();
    assert_eq!(f.project.trust_state(), cp_base::TrustState::Changed);
    let (now, held) = f.fire(&edit(&["src/a.rs"]));
    assert!(now.is_empty() && held.is_empty(), "{now:?} {held:?}");
    assert_eq!(lines(&f, "ran.log").len(), 1, "the edited script ran");

    crate::util::trust(&f.project);
    let (_, held) = f.fire(&edit(&["src/a.rs"]));
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!(lines(&f, "ran.log"), vec!["ran", "ran", "edited"]);
}

/// The Callbacks panel's badge, after the module picked up what finished.
fn callbacks_badge(f: &Fixture) -> String {
    f.registry.tick(&f.env);
    let panels = f.registry.with_module("callback", |m| m.panels()).unwrap();
    let panel = panels.iter().find(|p| p.id() == "callbacks").unwrap();
    panel.badge().unwrap()
}

#[test]
fn the_callbacks_badge_shows_a_failing_callback_until_it_passes_again() {
    let f = Fixture::new();
    f.create(
        "check",
        json!("*.rs"),
        "test ! -e broken",
        json!({"blocking": true, "timeout": 60}),
    );
    f.write("a.rs", "");
    assert_eq!(callbacks_badge(&f), "1/1");
    f.write("broken", "");
    let (_, held) = f.fire(&edit(&["a.rs"]));
    assert!(held[0].text.contains("Callback 'check' FAILED"), "{held:?}");
    assert_eq!(callbacks_badge(&f), "1/1 ✗1");
    std::fs::remove_file(f.root.join("broken")).unwrap();
    let (_, held) = f.fire(&edit(&["a.rs"]));
    assert!(held[0].text.contains("Callback 'check' passed"), "{held:?}");
    assert_eq!(callbacks_badge(&f), "1/1");
}

/// Issue 17: while a blocking run holds the batch, the Callbacks panel's published activity
/// names it (the TUI's progress line shows "callback slow"); once it ends, it is gone.
#[test]
fn a_running_blocking_callback_is_named_in_the_panels_activity() {
    let f = Fixture::new();
    f.create(
        "slow",
        json!("*.rs"),
        "touch started; for _ in $(seq 1200); do test -e release && exit 0; sleep 0.05; done; exit 1",
        json!({"blocking": true, "timeout": 90}),
    );
    f.write("a.rs", "");
    let (registry, env) = (f.registry.clone(), f.env.clone());
    let firing =
        std::thread::spawn(move || crate::util::fire_as(&registry, &env, &edit(&["a.rs"])));
    let activity = || {
        f.registry.tick(&f.env);
        f.registry.views().activity()
    };
    cp_e2e::eventually_with(
        "the activity to name the running callback",
        std::time::Duration::from_secs(60),
        || f.root.join("started").exists() && activity() == ["callback slow"],
        || format!("the activity: {:?}", activity()),
    );
    f.write("release", "");
    let (_, held) = firing.join().unwrap();
    assert!(held[0].text.contains("Callback 'slow' passed"), "{held:?}");
    assert!(activity().is_empty(), "{:?}", activity());
}

/// Draws panel `id` of the callback module into a `width`×`height` buffer.
fn draw_panel(f: &Fixture, id: &str, width: u16, height: u16) -> cp_base::ratatui::buffer::Buffer {
    let panels = f.registry.with_module("callback", |m| m.panels()).unwrap();
    let panel = panels.iter().find(|p| p.id() == id).unwrap();
    let area = cp_base::ratatui::layout::Rect::new(0, 0, width, height);
    let mut buf = cp_base::ratatui::buffer::Buffer::empty(area);
    panel.render(area, &mut buf, &cp_base::PanelView::default());
    buf
}

#[test]
fn a_failure_panel_keeps_the_colours_and_replaces_the_callbacks_last_one() {
    let f = Fixture::new();
    f.create(
        "pytest",
        json!("*.py"),
        "printf 'test_a.py \\033[32m.\\033[0m\\033[31mF\\033[0m\\n'\nexit 1",
        json!({"blocking": true, "timeout": 60}),
    );
    f.write("a.py", "");
    let (_, first) = f.fire(&edit(&["a.py"]));
    let first = format!("callback-run:{}", run_id(&first[0].text));
    let (_, second) = f.fire(&edit(&["a.py"]));
    let second = format!("callback-run:{}", run_id(&second[0].text));
    // The second failure of the same callback replaces the first panel.
    assert_eq!(f.panel_ids(), vec!["callbacks".to_owned(), second.clone()]);
    assert_ne!(first, second);

    let buf = draw_panel(&f, &second, 60, 6);
    let row = |y: u16| -> String { (0..60).map(|x| buf[(x, y)].symbol()).collect() };
    let y = (0..6)
        .find(|&y| row(y).starts_with("test_a.py"))
        .unwrap_or_else(|| panic!("no output row: {:?}", (0..6).map(row).collect::<Vec<_>>()));
    assert_eq!(buf[(10, y)].symbol(), ".");
    assert_eq!(
        buf[(10, y)].fg,
        cp_base::ratatui::style::Color::Indexed(2),
        "the pass dot stays green"
    );
    assert_eq!(buf[(11, y)].symbol(), "F");
    assert_eq!(
        buf[(11, y)].fg,
        cp_base::ratatui::style::Color::Indexed(1),
        "the failure stays red"
    );

    // Closing it leaves no older failure of the callback behind.
    assert!(f.registry.close_panel(&second));
    assert_eq!(f.panel_ids(), vec!["callbacks"]);
}
