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
//! set lookup however many callbacks there are, plus one for each folder the first time a
//! batch meets it. The answer ([`Matches`]) is one list for all paths, not one per path.

use globset::{Candidate, GlobBuilder, GlobSet, GlobSetBuilder};

use crate::model::CallbackId;
use cp_base::folder_globs::{FolderGlobs, parent_of};

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
        self.match_all([path]).get(0).to_vec()
    }

    /// For each path, the callbacks it triggers (same order as `paths`). Each folder is
    /// looked up once, so many files in one folder cost little more than one.
    pub fn match_all<'p>(&self, paths: impl IntoIterator<Item = &'p str>) -> Matches {
        let paths = paths.into_iter();
        let mut matches = Matches::with_capacity(paths.size_hint().0);
        if self.callbacks.is_empty() {
            for _ in paths {
                matches.end_path();
            }
            return matches;
        }
        // Per path, beyond the set lookup itself, only what the rules need: the rules that
        // match its folder or one above (looked up once per folder) and one walk over the
        // hits. Nothing is allocated per path: every path's callbacks go into one list.
        let mut folders = FolderGlobs::default();
        let mut hits = Vec::new();
        for path in paths {
            let path = strip_dot_slash(path);
            let above = folders.hits(&self.set, parent_of(path));
            self.set
                .matches_candidate_into(&Candidate::new(path), &mut hits);
            if self.any_dir_only {
                hits.retain(|&i| self.slots.get(i).is_some_and(|s| !s.dir_only));
            }
            if above.is_empty() {
                self.decide(hits.iter().copied(), &mut matches.ids);
            } else {
                self.decide(merge_sorted(above, &hits), &mut matches.ids);
            }
            matches.end_path();
        }
        matches
    }

    /// Picks, per callback, the last matching rule among `indices` (sorted: the path's own
    /// hits merged with its folders'); a callback whose last matching rule is positive is
    /// triggered, into `out`.
    ///
    /// Glob indices grow with (callback, rule order), so walking the indices in order visits
    /// each callback's rules contiguously, latest last.
    fn decide(&self, indices: impl Iterator<Item = usize>, out: &mut Vec<CallbackId>) {
        let mut current: Option<(usize, bool)> = None;
        let flush = |state: Option<(usize, bool)>, out: &mut Vec<CallbackId>| {
            if let Some((cb, false)) = state
                && let Some(id) = self.callbacks.get(cb)
            {
                out.push(*id);
            }
        };
        for index in indices {
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

/// For each of a list of paths, the callbacks it triggers ([`Matcher::match_all`]): one list
/// of callbacks for all paths, and where each path's part of it ends.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Matches {
    ids: Vec<CallbackId>,
    /// Per path, the end of its callbacks in `ids` (its start is the path before's end).
    ends: Vec<usize>,
}

impl Matches {
    fn with_capacity(paths: usize) -> Self {
        Self {
            ids: Vec::new(),
            ends: Vec::with_capacity(paths),
        }
    }

    /// Closes the current path's callbacks.
    fn end_path(&mut self) {
        self.ends.push(self.ids.len());
    }

    /// How many paths.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are no paths.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The callbacks the path at `index` triggers (none for an index past the end).
    pub fn get(&self, index: usize) -> &[CallbackId] {
        let start = index
            .checked_sub(1)
            .and_then(|i| self.ends.get(i))
            .copied()
            .unwrap_or(0);
        let end = self.ends.get(index).copied().unwrap_or(start);
        self.ids.get(start..end).unwrap_or_default()
    }

    /// Each path's callbacks, in the order of the paths.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[CallbackId]> + '_ {
        (0..self.len()).map(|i| self.get(i))
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
        assert_eq!(got.len(), 4);
        assert_eq!(
            got.iter().map(<[CallbackId]>::to_vec).collect::<Vec<_>>(),
            vec![
                vec![CallbackId(1), CallbackId(2)],
                vec![],
                vec![],
                vec![CallbackId(2)]
            ]
        );
    }

    /// What a callback's rules decide for `path`, the slow way: each rule on its own, on the
    /// path and on every folder above it, the last rule that applies winning.
    fn triggered_by_rules(rules: &[String], path: &str) -> bool {
        let path = strip_dot_slash(path);
        let folders: Vec<&str> = path
            .match_indices('/')
            .map(|(i, _)| &path[..i])
            .filter(|f| !f.is_empty())
            .collect();
        let mut triggered = false;
        for (i, raw) in rules.iter().enumerate() {
            let rule = parse_rule(i, raw).unwrap();
            let glob = build_glob(&rule, raw).unwrap().compile_matcher();
            let applies =
                (!rule.dir_only && glob.is_match(path)) || folders.iter().any(|f| glob.is_match(f));
            if applies {
                triggered = !rule.negated;
            }
        }
        triggered
    }

    #[test]
    fn one_set_for_many_callbacks_decides_as_each_rule_alone() {
        let rules = [
            "*.rs",
            "!target/",
            "src/",
            "!src/gen/**",
            "docs/*.md",
            "/Cargo.toml",
            "**/tests/**",
            "!*.lock",
            "a/b",
            "b",
            "!b/",
            "*",
            "!docs/",
            "src/**/*.rs",
        ];
        let paths = [
            "a.rs",
            "src/a.rs",
            "src/gen/x.rs",
            "src/gen/deep/y.rs",
            "target/debug/a.rs",
            "x/target/y.md",
            "docs/a.md",
            "docs/x/a.md",
            "Cargo.toml",
            "c/Cargo.toml",
            "a/b",
            "a/b/c.rs",
            "x/a/b/c",
            "b",
            "b/c",
            "tests/x.py",
            "q/tests/r/s.txt",
            "Cargo.lock",
            "./src/main.rs",
            "src.rs/x",
            "target",
            "src/target/z.rs",
            "docs",
        ];
        // Every ordered pair and every third rule after it: hundreds of callbacks in one set.
        let mut defs: Vec<Vec<String>> = Vec::new();
        for a in rules {
            for b in rules {
                defs.push(vec![a.to_owned(), b.to_owned()]);
                for c in rules.iter().step_by(3) {
                    defs.push(vec![a.to_owned(), b.to_owned(), (*c).to_owned()]);
                }
            }
        }
        let valid: Vec<(CallbackId, &Vec<String>)> = defs
            .iter()
            .filter(|d| validate_patterns(d).is_ok())
            .zip(1..)
            .map(|(d, id)| (CallbackId(id), d))
            .collect();
        let m = Matcher::new(valid.iter().map(|(id, d)| (*id, d.as_slice())));
        assert!(m.invalid().is_empty());
        // In order and shuffled, so no path leans on the folder of the path before.
        let mut shuffled = paths.to_vec();
        shuffled.reverse();
        shuffled.rotate_left(7);
        for list in [paths.to_vec(), shuffled] {
            let got = m.match_all(list.iter().copied());
            assert_eq!(got.len(), list.len());
            for (path, ids) in list.iter().zip(got.iter()) {
                let want: Vec<CallbackId> = valid
                    .iter()
                    .filter(|(_, d)| triggered_by_rules(d, path))
                    .map(|(id, _)| *id)
                    .collect();
                assert_eq!(ids, want.as_slice(), "{path}");
            }
        }
    }

    #[test]
    fn matches_hands_out_each_paths_part() {
        let m = matcher(&["*.rs"]);
        let got = m.match_all(["a.rs", "b.md", "c.rs"]);
        assert_eq!(got.len(), 3);
        assert!(!got.is_empty());
        assert_eq!(got.get(0), [CallbackId(1)]);
        assert!(got.get(1).is_empty());
        assert_eq!(got.get(2), [CallbackId(1)]);
        assert!(got.get(3).is_empty(), "past the end: nothing, no panic");
        let none = Matcher::default().match_all(["a.rs", "b.rs"]);
        assert_eq!(none.len(), 2);
        assert!(none.iter().all(<[CallbackId]>::is_empty));
    }
}
