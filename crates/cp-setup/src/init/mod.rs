//! `context-pilot init claude|gemini|codex [--dry-run]`: wire Context Pilot into an agent's
//! project settings. Without a name, [`found`] finds the agents and wires each the same way.
//!
//! - Claude Code: `.mcp.json` gets the `context-pilot` MCP server; `.claude/settings.json`
//!   gets a `PostToolUse` hook for `Write|Edit|MultiEdit|NotebookEdit|Bash` and a `Stop` hook.
//! - Gemini CLI: `.gemini/settings.json` gets the MCP server under `mcpServers` and the
//!   `AfterTool` (`write_file|replace|run_shell_command`) and `AfterAgent` hooks.
//! - Codex CLI: `.codex/config.toml` gets `[mcp_servers.context-pilot]` and `[[hooks.PostToolUse]]`
//!   and `[[hooks.Stop]]` groups, edited in place (comments and key order stay); then `init`
//!   prints the two trust steps Codex needs (trust the project, trust the hooks in `/hooks`).
//!
//! Which files and entries is each agent's descriptor's to say
//! (`cp_agent_cli::AgentCli::project_settings`); this module plans, diffs and writes them.
//!
//! Existing files are merged, not replaced: unknown keys, other servers and other hooks stay,
//! in their order. Running it again changes nothing (our hooks are recognised by their
//! command and only get the current binary path). `--dry-run` prints the unified diff and
//! writes nothing. A settings file that is not valid JSON is reported and left alone.
//!
//! ```no_run
//! use cp_setup::init::plan;
//! let claude = cp_agent_cli::AGENT_CLIS[0];
//! let changes = plan(claude, std::path::Path::new("/work/app"), "context-pilot").unwrap();
//! for change in &changes { print!("{}", change.diff()); }
//! ```

pub mod found;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use cp_agent_cli::{AGENT_CLIS, AgentCli, Apply, Json, TomlMergeError, hooks_of, merge_toml};
use cp_base::write_atomic;
use cp_host::program::program;

/// The command line's parser of the agent to wire up: every agent CLI, with the files `init`
/// writes for it as help (`claude`: "Claude Code: \`.mcp.json\` and \`.claude/settings.json\`").
pub fn agent_parser() -> impl clap::builder::TypedValueParser<Value = &'static dyn AgentCli> {
    use clap::builder::TypedValueParser as _;
    let values = AGENT_CLIS.iter().map(|agent| {
        let spec = agent.spec();
        let files: Vec<String> = agent
            .project_settings("context-pilot", None)
            .iter()
            .map(|file| format!("`{}`", file.path.display()))
            .collect();
        clap::builder::PossibleValue::new(spec.name).help(format!(
            "{}: {}",
            spec.display_name,
            files.join(" and ")
        ))
    });
    clap::builder::PossibleValuesParser::new(values).try_map(|name: String| {
        AGENT_CLIS
            .iter()
            .find(|agent| agent.spec().name == name)
            .copied()
            .ok_or(UnknownAgent(name))
    })
}

/// An agent no descriptor names (the parser's possible values keep it from happening).
#[derive(Debug, thiserror::Error)]
#[error("no agent CLI is named {0:?}")]
pub struct UnknownAgent(String);

/// Why `init` changed nothing.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{path} is not valid {format} ({message}); fix it and run init again — nothing was written"
    )]
    Corrupt {
        path: PathBuf,
        format: &'static str,
        message: String,
    },
    #[error("{path}: {message}; fix it and run init again — nothing was written")]
    Shape { path: PathBuf, message: String },
    #[error(transparent)]
    Store(#[from] cp_base::StoreError),
    #[error(transparent)]
    Agent(#[from] cp_agent_cli::AgentError),
    #[error("--trust-in-codex is for `init codex` only; {0} keeps its trust elsewhere")]
    TrustNotCodex(&'static str),
    #[error(
        "{path} is a symlink to {}, which init will not write through: {reason}; point the \
         link at the settings file, or remove it, and run init again — nothing was written",
        target.display()
    )]
    Link {
        path: PathBuf,
        target: PathBuf,
        reason: String,
    },
}

