//! The Claude Code plugin (with its marketplace), the Gemini CLI extension and the Codex CLI
//! plugin, checked in under `plugins/` and `.claude-plugin/`: written from the same agent
//! descriptors as `init` ([`AgentCli::project_settings`]), so they cannot drift from it (a
//! test of the binary fails when a checked-in file differs from [`files`]).
//!
//! Each runs `context-pilot` from `PATH`, wherever npm, pip or cargo put it. A hook whose
//! binary is missing says in one line how to install it (on stderr, exit 1: the agents show
//! it as a hook error) and is never a silent no-op. A plugin's hook passes `--plugin`: when
//! `init` wired the same event into the project too, it leaves the event to that hook
//! ([`wired_by_init`]), so a project wired twice runs each hook once.
//!
//! ```
//! let files = cp_setup::plugins::files();
//! assert!(files.iter().any(|f| f.path == ".claude-plugin/marketplace.json"));
//! ```

use std::path::Path;

use cp_agent_cli::{AGENT_CLIS, AgentCli, MCP_SERVER, has_our_hook, hooks_of};
use serde_json::{Value, json};

/// The plugin's and the marketplace's name.
pub const PLUGIN: &str = "context-pilot";

/// The folder of the Claude Code and Codex CLI plugin (one folder: Codex reads the same
/// marketplace and prefers `.codex-plugin/plugin.json`).
pub const PLUGIN_DIR: &str = "plugins/context-pilot";

/// The folder of the Gemini CLI extension (`gemini extensions install <checkout>/plugins/gemini`).
pub const GEMINI_DIR: &str = "plugins/gemini";

/// The Codex plugin's hooks file, relative to the plugin's folder (Codex keys the hooks' trust
/// by it).
const CODEX_HOOKS_FILE: &str = "hooks/codex.json";

/// How to get the binary, in the one line a hook prints when it is missing.
pub const INSTALL_LINE: &str = "Context Pilot: `context-pilot` is not on PATH, so this hook did \
     nothing; install it with `npm install -g context-pilot` (or `pipx install context-pilot`, \
     or `cargo install context-pilot`) and restart the agent";

const DESCRIPTION: &str = "Context Pilot: callbacks after each edit (linters, tests of the \
     files touched) and a stop gate that runs the project's tests before the agent stops.";

/// One generated file: its path from the repository root and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginFile {
    pub path: String,
    pub text: String,
}

fn file(path: impl Into<String>, value: &Value) -> PluginFile {
    PluginFile {
        path: path.into(),
        text: format!("{value:#}\n"),
    }
}

fn agent(name: &str) -> Option<&'static dyn AgentCli> {
    AGENT_CLIS
        .iter()
        .copied()
        .find(|agent| agent.spec().name == name)
}

/// The shell command of a plugin's hook for `cli_event`: `context-pilot hook --plugin EVENT`
/// from `PATH`, or the install line when it is not there.
pub fn hook_command(cli_event: &str) -> String {
    let line = cp_base::shell_word(INSTALL_LINE);
    format!(
        "command -v context-pilot >/dev/null 2>&1 || {{ echo {line} >&2; exit 1; }}; \
         exec context-pilot hook --plugin {cli_event}"
    )
}

/// The file of `agent`'s plugin that holds its hooks, from the repository root.
pub fn hooks_file(agent: &str) -> Option<String> {
    match agent {
        "claude" => Some(format!("{PLUGIN_DIR}/hooks/claude-code.json")),
        "codex" => Some(format!("{PLUGIN_DIR}/{CODEX_HOOKS_FILE}")),
        "gemini" => Some(format!("{GEMINI_DIR}/hooks/hooks.json")),
        _ => None,
    }
}

/// What `agent`'s plugin carries, by release. A plugin is one file for every release, so it
/// holds the events `init` wires for the newest ([`plugin_hooks`]); `init` wires each release
/// its own ([`cp_agent_cli::AgentSpec::wired_events`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginCoverage {
    /// The events in the plugin, each with the first release that sends it (`None`: every
    /// supported release).
    pub carried: Vec<(
        &'static cp_agent_cli::HookEventSpec,
        Option<cp_agent_cli::Version>,
    )>,
    /// The events `init` wires for older releases only, left out of the plugin, each with the
    /// release from which the agent no longer needs it: a release before that one gets less
    /// through the plugin than through `init`.
    pub left_out: Vec<(&'static cp_agent_cli::HookEventSpec, cp_agent_cli::Version)>,
}

