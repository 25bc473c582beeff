//! git and bash: Context Pilot reads the work tree with git and runs callbacks with bash.

use std::path::Path;
use std::process::{Command, Stdio};

use super::Check;

const GROUP: &str = "tools";

pub(super) fn checks() -> Vec<Check> {
    vec![
        tool(
            "git",
            "install git (e.g. `apt-get install git`); Context Pilot reads what changed with it",
        ),
        tool(
            "bash",
            "install bash (e.g. `apt-get install bash`); callbacks and consoles run in it",
        ),
    ]
}

fn tool(name: &str, install: &str) -> Check {
    let Some(path) = cp_base::find_program(name, std::env::var_os("PATH").as_deref()) else {
        return Check::fail(GROUP, format!("{name}: not on PATH"), install);
    };
    match first_line_of_version(&path) {
        Some(version) => Check::ok(GROUP, format!("{name}: {version} ({})", path.display())),
        None => Check::fail(
            GROUP,
            format!("{name} at {}: `--version` fails", path.display()),
            install,
        ),
    }
}

fn first_line_of_version(path: &Path) -> Option<String> {
    let out = Command::new(path)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|out| out.status.success())?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .map(|line| line.trim().to_owned())
}
