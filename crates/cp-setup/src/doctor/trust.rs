//! The project's trust: whether its callbacks, test command and `llm.base_url` take effect,
//! and what they are (what trusting it would let run).

use cp_base::{Grant, Project, TrustState};

use super::Check;

const GROUP: &str = "trust";

pub(super) fn checks(project: &Project) -> Vec<Check> {
    let grant = match Grant::of(project) {
        Ok(grant) => grant,
        Err(e) => {
            return vec![Check::fail(
                GROUP,
                format!("the project's .context-pilot/config.json cannot be read: {e}"),
                "fix the file (it must be a JSON object)",
            )];
        }
    };
    let allows = summary(&grant);
    let root = project.root().display();
    let how = format!(
        "review it with `context-pilot trust --show --project {root}`, then `context-pilot trust --project {root}`"
    );
    vec![match project.trust_state() {
        TrustState::NothingToTrust => Check::ok(
            GROUP,
            "project needs no trust: its config runs no commands and sets no LLM server",
        ),
        TrustState::Trusted => Check::ok(
            GROUP,
            format!("project is trusted; these take effect: {allows}"),
        ),
        TrustState::TrustedWorktree { repository } => Check::ok(
            GROUP,
            format!(
                "project is a worktree of {}, trusted as it is (the same configuration); \
                 these take effect: {allows}",
                repository.display()
            ),
        ),
        TrustState::Untrusted => Check::fail(
            GROUP,
            format!("project is not trusted, so these are off: {allows}"),
            how,
        ),
        TrustState::Changed => Check::fail(
            GROUP,
            format!(
                "project changed outside Context Pilot since you trusted it, so {allows} are off"
            ),
            how,
        ),
        TrustState::Unknown(why) => Check::fail(
            GROUP,
            format!("project trust cannot be checked ({why}), so these are off: {allows}"),
            how,
        ),
    }]
}

/// E.g. "its callbacks `lint`, `fmt`, the test command `cargo test` and `llm.base_url` `…`".
fn summary(grant: &Grant) -> String {
    let mut parts = Vec::new();
    if !grant.callbacks.is_empty() {
        let names: Vec<String> = grant
            .callbacks
            .iter()
            .map(|c| format!("`{}`", c.name))
            .collect();
        parts.push(format!("its callbacks {}", names.join(", ")));
    }
    if let Some(command) = &grant.test_command {
        parts.push(format!("the test command `{command}`"));
    }
    if let Some(url) = &grant.base_url {
        parts.push(format!("llm.base_url `{url}`"));
    }
    match parts.len() {
        0 => "nothing".to_owned(),
        1 => parts.remove(0),
        _ => {
            let last = parts.pop().unwrap_or_default();
            format!("{} and {last}", parts.join(", "))
        }
    }
}
