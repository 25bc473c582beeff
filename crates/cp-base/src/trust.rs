//! Project trust: a cloned repository's `.context-pilot/` is someone else's code.
//!
//! What a project's configuration can make run, or where it can send an API key, takes effect
//! only once the person trusts the project (as `direnv allow` does). The [`Grant`] is exactly
//! that, read from the project:
//!
//! - every callback definition in `config.json` (`callbacks.definitions`, each whole object:
//!   name, patterns, cwd, timeout, …) and the content of its script
//!   `.context-pilot/scripts/{name}.sh` (as a SHA-256 of the bytes);
//! - the stop gate's configured test command (`checkpoint.tests.command`);
//! - `llm.base_url`, the server that would receive the API key.
//!
//! Not part of the grant: which workers activated which callbacks (`callbacks.active`,
//! `paused`), the checkpoint's rules and messages, the restart policy, and test commands
//! detected from `Cargo.toml`, `package.json`, … (they are the project's own build, not
//! Context Pilot configuration). Files a script sources or calls are not covered either.
//!
//! The [`TrustStore`] records per user, outside any repository, the canonical project root and
//! the SHA-256 of its grant: `$XDG_CONFIG_HOME/context-pilot/trust.json`, else
//! `~/.config/context-pilot/trust.json`, written atomically with mode 0600 under a lock. A
//! project is trusted while its grant still hashes to the recorded value, so any change made
//! outside Context Pilot (a pull, a hand edit, a `File_write` into `.context-pilot/`) needs
//! trusting again. A linked worktree of a trusted repository is trusted while its grant
//! hashes to the repository's recorded value (see `trust_worktree.rs`). Changes through Context Pilot's own tools go through
//! [`Project::keep_trust`](crate::Project::keep_trust), which re-records the new hash when the
//! project was trusted before the change. A project whose grant is empty needs no trust.
//!
//! ```
//! use cp_base::{Project, TrustState, TrustStore};
//! let home = tempfile::tempdir().unwrap();
//! let root = tempfile::tempdir().unwrap();
//! let store = TrustStore::at(home.path().join("trust.json"));
//! let project = Project::at(root.path()).with_trust_store(store);
//! assert_eq!(project.trust_state(), TrustState::NothingToTrust);
//! std::fs::create_dir_all(project.dir()).unwrap();
//! std::fs::write(project.dir().join("config.json"),
//!     r#"{"checkpoint": {"tests": {"command": "make test"}}}"#).unwrap();
//! assert_eq!(project.trust_state(), TrustState::Untrusted);
//! project.grant_trust().unwrap();
//! assert!(project.is_trusted());
//! ```

use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::atomic::{Mode, replace_file};
use crate::store::{ConfigFile, FileLock, StoreError};
use crate::worker::is_valid_name;

/// The trust file's name inside the user's config directory.
const TRUST_FILE: &str = "trust.json";

/// Errors of the trust store and of reading a grant.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    #[error(
        "no place to record trust: neither XDG_CONFIG_HOME nor HOME is set to an absolute path"
    )]
    NoStore,
    #[error("{path} is not a valid trust file ({message}); fix or remove it")]
    Corrupt { path: PathBuf, message: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The user's config directory for Context Pilot: `$XDG_CONFIG_HOME/context-pilot`, else
/// `$HOME/.config/context-pilot`. `None` when neither is an absolute path.
pub fn user_config_dir() -> Option<PathBuf> {
    let absolute = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    absolute("XDG_CONFIG_HOME")
        .or_else(|| absolute("HOME").map(|home| home.join(".config")))
        .map(|dir| dir.join("context-pilot"))
}

/// One callback definition of a grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantCallback {
    /// The definition as stored in `config.json`.
    pub definition: Value,
    /// Its name (the script's file name), as given.
    pub name: String,
    /// The script's text, `None` when it is missing or the name is not a valid file name.
    pub script: Option<String>,
    /// SHA-256 of the script's bytes (`missing`, or `not read: invalid name`).
    script_digest: String,
}

/// What a project's configuration would run or where it would send a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub callbacks: Vec<GrantCallback>,
    pub test_command: Option<String>,
    pub base_url: Option<String>,
    hash: String,
}

impl Grant {
    /// Reads the grant from a project's `config.json` and its scripts directory (see
    /// [`Grant::of`] for a [`Project`](crate::Project)).
    pub fn read(config: &ConfigFile, scripts_dir: &Path) -> Result<Self, TrustError> {
        let callbacks = definitions(config)?
            .into_iter()
            .map(|definition| read_callback(scripts_dir, definition))
            .collect();
        let test_command = config
            .raw_section("checkpoint")?
            .and_then(|c| c.get("tests")?.get("command").cloned())
            .and_then(|c| match c {
                Value::String(s) if s.trim().is_empty() => None,
                Value::String(s) => Some(s),
                Value::Null => None,
                other => Some(other.to_string()),
            });
        let base_url = config
            .raw_section("llm")?
            .and_then(|l| l.get("base_url").cloned())
            .and_then(|u| match u {
                Value::String(s) if s.trim().is_empty() => None,
                Value::String(s) => Some(s),
                Value::Null => None,
                other => Some(other.to_string()),
            });
        let mut grant = Self {
            callbacks,
            test_command,
            base_url,
            hash: String::new(),
        };
        grant.hash = grant.digest();
        Ok(grant)
    }

