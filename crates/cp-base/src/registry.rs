//! The set of modules a host runs, with tool lookup and argument validation.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::module::{Module, ToolEnv};
use crate::schema::validate_args;
use crate::tool::{ToolCall, ToolDef, ToolOutcome, ToolResult};

/// A module shared between the UI thread (panels) and tool workers.
pub type SharedModule = Arc<Mutex<Box<dyn Module>>>;

/// Locks a module, recovering from a poisoned lock: one panicked worker must not take the
/// whole host down with it.
pub fn lock_module(module: &SharedModule) -> MutexGuard<'_, Box<dyn Module>> {
    module.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The modules of a host, in registration order, with an index of their tools.
#[derive(Clone, Default)]
pub struct Registry {
    modules: Vec<SharedModule>,
    tools: HashMap<String, (usize, ToolDef)>,
    order: Vec<String>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("tools", &self.order)
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

    /// Adds a module and indexes its tools.
    pub fn register(&mut self, module: Box<dyn Module>) -> Result<(), DuplicateTool> {
        let index = self.modules.len();
        let defs = module.tools();
        for def in &defs {
            if self.tools.contains_key(&def.name) {
                return Err(DuplicateTool(def.name.clone()));
            }
        }
        for def in defs {
            self.order.push(def.name.clone());
            self.tools.insert(def.name.clone(), (index, def));
        }
        self.modules.push(Arc::new(Mutex::new(module)));
        Ok(())
    }

    pub fn modules(&self) -> &[SharedModule] {
        &self.modules
    }

    /// Every tool, in registration order.
    pub fn tool_defs(&self) -> Vec<ToolDef> {
        self.order
            .iter()
            .filter_map(|name| self.tools.get(name))
            .map(|(_, d)| d.clone())
            .collect()
    }

    pub fn tool_def(&self, name: &str) -> Option<&ToolDef> {
        self.tools.get(name).map(|(_, def)| def)
    }

    /// Validates and starts a call. Quick work is done under the module's lock; deferred work
    /// comes back unrun so the caller can run it with the module released.
    pub fn start_call(&self, call: &ToolCall, env: &ToolEnv) -> ToolOutcome {
        let Some((index, def)) = self.tools.get(&call.name) else {
            return ToolResult::error(format!(
                "unknown tool '{}'; available tools: {}",
                call.name,
                self.order.join(", ")
            ))
            .into();
        };
        if let Err(e) = validate_args(&def.name, &def.parameters, &call.arguments) {
            return ToolResult::error(e.to_string()).into();
        }
        let Some(module) = self.modules.get(*index) else {
            return ToolResult::error(format!("tool '{}' has no module", call.name)).into();
        };
        lock_module(module).call_tool(&call.name, &call.arguments, env)
    }

    /// Validates, runs and finishes a call on the current thread.
    pub fn call(&self, call: &ToolCall, env: &ToolEnv) -> ToolResult {
        self.start_call(call, env).finish()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::notify::Notifier;
    use crate::project::Project;
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
        r.register(Box::new(Echo)).unwrap();
        assert!(r.register(Box::new(Echo)).is_err());
        let ok = r.call(&ToolCall::new("1", "echo", json!({"text": "hi"})), &env());
        assert_eq!(ok, ToolResult::ok("hi"));
        let bad = r.call(&ToolCall::new("2", "echo", json!({"text": 1})), &env());
        assert!(bad.is_error);
        assert_eq!(bad.text, "echo: 'text' must be a string, got number 1");
        let unknown = r.call(&ToolCall::new("3", "nope", json!({})), &env());
        assert!(unknown.is_error && unknown.text.contains("available tools: echo"));
    }
}
