//! Sorting changed files into the configured categories.

use globset::{Candidate, Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};

use super::config::{StopGateConfig, StopRule};
use crate::error::CheckpointError;
use cp_base::folder_globs::{FolderGlobs, parent_of};
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

/// What the rules say of one changed file ([`Categorizer::classify`]).
#[derive(Debug, Clone)]
pub(crate) struct Class {
    categories: Vec<String>,
    gated: bool,
    code: bool,
    triggers_tests: bool,
}

/// `files` with what the rules say of each (`classes`, in the same order).
pub(crate) fn with_classes(files: Vec<ChangedFile>, classes: Vec<Class>) -> Vec<CategorizedFile> {
    files
        .into_iter()
        .zip(classes)
        .map(|(file, class)| CategorizedFile {
            file,
            categories: class.categories,
            gated: class.gated,
            code: class.code,
            triggers_tests: class.triggers_tests,
        })
        .collect()
}

/// The gitignore-style patterns of one part of the config (a rule, or the test trigger),
/// each checked on its own; the [`Categorizer`] matches them all in one set.
#[derive(Debug, Clone)]
pub(crate) struct Patterns {
    /// Each pattern's glob for the path itself; one that matches a folder covers everything
    /// beneath it (see [`FolderGlobs`]).
    include: Vec<Glob>,
    exclude: Vec<Glob>,
    /// The same patterns' `…/**` globs, checked like the others when the config is read,
    /// and built into a set only to say which part is too large (see [`AllPatterns::new`]).
    beneath: Vec<Glob>,
    /// An include pattern matches every path (`*`, the built-in code rule's): the others
    /// need not be asked.
    everything: bool,
    /// The include list as written, for errors.
    written: String,
}

impl Patterns {
    /// `owner` names the config part in errors, e.g. `rule 'docs'`. Include entries starting
    /// with `!` count as excludes.
    pub(crate) fn compile(
        owner: &str,
        include: &[String],
        exclude: &[String],
    ) -> Result<Self, CheckpointError> {
        let mut patterns = Self {
            include: Vec::new(),
            exclude: Vec::new(),
            beneath: Vec::new(),
            everything: false,
            written: include.join(", "),
        };
        for pattern in include {
            if let Some(negated) = pattern.strip_prefix('!') {
                add(&mut patterns.exclude, &mut patterns.beneath, owner, negated)?;
            } else {
                add(&mut patterns.include, &mut patterns.beneath, owner, pattern)?;
                patterns.everything |= matches_every_path(pattern);
            }
        }
        for pattern in exclude {
            add(&mut patterns.exclude, &mut patterns.beneath, owner, pattern)?;
        }
        Ok(patterns)
    }

    /// True when no include pattern was given.
    pub(crate) fn is_empty(&self) -> bool {
        self.include.is_empty()
    }

    /// This part's patterns in a set of their own, as the set of all parts would hold them.
    fn set_alone(&self) -> Result<GlobSet, globset::Error> {
        let mut builder = GlobSetBuilder::new();
        for glob in self
            .include
            .iter()
            .chain(&self.exclude)
            .chain(&self.beneath)
        {
            builder.add(glob.clone());
        }
        builder.build()
    }
}

/// Whether `pattern`, as [`add`] reads it, matches every path: `*` (with its `*/**`, every
/// name and everything beneath one), `**` or `**/*`, anchored or not.
fn matches_every_path(pattern: &str) -> bool {
    let trimmed = pattern.trim();
    let body = trimmed.strip_prefix("./").unwrap_or(trimmed);
    matches!(
        body.trim_start_matches('/').trim_end_matches('/'),
        "*" | "**" | "**/*"
    )
}

/// Adds `pattern` with gitignore meaning: unanchored without `/`, and a match of a directory
/// covers everything below it. Its glob goes to `globs`, its `…/**` glob (the directory
/// case, which [`FolderGlobs`] matches instead) to `beneath`.
fn add(
    globs: &mut Vec<Glob>,
    beneath: &mut Vec<Glob>,
    owner: &str,
    pattern: &str,
) -> Result<(), CheckpointError> {
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
    let compile = |glob: &str| {
        GlobBuilder::new(glob)
            .literal_separator(true)
            .build()
            .map_err(|source| CheckpointError::InvalidGlob {
                owner: owner.to_owned(),
                pattern: pattern.to_owned(),
                source,
            })
    };
    globs.push(compile(&base)?);
    beneath.push(compile(&format!("{base}/**"))?);
    Ok(())
}

/// What a glob of the set belongs to: a part of the config (a rule, by index, or the test
/// trigger after the rules), as an include or an exclude.
#[derive(Debug, Clone, Copy)]
struct Owner {
    part: usize,
    exclude: bool,
}

/// Every part's patterns in one `GlobSet`, so a path is matched against all of them in one
/// pass (the rules' sets one by one cost several passes over every changed path).
#[derive(Debug, Clone)]
struct AllPatterns {
    set: GlobSet,
    owners: Vec<Owner>,
    /// Per part, whether it includes every path (its includes are then not in the set).
    everything: Vec<bool>,
}

