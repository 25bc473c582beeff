//! The stop gate as an agent loop sees it: a [`StopCheck`] that loads the project's
//! configuration afresh at every stop (so an edit to `config.json` applies to the next one)
//! and runs [`StopGate::evaluate`].

use cp_base::CancelToken;
use cp_orchestrate::{StopAnswer, StopCheck, StopCheckError, StopInput};

use super::{StopGate, StopOutcome};
use crate::CheckpointError;

/// The stop gate of whichever project the stopping agent works in
/// ([`StopGate::for_project`], tests on the project's console server).
#[derive(Debug, Clone, Copy, Default)]
pub struct ProjectStopGate;

impl ProjectStopGate {
    /// Judges the agent that stops (`input`) with the whole outcome: the decision, the report
    /// behind it and the person's notice. The one way every front-end reaches the stop gate:
    /// the agent loops through [`StopCheck`], the hooks through the host.
    ///
    /// # Errors
    /// The project's checkpoint configuration cannot be used (a broken `config.json`).
    pub fn judge(
        &self,
        input: &StopInput,
        cancel: &CancelToken,
    ) -> Result<StopOutcome, CheckpointError> {
        Ok(StopGate::for_project(&input.project)?
            .with_cancel(cancel.clone())
            .evaluate(input))
    }
}

impl StopCheck for ProjectStopGate {
    fn check(&self, input: &StopInput, cancel: &CancelToken) -> Result<StopAnswer, StopCheckError> {
        let outcome = self.judge(input, cancel)?;
        Ok(StopAnswer {
            decision: outcome.decision,
            notice: outcome.notice,
        })
    }
}
