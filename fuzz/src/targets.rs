//! The fuzz target bodies. Each takes arbitrary bytes and must return without panicking.

use std::path::Path;

use cp_base::ratatui::buffer::Buffer;
use cp_base::ratatui::layout::Rect;
use cp_base::{ConfigFile, Module, Notifier, PanelView, Project, ToolEnv, WorkerId};
use cp_hook::HookEvent;
use cp_llm::ProviderConfig;
use cp_mod_callback::{CallbackModule, CallbackSection, Matcher};
use cp_mod_checkpoint::{StopGate, StopGateConfig};
use cp_orchestrate::{Workflow, evaluate_condition};
use serde_json::Value;

/// A project in a temp dir (removed on drop) and the schemas of every real tool.
pub struct Fixture {
    dir: tempfile::TempDir,
    /// Holds the trust store, so fuzzing never writes the user's `~/.config`.
    _trust: tempfile::TempDir,
    project: Project,
    /// `(tool name, parameters schema)` of every tool a real host registers.
    schemas: Vec<(String, Value)>,
}

impl Fixture {
    /// Creates the project and a real host to read the tool schemas from.
    ///
    /// # Panics
    /// When the temp dir or the host cannot be created: nothing can be fuzzed then.
    pub fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("cp-fuzz-")
            .tempdir()
            .unwrap_or_else(|e| panic!("cannot create a temp dir: {e}"));
        let root = dir
            .path()
            .canonicalize()
            .unwrap_or_else(|_| dir.path().into());
        let trust = tempfile::tempdir().unwrap_or_else(|e| panic!("cannot create a temp dir: {e}"));
        let project = Project::at(&root)
            .with_trust_store(cp_base::TrustStore::at(trust.path().join("trust.json")));
        // A git repository, so the stop hook inspects real changes (it fails open without).
        let _ = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(&root)
            .status();
        let host = cp_host::Host::new(project.clone(), WorkerId::default())
            .unwrap_or_else(|e| panic!("cannot build a host: {e}"));
        let schemas = host
            .registry()
            .tool_defs()
            .into_iter()
            .map(|def| (def.name, def.parameters))
            .collect();
        Self {
            dir,
            _trust: trust,
            project,
            schemas,
        }
    }

    /// The project root.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Every real tool's `(name, schema)`.
    pub fn schemas(&self) -> &[(String, Value)] {
        &self.schemas
    }
}

impl Default for Fixture {
    fn default() -> Self {
        Self::new()
    }
}

/// Tool argument validation.
///
/// # Panics
/// When an error message does not name the tool (the model could not tell which call).
///
/// Input layout: the first byte picks the mode. Odd: the rest is the arguments for the real
/// tool `schemas[byte / 2 % n]`. Even: the rest is `SCHEMA\nARGS`, each parsed as JSON. Text
/// that is not JSON also goes through the palette's `key=value` parser, as typed input does.
pub fn validate_args(fixture: &Fixture, data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    if mode % 2 == 1 {
        let (name, schema) = &fixture.schemas[usize::from(mode / 2) % fixture.schemas.len()];
        let args = serde_json::from_str::<Value>(&text)
            .ok()
            .or_else(|| cp_tui::parse_arguments(&text).ok());
        if let Some(args) = args {
            check_one(name, schema, &args);
        }
        return;
    }
    let (schema_text, args_text) = text.split_once('\n').unwrap_or((&text, ""));
    let Ok(schema) = serde_json::from_str::<Value>(schema_text) else {
        return;
    };
    let args = serde_json::from_str::<Value>(args_text)
        .ok()
        .or_else(|| cp_tui::parse_arguments(args_text).ok());
    if let Some(args) = args {
        check_one("Fuzz_tool", &schema, &args);
    }
}

fn check_one(name: &str, schema: &Value, args: &Value) {
    if let Err(e) = cp_base::validate_args(name, schema, args) {
        // The message is what the model reads: rendering it must not panic either.
        let message = e.to_string();
        assert!(
            message.starts_with(name),
            "the error does not name the tool: {message}"
        );
    }
}