/// One settings file to write: its text before (if it exists) and after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Relative to the project root, or absolute (the person's own Codex config).
    pub path: PathBuf,
    pub before: Option<String>,
    pub after: String,
}

impl Change {
    /// A unified diff of the change, with `a/` and `b/` paths as git shows them.
    pub fn diff(&self) -> String {
        let name = self.path.display().to_string();
        let (a, b) = if self.path.is_absolute() {
            (name.clone(), name)
        } else {
            (format!("a/{name}"), format!("b/{name}"))
        };
        let old = if self.before.is_some() {
            a
        } else {
            "/dev/null".to_owned()
        };
        similar::TextDiff::from_lines(self.before.as_deref().unwrap_or(""), &self.after)
            .unified_diff()
            .context_radius(3)
            .header(&old, &b)
            .to_string()
    }
}

/// The files that `init` would change under `root`, running `program` for the server and
/// the hooks, for the newest release of the agent. Files already up to date are not listed.
pub fn plan(agent: &dyn AgentCli, root: &Path, program: &str) -> Result<Vec<Change>, InitError> {
    plan_for(agent, root, program, None)
}

/// [`plan`] for the agent at `version` (`None`: its newest release): the hook events that
/// version sends, as its descriptor says.
pub fn plan_for(
    agent: &dyn AgentCli,
    root: &Path,
    program: &str,
    version: Option<cp_agent_cli::Version>,
) -> Result<Vec<Change>, InitError> {
    let targets = agent.project_settings(program, version);
    let mut changes = Vec::new();
    for target in targets {
        let full = root.join(&target.path);
        let before = match std::fs::read_to_string(&full) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => return Err(InitError::Io { path: full, source }),
        };
        let apply = match target.apply {
            Apply::Json(apply) => apply,
            Apply::Toml(apply) => {
                let after = merge_toml(apply.as_ref(), before.as_deref()).map_err(|e| match e {
                    TomlMergeError::Corrupt(message) => InitError::Corrupt {
                        path: full.clone(),
                        format: "TOML",
                        message,
                    },
                    TomlMergeError::Shape(e) => InitError::Shape {
                        path: full.clone(),
                        message: e.to_string(),
                    },
                })?;
                if before.as_deref() != Some(after.as_str()) {
                    changes.push(Change {
                        path: target.path,
                        before,
                        after,
                    });
                }
                continue;
            }
        };
        let mut doc = match before.as_deref().map(str::trim) {
            None | Some("") => Json::Object(indexmap::IndexMap::new()),
            Some(text) => serde_json::from_str(text).map_err(|e| InitError::Corrupt {
                path: full.clone(),
                format: "JSON",
                message: e.to_string(),
            })?,
        };
        if !matches!(doc, Json::Object(_)) {
            return Err(InitError::Shape {
                path: full,
                message: "the top level must be a JSON object".into(),
            });
        }
        apply(&mut doc).map_err(|e| InitError::Shape {
            path: full.clone(),
            message: e.to_string(),
        })?;
        let after = doc.pretty();
        let unchanged = before
            .as_deref()
            .is_some_and(|b| serde_json::from_str::<Json>(b).is_ok_and(|old| old == doc));
        if !unchanged {
            changes.push(Change {
                path: target.path,
                before,
                after,
            });
        }
    }
    Ok(changes)
}

/// Context Pilot's hooks for `agent` as a settings document (`{"hooks": {…}}`), built by the
/// same builders as `init`, for passing per invocation instead of writing them into the
/// project.
pub fn hook_settings(agent: &dyn AgentCli, program: &str) -> serde_json::Value {
    hooks_of(agent.project_settings(program, None))
}