    /// Nothing in the project runs or receives a key: no trust is needed.
    pub fn is_empty(&self) -> bool {
        self.callbacks.is_empty() && self.test_command.is_none() && self.base_url.is_none()
    }

    /// `sha256:<hex>` of the grant's canonical JSON.
    pub fn hash(&self) -> &str {
        &self.hash
    }

    fn digest(&self) -> String {
        let callbacks: Vec<Value> = self
            .callbacks
            .iter()
            .map(|c| json!({"definition": c.definition, "script": c.script_digest}))
            .collect();
        let doc = json!({
            "version": 1,
            "callbacks": callbacks,
            "test_command": self.test_command,
            "base_url": self.base_url,
        });
        format!(
            "sha256:{}",
            hex(&Sha256::digest(doc.to_string().as_bytes()))
        )
    }

    /// A readable list of what trusting the project allows, for `context-pilot trust --show`
    /// and the TUI's question.
    pub fn describe(&self) -> String {
        if self.is_empty() {
            return "Nothing in this project's .context-pilot/config.json runs commands or sets \
                    an LLM server; it needs no trust.\n"
                .to_owned();
        }
        let mut out = String::new();
        if let Some(url) = &self.base_url {
            let _ = writeln!(
                out,
                "LLM server (llm.base_url), which receives your API key:\n  {url}\n"
            );
        }
        if let Some(cmd) = &self.test_command {
            let _ = writeln!(
                out,
                "Stop gate test command (checkpoint.tests.command), run with sh -c:\n  {cmd}\n"
            );
        }
        for c in &self.callbacks {
            let _ = writeln!(out, "Callback {}", c.definition);
            match &c.script {
                Some(text) => {
                    let _ = writeln!(out, "  script .context-pilot/scripts/{}.sh:", c.name);
                    for line in text.lines() {
                        let _ = writeln!(out, "  | {line}");
                    }
                }
                None => {
                    let _ = writeln!(out, "  script: {}", c.script_digest);
                }
            }
            out.push('\n');
        }
        out
    }
}

/// The callback definitions of `config.json`, as the grant reads them.
fn definitions(config: &ConfigFile) -> Result<Vec<Value>, TrustError> {
    Ok(match config.raw_section("callbacks")? {
        Some(Value::Object(section)) => match section.get("definitions") {
            Some(Value::Array(defs)) => defs.clone(),
            Some(Value::Null) | None => Vec::new(),
            Some(other) => vec![other.clone()],
        },
        Some(Value::Null) | None => Vec::new(),
        Some(other) => vec![other],
    })
}

/// The script files a grant read from `config` would hash.
pub(crate) fn script_paths(
    config: &ConfigFile,
    scripts_dir: &Path,
) -> Result<Vec<PathBuf>, TrustError> {
    Ok(definitions(config)?
        .iter()
        .filter_map(|d| d.get("name").and_then(Value::as_str))
        .filter_map(|name| script_path(scripts_dir, name))
        .collect())
}

/// Where the script of callback `name` lives; `None` for a name that is no valid file name.
fn script_path(scripts_dir: &Path, name: &str) -> Option<PathBuf> {
    is_valid_name(name).then(|| scripts_dir.join(format!("{name}.sh")))
}

fn read_callback(scripts_dir: &Path, definition: Value) -> GrantCallback {
    let name = definition
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let (script, script_digest) = if let Some(path) = script_path(scripts_dir, &name) {
        match fs::read(path) {
            Ok(bytes) => (
                Some(String::from_utf8_lossy(&bytes).into_owned()),
                format!("sha256:{}", hex(&Sha256::digest(&bytes))),
            ),
            Err(e) if e.kind() == io::ErrorKind::NotFound => (None, "missing".to_owned()),
            Err(e) => (None, format!("unreadable: {e}")),
        }
    } else {
        (
            None,
            "not read: the name is not a valid file name".to_owned(),
        )
    };
    GrantCallback {
        definition,
        name,
        script,
        script_digest,
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Whether a project's configuration may take effect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustState {
    /// Nothing in the project runs commands or sets an LLM server.
    NothingToTrust,
    /// The person trusted exactly what the project holds now.
    Trusted,
    /// A linked worktree of the trusted repository at `repository`, whose configuration
    /// allows exactly what the person trusted there.
    TrustedWorktree {
        /// The repository's main work tree.
        repository: PathBuf,
    },
    /// Never trusted (or trust was revoked).
    Untrusted,
    /// Trusted once, but what it allows changed outside Context Pilot since.
    Changed,
    /// The grant or the trust file could not be read; treated as untrusted.
    Unknown(String),
}

impl TrustState {
    /// Whether the project's callbacks, test command and base URL may take effect.
    pub fn allows(&self) -> bool {
        matches!(
            self,
            Self::NothingToTrust | Self::Trusted | Self::TrustedWorktree { .. }
        )
    }

    /// One line for the person: why nothing runs and how to allow it.
    pub fn advice(&self, root: &Path) -> String {
        let how = format!(
            "review it with `context-pilot trust --show --project {0}`, then allow it with \
             `context-pilot trust --project {0}`",
            root.display()
        );
        match self {
            Self::NothingToTrust | Self::Trusted | Self::TrustedWorktree { .. } => String::new(),
            Self::Untrusted => format!(
                "Context Pilot: this project is not trusted, so its callbacks, configured test \
                 command and llm.base_url from .context-pilot/config.json are off; {how}."
            ),
            Self::Changed => format!(
                "Context Pilot: this project's callbacks, test command or llm.base_url changed \
                 outside Context Pilot since you trusted it, so they are off; {how}."
            ),
            Self::Unknown(why) => format!(
                "Context Pilot: cannot tell whether this project is trusted ({why}), so its \
                 callbacks, configured test command and llm.base_url are off; {how}."
            ),
        }
    }
}

/// The per-user record of trusted projects (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustStore {
    path: Option<PathBuf>,
}