/// [`PluginCoverage`] of `agent`, from its descriptor.
pub fn plugin_coverage(agent: &dyn AgentCli) -> PluginCoverage {
    let spec = agent.spec();
    let carried = spec
        .wired_events(None)
        .map(|event| (event, event.since))
        .collect();
    let left_out = spec
        .hook_events
        .iter()
        .filter_map(|event| Some((event, event.until?)))
        .collect();
    PluginCoverage { carried, left_out }
}

/// The hooks (`{"hooks": {…}}`) `init` writes for `agent`'s newest release, each command
/// replaced by the plugin's [`hook_command`].
fn plugin_hooks(agent: &dyn AgentCli) -> Value {
    let mut hooks = hooks_of(agent.project_settings("context-pilot", None));
    let empty = hooks["hooks"]
        .as_object()
        .is_none_or(serde_json::Map::is_empty);
    if empty {
        // Codex CLI's `init` writes TOML; its hooks as JSON are what a run passes.
        hooks = agent.run_hooks("context-pilot", None);
    }
    let spec = agent.spec();
    if let Some(events) = hooks["hooks"].as_object_mut() {
        for groups in events.values_mut().filter_map(Value::as_array_mut) {
            for group in groups.iter_mut() {
                for hook in group["hooks"].as_array_mut().into_iter().flatten() {
                    let Some(command) = hook["command"].as_str() else {
                        continue;
                    };
                    let event = spec
                        .hook_events
                        .iter()
                        .find(|e| command.ends_with(&format!(" hook {}", e.cli_name)));
                    if let Some(event) = event {
                        hook["command"] = json!(hook_command(event.cli_name));
                    }
                }
            }
        }
    }
    hooks
}

fn mcp_servers() -> Value {
    json!({ MCP_SERVER: {"command": "context-pilot", "args": ["mcp"]} })
}

/// Every generated file, in a fixed order.
pub fn files() -> Vec<PluginFile> {
    let version = env!("CARGO_PKG_VERSION");
    let repository = env!("CARGO_PKG_REPOSITORY");
    let license = env!("CARGO_PKG_LICENSE");
    let mut out = vec![file(
        ".claude-plugin/marketplace.json",
        &json!({
            "name": PLUGIN,
            "owner": {"name": "Context Pilot"},
            "metadata": {"description": DESCRIPTION, "version": version},
            "plugins": [{
                "name": PLUGIN,
                "source": format!("./{PLUGIN_DIR}"),
                "description": DESCRIPTION,
                "version": version,
            }],
        }),
    )];
    let manifest = |hooks: &str| {
        json!({
            "name": PLUGIN,
            "version": version,
            "description": DESCRIPTION,
            "author": {"name": "Context Pilot"},
            "repository": repository,
            "license": license,
            "hooks": hooks,
            "mcpServers": "./.mcp.json",
        })
    };
    out.push(file(
        format!("{PLUGIN_DIR}/.claude-plugin/plugin.json"),
        &manifest("./hooks/claude-code.json"),
    ));
    out.push(file(
        format!("{PLUGIN_DIR}/.codex-plugin/plugin.json"),
        &manifest(&format!("./{CODEX_HOOKS_FILE}")),
    ));
    out.push(file(
        format!("{PLUGIN_DIR}/.mcp.json"),
        &json!({"mcpServers": mcp_servers()}),
    ));
    for agent in AGENT_CLIS {
        if let Some(path) = hooks_file(agent.spec().name) {
            out.push(file(path, &plugin_hooks(*agent)));
        }
    }
    out.push(file(
        format!("{GEMINI_DIR}/gemini-extension.json"),
        &json!({
            "name": PLUGIN,
            "version": version,
            "description": DESCRIPTION,
            "mcpServers": mcp_servers(),
        }),
    ));
    out
}

/// Whether `init` wired `cli_event` into the project at `root` (the hook is in the agent's
/// project settings): a plugin's hook for it then does nothing.
pub fn wired_by_init(root: &Path, cli_event: &str) -> bool {
    AGENT_CLIS
        .iter()
        .filter(|agent| {
            agent
                .spec()
                .hook_events
                .iter()
                .any(|e| e.cli_name == cli_event)
        })
        .flat_map(|agent| agent.project_settings("context-pilot", None))
        .filter_map(|settings| std::fs::read_to_string(root.join(settings.path)).ok())
        .any(|text| has_our_hook(&text, cli_event))
}

