//! Sorting changed files into the configured categories.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};

use super::config::{StopGateConfig, StopRule};
use crate::error::CheckpointError;
use cp_git::ChangedFile;

/// A changed file with the categories it falls in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CategorizedFile {
    /// The change.
    pub file: ChangedFile,
    /// Names of the matching rules, in config order. Empty: no rule matched.
    pub categories: Vec<String>,
    /// Must be committed before the second stop passes.
    pub gated: bool,
    /// Counts as a code change: gated, or has an instruction, or triggers the tests.
    pub code: bool,
    /// Triggers the test run.
    pub triggers_tests: bool,
}

/// A set of gitignore-style patterns compiled once.
#[derive(Debug, Clone)]
pub(crate) struct Patterns {
    include: GlobSet,
    exclude: GlobSet,
    empty: bool,
}

impl Patterns {
    /// `owner` names the config part in errors, e.g. `rule 'docs'`. Include entries starting
    /// with `!` count as excludes.
    pub(crate) fn compile(
        owner: &str,
        include: &[String],
        exclude: &[String],
    ) -> Result<Self, CheckpointError> {
        let mut inc = GlobSetBuilder::new();
        let mut exc = GlobSetBuilder::new();
        let mut empty = true;
        for pattern in include {
            if let Some(negated) = pattern.strip_prefix('!') {
                add(&mut exc, owner, negated)?;
            } else {
                add(&mut inc, owner, pattern)?;
                empty = false;
            }
        }
        for pattern in exclude {
            add(&mut exc, owner, pattern)?;
        }
        let build = |b: GlobSetBuilder| {
            b.build().map_err(|source| CheckpointError::InvalidGlob {
                owner: owner.to_owned(),
                pattern: include.join(", "),
                source,
            })
        };
        Ok(Self {
            include: build(inc)?,
            exclude: build(exc)?,
            empty,
        })
    }

    /// True when no include pattern was given.
    pub(crate) fn is_empty(&self) -> bool {
        self.empty
    }

    /// Whether `path` (relative to the repository root, `/`-separated) is matched.
    pub(crate) fn matches(&self, path: &str) -> bool {
        self.include.is_match(path) && !self.exclude.is_match(path)
    }
}

/// Adds `pattern` with gitignore meaning: unanchored without `/`, and a match of a directory
/// covers everything below it.
fn add(set: &mut GlobSetBuilder, owner: &str, pattern: &str) -> Result<(), CheckpointError> {
    let trimmed = pattern.trim();
    let trimmed = trimmed.strip_prefix("./").unwrap_or(trimmed);
    let anchored = trimmed.starts_with('/');
    let body = trimmed.trim_start_matches('/').trim_end_matches('/');
    if body.is_empty() {
        return Err(CheckpointError::InvalidConfig(format!(
            "{owner}: pattern `{pattern}` matches nothing; example: `src/**/*.rs`"
        )));
    }
    let base = if anchored || body.contains('/') {
        body.to_owned()
    } else {
        format!("**/{body}")
    };
    for glob in [base.clone(), format!("{base}/**")] {
        let compiled = GlobBuilder::new(&glob)
            .literal_separator(true)
            .build()
            .map_err(|source| CheckpointError::InvalidGlob {
                owner: owner.to_owned(),
                pattern: pattern.to_owned(),
                source,
            })?;
        set.add(compiled);
    }
    Ok(())
}

#[derive(Debug, Clone)]
pub(crate) struct CompiledRule {
    pub(crate) rule: StopRule,
    patterns: Patterns,
}

/// The rules and test trigger, compiled.
#[derive(Debug, Clone)]
pub(crate) struct Categorizer {
    rules: Vec<CompiledRule>,
    /// `None`: every code-related file triggers the tests.
    test_trigger: Option<Patterns>,
}

