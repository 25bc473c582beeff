//! For each agent: whether `context-pilot init` wired it into this project (its MCP server
//! entry and its hooks, both), whether the binary they run still exists, whether the hook
//! events wired are the ones the installed version sends (its descriptor's
//! [`AgentSpec::wired_events`](cp_agent_cli::AgentSpec::wired_events): an upgrade to Claude
//! Code 2.1.118 wants `PostToolBatch` instead of `PostToolUse`, a downgrade the reverse), and
//! whether Context Pilot's plugin wires it too (a project wired twice is named, with how to
//! clear it), and what the agent itself must trust before it uses them (the descriptor's
//! [`AgentCli::trust_checks`], e.g. Codex's project and hook trust, and for a plugin
//! [`crate::plugins::plugin_trust_checks`], e.g. Codex's trust of the plugin's hooks).

use std::path::{Path, PathBuf};

use cp_agent_cli::{AgentCli, Presence};
use cp_base::Project;

use super::Check;

const GROUP: &str = "wiring";

/// The checks of every agent of `presence` (what `doctor` found of each).
pub(super) fn checks(project: &Project, presence: &[Presence]) -> Vec<Check> {
    let mut checks = Vec::new();
    for found in presence {
        let agent = found.agent;
        let check = wired(agent, project.root());
        let is_wired = check.status != super::Status::Info;
        let is_ok = check.status == super::Status::Ok;
        let plugin = crate::plugins::installed_plugin(agent.spec().name, project.root());
        match &plugin {
            Some(plugin) if is_wired => checks.push(wired_twice(agent, plugin)),
            Some(plugin) => checks.push(Check::ok(
                GROUP,
                format!(
                    "{}: wired by Context Pilot's plugin ({})",
                    agent.spec().display_name,
                    plugin.recorded
                ),
            )),
            None => {}
        }
        if plugin.is_none() || is_wired {
            checks.push(check);
        }
        if plugin.is_some() {
            checks.extend(
                crate::plugins::plugin_trust_checks(agent.spec().name)
                    .into_iter()
                    .map(trust_check),
            );
        }
        if is_ok
            && let Some(binary) = found.found.usable()
            && let Some(check) = events_check(agent, project.root(), binary)
        {
            checks.push(check);
        }
        if is_wired {
            checks.extend(
                agent
                    .trust_checks(project.root())
                    .into_iter()
                    .map(trust_check),
            );
        }
    }
    checks
}

/// An agent's trust as a check: ✓, or ✗ with how to give it.
fn trust_check(trust: cp_agent_cli::AgentTrust) -> Check {
    match trust.fix {
        Some(fix) if !trust.ok => Check::fail(GROUP, trust.what, fix),
        _ => Check::ok(GROUP, trust.what),
    }
}

/// A project wired by `init` and by the plugin: each hook runs once (the plugin's leave the
/// events to `init`'s), but the agent starts two MCP servers and lists every tool twice.
fn wired_twice(agent: &dyn AgentCli, plugin: &crate::plugins::InstalledPlugin) -> Check {
    let name = agent.spec().display_name;
    let files: Vec<String> = settings_files(agent)
        .iter()
        .map(|f| f.display().to_string())
        .collect();
    let files = files.join(" and ");
    Check::fail(
        GROUP,
        format!(
            "{name}: wired twice, by `init` ({files}) and by Context Pilot's plugin ({}); each \
             hook runs once, but every Context Pilot tool is listed twice",
            plugin.recorded
        ),
        format!(
            "keep one: `{}`, or remove Context Pilot's entries from {files}",
            plugin.remove
        ),
    )
}

/// A program `init` wrote (in the MCP server entry or a hook command), and the file it is in.
struct Written {
    file: PathBuf,
    program: String,
    /// `the MCP server` or `the hooks`.
    what: &'static str,
    /// `runs` or `run`, as `what` needs.
    verb: &'static str,
}

fn wired(agent: &dyn AgentCli, root: &Path) -> Check {
    let spec = agent.spec();
    let name = spec.display_name;
    let init = format!("context-pilot init {}", spec.name);
    let files = settings_files(agent);
    let events: Vec<&str> = spec.hook_events.iter().map(|e| e.cli_name).collect();
    let mut written = Vec::new();
    for file in &files {
        let Ok(text) = std::fs::read_to_string(root.join(file)) else {
            continue;
        };
        if let Some(program) = cp_agent_cli::mcp_server_program(&text) {
            written.push(Written {
                file: file.clone(),
                program,
                what: "the MCP server",
                verb: "runs",
            });
        }
        for program in hook_programs(&text, &events) {
            written.push(Written {
                file: file.clone(),
                program,
                what: "the hooks",
                verb: "run",
            });
        }
    }
    if written.is_empty() {
        return Check::info(
            GROUP,
            format!("{name}: not wired into this project"),
            Some(format!("to use it with Context Pilot: `{init}`")),
        );
    }
    for (part, fix) in [
        ("the MCP server", "its MCP server entry"),
        ("the hooks", "its hooks"),
    ] {
        if !written.iter().any(|w| w.what == part) {
            let listed: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
            return Check::fail(
                GROUP,
                format!(
                    "{name}: half wired — {} has no Context Pilot entry for {part}",
                    listed.join(" / ")
                ),
                format!("run `{init}` again (it adds {fix} and keeps the rest)"),
            );
        }
    }
    if let Some(gone) = written.iter().find(|w| !runs(&w.program)) {
        return Check::fail(
            GROUP,
            format!(
                "{name}: {} in {} {} `{}`, which is not there any more",
                gone.what,
                gone.file.display(),
                gone.verb,
                gone.program
            ),
            format!("run `{init}` again (our entries follow the binary to where it is now)"),
        );
    }
    let listed: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    Check::ok(
        GROUP,
        format!(
            "{name}: wired ({}), running `{}`",
            listed.join(", "),
            written[0].program
        ),
    )
}

