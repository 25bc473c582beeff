//! The hooks' verdicts, reported straight to the driver that started the agent, and the
//! prompt size of each model response where the agent's stream does not say it.
//!
//! Claude Code echoes its hooks' answers in its stream, Gemini CLI does not; and neither says
//! them in the words the person should read. Gemini CLI's stream reports tokens only at the
//! end of a run, but its `AfterModel` hook sees each response's `usageMetadata`: the driver
//! adds that hook for its runs, and the hook reports the prompt size ([`HookReportKind::Usage`]). So the driver names a fresh file in the run's
//! private wiring directory in [`HOOK_REPORT_ENV`] when it starts the agent; the agent passes
//! its environment to the hooks it runs (`context-pilot hook …`), and each hook appends its
//! verdict there as one JSON line ([`HookReport::send`]). The driver reads the new lines
//! before each line of the agent's stream ([`ReportReader`]): a hook has finished before the
//! agent goes on, so its verdict lands in order, after the tool call that fired it.

use std::fs::{File, OpenOptions};
use std::io::{self, Read as _, Write as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::item::Item;
use crate::wired::MCP_WIRED;

/// The environment variable naming the file a hook reports its verdict to.
pub const HOOK_REPORT_ENV: &str = "CP_HOOK_REPORT";

/// What a hook decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookReportKind {
    /// The stop gate let the agent stop.
    Passed,
    /// Text for the agent, all well (e.g. the callbacks that passed after an edit).
    Context,
    /// Text the agent must act on: a failed callback, or a stop the checkpoint blocks.
    Blocked,
    /// Text for the person (e.g. the checkpoint gave up with work left, a config problem).
    Notice,
    /// Not a verdict: a model response ended, with `prompt_tokens` in its request.
    Usage,
    /// Not a verdict: a part of Context Pilot's wiring was loaded by the agent (the probe
    /// hook ran, or with the event [`MCP_WIRED`](crate::wired::MCP_WIRED) the MCP server was
    /// started and asked for its tools).
    Wired,
}

/// One hook's verdict, as one line of the report file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookReport {
    /// The agent's name of the hook event, e.g. `PostToolUse` or `AfterAgent`.
    pub event: String,
    pub verdict: HookReportKind,
    /// What the hook said (empty for a plain pass).
    #[serde(default)]
    pub text: String,
    /// With [`HookReportKind::Usage`]: the prompt tokens of the response's request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u64>,
}

impl HookReport {
    /// Appends this report to the file named by [`HOOK_REPORT_ENV`]; nothing when it is
    /// unset (the agent was not started by a driver, e.g. the person's own `claude`).
    pub fn send(&self) -> io::Result<()> {
        match std::env::var_os(HOOK_REPORT_ENV).filter(|v| !v.is_empty()) {
            Some(path) => self.append_to(Path::new(&path)),
            None => Ok(()),
        }
    }

    /// Appends this report to `path` as one line, in one write: hooks of parallel tool calls
    /// may report at the same moment, and `O_APPEND` keeps each line whole.
    pub fn append_to(&self, path: &Path) -> io::Result<()> {
        let mut line = serde_json::to_string(self).map_err(io::Error::other)?;
        line.push('\n');
        // Only ever appended to a file the driver created: never create one elsewhere.
        let mut file = OpenOptions::new().append(true).open(path)?;
        file.write_all(line.as_bytes())
    }

    /// The report that a model response at `event` ended with `prompt_tokens` in its
    /// request.
    pub fn usage(event: &str, prompt_tokens: u64) -> Self {
        Self {
            event: event.to_owned(),
            verdict: HookReportKind::Usage,
            text: String::new(),
            prompt_tokens: Some(prompt_tokens),
        }
    }

    /// The report that the agent loaded the part of the wiring named by `event`.
    pub fn wired(event: &str) -> Self {
        Self {
            event: event.to_owned(),
            verdict: HookReportKind::Wired,
            text: String::new(),
            prompt_tokens: None,
        }
    }

    /// The driver's item: for a verdict, a one-line summary for progress lines and the whole
    /// text; for a usage report, the prompt size (none without one).
    fn into_item(self) -> Option<Item> {
        let (prefix, text) = match self.verdict {
            HookReportKind::Wired => {
                return Some(Item::Wired {
                    mcp: self.event == MCP_WIRED,
                });
            }
            HookReportKind::Usage => {
                return self.prompt_tokens.map(|prompt_tokens| Item::Usage {
                    message_id: None,
                    prompt_tokens,
                    model: None,
                });
            }
            HookReportKind::Passed => ("", "passed"),
            HookReportKind::Blocked => ("blocked: ", self.text.trim()),
            HookReportKind::Context | HookReportKind::Notice => ("", self.text.trim()),
        };
        let first_line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        Some(Item::Hook {
            summary: format!("{prefix}{first_line}"),
            detail: format!("{prefix}{text}"),
            event: self.event,
        })
    }
}

