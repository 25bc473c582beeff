//! `context-pilot trust`, and telling the person once that an untrusted project's callbacks,
//! test command and `llm.base_url` are off (see [`cp_base::TrustStore`] for what is trusted
//! and where it is recorded).

use cp_base::{Grant, Project, TrustState, write_atomic};

/// The file under `.context-pilot/run/` that remembers what was last said about trust, so the
/// hooks and the MCP server say it once per change of the project's grant.
pub const NOTICE_FILE: &str = "trust-notice";

/// What `context-pilot trust [--show | --revoke]` prints.
pub fn command(project: &Project, show: bool, revoke: bool) -> anyhow::Result<String> {
    let root = project.root().display();
    let store = project
        .trust_store()
        .path()
        .map_or_else(|| "(no place)".to_owned(), |p| p.display().to_string());
    if revoke {
        let was = project.trust_store().revoke(project.root())?;
        return Ok(if was {
            format!("{root} is no longer trusted (removed from {store}).\n")
        } else {
            format!("{root} was not trusted; nothing changed.\n")
        });
    }
    if show {
        let grant = Grant::of(project)?;
        let state = match project.trust_state() {
            TrustState::NothingToTrust => "needs no trust".to_owned(),
            TrustState::Trusted => "is trusted".to_owned(),
            TrustState::TrustedWorktree { repository } => format!(
                "is a worktree of {}, trusted as it is while its configuration is the same",
                repository.display()
            ),
            TrustState::Untrusted => "is not trusted".to_owned(),
            TrustState::Changed => {
                "was trusted, but changed outside Context Pilot since; not trusted".to_owned()
            }
            TrustState::Unknown(why) => format!("cannot be checked ({why}); not trusted"),
        };
        return Ok(format!(
            "{root} {state}.\nTrusting it allows:\n\n{}",
            grant.describe()
        ));
    }
    let grant = project.grant_trust()?;
    if grant.is_empty() {
        return Ok(format!("{root}: {}", grant.describe()));
    }
    Ok(format!(
        "Trusted {root} (recorded in {store}). Allowed:\n\n{}Any change to these made outside \
         Context Pilot's own tools needs `context-pilot trust` again.\n",
        grant.describe()
    ))
}

/// The advice for the person when the project is not trusted and it was not given yet for
/// the project as it is now; remembers that it was given.
///
/// A worktree of a repository (an agent's, a workflow phase's) is a folder the person may
/// never have seen: when the repository itself is not trusted, the advice is the
/// repository's, said once for both; when the repository is trusted and the worktree's
/// configuration differs, the advice names both.
pub fn notice_once(project: &Project) -> Option<String> {
    let state = project.trust_state();
    if state.allows() {
        return None;
    }
    if let Some(repository) = project.worktree_of() {
        let main = Project::at(&repository).with_trust_store(project.trust_store().clone());
        let main_state = main.trust_state();
        if !main_state.allows() {
            return said_once(&main, &main_state, main_state.advice(main.root()));
        }
        let advice = format!(
            "Context Pilot: {} is a worktree of {}, which you trusted, but its              .context-pilot/ allows something else (callbacks, test command or              llm.base_url changed outside Context Pilot), so they are off there; review it              with `context-pilot trust --show --project {}`.",
            project.root().display(),
            repository.display(),
            project.root().display()
        );
        return said_once(project, &state, advice);
    }
    let advice = state.advice(project.root());
    said_once(project, &state, advice)
}

/// `advice` unless it was said for `project` in `state` with its grant as it is now.
fn said_once(project: &Project, state: &TrustState, advice: String) -> Option<String> {
    let key = match Grant::of(project) {
        Ok(grant) => format!("{:?} {}", state, grant.hash()),
        Err(e) => format!("{state:?} {e}"),
    };
    let marker = project.run_dir().join(NOTICE_FILE);
    if std::fs::read_to_string(&marker).is_ok_and(|said| said == key) {
        return None;
    }
    if let Err(e) = write_atomic(&marker, key.as_bytes()) {
        tracing::warn!("cannot remember the trust notice: {e}");
    }
    Some(advice)
}

/// `stdout` (a hook's JSON reply, or none) with `message` as its `systemMessage`, which both
/// Claude Code and Gemini CLI show to the person.
pub fn with_system_message(stdout: Option<String>, message: &str) -> Option<String> {
    let mut value = stdout
        .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
        .filter(serde_json::Value::is_object)
        .unwrap_or_else(|| serde_json::json!({}));
    let text = match value
        .get("systemMessage")
        .and_then(serde_json::Value::as_str)
    {
        Some(existing) => format!("{existing}\n{message}"),
        None => message.to_owned(),
    };
    value["systemMessage"] = serde_json::Value::String(text);
    Some(value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn parsed(stdout: Option<String>) -> Value {
        serde_json::from_str(&stdout.unwrap()).unwrap()
    }

    #[test]
    fn the_advice_joins_any_hook_reply_as_its_system_message() {
        // Claude Code with nothing else to say: the reply is just the message.
        assert_eq!(
            parsed(with_system_message(None, "trust it")),
            json!({"systemMessage": "trust it"})
        );
        // Gemini CLI's reply keeps its fields; an existing message comes first.
        let gemini = json!({
            "systemMessage": "a callback failed",
            "hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": "x"}
        });
        let merged = parsed(with_system_message(Some(gemini.to_string()), "trust it"));
        assert_eq!(merged["systemMessage"], "a callback failed\ntrust it");
        assert_eq!(merged["hookSpecificOutput"]["additionalContext"], "x");
    }
}
