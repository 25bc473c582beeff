//! `context-pilot run WORKFLOW.yaml`: drive the agent through a workflow's phases, with smart
//! restarts and approval gates, headless on the terminal or on a screen the caller provides
//! (the TUI), with the built-in agent or the person's Claude Code, Gemini CLI or Codex CLI.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use cp_agent_cli::AgentKind;
use cp_base::CancelToken;
use cp_orchestrate::{RESTART_HELP, RestartOverrides, RunArgs, RunOptions, RunStore, Workflow};

use crate::alerts::TerminalAlerts;
use crate::headless::run_headless;
use crate::headless_out::{LineState, OwnLines};
use crate::interrupt::{interrupt_on_signals, settle_interrupts};
use crate::phases::{PhaseDrivers, PhaseOutput};
use crate::remote_phases::RemotePhases;
use cp_agent::{AgentEvent, BuiltinDriver, EventSink};
use cp_base::text::fit_end;
use cp_host::Host;
use cp_llm::{Provider, check_model, connect, list_models};

/// The arguments of `context-pilot run`.
#[derive(Debug, Clone, clap::Args)]
#[command(after_long_help = RESTART_HELP)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "command-line switches: each bool is one independent flag"
)]
pub struct RunCommand {
    /// The workflow, e.g. `.context-pilot/workflows/feature.yaml` (not needed with --resume).
    pub file: Option<PathBuf>,
    /// Continue the run with this id (see `.context-pilot/runs/`), e.g. after a crash.
    #[arg(long, value_name = "RUN_ID")]
    pub resume: Option<String>,
    /// Print progress and ask at approval gates on the terminal instead of opening the TUI.
    #[arg(long)]
    pub headless: bool,
    /// Answer approval gates from this file (YAML or JSON list), for unattended runs.
    #[arg(long, value_name = "FILE")]
    pub answers: Option<PathBuf>,
    /// Set a workflow variable, e.g. `--var output_dir=docs/plan`.
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub vars: Vec<String>,
    /// Restart when the context is this full, in percent (default 80; 100 disables).
    #[arg(long, value_name = "PCT")]
    pub context_threshold: Option<f64>,
    /// Restart after this many tool calls in one session (default 100).
    #[arg(long, value_name = "N")]
    pub tool_call_threshold: Option<u64>,
    /// Give up on a phase after this many restarts (default 3; 0 disables restarts).
    #[arg(long, value_name = "N")]
    pub max_restarts: Option<u32>,
    /// Do not commit before restarts and after phases.
    #[arg(long)]
    pub no_auto_commit: bool,
    /// Start even when the working tree has uncommitted changes.
    #[arg(long)]
    pub allow_dirty: bool,
    /// The agent that runs the sessions: `builtin` (Context Pilot's own loop over the
    /// configured provider), `claude` (Claude Code), `gemini` (Gemini CLI) or `codex` (Codex
    /// CLI). Default: the
    /// workflow's `agent:`, else `agent.kind` in config.json, else `builtin`.
    #[arg(long, value_name = "AGENT", value_parser = parse_agent)]
    pub agent: Option<AgentKind>,
    /// In a workflow with `depends_on`, run at most N phases at once (default: the file's
    /// `max_parallel`, else 4). Each phase that runs beside others works in its own git
    /// worktree on branch `cp/<run id>/<phase id>`.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub max_parallel: Option<u16>,
    /// Keep each phase's worktree and branch after its merge (default: removed).
    #[arg(long)]
    pub keep_worktrees: bool,
}

fn parse_agent(name: &str) -> Result<AgentKind, cp_agent_cli::AgentError> {
    name.parse()
}

impl RunCommand {
    fn run_args(&self, host: &Host) -> anyhow::Result<RunArgs> {
        let mut vars = BTreeMap::new();
        for pair in &self.vars {
            let Some((name, value)) = pair.split_once('=') else {
                anyhow::bail!("--var {pair:?} is not NAME=VALUE; example: --var output_dir=docs");
            };
            vars.insert(name.to_owned(), value.to_owned());
        }
        if self.file.is_none() && self.resume.is_none() {
            anyhow::bail!(
                "give a workflow file, or --resume RUN_ID; example: context-pilot run .context-pilot/workflows/feature.yaml"
            );
        }
        Ok(RunArgs {
            workflow: self.file.clone(),
            resume: self.resume.clone(),
            answers: self.answers.clone(),
            options: RunOptions {
                overrides: RestartOverrides {
                    context_threshold: self.context_threshold,
                    tool_call_threshold: self.tool_call_threshold,
                    max_restarts: self.max_restarts,
                    no_auto_commit: self.no_auto_commit,
                    allow_dirty: self.allow_dirty,
                },
                vars,
                worker: host.worker().clone(),
                max_parallel: self.max_parallel.map(usize::from),
                keep_worktrees: self.keep_worktrees,
                drivers: None,
                alerter: None,
                agent: None,
                tester: None,
            },
        })
    }
}

