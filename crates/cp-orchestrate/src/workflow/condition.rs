//! Approval gate conditions: JavaScript expressions over `context` and `phase`, evaluated by
//! `QuickJS` (`rquickjs`) in a fresh runtime with a time and a memory limit.

use std::time::{Duration, Instant};

use rquickjs::{CatchResultExt, Context, Function, Runtime};
use serde_json::Value;

/// How long one condition may run.
pub const CONDITION_TIMEOUT: Duration = Duration::from_secs(1);
/// How much memory one condition's runtime may use.
pub const CONDITION_MEMORY_LIMIT: usize = 32 * 1024 * 1024;

/// Why a condition could not be evaluated (the approval gate is then skipped).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("condition `{expression}` failed: {message}")]
pub struct ConditionError {
    /// The expression.
    pub expression: String,
    /// The JavaScript error, or the limit hit.
    pub message: String,
}

/// Evaluates `expression` with the globals `context` and `phase`, and returns its JavaScript
/// truthiness (`Boolean(result)`).
///
/// ```
/// use cp_orchestrate::evaluate_condition;
/// use serde_json::json;
///
/// let context = json!({"phases": {"iteration_counts": {"plan": 2}}, "feature": {"flags": ["backend"]}});
/// let phase = json!({"id": "plan"});
/// assert!(evaluate_condition("context.phases.iteration_counts[phase.id] > 1", &context, &phase)?);
/// assert!(!evaluate_condition("context.feature.flags.includes('ui')", &context, &phase)?);
/// assert!(evaluate_condition("context.nope.deeper", &context, &phase).is_err());
/// # Ok::<(), cp_orchestrate::ConditionError>(())
/// ```
pub fn evaluate_condition(
    expression: &str,
    context: &Value,
    phase: &Value,
) -> Result<bool, ConditionError> {
    let fail = |message: String| ConditionError {
        expression: expression.to_owned(),
        message,
    };
    let runtime = Runtime::new().map_err(|e| fail(format!("cannot start JavaScript: {e}")))?;
    runtime.set_memory_limit(CONDITION_MEMORY_LIMIT);
    runtime.set_max_stack_size(1024 * 1024);
    let deadline = Instant::now() + CONDITION_TIMEOUT;
    let timed_out = std::rc::Rc::new(std::cell::Cell::new(false));
    let flag = timed_out.clone();
    runtime.set_interrupt_handler(Some(Box::new(move || {
        let over = Instant::now() > deadline;
        if over {
            flag.set(true);
        }
        over
    })));
    let js = Context::full(&runtime).map_err(|e| fail(format!("cannot start JavaScript: {e}")))?;
    let context_json = context.to_string();
    let phase_json = phase.to_string();
    let result = js.with(|ctx| -> Result<bool, JsFailure> {
        let globals = ctx.globals();
        let context = ctx
            .json_parse(context_json)
            .catch(&ctx)
            .map_err(js_failure)?;
        globals.set("context", context).map_err(js_failure)?;
        let phase = ctx.json_parse(phase_json).catch(&ctx).map_err(js_failure)?;
        globals.set("phase", phase).map_err(js_failure)?;
        let value: rquickjs::Value = ctx.eval(expression).catch(&ctx).map_err(js_failure)?;
        let boolean: Function = globals.get("Boolean").map_err(js_failure)?;
        boolean.call((value,)).catch(&ctx).map_err(js_failure)
    });
    result.map_err(|JsFailure(message)| {
        if timed_out.get() {
            fail(format!(
                "it ran longer than {} ms and was stopped",
                CONDITION_TIMEOUT.as_millis()
            ))
        } else {
            // One line, for progress lines and the status bar.
            fail(message.split_whitespace().collect::<Vec<_>>().join(" "))
        }
    })
}

/// A JavaScript error, as text: a caught exception borrows the runtime it was thrown in, so
/// only its message can leave [`Context::with`].
struct JsFailure(String);

fn js_failure(e: impl std::fmt::Display) -> JsFailure {
    JsFailure(e.to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn eval(expr: &str) -> Result<bool, ConditionError> {
        let context = json!({
            "subagents_spawned": 6,
            "deliverables": [],
            "feature": {"flags": ["backend", "production"]},
            "phases": {"iteration_counts": {"plan": 1, "review": 3}},
            "approvals": [{"phase": "plan", "decision": "continue"}],
        });
        evaluate_condition(expr, &context, &json!({"id": "review", "iteration": 3}))
    }

    #[test]
    fn seed_004_examples_evaluate() {
        assert!(eval("context.subagents_spawned > 5").unwrap());
        assert!(eval("context.phases.iteration_counts[phase.id] > 1").unwrap());
        assert!(eval("context.feature.flags.includes('backend')").unwrap());
        assert!(eval("context.deliverables.length === 0").unwrap());
        assert!(!eval("context.approvals.some(c => c.decision === 'abort')").unwrap());
    }

    #[test]
    fn results_use_javascript_truthiness() {
        assert!(!eval("0").unwrap());
        assert!(!eval("''").unwrap());
        assert!(!eval("context.missing").unwrap());
        assert!(eval("'yes'").unwrap());
        assert!(eval("({})").unwrap());
    }

    #[test]
    fn errors_carry_the_javascript_message() {
        let err = eval("context.missing.deeper").unwrap_err();
        assert!(
            err.message.contains("TypeError") || err.message.contains("undefined"),
            "{err}"
        );
        let err = eval("context.subagents_spawned >").unwrap_err();
        assert!(err.message.contains("unexpected token"), "{err}");
        assert!(!err.message.contains('\n'), "{err}");
        let err = eval("throw new Error('boom')").unwrap_err();
        assert!(err.message.contains("boom"), "{err}");
    }

    #[test]
    fn an_endless_loop_is_stopped() {
        let err = eval("while (true) {}").unwrap_err();
        assert!(err.message.contains("ran longer than 1000 ms"), "{err}");
    }

    #[test]
    fn a_memory_hog_is_stopped() {
        let err = eval("let a = []; for (;;) { a.push(new Array(100000).fill(1)); }").unwrap_err();
        assert!(
            err.message.contains("memory") || err.message.contains("ran longer"),
            "{err}"
        );
    }

    #[test]
    fn conditions_cannot_change_the_context_they_are_given() {
        let context = json!({"n": 1});
        assert!(evaluate_condition("context.n = 5, true", &context, &json!({})).unwrap());
        assert_eq!(context["n"], 1);
    }
}
