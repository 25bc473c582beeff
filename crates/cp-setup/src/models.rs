//! `context-pilot models`: the configured provider's model list, newest first, with the model
//! that would be used marked, and a warning with the closest names when the configured one is
//! not listed.

use std::fmt::Write as _;
use std::time::{Duration, UNIX_EPOCH};

use cp_base::Project;

use cp_llm::{ModelInfo, ProviderConfig, check_model, list_models, process_env};

/// Prints the list; returns the exit code (1 when no provider is configured, the list cannot
/// be read, or the configured model is not listed).
pub fn run(project: &Project) -> anyhow::Result<u8> {
    let section = project.config().raw_section("llm")?;
    let Some(config) = ProviderConfig::resolve(&process_env, section.as_ref())? else {
        eprintln!(
            "context-pilot: no LLM provider is configured: set ANTHROPIC_API_KEY, or \
             OPENAI_BASE_URL for an OpenAI-compatible server"
        );
        return Ok(1);
    };
    let mut models = match list_models(&config) {
        Ok(models) => models,
        Err(e) => {
            eprintln!("context-pilot: {e}");
            return Ok(1);
        }
    };
    let check = check_model(&config, &models);
    models.sort_by(|a, b| (b.created, &b.id).cmp(&(a.created, &a.id)));
    print!("{}", render(&config, &check.config.model, &models));
    println!(
        "in use: {} (context window {} tokens)",
        check.config.model, check.config.context_window
    );
    if let Some(notice) = &check.notice {
        eprintln!("context-pilot: {notice}");
    }
    Ok(u8::from(check.unknown_model))
}

/// One line a model: a `*` on the one in use, the id, the creation date and the window.
fn render(config: &ProviderConfig, in_use: &str, models: &[ModelInfo]) -> String {
    let mut out = format!(
        "{} models at {}, newest first:\n",
        models.len(),
        config.label()
    );
    let width = models.iter().map(|m| m.id.len()).max().unwrap_or(0);
    for model in models {
        let mark = if model.id == in_use { '*' } else { ' ' };
        let date = if model.created == 0 {
            "-".to_owned()
        } else {
            let time = UNIX_EPOCH + Duration::from_secs(model.created);
            humantime::format_rfc3339_seconds(time)
                .to_string()
                .chars()
                .take(10)
                .collect()
        };
        let _ = write!(out, "{mark} {:<width$}  {date}", model.id);
        if let Some(window) = model.context_window {
            let _ = write!(out, "  window {window}");
        }
        out.push('\n');
    }
    out
}