impl RunCommand {
    /// `--agent`, else the workflow file's `agent:`, else `agent.kind` from config.json.
    fn agent_kind(&self, host: &Host) -> anyhow::Result<AgentKind> {
        if let Some(kind) = self.agent {
            return Ok(kind);
        }
        if let Some(path) = &self.file
            && let Some(name) = cp_orchestrate::Workflow::load(path)?.agent
        {
            return Ok(name.parse()?);
        }
        Ok(cp_agent_cli::AgentConfig::load(host.project())?
            .kind
            .unwrap_or_default())
    }
}

/// Shows a run that is not headless: the TUI runs the workflow of `RunArgs` with this agent
/// and returns the run's exit code. The binary passes the TUI; this crate draws nothing.
pub type Screen<'a> = &'a mut dyn FnMut(Host, AgentKind, RunArgs) -> anyhow::Result<i32>;

/// Runs the command; returns the process exit code (0 done, 2 aborted by the user, 3 stopped
/// by a merge conflict or a red merge of parallel phases, 1 failed or red at the end). A run
/// that is not headless goes to `screen`.
pub fn run(host: Host, command: &RunCommand, screen: Screen<'_>) -> anyhow::Result<i32> {
    let project = host.project().clone();
    let code = run_phases(host, command, screen);
    // The run is over: no warm run of its tests is wanted any more.
    cp_mod_checkpoint::cancel_warm_run(&project, "the run ended");
    code
}

fn run_phases(host: Host, command: &RunCommand, screen: Screen<'_>) -> anyhow::Result<i32> {
    // Read first: a malformed `notify` section stops the run before anything is recorded.
    let alerts = TerminalAlerts::from_user_config()?;
    let mut args = command.run_args(&host)?;
    let kind = command.agent_kind(&host)?;
    if let Some(path) = &command.file {
        PhaseDrivers::check(&cp_orchestrate::Workflow::load(path)?)?;
    }
    // Unattended (answers from a file, output not to a terminal) needs no TUI either.
    let headless = command.headless
        || command.answers.is_some() && !std::io::IsTerminal::is_terminal(&std::io::stdout());
    args.options.agent = Some(kind.as_str().to_owned());
    if headless {
        args.options.alerter = Some(Arc::new(alerts));
    }
    if kind != AgentKind::Builtin {
        if headless {
            // A phase with `agent: builtin` needs the provider; the others do not.
            let drivers = Arc::new(PhaseDrivers {
                default: kind,
                // A bad `llm` config only matters to such a phase, which says so itself.
                provider: cp_llm::configured_provider(host.project()).ok().flatten(),
                project: host.project().clone(),
                output: PhaseOutput::Stdout,
                cancel: graph_interrupt(&host, command)?,
                remote: remote_phases(&host, command, &args)?,
            });
            args.options.drivers = Some(drivers.clone());
            args.options.tester = Some(tester_for(&host, drivers)?);
            let code = crate::external::run(&host, &args, kind);
            settle_interrupts();
            return code;
        }
        return screen(host, kind, args);
    }
    let Some(provider) = cp_llm::configured_provider(host.project())? else {
        anyhow::bail!(
            "no LLM provider is configured: set ANTHROPIC_API_KEY, or OPENAI_API_KEY / OPENAI_BASE_URL"
        );
    };
    if headless {
        let trust = host.project().trust_state();
        if !trust.allows() {
            eprintln!("{}", trust.advice(host.project().root()));
        }
        let provider = checked_provider(provider);
        let drivers = Arc::new(PhaseDrivers {
            default: kind,
            provider: Some(Arc::clone(&provider)),
            project: host.project().clone(),
            output: PhaseOutput::Stdout,
            cancel: graph_interrupt(&host, command)?,
            remote: remote_phases(&host, command, &args)?,
        });
        args.options.drivers = Some(drivers.clone());
        args.options.tester = Some(tester_for(&host, drivers)?);
        let line = LineState::default();
        let printer = line.clone();
        let sink: EventSink = Arc::new(move |event| print_progress(&printer, event));
        let mut driver = BuiltinDriver::new(
            provider,
            host.registry().clone(),
            host.env().clone(),
            sink,
            host.stop_gate(),
        );
        let stdin = std::io::stdin();
        let mut input = stdin.lock();
        let mut output = OwnLines {
            inner: std::io::stdout(),
            line,
        };
        let code = run_headless(host.project(), &args, &mut driver, &mut input, &mut output);
        // A second Ctrl-C that is ending every process now finishes that, and exits.
        settle_interrupts();
        return Ok(code);
    }
    screen(host, kind, args)
}

/// The cancel token of a headless run's phase agents. For a workflow with `depends_on`,
/// Ctrl-C / SIGTERM set it (a graceful stop, `--resume` continues); other runs keep the
/// signals' default, as before.
fn graph_interrupt(host: &Host, command: &RunCommand) -> anyhow::Result<CancelToken> {
    let cancel = CancelToken::new();
    let root = host.project().root();
    let path = match (&command.file, &command.resume) {
        (Some(path), _) => Some(path.clone()),
        (None, Some(id)) => RunStore::new(host.project())
            .load(id)
            .ok()
            .map(|state| root.join(state.workflow_file)),
        (None, None) => None,
    };
    // A file that does not load is reported by the run itself.
    if path.is_some_and(|path| Workflow::load(&path).is_ok_and(|w| w.is_graph())) {
        interrupt_on_signals(&cancel, host.project())?;
    }
    Ok(cancel)
}

