//! Which callbacks a set of changed paths triggers: gitignore-style patterns, one `GlobSet`.
//!
//! Rules follow `.gitignore`:
//! - a rule without `/` (other than a trailing one) matches at any depth: `*.rs` matches
//!   `a/b/c.rs`;
//! - a rule with a `/` elsewhere is anchored at the project root (`/` in front is optional);
//! - a trailing `/` matches directories only, i.e. every file beneath them;
//! - a rule that matches a directory matches every file beneath it;
//! - `!rule` excludes; when several rules match, the last one wins.
//!
//! Every rule of every callback goes into one compiled [`GlobSet`], built once per callback
//! set (the module rebuilds it only when `config.json` changed), so matching a path costs one
//! set lookup per path component however many callbacks there are.

use std::collections::HashMap;

use globset::{Candidate, GlobBuilder, GlobSet, GlobSetBuilder};

use crate::model::CallbackId;

/// A rule that does not compile, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    #[error(
        "'pattern' is empty; give at least one rule, example: `*.rs` or [\"src/**/*.ts\", \"!src/gen/**\"]"
    )]
    NoRules,
    #[error("'pattern' rule {index} is empty; example: `*.rs`")]
    EmptyRule { index: usize },
    #[error("'pattern' `{rule}` is not a valid glob: {reason}; example: `src/**/*.rs`")]
    InvalidGlob { rule: String, reason: String },
    #[error(
        "'pattern' has only exclusions ({rules}), so it can never match; add a positive rule first, example: [\"*.rs\", \"!target/\"]"
    )]
    OnlyExclusions { rules: String },
}

/// One parsed rule.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rule {
    glob: String,
    negated: bool,
    dir_only: bool,
}

fn parse_rule(index: usize, raw: &str) -> Result<Rule, PatternError> {
    let text = raw.trim();
    let (negated, body) = match text.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (dir_only, body) = match body.strip_suffix('/') {
        Some(rest) => (true, rest),
        None => (false, body),
    };
    if body.is_empty() || body == "/" {
        return Err(PatternError::EmptyRule { index });
    }
    let glob = if let Some(anchored) = body.strip_prefix('/') {
        anchored.to_owned()
    } else if body.contains('/') {
        body.to_owned()
    } else {
        format!("**/{body}")
    };
    Ok(Rule {
        glob,
        negated,
        dir_only,
    })
}

fn build_glob(rule: &Rule, raw: &str) -> Result<globset::Glob, PatternError> {
    GlobBuilder::new(&rule.glob)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|e| PatternError::InvalidGlob {
            rule: raw.trim().to_owned(),
            reason: e.kind().to_string(),
        })
}

/// Checks a callback's pattern list: non-empty, every rule compiles, at least one positive.
pub fn validate_patterns(patterns: &[String]) -> Result<(), PatternError> {
    if patterns.is_empty() {
        return Err(PatternError::NoRules);
    }
    let mut any_positive = false;
    for (index, raw) in patterns.iter().enumerate() {
        let rule = parse_rule(index, raw)?;
        build_glob(&rule, raw)?;
        any_positive |= !rule.negated;
    }
    if any_positive {
        Ok(())
    } else {
        Err(PatternError::OnlyExclusions {
            rules: patterns.join(", "),
        })
    }
}

/// What a glob in the set belongs to.
#[derive(Debug, Clone, Copy)]
struct Slot {
    /// Index into `Matcher::callbacks`.
    callback: usize,
    negated: bool,
    dir_only: bool,
}

/// Compiled patterns of a set of callbacks.
#[derive(Debug, Clone)]
pub struct Matcher {
    set: GlobSet,
    slots: Vec<Slot>,
    callbacks: Vec<CallbackId>,
    /// Whether any rule is directory-only (`dir/`), so a file's own hits need filtering.
    any_dir_only: bool,
    /// Callbacks whose patterns did not compile (a hand-edited config), with the reason.
    invalid: Vec<(CallbackId, PatternError)>,
}

