//! A project's last trust verdict, kept for as long as every file it was read from is as it
//! was: `config.json`, the trust file and the scripts the grant hashes.
//!
//! Deciding trust takes the trust store's lock and reads and hashes all of those; a callback
//! fires after every edit, so that would be paid on every edit although nothing changed.
//! With the verdict kept, an unchanged project costs one `stat` per file and no lock.
//!
//! Why skipping the lock is safe: the stamps are taken under the lock *before* the files are
//! read, so a verdict is only ever reused for exactly the file versions it was computed
//! from. A writer that changes the config and then re-records its grant (the race the lock
//! exists for) changes the config's stamp first, which sends the next check back to the
//! locked path.

use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

use crate::store::Stamp;
use crate::trust::TrustState;

/// The files a verdict was read from, each with its stamp (`None`: it did not exist).
pub(crate) type Inputs = Vec<(PathBuf, Option<Stamp>)>;

/// Takes the stamps of `paths` now.
pub(crate) fn stamps(paths: impl IntoIterator<Item = PathBuf>) -> Inputs {
    paths
        .into_iter()
        .map(|path| {
            let stamp = Stamp::at(&path);
            (path, stamp)
        })
        .collect()
}

/// The last verdict, with the inputs it was computed from.
#[derive(Debug, Default)]
pub(crate) struct TrustCache {
    last: Mutex<Option<(Inputs, TrustState)>>,
}

impl TrustCache {
    /// The kept verdict, if every one of its input files is unchanged.
    pub(crate) fn get(&self) -> Option<TrustState> {
        let last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        let (inputs, state) = last.as_ref()?;
        inputs
            .iter()
            .all(|(path, stamp)| Stamp::at(path) == *stamp)
            .then(|| state.clone())
    }

    /// Keeps `state`, computed from the files as `inputs` stamped them before they were read.
    /// A verdict that could not be decided (`Unknown`) is not kept: its cause may pass.
    pub(crate) fn put(&self, inputs: Inputs, state: &TrustState) {
        let kept = (!matches!(state, TrustState::Unknown(_))).then(|| (inputs, state.clone()));
        *self.last.lock().unwrap_or_else(PoisonError::into_inner) = kept;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_lasts_until_an_input_changes() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("missing"));
        std::fs::write(&a, "1").unwrap();
        let cache = TrustCache::default();
        assert_eq!(cache.get(), None);
        cache.put(stamps([a.clone(), b.clone()]), &TrustState::Trusted);
        assert_eq!(cache.get(), Some(TrustState::Trusted));
        // Replaced (as every write of ours does: a new inode), or a file appearing.
        let tmp = dir.path().join("a.tmp");
        std::fs::write(&tmp, "2").unwrap();
        std::fs::rename(&tmp, &a).unwrap();
        assert_eq!(cache.get(), None);
        cache.put(stamps([a.clone(), b.clone()]), &TrustState::Trusted);
        std::fs::write(&b, "").unwrap();
        assert_eq!(cache.get(), None);
    }

    #[test]
    fn an_undecided_verdict_is_not_kept() {
        let cache = TrustCache::default();
        cache.put(Vec::new(), &TrustState::Unknown("no home".into()));
        assert_eq!(cache.get(), None);
    }
}