impl Categorizer {
    pub(crate) fn new(config: &StopGateConfig) -> Result<Self, CheckpointError> {
        let rules = if config.rules.is_empty() {
            StopGateConfig::builtin_rules()
        } else {
            config.rules.clone()
        };
        let mut compiled = Vec::with_capacity(rules.len());
        for rule in rules {
            if rule.name.trim().is_empty() {
                return Err(CheckpointError::InvalidConfig(
                    "a rule has an empty 'name'; example: {\"name\": \"daemon code\", \
                     \"include\": [\"src/**/*.py\"], \"gated\": true}"
                        .into(),
                ));
            }
            let owner = format!("rule '{}'", rule.name);
            let patterns = Patterns::compile(&owner, &rule.include, &rule.exclude)?;
            compiled.push(CompiledRule { rule, patterns });
        }
        let test_trigger = match &config.tests {
            Some(tests) => {
                let p = Patterns::compile("tests.include", &tests.include, &[])?;
                (!p.is_empty()).then_some(p)
            }
            None => None,
        };
        Ok(Self {
            rules: compiled,
            test_trigger,
        })
    }

    pub(crate) fn rules(&self) -> impl Iterator<Item = &StopRule> {
        self.rules.iter().map(|r| &r.rule)
    }

    /// Sorts `files` into categories. A rename counts under its old and its new path, so
    /// moving code out of a gated place is still gated.
    pub(crate) fn categorize(&self, files: Vec<ChangedFile>) -> Vec<CategorizedFile> {
        files
            .into_iter()
            .map(|file| {
                let paths: Vec<&str> = std::iter::once(file.path.as_str())
                    .chain(file.renamed_from.as_deref())
                    .collect();
                let hit = |p: &Patterns| paths.iter().any(|path| p.matches(path));
                let mut categories = Vec::new();
                let mut gated = false;
                let mut instructed = false;
                for rule in &self.rules {
                    if hit(&rule.patterns) {
                        categories.push(rule.rule.name.clone());
                        gated |= rule.rule.gated;
                        instructed |= rule.rule.instruction.is_some();
                    }
                }
                let code_by_rules = gated || instructed;
                let triggers_tests = match &self.test_trigger {
                    Some(trigger) => hit(trigger),
                    None => code_by_rules,
                };
                CategorizedFile {
                    file,
                    categories,
                    gated,
                    code: code_by_rules || triggers_tests,
                    triggers_tests,
                }
            })
            .collect()
    }