impl AllPatterns {
    /// `parts` with their names for errors. A set too large to build is blamed on the part
    /// too large alone, as when each part had a set of its own.
    fn new(parts: &[(String, &Patterns)]) -> Result<Self, CheckpointError> {
        let mut builder = GlobSetBuilder::new();
        let mut owners = Vec::new();
        for (part, (_, patterns)) in parts.iter().enumerate() {
            let include: &[Glob] = if patterns.everything {
                &[]
            } else {
                &patterns.include
            };
            for (globs, exclude) in [(include, false), (&patterns.exclude[..], true)] {
                for glob in globs {
                    builder.add(glob.clone());
                    owners.push(Owner { part, exclude });
                }
            }
        }
        let set = builder.build().map_err(|all| {
            let (owner, patterns, source) = parts
                .iter()
                .find_map(|(owner, patterns)| {
                    patterns
                        .set_alone()
                        .err()
                        .map(|source| (owner.clone(), *patterns, source))
                })
                .map_or_else(
                    || ("rules and test trigger together".to_owned(), None, all),
                    |(owner, patterns, source)| (owner, Some(patterns), source),
                );
            let pattern = patterns.map(|p| p.written.clone()).unwrap_or_default();
            CheckpointError::InvalidGlob {
                owner,
                pattern,
                source,
            }
        })?;
        Ok(Self {
            set,
            owners,
            everything: parts.iter().map(|(_, p)| p.everything).collect(),
        })
    }

    /// Sets `matched[part]` for each part that matches `path` (an include and no exclude),
    /// the path itself or a folder above it. `hits` and `seen` are scratch space, kept
    /// between calls.
    fn mark<'p>(
        &self,
        path: &'p str,
        folders: &mut FolderGlobs<'p>,
        matched: &mut [bool],
        hits: &mut Vec<usize>,
        seen: &mut Vec<(bool, bool)>,
    ) {
        self.set.matches_candidate_into(&Candidate::new(path), hits);
        let above = folders.hits(&self.set, parent_of(path));
        seen.clear();
        seen.extend(self.everything.iter().map(|&all| (all, false)));
        for owner in hits.iter().chain(above).filter_map(|&i| self.owners.get(i)) {
            if let Some((included, excluded)) = seen.get_mut(owner.part) {
                if owner.exclude {
                    *excluded = true;
                } else {
                    *included = true;
                }
            }
        }
        for (flag, (included, excluded)) in matched.iter_mut().zip(seen.iter()) {
            *flag |= *included && !*excluded;
        }
    }
}

/// The rules and test trigger, compiled.
#[derive(Debug, Clone)]
pub(crate) struct Categorizer {
    rules: Vec<StopRule>,
    /// The rules' patterns, then the test trigger's when there is one.
    patterns: AllPatterns,
    /// `false`: every code-related file triggers the tests.
    test_trigger: bool,
}

impl Categorizer {
    pub(crate) fn new(config: &StopGateConfig) -> Result<Self, CheckpointError> {
        let rules = if config.rules.is_empty() {
            StopGateConfig::builtin_rules()
        } else {
            config.rules.clone()
        };
        let mut parts = Vec::with_capacity(rules.len() + 1);
        for rule in &rules {
            if rule.name.trim().is_empty() {
                return Err(CheckpointError::InvalidConfig(
                    "a rule has an empty 'name'; example: {\"name\": \"daemon code\", \
                     \"include\": [\"src/**/*.py\"], \"gated\": true}"
                        .into(),
                ));
            }
            let owner = format!("rule '{}'", rule.name);
            let patterns = Patterns::compile(&owner, &rule.include, &rule.exclude)?;
            parts.push((owner, patterns));
        }
        let test_trigger = match &config.tests {
            Some(tests) => {
                let p = Patterns::compile("tests.include", &tests.include, &[])?;
                (!p.is_empty()).then_some(p)
            }
            None => None,
        };
        let has_trigger = test_trigger.is_some();
        parts.extend(test_trigger.map(|p| ("tests.include".to_owned(), p)));
        let named: Vec<(String, &Patterns)> =
            parts.iter().map(|(owner, p)| (owner.clone(), p)).collect();
        Ok(Self {
            patterns: AllPatterns::new(&named)?,
            rules,
            test_trigger: has_trigger,
        })
    }

    pub(crate) fn rules(&self) -> impl Iterator<Item = &StopRule> {
        self.rules.iter()
    }

    /// Sorts `files` into categories. A rename counts under its old and its new path, so
    /// moving code out of a gated place is still gated.
    pub(crate) fn categorize(&self, files: Vec<ChangedFile>) -> Vec<CategorizedFile> {
        let classes = self.classify(&files);
        with_classes(files, classes)
    }

