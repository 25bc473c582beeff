//! Crash-safe JSON documents shared by many processes.
//!
//! Several TUIs, MCP servers and hook processes may work on one project at once. Every write
//! is atomic (temp file, fsync, rename, fsync of the directory), so a reader or a crash never
//! sees half a file. Read-modify-write cycles hold an advisory lock on a sibling lock file, so
//! concurrent writers lose no update. Readers keep a cache keyed on the file's identity and
//! re-read only when the file changed on disk. A file that does not parse is reported with its
//! path and is never overwritten.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::SystemTime;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::atomic::{Durability, Mode, remove_stale_temps, write_as};
use crate::private;

/// Errors of the project store. Each names the file involved.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(
        "{path} is not valid JSON (line {line}, column {column}: {message}); fix or remove the file — it was left untouched"
    )]
    Corrupt {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{path}: section '{key}' is invalid: {message}; fix the file — it was left untouched")]
    InvalidSection {
        path: PathBuf,
        key: String,
        message: String,
    },
    #[error("{path}: the top level must be a JSON object; fix the file — it was left untouched")]
    NotAnObject { path: PathBuf },
}

impl StoreError {
    pub fn io(path: &Path, source: io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Writes `bytes` to `path` atomically: a reader sees the old or the new file, never a mix.
/// Temp files that killed writers of `path` left behind are removed first.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    write_atomic_as(path, bytes, Durability::Synced)
}

/// [`write_atomic`] without its two fsyncs, for a cache: readers still see the old file or the
/// new one, but a crash of the machine may leave the old one, or an empty one, which the
/// cache's reader must take for none. An fsync costs from a fraction of a millisecond to
/// several on a busy disk: more than a cache rebuilt from the work tree is worth on a hot
/// path (the hook's work-tree snapshot, once per agent tool call).
pub fn write_atomic_cache(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    write_atomic_as(path, bytes, Durability::Unsynced)
}

fn write_atomic_as(path: &Path, bytes: &[u8], durability: Durability) -> Result<(), StoreError> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    private::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
    let name = path
        .file_name()
        .ok_or_else(|| StoreError::io(path, io::Error::other("the path names no file")))?;
    let handle = cap_std::fs::Dir::open_ambient_dir(dir, cap_std::ambient_authority())
        .map_err(|e| StoreError::io(dir, e))?;
    // A private file is 0600 even if an older version left it looser.
    let mode = if private::is_private(path) {
        Mode::Force(private::PRIVATE_FILE_MODE)
    } else {
        Mode::KeepOr(0o666)
    };
    write_as(&handle, name, bytes, mode, durability).map_err(|e| StoreError::io(path, e))
}

/// An exclusive advisory lock, released on drop (and by the OS if the process dies).
#[derive(Debug)]
pub struct FileLock {
    file: File,
}

impl FileLock {
    /// Blocks until the lock on `path` (created if missing) is held. Under a private
    /// directory the lock file and the directories made for it are private too.
    pub fn acquire(path: &Path) -> Result<Self, StoreError> {
        if let Some(dir) = path.parent() {
            private::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
        }
        let file = private::open_options(path)
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| StoreError::io(path, e))?;
        file.lock().map_err(|e| StoreError::io(path, e))?;
        Ok(Self { file })
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // Closing the file releases the lock anyway; unlocking first just makes it prompt.
        let _ = self.file.unlock();
    }
}

/// Identity of a file version: changes whenever the file is replaced or rewritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    inode: u64,
}

impl Stamp {
    /// The stamp of the file at `path` now, `None` when there is none (or it cannot be read).
    pub(crate) fn at(path: &Path) -> Option<Self> {
        fs::metadata(path).ok().map(|m| Self::of(&m))
    }

    fn of(meta: &fs::Metadata) -> Self {
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(meta);
        #[cfg(not(unix))]
        let inode = 0;
        Self {
            len: meta.len(),
            modified: meta.modified().ok(),
            inode,
        }
    }
}

