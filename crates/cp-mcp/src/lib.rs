//! `context-pilot mcp`: an MCP stdio server exposing every tool of the host's registry.
//!
//! Tools keep the names, JSON Schemas, validation messages and results they have in the TUI.
//! Each MCP tool call runs as a batch of one through [`cp_base::run_batch`], so file tools
//! fire callbacks: blocking results come back inside the tool result, and background results
//! that finished since the previous call are appended to the next call's result, whatever the
//! tool. A call that fails is an MCP tool error (`isError: true`) with the same message.
//!
//! tokio is confined to this crate: the rest of the host is synchronous, so every tool runs
//! on the blocking pool and the runtime only moves JSON-RPC messages.
//!
//! ```no_run
//! let project = cp_base::Project::discover(std::path::Path::new(".")).unwrap();
//! let host = cp_host::Host::new(project, cp_base::WorkerId::default()).unwrap();
//! // Serves on stdin/stdout until the client closes stdin.
//! cp_mcp::serve(host).unwrap();
//! ```

mod convert;
mod lines;
mod server;
mod ticker;

pub use convert::{mcp_result, mcp_tool};
pub use lines::{INVALID_REQUEST, MAX_LINE, PARSE_ERROR};
pub use server::{McpServer, NOT_OVER_MCP, SERVER_NAME};

use anyhow::Context as _;
use rmcp::ServiceExt as _;

use cp_host::Carried;
use cp_host::Host;

/// Size of each in-memory pipe between the line filter and rmcp.
const PIPE_BUFFER: usize = 256 * 1024;

/// Serves MCP on stdin/stdout until the client closes stdin (or the process is told to stop).
///
/// Background runs that earlier processes of the worker left in flight are taken over at
/// start ([`Carried`]). At shutdown, the runs still going are saved for the next front-end
/// (hook, MCP server) of the worker, and notifications still undelivered are kept in the
/// worker's outbox, so that front-end hands them to the agent.
pub fn serve(host: Host) -> anyhow::Result<()> {
    let mut carried = Carried::resume(&host);
    // The server lives as long as its client: hooks of the worker must not wait for it.
    carried.release();
    for problem in carried.take_problems() {
        eprintln!("context-pilot mcp: {problem}");
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the MCP runtime")?;
    let server = McpServer::new(host);
    let ticker = ticker::Ticker::start(server.host().clone());
    let outcome = runtime.block_on(async {
        // rmcp talks to the line filter through in-memory pipes; the filter answers what
        // rmcp would drop (see `lines`), and one writer serializes both onto stdout.
        let out = std::sync::Arc::new(tokio::sync::Mutex::new(tokio::io::stdout()));
        let (to_rmcp, rmcp_in) = tokio::io::duplex(PIPE_BUFFER);
        let (rmcp_out, from_rmcp) = tokio::io::duplex(PIPE_BUFFER);
        let filter = tokio::spawn(lines::filter(tokio::io::stdin(), to_rmcp, out.clone()));
        let relay = tokio::spawn(lines::relay(from_rmcp, out));
        let running = server
            .clone()
            .serve((rmcp_in, rmcp_out))
            .await
            .context("MCP initialization failed")?;
        let reason = running.waiting().await.context("the MCP session failed")?;
        tracing::info!(?reason, "MCP session ended");
        filter.abort();
        // rmcp has dropped its end of the pipe: the relay flushes what is left and ends.
        if let Ok(Err(e)) = relay.await {
            tracing::warn!("MCP: writing to stdout failed: {e}");
        }
        anyhow::Ok(())
    });
    ticker.stop();
    for problem in carried.suspend(server.host()) {
        eprintln!("context-pilot mcp: {problem}");
    }
    // The agent's session is over: no warm run of its tests is wanted any more.
    cp_mod_checkpoint::cancel_warm_run(server.host().project(), "the agent's MCP session ended");
    // Tool calls still running on the blocking pool are abandoned, not awaited: stdin is
    // closed, so nobody could read their results.
    runtime.shutdown_background();
    outcome
}