    /// What the rules say of each of `files`, in order (see [`Categorizer::categorize`]).
    pub(crate) fn classify(&self, files: &[ChangedFile]) -> Vec<Class> {
        let (mut hits, mut seen) = (Vec::new(), Vec::new());
        let mut folders = FolderGlobs::default();
        let mut matched = vec![false; self.patterns.everything.len()];
        files
            .iter()
            .map(|file| {
                matched.fill(false);
                let paths = std::iter::once(file.path.as_str()).chain(file.renamed_from.as_deref());
                for path in paths {
                    self.patterns
                        .mark(path, &mut folders, &mut matched, &mut hits, &mut seen);
                }
                let mut categories = Vec::new();
                let mut gated = false;
                let mut instructed = false;
                for (rule, _) in self.rules.iter().zip(&matched).filter(|(_, hit)| **hit) {
                    categories.push(rule.name.clone());
                    gated |= rule.gated;
                    instructed |= rule.instruction.is_some();
                }
                let code_by_rules = gated || instructed;
                let triggers_tests = if self.test_trigger {
                    matched.get(self.rules.len()).copied().unwrap_or(false)
                } else {
                    code_by_rules
                };
                Class {
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

    #[test]
    fn a_rule_of_every_path_still_has_its_exclusions() {
        for every in ["*", "**", "**/*", "/*", "./*", "*/"] {
            let config = StopGateConfig {
                rules: vec![StopRule {
                    name: "all".into(),
                    include: vec![every.into(), "!gen/".into()],
                    exclude: vec!["*.lock".into()],
                    instruction: None,
                    gated: true,
                }],
                ..StopGateConfig::default()
            };
            for path in ["a", ".hidden", "src/deep/x.rs", "a b/c d", "x/gen.rs"] {
                assert!(categorize(&config, path).gated, "{every}: {path}");
            }
            for path in ["gen/x.rs", "Cargo.lock", "sub/yarn.lock"] {
                assert!(!categorize(&config, path).gated, "{every}: {path}");
            }
        }
        assert!(!matches_every_path("*.rs") && !matches_every_path("src/*"));
    }

    /// Whether `path` is matched by `include` and not `exclude` the way each pattern was
    /// first matched: its glob and its `…/**` glob, both tried on the whole path.
    fn matched_by_whole_paths(include: &[&str], exclude: &[&str], path: &str) -> bool {
        let set = |patterns: &[&str]| {
            let mut builder = GlobSetBuilder::new();
            for pattern in patterns {
                let trimmed = pattern.trim();
                let trimmed = trimmed.strip_prefix("./").unwrap_or(trimmed);
                let anchored = trimmed.starts_with('/');
                let body = trimmed.trim_start_matches('/').trim_end_matches('/');
                let base = if anchored || body.contains('/') {
                    body.to_owned()
                } else {
                    format!("**/{body}")
                };
                for glob in [base.clone(), format!("{base}/**")] {
                    builder.add(
                        GlobBuilder::new(&glob)
                            .literal_separator(true)
                            .build()
                            .unwrap(),
                    );
                }
            }
            builder.build().unwrap()
        };
        set(include).is_match(path) && !set(exclude).is_match(path)
    }

    #[test]
    fn folders_matched_once_decide_as_whole_paths_did() {
        let patterns = [
            "*.md",
            "docs/",
            "/build",
            "src/**/*.py",
            "**/gen",
            "a/*/c",
            "*",
            "tests/unit/",
            ".context-pilot/config.json",
            "x.y/",
            "**",
        ];
        let paths = [
            "README.md",
            "docs/a.txt",
            "sub/docs/deep/b.rs",
            "build/out.o",
            "x/build/y",
            "src/app/m.py",
            "src/m.py",
            "lib/gen/x.rs",
            "gen",
            "a/b/c",
            "a/b/c/d.rs",
            "a/c",
            "tests/unit/test_x.py",
            "tests/unitx/y.py",
            ".context-pilot/config.json",
            "p/.context-pilot/config.json/x",
            "x.y/z",
            "w/x.y/z.md",
            "plain",
        ];
        for (i, include) in patterns.iter().enumerate() {
            for exclude in patterns.iter().skip(i % 3).step_by(3) {
                let config = StopGateConfig {
                    rules: vec![StopRule {
                        name: "r".into(),
                        include: vec![(*include).into()],
                        exclude: vec![(*exclude).into()],
                        instruction: None,
                        gated: true,
                    }],
                    ..StopGateConfig::default()
                };
                let c = Categorizer::new(&config).unwrap();
                // In order and reversed, so no path leans on the folder of the one before.
                for list in [paths.to_vec(), paths.iter().rev().copied().collect()] {
                    let got = c.categorize(list.iter().map(|p| file(p)).collect());
                    for (path, got) in list.iter().zip(got) {
                        assert_eq!(
                            got.gated,
                            matched_by_whole_paths(&[include], &[exclude], path),
                            "include {include}, exclude {exclude}: {path}"
                        );
                    }
                }
            }
        }
    }
}
