//! The callback data model as stored in the `callbacks` section of `config.json`.
//!
//! ```json
//! "callbacks": {
//!   "next_id": 3,
//!   "definitions": [{"id": "CB1", "name": "cargo-check", "pattern": ["*.rs"], ...}],
//!   "active": {"main": ["CB1"]},
//!   "paused": ["agent-2"]
//! }
//! ```
//!
//! `next_id` only ever grows, so an id is never reused, even after a delete. `active` maps a
//! worker to the callbacks it has switched on; `paused` lists workers that paused every
//! callback with `Callback_toggle {"id": "all", "active": false}` (their `active` sets are
//! kept, so resuming restores them).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The `config.json` key this module owns.
pub const CONFIG_KEY: &str = "callbacks";

/// Smallest allowed timeout, in seconds.
pub const MIN_TIMEOUT_SECS: u64 = 1;
/// Largest allowed timeout, in seconds (one hour: a post-edit check that takes longer is a
/// job, not a callback).
pub const MAX_TIMEOUT_SECS: u64 = 3600;

/// A callback id, `CB1`, `CB2`, … Assigned once, never reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct CallbackId(pub u64);

impl fmt::Display for CallbackId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CB{}", self.0)
    }
}

/// Text that is not a callback id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a callback id; ids look like `CB1`")]
pub struct InvalidCallbackId(pub String);

impl FromStr for CallbackId {
    type Err = InvalidCallbackId;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let digits = s
            .strip_prefix("CB")
            .or_else(|| s.strip_prefix("cb"))
            .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
        digits
            .and_then(|d| d.parse().ok())
            .filter(|n| *n > 0)
            .map(Self)
            .ok_or_else(|| InvalidCallbackId(s.to_owned()))
    }
}

impl TryFrom<String> for CallbackId {
    type Error = InvalidCallbackId;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        value.parse()
    }
}

impl From<CallbackId> for String {
    fn from(id: CallbackId) -> Self {
        id.to_string()
    }
}

/// One or several patterns; the file may hold either shape, we always write a list.
#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::One(s) => vec![s],
        OneOrMany::Many(v) => v,
    })
}

/// A callback definition: global, shared by every worker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallbackDef {
    pub id: CallbackId,
    /// `[A-Za-z0-9_-]{1,64}`; also the script's file name.
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Gitignore-style rules, in order; `!rule` excludes; the last matching rule wins.
    #[serde(deserialize_with = "one_or_many")]
    pub pattern: Vec<String>,
    /// The edit's result waits for this callback.
    #[serde(default)]
    pub blocking: bool,
    /// Seconds before the run's process group is killed. Required when blocking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
    /// Shown instead of output when the run succeeds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success_message: Option<String>,
    /// Working directory relative to the project root; `None` = the root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Never runs twice at once; triggers meanwhile coalesce into one queued run.
    #[serde(default)]
    pub one_at_a_time: bool,
    /// One run per batch with every matched file, instead of one run per matched file.
    #[serde(default = "default_true")]
    pub once_per_batch: bool,
}

fn default_true() -> bool {
    true
}

/// The whole `callbacks` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallbackSection {
    /// The number the next callback gets. Never decreases.
    #[serde(default = "first_id")]
    pub next_id: u64,
    #[serde(default)]
    pub definitions: Vec<CallbackDef>,
    /// Worker id → ids of the callbacks it has active.
    #[serde(default)]
    pub active: BTreeMap<String, BTreeSet<CallbackId>>,
    /// Workers that paused all their callbacks.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub paused: BTreeSet<String>,
}

fn first_id() -> u64 {
    1
}

impl CallbackSection {
    pub fn get(&self, id: CallbackId) -> Option<&CallbackDef> {
        self.definitions.iter().find(|d| d.id == id)
    }

    pub fn get_mut(&mut self, id: CallbackId) -> Option<&mut CallbackDef> {
        self.definitions.iter_mut().find(|d| d.id == id)
    }

    pub fn by_name(&self, name: &str) -> Option<&CallbackDef> {
        self.definitions.iter().find(|d| d.name == name)
    }

    /// Takes the next id. The counter also skips past any id already present, so a
    /// hand-edited file cannot make two callbacks share an id. `None` when a hand-edited
    /// counter or id is so large (`u64::MAX`) that no unused id is left above it.
    pub fn allocate_id(&mut self) -> Option<CallbackId> {
        let highest = self.definitions.iter().map(|d| d.id.0).max().unwrap_or(0);
        let n = self.next_id.max(highest.checked_add(1)?).max(1);
        self.next_id = n.checked_add(1)?;
        Some(CallbackId(n))
    }

    /// Whether `worker` has paused all callbacks.
    pub fn is_paused(&self, worker: &str) -> bool {
        self.paused.contains(worker)
    }

