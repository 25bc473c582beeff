//! For each agent: whether `context-pilot init` wired it into this project (its MCP server
//! entry and its hooks, both), whether the binary they run still exists, and what the agent itself must trust before it uses
//! them (the descriptor's [`AgentCli::trust_checks`], e.g. Codex's project and hook trust).

use std::path::{Path, PathBuf};

use cp_agent_cli::{AGENT_CLIS, AgentCli};
use cp_base::Project;

use super::Check;

const GROUP: &str = "wiring";

pub(super) fn checks(project: &Project) -> Vec<Check> {
    let mut checks = Vec::new();
    for agent in AGENT_CLIS {
        let check = wired(*agent, project.root());
        let is_wired = check.status != super::Status::Info;
        checks.push(check);
        if is_wired {
            checks.extend(agent.trust_checks(project.root()).into_iter().map(
                |trust| match trust.fix {
                    Some(fix) if !trust.ok => Check::fail(GROUP, trust.what, fix),
                    _ => Check::ok(GROUP, trust.what),
                },
            ));
        }
    }
    checks
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
    let files: Vec<PathBuf> = agent
        .project_settings("context-pilot")
        .into_iter()
        .map(|file| file.path)
        .collect();
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
