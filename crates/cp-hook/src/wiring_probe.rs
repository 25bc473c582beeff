//! `context-pilot wiring-probe`: the hook a run Context Pilot drives adds on the agent's
//! prompt event (Claude Code's `UserPromptSubmit`, Gemini CLI's `BeforeAgent`), to prove that
//! the agent loaded the hooks it was given. It reports that to the driver (`CP_HOOK_REPORT`),
//! which stops a run whose agent skipped its wiring (see `cp_agent_cli`'s wiring check).
//!
//! Like `model-usage` it does as little as it can: the payload is read (the agent writes it
//! and must not see a broken pipe) for its event name, one line is appended, and `{}` is
//! printed (both agents parse a hook's stdout as JSON; an empty object changes nothing). It
//! never fails the agent.

use std::io::Read as _;
use std::process::ExitCode;

use cp_agent_cli::{HOOK_REPORT_ENV, HookReport};
use serde_json::Value;

/// Reads the payload on stdin, reports the probe, prints `{}`.
pub fn main() -> ExitCode {
    let mut input = String::new();
    let _ = std::io::stdin().read_to_string(&mut input);
    if std::env::var_os(HOOK_REPORT_ENV).is_some_and(|v| !v.is_empty())
        && let Err(e) = HookReport::wired(&event(&input)).send()
    {
        eprintln!("context-pilot wiring-probe: cannot report to the driver: {e}");
    }
    println!("{{}}");
    ExitCode::SUCCESS
}

/// The payload's `hook_event_name`, else `hook`.
fn event(payload: &str) -> String {
    serde_json::from_str::<Value>(payload)
        .ok()
        .and_then(|v| v["hook_event_name"].as_str().map(str::to_owned))
        .unwrap_or_else(|| "hook".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_event_comes_from_the_payload() {
        assert_eq!(
            event(r#"{"hook_event_name": "BeforeAgent", "prompt": "x"}"#),
            "BeforeAgent"
        );
        assert_eq!(event("not json"), "hook");
    }
}