/// Writes the planned changes (each file atomically, keeping its mode). A settings file that
/// is a symlink (to a shared or dotfiles copy) is written where it points, so the link
/// stays a link and the file it names keeps its mode; a link to nothing, or to something
/// that is not a file, is refused before anything is written. Returns where each went.
pub fn apply(root: &Path, changes: &[Change]) -> Result<Vec<PathBuf>, InitError> {
    let targets = changes
        .iter()
        .map(|change| write_target(&root.join(&change.path)))
        .collect::<Result<Vec<_>, _>>()?;
    for (change, target) in changes.iter().zip(&targets) {
        write_atomic(target, change.after.as_bytes())?;
    }
    Ok(targets)
}

/// Where the bytes of the settings file at `path` go: the file itself, or for a symlink the
/// file at the end of its chain.
fn write_target(path: &Path) -> Result<PathBuf, InitError> {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if !is_link {
        return Ok(path.to_path_buf());
    }
    let link = std::fs::read_link(path).unwrap_or_default();
    let refuse = |reason: String| InitError::Link {
        path: path.to_path_buf(),
        target: link.clone(),
        reason,
    };
    match std::fs::canonicalize(path) {
        Ok(target) if target.is_file() => Ok(target),
        Ok(target) => Err(refuse(format!("{} is not a file", target.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(refuse("it does not exist".to_owned()))
        }
        Err(e) => Err(refuse(format!("it cannot be followed ({e})"))),
    }
}

/// The change recording, in the person's own Codex config, the trust of the project at
/// `root` and of our hooks as `changes` leave its `.codex/config.toml`; `None` when it is
/// recorded already.
fn codex_trust_change(root: &Path, changes: &[Change]) -> Result<Option<Change>, InitError> {
    let settings = Path::new(".codex").join("config.toml");
    let project_config = if let Some(change) = changes.iter().find(|c| c.path == settings) {
        change.after.clone()
    } else {
        let full = root.join(&settings);
        std::fs::read_to_string(&full).map_err(|source| InitError::Io { path: full, source })?
    };
    let edit = cp_agent_cli::trust_in_codex(root, &project_config)?;
    Ok(
        (edit.before.as_deref() != Some(edit.after.as_str())).then_some(Change {
            path: edit.path,
            before: edit.before,
            after: edit.after,
        }),
    )
}

/// Runs `init` and returns what to print. With `trust_in_codex` (for Codex CLI only), the
/// project's trust and our hooks' trust are also recorded in the person's own Codex config.
pub fn run(
    agent: &dyn AgentCli,
    root: &Path,
    dry_run: bool,
    trust_in_codex: bool,
) -> Result<String, InitError> {
    let name = agent.spec().display_name;
    if trust_in_codex && agent.spec().name != "codex" {
        return Err(InitError::TrustNotCodex(name));
    }
    let program = program();
    let installed = installed_version(agent, root);
    let mut changes = plan_for(agent, root, &program, installed.as_ref().map(|(v, _)| *v))?;
    if trust_in_codex && let Some(change) = codex_trust_change(root, &changes)? {
        changes.push(change);
    }
    let notes = if trust_in_codex {
        format!(
            "Codex CLI trusts {} and Context Pilot's hooks in it (recorded in your Codex \
             config); `context-pilot doctor` checks both.\n",
            root.display()
        )
    } else {
        agent.init_notes(root).unwrap_or_default()
    };
    if changes.is_empty() {
        return Ok(format!(
            "{name} is already set up to use Context Pilot in {}; nothing to change.\n{notes}",
            root.display()
        ));
    }
    let mut out = String::new();
    if dry_run {
        for change in &changes {
            out.push_str(&change.diff());
        }
        let _ = writeln!(
            out,
            "Dry run: {} file(s) would change; nothing was written.",
            changes.len()
        );
        if !trust_in_codex {
            out.push_str(&notes);
        }
        return Ok(out);
    }
    let targets = apply(root, &changes)?;
    for (change, target) in changes.iter().zip(&targets) {
        let verb = if change.before.is_some() {
            "Updated"
        } else {
            "Created"
        };
        let _ = write!(out, "{verb} {}", change.path.display());
        if *target != root.join(&change.path) && *target != change.path {
            let _ = write!(out, " (through the link, in {})", target.display());
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "{name} now runs `{program} mcp` as an MCP server and calls `{program} hook …` after edits and at stops. Restart {name} to pick it up."
    );
    let _ = writeln!(out, "{}", wired_events(agent, installed.as_ref()));
    out.push_str(&notes);
    Ok(out)
}

/// The version of `agent` the project runs (config's `agent.command` when `agent.kind` names
/// it, else the program on `PATH`), and how it was found; `None` when it is not installed.
fn installed_version(agent: &dyn AgentCli, root: &Path) -> Option<(cp_agent_cli::Version, String)> {
    let config = cp_agent_cli::AgentConfig::load(&cp_base::Project::at(root)).ok();
    let command = config
        .filter(|c| {
            c.kind
                .and_then(cp_agent_cli::AgentKind::cli)
                .is_some_and(|k| k.spec().name == agent.spec().name)
        })
        .and_then(|c| c.command);
    let binary = agent.spec().locate(command.as_deref()).ok()?;
    let version = binary.parsed_version()?;
    Some((version, binary.version))
}

/// Which of the agent's hook events `init` wired, and for which version: "Hooks for Claude
/// Code 2.1.332: `PostToolBatch`, Stop, `SubagentStop`, `SessionStart` (compact)."
fn wired_events(
    agent: &dyn AgentCli,
    installed: Option<&(cp_agent_cli::Version, String)>,
) -> String {
    let spec = agent.spec();
    let events: Vec<String> = spec
        .wired_events(installed.map(|(v, _)| *v))
        .map(|event| match spec.matcher_of(event) {
            Some(matcher) if event.matcher != cp_agent_cli::HookMatcher::EditTools => {
                format!("{} ({matcher})", event.name)
            }
            _ => event.name.to_owned(),
        })
        .collect();
    let which = match installed {
        Some((_, version)) => format!("{} {version}", spec.display_name),
        None => format!(
            "{}'s newest release (it is not installed here)",
            spec.display_name
        ),
    };
    format!("Hooks for {which}: {}.", events.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(name: &str) -> &'static dyn AgentCli {
        name.parse::<cp_agent_cli::AgentKind>()
            .unwrap()
            .cli()
            .unwrap()
    }

    const CLAUDE_EDIT_MATCHER: &str = "Write|Edit|MultiEdit|NotebookEdit|Bash";

    #[test]
    fn hook_settings_hold_only_the_hooks_init_writes() {
        let claude = hook_settings(agent("claude"), "/opt/cp/context-pilot");
        assert_eq!(
            claude["hooks"]["Stop"][0]["hooks"][0]["command"],
            "/opt/cp/context-pilot hook stop"
        );
        // The newest release fires callbacks once per batch.
        assert!(claude["hooks"].get("PostToolUse").is_none(), "{claude}");
        assert_eq!(
            claude["hooks"]["PostToolBatch"][0]["hooks"][0]["command"],
            "/opt/cp/context-pilot hook post-tool-batch"
        );
        let gemini = hook_settings(agent("gemini"), "context-pilot");
        assert!(gemini.get("mcpServers").is_none(), "{gemini}");
        assert_eq!(
            gemini["hooks"]["AfterAgent"][0]["hooks"][0]["command"],
            "context-pilot hook after-agent"
        );
    }

    #[test]
    fn merges_without_clobbering_and_is_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".claude")).unwrap();
        let mine = r#"{
  "permissions": {"allow": ["Bash(ls:*)"]},
  "hooks": {
    "PostToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo ran"}]}
    ]
  }
}
"#;
        std::fs::write(root.join(".claude/settings.json"), mine).unwrap();
        // Claude Code 2.1.117, the last release with callbacks at `PostToolUse`.
        let old = Some((2, 1, 117));
        let plan = |program: &str| plan_for(agent("claude"), root, program, old);
        let changes = plan("/opt/cp/context-pilot").unwrap();
        assert_eq!(changes.len(), 2);
        apply(root, &changes).unwrap();
        let settings: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(root.join(".claude/settings.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(settings["permissions"]["allow"][0], "Bash(ls:*)");
        let post = settings["hooks"]["PostToolUse"].as_array().unwrap();
        assert_eq!(post.len(), 2);
        assert_eq!(post[0]["hooks"][0]["command"], "echo ran");
        assert_eq!(post[1]["matcher"], CLAUDE_EDIT_MATCHER);
        assert_eq!(
            post[1]["hooks"][0]["command"],
            "/opt/cp/context-pilot hook post-tool-use"
        );
        assert_eq!(
            settings["hooks"]["Stop"][0]["hooks"][0]["command"],
            "/opt/cp/context-pilot hook stop"
        );
        assert!(plan("/opt/cp/context-pilot").unwrap().is_empty());

        // The binary moved: our entries follow it, nothing is duplicated.
        let moved = plan("context-pilot").unwrap();
        assert_eq!(moved.len(), 2);
        apply(root, &moved).unwrap();
        let settings = std::fs::read_to_string(root.join(".claude/settings.json")).unwrap();
        assert_eq!(settings.matches("hook post-tool-use").count(), 1);
        assert!(settings.contains("\"context-pilot hook stop\""));

        // Claude Code is upgraded: init moves the callbacks to PostToolBatch and keeps mine.
        let upgraded = plan_for(agent("claude"), root, "context-pilot", Some((2, 1, 332))).unwrap();
        apply(root, &upgraded).unwrap();
        let settings: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(root.join(".claude/settings.json")).unwrap(),
        )
        .unwrap();
        let post = settings["hooks"]["PostToolUse"].as_array().unwrap();
        assert_eq!(post.len(), 1, "{settings}");
        assert_eq!(post[0]["hooks"][0]["command"], "echo ran");
        assert_eq!(
            settings["hooks"]["PostToolBatch"][0]["hooks"][0]["command"],
            "context-pilot hook post-tool-batch"
        );
    }

    #[test]
    fn a_corrupt_file_is_reported_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".gemini")).unwrap();
        std::fs::write(dir.path().join(".gemini/settings.json"), "{ oops").unwrap();
        let err = plan(agent("gemini"), dir.path(), "context-pilot").unwrap_err();
        assert!(err.to_string().contains("is not valid JSON"), "{err}");
        assert!(err.to_string().contains("nothing was written"), "{err}");
        std::fs::create_dir_all(dir.path().join(".codex")).unwrap();
        std::fs::write(dir.path().join(".codex/config.toml"), "[oops").unwrap();
        let err = plan(agent("codex"), dir.path(), "context-pilot").unwrap_err();
        assert!(err.to_string().contains("is not valid TOML"), "{err}");
    }

    #[test]
    fn codex_init_writes_toml_once_and_tells_the_trust_steps() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".codex")).unwrap();
        let mine = "# keep me\n[mcp_servers.other]\ncommand = \"x\"\n";
        std::fs::write(root.join(".codex/config.toml"), mine).unwrap();
        let dry = run(agent("codex"), root, true, false).unwrap();
        assert!(dry.contains("+[mcp_servers.context-pilot]"), "{dry}");
        assert!(dry.contains("trust_level = \"trusted\""), "{dry}");
        assert_eq!(
            std::fs::read_to_string(root.join(".codex/config.toml")).unwrap(),
            mine
        );
        let changes = plan(agent("codex"), root, "/opt/cp/context-pilot").unwrap();
        assert_eq!(changes.len(), 1);
        apply(root, &changes).unwrap();
        let text = std::fs::read_to_string(root.join(".codex/config.toml")).unwrap();
        assert!(text.starts_with(mine), "{text}");
        assert!(
            text.contains("/opt/cp/context-pilot hook codex-stop"),
            "{text}"
        );
        assert!(
            plan(agent("codex"), root, "/opt/cp/context-pilot")
                .unwrap()
                .is_empty()
        );
    }
}