/// Asks the provider's model list before a headless run, as the TUI does at start: the
/// newest listed model replaces the built-in default, a configured name the endpoint does not
/// list gets a warning with the closest names, and the list's context window is used. An
/// endpoint that cannot be read keeps the configured model (with a note on stderr).
fn checked_provider(provider: Arc<dyn Provider>) -> Arc<dyn Provider> {
    let config = provider.config();
    match list_models(config) {
        Ok(models) => {
            let check = check_model(config, &models);
            if let Some(notice) = &check.notice {
                eprintln!("context-pilot: {notice}");
            }
            if check.config == *config {
                provider
            } else {
                Arc::from(connect(check.config))
            }
        }
        Err(e) => {
            eprintln!("context-pilot: {e}; keeping model {}", config.model);
            provider
        }
    }
}

/// Headless progress: the agent's text as it streams, one line per tool call and result,
/// each on a line of its own after the text ([`LineState`]).
fn print_progress(line: &LineState, event: AgentEvent) {
    let mut out = std::io::stdout().lock();
    if let AgentEvent::Text(text) = &event {
        let _ = line.text(&mut out, text);
        let _ = out.flush();
        return;
    }
    let _ = line.end_line(&mut out);
    let _ = match event {
        AgentEvent::ToolCalls(calls) => calls
            .iter()
            .try_for_each(|(_, name, args)| writeln!(out, "  → {name} {}", fit_end(args, 100))),
        AgentEvent::ToolResults(results) => results.iter().try_for_each(|(_, r)| {
            let mark = if r.is_error { "✗" } else { "✓" };
            writeln!(
                out,
                "    {mark} {}",
                fit_end(r.text.lines().next().unwrap_or(""), 100)
            )
        }),
        AgentEvent::StopGateBlocked(reason) => {
            writeln!(
                out,
                "  {}",
                fit_end(reason.lines().next().unwrap_or(""), 100)
            )
        }
        AgentEvent::StopGateGaveUp(notice) => {
            // For the person running the workflow, not for the log of the agent's output.
            eprintln!("{}", notice.trim_end().replace('\n', " "));
            Ok(())
        }
        AgentEvent::Status(status) => writeln!(out, "  … {status}"),
        AgentEvent::StopGateRunning => writeln!(out, "  … {}", cp_agent::STOP_GATE_RUNNING),
        AgentEvent::Restart(text) => writeln!(out, "  ↻ {text}"),
        // A request's end (`Usage`) ended the text's line above.
        AgentEvent::Text(_)
        | AgentEvent::Usage(_)
        | AgentEvent::Messages { .. }
        | AgentEvent::Finished(_) => Ok(()),
    };
    let _ = out.flush();
}

/// The hosts the run's phases may go to ([`phases_on_hosts`]).
fn remote_phases(
    host: &Host,
    command: &RunCommand,
    args: &RunArgs,
) -> anyhow::Result<Option<Arc<RemotePhases>>> {
    phases_on_hosts(
        host.project(),
        command.file.as_deref(),
        &args.options.overrides,
    )
}

/// The hosts the phases of a run may go to (`hosts` in config.json), with the restart policy
/// the run applies (the project's, with `overrides`); each `host:` of the workflow at
/// `workflow` is checked to name one of them (or `local`). `None`: no hosts.
pub fn phases_on_hosts(
    project: &cp_base::Project,
    workflow: Option<&std::path::Path>,
    overrides: &RestartOverrides,
) -> anyhow::Result<Option<Arc<RemotePhases>>> {
    let hosts = cp_remote::load_hosts(project)?;
    if let Some(path) = workflow {
        RemotePhases::check_names(&hosts, &Workflow::load(path)?)?;
    }
    let restart = cp_orchestrate::RestartConfig::resolve(project, overrides)?;
    Ok(RemotePhases::new(project.root(), &hosts, restart))
}

/// The merge queue's tester: the stop gate here, or on the hosts of the `hosts` configuration
/// when there are any, each checked first (it answers over ssh, has `context-pilot` and git,
/// and trusts the project as it is at `HEAD`): a host that cannot take the run's tests stops
/// the run before it starts, saying why.
fn tester_for(
    host: &Host,
    here: Arc<PhaseDrivers>,
) -> anyhow::Result<Arc<dyn cp_orchestrate::TreeTester>> {
    let hosts = cp_remote::load_hosts(host.project())?;
    if hosts.is_empty() {
        return Ok(here);
    }
    let root = host.project().root();
    let head = cp_git::Repository::at(root).head()?;
    let tester = cp_remote::HostTester::new(root, cp_remote::ssh_places(&hosts), here);
    tester.check(root, &head)?;
    Ok(Arc::new(tester))
}
