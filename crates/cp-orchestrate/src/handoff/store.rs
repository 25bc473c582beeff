//! Handoff records under `<project>/.context-pilot/handoffs/`.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use cp_base::{Project, write_atomic};

use super::error::HandoffError;
use super::model::Handoff;

/// Saves and loads handoffs as `<timestamp>-<agent>.json` files, oldest first by name.
#[derive(Debug, Clone)]
pub struct HandoffStore {
    dir: PathBuf,
}

impl HandoffStore {
    /// The store of `project`, in its `.context-pilot/handoffs/`.
    pub fn new(project: &Project) -> Self {
        Self {
            dir: project.handoffs_dir(),
        }
    }

    /// The directory holding the records.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes `handoff` atomically and returns its path. Never replaces an existing record.
    pub fn save(&self, handoff: &Handoff) -> Result<PathBuf, HandoffError> {
        let json =
            serde_json::to_string_pretty(handoff).map_err(|source| HandoffError::Serialize {
                what: "handoff",
                source,
            })?;
        let stem = format!(
            "{}-{}",
            file_timestamp(&handoff.created_at),
            file_safe(&handoff.agent_id)
        );
        let mut path = self.dir.join(format!("{stem}.json"));
        let mut n = 2;
        while path.exists() {
            path = self.dir.join(format!("{stem}-{n}.json"));
            n += 1;
        }
        write_atomic(&path, json.as_bytes())?;
        Ok(path)
    }

    /// Paths of every record, oldest first. A missing directory means no records.
    pub fn list(&self) -> Result<Vec<PathBuf>, HandoffError> {
        let entries = match fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(HandoffError::io("listing", &self.dir, e)),
        };
        let mut paths = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| HandoffError::io("listing", &self.dir, e))?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            // Dot files are in-flight temp files of an atomic write.
            if name.ends_with(".json") && !name.starts_with('.') {
                paths.push(entry.path());
            }
        }
        // Names start with a fixed-width UTC timestamp, so name order is time order.
        paths.sort();
        Ok(paths)
    }

    /// Reads one record.
    pub fn load(&self, path: &Path) -> Result<Handoff, HandoffError> {
        let text = fs::read_to_string(path).map_err(|e| HandoffError::io("reading", path, e))?;
        Handoff::from_json(&text).map_err(|source| HandoffError::CorruptFile {
            path: path.to_path_buf(),
            what: "handoff",
            source,
        })
    }

    /// The newest record, if any.
    pub fn latest(&self) -> Result<Option<(PathBuf, Handoff)>, HandoffError> {
        match self.list()?.pop() {
            Some(path) => {
                let handoff = self.load(&path)?;
                Ok(Some((path, handoff)))
            }
            None => Ok(None),
        }
    }
}

/// `2025-01-31T12:00:00.123Z` → `20250131T120000.123Z`; an unparsable stamp uses now.
fn file_timestamp(created_at: &str) -> String {
    let time = humantime::parse_rfc3339_weak(created_at).unwrap_or_else(|_| SystemTime::now());
    humantime::format_rfc3339_millis(time)
        .to_string()
        .chars()
        .filter(|c| *c != '-' && *c != ':')
        .collect()
}

/// Keeps agent ids from escaping the directory or producing odd file names.
fn file_safe(agent_id: &str) -> String {
    let safe: String = agent_id
        .chars()
        .take(64)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.is_empty() {
        "agent".into()
    } else {
        safe
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handoff::{HandoffBuilder, HandoffReason};

    fn at(created_at: &str, agent: &str) -> Handoff {
        let mut h = HandoffBuilder::new(agent, HandoffReason::ThresholdCritical)
            .add_decision("d")
            .build();
        created_at.clone_into(&mut h.created_at);
        h
    }

    #[test]
    fn save_names_files_by_time_and_agent_and_latest_is_newest() {
        let dir = tempfile::tempdir().unwrap();
        let store = HandoffStore::new(&Project::at(dir.path()));
        assert!(store.list().unwrap().is_empty());
        assert!(store.latest().unwrap().is_none());

        let newer = at("2025-02-01T00:00:00.000Z", "w2");
        let older = at("2025-01-31T12:00:00.500Z", "w1");
        let p_new = store.save(&newer).unwrap();
        let p_old = store.save(&older).unwrap();
        assert_eq!(
            p_old.file_name().unwrap().to_str().unwrap(),
            "20250131T120000.500Z-w1.json"
        );
        assert!(p_old.starts_with(dir.path().join(".context-pilot/handoffs")));
        assert_eq!(store.list().unwrap(), vec![p_old, p_new.clone()]);
        let (path, latest) = store.latest().unwrap().unwrap();
        assert_eq!(path, p_new);
        assert_eq!(latest, newer);
    }

    #[test]
    fn same_name_does_not_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let store = HandoffStore::new(&Project::at(dir.path()));
        let h = at("2025-02-01T00:00:00.000Z", "w");
        let a = store.save(&h).unwrap();
        let b = store.save(&h).unwrap();
        assert_ne!(a, b);
        assert_eq!(store.list().unwrap().len(), 2);
    }

    #[test]
    fn agent_ids_cannot_escape_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let store = HandoffStore::new(&Project::at(dir.path()));
        let path = store
            .save(&at("2025-02-01T00:00:00Z", "../../etc/passwd"))
            .unwrap();
        assert_eq!(path.parent().unwrap(), store.dir());
        assert!(path.to_string_lossy().ends_with("-______etc_passwd.json"));
    }

    #[test]
    fn corrupt_record_is_reported_by_path_and_left_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let store = HandoffStore::new(&Project::at(dir.path()));
        fs::create_dir_all(store.dir()).unwrap();
        let bad = store.dir().join("20990101T000000.000Z-x.json");
        fs::write(&bad, "{not json").unwrap();
        let err = store.latest().unwrap_err().to_string();
        assert!(err.contains("20990101T000000.000Z-x.json"), "{err}");
        assert!(err.contains("not a valid handoff"), "{err}");
        assert_eq!(fs::read_to_string(&bad).unwrap(), "{not json");
    }
}
