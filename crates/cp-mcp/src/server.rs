//! The MCP handler: lists the registry's tools and runs calls through the batch pipeline.

use std::sync::Arc;

use cp_base::{ToolCall, run_batch};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;

use crate::convert::{mcp_result, mcp_tool};
use cp_host::Deliveries;
use cp_host::Host;

/// The name the server gives in `initialize`: the binary's name.
pub const SERVER_NAME: &str = "context-pilot";

/// Tools of the registry that do nothing over MCP, so they are neither listed nor callable:
/// `system_reload` re-execs the TUI, and an MCP server has no TUI to re-exec.
pub const NOT_OVER_MCP: &[&str] = &["system_reload"];

/// An MCP server over one host. Cheap to clone; clones share the host.
#[derive(Debug, Clone)]
pub struct McpServer {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    host: Host,
    deliveries: Deliveries,
}

impl McpServer {
    pub fn new(host: Host) -> Self {
        let deliveries = Deliveries::new(host.project(), host.worker(), host.notifier());
        Self {
            inner: Arc::new(Inner { host, deliveries }),
        }
    }

    pub fn host(&self) -> &Host {
        &self.inner.host
    }

    /// Runs one tool call as a batch of one and appends the background results that finished
    /// since the previous call. Blocks until the call and its blocking callbacks are done.
    pub fn call(&self, name: &str, arguments: Value) -> cp_base::ToolResult {
        let host = &self.inner.host;
        if NOT_OVER_MCP.contains(&name) {
            return cp_base::ToolResult::error(format!(
                "{name} is not offered over MCP: it reloads the Context Pilot TUI, and this MCP server has none"
            ));
        }
        // Pick up on-disk changes (another process's callbacks) and finished background work.
        host.registry().tick(host.env());
        let call = ToolCall::new(format!("mcp-{}", next_call_id()), name, arguments);
        let mut result = run_batch(host.registry(), &[call], host.env())
            .into_iter()
            .next()
            .unwrap_or_else(|| cp_base::ToolResult::error(format!("{name}: no result")));
        if let Some(text) = self.inner.deliveries.collect_text() {
            result.append(&text);
        }
        // A broken callbacks config must never silently turn callbacks off.
        let problems = cp_mod_callback::config_problems(host.project());
        if !problems.is_empty() {
            result.append(&format!(
                "Note for the person: the callbacks config has a problem: {}",
                problems.join("; ")
            ));
        }
        // An untrusted project's callbacks and test command stayed off: say so, once.
        if let Some(advice) = cp_host::trust::notice_once(host.project()) {
            result.append(&advice);
        }
        result
    }
}

/// Tells the run that started the agent (`CP_HOOK_REPORT`, when set) that the agent loaded
/// this server and asked for its tools: the run stops an agent that did not (see
/// `cp_agent_cli`'s wiring check). Once per process.
fn report_wired_once() {
    use std::sync::atomic::{AtomicBool, Ordering};
    static SENT: AtomicBool = AtomicBool::new(false);
    if SENT.swap(true, Ordering::Relaxed) {
        return;
    }
    if let Err(e) = cp_agent_cli::HookReport::wired(cp_agent_cli::MCP_WIRED).send() {
        tracing::warn!("cannot tell the run that its agent loaded the MCP server: {e}");
    }
}

/// A per-process sequence for call ids (they only need to be unique within a batch).
fn next_call_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION"))
                    .with_description(env!("CARGO_PKG_DESCRIPTION")),
            )
            .with_instructions(
                "Context Pilot tools. File_edit/File_write/File_delete fire the project's \
                 callbacks: blocking results come back in the tool result, background results \
                 are appended to your next tool call's result.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        report_wired_once();
        let tools = self
            .inner
            .host
            .registry()
            .tool_defs()
            .iter()
            .filter(|def| !NOT_OVER_MCP.contains(&def.name.as_str()))
            .map(mcp_tool)
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.into_owned();
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let server = self.clone();
        let result = tokio::task::spawn_blocking(move || server.call(&name, arguments))
            .await
            .unwrap_or_else(|e| {
                cp_base::ToolResult::error(format!("the tool failed unexpectedly: {e}"))
            });
        Ok(mcp_result(&result).into())
    }
}