/// A JSON object document on disk with a change-aware read cache and locked updates.
#[derive(Debug)]
pub struct JsonFile {
    path: PathBuf,
    lock_path: PathBuf,
    cache: Mutex<Option<(Stamp, Map<String, Value>)>>,
}

impl JsonFile {
    /// The lock lives beside the file as `.{name}.lock`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let lock_path = path.with_file_name(format!(".{name}.lock"));
        Self {
            path,
            lock_path,
            cache: Mutex::new(None),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The current stamp, or `None` when the file does not exist.
    pub fn stamp(&self) -> Option<Stamp> {
        fs::metadata(&self.path).ok().map(|m| Stamp::of(&m))
    }

    /// The document as an object; a missing file reads as `{}`. Cached until the file changes.
    pub fn read(&self) -> Result<Map<String, Value>, StoreError> {
        let Some(stamp) = self.stamp() else {
            return Ok(Map::new());
        };
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((cached, doc)) = cache.as_ref()
            && *cached == stamp
        {
            return Ok(doc.clone());
        }
        let (stamp, doc) = self.load()?;
        *cache = stamp.map(|s| (s, doc.clone()));
        Ok(doc)
    }

    fn load(&self) -> Result<(Option<Stamp>, Map<String, Value>), StoreError> {
        let file = match File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((None, Map::new())),
            Err(e) => return Err(StoreError::io(&self.path, e)),
        };
        let stamp = file.metadata().ok().map(|m| Stamp::of(&m));
        let bytes = io::read_to_string(file).map_err(|e| StoreError::io(&self.path, e))?;
        if bytes.trim().is_empty() {
            return Ok((stamp, Map::new()));
        }
        match serde_json::from_str::<Value>(&bytes) {
            Ok(Value::Object(map)) => Ok((stamp, map)),
            Ok(_) => Err(StoreError::NotAnObject {
                path: self.path.clone(),
            }),
            Err(e) => Err(StoreError::Corrupt {
                path: self.path.clone(),
                line: e.line(),
                column: e.column(),
                message: e.to_string(),
            }),
        }
    }

    /// Locked read-modify-write. `f` sees the latest content on disk; if it returns `Err`,
    /// nothing is written. A corrupt file is reported and left untouched.
    pub fn update<R, E>(
        &self,
        f: impl FnOnce(&mut Map<String, Value>) -> Result<R, E>,
    ) -> Result<Result<R, E>, StoreError> {
        let _lock = FileLock::acquire(&self.lock_path)?;
        // A write below sweeps what killed writers left; this covers updates that write nothing.
        if let Some(dir) = self.path.parent().filter(|p| !p.as_os_str().is_empty())
            && let Ok(dir) = cap_std::fs::Dir::open_ambient_dir(dir, cap_std::ambient_authority())
        {
            remove_stale_temps(&dir);
        }
        let (_, mut doc) = self.load()?;
        let before = doc.clone();
        let out = match f(&mut doc) {
            Ok(out) => out,
            Err(e) => return Ok(Err(e)),
        };
        if doc != before {
            let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
            text.push('\n');
            write_atomic(&self.path, text.as_bytes())?;
        }
        Ok(Ok(out))
    }
}

/// `.context-pilot/config.json`: one JSON object whose top-level keys are owned by modules
/// (`callbacks`, `checkpoint`, `restart`, `llm`, …). Keys a module does not know are kept.
#[derive(Debug)]
pub struct ConfigFile {
    doc: JsonFile,
}

