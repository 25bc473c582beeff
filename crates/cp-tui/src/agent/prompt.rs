//! The system prompt: who the agent is, how this host works, and every panel's context.

use cp_base::{Registry, lock_module};

/// Builds the system prompt, including each panel's `llm_context()` (callbacks, checkpoint,
/// consoles), so the model knows what exists and what is active.
pub fn system_prompt(registry: &Registry, project_root: &str) -> String {
    let mut prompt = format!(
        "You are a coding agent working in the project at {project_root}, inside Context Pilot.\n\
         - Edit files only with the File_* tools. After each batch of edits, the project's \
         callbacks (build, lint, format, tests) run and their results are appended to the tool \
         results: read them and fix what they report before moving on.\n\
         - Use console_* tools for commands; console_easy_bash for short ones.\n\
         - When you end your turn, a checkpoint may list what to verify and ask you to commit. \
         Do what it says; you cannot stop with uncommitted code changes.\n\
         - When asked for a handoff, call Checkpoint_handoff.\n"
    );
    for module in registry.modules() {
        let module = lock_module(module);
        for panel in module.panels() {
            let context = panel.llm_context();
            if !context.trim().is_empty() {
                prompt.push('\n');
                prompt.push_str(context.trim_end());
                prompt.push('\n');
            }
        }
    }
    prompt
}
