//! This binary: its version, commit and the channel that installed it (as `--version` says),
//! and whether `context-pilot` on `PATH` is the same binary (the plugins run that one).

use super::Check;
use crate::about::About;

const GROUP: &str = "install";

pub(super) fn checks() -> Vec<Check> {
    let about = About::of_this_binary();
    let at = about
        .path
        .as_deref()
        .map(|p| format!(" at {}", p.display()))
        .unwrap_or_default();
    let mut checks = vec![Check::ok(
        GROUP,
        format!("Context Pilot {}{at}", about.version_line()),
    )];
    let on_path = cp_base::find_program("context-pilot", std::env::var_os("PATH").as_deref())
        .and_then(|p| std::fs::canonicalize(p).ok());
    match (on_path, about.path.as_deref()) {
        (None, _) => checks.push(Check::info(
            GROUP,
            "context-pilot is not on PATH",
            Some(
                "the Claude Code plugin, the Gemini CLI extension and the Codex plugin run \
                 `context-pilot` from PATH; add its folder to PATH"
                    .to_owned(),
            ),
        )),
        (Some(found), Some(this)) if found != this => checks.push(Check::info(
            GROUP,
            format!(
                "context-pilot on PATH is another binary ({})",
                found.display()
            ),
            Some("the plugins run that one; remove the one you do not use".to_owned()),
        )),
        _ => {}
    }
    checks
}
