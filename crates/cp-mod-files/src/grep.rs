//! `File_grep`: a regular expression over the project's files, with ripgrep's own crates
//! (`grep-regex`, `grep-searcher`, `ignore`): parallel, gitignore-aware, binary files skipped
//! (a NUL byte marks a file binary, as ripgrep does), bounded output with a note when cut.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use cp_base::{Args, ToolResult};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use serde_json::Value;

use super::error::{FileError, refused};
use super::glob::{PathFilter, relative, search_dir, walk_files_with};

/// Most files listed in `paths` output.
const MAX_FILES: usize = 200;
/// Most lines (matches and context) in `lines` output.
const MAX_LINES: usize = 300;
/// Longer lines are cut, so one minified file cannot flood the model's context.
const MAX_LINE_CHARS: usize = 300;
/// Most context lines before and after a match.
const MAX_CONTEXT: u64 = 10;

const TOOL: &str = "File_grep";

/// What one file produced.
struct FileHits {
    path: PathBuf,
    /// `12:text` for matches, `13-text` for context, `--` between separate groups.
    lines: Vec<String>,
    matches: usize,
}

/// Collects one file's lines; stops at binary data.
struct Collect {
    lines: Vec<String>,
    matches: usize,
    binary: bool,
    /// Stop collecting lines past this many (the file still counts as a match).
    limit: usize,
}

impl Collect {
    fn push(&mut self, number: Option<u64>, sep: char, bytes: &[u8]) {
        if self.lines.len() >= self.limit {
            return;
        }
        let text = String::from_utf8_lossy(bytes);
        let text = text.trim_end_matches(['\n', '\r']);
        let mut shown: String = text.chars().take(MAX_LINE_CHARS).collect();
        if shown.len() < text.len() {
            shown.push_str(" […line cut]");
        }
        self.lines
            .push(format!("{}{sep}{shown}", number.unwrap_or_default()));
    }
}