/// Whether a plugin's hook for `cli_event` should do nothing because `init` wired the event
/// into the project too. The project is `--project`, else the one the agent names
/// (`CLAUDE_PROJECT_DIR`, `GEMINI_PROJECT_DIR`), else the one around the current directory
/// (the agents run hooks there).
pub fn plugin_hook_defers(cli_event: &str, project_flag: Option<&Path>) -> bool {
    let named = project_flag.map(Path::to_path_buf).or_else(|| {
        ["CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR"]
            .iter()
            .filter_map(std::env::var_os)
            .find(|v| !v.is_empty())
            .map(std::path::PathBuf::from)
    });
    let start = match named {
        Some(dir) => dir,
        None => match std::env::current_dir() {
            Ok(dir) => dir,
            Err(_) => return false,
        },
    };
    cp_base::Project::discover(&start).is_ok_and(|p| wired_by_init(p.root(), cli_event))
}

/// Where an agent records that Context Pilot's plugin or extension is installed: its name,
/// and a finder of the install for a project (`None`: not installed), which says where it is
/// recorded and how to remove it.
pub struct PluginHome {
    pub agent: &'static str,
    pub find: fn(root: &Path, home: &Path) -> Option<InstalledPlugin>,
}

/// Context Pilot's plugin, installed for a project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstalledPlugin {
    /// Where the agent records it, e.g. `.claude/settings.json (enabledPlugins)`.
    pub recorded: String,
    /// The command that removes it.
    pub remove: String,
}

/// Every agent's record of its installed plugins.
pub const PLUGIN_HOMES: &[PluginHome] = &[
    PluginHome {
        agent: "claude",
        find: claude_plugin,
    },
    PluginHome {
        agent: "gemini",
        find: gemini_extension,
    },
    PluginHome {
        agent: "codex",
        find: codex_plugin,
    },
];

/// Claude Code: `enabledPlugins` of the project's or the user's settings names
/// `context-pilot@…` as `true`.
fn claude_plugin(root: &Path, home: &Path) -> Option<InstalledPlugin> {
    let scopes = [
        (root.join(".claude/settings.json"), "project"),
        (root.join(".claude/settings.local.json"), "local"),
        (home.join(".claude/settings.json"), "user"),
    ];
    scopes.into_iter().find_map(|(path, scope)| {
        let text = std::fs::read_to_string(&path).ok()?;
        let json: Value = serde_json::from_str(&text).ok()?;
        let (id, _) = json["enabledPlugins"]
            .as_object()?
            .iter()
            .find(|(id, on)| id.starts_with(&format!("{PLUGIN}@")) && on.as_bool() == Some(true))?;
        Some(InstalledPlugin {
            recorded: format!("{} (enabledPlugins)", path.display()),
            remove: format!("claude plugin uninstall {id} --scope {scope}"),
        })
    })
}

/// Gemini CLI: the extension's folder under `~/.gemini/extensions/`.
fn gemini_extension(_root: &Path, home: &Path) -> Option<InstalledPlugin> {
    let dir = home.join(".gemini/extensions").join(PLUGIN);
    dir.join("gemini-extension.json")
        .is_file()
        .then(|| InstalledPlugin {
            recorded: dir.display().to_string(),
            remove: format!("gemini extensions uninstall {PLUGIN}"),
        })
}

/// The user's Codex home: `$CODEX_HOME`, else `~/.codex`.
fn codex_home(home: &Path) -> std::path::PathBuf {
    std::env::var_os("CODEX_HOME")
        .filter(|v| !v.is_empty())
        .map_or_else(|| home.join(".codex"), std::path::PathBuf::from)
}

/// Context Pilot's plugin as the user's Codex config records it: the config's path and text,
/// and the plugin's id (`context-pilot@<marketplace>`), unless it is `enabled = false`.
fn codex_plugin_record(home: &Path) -> Option<(std::path::PathBuf, String, String)> {
    let path = codex_home(home).join("config.toml");
    let text = std::fs::read_to_string(&path).ok()?;
    let doc = text.parse::<toml_edit::DocumentMut>().ok()?;
    let (id, _) = doc
        .get("plugins")?
        .as_table_like()?
        .iter()
        .find(|(id, entry)| {
            id.starts_with(&format!("{PLUGIN}@"))
                && entry.get("enabled").and_then(toml_edit::Item::as_bool) != Some(false)
        })?;
    let id = id.to_owned();
    Some((path, text, id))
}

