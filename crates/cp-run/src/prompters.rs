//! Who answers the approval gates of `context-pilot run --headless`: the person, with numbered
//! prompts on the terminal ([`TerminalPrompter`]), or an answers file for unattended runs
//! ([`AnswersPrompter`]). Both print the run's progress as lines.

use std::collections::VecDeque;
use std::io::{BufRead, Write};
use std::path::Path;

use cp_orchestrate::{
    ApprovalAnswer, ApprovalPrompter, ApprovalRequest, PromptError, WorkflowEvent,
};
use serde::{Deserialize, Serialize};

/// Prefix of progress lines.
pub(crate) const PREFIX: &str = "[context-pilot]";

fn show_request(out: &mut dyn Write, request: &ApprovalRequest) -> std::io::Result<()> {
    writeln!(
        out,
        "\n== Approval gate after phase '{}' (iteration {}) ==",
        request.phase_id, request.iteration
    )?;
    writeln!(out, "{}", request.prompt)?;
    for file in &request.files {
        writeln!(out, "  review: {file}")?;
    }
    for (i, choice) in request.choices.iter().enumerate() {
        let feedback = if choice.with_feedback {
            " (asks for feedback)"
        } else {
            ""
        };
        writeln!(out, "  {}) {}{feedback}", i + 1, choice.label)?;
    }
    Ok(())
}

fn io_error(e: &std::io::Error) -> PromptError {
    PromptError(format!("terminal I/O failed: {e}"))
}

/// Finds a choice by 1-based number or by label (case-insensitive).
fn match_choice(request: &ApprovalRequest, text: &str) -> Option<usize> {
    let text = text.trim();
    if let Ok(n) = text.parse::<usize>() {
        return (1..=request.choices.len()).contains(&n).then(|| n - 1);
    }
    request
        .choices
        .iter()
        .position(|c| c.label.trim().eq_ignore_ascii_case(text))
}

fn choice_list(request: &ApprovalRequest) -> String {
    request
        .choices
        .iter()
        .enumerate()
        .map(|(i, c)| format!("{}) {}", i + 1, c.label))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Prompts on a terminal: numbered choices, a line read per answer, then a feedback line for
/// choices that ask for it. Progress events are printed as lines.
#[derive(Debug)]
pub struct TerminalPrompter<R, W> {
    input: R,
    output: W,
}

impl<R: BufRead, W: Write> TerminalPrompter<R, W> {
    /// Reads answers from `input` and writes to `output` (normally stdin and stdout).
    pub fn new(input: R, output: W) -> Self {
        Self { input, output }
    }

    fn read_line(&mut self) -> Result<Option<String>, PromptError> {
        let mut line = String::new();
        let n = self.input.read_line(&mut line).map_err(|e| io_error(&e))?;
        Ok((n > 0).then(|| line.trim_end_matches(['\n', '\r']).to_owned()))
    }
}

impl<R: BufRead, W: Write> ApprovalPrompter for TerminalPrompter<R, W> {
    fn ask(&mut self, request: &ApprovalRequest) -> Result<ApprovalAnswer, PromptError> {
        show_request(&mut self.output, request).map_err(|e| io_error(&e))?;
        let n = request.choices.len();
        let choice = loop {
            write!(self.output, "Choose 1-{n}: ").map_err(|e| io_error(&e))?;
            self.output.flush().map_err(|e| io_error(&e))?;
            let Some(line) = self.read_line()? else {
                return Err(PromptError(
                    "input ended before an answer was given; answer on the terminal, or pass \
                     --answers FILE for unattended runs"
                        .into(),
                ));
            };
            if let Some(choice) = match_choice(request, &line) {
                break choice;
            }
            writeln!(
                self.output,
                "'{}' is not a choice; type a number from 1 to {n} or a label",
                line.trim()
            )
            .map_err(|e| io_error(&e))?;
        };
        let feedback = if request.choices[choice].with_feedback {
            write!(self.output, "Feedback (one line, empty for none): ")
                .map_err(|e| io_error(&e))?;
            self.output.flush().map_err(|e| io_error(&e))?;
            self.read_line()?
        } else {
            None
        };
        Ok(ApprovalAnswer { choice, feedback })
    }

    fn on_event(&mut self, event: &WorkflowEvent) {
        // Progress is best effort: a closed stdout must not stop the run.
        let _ = writeln!(self.output, "{PREFIX} {event}");
    }
}

/// Which option an answer picks: its 1-based number or its label.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AnswerChoice {
    /// The option's number as shown (1 = first).
    Index(usize),
    /// The option's label (case-insensitive).
    Label(String),
}

/// One answer of an answers file.
///
/// ```yaml
/// - { phase: plan, option: Continue }
/// - { option: 2, feedback: "Split the parser from the lexer" }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Answer {
    /// The phase whose approval gate this answers; checked when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// The option.
    pub option: AnswerChoice,
    /// Feedback for options `with_feedback`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
}

/// Answers approval gates from a list consumed in order (`--answers FILE`, YAML or JSON).
#[derive(Debug)]
pub struct AnswersPrompter<W> {
    source: String,
    answers: VecDeque<Answer>,
    used: usize,
    output: W,
}

impl<W: Write> AnswersPrompter<W> {
    /// Reads the answers file at `path` (a YAML or JSON list of [`Answer`]s).
    pub fn load(path: &Path, output: W) -> Result<Self, PromptError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| PromptError(format!("answers file {}: {e}", path.display())))?;
        let answers: Vec<Answer> = serde_norway::from_str(&text).map_err(|e| {
            PromptError(format!(
                "answers file {}: {e}; expected a list such as \
                 [{{phase: plan, option: Continue}}, {{option: 2, feedback: \"…\"}}]",
                path.display()
            ))
        })?;
        Ok(Self::new(path.display().to_string(), answers, output))
    }

    /// Answers from `answers`; `source` names them in errors.
    pub fn new(source: impl Into<String>, answers: Vec<Answer>, output: W) -> Self {
        Self {
            source: source.into(),
            answers: answers.into(),
            used: 0,
            output,
        }
    }

    /// Answers not used yet.
    pub fn remaining(&self) -> usize {
        self.answers.len()
    }
}

