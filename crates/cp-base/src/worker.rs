//! Worker identity: which agent (or person) this process acts for.
//!
//! Callback activation and session state are per worker, so two agents on one project do not
//! slow or surprise each other. The id also names a directory under `state/`, hence the strict
//! character set.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The environment variable that names the worker when `--worker` is not given.
pub const WORKER_ENV: &str = "CP_WORKER";
/// The worker used when neither `--worker` nor `CP_WORKER` is set.
pub const DEFAULT_WORKER: &str = "main";

/// A validated worker id: 1–64 characters of `[A-Za-z0-9_-]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct WorkerId(String);

/// A worker id that does not fit the allowed shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid worker id '{0}': use 1-64 characters of letters, digits, '_' or '-' (example: agent-2)"
)]
pub struct InvalidWorkerId(pub String);

impl WorkerId {
    pub fn new(id: impl Into<String>) -> Result<Self, InvalidWorkerId> {
        let id = id.into();
        if is_valid_name(&id) {
            Ok(Self(id))
        } else {
            Err(InvalidWorkerId(id))
        }
    }

    /// `--worker` if given, else `CP_WORKER` if set and non-empty, else `main`.
    pub fn resolve(flag: Option<&str>, env_value: Option<&str>) -> Result<Self, InvalidWorkerId> {
        match (flag, env_value.filter(|v| !v.is_empty())) {
            (Some(id), _) | (None, Some(id)) => Self::new(id),
            (None, None) => Ok(Self(DEFAULT_WORKER.to_owned())),
        }
    }

    /// Resolves from the flag and this process's environment.
    pub fn from_flag_or_env(flag: Option<&str>) -> Result<Self, InvalidWorkerId> {
        let env_value = std::env::var(WORKER_ENV).ok();
        Self::resolve(flag, env_value.as_deref())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// True for 1–64 characters of `[A-Za-z0-9_-]`: safe as a file name, never a path.
pub fn is_valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl Default for WorkerId {
    fn default() -> Self {
        Self(DEFAULT_WORKER.to_owned())
    }
}

impl fmt::Display for WorkerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for WorkerId {
    type Error = InvalidWorkerId;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::new(value)
    }
}

impl From<WorkerId> for String {
    fn from(id: WorkerId) -> Self {
        id.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_beats_env_beats_default() {
        assert_eq!(
            WorkerId::resolve(Some("a"), Some("b")).unwrap().as_str(),
            "a"
        );
        assert_eq!(WorkerId::resolve(None, Some("b")).unwrap().as_str(), "b");
        assert_eq!(WorkerId::resolve(None, Some("")).unwrap().as_str(), "main");
        assert_eq!(WorkerId::resolve(None, None).unwrap().as_str(), "main");
    }

    #[test]
    fn rejects_path_like_ids() {
        for bad in ["", "../x", "a/b", "a b", &"x".repeat(65)] {
            assert!(WorkerId::new(bad).is_err(), "{bad}");
        }
        assert!(WorkerId::new("agent_2-B").is_ok());
    }
}