/// Reads the lines the hooks appended since the last read.
#[derive(Debug)]
pub(crate) struct ReportReader {
    path: PathBuf,
    file: File,
    /// A line whose end has not been written yet.
    partial: String,
}

impl ReportReader {
    /// Creates `path` empty (private to the user) and reads it from the start.
    pub(crate) fn create(path: PathBuf) -> io::Result<Self> {
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(&path)?;
        Ok(Self {
            path,
            file,
            partial: String::new(),
        })
    }

    /// The file the hooks append to.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The reports appended since the last call, as items. A line that is not a report is
    /// skipped (with a log line): a broken hook must not stop the run.
    pub(crate) fn read_new(&mut self) -> Vec<Item> {
        let mut bytes = Vec::new();
        if let Err(e) = self.file.read_to_end(&mut bytes) {
            tracing::warn!(path = %self.path.display(), "cannot read the hook reports: {e}");
            return Vec::new();
        }
        self.partial.push_str(&String::from_utf8_lossy(&bytes));
        let Some(end) = self.partial.rfind('\n') else {
            return Vec::new();
        };
        let complete: String = self.partial.drain(..=end).collect();
        complete
            .lines()
            .filter(|line| !line.trim().is_empty())
            .filter_map(|line| match serde_json::from_str::<HookReport>(line) {
                Ok(report) => report.into_item(),
                Err(e) => {
                    tracing::warn!("skipped a hook report that is not one ({e}): {line}");
                    None
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(event: &str, verdict: HookReportKind, text: &str) -> HookReport {
        HookReport {
            event: event.into(),
            verdict,
            text: text.into(),
            prompt_tokens: None,
        }
    }

    #[test]
    fn a_usage_report_is_the_prompt_size_of_a_response() {
        let dir = tempfile::tempdir().unwrap();
        let mut reader = ReportReader::create(dir.path().join("hooks.jsonl")).unwrap();
        HookReport::usage("AfterModel", 9_500)
            .append_to(reader.path())
            .unwrap();
        assert_eq!(
            reader.read_new(),
            [Item::Usage {
                message_id: None,
                prompt_tokens: 9_500,
                model: None
            }]
        );
    }

    #[test]
    fn reports_are_read_once_in_order_and_a_half_written_line_waits() {
        let dir = tempfile::tempdir().unwrap();
        let mut reader = ReportReader::create(dir.path().join("hooks.jsonl")).unwrap();
        assert!(reader.read_new().is_empty());
        report(
            "PostToolUse",
            HookReportKind::Context,
            "Callback 'lint' passed. Output:\nclean\n",
        )
        .append_to(reader.path())
        .unwrap();
        report(
            "Stop",
            HookReportKind::Blocked,
            "Stop gate: verify\nrun the tests",
        )
        .append_to(reader.path())
        .unwrap();
        assert_eq!(
            reader.read_new(),
            [
                Item::Hook {
                    event: "PostToolUse".into(),
                    summary: "Callback 'lint' passed. Output:".into(),
                    detail: "Callback 'lint' passed. Output:\nclean".into(),
                },
                Item::Hook {
                    event: "Stop".into(),
                    summary: "blocked: Stop gate: verify".into(),
                    detail: "blocked: Stop gate: verify\nrun the tests".into(),
                },
            ]
        );
        assert!(reader.read_new().is_empty(), "each report is read once");

        let mut file = OpenOptions::new().append(true).open(reader.path()).unwrap();
        file.write_all(br#"{"event": "Stop", "verd"#).unwrap();
        assert!(reader.read_new().is_empty(), "half a line waits");
        file.write_all(b"ict\": \"passed\"}\nnot json\n").unwrap();
        assert_eq!(
            reader.read_new(),
            [Item::Hook {
                event: "Stop".into(),
                summary: "passed".into(),
                detail: "passed".into(),
            }],
            "the completed line is read, the broken one skipped"
        );
    }

    #[test]
    fn wired_reports_say_which_part_was_loaded() {
        let dir = tempfile::tempdir().unwrap();
        let mut reader = ReportReader::create(dir.path().join("hooks.jsonl")).unwrap();
        HookReport::wired(MCP_WIRED)
            .append_to(reader.path())
            .unwrap();
        HookReport::wired("BeforeAgent")
            .append_to(reader.path())
            .unwrap();
        assert_eq!(
            reader.read_new(),
            [Item::Wired { mcp: true }, Item::Wired { mcp: false }]
        );
    }

    #[test]
    fn a_hook_never_creates_a_report_file_the_runner_did_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nobody-made-this.jsonl");
        assert!(
            report("Stop", HookReportKind::Passed, "")
                .append_to(&path)
                .is_err()
        );
        assert!(!path.exists());
    }
}
