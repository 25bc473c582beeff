//! The set of modules a host runs, with tool lookup, argument validation and published views.
//!
//! Module locking lives here and nowhere else: callers reach a module only through
//! [`Registry`] methods, and every method that calls into a module republishes its
//! [`ModuleView`] before releasing it. Readers of views ([`Registry::views`]) never wait for a
//! module; the `try_*` methods give up instead of waiting when a tool holds the module.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, TryLockError};

use serde_json::Value;

use crate::module::{BatchChanges, BatchResponse, Module, ToolEnv};
use crate::schema::validate_args;
use crate::tool::{ToolCall, ToolDef, ToolOutcome, ToolResult};
use crate::view::{ModuleView, Views};

/// One registered module and its latest published view.
struct Slot {
    id: &'static str,
    module: Mutex<Box<dyn Module>>,
    /// Held only to clone or replace the `Arc`, never while a module runs.
    published: Mutex<Arc<ModuleView>>,
    /// What `save_state` returned last, for a save while a tool holds the module.
    last_saved: Mutex<Option<Value>>,
}

impl Slot {
    fn new(module: Box<dyn Module>) -> Self {
        let view = Arc::new(ModuleView::of(module.as_ref()));
        Self {
            id: module.id(),
            module: Mutex::new(module),
            published: Mutex::new(view),
            last_saved: Mutex::new(None),
        }
    }

