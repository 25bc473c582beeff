//! A test command that never ran its tests because a tool is missing: the shell's `sh: 1: c8:
//! not found` (exit 127), `No module named pytest`, `make: jest: No such file or directory`.
//! That is neither a failing test nor the agent's bug: the agent is told what is missing and
//! how to install it (the command comes from the project's files, see `detect::install`).

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use super::scan::re;

/// What is missing, as the output shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MissingTool {
    /// The program or Python module, e.g. `c8`, `pytest`, or `node_modules`.
    pub tool: String,
    /// The line that says so (or why the run was not attempted).
    pub evidence: String,
    /// The command that installs it, from the project's lockfile or manifest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install: Option<String>,
}

/// `sh: 1: c8: not found`, `bash: line 1: jest: command not found`, `make: jest: No such file
/// or directory`, `env: 'node': No such file or directory`.
static NOT_FOUND: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?m)^(?:\S*sh: (?:(?:line )?\d+: )?([\w.@/+-]+): (?:command )?not found|make(?:\[\d+\])?: ([\w.@/+-]+): No such file or directory|env: '?([\w.@/+-]+)'?: No such file or directory)\s*$",
    )
});

/// `/usr/bin/python3: No module named pytest` (from `python -m pytest`): the runner itself.
static NO_RUNNER_MODULE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?m)^\S*python[0-9.]*: No module named (pytest|tox|nox|coverage|unittest|xdist|hypothesis)\b.*$",
    )
});

/// The missing tool the output names, if any. `exit_code` 127 is the shell's "not found";
/// other codes still count when the shell's line is there (`make` exits 2 around it).
pub(crate) fn missing_tool(output: &str, exit_code: Option<i32>) -> Option<MissingTool> {
    if let Some(caps) = NO_RUNNER_MODULE.captures(output) {
        return Some(MissingTool {
            tool: caps.get(1).map_or("", |m| m.as_str()).to_owned(),
            evidence: caps.get(0).map_or("", |m| m.as_str()).trim().to_owned(),
            install: None,
        });
    }
    let caps = NOT_FOUND.captures(output)?;
    let tool = (1..=3).find_map(|i| caps.get(i)).map_or("", |m| m.as_str());
    // A test that shells out to a missing program fails as a test; only a run that ends
    // the way the shell ends on a missing command is one that never started.
    let shell_gave_up = matches!(exit_code, Some(127 | 2));
    shell_gave_up.then(|| MissingTool {
        tool: tool.to_owned(),
        evidence: caps.get(0).map_or("", |m| m.as_str()).trim().to_owned(),
        install: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shells_and_pythons_words() {
        let c8 = missing_tool(
            "> test\n> c8 node --test\n\nsh: 1: c8: not found\n",
            Some(127),
        )
        .unwrap();
        assert_eq!(
            (c8.tool.as_str(), c8.evidence.as_str()),
            ("c8", "sh: 1: c8: not found")
        );
        let bash = missing_tool("bash: line 1: jest: command not found\n", Some(127)).unwrap();
        assert_eq!(bash.tool, "jest");
        let plain = missing_tool("bash: tox: command not found\n", Some(127)).unwrap();
        assert_eq!(plain.tool, "tox");
        let make = missing_tool(
            "pytest -q\nmake: pytest: No such file or directory\nmake: *** [Makefile:2: test] Error 127\n",
            Some(2),
        )
        .unwrap();
        assert_eq!(make.tool, "pytest");
        let py = missing_tool("/usr/bin/python3: No module named pytest\n", Some(1)).unwrap();
        assert_eq!(
            (py.tool.as_str(), py.evidence.as_str()),
            ("pytest", "/usr/bin/python3: No module named pytest")
        );
    }

    #[test]
    fn a_test_importing_a_missing_module_is_not_a_missing_runner() {
        assert_eq!(
            missing_tool(
                "E   ModuleNotFoundError: No module named 'calcx'\n",
                Some(2)
            ),
            None
        );
        // A test that ran a missing program and failed on it is a failing test.
        assert_eq!(
            missing_tool("sh: 1: convert: not found\n1 failed\n", Some(1)),
            None
        );
    }
}
