//! A host: the project, the worker, the notice queue and the registered modules.
//!
//! The TUI, `context-pilot mcp` and `context-pilot hook` all build the same host, so every
//! front-end shares one implementation of every tool and one on-disk state.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use cp_base::{Notifier, Project, Registry, StoreError, ToolEnv, WorkerId};
use cp_mod_callback::CallbackModule;
use cp_mod_checkpoint::CheckpointModule;
use cp_mod_console::ConsoleModule;

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
    /// Opens file views (the files a workflow checkpoint lists for review).
    viewer: Viewer,
}

/// Why a host could not start.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Module(#[from] cp_base::DuplicateTool),
}

impl Host {
    /// Prepares `.context-pilot/` and registers the modules, in sidebar order.
    pub fn new(project: Project, worker: WorkerId) -> Result<Self, HostError> {
        project.ensure_layout()?;
        let env = ToolEnv::new(project.clone(), worker.clone(), Notifier::new());
        let mut registry = Registry::new();
        registry.register(Box::new(FilesModule))?;
        registry.register(Box::new(CallbackModule::new(project, worker)))?;
        registry.register(Box::new(ConsoleModule::new()))?;
        registry.register(Box::new(CheckpointModule::new()))?;
        let reload = Arc::new(AtomicBool::new(false));
        registry.register(Box::new(SystemModule::new(reload.clone())))?;
        let viewer = Viewer::default();
        registry.register(Box::new(ViewerModule::new(viewer.clone())))?;
        Ok(Self {
            registry,
            env,
            reload,
            viewer,
        })
    }

    /// A host from parts, for tests and tools that assemble their own module list.
    pub fn from_parts(registry: Registry, env: ToolEnv) -> Self {
        Self {
            registry,
            env,
            reload: Arc::default(),
            viewer: Viewer::default(),
        }
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
}
