//! The globs of a set that match each folder of many paths, or a folder above it: with
//! gitignore-like rules a pattern that matches a folder covers everything beneath it. Each
//! folder is matched once, its own hits added to its parent's, however many of its files are
//! asked about. The callbacks' matcher and the stop gate's categories both ask this per path.

use std::collections::HashMap;

use globset::{Candidate, GlobSet};

/// The globs matching each folder met so far or one above it, sorted, without repeats.
pub struct FolderGlobs<'p> {
    /// Where each folder's hits are in `hits`; the root (`""`) is always there, with none.
    index: HashMap<&'p str, usize, foldhash::fast::RandomState>,
    hits: Vec<Vec<usize>>,
    /// The folder asked for last: the files of one folder usually come one after another.
    last: Option<(&'p str, usize)>,
}

impl Default for FolderGlobs<'_> {
    fn default() -> Self {
        let mut index = HashMap::default();
        index.insert("", 0);
        Self {
            index,
            hits: vec![Vec::new()],
            last: None,
        }
    }
}

impl<'p> FolderGlobs<'p> {
    /// The indices of the globs of `set` matching `dir` (relative, `/`-separated, `""` for the
    /// top) or a folder above it. Give the same `set` every time.
    pub fn hits(&mut self, set: &GlobSet, dir: &'p str) -> &[usize] {
        let at = match self.last {
            Some((last, at)) if last == dir => at,
            _ => {
                let at = self.find_or_add(set, dir);
                self.last = Some((dir, at));
                at
            }
        };
        self.hits.get(at).map_or(&[], Vec::as_slice)
    }

    fn find_or_add(&mut self, set: &GlobSet, dir: &'p str) -> usize {
        if let Some(&at) = self.index.get(dir) {
            return at;
        }
        // Up to the nearest folder already known (the root at worst), then down again.
        let mut missing = vec![dir];
        let mut at = loop {
            let up = parent_of(missing.last().copied().unwrap_or_default());
            match self.index.get(up) {
                Some(&at) => break at,
                None => missing.push(up),
            }
        };
        let mut own = Vec::new();
        while let Some(folder) = missing.pop() {
            set.matches_candidate_into(&Candidate::new(folder), &mut own);
            let mut all = self.hits.get(at).cloned().unwrap_or_default();
            all.extend_from_slice(&own);
            all.sort_unstable();
            all.dedup();
            self.hits.push(all);
            at = self.hits.len() - 1;
            self.index.insert(folder, at);
        }
        at
    }
}

/// The folder holding `path` (`""` at the top): what comes before its last `/`.
pub fn parent_of(path: &str) -> &str {
    // The name is short, so a byte walk from the end beats a general search.
    path.as_bytes()
        .iter()
        .rposition(|&b| b == b'/')
        .and_then(|i| path.get(..i))
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use globset::{Glob, GlobSetBuilder};

    use super::*;

    fn set(globs: &[&str]) -> GlobSet {
        let mut builder = GlobSetBuilder::new();
        for glob in globs {
            builder.add(Glob::new(glob).unwrap());
        }
        builder.build().unwrap()
    }

    #[test]
    fn a_folder_has_its_own_hits_and_those_of_every_folder_above() {
        let set = set(&["src", "src/gen", "**/gen", "docs"]);
        let mut folders = FolderGlobs::default();
        assert_eq!(folders.hits(&set, ""), &[] as &[usize]);
        assert_eq!(folders.hits(&set, "src/gen/deep"), &[0, 1, 2]);
        assert_eq!(folders.hits(&set, "src"), &[0]);
        assert_eq!(folders.hits(&set, "lib/gen"), &[2]);
        assert_eq!(folders.hits(&set, "docs/a/b"), &[3]);
        assert_eq!(folders.hits(&set, "tests"), &[] as &[usize]);
        // Asked again, known already: the same answers.
        assert_eq!(folders.hits(&set, "src/gen/deep"), &[0, 1, 2]);
    }

    #[test]
    fn the_parent_is_what_comes_before_the_last_slash() {
        assert_eq!(parent_of("a/b/c.rs"), "a/b");
        assert_eq!(parent_of("c.rs"), "");
        assert_eq!(parent_of(""), "");
        assert_eq!(parent_of("a/"), "a");
    }
}
