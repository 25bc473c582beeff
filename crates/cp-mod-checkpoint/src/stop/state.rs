//! Per-worker checkpoint state: the fingerprint of the working tree the agent was last told
//! about, the last test run, the consecutive blocks of each agent session, and the last
//! report (for the panel).
//!
//! Kept in `.context-pilot/state/<worker>/checkpoint.json`, which git ignores, written
//! atomically: each hook call is a new process, so this file is the gate's memory.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use cp_base::write_atomic;
use serde::{Deserialize, Serialize};

use super::categorize::CategorizedFile;
use super::changes::ChangedFile;
use super::report::{CheckpointReport, TestOutcome};

/// Files larger than this are fingerprinted by size and mtime instead of content.
const HASH_LIMIT: u64 = 16 * 1024 * 1024;

/// Sessions remembered at most; the oldest are forgotten first.
const MAX_SESSIONS: usize = 64;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct CheckpointState {
    /// Fingerprint of the changed set when the worker last stopped.
    pub(crate) fingerprint: String,
    pub(crate) last_report: Option<CheckpointReport>,
    /// The last test run and the fingerprint of the tree it ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) last_tests: Option<LastTests>,
    /// Consecutive blocks by agent session id (Claude Code's and Gemini CLI's `session_id`,
    /// or the TUI's turn).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) sessions: BTreeMap<String, SessionBlocks>,
}

/// A test run, remembered so a failure is not forgotten on the next stop.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct LastTests {
    pub(crate) fingerprint: String,
    pub(crate) outcome: TestOutcome,
}

/// How many stops of one session were blocked in a row.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct SessionBlocks {
    pub(crate) blocks: u32,
    /// RFC 3339 time of the last block; used to forget old sessions.
    pub(crate) at: String,
}

impl CheckpointState {
    /// Blocks in a row so far for `session`.
    pub(crate) fn blocks(&self, session: &str) -> u32 {
        self.sessions.get(session).map_or(0, |s| s.blocks)
    }

    /// Records the count for `session`; 0 forgets it. Keeps at most [`MAX_SESSIONS`].
    pub(crate) fn set_blocks(&mut self, session: &str, blocks: u32, at: &str) {
        if blocks == 0 {
            self.sessions.remove(session);
            return;
        }
        self.sessions.insert(
            session.to_owned(),
            SessionBlocks {
                blocks,
                at: at.to_owned(),
            },
        );
        while self.sessions.len() > MAX_SESSIONS {
            let oldest = self
                .sessions
                .iter()
                .min_by(|a, b| a.1.at.cmp(&b.1.at))
                .map(|(k, _)| k.clone());
            match oldest {
                Some(key) => self.sessions.remove(&key),
                None => break,
            };
        }
    }
}

pub(crate) struct StateFile {
    path: PathBuf,
}

impl StateFile {
    pub(crate) fn new(path: PathBuf) -> Self {
        Self { path }
    }

    /// The saved state. A missing file is `None`; an unreadable or corrupt one is moved
    /// aside (so it is not silently overwritten), logged, and treated as missing.
    pub(crate) fn load(&self) -> Option<CheckpointState> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => {
                tracing::warn!(path = %self.path.display(), "cannot read checkpoint state: {e}");
                return None;
            }
        };
        match serde_json::from_str(&text) {
            Ok(state) => Some(state),
            Err(e) => {
                let aside = self.path.with_extension("json.corrupt");
                let moved = std::fs::rename(&self.path, &aside);
                tracing::warn!(
                    path = %self.path.display(),
                    moved_to = %aside.display(),
                    moved = moved.is_ok(),
                    "checkpoint state is not valid JSON ({e}); starting fresh"
                );
                None
            }
        }
    }

    /// Saves the state; failure is logged, since a lost fingerprint only costs one extra
    /// checkpoint message.
    pub(crate) fn save(&self, state: &CheckpointState) {
        let result = serde_json::to_vec_pretty(state)
            .map_err(|e| e.to_string())
            .and_then(|bytes| write_atomic(&self.path, &bytes).map_err(|e| e.to_string()));
        if let Err(e) = result {
            tracing::warn!(path = %self.path.display(), "cannot save checkpoint state: {e}");
        }
    }
}