    /// Whether `id` is switched on for `worker` (ignoring a pause).
    pub fn is_active(&self, worker: &str, id: CallbackId) -> bool {
        self.active.get(worker).is_some_and(|set| set.contains(&id))
    }

    /// Whether `id` fires for `worker`: switched on and not paused.
    pub fn fires_for(&self, worker: &str, id: CallbackId) -> bool {
        !self.is_paused(worker) && self.is_active(worker, id)
    }

    pub fn set_active(&mut self, worker: &str, id: CallbackId, on: bool) {
        let set = self.active.entry(worker.to_owned()).or_default();
        if on {
            set.insert(id);
        } else {
            set.remove(&id);
            if set.is_empty() {
                self.active.remove(worker);
            }
        }
    }

    /// Removes a definition and every worker's activation of it.
    pub fn remove(&mut self, id: CallbackId) -> Option<CallbackDef> {
        let index = self.definitions.iter().position(|d| d.id == id)?;
        for set in self.active.values_mut() {
            set.remove(&id);
        }
        self.active.retain(|_, set| !set.is_empty());
        Some(self.definitions.remove(index))
    }

    /// The definitions that fire for `worker`.
    pub fn firing_for<'a>(&'a self, worker: &'a str) -> impl Iterator<Item = &'a CallbackDef> {
        self.definitions
            .iter()
            .filter(move |d| self.fires_for(worker, d.id))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn ids_parse_and_print() {
        assert_eq!("CB12".parse::<CallbackId>().unwrap(), CallbackId(12));
        assert_eq!("cb3".parse::<CallbackId>().unwrap().to_string(), "CB3");
        for bad in ["", "CB", "CB0", "CBx", "12", "CB-1", "CB1 "] {
            assert!(bad.parse::<CallbackId>().is_err(), "{bad}");
        }
    }

    #[test]
    fn reads_a_single_pattern_string_and_defaults() {
        let def: CallbackDef = serde_json::from_value(json!({
            "id": "CB4", "name": "x", "pattern": "*.rs"
        }))
        .unwrap();
        assert_eq!(def.pattern, vec!["*.rs"]);
        assert!(def.once_per_batch && !def.blocking && !def.one_at_a_time);
        assert_eq!(
            serde_json::to_value(&def).unwrap()["pattern"],
            json!(["*.rs"])
        );
    }

    /// A background callback on every file.
    fn plain(id: CallbackId, name: &str) -> CallbackDef {
        CallbackDef {
            id,
            name: name.into(),
            description: String::new(),
            pattern: vec!["*".into()],
            blocking: false,
            timeout: None,
            success_message: None,
            cwd: None,
            one_at_a_time: false,
            once_per_batch: true,
        }
    }

    #[test]
    fn ids_are_never_reused_after_delete() {
        let mut s = CallbackSection {
            next_id: 1,
            ..CallbackSection::default()
        };
        let a = s.allocate_id().unwrap();
        let b = s.allocate_id().unwrap();
        assert_eq!((a, b), (CallbackId(1), CallbackId(2)));
        s.definitions.push(plain(b, "b"));
        s.set_active("main", b, true);
        assert!(s.remove(b).is_some());
        assert!(s.active.is_empty());
        assert_eq!(s.allocate_id(), Some(CallbackId(3)));
    }

    /// Found by the `config` fuzz target: a hand-edited `next_id` or id of `u64::MAX`
    /// overflowed the counter (a panic in debug builds, a reused id in release builds).
    #[test]
    fn a_huge_counter_or_id_is_reported_not_overflowed() {
        let mut s = CallbackSection {
            next_id: u64::MAX,
            ..CallbackSection::default()
        };
        assert_eq!(s.allocate_id(), None);
        assert_eq!(s.next_id, u64::MAX, "nothing changes on failure");
        let mut s = CallbackSection::default();
        s.definitions.push(plain(CallbackId(u64::MAX), "last"));
        assert_eq!(s.allocate_id(), None);
        s.definitions[0].id = CallbackId(u64::MAX - 1);
        assert_eq!(s.allocate_id(), None, "the counter itself would overflow");
        s.definitions[0].id = CallbackId(u64::MAX - 2);
        assert_eq!(s.allocate_id(), Some(CallbackId(u64::MAX - 1)));
    }

    #[test]
    fn activation_is_per_worker_and_pause_overrides() {
        let mut s = CallbackSection::default();
        s.set_active("main", CallbackId(1), true);
        assert!(s.fires_for("main", CallbackId(1)));
        assert!(!s.fires_for("other", CallbackId(1)));
        s.paused.insert("main".into());
        assert!(!s.fires_for("main", CallbackId(1)));
        assert!(s.is_active("main", CallbackId(1)));
    }
}