impl ConfigFile {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            doc: JsonFile::new(path),
        }
    }

    pub fn path(&self) -> &Path {
        self.doc.path()
    }

    /// Changes whenever the file changes, for modules that rebuild derived state.
    pub fn stamp(&self) -> Option<Stamp> {
        self.doc.stamp()
    }

    /// The raw value of a section, if present.
    pub fn raw_section(&self, key: &str) -> Result<Option<Value>, StoreError> {
        Ok(self.doc.read()?.remove(key))
    }

    /// A typed section; a missing file or key gives `T::default()`.
    pub fn section<T: DeserializeOwned + Default>(&self, key: &str) -> Result<T, StoreError> {
        match self.raw_section(key)? {
            None | Some(Value::Null) => Ok(T::default()),
            Some(value) => self.decode(key, value),
        }
    }

    /// Locked update of one section. If `f` returns `Err`, nothing is written.
    pub fn update_section<T, R, E>(
        &self,
        key: &str,
        f: impl FnOnce(&mut T) -> Result<R, E>,
    ) -> Result<Result<R, E>, StoreError>
    where
        T: DeserializeOwned + Serialize + Default,
    {
        /// Why the closure given to `JsonFile::update` stopped without writing.
        enum Stop<E> {
            Decode(StoreError),
            Caller(E),
        }
        let out = self.doc.update(|doc| {
            let mut section: T = match doc.get(key) {
                None | Some(Value::Null) => T::default(),
                Some(value) => self.decode(key, value.clone()).map_err(Stop::Decode)?,
            };
            let out = f(&mut section).map_err(Stop::Caller)?;
            let value = serde_json::to_value(&section).map_err(|e| {
                Stop::Decode(StoreError::InvalidSection {
                    path: self.doc.path().to_path_buf(),
                    key: key.to_owned(),
                    message: format!("could not serialize: {e}"),
                })
            })?;
            doc.insert(key.to_owned(), value);
            Ok(out)
        })?;
        match out {
            Ok(out) => Ok(Ok(out)),
            Err(Stop::Caller(e)) => Ok(Err(e)),
            Err(Stop::Decode(e)) => Err(e),
        }
    }

    fn decode<T: DeserializeOwned>(&self, key: &str, value: Value) -> Result<T, StoreError> {
        serde_json::from_value(value).map_err(|e| StoreError::InvalidSection {
            path: self.doc.path().to_path_buf(),
            key: key.to_owned(),
            message: e.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Default, Serialize, Deserialize, PartialEq)]
    struct Counter {
        n: u64,
    }

    #[test]
    fn sections_round_trip_and_keep_other_keys() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("config.json");
        fs::write(&path, r#"{"other": {"keep": true}}"#).unwrap();
        let cfg = ConfigFile::new(&path);
        assert_eq!(cfg.section::<Counter>("counter").unwrap(), Counter { n: 0 });
        cfg.update_section("counter", |c: &mut Counter| {
            c.n = 5;
            Ok::<_, ()>(())
        })
        .unwrap()
        .unwrap();
        assert_eq!(cfg.section::<Counter>("counter").unwrap().n, 5);
        let raw: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(raw["other"]["keep"], true);
    }

    #[test]
    fn rereads_when_another_writer_changed_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("c.json");
        let a = ConfigFile::new(&path);
        let b = ConfigFile::new(&path);
        assert_eq!(a.section::<Counter>("c").unwrap().n, 0);
        b.update_section("c", |c: &mut Counter| {
            c.n = 9;
            Ok::<_, ()>(())
        })
        .unwrap()
        .unwrap();
        assert_eq!(a.section::<Counter>("c").unwrap().n, 9);
    }

    #[test]
    fn a_corrupt_file_is_reported_and_never_overwritten() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("config.json");
        fs::write(&path, "{ broken").unwrap();
        let cfg = ConfigFile::new(&path);
        let err = cfg.section::<Counter>("c").unwrap_err();
        assert!(
            err.to_string().contains("config.json is not valid JSON"),
            "{err}"
        );
        let err = cfg
            .update_section("c", |c: &mut Counter| {
                c.n = 1;
                Ok::<_, ()>(())
            })
            .unwrap_err();
        assert!(matches!(err, StoreError::Corrupt { .. }));
        assert_eq!(fs::read_to_string(&path).unwrap(), "{ broken");
    }

    #[test]
    fn an_invalid_section_is_reported_and_left_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("config.json");
        fs::write(&path, r#"{"c": {"n": "many"}}"#).unwrap();
        let cfg = ConfigFile::new(&path);
        let err = cfg.section::<Counter>("c").unwrap_err();
        assert!(err.to_string().contains("section 'c' is invalid"), "{err}");
        assert!(
            cfg.update_section("c", |_: &mut Counter| Ok::<_, ()>(()))
                .is_err()
        );
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            r#"{"c": {"n": "many"}}"#
        );
    }

    #[test]
    fn a_cache_is_replaced_whole_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/cache.json");
        write_atomic_cache(&path, b"one").unwrap();
        write_atomic_cache(&path, b"two, longer").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two, longer");
        let names: Vec<_> = std::fs::read_dir(dir.path().join("sub"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["cache.json"]);
    }

    #[test]
    fn a_failed_closure_writes_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("config.json");
        let cfg = ConfigFile::new(&path);
        let out = cfg
            .update_section("c", |c: &mut Counter| {
                c.n = 3;
                Err::<(), _>("no")
            })
            .unwrap();
        assert_eq!(out, Err("no"));
        assert!(!path.exists());
    }

    /// Found by the crash-safety test: a writer killed while creating
    /// `.context-pilot/.gitignore` (or a new callback script) left its temp file there for
    /// good, because only config.json updates swept stale temps, and only their own.
    #[test]
    fn atomic_write_sweeps_temps_of_dead_writers_of_the_same_file() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(".gitignore");
        // No process has pid u32::MAX; a live writer's temp (ours) must stay.
        let dead = tmp
            .path()
            .join(format!("..gitignore.cp.tmp.{}.1", u32::MAX));
        let live = tmp
            .path()
            .join(format!("..gitignore.cp.tmp.{}.2", std::process::id()));
        // The temp of another file nobody writes again (a new script whose writer died).
        let other = tmp.path().join(format!(".cb-7.sh.cp.tmp.{}.3", u32::MAX));
        // Not temps of ours: left alone whatever their names suggest (a user's own temp
        // files in a project directory look much like ours).
        let lookalikes = [
            tmp.path().join(format!(".notes.cp.tmp.{}", u32::MAX)),
            tmp.path().join(format!("x.cp.tmp.{}.4", u32::MAX)),
            tmp.path().join(format!(".notes.tmp.{}.5", u32::MAX)),
        ];
        for p in [&dead, &live, &other].into_iter().chain(&lookalikes) {
            fs::write(p, "partial").unwrap();
        }
        write_atomic(&path, b"run/\n").unwrap();
        assert!(!dead.exists(), "a dead writer's temp file was left");
        assert!(
            !other.exists(),
            "a dead writer's temp of another file was left"
        );
        assert!(live.exists(), "a live writer's temp file was removed");
        for p in &lookalikes {
            assert!(p.exists(), "{} is not a temp file", p.display());
        }
        assert_eq!(fs::read_to_string(&path).unwrap(), "run/\n");
    }

    #[test]
    fn atomic_write_leaves_no_temp_files() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("x.json");
        write_atomic(&path, b"{}").unwrap();
        write_atomic(&path, b"{\"a\":1}").unwrap();
        let names: Vec<_> = fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("x.json")]);
    }

    #[test]
    fn atomic_writes_in_private_dirs_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let state = tmp.path().join(".context-pilot/state/main/session.json");
        let config = tmp.path().join(".context-pilot/config.json");
        write_atomic(&state, b"{}").unwrap();
        write_atomic(&config, b"{}").unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&state), 0o600);
        assert_eq!(mode(state.parent().unwrap()), 0o700);
        assert_ne!(
            mode(&config),
            0o600,
            "files outside the private dirs keep the umask"
        );
    }
}
