//! The stop gate as an agent loop sees it: a [`StopCheck`] that loads the project's
//! configuration afresh at every stop (so an edit to `config.json` applies to the next one)
//! and runs [`StopGate::evaluate`].

use cp_base::CancelToken;
use cp_orchestrate::{StopCheck, StopCheckError, StopInput, StopVerdict};

use super::StopGate;

/// The stop gate of whichever project the stopping agent works in
/// ([`StopGate::for_project`], tests on the project's console server).
#[derive(Debug, Clone, Copy, Default)]
pub struct ProjectStopGate;

impl StopCheck for ProjectStopGate {
    fn check(
        &self,
        input: &StopInput,
        cancel: &CancelToken,
    ) -> Result<StopVerdict, StopCheckError> {
        let gate = StopGate::for_project(&input.project)?.with_cancel(cancel.clone());
        let outcome = gate.evaluate(input);
        Ok(StopVerdict {
            decision: outcome.decision,
            notice: outcome.notice,
        })
    }
}
