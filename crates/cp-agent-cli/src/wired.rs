//! Whether the agent actually loaded Context Pilot's wiring, checked once its first response
//! arrives: one mechanism for every agent CLI.
//!
//! An agent CLI may start without the MCP server and hooks it was given and still exit 0: a
//! settings file it skipped (Gemini CLI skips a system settings file not owned by root), a
//! user setting that turns hooks off, an MCP allow-list. Such a run has no Context Pilot
//! tools, no callbacks, no stop gate and no usage reports, so it must not go on. Both parts
//! prove themselves through the run's report file (`CP_HOOK_REPORT`):
//!
//! - **the hooks**: every agent's descriptor names a hook event that runs before the model is
//!   asked ([`AgentCli::probe_event`](crate::AgentCli)); the driver adds a probe hook there
//!   (`context-pilot wiring-probe`), which reports [`HookReportKind::Wired`] with that event.
//!   Any other hook report counts as well.
//! - **the MCP server**: `context-pilot mcp` reports [`HookReportKind::Wired`] with the event
//!   [`MCP_WIRED`] when its client sends `initialize`. Both agents wait for their MCP servers
//!   before the first request of a headless run.
//!
//! When the first text, tool call or result of the agent arrives and either proof is missing,
//! the driver ends the agent and the session fails with what is missing and what the agent
//! wrote on stderr (for Gemini CLI, its "Security Warning: Skipping …" line).
//!
//! [`HookReportKind::Wired`]: crate::HookReportKind::Wired

/// The report event of the MCP server's proof.
pub const MCP_WIRED: &str = "mcp";

/// The internal `context-pilot` command of the probe hook.
pub const PROBE_COMMAND: &str = "wiring-probe";

/// What arrived so far.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WiredCheck {
    hooks: bool,
    mcp: bool,
    /// The check was made (at the first response).
    done: bool,
}

impl WiredCheck {
    /// A report arrived: the MCP server's proof, or a hook's.
    pub(crate) fn saw_report(&mut self, mcp: bool) {
        if mcp {
            self.mcp = true;
        } else {
            self.hooks = true;
        }
    }

    /// At the agent's first response (later calls say nothing): what was not loaded, if
    /// anything.
    pub(crate) fn missing(&mut self) -> Option<&'static str> {
        if std::mem::replace(&mut self.done, true) {
            return None;
        }
        match (self.hooks, self.mcp) {
            (true, true) => None,
            (false, true) => Some("Context Pilot's hooks (no hook ran before the model was asked)"),
            (true, false) => Some("Context Pilot's MCP server (it was never initialized)"),
            (false, false) => Some(
                "Context Pilot's hooks and MCP server (no hook ran before the model was asked, \
                 and the MCP server was never initialized)",
            ),
        }
    }
}

/// The message of a run stopped because `missing` was not loaded, with the lines of the
/// agent's `stderr` that say why (warnings and errors first; else all of it).
pub(crate) fn unwired_message(agent: &str, missing: &str, stderr: &str) -> String {
    let telling: Vec<&str> = stderr
        .lines()
        .filter(|line| {
            let lower = line.to_ascii_lowercase();
            ["warning", "skipping", "error", "hook", "mcp"]
                .iter()
                .any(|word| lower.contains(word))
        })
        .collect();
    let said = if telling.is_empty() {
        stderr.trim().to_owned()
    } else {
        telling.join("\n")
    };
    let said = if said.is_empty() {
        format!("{agent} said nothing on stderr")
    } else {
        format!("{agent} said:\n{said}")
    };
    format!(
        "{agent} started without {missing}, so it was stopped: without them there are no \
         Context Pilot tools, callbacks, stop gate or usage reports. Check the agent's own \
         settings (hooks turned off, an MCP allow-list) and its warnings. {said}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_check_is_made_once_and_names_what_is_missing() {
        let mut check = WiredCheck::default();
        check.saw_report(true);
        let missing = check.missing().unwrap();
        assert!(
            missing.contains("hooks") && !missing.contains("MCP"),
            "{missing}"
        );
        assert_eq!(check.missing(), None, "only the first response is checked");

        let mut check = WiredCheck::default();
        check.saw_report(false);
        check.saw_report(true);
        assert_eq!(check.missing(), None);

        let mut check = WiredCheck::default();
        assert!(check.missing().unwrap().contains("hooks and MCP server"));
    }

    #[test]
    fn the_message_quotes_the_agents_warning() {
        let stderr = "Loaded cached credentials.\nSecurity Warning: Skipping system settings \
                      file '/x/s.json': is not owned by root (uid 0)\nHello";
        let message = unwired_message("Gemini CLI", "Context Pilot's hooks", stderr);
        assert!(
            message.contains("Gemini CLI started without Context Pilot's hooks"),
            "{message}"
        );
        assert!(
            message.ends_with("is not owned by root (uid 0)"),
            "{message}"
        );
        assert!(!message.contains("cached credentials"), "{message}");
        let message = unwired_message("Claude Code", "x", "");
        assert!(message.contains("said nothing on stderr"), "{message}");
    }
}