impl Default for Matcher {
    fn default() -> Self {
        Self {
            set: GlobSet::empty(),
            slots: Vec::new(),
            callbacks: Vec::new(),
            any_dir_only: false,
            invalid: Vec::new(),
        }
    }
}

impl Matcher {
    /// Compiles every callback's rules into one set. A callback whose rules do not compile is
    /// left out and reported by [`Matcher::invalid`]; the others still work.
    pub fn new<'a>(callbacks: impl IntoIterator<Item = (CallbackId, &'a [String])>) -> Self {
        let mut builder = GlobSetBuilder::new();
        let mut slots = Vec::new();
        let mut ids = Vec::new();
        let mut invalid = Vec::new();
        for (id, patterns) in callbacks {
            let compiled: Result<Vec<_>, PatternError> =
                validate_patterns(patterns).and_then(|()| {
                    patterns
                        .iter()
                        .enumerate()
                        .map(|(i, raw)| {
                            let rule = parse_rule(i, raw)?;
                            Ok((build_glob(&rule, raw)?, rule))
                        })
                        .collect()
                });
            match compiled {
                Ok(globs) => {
                    let callback = ids.len();
                    ids.push(id);
                    // Rules go in in order, so a later rule always has a higher index.
                    for (glob, rule) in globs {
                        builder.add(glob);
                        slots.push(Slot {
                            callback,
                            negated: rule.negated,
                            dir_only: rule.dir_only,
                        });
                    }
                }
                Err(e) => invalid.push((id, e)),
            }
        }
        match builder.build() {
            Ok(set) => Self {
                set,
                any_dir_only: slots.iter().any(|s| s.dir_only),
                slots,
                callbacks: ids,
                invalid,
            },
            // Every glob compiled on its own, so this is a resource limit of the regex engine.
            Err(e) => Self {
                invalid: ids
                    .into_iter()
                    .map(|id| {
                        (
                            id,
                            PatternError::InvalidGlob {
                                rule: "(all rules)".into(),
                                reason: e.to_string(),
                            },
                        )
                    })
                    .chain(invalid)
                    .collect(),
                ..Self::default()
            },
        }
    }

    /// Callbacks left out because their patterns do not compile.
    pub fn invalid(&self) -> &[(CallbackId, PatternError)] {
        &self.invalid
    }

    /// The callbacks `path` (relative, `/`-separated) triggers.
    pub fn matches(&self, path: &str) -> Vec<CallbackId> {
        self.match_all([path]).pop().unwrap_or_default()
    }

    /// For each path, the callbacks it triggers (same order as `paths`). The rules matching
    /// a directory and its ancestors are computed once per directory, so many files in one
    /// folder cost little more than one.
    pub fn match_all<'p>(&self, paths: impl IntoIterator<Item = &'p str>) -> Vec<Vec<CallbackId>> {
        let paths: Vec<&str> = paths.into_iter().collect();
        if self.callbacks.is_empty() {
            return vec![Vec::new(); paths.len()];
        }
        self.match_chunk(&paths)
    }

    fn match_chunk(&self, paths: &[&str]) -> Vec<Vec<CallbackId>> {
        // Per path, beyond the set lookup itself, only what the rules need: the parent's
        // ancestor hits (computed once per directory, found again with a fast hash) and one
        // merge of two sorted lists, without allocating.
        let mut dirs: HashMap<&str, Vec<usize>, foldhash::fast::RandomState> = HashMap::default();
        let mut hits = Vec::new();
        paths
            .iter()
            .map(|path| {
                let mut out = Vec::new();
                let path = strip_dot_slash(path);
                let parent = path.rfind('/').map_or("", |i| &path[..i]);
                let dir_hits = dirs
                    .entry(parent)
                    .or_insert_with(|| self.ancestor_hits(parent));
                self.set
                    .matches_candidate_into(&Candidate::new(path), &mut hits);
                if self.any_dir_only {
                    hits.retain(|&i| self.slots.get(i).is_some_and(|s| !s.dir_only));
                }
                if !dir_hits.is_empty() || !hits.is_empty() {
                    self.decide(dir_hits, &hits, &mut out);
                }
                out
            })
            .collect()
    }

    /// Rules matching `dir` or any directory above it, sorted, without duplicates.
    fn ancestor_hits(&self, dir: &str) -> Vec<usize> {
        let mut all = Vec::new();
        if dir.is_empty() {
            return all;
        }
        let ends = dir
            .match_indices('/')
            .map(|(i, _)| i)
            .chain(std::iter::once(dir.len()));
        for end in ends {
            let ancestor = &dir[..end];
            if !ancestor.is_empty() {
                all.extend(self.set.matches_candidate(&Candidate::new(ancestor)));
            }
        }
        all.sort_unstable();
        all.dedup();
        all
    }

    /// Picks, per callback, the last matching rule among `a` and `b` (both sorted); a
    /// callback whose last matching rule is positive is triggered.
    ///
    /// Glob indices grow with (callback, rule order), so walking the merged indices in order
    /// visits each callback's rules contiguously, latest last.
    fn decide(&self, dir_hits: &[usize], path_hits: &[usize], out: &mut Vec<CallbackId>) {
        let mut current: Option<(usize, bool)> = None;
        let flush = |state: Option<(usize, bool)>, out: &mut Vec<CallbackId>| {
            if let Some((cb, false)) = state
                && let Some(id) = self.callbacks.get(cb)
            {
                out.push(*id);
            }
        };
        for index in merge_sorted(dir_hits, path_hits) {
            let Some(slot) = self.slots.get(index) else {
                continue;
            };
            if current.is_some_and(|(cb, _)| cb != slot.callback) {
                flush(current, out);
            }
            current = Some((slot.callback, slot.negated));
        }
        flush(current, out);
    }
}

