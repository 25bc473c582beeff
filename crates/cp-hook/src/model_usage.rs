//! `context-pilot model-usage`: Gemini CLI's `AfterModel` hook in the runs Context Pilot
//! drives (`context-pilot run --agent gemini`, the TUI's `--agent gemini`).
//!
//! Gemini CLI's stream reports tokens only at the end of a run, so the driver cannot measure
//! the context of each request from it; its `AfterModel` hook, though, gets every response
//! chunk with its `usageMetadata`. At the chunk that ends a response (a `finishReason`), this
//! reports the request's prompt size to the driver (`CP_HOOK_REPORT`), which measures the
//! context threshold from it as it does from Claude Code's stream.
//!
//! Gemini CLI runs the hook for every chunk and waits for it, so it does as little as it can:
//! no project, no modules, no log; just the payload, one line appended, and `{}` (Gemini CLI
//! parses the hook's stdout as JSON). It never fails the agent.

use std::io::Read as _;
use std::process::ExitCode;

use cp_agent_cli::{HOOK_REPORT_ENV, HookReport};
use serde_json::Value;

/// The agent's name of the event, in the report.
const EVENT: &str = "AfterModel";

/// Reads the payload on stdin, reports a finished response's prompt size, prints `{}`.
pub fn main() -> ExitCode {
    // Outside a run there is nobody to tell: skip reading the (possibly large) payload.
    if std::env::var_os(HOOK_REPORT_ENV).is_some_and(|v| !v.is_empty()) {
        let mut input = String::new();
        if std::io::stdin().read_to_string(&mut input).is_ok()
            && let Some(report) = report(&input)
            && let Err(e) = report.send()
        {
            eprintln!("context-pilot model-usage: cannot report to the driver: {e}");
        }
    }
    println!("{{}}");
    ExitCode::SUCCESS
}

/// The usage report of an `AfterModel` payload, when its chunk ends a response and says the
/// prompt size.
pub fn report(payload: &str) -> Option<HookReport> {
    let payload: Value = serde_json::from_str(payload).ok()?;
    let response = &payload["llm_response"];
    let ends = response["candidates"].as_array().is_some_and(|candidates| {
        candidates
            .iter()
            .any(|c| c["finishReason"].as_str().is_some_and(|r| !r.is_empty()))
    });
    if !ends {
        return None;
    }
    let tokens = response["usageMetadata"]["promptTokenCount"].as_u64()?;
    Some(HookReport::usage(EVENT, tokens))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload(finish: Option<&str>, prompt: Option<u64>) -> String {
        let mut candidate = serde_json::json!({"content": {"role": "model", "parts": ["hi"]}});
        if let Some(reason) = finish {
            candidate["finishReason"] = reason.into();
        }
        let mut response = serde_json::json!({"text": "hi", "candidates": [candidate]});
        if let Some(tokens) = prompt {
            response["usageMetadata"] = serde_json::json!({"promptTokenCount": tokens,
                "candidatesTokenCount": 3, "totalTokenCount": tokens + 3});
        }
        serde_json::json!({"hook_event_name": "AfterModel", "session_id": "s",
            "llm_request": {"model": "gemini-2.5-pro", "messages": []},
            "llm_response": response})
        .to_string()
    }

    #[test]
    fn the_chunk_that_ends_a_response_reports_its_prompt_size() {
        assert_eq!(
            report(&payload(Some("STOP"), Some(9_500))),
            Some(HookReport::usage("AfterModel", 9_500))
        );
    }

    #[test]
    fn other_chunks_and_other_payloads_report_nothing() {
        // A chunk in the middle of the stream: the same figure follows at its end.
        assert_eq!(report(&payload(None, Some(9_500))), None);
        assert_eq!(report(&payload(Some("STOP"), None)), None);
        assert_eq!(report("not json"), None);
        assert_eq!(report("{}"), None);
    }
}
