//! `context-pilot run WORKFLOW.yaml` without a screen: the headless run of a workflow, and
//! what every run needs whoever shows it.
//!
//! - [`RunCommand`] and [`run`]: the command's arguments and its run, headless on the
//!   terminal, or handed to a [`Screen`] (the binary passes the TUI).
//! - [`phases`]: one fresh host and driver per phase of a workflow with `depends_on`, with
//!   the phases' progress as lines or as [`PhaseNews`] for a screen.
//! - [`alerts`]: how a run tells the person it needs them (the bell, `notify-send`, their own
//!   command).
//! - [`external`]: the workflow's sessions in the person's own agent CLI.
//! - [`run_headless`]: the run on the terminal, its approval gates asked there
//!   ([`TerminalPrompter`]) or answered from a file ([`AnswersPrompter`]).
//! - The merge queue's tests (`merge_tests`), and Ctrl-C in a run of parallel phases
//!   (`interrupt`).
//!
//! ```no_run
//! use clap::Parser as _;
//! #[derive(clap::Parser)]
//! struct Cli {
//!     #[command(flatten)]
//!     run: cp_run::RunCommand,
//! }
//! let cli = Cli::parse_from(["run", "--headless", ".context-pilot/workflows/feature.yaml"]);
//! let project = cp_base::Project::discover(std::path::Path::new("."))?;
//! let host = cp_host::Host::new(project, cp_base::WorkerId::default())?;
//! let mut no_screen = |_, _, _| anyhow::bail!("this example runs headless only");
//! let code = cp_run::run(host, &cli.run, &mut no_screen)?;
//! std::process::exit(code);
//! # Ok::<(), anyhow::Error>(())
//! ```

pub mod alerts;
mod command;
pub mod external;
mod headless;
mod headless_out;
mod host_phases;
mod interrupt;
mod merge_tests;
mod phase_news;
pub mod phases;
mod prompters;
mod remote_phases;

pub use alerts::{NotifyConfigError, TerminalAlerts};
pub use command::{RunCommand, Screen, phases_on_hosts, run};
pub use external::wiring_spec_of;
pub use headless::run_headless;
pub use host_phases::HostPhases;
pub use merge_tests::{end_consoles, test_with_gate};
pub use phases::{PhaseDrivers, PhaseNews, PhaseOutput};
pub use prompters::{Answer, AnswerChoice, AnswersPrompter, TerminalPrompter};
pub use remote_phases::{LOCAL_HOST, RemotePhases};
