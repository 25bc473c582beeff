//! The prompt: a stable system prompt (who the agent is, how this host works) and the panel
//! contexts, which change from request to request and so travel separately.
//!
//! The split keeps the provider's prompt cache warm: the system prompt and the conversation
//! form a byte-stable prefix, and the panel contexts (a console tail, callback states) are sent
//! after it, at the end of the latest user message ([`cp_llm::Request::context`]).

use cp_base::Registry;

/// The system prompt. It depends only on the project root, so it is identical in every request
/// of a session.
pub fn system_prompt(project_root: &str) -> String {
    format!(
        "You are a coding agent working in the project at {project_root}, inside Context Pilot.\n\
         - Edit files only with the File_* tools. After each batch of edits, the project's \
         callbacks (build, lint, format, tests) run and their results are appended to the tool \
         results: read them and fix what they report before moving on.\n\
         - Search with File_glob (file names) and File_grep (contents) rather than shell \
         commands.\n\
         - Use console_* tools for commands; console_easy_bash for short ones.\n\
         - When you end your turn, a checkpoint may list what to verify and ask you to commit. \
         Do what it says; you cannot stop with uncommitted code changes.\n\
         - When asked for a handoff, call Checkpoint_handoff.\n\
         - The current state of the panels (callbacks, checkpoint, consoles) comes at the end \
         of the latest message, inside <panels>; it replaces any earlier state.\n"
    )
}

/// Every panel's `llm_context()` (callbacks, checkpoint, consoles), so the model knows what
/// exists and what is active, wrapped in `<panels>`; empty when no panel has anything to say.
pub fn panel_context(registry: &Registry) -> String {
    // From the published snapshots: a tool that holds its module does not delay the turn.
    let mut context = String::new();
    for text in registry.views().llm_contexts() {
        context.push_str(text.trim_end());
        context.push('\n');
    }
    if context.is_empty() {
        return context;
    }
    format!("<panels>\n{context}</panels>")
}
