//! Published module views: what the UI draws and the model reads, without any module lock.
//!
//! The [`crate::Registry`] rebuilds a module's [`ModuleView`] after every call into the module
//! (a tool, a tick, a batch hook, closing a panel, restoring state) and swaps it in. Readers
//! clone an `Arc` and work on an immutable value, so a tool that holds its module for seconds
//! never delays a frame.

use std::sync::Arc;

use crate::module::Module;
use crate::panel::{Panel, PanelKind};

/// One module's published view: its panels.
pub struct ModuleView {
    id: &'static str,
    panels: Vec<Arc<dyn Panel>>,
}

impl std::fmt::Debug for ModuleView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModuleView")
            .field("id", &self.id)
            .field(
                "panels",
                &self.panels.iter().map(|p| p.id()).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl ModuleView {
    /// Captures what `module` shows now.
    pub(crate) fn of(module: &dyn Module) -> Self {
        Self {
            id: module.id(),
            panels: module.panels(),
        }
    }

    /// The module's id.
    pub fn id(&self) -> &'static str {
        self.id
    }

    /// The module's panels, as published.
    pub fn panels(&self) -> &[Arc<dyn Panel>] {
        &self.panels
    }
}

/// The published views of every module, in registration order.
#[derive(Debug, Clone, Default)]
pub struct Views(pub(crate) Vec<Arc<ModuleView>>);

impl Views {
    /// Every module's view.
    pub fn modules(&self) -> &[Arc<ModuleView>] {
        &self.0
    }

    /// Every panel: fixed ones first (by module order), then dynamic ones.
    pub fn panels(&self) -> Vec<Arc<dyn Panel>> {
        let all = self.0.iter().flat_map(|m| m.panels.iter().cloned());
        let (mut fixed, dynamic): (Vec<_>, Vec<_>) =
            all.partition(|p| p.kind() == PanelKind::Fixed);
        fixed.extend(dynamic);
        fixed
    }

    /// The panel with this id, if a module shows it.
    pub fn panel(&self, id: &str) -> Option<Arc<dyn Panel>> {
        self.0
            .iter()
            .flat_map(|m| m.panels.iter())
            .find(|p| p.id() == id)
            .cloned()
    }

    /// Every panel's `activity()`, in module order.
    pub fn activity(&self) -> Vec<String> {
        self.0
            .iter()
            .flat_map(|m| m.panels.iter())
            .flat_map(|p| p.activity())
            .collect()
    }

    /// Every panel's `llm_context()`, in module order, skipping empty ones.
    pub fn llm_contexts(&self) -> Vec<String> {
        self.0
            .iter()
            .flat_map(|m| m.panels.iter())
            .map(|p| p.llm_context())
            .filter(|text| !text.trim().is_empty())
            .collect()
    }
}
