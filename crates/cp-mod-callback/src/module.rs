//! `CallbackModule`: the tools, the panel and the batch hook, wired to the on-disk config.

use std::fmt::Write as _;
use std::sync::Arc;

use cp_base::{
    Args, BatchChanges, BatchResponse, Panel, Project, Stamp, ToolEnv, ToolOutcome, ToolResult,
    WorkerId,
};
use cp_mod_console::ClientConfig;
use serde_json::{Value, json};

use crate::firing::Firing;
use crate::model::{CONFIG_KEY, CallbackId, CallbackSection};
use crate::panel::{CallbacksPanel, EditorView};
use crate::script::{numbered, read_script, script_path};
use crate::trigger::Matcher;
use crate::validate::validated;

mod handlers;
use handlers::TOOLS;
pub use handlers::tool_defs;

/// The config as last read, with the compiled patterns that go with it.
#[derive(Debug, Default)]
struct Cache {
    /// Whether the config was read at least once.
    loaded: bool,
    /// The stamp of the file when last read (`None`: it did not exist).
    stamp: Option<Stamp>,
    /// The valid definitions (what fires and what the panel lists).
    section: CallbackSection,
    /// The section as stored, invalid definitions included (so they can be deleted by id).
    raw: CallbackSection,
    matcher: Matcher,
    /// Why the last read failed (the previous good section stays in use).
    problem: Option<String>,
    /// How many times the patterns were compiled.
    builds: u64,
}

/// The callback module: `Callback_*` tools, the Callbacks panel, and firing on AI edits.
pub struct CallbackModule {
    project: Project,
    worker: WorkerId,
    editor: Option<CallbackId>,
    cache: Cache,
    panel: CallbacksPanel,
    firing: Firing,
}

impl std::fmt::Debug for CallbackModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallbackModule")
            .field("root", &self.project.root())
            .field("worker", &self.worker)
            .field("editor", &self.editor)
            .finish_non_exhaustive()
    }
}

impl CallbackModule {
    /// The module for `worker` on `project`, running scripts through the project's console
    /// server (started on demand). Reads the config at once.
    pub fn new(project: Project, worker: WorkerId) -> Self {
        let console = ClientConfig::new(project.root());
        Self::with_console(project, worker, console)
    }

    /// Like [`CallbackModule::new`] with an explicit console client configuration (e.g. the
    /// server executable to launch).
    pub fn with_console(project: Project, worker: WorkerId, console: ClientConfig) -> Self {
        let mut module = Self {
            firing: Firing::new(project.clone(), console),
            panel: CallbacksPanel {
                worker: worker.as_str().to_owned(),
                ..CallbacksPanel::default()
            },
            project,
            worker,
            editor: None,
            cache: Cache::default(),
        };
        module.refresh();
        module
    }

    /// The Callbacks panel as it is now.
    pub fn panel(&self) -> &CallbacksPanel {
        &self.panel
    }

    /// The definitions as last read from `config.json`.
    pub fn section(&self) -> &CallbackSection {
        &self.cache.section
    }

    /// How many times the patterns were compiled: once per config change, never per edit.
    pub fn pattern_builds(&self) -> u64 {
        self.cache.builds
    }

    /// The callback open in the editor.
    pub fn editor(&self) -> Option<CallbackId> {
        self.editor
    }

    /// Background runs still being watched: their results reach the agent when they end,
    /// also across a reload (they are part of [`cp_base::Module::save_state`]).
    pub fn watched_runs(&self) -> usize {
        self.firing.watched()
    }

    /// Re-reads the config if it changed on disk (another process may have written it) and
    /// updates the panel. Returns whether anything visible changed.
    pub fn refresh(&mut self) -> bool {
        let stamp = self.project.config().stamp();
        let mut changed = false;
        if !self.cache.loaded || self.cache.stamp != stamp {
            match self.project.config().section::<CallbackSection>(CONFIG_KEY) {
                Ok(raw) => {
                    let loaded = validated(&self.project, raw.clone());
                    self.cache.matcher = Matcher::new(
                        loaded
                            .section
                            .definitions
                            .iter()
                            .map(|d| (d.id, d.pattern.as_slice())),
                    );
                    self.cache.builds += 1;
                    self.cache.section = loaded.section;
                    self.cache.raw = raw;
                    let mut problems = loaded.problems;
                    problems.extend(self.matcher_problem());
                    self.cache.problem = (!problems.is_empty()).then(|| problems.join("\n"));
                }
                Err(e) => {
                    // Nothing from this file runs; a previous good read stays on screen, but
                    // the problem says that no callback runs until the file is fixed.
                    self.cache.section = CallbackSection::default();
                    self.cache.matcher = Matcher::default();
                    self.cache.problem = Some(format!(
                        "{}: no callback runs until this is fixed: {e}",
                        self.project.config().path().display()
                    ));
                }
            }
            if let Some(problem) = &self.cache.problem {
                tracing::warn!("callbacks config: {problem}");
            }
            self.cache.stamp = stamp;
            self.cache.loaded = true;
            changed = true;
        }
        if self
            .editor
            .is_some_and(|id| self.cache.section.get(id).is_none())
        {
            self.editor = None;
        }
        let panel = CallbacksPanel {
            worker: self.worker.as_str().to_owned(),
            section: self.cache.section.clone(),
            editor: self.editor_view(),
            problem: self.cache.problem.clone(),
            watching: self.firing.watched(),
            running: self.firing.running(),
            failing: self
                .firing
                .failing()
                .into_iter()
                .filter_map(|id| self.cache.section.get(id).map(|d| d.name.clone()))
                .collect(),
        };
        if panel != self.panel {
            self.panel = panel;
            changed = true;
        }
        changed
    }

