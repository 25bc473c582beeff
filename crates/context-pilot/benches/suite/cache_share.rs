//! Cache share: a scripted 20-request agent session replayed through a model of Anthropic's
//! prefix cache (`cp_llm::cache_model`), with the request bodies the provider really
//! sends. Reports the share of input bytes (tokens ≈ bytes / 4) served from cache, against
//! the same session with the panel context inside the system prompt (the layout before
//! issue 19, given the same breakpoints).

use cp_llm::cache_model::{CacheModel, anthropic_view};
use cp_llm::{ContentBlock, Message, Request, Role, ToolDefinition, ToolInput, ToolUse};
use serde_json::json;

use std::fmt::Write as _;

use super::Options;
use super::stats::Row;

/// Requests in the session.
const REQUESTS: usize = 20;

pub fn cache_share(_opts: &Options) -> Vec<Row> {
    let requests = session();
    let stable = share(&requests, false);
    let old = share(&requests, true);
    vec![
        Row::new(
            "prompt cache share: 20-request session, changing panel context",
            "%",
            vec![stable],
        )
        .note(format!(
            "model of Anthropic's prefix cache (longest earlier prefix ending at a breakpoint, 20-block lookback); the registry's {} tools; every 3rd tool result 2-6 KB, others a few lines; {} input bytes",
            requests[0].tools.len(),
            total_bytes(&requests)
        )),
        Row::new(
            "baseline: same session, panel context inside the system prompt",
            "%",
            vec![old],
        ),
    ]
}

/// The tools the model sees: the real registry's tool definitions (files and search,
/// callbacks, consoles, checkpoints, reload, viewer), as the TUI and `run` send them.
fn tools() -> Vec<ToolDefinition> {
    let dir = tempfile::tempdir().unwrap();
    let project = cp_base::Project::at(dir.path());
    let host = cp_host::Host::new(project, cp_base::WorkerId::default()).unwrap();
    host.registry()
        .tool_defs()
        .into_iter()
        .map(|d| ToolDefinition {
            name: d.name,
            description: d.description,
            parameters: d.parameters,
        })
        .collect()
}

/// The requests of the session: each step the model makes a tool call whose result goes back
/// (every third a 2–6 KB file, the others a few lines, as edits and short commands give), and
/// the panels change (a console tail that grows and scrolls, a callback's age).
fn session() -> Vec<Request> {
    let system = cp_agent::system_prompt("/home/dev/project");
    let tools = tools();
    let mut history = vec![Message::user_text(
        "The test `parses_config` fails after the last refactor; find out why and fix it.",
    )];
    let mut requests = Vec::new();
    for step in 0..REQUESTS {
        let mut tail = String::new();
        for n in step.saturating_sub(30)..=step * 2 {
            let verdict = if n % 3 == 0 { "FAILED" } else { "ok" };
            let _ = writeln!(tail, "test module_{n}::case ... {verdict}");
        }
        let context = format!(
            "<panels>\nCallbacks: CB1 cargo-check *.rs blocking active (last run {step}s ago)\n\
             Console cargo test (running):\n{tail}</panels>"
        );
        requests.push(Request {
            model: "claude-sonnet-4-5".into(),
            system: system.clone(),
            messages: history.clone(),
            tools: tools.clone(),
            max_output_tokens: 8192,
            context,
        });
        let id = format!("toolu_{step:02}");
        history.push(Message {
            role: Role::Assistant,
            content: vec![
                ContentBlock::Text {
                    text: format!("Let me look at src/module_{step}.rs."),
                },
                ContentBlock::ToolUse(ToolUse {
                    id: id.clone(),
                    name: "File_read".into(),
                    input: ToolInput::Valid(json!({"file_path": format!("src/module_{step}.rs")})),
                }),
            ],
        });
        // A mix like a real session: every third step reads a file (2-6 KB); the others
        // edit or run a short command (a few lines).
        let lines = if step % 3 == 0 {
            40 + step * 7 % 80
        } else {
            4 + step % 5
        };
        let mut body = String::new();
        for line in 0..lines {
            let _ = writeln!(
                body,
                "{line:>6}\tlet value_{line} = parse(&input[{line}..])?;"
            );
        }
        history.push(Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: id,
                text: body,
                is_error: false,
            }],
        });
    }
    requests
}

fn total_bytes(requests: &[Request]) -> usize {
    requests
        .iter()
        .map(|r| anthropic_view(r).total_bytes())
        .sum()
}

/// Percent of input bytes served from cache; `in_system` moves the context into the system
/// prompt, as before issue 19.
fn share(requests: &[Request], in_system: bool) -> f64 {
    let mut cache = CacheModel::default();
    let (mut served, mut total) = (0, 0);
    for request in requests {
        let mut request = request.clone();
        if in_system {
            request.system = format!("{}\n{}", request.system, request.context);
            request.context.clear();
        }
        let view = anthropic_view(&request);
        served += cache.serve(&view);
        total += view.total_bytes();
    }
    served as f64 * 100.0 / total as f64
}
