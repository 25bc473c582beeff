//! Content fingerprints of a run's files, taken before and after its script, so the report
//! can tell the agent which files the script rewrote (a formatter) and must be re-read.

use std::collections::BTreeMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::Path;

/// Content fingerprint per file; `None` for a file that could not be read.
pub(super) type Prints = BTreeMap<String, Option<u64>>;

/// The fingerprints of `files` (relative to `root`) as they are now.
pub(super) fn snapshot(root: &Path, files: &[String]) -> Prints {
    files
        .iter()
        .map(|f| {
            let print = std::fs::read(root.join(f)).ok().map(|bytes| {
                let mut h = DefaultHasher::new();
                bytes.hash(&mut h);
                h.finish()
            });
            (f.clone(), print)
        })
        .collect()
}

/// The files of `before` whose content is not what it was then (`files` read again now).
pub(super) fn modified_since(root: &Path, files: &[String], before: &Prints) -> Vec<String> {
    let after = snapshot(root, files);
    before
        .iter()
        .filter(|(file, print)| after.get(*file) != Some(*print))
        .map(|(file, _)| file.clone())
        .collect()
}