/// Codex CLI: `[plugins."context-pilot@…"]` of the user's Codex config (`$CODEX_HOME`, else
/// `~/.codex`), unless `enabled = false`.
fn codex_plugin(_root: &Path, home: &Path) -> Option<InstalledPlugin> {
    let (path, _, id) = codex_plugin_record(home)?;
    Some(InstalledPlugin {
        recorded: path.display().to_string(),
        remove: format!("codex plugin remove {id}"),
    })
}

/// The hooks of Context Pilot's Codex plugin `id` as Codex installed it: the hooks file its
/// `.codex-plugin/plugin.json` names (relative to the plugin's root) and its JSON, read from
/// the newest version under `<codex home>/plugins/cache/<marketplace>/<plugin>/`; else this
/// binary's own plugin's.
fn codex_plugin_hooks(codex_home: &Path, id: &str) -> (String, Value) {
    let installed = id.split_once('@').and_then(|(plugin, marketplace)| {
        let versions = codex_home
            .join("plugins/cache")
            .join(marketplace)
            .join(plugin);
        let newest = std::fs::read_dir(versions)
            .ok()?
            .filter_map(Result::ok)
            .filter_map(|entry| Some((entry.metadata().ok()?.modified().ok()?, entry.path())))
            .max()?
            .1;
        let manifest: Value = serde_json::from_str(
            &std::fs::read_to_string(newest.join(".codex-plugin/plugin.json")).ok()?,
        )
        .ok()?;
        let file = manifest["hooks"]
            .as_str()?
            .trim_start_matches("./")
            .to_owned();
        let hooks =
            serde_json::from_str(&std::fs::read_to_string(newest.join(&file)).ok()?).ok()?;
        Some((file, hooks))
    });
    installed.unwrap_or_else(|| {
        let ours = agent("codex").map_or(Value::Null, plugin_hooks);
        (CODEX_HOOKS_FILE.to_owned(), ours)
    })
}

/// What the agent must trust before it runs the hooks of Context Pilot's plugin installed for
/// it (Codex CLI: each hook, in `/hooks`); nothing for the others, or when it is not installed.
pub fn plugin_trust_checks(agent: &str) -> Vec<cp_agent_cli::AgentTrust> {
    if agent != "codex" {
        return Vec::new();
    }
    let Some(home) = std::env::var_os("HOME").map(std::path::PathBuf::from) else {
        return Vec::new();
    };
    let Some((path, text, id)) = codex_plugin_record(&home) else {
        return Vec::new();
    };
    let (file, hooks) = codex_plugin_hooks(&codex_home(&home), &id);
    vec![cp_agent_cli::plugin_hook_trust(
        &text, &path, &id, &file, &hooks,
    )]
}

