//! The configured LLM provider: whether it resolves and has its key, whether its model list
//! answers (within a few seconds), and whether the model is listed. With no provider, an
//! agent CLI that can be used instead is enough.

use std::time::Duration;

use cp_agent_cli::Presence;
use cp_base::Project;
use cp_llm::{
    ProviderConfig, check_model, ignored_base_url_error, list_models_within, process_env,
};

use super::Check;

const GROUP: &str = "provider";

/// How long the model list may take.
const LIST_LIMIT: Duration = Duration::from_secs(5);

const HOW: &str = "set ANTHROPIC_API_KEY, or OPENAI_API_KEY and/or OPENAI_BASE_URL, or the \
                   `llm` section of ~/.config/context-pilot/config.json (see \
                   docs/guide/models.md)";

pub(super) fn checks(project: &Project, presence: &[Presence]) -> Vec<Check> {
    let section = match cp_llm::llm_section(project) {
        Ok(section) => section,
        Err(e) => {
            return vec![Check::fail(
                GROUP,
                format!("LLM config: {e}"),
                "fix the file",
            )];
        }
    };
    let resolved = match ProviderConfig::resolve(&process_env, section.section.as_ref()) {
        Ok(resolved) => resolved,
        Err(e) => return vec![Check::fail(GROUP, format!("LLM provider: {e}"), HOW)],
    };
    let Some(config) = resolved else {
        if let Some(url) = section.ignored_base_url {
            return vec![Check::fail(
                GROUP,
                ignored_base_url_error(&url, project, "OPENAI_BASE_URL"),
                format!(
                    "`context-pilot trust --project {}`",
                    project.root().display()
                ),
            )];
        }
        return vec![no_provider(presence)];
    };
    let mut checks = Vec::new();
    let label = config.label();
    match &config.api_key {
        Some(_) => checks.push(Check::ok(
            GROUP,
            format!("{label}: key set ({})", config.kind.key_var()),
        )),
        None => checks.push(Check::info(
            GROUP,
            format!("{label}: no key ({} is not set)", config.kind.key_var()),
            Some("a local server may need none".into()),
        )),
    }
    let models = match list_models_within(&config, LIST_LIMIT) {
        Ok(models) => models,
        Err(e) => {
            checks.push(Check::fail(
                GROUP,
                format!("{label}: the model list does not answer: {e}"),
                format!(
                    "check that the server runs and that {} or llm.base_url names it",
                    config.kind.base_url_var()
                ),
            ));
            return checks;
        }
    };
    checks.push(Check::ok(
        GROUP,
        format!("{label}: the model list answers ({} models)", models.len()),
    ));
    let check = check_model(&config, &models);
    if check.unknown_model {
        checks.push(Check::fail(
            GROUP,
            format!("model `{}` is not listed", config.model),
            check
                .notice
                .unwrap_or_else(|| "set llm.model or CP_MODEL".into()),
        ));
    } else {
        checks.push(Check::ok(
            GROUP,
            format!("model `{}` is listed", check.config.model),
        ));
    }
    checks
}

/// No provider: fine when an agent CLI can run the TUI's turns instead.
fn no_provider(presence: &[Presence]) -> Check {
    let usable: Vec<String> = presence
        .iter()
        .filter(|p| p.found.usable().is_some())
        .map(|p| format!("`context-pilot --agent {}`", p.agent.spec().name))
        .collect();
    if usable.is_empty() {
        Check::fail(
            GROUP,
            "no LLM provider is configured and no agent CLI can be used, so there is no agent to talk to",
            presence.first().map_or_else(
                || HOW.to_owned(),
                |p| {
                    format!(
                        "{HOW}; or get {}: {}",
                        p.agent.spec().display_name,
                        p.agent.spec().install
                    )
                },
            ),
        )
    } else {
        Check::info(
            GROUP,
            "no LLM provider is configured",
            Some(format!(
                "your agent CLI works without one: {}",
                usable.join(" or ")
            )),
        )
    }
}
