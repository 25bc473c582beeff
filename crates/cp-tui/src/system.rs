//! The host's own tools: `system_reload`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use cp_base::{Module, ToolDef, ToolEnv, ToolOutcome, ToolResult};
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
        vec![ToolDef::new(
            "system_reload",
            "Reload Context Pilot itself after its binary was rebuilt, keeping everything: the \
             conversation, panels, draft, consoles and callbacks. The reload happens after the \
             current tool batch finishes; your turn then continues in the new binary. If the new \
             binary does not start, the host stays up and says why. Example: {}",
            json!({"type": "object", "additionalProperties": false, "properties": {}}),
        )]
    }

    fn call_tool(&mut self, _name: &str, _args: &Value, env: &ToolEnv) -> ToolOutcome {
        self.reload.store(true, Ordering::SeqCst);
        env.notifier.refresh();
        ToolResult::ok(
            "Reload requested: it happens when this batch finishes; the session is kept and \
             your turn continues in the new binary.",
        )
        .into()
    }
}
