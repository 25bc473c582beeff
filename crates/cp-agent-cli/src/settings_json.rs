//! JSON documents edited in place: key order is kept, so a merge only shows what changed.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// A JSON value whose objects keep their key order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Json {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Json>),
    Object(IndexMap<String, Json>),
}

impl Json {
    pub fn str(s: impl Into<String>) -> Self {
        Self::String(s.into())
    }

    pub fn object<const N: usize>(entries: [(&str, Json); N]) -> Self {
        Self::Object(
            entries
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        )
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Self::Object(map) => map.get(key),
            _ => None,
        }
    }

    /// The object under `key`, created when missing. `None` when either is not an object:
    /// we never replace something the user wrote with a different type.
    pub fn object_at(&mut self, key: &str) -> Option<&mut IndexMap<String, Json>> {
        let Self::Object(map) = self else {
            return None;
        };
        match map
            .entry(key.to_owned())
            .or_insert_with(|| Json::Object(IndexMap::new()))
        {
            Json::Object(inner) => Some(inner),
            _ => None,
        }
    }

    /// The array under `key`, created when missing; `None` when it is something else.
    pub fn array_at(&mut self, key: &str) -> Option<&mut Vec<Json>> {
        let Self::Object(map) = self else {
            return None;
        };
        match map
            .entry(key.to_owned())
            .or_insert_with(|| Json::Array(Vec::new()))
        {
            Json::Array(items) => Some(items),
            _ => None,
        }
    }

    /// Two-space indented text with a final newline, as the agents write their settings.
    pub fn pretty(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_keep_key_order_and_values() {
        let text = "{\n  \"z\": 1,\n  \"a\": [\n    true,\n    null,\n    2.5,\n    \"s\"\n  ],\n  \"m\": {\n    \"y\": {},\n    \"b\": []\n  }\n}\n";
        let doc: Json = serde_json::from_str(text).unwrap();
        assert_eq!(doc.pretty(), text);
    }
}
