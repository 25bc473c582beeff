//! Reading a console tool's arguments: each checked, and an error for the model, naming the
//! tool and what to give instead, when it is wrong.

use std::path::PathBuf;
use std::time::Duration;

use cp_base::{Args, ToolEnv, ToolResult};
use uuid::Uuid;

use super::consoles::ConsoleModule;
use crate::ConsoleError;
use crate::client::{ConsoleClient, ConsoleHandle};
use crate::pattern;

/// Default and limits of `console_wait`'s `max_wait`, in seconds.
const DEFAULT_MAX_WAIT: f64 = 30.0;
const MAX_WAIT_SECS: f64 = 600.0;
/// `Err` carries the finished tool result (an error for the model).
pub(super) type Step<T> = Result<T, ToolResult>;

pub(super) fn fail(tool: &str, message: impl std::fmt::Display) -> ToolResult {
    ToolResult::error(format!("{tool}: {message}"))
}

pub(super) fn command_arg(tool: &str, args: &Args<'_>) -> Step<String> {
    let command = args.str("command")?;
    if command.trim().is_empty() {
        return Err(fail(
            tool,
            "'command' is empty; give a shell command, e.g. `cargo test`",
        ));
    }
    Ok(command.to_owned())
}

/// The `cwd` argument, resolved against the project root, which it must stay inside.
pub(super) fn cwd_arg(tool: &str, args: &Args<'_>, env: &ToolEnv) -> Step<PathBuf> {
    let root = std::fs::canonicalize(env.project.root()).map_err(|e| {
        fail(
            tool,
            format!(
                "the project root {} is unreadable: {e}",
                env.project.root().display()
            ),
        )
    })?;
    let Some(given) = args.opt_str("cwd")? else {
        return Ok(root);
    };
    let joined = root.join(given);
    let cwd = std::fs::canonicalize(&joined).map_err(|_| {
        fail(
            tool,
            format!("'cwd' `{given}` does not exist; give an existing directory inside the project, e.g. `.`"),
        )
    })?;
    if !cwd.starts_with(&root) {
        return Err(fail(
            tool,
            format!(
                "'cwd' `{given}` is outside the project root {}; give a directory inside it \
                 (relative paths start at the root)",
                root.display()
            ),
        ));
    }
    if !cwd.is_dir() {
        return Err(fail(tool, format!("'cwd' `{given}` is not a directory")));
    }
    Ok(cwd)
}

pub(super) fn client_for(
    tool: &str,
    module: &mut ConsoleModule,
    env: &ToolEnv,
) -> Step<ConsoleClient> {
    module.client(env.project.root()).map_err(|e| fail(tool, e))
}

/// The console named by the `id` argument.
pub(super) fn console_arg(
    tool: &str,
    module: &mut ConsoleModule,
    args: &Args<'_>,
    env: &ToolEnv,
) -> Step<ConsoleHandle> {
    let given = args.str("id")?;
    let unknown = |module: &ConsoleModule| {
        let known: Vec<String> = module
            .panels
            .iter()
            .map(|p| {
                let info = p.info();
                format!("{} (`{}`, {})", info.id, info.command, info.status)
            })
            .collect();
        let hint = if known.is_empty() {
            "no consoles are open; start one with console_create".to_owned()
        } else {
            format!("known consoles: {}", known.join("; "))
        };
        fail(tool, format!("unknown console id `{given}`; {hint}"))
    };
    let Ok(id) = Uuid::parse_str(given.trim()) else {
        return Err(unknown(module));
    };
    let client = client_for(tool, module, env)?;
    match client.attach(id) {
        Ok(handle) => Ok(handle),
        Err(ConsoleError::UnknownConsole(_)) => Err(unknown(module)),
        Err(e) => Err(fail(tool, e)),
    }
}

/// What to wait for, from `mode` and `pattern`. `Ok((None, _))` means exit.
pub(super) fn condition_args(
    tool: &str,
    args: &Args<'_>,
) -> Step<(Option<String>, Option<String>)> {
    match args.str("mode")? {
        "exit" => Ok((None, None)),
        "pattern" => {
            let pattern = args.opt_str("pattern")?.unwrap_or_default();
            if pattern.is_empty() {
                return Err(fail(
                    tool,
                    "'pattern' is required when 'mode' is \"pattern\"; e.g. \"Listening on\"",
                ));
            }
            let (regex, note) = compile_pattern(tool, pattern)?;
            Ok((Some(regex), note))
        }
        other => Err(fail(
            tool,
            format!("'mode' must be \"exit\" or \"pattern\", got \"{other}\""),
        )),
    }
}

/// The regex to use for `pattern`: itself when valid; its literal text when it is not
/// regex syntax (with a note saying so). A valid regex too large to compile is an error.
pub(super) fn compile_pattern(tool: &str, pattern: &str) -> Step<(String, Option<String>)> {
    match pattern::build(pattern) {
        Ok(_) => Ok((pattern.to_owned(), None)),
        Err(regex::Error::Syntax(reason)) => {
            let first = reason
                .lines()
                .last()
                .unwrap_or("invalid syntax")
                .trim()
                .to_owned();
            Ok((
                regex::escape(pattern),
                Some(format!(
                    "(`{pattern}` is not a valid regex: {first}; it was matched as literal text)"
                )),
            ))
        }
        Err(e) => Err(fail(
            tool,
            format!("'pattern' `{pattern}` is an invalid regex: {e}; use a simpler pattern"),
        )),
    }
}

pub(super) fn max_wait_arg(tool: &str, args: &Args<'_>) -> Step<Duration> {
    let secs = args.opt_f64("max_wait")?.unwrap_or(DEFAULT_MAX_WAIT);
    if !(1.0..=MAX_WAIT_SECS).contains(&secs) {
        return Err(fail(
            tool,
            format!("'max_wait' is {secs}, expected 1 to {MAX_WAIT_SECS} seconds"),
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}