/// Context Pilot's plugin for `agent`, when installed for the project at `root`.
pub fn installed_plugin(agent: &str, root: &Path) -> Option<InstalledPlugin> {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from)?;
    PLUGIN_HOMES
        .iter()
        .find(|h| h.agent == agent)
        .and_then(|h| (h.find)(root, &home))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_wired_event_of_each_agent_is_in_its_plugin() {
        let files = files();
        let text = |path: &str| {
            let found = files.iter().find(|f| f.path == path).unwrap();
            serde_json::from_str::<Value>(&found.text).unwrap()
        };
        for name in ["claude", "codex", "gemini"] {
            let hooks = text(&hooks_file(name).unwrap());
            let spec = agent(name).unwrap().spec();
            for event in spec.wired_events(None) {
                let commands = hooks["hooks"][event.name].to_string();
                assert!(
                    commands.contains(&format!("hook --plugin {}", event.cli_name)),
                    "{name} {}: {hooks}",
                    event.name
                );
            }
        }
    }

    #[test]
    fn a_hook_without_the_binary_says_how_to_install_it() {
        let dir = tempfile::tempdir().unwrap();
        let out = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(hook_command("stop"))
            .env("PATH", dir.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains("npm install -g context-pilot"), "{stderr}");
    }

    #[test]
    fn a_plugin_hook_leaves_an_event_init_wired_to_init() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!wired_by_init(dir.path(), "stop"));
        let changes =
            crate::init::plan(agent("claude").unwrap(), dir.path(), "/opt/context-pilot").unwrap();
        crate::init::apply(dir.path(), &changes).unwrap();
        assert!(wired_by_init(dir.path(), "stop"));
        assert!(wired_by_init(dir.path(), "post-tool-batch"));
        assert!(
            !wired_by_init(dir.path(), "after-agent"),
            "Gemini CLI is not wired"
        );
    }

    #[test]
    fn an_installed_plugin_is_found_where_each_agent_records_it() {
        let root = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        assert_eq!(claude_plugin(root.path(), home.path()), None);
        std::fs::create_dir_all(root.path().join(".claude")).unwrap();
        std::fs::write(
            root.path().join(".claude/settings.json"),
            r#"{"enabledPlugins": {"context-pilot@context-pilot": true}}"#,
        )
        .unwrap();
        let found = claude_plugin(root.path(), home.path()).unwrap();
        assert_eq!(
            found.remove,
            "claude plugin uninstall context-pilot@context-pilot --scope project"
        );
        assert_eq!(gemini_extension(root.path(), home.path()), None);
        let ext = home.path().join(".gemini/extensions/context-pilot");
        std::fs::create_dir_all(&ext).unwrap();
        std::fs::write(ext.join("gemini-extension.json"), "{}").unwrap();
        assert!(gemini_extension(root.path(), home.path()).is_some());
    }

    #[test]
    fn the_codex_plugins_hooks_are_read_from_codexs_cache_else_from_this_binary() {
        let codex_home = tempfile::tempdir().unwrap();
        let id = "context-pilot@context-pilot";
        let (file, hooks) = codex_plugin_hooks(codex_home.path(), id);
        assert_eq!(file, "hooks/codex.json");
        let ours = hooks.to_string();
        assert!(ours.contains("hook --plugin codex-stop"), "{ours}");

        let installed = codex_home
            .path()
            .join("plugins/cache/context-pilot/context-pilot/0.0.9");
        std::fs::create_dir_all(installed.join(".codex-plugin")).unwrap();
        std::fs::create_dir_all(installed.join("other")).unwrap();
        std::fs::write(
            installed.join(".codex-plugin/plugin.json"),
            r#"{"hooks": "./other/h.json"}"#,
        )
        .unwrap();
        std::fs::write(installed.join("other/h.json"), r#"{"hooks": {"Stop": []}}"#).unwrap();
        let (file, hooks) = codex_plugin_hooks(codex_home.path(), id);
        assert_eq!(file, "other/h.json");
        assert_eq!(hooks, json!({"hooks": {"Stop": []}}));
    }

    #[test]
    fn the_codex_plugins_stop_hook_has_the_key_and_hash_codex_0_171_reported() {
        // Measured with Codex CLI 0.171.0 after `codex plugin marketplace add <checkout>` and
        // `codex plugin add context-pilot@context-pilot`: its app server's `hooks/list` gave
        // this key, and this hash before the `/` of its `currentHash`. A change of the hook's
        // command (e.g. of INSTALL_LINE) changes the hash: measure it again then.
        let hooks = agent("codex").map(plugin_hooks).unwrap();
        let config = "[hooks.state.\"context-pilot@context-pilot:hooks/codex.json:stop:0:0\"]\n\
             trusted_hash = \"sha256:6209adf1c176f81b6c0eb92b26da86ad609d349befd79d8298cc471661c8883f\"\n";
        let trust = cp_agent_cli::plugin_hook_trust(
            config,
            Path::new("/c/config.toml"),
            "context-pilot@context-pilot",
            CODEX_HOOKS_FILE,
            &hooks,
        );
        assert!(
            trust.what.contains("has not trusted 3 of the 4"),
            "only the stop hook is trusted: {trust:?}"
        );
    }

    #[test]
    fn a_plugin_carries_the_newest_releases_events_and_names_what_older_ones_lack() {
        let claude = plugin_coverage(agent("claude").unwrap());
        let carried: Vec<&str> = claude.carried.iter().map(|(e, _)| e.name).collect();
        assert_eq!(
            carried,
            ["PostToolBatch", "Stop", "SubagentStop", "SessionStart"]
        );
        let left: Vec<_> = claude.left_out.iter().map(|(e, v)| (e.name, *v)).collect();
        assert_eq!(left, [("PostToolUse", (2, 1, 118))]);
        let gemini = plugin_coverage(agent("gemini").unwrap());
        assert!(gemini.left_out.is_empty());
        assert!(gemini.carried.iter().all(|(_, since)| since.is_none()));
    }
}