impl TrustStore {
    /// The user's store, from `XDG_CONFIG_HOME` or `HOME` (read now). Without either, nothing
    /// can be trusted.
    pub fn user() -> Self {
        Self {
            path: user_config_dir().map(|dir| dir.join(TRUST_FILE)),
        }
    }

    /// A store in an explicit file (tests, tools).
    pub fn at(path: impl Into<PathBuf>) -> Self {
        Self {
            path: Some(path.into()),
        }
    }

    /// The trust file, if there is a place for it.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    fn file(&self) -> Result<&Path, TrustError> {
        self.path.as_deref().ok_or(TrustError::NoStore)
    }

    fn lock_path(file: &Path) -> PathBuf {
        file.with_file_name(format!(".{TRUST_FILE}.lock"))
    }

    /// Holds the store's lock until dropped, so a check and a re-record are one step.
    pub(crate) fn lock(&self) -> Result<FileLock, TrustError> {
        let file = self.file()?;
        ensure_private_dir(file)?;
        Ok(FileLock::acquire(&Self::lock_path(file))?)
    }

    fn read(&self) -> Result<Map<String, Value>, TrustError> {
        let file = self.file()?;
        let text = match fs::read_to_string(file) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Map::new()),
            Err(e) => return Err(StoreError::io(file, e).into()),
        };
        if text.trim().is_empty() {
            return Ok(Map::new());
        }
        match serde_json::from_str(&text) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(_) => Err(TrustError::Corrupt {
                path: file.to_path_buf(),
                message: "the top level must be an object".into(),
            }),
            Err(e) => Err(TrustError::Corrupt {
                path: file.to_path_buf(),
                message: e.to_string(),
            }),
        }
    }

    /// The hash recorded for the project at `root`, if any.
    pub fn recorded(&self, root: &Path) -> Result<Option<String>, TrustError> {
        let doc = self.read()?;
        Ok(doc
            .get("projects")
            .and_then(|p| p.get(root.to_string_lossy().as_ref()))
            .and_then(|p| p.get("hash"))
            .and_then(Value::as_str)
            .map(str::to_owned))
    }

    /// Records `hash` as trusted for `root` (the caller holds the lock).
    pub(crate) fn record_locked(&self, root: &Path, hash: Option<&str>) -> Result<(), TrustError> {
        let file = self.file()?;
        let mut doc = self.read()?;
        let projects = doc
            .entry("projects")
            .or_insert_with(|| Value::Object(Map::new()));
        if !projects.is_object() {
            *projects = Value::Object(Map::new());
        }
        let key = root.to_string_lossy().into_owned();
        if let Some(map) = projects.as_object_mut() {
            match hash {
                Some(hash) => {
                    let granted = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_secs());
                    map.insert(key, json!({"hash": hash, "granted_unix": granted}));
                }
                None => {
                    map.remove(&key);
                }
            }
        }
        doc.insert("version".into(), json!(1));
        let mut text = serde_json::to_string_pretty(&Value::Object(doc)).unwrap_or_default();
        text.push('\n');
        // Private to the user, whatever mode an older file had.
        replace_file(file, text.as_bytes(), Mode::Force(0o600))
            .map_err(|e| StoreError::io(file, e).into())
    }

    /// Records `hash` as trusted for `root`.
    pub fn record(&self, root: &Path, hash: &str) -> Result<(), TrustError> {
        let _lock = self.lock()?;
        self.record_locked(root, Some(hash))
    }

    /// Forgets the project at `root`; returns whether it was recorded.
    pub fn revoke(&self, root: &Path) -> Result<bool, TrustError> {
        let _lock = self.lock()?;
        let was = self.recorded(root)?.is_some();
        if was {
            self.record_locked(root, None)?;
        }
        Ok(was)
    }
}

/// Creates the store's directory, private to the user when it is new.
fn ensure_private_dir(file: &Path) -> Result<(), TrustError> {
    let Some(dir) = file.parent() else {
        return Ok(());
    };
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(dir)
        .map_err(|e| StoreError::io(dir, e).into())
}