/// A digest of the changed set: each path, its status and its current content (size and
/// mtime for huge files). Equal digests mean the agent changed nothing since.
pub(crate) fn fingerprint(repo_root: &Path, files: &[CategorizedFile]) -> String {
    fingerprint_files(repo_root, files.iter().map(|f| &f.file))
}

pub(crate) fn fingerprint_files<'a>(
    repo_root: &Path,
    files: impl Iterator<Item = &'a ChangedFile>,
) -> String {
    let mut hash = Fnv::new();
    for file in files {
        hash.write(file.path.as_bytes());
        hash.write(&[0]);
        hash.write(file.status.code().as_bytes());
        hash.write(file.renamed_from.as_deref().unwrap_or("").as_bytes());
        hash.write(&[0]);
        content_digest(&repo_root.join(&file.path), &mut hash);
        hash.write(&[0xff]);
    }
    format!("{:016x}", hash.finish())
}

fn content_digest(path: &Path, hash: &mut Fnv) {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        hash.write(b"absent");
        return;
    };
    if meta.file_type().is_symlink() {
        if let Ok(target) = std::fs::read_link(path) {
            hash.write(target.as_os_str().as_encoded_bytes());
        }
        return;
    }
    let stat = || hash_len_mtime(&meta);
    if !meta.is_file() || meta.len() > HASH_LIMIT {
        hash.write(&stat());
        return;
    }
    let Ok(mut file) = File::open(path) else {
        hash.write(&stat());
        return;
    };
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => hash.write(&buf[..n]),
            Err(_) => {
                hash.write(&stat());
                break;
            }
        }
    }
}

fn hash_len_mtime(meta: &std::fs::Metadata) -> Vec<u8> {
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let mut out = meta.len().to_le_bytes().to_vec();
    out.extend_from_slice(&mtime.to_le_bytes());
    out
}

/// 64-bit FNV-1a: tiny, stable across Rust versions (unlike `DefaultHasher`), and plenty to
/// tell one working tree state from the next. Not used for anything security-related.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stop::changes::FileStatus;

    fn changed(path: &str) -> ChangedFile {
        ChangedFile {
            path: path.into(),
            status: FileStatus::Modified,
            renamed_from: None,
        }
    }

    #[test]
    fn fingerprint_follows_content_not_just_names() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.rs"), "one").unwrap();
        let files = [changed("a.rs")];
        let first = fingerprint_files(dir.path(), files.iter());
        assert_eq!(first, fingerprint_files(dir.path(), files.iter()));
        std::fs::write(dir.path().join("a.rs"), "two").unwrap();
        assert_ne!(first, fingerprint_files(dir.path(), files.iter()));
        std::fs::remove_file(dir.path().join("a.rs")).unwrap();
        let gone = fingerprint_files(dir.path(), files.iter());
        assert_ne!(first, gone);
        assert_ne!(gone, fingerprint_files(dir.path(), std::iter::empty()));
    }

    #[test]
    fn corrupt_state_is_moved_aside_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("checkpoint.json");
        std::fs::write(&path, "{oops").unwrap();
        let file = StateFile::new(path.clone());
        assert!(file.load().is_none());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("checkpoint.json.corrupt")).unwrap(),
            "{oops"
        );
        file.save(&CheckpointState {
            fingerprint: "f".into(),
            ..CheckpointState::default()
        });
        assert_eq!(file.load().unwrap().fingerprint, "f");
    }

    #[test]
    fn session_counts_survive_a_reload_and_old_sessions_are_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let file = StateFile::new(dir.path().join("checkpoint.json"));
        let mut state = CheckpointState::default();
        for i in 0..70 {
            state.set_blocks(&format!("s{i:02}"), 2, &format!("2026-01-01T00:00:{i:02}Z"));
        }
        state.set_blocks("s69", 3, "2026-01-01T00:01:00Z");
        file.save(&state);
        let loaded = file.load().unwrap();
        assert_eq!(loaded.sessions.len(), MAX_SESSIONS);
        assert_eq!(loaded.blocks("s69"), 3);
        assert_eq!(loaded.blocks("s00"), 0, "the oldest go first");
        let mut loaded = loaded;
        loaded.set_blocks("s69", 0, "");
        assert_eq!(loaded.blocks("s69"), 0);
    }
}
