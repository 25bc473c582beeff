//! The `e` key on the Callbacks panel: the open callback's script goes to an editor (here a
//! small script standing in for `$EDITOR`), and the result is applied by `Callback_upsert`
//! with its usual checks; a refused result keeps the old script.

use std::sync::mpsc::{self, Receiver};

use cp_base::{Notifier, Project, ToolCall, ToolEnv, WorkerId};
use cp_mod_callback::CallbackModule;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;

use crate::conversation::Entry;
use crate::editor::edit_text;
use crate::events::AppEvent;
use crate::{AgentState, App, map_key};
use cp_host::Host;

/// An app on a fresh project with callback CB1 `fmt` open in the Callbacks editor.
fn app_with_open_editor(root: &std::path::Path) -> (App, Receiver<AppEvent>) {
    let project = Project::at(root);
    let worker = WorkerId::default();
    let env = ToolEnv::new(project.clone(), worker.clone(), Notifier::new());
    let host = Host::builder(env)
        .module(Box::new(CallbackModule::new(project, worker)))
        .build();
    let calls = [
        ToolCall::new(
            "1",
            "Callback_upsert",
            json!({"action": "create", "name": "fmt", "pattern": "*.rs",
                   "script_content": "echo old"}),
        ),
        ToolCall::new("2", "Callback_open_editor", json!({"id": "CB1"})),
    ];
    for result in cp_base::run_batch(host.registry(), &calls, host.env()) {
        assert!(!result.is_error, "{}", result.text);
    }
    let (tx, rx) = mpsc::channel();
    (App::new(host, tx, AgentState::default()), rx)
}

/// Presses `e` on the Callbacks panel and runs `editor` (a shell command) on the text.
fn edit_with(app: &mut App, rx: &Receiver<AppEvent>, editor: &str) {
    app.select("callbacks");
    app.apply(crate::Action::FocusNext);
    let e = KeyEvent::new(KeyCode::Char('e'), KeyModifiers::NONE);
    app.apply(map_key(e, app.key_context()).unwrap());
    let edit = app
        .take_external_edit()
        .expect("the e key asks for an edit");
    assert_eq!(edit.file_name, "fmt.sh");
    assert!(edit.text.contains("echo old"), "{}", edit.text);
    let edited = edit_text(editor, &edit.file_name, &edit.text);
    app.finish_external_edit(&edit, edited);
    // The change is applied by a tool batch on a worker thread; wait for it to finish.
    super::until_batch_done(app, rx);
}

/// The last tool result in the conversation: whether it is an error, and its text.
fn last_result(app: &mut App) -> (bool, String) {
    let (conversation, _, _) = app.parts_for_test();
    conversation
        .entries()
        .iter()
        .rev()
        .find_map(|e| match e {
            Entry::Tool {
                result: Some(r), ..
            } => Some((r.is_error, r.text.clone())),
            _ => None,
        })
        .unwrap()
}

#[test]
fn the_edited_script_is_saved_through_callback_upsert() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut app, rx) = app_with_open_editor(tmp.path());
    let fake_editor = tmp.path().join("editor.sh");
    std::fs::write(&fake_editor, "sed -i 's/echo old/echo new/' \"$1\"\n").unwrap();
    edit_with(&mut app, &rx, &format!("sh {}", fake_editor.display()));
    let (is_error, text) = last_result(&mut app);
    assert!(!is_error, "{text}");
    let script = std::fs::read_to_string(tmp.path().join(".context-pilot/scripts/fmt.sh")).unwrap();
    assert!(script.contains("\necho new\n"), "{script}");
    assert!(!script.contains("echo old"), "{script}");
    assert!(script.starts_with("#!/usr/bin/env bash\n# Context Pilot callback script."));
}

#[test]
fn an_edit_the_tool_refuses_is_reported_and_the_old_script_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut app, rx) = app_with_open_editor(tmp.path());
    let path = tmp.path().join(".context-pilot/scripts/fmt.sh");
    let before = std::fs::read_to_string(&path).unwrap();
    // An editor that empties the file: Callback_upsert refuses an empty script_content.
    edit_with(&mut app, &rx, "truncate -s 0");
    let (is_error, text) = last_result(&mut app);
    assert!(is_error, "{text}");
    assert!(text.contains("script_content"), "{text}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
}

#[test]
fn e_without_an_open_callback_asks_for_no_edit() {
    let mut app = crate::tests::app(true);
    app.select("callbacks");
    app.apply(crate::Action::FocusNext);
    app.apply(crate::Action::EditExternally);
    assert!(app.take_external_edit().is_none());
}