impl<W: Write> ApprovalPrompter for AnswersPrompter<W> {
    fn ask(&mut self, request: &ApprovalRequest) -> Result<ApprovalAnswer, PromptError> {
        let _ = show_request(&mut self.output, request);
        let source = &self.source;
        let Some(answer) = self.answers.pop_front() else {
            return Err(PromptError(format!(
                "answers file {source} has no answer left ({} used); add one for the approval gate \
                 after phase '{}'",
                self.used, request.phase_id
            )));
        };
        self.used += 1;
        let number = self.used;
        if let Some(phase) = &answer.phase
            && phase != &request.phase_id
        {
            return Err(PromptError(format!(
                "answers file {source}, answer #{number} is for phase '{phase}', but the \
                 approval gate is after phase '{}'",
                request.phase_id
            )));
        }
        let text = match &answer.option {
            AnswerChoice::Index(n) => n.to_string(),
            AnswerChoice::Label(label) => label.clone(),
        };
        let Some(choice) = match_choice(request, &text) else {
            return Err(PromptError(format!(
                "answers file {source}, answer #{number}: '{text}' is not an option here; the \
                 options are {}",
                choice_list(request)
            )));
        };
        let _ = writeln!(
            self.output,
            "Answer from {source}: {}) {}",
            choice + 1,
            request.choices[choice].label
        );
        Ok(ApprovalAnswer {
            choice,
            feedback: answer.feedback,
        })
    }

    fn on_event(&mut self, event: &WorkflowEvent) {
        let _ = writeln!(self.output, "{PREFIX} {event}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cp_orchestrate::{Action, Choice};

    fn request() -> ApprovalRequest {
        ApprovalRequest {
            worktree: None,
            base_commit: None,
            run_id: "r".into(),
            phase_id: "plan".into(),
            iteration: 1,
            approval: false,
            prompt: "Review the plan?".into(),
            files: vec!["docs/plan.md".into()],
            choices: vec![
                Choice {
                    label: "Continue".into(),
                    with_feedback: false,
                    action: Action::Continue,
                },
                Choice {
                    label: "Redo plan".into(),
                    with_feedback: true,
                    action: Action::RepeatPhase,
                },
            ],
        }
    }

    #[test]
    fn terminal_prompts_until_a_valid_choice_then_asks_for_feedback() {
        let input = b"7\nnope\nredo PLAN\nsplit the lexer out\n";
        let mut out = Vec::new();
        let answer = TerminalPrompter::new(&input[..], &mut out)
            .ask(&request())
            .unwrap();
        assert_eq!(answer.choice, 1);
        assert_eq!(answer.feedback.as_deref(), Some("split the lexer out"));
        let shown = String::from_utf8(out).unwrap();
        assert!(
            shown.contains("== Approval gate after phase 'plan' (iteration 1) =="),
            "{shown}"
        );
        assert!(shown.contains("  review: docs/plan.md"), "{shown}");
        assert!(
            shown.contains("  2) Redo plan (asks for feedback)"),
            "{shown}"
        );
        assert!(shown.contains("'7' is not a choice"), "{shown}");
        assert!(shown.contains("'nope' is not a choice"), "{shown}");
        assert!(
            shown.contains("Feedback (one line, empty for none): "),
            "{shown}"
        );
    }

    #[test]
    fn terminal_input_ending_is_an_error_with_the_alternative() {
        let err = TerminalPrompter::new(&b""[..], Vec::new())
            .ask(&request())
            .unwrap_err();
        assert!(err.0.contains("--answers FILE"), "{err}");
    }

    #[test]
    fn answers_match_by_number_or_label_and_check_the_phase() {
        let answers: Vec<Answer> = serde_norway::from_str(
            "- {phase: plan, option: 2, feedback: more detail}\n- {option: continue}\n- {phase: review, option: 1}\n- {option: Maybe}\n",
        )
        .unwrap();
        let mut p = AnswersPrompter::new("answers.yaml", answers, Vec::new());
        let a = p.ask(&request()).unwrap();
        assert_eq!((a.choice, a.feedback.as_deref()), (1, Some("more detail")));
        assert_eq!(p.ask(&request()).unwrap().choice, 0);
        let err = p.ask(&request()).unwrap_err().0;
        assert!(
            err.contains(
                "answer #3 is for phase 'review', but the approval gate is after phase 'plan'"
            ),
            "{err}"
        );
        let err = p.ask(&request()).unwrap_err().0;
        assert!(err.contains("answer #4: 'Maybe' is not an option here; the options are 1) Continue, 2) Redo plan"), "{err}");
        let err = p.ask(&request()).unwrap_err().0;
        assert!(err.contains("has no answer left (4 used)"), "{err}");
    }

    #[test]
    fn json_answers_files_work_too() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("answers.json");
        std::fs::write(&path, r#"[{"option": "Redo plan", "feedback": "x"}]"#).unwrap();
        let mut p = AnswersPrompter::load(&path, Vec::new()).unwrap();
        assert_eq!(p.ask(&request()).unwrap().choice, 1);
        std::fs::write(&path, r#"{"option": 1}"#).unwrap();
        let err = AnswersPrompter::load(&path, Vec::new()).unwrap_err().0;
        assert!(err.contains("expected a list"), "{err}");
    }
}