    /// Locks the module, recovering from a poisoned lock: one panicked worker must not take
    /// the whole host down with it.
    fn lock(&self) -> MutexGuard<'_, Box<dyn Module>> {
        self.module.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Locks the module if no one else holds it.
    fn try_lock(&self) -> Option<MutexGuard<'_, Box<dyn Module>>> {
        match self.module.try_lock() {
            Ok(guard) => Some(guard),
            Err(TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }

    fn view(&self) -> Arc<ModuleView> {
        Arc::clone(
            &self
                .published
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    /// Publishes what the locked `module` shows now.
    fn publish(&self, module: &dyn Module) {
        let view = Arc::new(ModuleView::of(module));
        *self
            .published
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = view;
    }

    /// Runs `f` on the locked module, then publishes its view.
    fn with<R>(
        &self,
        guard: MutexGuard<'_, Box<dyn Module>>,
        f: impl FnOnce(&mut dyn Module) -> R,
    ) -> R {
        let mut guard = guard;
        let result = f(&mut **guard);
        self.publish(&**guard);
        result
    }
}

/// A module was busy (a tool holds it); try again later.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the module is busy running a tool")]
pub struct Busy;

/// The modules of a host, in registration order, with an index of their tools.
///
/// The index is built when a tool is first asked for (listed, looked up or called), not when
/// a module is registered: a host that calls no tool (the hook process, at every edit of an
/// agent CLI) never builds the modules' tool definitions and their JSON schemas.
#[derive(Clone, Default)]
pub struct Registry {
    slots: Vec<Arc<Slot>>,
    /// Shared by the clones made after the last registration, so a host's clones build it
    /// once between them.
    index: Arc<OnceLock<ToolIndex>>,
}

/// Every module's tools, by name and in registration order.
#[derive(Clone, Default)]
struct ToolIndex {
    tools: HashMap<String, (usize, ToolDef)>,
    order: Vec<String>,
    /// The first tool name a later module offered again (that module's tool is left out).
    duplicate: Option<String>,
}

impl ToolIndex {
    /// The tools of `slots`, each module asked once (waiting for it, as a tool call would).
    fn of(slots: &[Arc<Slot>]) -> Self {
        let mut index = Self::default();
        for (at, slot) in slots.iter().enumerate() {
            for def in slot.lock().tools() {
                if index.tools.contains_key(&def.name) {
                    tracing::error!("tool '{}' is offered by two modules", def.name);
                    index.duplicate.get_or_insert(def.name);
                    continue;
                }
                index.order.push(def.name.clone());
                index.tools.insert(def.name.clone(), (at, def));
            }
        }
        index
    }
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field(
                "modules",
                &self.slots.iter().map(|s| s.id).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

/// Two modules offered a tool with the same name.
#[derive(Debug, thiserror::Error)]
#[error("tool '{0}' is offered by two modules")]
pub struct DuplicateTool(pub String);

impl Registry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a module and publishes its first view. Its tools join the index when a tool is
    /// first asked for; [`Registry::check_tools`] says whether two modules offer one name.
    pub fn register(&mut self, module: Box<dyn Module>) {
        self.slots.push(Arc::new(Slot::new(module)));
        self.index = Arc::default();
    }

    /// The tool index, built at the first ask.
    fn index(&self) -> &ToolIndex {
        self.index.get_or_init(|| ToolIndex::of(&self.slots))
    }

    /// Builds the tool index now, and fails when two modules offer a tool of the same name
    /// (the later one's is left out of the index). For a host's tests and its start.
    pub fn check_tools(&self) -> Result<(), DuplicateTool> {
        match &self.index().duplicate {
            Some(name) => Err(DuplicateTool(name.clone())),
            None => Ok(()),
        }
    }

    /// Every module's latest published view. Never waits for a module.
    pub fn views(&self) -> Views {
        Views(self.slots.iter().map(|slot| slot.view()).collect())
    }

    /// Every tool, in registration order.
    pub fn tool_defs(&self) -> Vec<ToolDef> {
        let index = self.index();
        index
            .order
            .iter()
            .filter_map(|name| index.tools.get(name))
            .map(|(_, d)| d.clone())
            .collect()
    }

    pub fn tool_def(&self, name: &str) -> Option<&ToolDef> {
        self.index().tools.get(name).map(|(_, def)| def)
    }

    /// Validates and starts a call. Quick work is done under the module's lock; deferred work
    /// comes back unrun so the caller can run it with the module released.
    pub fn start_call(&self, call: &ToolCall, env: &ToolEnv) -> ToolOutcome {
        let tools = self.index();
        let Some((index, def)) = tools.tools.get(&call.name) else {
            return ToolResult::error(format!(
                "unknown tool '{}'; available tools: {}",
                call.name,
                tools.order.join(", ")
            ))
            .into();
        };
        if let Err(e) = validate_args(&def.name, &def.parameters, &call.arguments) {
            return ToolResult::error(e.to_string()).into();
        }
        let Some(slot) = self.slots.get(*index) else {
            return ToolResult::error(format!("tool '{}' has no module", call.name)).into();
        };
        slot.with(slot.lock(), |m| {
            m.call_tool(&call.name, &call.arguments, env)
        })
    }

    /// Validates, runs and finishes a call on the current thread.
    pub fn call(&self, call: &ToolCall, env: &ToolEnv) -> ToolResult {
        self.start_call(call, env).finish()
    }

    /// Runs `f` on the module with this id, waiting for it, then republishes its view.
    /// `None` when no module has that id. Not for the UI thread: it waits for running tools.
    pub fn with_module<R>(&self, id: &str, f: impl FnOnce(&mut dyn Module) -> R) -> Option<R> {
        self.slots
            .iter()
            .find(|slot| slot.id == id)
            .map(|slot| slot.with(slot.lock(), f))
    }

    /// Gives every module its tick, waiting for busy ones. Returns whether anything visible
    /// changed. For front-ends without a screen (MCP, hooks).
    pub fn tick(&self, env: &ToolEnv) -> bool {
        self.slots.iter().fold(false, |changed, slot| {
            slot.with(slot.lock(), |m| m.on_tick(env)) | changed
        })
    }

    /// Gives every module that is not busy its tick; busy ones get the next one. Returns
    /// whether anything visible changed. Never waits for a module.
    pub fn try_tick(&self, env: &ToolEnv) -> bool {
        let mut changed = false;
        for slot in &self.slots {
            if let Some(guard) = slot.try_lock() {
                changed |= slot.with(guard, |m| m.on_tick(env));
            }
        }
        changed
    }

    /// Republishes the view of every module that is not busy, for state its background
    /// threads changed (a run that failed shows its panel). Never waits for a module.
    pub fn try_republish(&self) {
        for slot in &self.slots {
            if let Some(guard) = slot.try_lock() {
                slot.publish(&**guard);
            }
        }
    }

    /// Passes keyboard input to the module showing `panel_id` if it is not busy.
    /// `Ok(false)`: no module took it; `Err(Busy)`: try again later, in order.
    pub fn try_panel_input(&self, panel_id: &str, input: &[u8]) -> Result<bool, Busy> {
        self.try_on_panel(panel_id, |m| m.panel_input(panel_id, input))
    }

    /// Closes a dynamic panel, waiting for its module. Returns whether one was closed.
    pub fn close_panel(&self, panel_id: &str) -> bool {
        self.slots
            .iter()
            .find(|slot| slot.view().panels().iter().any(|p| p.id() == panel_id))
            .is_some_and(|slot| slot.with(slot.lock(), |m| m.close_panel(panel_id)))
    }

    /// Closes a dynamic panel if its module is not busy. `Ok(false)`: it cannot be closed;
    /// `Err(Busy)`: try again later.
    pub fn try_close_panel(&self, panel_id: &str) -> Result<bool, Busy> {
        self.try_on_panel(panel_id, |m| m.close_panel(panel_id))
    }

    /// Runs `f` on the module that shows `panel_id`, if it is not busy.
    fn try_on_panel(
        &self,
        panel_id: &str,
        f: impl FnOnce(&mut dyn Module) -> bool,
    ) -> Result<bool, Busy> {
        let Some(slot) = self
            .slots
            .iter()
            .find(|slot| slot.view().panels().iter().any(|p| p.id() == panel_id))
        else {
            return Ok(false);
        };
        let guard = slot.try_lock().ok_or(Busy)?;
        Ok(slot.with(guard, f))
    }

    /// Every module's batch hook, in order (see [`crate::run_batch`]).
    pub(crate) fn on_batch(&self, batch: &BatchChanges, env: &ToolEnv) -> Vec<BatchResponse> {
        self.slots
            .iter()
            .map(|slot| slot.with(slot.lock(), |m| m.on_batch(batch, env)))
            .collect()
    }

    /// Each module's state to persist, by module id: fresh from a module that is free, the
    /// one saved last time from a module a tool holds. Never waits for a module.
    pub fn saved_states(&self) -> BTreeMap<String, Value> {
        self.slots
            .iter()
            .filter_map(|slot| {
                let mut last = slot
                    .last_saved
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                if let Some(guard) = slot.try_lock() {
                    *last = guard.save_state();
                }
                Some((slot.id.to_owned(), last.clone()?))
            })
            .collect()
    }

    /// Restores what [`Registry::saved_states`] returned in an earlier process, waiting for
    /// each module.
    pub fn load_states(&self, states: &BTreeMap<String, Value>, env: &ToolEnv) {
        for slot in &self.slots {
            if let Some(saved) = states.get(slot.id) {
                slot.with(slot.lock(), |m| m.load_state(saved, env));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::notify::Notifier;
    use crate::project::Project;
    use crate::view::Views;
    use crate::worker::WorkerId;

    struct Echo;
    impl Module for Echo {
        fn id(&self) -> &'static str {
            "echo"
        }
        fn tools(&self) -> Vec<ToolDef> {
            vec![ToolDef::new(
                "echo",
                "Echoes text.",
                json!({"type": "object", "required": ["text"], "additionalProperties": false,
                       "properties": {"text": {"type": "string"}}}),
            )]
        }
        fn call_tool(&mut self, _name: &str, args: &Value, _env: &ToolEnv) -> ToolOutcome {
            ToolResult::ok(args["text"].as_str().unwrap_or_default()).into()
        }
    }

    fn env() -> ToolEnv {
        ToolEnv::new(
            Project::at("/nonexistent"),
            WorkerId::default(),
            Notifier::new(),
        )
    }

    #[test]
    fn validates_before_the_handler_runs() {
        let mut r = Registry::new();
        r.register(Box::new(Echo));
        r.check_tools().unwrap();
        r.register(Box::new(Echo));
        let twice = r.check_tools().unwrap_err();
        assert_eq!(twice.0, "echo");
        assert_eq!(
            r.tool_defs().len(),
            1,
            "the later module's tool is left out"
        );
        let ok = r.call(&ToolCall::new("1", "echo", json!({"text": "hi"})), &env());
        assert_eq!(ok, ToolResult::ok("hi"));
        let bad = r.call(&ToolCall::new("2", "echo", json!({"text": 1})), &env());
        assert!(bad.is_error);
        assert_eq!(bad.text, "echo: 'text' must be a string, got number 1");
        let unknown = r.call(&ToolCall::new("3", "nope", json!({})), &env());
        assert!(unknown.is_error && unknown.text.contains("available tools: echo"));
    }

    /// Counts how often it was asked for its tools.
    struct Asked(Arc<std::sync::atomic::AtomicUsize>);
    impl Module for Asked {
        fn id(&self) -> &'static str {
            "asked"
        }
        fn tools(&self) -> Vec<ToolDef> {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Echo.tools()
        }
        fn call_tool(&mut self, name: &str, args: &Value, env: &ToolEnv) -> ToolOutcome {
            Echo.call_tool(name, args, env)
        }
    }

    #[test]
    fn tools_are_built_at_the_first_ask_and_once() {
        let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = || asked.load(std::sync::atomic::Ordering::SeqCst);
        let mut r = Registry::new();
        r.register(Box::new(Asked(Arc::clone(&asked))));
        // What a hook process does: views, batches, states; no tool.
        let _ = r.views();
        let _ = r.on_batch(&BatchChanges::default(), &env());
        let _ = r.saved_states();
        assert_eq!(count(), 0, "no tool was asked for");
        assert_eq!(r.tool_defs().len(), 1);
        let ok = r.call(&ToolCall::new("1", "echo", json!({"text": "hi"})), &env());
        assert_eq!(ok, ToolResult::ok("hi"));
        assert!(r.tool_def("echo").is_some());
        assert_eq!(count(), 1, "built once");
        // A module registered later joins the index.
        r.register(Box::new(Counter(0)));
        assert_eq!(r.tool_defs().len(), 2);
        assert_eq!(count(), 2);
    }

    /// Counts its calls and shows the count in a panel badge and its saved state.
    struct Counter(u32);
    struct Badge(u32);
    impl crate::panel::Panel for Badge {
        fn id(&self) -> String {
            "counter".into()
        }
        fn title(&self) -> String {
            "Counter".into()
        }
        fn badge(&self) -> Option<String> {
            Some(self.0.to_string())
        }
        #[cfg(feature = "draw")]
        fn render(
            &self,
            _: ratatui::layout::Rect,
            _: &mut ratatui::buffer::Buffer,
            _: &crate::PanelView,
        ) {
        }
        fn llm_context(&self) -> String {
            format!("count {}", self.0)
        }
    }
    impl Module for Counter {
        fn id(&self) -> &'static str {
            "counter"
        }
        fn tools(&self) -> Vec<ToolDef> {
            vec![ToolDef::new("count", "", json!({"type": "object"}))]
        }
        fn call_tool(&mut self, _: &str, _: &Value, _: &ToolEnv) -> ToolOutcome {
            self.0 += 1;
            ToolResult::ok("").into()
        }
        fn panels(&self) -> Vec<Arc<dyn crate::panel::Panel>> {
            vec![Arc::new(Badge(self.0))]
        }
        fn save_state(&self) -> Option<Value> {
            Some(json!(self.0))
        }
    }

    #[test]
    fn every_call_publishes_a_view_and_busy_modules_are_skipped_not_waited_for() {
        let mut r = Registry::new();
        r.register(Box::new(Counter(0)));
        let before = r.views();
        r.call(&ToolCall::new("1", "count", json!({})), &env());
        let badge = |v: &Views| v.panel("counter").and_then(|p| p.badge());
        assert_eq!(
            badge(&before),
            Some("0".into()),
            "a view is an immutable snapshot"
        );
        assert_eq!(badge(&r.views()), Some("1".into()));
        assert_eq!(r.views().llm_contexts(), vec!["count 1".to_owned()]);

        assert_eq!(r.saved_states().get("counter"), Some(&json!(1)));
        r.call(&ToolCall::new("2", "count", json!({})), &env());

        // While a tool holds the module, readers get the published view and `try_*` gives up.
        let slot = Arc::clone(&r.slots[0]);
        let held = slot.lock();
        assert_eq!(badge(&r.views()), Some("2".into()));
        assert!(!r.try_tick(&env()));
        assert_eq!(r.try_close_panel("counter"), Err(Busy));
        assert_eq!(
            r.saved_states().get("counter"),
            Some(&json!(1)),
            "the state saved last time"
        );
        drop(held);
        assert_eq!(
            r.try_close_panel("counter"),
            Ok(false),
            "a fixed panel stays"
        );
    }
}