    /// Instructions of every category that matched in any of `sets`, each given once, in
    /// rule order.
    pub(crate) fn instructions(&self, sets: &[&[CategorizedFile]]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for rule in self.rules() {
            let Some(instruction) = &rule.instruction else {
                continue;
            };
            let matched = sets
                .iter()
                .any(|files| files.iter().any(|f| f.categories.contains(&rule.name)));
            if matched && !out.contains(instruction) {
                out.push(instruction.clone());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cp_git::FileStatus;

    fn file(path: &str) -> ChangedFile {
        ChangedFile::new(path, FileStatus::Modified)
    }

    fn categorize(config: &StopGateConfig, path: &str) -> CategorizedFile {
        Categorizer::new(config)
            .unwrap()
            .categorize(vec![file(path)])
            .remove(0)
    }

    #[test]
    fn builtin_rules_treat_docs_as_non_code_and_the_rest_as_gated_code() {
        let config = StopGateConfig::default();
        for code in ["src/main.rs", "Makefile", "a/b/c.py", "docsy/x.rs"] {
            let f = categorize(&config, code);
            assert!(f.code && f.gated && f.triggers_tests, "{code}: {f:?}");
            assert_eq!(f.categories, ["code"]);
        }
        for doc in [
            "README.md",
            "notes/ideas.txt",
            "docs/guide/intro.rst",
            "sub/docs/x.png",
            ".context-pilot/handoffs/1-w.json",
        ] {
            let f = categorize(&config, doc);
            assert!(!f.code && !f.gated && !f.triggers_tests, "{doc}: {f:?}");
        }
        // Context Pilot's own configuration: listed as such, neither code nor gated.
        for own in [
            ".context-pilot/config.json",
            ".context-pilot/scripts/lint.sh",
        ] {
            let f = categorize(&config, own);
            assert!(!f.code && !f.gated && !f.triggers_tests, "{own}: {f:?}");
            assert_eq!(f.categories, ["context-pilot config"]);
        }
    }

    #[test]
    fn seed_preset_categories() {
        let config = StopGateConfig::example_preset();
        let cases: &[(&str, &[&str], bool)] = &[
            ("src/app/server.py", &["daemon code"], true),
            ("src/hooks/receiver.py", &["hook code"], true),
            ("src/cli/tui/view.py", &["TUI code"], true),
            ("tests/unit/test_x.py", &["tests"], true),
            (".claude/agents/reviewer.md", &["agent artifacts"], false),
            ("config.yml", &["config"], true),
            ("sub/config.yml", &[], false),
            ("docs/arch/overview.md", &["docs"], false),
            ("todos/next.md", &["docs"], false),
            ("README.md", &["docs"], false),
        ];
        for (path, categories, gated) in cases {
            let f = categorize(&config, path);
            assert_eq!(&f.categories, categories, "{path}");
            assert_eq!(f.gated, *gated, "{path}");
        }
        assert!(categorize(&config, "tests/unit/test_x.py").triggers_tests);
        assert!(!categorize(&config, "config.yml").triggers_tests);
        assert!(categorize(&config, ".claude/agents/reviewer.md").code);
        assert!(!categorize(&config, "docs/arch/overview.md").code);
    }

    #[test]
    fn instructions_are_deduplicated_in_rule_order() {
        let config = StopGateConfig::example_preset();
        let c = Categorizer::new(&config).unwrap();
        let files = c.categorize(vec![
            file("config.yml"),
            file("src/cli/tui/app.py"),
            file("src/app/core.py"),
            file("README.md"),
        ]);
        assert_eq!(
            c.instructions(&[&files]),
            [
                "Run `make restart` then `make status`",
                "Reload the TUI: run `pkill -SIGUSR2 -f -- '-m app.cli.tui$'`",
            ]
        );
    }

    #[test]
    fn rename_counts_under_both_paths() {
        let c = Categorizer::new(&StopGateConfig::example_preset()).unwrap();
        let moved = ChangedFile {
            renamed_from: Some("src/app/core.py".into()),
            ..ChangedFile::new("attic/old_core.txt", FileStatus::Renamed)
        };
        let f = c.categorize(vec![moved]).remove(0);
        assert!(f.gated);
        assert_eq!(f.categories, ["daemon code"]);
    }

    #[test]
    fn negated_include_and_star_do_not_cross_directories() {
        let config = StopGateConfig {
            rules: vec![StopRule {
                name: "top".into(),
                include: vec!["/*.rs".into(), "!/build.rs".into()],
                exclude: vec![],
                instruction: Some("x".into()),
                gated: false,
            }],
            ..StopGateConfig::default()
        };
        assert!(categorize(&config, "main.rs").code);
        assert!(!categorize(&config, "src/main.rs").code);
        assert!(!categorize(&config, "build.rs").code);
    }

    #[test]
    fn invalid_glob_names_rule_and_pattern() {
        let config = StopGateConfig {
            rules: vec![StopRule {
                name: "bad".into(),
                include: vec!["src/[".into()],
                exclude: vec![],
                instruction: None,
                gated: true,
            }],
            ..StopGateConfig::default()
        };
        let err = Categorizer::new(&config).unwrap_err().to_string();
        assert!(
            err.contains("rule 'bad'") && err.contains("`src/[`"),
            "{err}"
        );
        assert!(err.contains("example"), "{err}");
    }
}