/// Loading `config.json`: every module's section from the same bytes, then what each module
/// builds from it (callback matcher and panel, checkpoint rules, LLM provider settings).
pub fn config(fixture: &Fixture, data: &[u8]) {
    let path = fixture.project.config().path().to_path_buf();
    if std::fs::write(&path, data).is_err() {
        return;
    }
    // A fresh handle each time: the cache keys on the file's stamp, which a same-length
    // rewrite within one clock tick would not change.
    let file = ConfigFile::new(&path);
    if let Ok(section) = file.section::<CallbackSection>(cp_mod_callback::CONFIG_KEY) {
        let matcher = Matcher::new(
            section
                .definitions
                .iter()
                .map(|d| (d.id, d.pattern.as_slice())),
        );
        let _ = matcher.match_all(["src/main.rs", "docs/a.md", "target/x", ""]);
    }
    if let Ok(checkpoint) = file.section::<StopGateConfig>(cp_mod_checkpoint::CONFIG_KEY) {
        let _ = StopGate::new(checkpoint);
    }
    if let Ok(llm) = file.raw_section("llm") {
        let env = |name: &str| (name == "OPENAI_BASE_URL").then(|| "http://127.0.0.1:9/v1".into());
        let _ = ProviderConfig::resolve(&|_| None, llm.as_ref());
        let _ = ProviderConfig::resolve(&env, llm.as_ref());
    }
    // The module as the host loads it: refresh from disk, then draw its panels.
    let project =
        Project::at(fixture.project.root()).with_trust_store(fixture.project.trust_store().clone());
    let mut module = CallbackModule::new(project.clone(), WorkerId::default());
    module.refresh();
    // Creating and toggling on top of whatever was loaded: ids are allocated from the
    // loaded counter and definitions, activation sets are edited in place.
    let env = ToolEnv::new(project, WorkerId::default(), Notifier::new());
    let created = module
        .call_tool(
            "Callback_upsert",
            &serde_json::json!({"action": "create", "name": "fuzz", "pattern": "*.rs",
                    "script_content": "true"}),
            &env,
        )
        .finish();
    if !created.is_error {
        let _ = module
            .call_tool(
                "Callback_toggle",
                &serde_json::json!({"id": "all", "active": false}),
                &env,
            )
            .finish();
    }
    module.refresh();
    let area = Rect::new(0, 0, 80, 20);
    for panel in module.panels() {
        let mut buf = Buffer::empty(area);
        panel.render(area, &mut buf, &PanelView::default());
        let _ = panel.badge();
        let _ = panel.llm_context();
    }
}

/// A hook payload on stdin, for each event of every agent. The project is the fixture's, so
/// an edit the payload names lands there or is ignored as outside.
///
/// # Panics
/// When a reply is not valid JSON: the agent could not read it.
pub fn hook_payload(fixture: &Fixture, data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for event in HookEvent::all() {
        let out = cp_hook::handle(event, Some(fixture.root()), Some("fuzz"), &text);
        // Whatever happened, the reply is valid JSON for the agent (or nothing).
        if let Some(stdout) = out.stdout {
            assert!(
                serde_json::from_str::<Value>(&stdout).is_ok(),
                "hook {} printed invalid JSON: {stdout}",
                event.cli_name()
            );
        }
    }
}

/// Loading a workflow YAML file, then what a run does with it before the agent starts:
/// its placeholders, and each checkpoint's `condition` evaluated against a run context.
pub fn workflow(_fixture: &Fixture, data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(workflow) = Workflow::parse(&text, Path::new("fuzz.yaml")) else {
        return;
    };
    let _ = workflow.placeholders();
    let mut context = serde_json::Map::new();
    context.extend(workflow.context.clone());
    context.insert(
        "vars".into(),
        serde_json::to_value(&workflow.vars).unwrap_or_default(),
    );
    context.insert(
        "phases".into(),
        serde_json::json!({"iteration_counts": {}, "current": workflow.phases[0].id}),
    );
    context.insert("checkpoints".into(), serde_json::json!([]));
    let context = Value::Object(context);
    for phase in &workflow.phases {
        if let Some(condition) = phase.approval.as_ref().and_then(|c| c.condition.as_ref()) {
            // An error is the documented outcome for a bad expression: logged and skipped.
            let _ = evaluate_condition(condition, &context, &serde_json::json!({"id": phase.id}));
        }
    }
}
