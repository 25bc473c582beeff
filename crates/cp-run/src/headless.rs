//! `context-pilot run --headless` on the terminal: the run with its approval gates asked on
//! the terminal (or answered from `--answers FILE`), its progress and its end printed as lines,
//! and its exit code.

use std::io::{BufRead, Write};

use cp_base::Project;
use cp_orchestrate::{
    EXIT_FAILED, EXIT_INTERRUPTED, RunArgs, SessionDriver, phase_summaries, run_or_resume,
};

use crate::prompters::{AnswersPrompter, PREFIX, TerminalPrompter};

/// Runs `context-pilot run --headless`: prompts on `input`/`output` (or answers from
/// `--answers`), prints progress to `output`, and returns the process exit code: 0 completed,
/// 2 aborted at an approval gate, 3 stopped by a merge conflict or a red merge no one
/// answered, 1 on any other error (printed with what to do) or a red branch at the end. A workflow
/// with `depends_on` ends with one summary line per phase.
pub fn run_headless(
    project: &Project,
    args: &RunArgs,
    driver: &mut dyn SessionDriver,
    input: &mut dyn BufRead,
    output: &mut dyn Write,
) -> i32 {
    let result = if let Some(path) = &args.answers {
        match AnswersPrompter::load(path, &mut *output) {
            Ok(mut prompter) => run_or_resume(project, args, driver, &mut prompter),
            Err(e) => {
                let _ = writeln!(output, "error: {e}");
                return EXIT_FAILED;
            }
        }
    } else {
        let mut prompter = TerminalPrompter::new(input, &mut *output);
        run_or_resume(project, args, driver, &mut prompter)
    };
    for line in phase_summaries(project, &result) {
        let _ = writeln!(output, "{PREFIX} {line}");
    }
    match result {
        Ok(outcome) => {
            let code = outcome.exit_code();
            let _ = writeln!(
                output,
                "{PREFIX} run {} {} (exit code {code}); context in {}",
                outcome.run_id,
                if code == EXIT_INTERRUPTED {
                    "interrupted"
                } else {
                    outcome.status.as_str()
                },
                outcome.run_dir.display()
            );
            if code == EXIT_INTERRUPTED {
                let _ = writeln!(
                    output,
                    "{PREFIX} continue it with: context-pilot run --resume {}",
                    outcome.run_id
                );
            }
            code
        }
        Err(e) => {
            let _ = writeln!(output, "error: {e}");
            e.exit_code()
        }
    }
}