/// `path` without any leading `./`.
fn strip_dot_slash(mut path: &str) -> &str {
    while let Some(rest) = path.strip_prefix("./") {
        path = rest;
    }
    path
}

/// The union of two sorted, duplicate-free lists, in order, without duplicates and without
/// allocating.
fn merge_sorted<'a>(left: &'a [usize], right: &'a [usize]) -> impl Iterator<Item = usize> + 'a {
    let (mut at_left, mut at_right) = (0, 0);
    std::iter::from_fn(move || {
        let next = match (left.get(at_left), right.get(at_right)) {
            (Some(&l), Some(&r)) => l.min(r),
            (Some(&l), None) => l,
            (None, Some(&r)) => r,
            (None, None) => return None,
        };
        // Step past `next` in both lists (it may be in each once).
        at_left += usize::from(left.get(at_left) == Some(&next));
        at_right += usize::from(right.get(at_right) == Some(&next));
        Some(next)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matcher(patterns: &[&str]) -> Matcher {
        let p: Vec<String> = patterns.iter().map(|s| (*s).to_owned()).collect();
        Matcher::new([(CallbackId(1), p.as_slice())])
    }

    fn hit(m: &Matcher, path: &str) -> bool {
        m.matches(path) == vec![CallbackId(1)]
    }

    #[test]
    fn plain_names_match_at_any_depth() {
        let m = matcher(&["*.rs"]);
        assert!(hit(&m, "main.rs"));
        assert!(hit(&m, "a/b/c.rs"));
        assert!(!hit(&m, "a/b/c.rsx"));
        assert!(!hit(&m, "README.md"));
    }

    #[test]
    fn slashes_anchor_at_the_root() {
        let m = matcher(&["src/*.ts"]);
        assert!(hit(&m, "src/a.ts"));
        assert!(!hit(&m, "src/deep/a.ts"), "* does not cross /");
        assert!(!hit(&m, "lib/src/a.ts"));
        let m2 = matcher(&["/Cargo.toml"]);
        assert!(hit(&m2, "Cargo.toml") && !hit(&m2, "crates/x/Cargo.toml"));
        let deep = matcher(&["src/**/*.ts"]);
        assert!(hit(&deep, "src/a.ts") && hit(&deep, "src/x/y/a.ts"));
    }

    #[test]
    fn directories_match_everything_beneath() {
        let m = matcher(&["docs/"]);
        assert!(hit(&m, "docs/a.md"));
        assert!(hit(&m, "x/docs/deep/b.md"));
        assert!(
            !hit(&m, "docs"),
            "a trailing slash only matches directories"
        );
        let m = matcher(&["seeds"]);
        assert!(hit(&m, "seeds/a.yaml") && hit(&m, "seeds"));
    }

    #[test]
    fn exclusions_and_last_rule_wins() {
        let m = matcher(&["*.rs", "!target/", "!gen/*.rs", "gen/keep.rs"]);
        assert!(hit(&m, "src/a.rs"));
        assert!(!hit(&m, "target/debug/build.rs"));
        assert!(!hit(&m, "gen/x.rs"));
        assert!(hit(&m, "gen/keep.rs"));
    }

    #[test]
    fn bad_patterns_are_explained_with_an_example() {
        let e = validate_patterns(&["src/[".into()])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("'pattern' `src/[` is not a valid glob: "),
            "{e}"
        );
        assert!(e.ends_with("example: `src/**/*.rs`"), "{e}");
        assert_eq!(validate_patterns(&[]).unwrap_err(), PatternError::NoRules);
        assert_eq!(
            validate_patterns(&["*.rs".into(), "  ".into()]).unwrap_err(),
            PatternError::EmptyRule { index: 1 }
        );
        assert!(matches!(
            validate_patterns(&["!*.rs".into()]).unwrap_err(),
            PatternError::OnlyExclusions { .. }
        ));
    }

    #[test]
    fn merging_sorted_lists_keeps_order_and_drops_duplicates() {
        let merged: Vec<usize> = merge_sorted(&[1, 4, 6], &[2, 4, 7, 9]).collect();
        assert_eq!(merged, vec![1, 2, 4, 6, 7, 9]);
        assert_eq!(merge_sorted(&[], &[3]).collect::<Vec<_>>(), vec![3]);
        assert_eq!(merge_sorted(&[3], &[]).collect::<Vec<_>>(), vec![3]);
        assert_eq!(strip_dot_slash("././a/b.rs"), "a/b.rs");
    }

    #[test]
    fn paths_of_one_folder_in_any_order_get_their_folders_rules() {
        let m = matcher(&["docs/", "!docs/private/"]);
        let got = m.match_all([
            "docs/a.md",
            "x.md",
            "docs/private/b.md",
            "docs/c.md",
            "./docs/d.md",
        ]);
        let hit: Vec<bool> = got.iter().map(|ids| !ids.is_empty()).collect();
        assert_eq!(hit, vec![true, false, false, true, true]);
    }

    #[test]
    fn many_callbacks_share_one_set() {
        let rs = vec!["*.rs".to_owned()];
        let md = vec!["docs/**".to_owned(), "!docs/private/**".to_owned()];
        let bad = vec!["[".to_owned()];
        let m = Matcher::new([
            (CallbackId(1), rs.as_slice()),
            (CallbackId(2), md.as_slice()),
            (CallbackId(3), bad.as_slice()),
        ]);
        assert_eq!(m.invalid().len(), 1);
        let got = m.match_all(["docs/a.rs", "docs/private/b.md", "x.md", "docs/c.md"]);
        assert_eq!(
            got,
            vec![
                vec![CallbackId(1), CallbackId(2)],
                vec![],
                vec![],
                vec![CallbackId(2)]
            ]
        );
    }
}
