//! The host's own tools: `system_reload`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use cp_base::{Module, Tool, ToolDef, ToolEnv, ToolOutcome, ToolResult, ToolTable};
use serde_json::{Value, json};

/// Offers `system_reload`, which asks the host to re-exec its (rebuilt) binary.
#[derive(Debug, Default)]
pub struct SystemModule {
    reload: Arc<AtomicBool>,
}

impl SystemModule {
    /// A module that raises `reload` when the tool runs; the host watches the flag.
    pub fn new(reload: Arc<AtomicBool>) -> Self {
        Self { reload }
    }
}

impl Module for SystemModule {
    fn id(&self) -> &'static str {
        "system"
    }

    fn tools(&self) -> Vec<ToolDef> {
        TOOLS.defs()
    }

    fn call_tool(&mut self, name: &str, _args: &Value, env: &ToolEnv) -> ToolOutcome {
        match TOOLS.get(name) {
            Some(tool) => (tool.handler)(self, env).into(),
            None => ToolResult::error(format!("system has no tool '{name}'")).into(),
        }
    }
}

/// How a host tool runs: on the module, in the worker's environment (the tools take no
/// arguments).
type Handler = fn(&SystemModule, &ToolEnv) -> ToolResult;

/// The host's own tools: what the model sees, and the function that runs each.
static TOOLS: ToolTable<Handler> = ToolTable::new(&[Tool {
    name: "system_reload",
    description: "Reload Context Pilot itself after its binary was rebuilt, keeping everything: \
        the conversation, panels, draft, consoles and callbacks. The reload happens after the \
        current tool batch finishes; your turn then continues in the new binary. If the new \
        binary does not start, the host stays up and says why. Example: {}",
    schema: no_arguments,
    handler: reload,
}]);

fn no_arguments() -> Value {
    json!({"type": "object", "additionalProperties": false, "properties": {}})
}

/// `system_reload`: raises the flag the host watches.
fn reload(module: &SystemModule, env: &ToolEnv) -> ToolResult {
    module.reload.store(true, Ordering::SeqCst);
    env.notifier.refresh();
    ToolResult::ok(
        "Reload requested: it happens when this batch finishes; the session is kept and your \
         turn continues in the new binary.",
    )
}
