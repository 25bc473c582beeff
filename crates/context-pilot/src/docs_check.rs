//! The checks that keep the written documentation a house one can live in: the README stays a
//! front door, prose is wrapped, no table row is a screen wide, every relative link (and its
//! `#anchor`) leads somewhere, and the words the glossary bans appear nowhere.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The repository root, from this crate's manifest directory.
fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The README's most lines: what it is, install, the two commands, a start, and links.
const README_MAX_LINES: usize = 200;
/// A prose line's most characters.
const PROSE_MAX: usize = 100;
/// A table row's most characters: one screen.
const TABLE_ROW_MAX: usize = 200;

/// The hand-written Markdown files: the README, the top-level guides and `docs/` (the generated
/// reference pages have tests of their own, and BENCHMARKS.md is written by the bench).
fn written_docs() -> Vec<PathBuf> {
    let root = repo_root();
    let mut files: Vec<PathBuf> = [
        "README.md",
        "ARCHITECTURE.md",
        "CONTRIBUTING.md",
        "CHANGELOG.md",
    ]
    .iter()
    .map(|name| root.join(name))
    .collect();
    collect_markdown(&root.join("docs"), &mut files);
    files.retain(|f| !f.starts_with(root.join("docs/reference")));
    files
}

fn collect_markdown(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            collect_markdown(&path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| format!("<unreadable: {e}>"))
}

/// The lines of `text` outside fenced code blocks, with their line numbers.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut in_code = false;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if !in_code {
            out.push((i + 1, line));
        }
    }
    out
}

/// A heading's anchor as GitHub makes it: lower case, punctuation but `-` and `_` dropped,
/// spaces as `-`.
fn anchor_of(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(text: &str) -> BTreeSet<String> {
    prose_lines(text)
        .into_iter()
        .filter_map(|(_, line)| {
            let hashes = line.chars().take_while(|c| *c == '#').count();
            (hashes > 0 && line[hashes..].starts_with(' ')).then(|| anchor_of(&line[hashes..]))
        })
        .collect()
}

/// The `(target)` of each inline link `[label](target)` in `line`.
fn link_targets(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else {
            break;
        };
        out.push(&after[..end]);
        rest = &after[end..];
    }
    out
}

fn display(path: &Path) -> String {
    path.strip_prefix(repo_root())
        .unwrap_or(path)
        .display()
        .to_string()
}

#[test]
fn the_readme_is_a_front_door() {
    let readme = read(&repo_root().join("README.md"));
    let lines = readme.lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines; at most {README_MAX_LINES}: move the detail to docs/"
    );
}