impl Sink for Collect {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, found: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.matches += 1;
        self.push(found.line_number(), ':', found.bytes());
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, context: &SinkContext<'_>) -> Result<bool, Self::Error> {
        self.push(context.line_number(), '-', context.bytes());
        Ok(true)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, Self::Error> {
        if !self.lines.is_empty() && self.lines.len() < self.limit {
            self.lines.push("--".to_owned());
        }
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// The parsed arguments.
struct Query {
    matcher: RegexMatcher,
    filter: Option<PathFilter>,
    dir: PathBuf,
    context: usize,
    lines_output: bool,
}

fn parse(root: &Path, args: &Value) -> Result<Query, FileError> {
    let args = Args::new(TOOL, args);
    let pattern = args.str("pattern")?;
    let case_insensitive = args.opt_bool("case_insensitive")?.unwrap_or(false);
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(case_insensitive)
        .build(pattern)
        .map_err(|source| FileError::Regex {
            tool: TOOL.to_owned(),
            pattern: pattern.to_owned(),
            source,
        })?;
    let filter = match args.opt_str("glob")? {
        Some(glob) => Some(PathFilter::new(glob, TOOL, "glob")?),
        None => None,
    };
    let context = args.opt_u64("context")?.unwrap_or(0);
    if context > MAX_CONTEXT {
        return Err(refused!(
            "{TOOL}: 'context' {context} is too large; give 0 to {MAX_CONTEXT} lines"
        ));
    }
    let lines_output = match args.opt_str("output")? {
        None | Some("paths") => false,
        Some("lines") => true,
        Some(other) => {
            return Err(refused!(
                "{TOOL}: 'output' `{other}` is not known; use \"paths\" (matching files) or \
                 \"lines\" (matching lines with line numbers)"
            ));
        }
    };
    Ok(Query {
        matcher,
        filter,
        dir: search_dir(root, args.opt_str("path")?, TOOL)?,
        context: usize::try_from(context).unwrap_or(0),
        lines_output,
    })
}

pub(super) fn run(root: &Path, args: &Value) -> Result<ToolResult, FileError> {
    let query = parse(root, args)?;
    let hits = search(&query);
    Ok(ToolResult::ok(render(root, &query, &hits)))
}

/// Searches every file under the query's directory (or the one file it names).
fn search(query: &Query) -> Vec<FileHits> {
    let found: Mutex<Vec<FileHits>> = Mutex::new(Vec::new());
    // Output lines so far: once past the bound, the walk stops (the note says it was cut).
    let budget = if query.lines_output {
        MAX_LINES
    } else {
        MAX_FILES
    };
    let used = AtomicUsize::new(0);
    // One searcher a walker thread, reused for all its files (its buffers too).
    let make = || {
        let mut searcher = SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(0))
            .line_number(true)
            .before_context(query.context)
            .after_context(query.context)
            .build();
        let (found, used) = (&found, &used);
        move |entry: &ignore::DirEntry| {
            if let Some(filter) = &query.filter
                && !filter.matches(&query.dir, entry.path())
            {
                return true;
            }
            let mut sink = Collect {
                lines: Vec::new(),
                matches: 0,
                binary: false,
                limit: if query.lines_output { MAX_LINES + 1 } else { 0 },
            };
            if searcher
                .search_path(&query.matcher, entry.path(), &mut sink)
                .is_err()
                || sink.binary
                || sink.matches == 0
            {
                return true;
            }
            let cost = if query.lines_output {
                sink.lines.len() + 1
            } else {
                1
            };
            if let Ok(mut found) = found.lock() {
                found.push(FileHits {
                    path: entry.path().to_path_buf(),
                    lines: sink.lines,
                    matches: sink.matches,
                });
            }
            // Keep walking until well past the bound, so the count in the note means something.
            used.fetch_add(cost, Ordering::Relaxed) < budget * 4
        }
    };
    walk_files_with(&query.dir, &make);
    let mut found = found.into_inner().unwrap_or_default();
    found.sort_by(|a, b| a.path.cmp(&b.path));
    found
}

fn render(root: &Path, query: &Query, hits: &[FileHits]) -> String {
    if hits.is_empty() {
        return "No matches (gitignored, hidden and binary files are skipped).".to_owned();
    }
    let files = hits.len();
    let matches: usize = hits.iter().map(|h| h.matches).sum();
    let mut out = String::new();
    let mut cut = false;
    if query.lines_output {
        let mut lines = 0;
        for hit in hits {
            if lines + 1 >= MAX_LINES {
                cut = true;
                break;
            }
            let _ = writeln!(out, "{}", relative(root, &hit.path));
            lines += 1;
            for line in &hit.lines {
                if lines >= MAX_LINES {
                    cut = true;
                    break;
                }
                let _ = writeln!(out, "{line}");
                lines += 1;
            }
        }
    } else {
        for hit in hits.iter().take(MAX_FILES) {
            let _ = writeln!(
                out,
                "{} ({} matches)",
                relative(root, &hit.path),
                hit.matches
            );
        }
        cut = files > MAX_FILES;
    }
    if cut {
        let _ = write!(
            out,
            "[output cut: {matches}+ matches in {files}+ files seen; narrow the pattern, or \
             give a 'path' or 'glob']"
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use std::fs;

    use serde_json::json;

    use super::*;

    fn project() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        (dir, root)
    }

    fn write(root: &Path, rel: &str, bytes: &[u8]) {
        let path = root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, bytes).unwrap();
    }

    fn grep(root: &Path, args: &Value) -> ToolResult {
        run(root, args).unwrap_or_else(|e| ToolResult::error(e.to_string()))
    }

    #[test]
    fn paths_and_lines_with_context_skipping_gitignored_and_binary_files() {
        let (_dir, root) = project();
        write(&root, ".gitignore", b"build/\n");
        write(
            &root,
            "src/a.rs",
            b"fn main() {}\nlet x = 1;\nfn Parse() {}\n",
        );
        write(&root, "src/b.py", b"def parse(): pass\n");
        write(&root, "build/out.rs", b"fn generated() {}\n");
        write(&root, "img.bin", b"fn in_binary\0\x01\x02");
        let result = grep(&root, &json!({"pattern": "fn \\w+"}));
        assert_eq!(result.text, "src/a.rs (2 matches)\n", "{}", result.text);
        let result = grep(
            &root,
            &json!({"pattern": "parse", "case_insensitive": true, "output": "lines"}),
        );
        assert_eq!(
            result.text,
            "src/a.rs\n3:fn Parse() {}\nsrc/b.py\n1:def parse(): pass\n"
        );
        let result = grep(
            &root,
            &json!({"pattern": "x = 1", "output": "lines", "context": 1, "glob": "*.rs"}),
        );
        assert_eq!(
            result.text,
            "src/a.rs\n1-fn main() {}\n2:let x = 1;\n3-fn Parse() {}\n"
        );
        let none = grep(&root, &json!({"pattern": "in_binary"}));
        assert!(none.text.starts_with("No matches"), "{}", none.text);
    }

    #[test]
    fn output_is_bounded_with_a_note() {
        let (_dir, root) = project();
        let mut text = String::new();
        for n in 0..1000 {
            let _ = writeln!(text, "needle {n}");
        }
        write(&root, "big.txt", text.as_bytes());
        let result = grep(&root, &json!({"pattern": "needle", "output": "lines"}));
        assert_eq!(result.text.lines().count(), MAX_LINES + 1);
        assert!(
            result.text.ends_with(
                "[output cut: 1000+ matches in 1+ files seen; narrow the pattern, or give a 'path' or 'glob']"
            ),
            "{}",
            result.text
        );
        let long = "y".repeat(5000);
        write(&root, "long.txt", format!("needle {long}\n").as_bytes());
        let result = grep(&root, &json!({"pattern": "needle y", "output": "lines"}));
        assert!(result.text.contains("[…line cut]"), "{}", result.text);
        assert!(result.text.len() < 1000);
    }

    #[test]
    fn confined_to_the_project_and_symlinks_are_not_followed() {
        let (_dir, root) = project();
        let (_outside_dir, outside) = project();
        write(&outside, "secret.txt", b"password=hunter2\n");
        write(&root, "src/ok.txt", b"nothing here\n");
        std::os::unix::fs::symlink(&outside, root.join("src/escape")).unwrap();
        std::os::unix::fs::symlink(outside.join("secret.txt"), root.join("src/link.txt")).unwrap();
        let result = grep(&root, &json!({"pattern": "password"}));
        assert!(result.text.starts_with("No matches"), "{}", result.text);
        for path in [outside.display().to_string(), "../".to_owned()] {
            let result = grep(&root, &json!({"pattern": "password", "path": path}));
            assert!(result.is_error, "{}", result.text);
        }
        let result = grep(&root, &json!({"pattern": "password", "path": "src/escape"}));
        assert!(
            result.is_error,
            "a symlink out of the project: {}",
            result.text
        );
        let bad = grep(&root, &json!({"pattern": "fn("}));
        assert!(
            bad.text.contains("is not a valid regular expression"),
            "{}",
            bad.text
        );
    }
}
