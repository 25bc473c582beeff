//! The command line.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches as _, Parser, Subcommand};
use cp_base::{Project, WorkerId};

use cp_host::Host;

/// Context Pilot: a terminal host for AI coding agents that closes the feedback loop.
#[derive(Debug, Parser)]
#[command(name = "context-pilot", version, about, long_about = None)]
pub struct Cli {
    /// Project directory (default: the git root above the current directory, else the
    /// current directory).
    #[arg(long, global = true, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Worker id for per-worker state and callback activation (default: `$CP_WORKER`, else
    /// `main`).
    #[arg(long, global = true, value_name = "W")]
    pub worker: Option<String>,
    /// Internal: set by a live reload; restores the session and continues an interrupted turn.
    #[arg(long, hide = true)]
    pub resume: bool,
    /// The agent the TUI's turns run in: `builtin` (Context Pilot's own loop over the
    /// configured provider, the default), `claude` (your Claude Code), `gemini` (your
    /// Gemini CLI) or `codex` (your Codex CLI). Default: `agent.kind` in config.json, else `builtin`.
    #[arg(long, value_name = "AGENT", value_parser = parse_agent)]
    pub agent: Option<cp_agent_cli::AgentKind>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Drive the agent through a workflow's phases, with smart restarts and approval gates,
    /// e.g. `context-pilot run .context-pilot/workflows/feature.yaml --headless`.
    Run(cp_run::RunCommand),
    /// Internal: the per-project console server that owns PTYs. Clients start it on demand.
    #[command(hide = true)]
    ConsoleServer,
    /// Internal: one warm run of the stop gate's tests, in a console the edit paths ask the
    /// console server for.
    #[command(hide = true, name = cp_mod_checkpoint::WARM_SUBCOMMAND)]
    WarmRun {
        /// The edit that asked for it, for the Checkpoint panel.
        #[arg(long)]
        change: String,
        /// When it was asked for, in milliseconds since the Unix epoch.
        #[arg(long)]
        asked_at_ms: u64,
        /// A base run: test the clean tree of HEAD's commit for the session that begins there.
        #[arg(long)]
        base: bool,
    },
    /// Run one tool without the TUI and print its result, e.g.
    /// `context-pilot tool File_write file_path=a.txt content=hi`.
    Tool {
        /// Tool name, e.g. `File_write`.
        name: String,
        /// Arguments as one JSON object, or as key=value pairs.
        args: Vec<String>,
    },
    /// List the configured provider's models (`GET /v1/models`), newest first, and show the
    /// one in use; exits 1 when the configured model is not listed.
    Models,
    /// Serve every tool over MCP on stdin/stdout (for Claude Code, Gemini CLI, Codex CLI and
    /// other MCP clients). Stops when the client closes stdin.
    Mcp,
    /// Hook receiver for Claude Code (`post-tool-use`, `stop`), Gemini CLI (`after-tool`,
    /// `after-agent`) and Codex CLI (`codex-post-tool-use`, `codex-stop`): reads the hook's
    /// JSON payload on stdin. Always exits 0.
    Hook {
        #[arg(value_parser = cp_hook::HookEvent::parser())]
        event: cp_hook::HookEvent,
        /// Run by a plugin or extension: does nothing when `init` wired the same event into
        /// the project too, so each hook runs once.
        #[arg(long)]
        plugin: bool,
    },
    /// Internal: Gemini CLI's `AfterModel` hook in runs Context Pilot drives; reports each
    /// response's prompt size to the run. Always exits 0.
    #[command(hide = true)]
    ModelUsage,
    /// Internal: the probe hook of runs Context Pilot drives; reports to the run that the
    /// agent loaded its hooks. Always exits 0.
    #[command(hide = true, name = cp_agent_cli::PROBE_COMMAND)]
    WiringProbe,
    /// Trust this project: let the callbacks, the stop gate's test command and `llm.base_url`
    /// of its .context-pilot/config.json take effect (recorded in
    /// ~/.config/context-pilot/trust.json). Review first with `context-pilot trust --show`.
    Trust {
        /// Print what trusting would allow (every callback and its script, the test command,
        /// the LLM server) without trusting.
        #[arg(long, conflicts_with = "revoke")]
        show: bool,
        /// Stop trusting this project.
        #[arg(long)]
        revoke: bool,
    },
    /// Test a commit a run on another machine sent here (a merge-queue test on a host of its
    /// `hosts`): reads the request on stdin, tests the commit in a worktree of this user's
    /// clone of the project with the stop gate's commands, and prints one JSON event per line,
    /// the last naming this host and the tree it checked out. Refused unless the project is
    /// trusted here.
    TestTree {
        /// Print the events as JSON lines (the only form there is; a run asks for it).
        #[arg(long)]
        json: bool,
    },
    /// Run one workflow phase a run on another machine sent here (a phase placed on a host of
    /// its `hosts`): reads the phase's description on stdin, runs it on its branch in a
    /// worktree of this user's clone of the project with this machine's agent and
    /// credentials, callbacks and stop gate, and prints one JSON event per line (a
    /// `committed` one for each commit the run fetches), the last its result. Refused unless
    /// the project is trusted here.
    Phase {
        /// Print the events as JSON lines (the only form there is; a run asks for it).
        #[arg(long)]
        json: bool,
    },
    /// Internal: the receiving side of the `git push` that brings a run's commits into this
    /// user's clone of the project.
    #[command(hide = true)]
    ReceivePack {
        /// The project's key, as the run sends it.
        key: String,
    },
    /// Internal: the sending side of the `git fetch` that brings a phase's commits back to
    /// the run.
    #[command(hide = true)]
    UploadPack {
        /// The project's key, as the run sends it.
        key: String,
    },
    /// Print the shell completion script for SHELL, e.g.
    /// `context-pilot completions bash > ~/.local/share/bash-completion/completions/context-pilot`.
    Completions {
        /// The shell: bash, zsh, fish, elvish or powershell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Add the MCP server and the hooks to an agent's project settings, merging with what is
    /// there. Without an agent: every agent whose settings folder the project has (`.claude/`,
    /// `.gemini/`, `.codex/`), else every agent CLI on PATH, after asking once.
    Init {
        #[arg(value_parser = cp_setup::init::agent_parser())]
        agent: Option<&'static dyn cp_agent_cli::AgentCli>,
        /// Print the diff of what would change and write nothing.
        #[arg(long)]
        dry_run: bool,
        /// Without an agent: wire the agents found without asking.
        #[arg(long, short = 'y')]
        yes: bool,
        /// With `codex`: also trust this project and Context Pilot's hooks (only those) in
        /// your own Codex config (`$CODEX_HOME/config.toml`, else `~/.codex/config.toml`), as
        /// Codex's trust prompt and `/hooks` would.
        #[arg(long, requires = "agent")]
        trust_in_codex: bool,
    },
    /// Check this machine and project: git and bash, the agent CLIs and their versions, each
    /// agent's wiring, trust, the LLM provider, the console server, private modes and the last
    /// hook errors. One line a check; exits 1 when any fails.
    Doctor {
        /// Print the checks as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    cp_host::program::remember_exe();
    ignore_reload_signal();
    let cli = match parse() {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("context-pilot: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The command line, with `--version` saying the commit and the install channel too
/// (`context-pilot 0.1.0 (commit 0123abcd4567, installed with npm)`).
fn parse() -> Result<Cli, clap::Error> {
    let command = if std::env::args_os().any(|a| a == "--version" || a == "-V") {
        // Leaked once, by the one process that prints it and exits.
        let line: &'static str = Box::leak(
            cp_setup::about::About::of_this_binary()
                .version_line()
                .into_boxed_str(),
        );
        Cli::command().version(line)
    } else {
        Cli::command()
    };
    Cli::from_arg_matches(&command.try_get_matches()?)
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let project_flag = cli.project.as_deref();
    match cli.command {
        // Run for every chunk the model streams: before anything else.
        Some(Command::ModelUsage) => Ok(cp_hook::model_usage::main()),
        Some(Command::WiringProbe) => Ok(cp_hook::wiring_probe::main()),
        Some(Command::Completions { shell }) => {
            // Needs no project: it describes the command line only.
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "context-pilot",
                &mut std::io::stdout(),
            );
            Ok(ExitCode::SUCCESS)
        }
        // A hook finds its project from the payload's `cwd` and never fails the agent.
        Some(Command::Hook { event, plugin }) => {
            if plugin && cp_setup::plugins::plugin_hook_defers(event.cli_name(), project_flag) {
                // The agent writes its payload whatever the hook does with it: read it, so
                // that its write never meets a pipe already closed.
                let stdin = std::io::stdin();
                if !std::io::IsTerminal::is_terminal(&stdin) {
                    let _ = std::io::copy(&mut stdin.lock(), &mut std::io::sink());
                }
                return Ok(ExitCode::SUCCESS);
            }
            Ok(cp_hook::main(event, project_flag, cli.worker.as_deref()))
        }
        Some(Command::ConsoleServer) => run_console_server(&discover(project_flag)?),
        Some(Command::TestTree { json }) => test_tree(json),
        Some(Command::ReceivePack { key }) => receive_pack(&key),
        Some(Command::UploadPack { key }) => upload_pack(&key),
        Some(Command::Phase { json }) => phase(json),
        Some(Command::Trust { show, revoke }) => {
            let project = discover(project_flag)?;
            print!("{}", cp_host::trust::command(&project, show, revoke)?);
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Models) => Ok(ExitCode::from(cp_setup::models::run(&discover(
            project_flag,
        )?)?)),
        Some(Command::Init {
            agent,
            dry_run,
            yes,
            trust_in_codex,
        }) => Ok(init(
            agent,
            &discover(project_flag)?,
            dry_run,
            yes,
            trust_in_codex,
        )?),
        Some(Command::Doctor { json }) => Ok(doctor(&discover(project_flag)?, json)),
        None => {
            let host = open_host(project_flag, cli.worker.as_deref())?;
            let agent = tui_agent(&host, cli.agent)?;
            cp_tui::run(host, agent, cli.resume)?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Tool { name, args }) => {
            let host = open_host(project_flag, cli.worker.as_deref())?;
            let arguments =
                cp_tui::parse_argv(&args).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
            let call = cp_base::ToolCall::new("cli-1", name, arguments);
            let results = cp_base::run_batch(host.registry(), &[call], host.env());
            let result = results.into_iter().next().unwrap_or_default();
            println!("{}", result.text);
            Ok(if result.is_error {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
        Some(Command::Run(command)) => {
            let host = open_host(project_flag, cli.worker.as_deref())?;
            let code = cp_run::run(host, &command, &mut workflow_in_tui)?;
            Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
        }
        Some(Command::Mcp) => {
            cp_mcp::serve(open_host(project_flag, cli.worker.as_deref())?)?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::WarmRun {
            change,
            asked_at_ms,
            base,
        }) => {
            let project = discover(project_flag)?;
            let worker = WorkerId::from_flag_or_env(cli.worker.as_deref())?;
            cp_host::logging::init(&project.logs_dir());
            // The console the run is in shows what it does.
            let print = |news: &cp_mod_checkpoint::WarmNews| println!("{news}");
            if base {
                cp_mod_checkpoint::base_run(&project, &worker, asked_at_ms, &print)?;
            } else {
                cp_mod_checkpoint::warm_run(&project, &worker, &change, asked_at_ms, &print)?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The project `--project` names, else the one around the current directory.
fn discover(flag: Option<&std::path::Path>) -> anyhow::Result<Project> {
    let start = match flag {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir()?,
    };
    Ok(Project::discover(&start)?)
}

/// The host of the commands that run modules (the TUI, `tool`, `run`, `mcp`): the project,
/// the worker, logging.
fn open_host(flag: Option<&std::path::Path>, worker: Option<&str>) -> anyhow::Result<Host> {
    let project = discover(flag)?;
    let worker = WorkerId::from_flag_or_env(worker)?;
    cp_host::logging::init(&project.logs_dir());
    Ok(Host::new(project, worker)?)
}

/// `context-pilot run` when it is not headless: the TUI shows the workflow, with `kind`'s agent.
fn workflow_in_tui(
    host: Host,
    kind: cp_agent_cli::AgentKind,
    args: cp_orchestrate::RunArgs,
) -> anyhow::Result<i32> {
    let agent = match kind {
        cp_agent_cli::AgentKind::Builtin => cp_tui::AgentState::from_config(host.project()),
        kind @ cp_agent_cli::AgentKind::Cli(_) => {
            cp_tui::AgentState::with_cli(cp_tui::CliAgent::new(&host, kind)?)
        }
    };
    cp_tui::run_workflow(host, agent, args)
}

/// `context-pilot init [AGENT]`.
fn init(
    agent: Option<&'static dyn cp_agent_cli::AgentCli>,
    project: &Project,
    dry_run: bool,
    yes: bool,
    trust_in_codex: bool,
) -> Result<ExitCode, cp_setup::init::InitError> {
    match agent {
        Some(agent) => {
            print!(
                "{}",
                cp_setup::init::run(agent, project.root(), dry_run, trust_in_codex)?
            );
            Ok(ExitCode::SUCCESS)
        }
        None => cp_setup::init::found::run(project.root(), dry_run, yes),
    }
}

/// `context-pilot doctor [--json]`: exits 1 when a check fails.
fn doctor(project: &Project, json: bool) -> ExitCode {
    let report = cp_setup::doctor::run(project);
    print!("{}", if json { report.json() } else { report.text() });
    if report.failed() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn parse_agent(name: &str) -> Result<cp_agent_cli::AgentKind, cp_agent_cli::AgentError> {
    name.parse()
}

/// The TUI's agent: `--agent`, else `agent.kind` from config.json, else the built-in loop;
/// when that has no provider, the agent remembered on the no-model screen (the user's own
/// config). An agent CLI that is not installed is an error naming how to install it (a
/// remembered one that cannot start is shown in the conversation instead).
fn tui_agent(
    host: &Host,
    flag: Option<cp_agent_cli::AgentKind>,
) -> anyhow::Result<cp_tui::AgentState> {
    let kind = match flag {
        Some(kind) => kind,
        None => match cp_agent_cli::AgentConfig::load(host.project())?.kind {
            Some(kind) => kind,
            None => return Ok(builtin_or_remembered(host)),
        },
    };
    Ok(match kind {
        cp_agent_cli::AgentKind::Builtin => cp_tui::AgentState::from_config(host.project()),
        kind @ cp_agent_cli::AgentKind::Cli(_) => {
            cp_tui::AgentState::with_cli(cp_tui::CliAgent::new(host, kind)?)
        }
    })
}

/// The built-in loop over the configured provider; with none configured (and no error in its
/// config), the agent remembered on the no-model screen, if it starts.
fn builtin_or_remembered(host: &Host) -> cp_tui::AgentState {
    let builtin = cp_tui::AgentState::from_config(host.project());
    if builtin.has_agent() || builtin.provider_error.is_some() {
        return builtin;
    }
    let Some(kind) = cp_tui::remembered_agent::load() else {
        return builtin;
    };
    match cp_tui::CliAgent::new(host, kind) {
        Ok(cli) => cp_tui::AgentState::with_cli(cli),
        Err(e) => cp_tui::AgentState::new(
            None,
            Some(format!(
                "The agent you chose on the no-model screen ({kind}, in your ~/.config/context-pilot/config.json) cannot start: {e}"
            )),
        ),
    }
}

/// Runs the console server in the foreground. Its stderr is the server's log file.
fn run_console_server(project: &Project) -> anyhow::Result<ExitCode> {
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
    match cp_mod_console::run_server(cp_mod_console::ServerOptions::from_env(project.root())) {
        Ok(()) | Err(cp_mod_console::ConsoleError::AlreadyRunning { .. }) => Ok(ExitCode::SUCCESS),
        Err(e) => Err(e.into()),
    }
}

/// `pkill -USR2 -x context-pilot` reloads the TUI, but the console server, MCP servers and hook
/// processes carry the same name, and SIGUSR2 would terminate them by default (taking every
/// console with it). A harmless handler makes them ignore it; the TUI adds its own on top.
fn ignore_reload_signal() {
    let sink = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    if let Err(e) = signal_hook::flag::register(signal_hook::consts::SIGUSR2, sink) {
        eprintln!("context-pilot: cannot install the SIGUSR2 handler: {e}");
    }
}

/// The stop gate's tests, for a tree a run sent here.
struct GateBench;

impl cp_remote::Bench for GateBench {
    fn test(&self, tree: &cp_orchestrate::TreeUnderTest<'_>) -> cp_orchestrate::TreeTest {
        cp_run::test_with_gate(tree, tree.cancel)
    }

    fn end(&self, root: &std::path::Path) {
        cp_run::end_consoles(root);
    }
}

/// `context-pilot test-tree --json`: one merge test a run on another machine sent here.
fn test_tree(json: bool) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(json, "test-tree prints JSON lines only: add --json");
    let passed = cp_remote::serve_test_tree(
        Box::new(std::io::BufReader::new(std::io::stdin())),
        &mut std::io::stdout(),
        &GateBench,
    )?;
    Ok(if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `context-pilot receive-pack KEY`: git's `receive-pack` in this user's clone of the project.
fn receive_pack(key: &str) -> anyhow::Result<ExitCode> {
    let clone = cp_remote::receive_pack(key)?;
    let e = std::os::unix::process::CommandExt::exec(
        std::process::Command::new("git")
            .arg("receive-pack")
            .arg(&clone),
    );
    Err(cp_remote::receive_pack_failed(&e).into())
}

/// `context-pilot upload-pack KEY`: git's `upload-pack` in this user's clone of the project.
fn upload_pack(key: &str) -> anyhow::Result<ExitCode> {
    let clone = cp_remote::upload_pack(key)?;
    let e = std::os::unix::process::CommandExt::exec(
        std::process::Command::new("git")
            .arg("upload-pack")
            .arg(&clone),
    );
    Err(cp_remote::receive_pack_failed(&e).into())
}

/// `context-pilot phase --json`: one workflow phase a run on another machine sent here.
fn phase(json: bool) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(json, "phase prints JSON lines only: add --json");
    let completed = cp_remote::serve_phase(
        Box::new(std::io::BufReader::new(std::io::stdin())),
        &mut std::io::stdout(),
        &cp_run::HostPhases,
    )?;
    Ok(if completed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    use super::Cli;

    #[test]
    fn hook_help_names_every_agent_cli_and_its_events() {
        let mut cli = Cli::command();
        let hook = cli.find_subcommand_mut("hook").unwrap();
        let help = hook.render_help().to_string();
        for agent in cp_agent_cli::AGENT_CLIS {
            let spec = agent.spec();
            assert!(help.contains(spec.display_name), "{help}");
            for event in spec.hook_events {
                assert!(help.contains(event.cli_name), "{}: {help}", event.cli_name);
            }
        }
    }
}