#[test]
fn prose_is_wrapped_and_no_table_row_is_a_screen_wide() {
    let mut problems = Vec::new();
    for file in written_docs() {
        let text = read(&file);
        for (n, line) in prose_lines(&text) {
            let chars = line.chars().count();
            let table = line.trim_start().starts_with('|');
            let limit = if table { TABLE_ROW_MAX } else { PROSE_MAX };
            // A line that is one long link cannot be wrapped.
            let unbreakable = !line.trim().contains(' ');
            if chars > limit && !unbreakable {
                problems.push(format!("{}:{n}: {chars} characters", display(&file)));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "lines longer than {PROSE_MAX} (table rows: {TABLE_ROW_MAX}):\n{}",
        problems.join("\n")
    );
}

#[test]
fn every_relative_link_leads_somewhere() {
    let mut problems = Vec::new();
    for file in written_docs() {
        let text = read(&file);
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        for (n, line) in prose_lines(&text) {
            for target in link_targets(line) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
                let linked = if path.is_empty() {
                    file.clone()
                } else {
                    dir.join(path)
                };
                if !linked.exists() {
                    problems.push(format!("{}:{n}: {target}: no such file", display(&file)));
                    continue;
                }
                if !anchor.is_empty()
                    && linked.extension().is_some_and(|e| e == "md")
                    && !anchors(&read(&linked)).contains(anchor)
                {
                    problems.push(format!("{}:{n}: {target}: no such heading", display(&file)));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "broken links:\n{}",
        problems.join("\n")
    );
}

/// The phrases between the `banned` markers of the glossary, each `- phrase: use instead`.
fn banned_phrases() -> Vec<(String, String)> {
    let glossary = read(&repo_root().join("docs/GLOSSARY.md"));
    let start = glossary.find("<!-- banned: start -->").unwrap_or(0);
    let end = glossary.find("<!-- banned: end -->").unwrap_or(start);
    glossary[start..end]
        .lines()
        .filter_map(|line| line.strip_prefix("- "))
        .filter_map(|line| line.split_once(": "))
        .map(|(phrase, instead)| (phrase.to_lowercase(), instead.to_owned()))
        .collect()
}

/// Every file whose words a person or an agent reads: the docs and the Rust sources (their
/// strings, comments and docs), the glossary itself left out.
fn worded_files() -> Vec<PathBuf> {
    let root = repo_root();
    let mut files = written_docs();
    files.push(root.join("BENCHMARKS.md"));
    files.retain(|f| !f.ends_with("docs/GLOSSARY.md"));
    for crate_dir in std::fs::read_dir(root.join("crates"))
        .into_iter()
        .flatten()
        .flatten()
    {
        collect_rust(&crate_dir.path(), &mut files);
    }
    collect_rust(&root.join("tests"), &mut files);
    files
}

fn collect_rust(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_rust(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `text` as one line of words, so that a phrase broken across lines is found: each line's
/// comment marker (`//!`, `///`, `//`, `*`) or quote (`>`) and a string's line-continuation
/// backslash are dropped, and every run of white space becomes one space. With it, the line
/// number where each of its lines starts.
fn flattened(text: &str) -> (String, Vec<(usize, usize)>) {
    let mut flat = String::new();
    let mut starts = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let mut line = line.trim();
        for marker in ["//!", "///", "//", "*", ">"] {
            if let Some(rest) = line.strip_prefix(marker) {
                line = rest;
                break;
            }
        }
        let line = line.strip_suffix('\\').unwrap_or(line);
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.is_empty() {
            continue;
        }
        if !flat.is_empty() {
            flat.push(' ');
        }
        starts.push((flat.len(), n + 1));
        flat.push_str(&words.join(" "));
    }
    (flat, starts)
}

/// The lines of `text` where `phrase` (lower case) begins, across line breaks.
fn lines_with(text: &str, phrase: &str) -> Vec<usize> {
    lines_of(&flattened(&text.to_lowercase()), phrase)
}

/// The lines where `phrase` begins in a text [`flattened`] once for all the phrases.
fn lines_of((flat, starts): &(String, Vec<(usize, usize)>), phrase: &str) -> Vec<usize> {
    let mut lines: Vec<usize> = flat
        .match_indices(phrase)
        .map(|(at, _)| {
            let i = starts.partition_point(|(start, _)| *start <= at);
            starts[i.saturating_sub(1)].1
        })
        .collect();
    lines.dedup();
    lines
}

#[test]
fn glossary_words_are_kept() {
    let banned = banned_phrases();
    assert!(!banned.is_empty(), "docs/GLOSSARY.md lists no banned words");
    let mut problems = Vec::new();
    for file in worded_files() {
        let text = flattened(&read(&file).to_lowercase());
        for (phrase, instead) in &banned {
            for n in lines_of(&text, phrase) {
                problems.push(format!(
                    "{}:{n}: \"{phrase}\": say \"{instead}\"",
                    display(&file)
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "words the glossary bans:\n{}",
        problems.join("\n")
    );
}

#[test]
fn a_banned_phrase_is_found_across_a_line_break() {
    assert_eq!(lines_with("a green\ntree here", "green tree"), [1]);
    assert_eq!(
        lines_with("/// the green\n    /// Tree it ran", "green tree"),
        [1]
    );
    assert_eq!(
        lines_with("one\n\"a green \\\n     tree\"", "green tree"),
        [2]
    );
    assert_eq!(
        lines_with("green\n\nx tree", "green tree"),
        Vec::<usize>::new()
    );
    assert_eq!(lines_with("a green tree\ngreen tree", "green tree"), [1, 2]);
}

#[test]
fn a_heading_s_anchor_is_github_s() {
    assert_eq!(anchor_of(" The stop gate"), "the-stop-gate");
    assert_eq!(
        anchor_of(" Use with Claude Code / Gemini CLI / Codex CLI"),
        "use-with-claude-code--gemini-cli--codex-cli"
    );
    assert_eq!(
        link_targets("see [a](b.md#c) and [d](e)"),
        vec!["b.md#c", "e"]
    );
}