    fn matcher_problem(&self) -> Option<String> {
        let bad: Vec<String> = self
            .cache
            .matcher
            .invalid()
            .iter()
            .map(|(id, e)| format!("{id} never fires: {e}"))
            .collect();
        (!bad.is_empty()).then(|| bad.join("; "))
    }

    fn editor_view(&self) -> Option<EditorView> {
        let def = self.cache.section.get(self.editor?)?.clone();
        let script = read_script(&script_path(&self.project, &def.name))
            .ok()
            .flatten();
        Some(EditorView { def, script })
    }

    fn editor_text(&self) -> String {
        let Some(view) = self.editor_view() else {
            return String::new();
        };
        let d = &view.def;
        let mut out = format!(
            "Editor open on {} '{}': pattern {}, blocking {}, timeout {}, once_per_batch {}, one_at_a_time {}, runs in {}.\n",
            d.id,
            d.name,
            d.pattern.join(", "),
            d.blocking,
            d.timeout
                .map_or_else(|| "none".to_owned(), |t| format!("{t}s")),
            d.once_per_batch,
            d.one_at_a_time,
            crate::panel::cwd_text(d)
        );
        let _ = writeln!(
            out,
            "Script .context-pilot/scripts/{}.sh (line numbers are not part of it):",
            d.name
        );
        match &view.script {
            Some(s) => out.push_str(&numbered(s)),
            None => out.push_str("(missing: recreate it with script_content)\n"),
        }
        out
    }

    /// The stored section, invalid definitions included, for resolving ids.
    fn section_now(&mut self) -> &CallbackSection {
        self.refresh();
        &self.cache.raw
    }

    /// What is wrong with the callbacks config (file and reason), if anything.
    pub fn problem(&self) -> Option<&str> {
        self.cache.problem.as_deref()
    }
}

impl cp_base::Module for CallbackModule {
    fn id(&self) -> &'static str {
        "callback"
    }

    fn tools(&self) -> Vec<cp_base::ToolDef> {
        TOOLS.defs()
    }

    fn call_tool(&mut self, name: &str, args: &Value, _env: &ToolEnv) -> ToolOutcome {
        let Some(tool) = TOOLS.get(name) else {
            return ToolResult::error(format!("callback module has no tool '{name}'")).into();
        };
        let result = (tool.handler)(self, &Args::new(name, args));
        self.refresh();
        match result {
            Ok(text) => ToolResult::ok(text),
            Err(e) => ToolResult::error(format!("{name}: {e}")),
        }
        .into()
    }

    fn panels(&self) -> Vec<Arc<dyn Panel>> {
        let mut panels: Vec<Arc<dyn Panel>> = vec![Arc::new(self.panel.clone())];
        panels.extend(self.firing.panels());
        panels
    }

    fn close_panel(&mut self, panel_id: &str) -> bool {
        self.firing.close_panel(panel_id)
    }

    fn on_batch(&mut self, batch: &BatchChanges, env: &ToolEnv) -> BatchResponse {
        self.refresh();
        let runs = crate::plan::plan(
            batch,
            &self.cache.section,
            &self.cache.matcher,
            env.worker.as_str(),
        );
        // A cloned repository's callbacks are someone else's code: they run only once the
        // person trusted the project (the front-ends tell the person how, once).
        let runs = if runs.is_empty() {
            runs
        } else {
            let trust = self.project.trust_state();
            if trust.allows() {
                runs
            } else {
                tracing::info!(
                    ?trust,
                    runs = runs.len(),
                    "callbacks not run: project not trusted"
                );
                Vec::new()
            }
        };
        self.firing.fire(runs, batch, env)
    }

    fn on_tick(&mut self, _env: &ToolEnv) -> bool {
        self.refresh()
    }

    fn save_state(&self) -> Option<Value> {
        Some(json!({
            "editor": self.editor.map(|id| id.to_string()),
            "runs": self.firing.save_runs(),
        }))
    }

    fn load_state(&mut self, state: &Value, env: &ToolEnv) {
        self.editor = state
            .get("editor")
            .and_then(Value::as_str)
            .and_then(|s| s.parse().ok());
        if let Some(runs) = state.get("runs") {
            self.firing.resume_runs(runs, &env.notifier);
        }
        self.refresh();
    }
}