/// The project settings files `init` writes for `agent`.
fn settings_files(agent: &dyn AgentCli) -> Vec<PathBuf> {
    agent
        .project_settings("context-pilot", None)
        .into_iter()
        .map(|file| file.path)
        .collect()
}

/// Whether the hook events wired into the project are those `binary`'s version sends; `None`
/// when they are.
fn events_check(
    agent: &dyn AgentCli,
    root: &Path,
    binary: &cp_agent_cli::AgentBinary,
) -> Option<Check> {
    let spec = agent.spec();
    let version = binary.parsed_version()?;
    let text: String = settings_files(agent)
        .iter()
        .filter_map(|file| std::fs::read_to_string(root.join(file)).ok())
        .collect::<Vec<_>>()
        .join("\n");
    let wired = |cli_name: &str| !hook_programs(&text, &[cli_name]).is_empty();
    let missing: Vec<String> = spec
        .wired_events(Some(version))
        .filter(|event| !wired(event.cli_name))
        .map(|event| format!("{} ({})", event.name, event.kind.does()))
        .collect();
    let stale: Vec<&str> = spec
        .hook_events
        .iter()
        .filter(|event| !event.wired_for(Some(version)) && wired(event.cli_name))
        .map(|event| event.name)
        .collect();
    if missing.is_empty() && stale.is_empty() {
        return None;
    }
    let name = spec.display_name;
    let mut what = Vec::new();
    if !missing.is_empty() {
        what.push(format!("lack {}", missing.join(", ")));
    }
    if !stale.is_empty() {
        what.push(format!(
            "have {}, which {} {} does not send as wired (its callbacks or gate would run \
             twice or never)",
            stale.join(", "),
            name,
            binary.version
        ));
    }
    Some(Check::fail(
        GROUP,
        format!(
            "{name} {}: the project's hooks {}",
            binary.version,
            what.join(" and ")
        ),
        format!(
            "run `context-pilot init {}` again: it wires the events of the installed version",
            spec.name
        ),
    ))
}

/// The programs of the hook commands in a settings file's text: the quoted string that ends
/// in ` hook EVENT` for one of `events`, up to ` hook` (the program as `init` wrote it, quotes
/// of a shell word removed).
fn hook_programs(text: &str, events: &[&str]) -> Vec<String> {
    let mut programs = Vec::new();
    for line in text.lines() {
        for event in events {
            let needle = format!(" hook {event}\"");
            let Some(at) = line.find(&needle) else {
                continue;
            };
            let before = &line[..at];
            let start = before.rfind('"').map_or(0, |i| i + 1);
            let program = before[start..].trim();
            let program = program
                .strip_prefix('\'')
                .and_then(|p| p.strip_suffix('\''))
                .unwrap_or(program);
            if !program.is_empty() {
                programs.push(program.to_owned());
            }
        }
    }
    programs
}

/// Whether `program` (a path, or a name looked up on `PATH`) is an executable file.
fn runs(program: &str) -> bool {
    if program.contains('/') {
        return cp_base::is_executable_file(Path::new(program));
    }
    cp_base::find_program(program, std::env::var_os("PATH").as_deref())
        .is_some_and(|found| cp_base::is_executable_file(&found))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A project wired by `init claude` for Claude Code `version`.
    fn wired_for(version: cp_agent_cli::Version) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let claude = cp_agent_cli::AGENT_CLIS[0];
        let changes =
            crate::init::plan_for(claude, dir.path(), "context-pilot", Some(version)).unwrap();
        crate::init::apply(dir.path(), &changes).unwrap();
        dir
    }

    #[test]
    fn the_events_wired_must_be_those_the_installed_version_sends() {
        let claude = cp_agent_cli::AGENT_CLIS[0];
        let binary = |version: &str| cp_agent_cli::AgentBinary {
            path: PathBuf::from("/usr/bin/claude"),
            version: version.to_owned(),
        };
        let old = wired_for((2, 1, 117));
        assert_eq!(events_check(claude, old.path(), &binary("2.1.117")), None);
        let upgraded = events_check(claude, old.path(), &binary("2.1.332")).unwrap();
        assert_eq!(upgraded.status, crate::doctor::Status::Fail);
        assert!(
            upgraded
                .what
                .contains("lack PostToolBatch (fire callbacks once"),
            "{upgraded:?}"
        );
        assert!(upgraded.what.contains("have PostToolUse"), "{upgraded:?}");
        assert!(upgraded.fix.unwrap().contains("context-pilot init claude"));
        let new = wired_for((2, 1, 332));
        assert_eq!(events_check(claude, new.path(), &binary("2.1.332")), None);
        let downgraded = events_check(claude, new.path(), &binary("2.1.100")).unwrap();
        assert!(
            downgraded.what.contains("have PostToolBatch"),
            "{downgraded:?}"
        );
    }

    #[test]
    fn the_program_is_read_from_json_and_toml_hook_commands() {
        let json = r#"{"hooks": {"Stop": [{"hooks": [{"type": "command",
            "command": "/opt/cp/context-pilot hook stop", "timeout": 600}]}]}}"#;
        assert_eq!(
            hook_programs(json, &["post-tool-use", "stop"]),
            vec!["/opt/cp/context-pilot"]
        );
        let toml = "[[hooks.Stop.hooks]]\ncommand = \"'/my dir/context-pilot' hook codex-stop\"\n";
        assert_eq!(
            hook_programs(toml, &["codex-stop"]),
            vec!["/my dir/context-pilot"]
        );
        assert!(hook_programs("echo hook stopper", &["stop"]).is_empty());
    }
}
