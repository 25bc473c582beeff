//! A host: the project, the worker, the notice queue and the registered modules.
//!
//! The TUI, `context-pilot mcp` and `context-pilot hook` all build the same host, so every
//! front-end shares one implementation of every tool and one on-disk state.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use cp_base::{
    BatchChanges, CallNote, CancelToken, Module, Notifier, Project, Registry, StoreError, ToolEnv,
    WorkerId,
};
use cp_mod_callback::CallbackModule;
use cp_mod_checkpoint::{
    CheckpointError, CheckpointModule, ProjectStopGate, StopOutcome, WarmLauncher,
};
use cp_mod_console::ConsoleModule;
use cp_orchestrate::{StopCheck, StopInput};

use crate::system::SystemModule;
use crate::viewer::{Viewer, ViewerModule};
use cp_mod_files::FilesModule;

/// Everything a front-end needs to run tools.
#[derive(Debug, Clone)]
pub struct Host {
    registry: Registry,
    env: ToolEnv,
    /// Raised by `system_reload`; the TUI watches it.
    reload: Arc<AtomicBool>,
    /// Opens file views (the files a workflow's approval gate lists for review).
    viewer: Viewer,
}

/// Why a host could not start.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The checkpoint module, with warm runs when this process is the `context-pilot` binary
/// (which has the `warm-run` subcommand the warm consoles run); a library caller (a test, a
/// benchmark) builds its own.
fn checkpoint_module() -> CheckpointModule {
    match crate::program::binary_path() {
        Some(exe) => CheckpointModule::new().with_warm_runs(WarmLauncher::new(exe)),
        None => CheckpointModule::new(),
    }
}

/// Builds a [`Host`]: modules in sidebar order, and the side channels (the reload flag, the
/// file viewer) created here and handed to the modules that feed them, so a host cannot be
/// built with channels no module is connected to.
pub struct HostBuilder {
    env: ToolEnv,
    registry: Registry,
    reload: Arc<AtomicBool>,
    viewer: Viewer,
}

impl HostBuilder {
    /// A host for `env` with no modules yet.
    pub fn new(env: ToolEnv) -> Self {
        Self {
            env,
            registry: Registry::new(),
            reload: Arc::default(),
            viewer: Viewer::default(),
        }
    }

    /// Adds a module; its panels follow those of the modules added before. Its tools are
    /// built when the host is first asked for a tool ([`Registry::check_tools`] tells two
    /// modules offering one name apart).
    #[must_use]
    pub fn module(mut self, module: Box<dyn Module>) -> Self {
        self.registry.register(module);
        self
    }

    /// Adds `system_reload` and the file viewer, wired to this host's reload flag and viewer.
    #[must_use]
    pub fn side_channel_modules(self) -> Self {
        let system = SystemModule::new(Arc::clone(&self.reload));
        let viewer = ViewerModule::new(self.viewer.clone());
        self.module(Box::new(system)).module(Box::new(viewer))
    }

    pub fn build(self) -> Host {
        Host {
            registry: self.registry,
            env: self.env,
            reload: self.reload,
            viewer: self.viewer,
        }
    }
}

impl Host {
    /// Prepares `.context-pilot/` and registers the modules, in sidebar order. Their tool
    /// definitions are built at the first ask: a hook process, which calls no tool, never
    /// builds them.
    pub fn new(project: Project, worker: WorkerId) -> Result<Self, HostError> {
        project.ensure_layout()?;
        let env = ToolEnv::new(project.clone(), worker.clone(), Notifier::new());
        Ok(HostBuilder::new(env)
            .module(Box::new(FilesModule))
            .module(Box::new(CallbackModule::new(project, worker)))
            .module(Box::new(ConsoleModule::new()))
            .module(Box::new(checkpoint_module()))
            .side_channel_modules()
            .build())
    }

    /// A host with its own module list (tests, benchmarks); see [`HostBuilder`].
    pub fn builder(env: ToolEnv) -> HostBuilder {
        HostBuilder::new(env)
    }

    /// Takes a pending `system_reload` request, if one was made.
    pub fn take_reload_request(&self) -> bool {
        self.reload.swap(false, Ordering::SeqCst)
    }

    pub fn viewer(&self) -> &Viewer {
        &self.viewer
    }

    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    pub fn env(&self) -> &ToolEnv {
        &self.env
    }

    pub fn project(&self) -> &Project {
        &self.env.project
    }

    pub fn worker(&self) -> &WorkerId {
        &self.env.worker
    }

    pub fn notifier(&self) -> &Notifier {
        &self.env.notifier
    }

    /// Runs what the file changes of `batch` trigger (callbacks), as after a batch of this
    /// host's own tools: for the edits an agent CLI made itself and reports through its hooks.
    /// Returns each call's notes once every blocking callback ended.
    pub fn react_to_changes(&self, batch: &BatchChanges) -> Vec<CallNote> {
        cp_base::react_to_changes(&self.registry, batch, &self.env)
    }

    /// Judges the agent (or subagent) that stops: the project's stop gate, its configuration
    /// read afresh, with the whole outcome (decision, report, the person's notice). The hooks
    /// ask it here; the agent loops ask [`Host::stop_gate`], the same gate.
    ///
    /// # Errors
    /// The project's checkpoint configuration cannot be used.
    pub fn judge_stop(&self, input: &StopInput) -> Result<StopOutcome, CheckpointError> {
        ProjectStopGate.judge(input, &CancelToken::new())
    }

    /// The stop gate the built-in agent's turns end through: the checkpoint module's, with
    /// the project's configuration read afresh at every stop.
    pub fn stop_gate(&self) -> Arc<dyn StopCheck> {
        Arc::new(ProjectStopGate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_modules_of_a_host_offer_each_tool_once() {
        let dir = tempfile::tempdir().unwrap();
        let host = Host::new(Project::at(dir.path()), WorkerId::default()).unwrap();
        host.registry().check_tools().unwrap();
        assert!(host.registry().tool_def("File_edit").is_some());
        assert!(host.registry().tool_def("Callback_upsert").is_some());
    }
}
