//! The LLM section of config.json, parsed and type-checked.

use serde_json::Value;

use super::error::{ConfigError, SECTION_KEYS};
use super::kind::ProviderKind;
use crate::price::Price;

/// The parsed, type-checked LLM section of config.json.
#[derive(Default)]
pub(super) struct Section {
    pub(super) provider: Option<ProviderKind>,
    pub(super) model: Option<String>,
    pub(super) base_url: Option<String>,
    pub(super) context_window: Option<u64>,
    pub(super) max_output_tokens: Option<u32>,
    pub(super) price: Option<Price>,
}

impl Section {
    /// Parses the section strictly: an unknown key or a value of the wrong type is an error.
    pub(super) fn parse(value: Option<&Value>) -> Result<Self, ConfigError> {
        let Some(value) = value else {
            return Ok(Self::default());
        };
        let Value::Object(map) = value else {
            return Err(ConfigError::BadValue {
                key: "(section)",
                expected: "an object such as {\"provider\": \"anthropic\"}",
                got: abbreviated(value),
            });
        };
        if let Some(key) = map.keys().find(|key| !SECTION_KEYS.contains(&key.as_str())) {
            return Err(ConfigError::UnknownKey { key: key.clone() });
        }
        let string = |key: &'static str| -> Result<Option<String>, ConfigError> {
            match map.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(text)) if !text.trim().is_empty() => Ok(Some(text.clone())),
                Some(other) => Err(ConfigError::BadValue {
                    key,
                    expected: "a non-empty string",
                    got: abbreviated(other),
                }),
            }
        };
        let positive = |key: &'static str| -> Result<Option<u64>, ConfigError> {
            match map.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Number(n)) if n.as_u64().is_some_and(|n| n > 0) => Ok(n.as_u64()),
                Some(other) => Err(ConfigError::BadValue {
                    key,
                    expected: "a positive whole number such as 200000",
                    got: abbreviated(other),
                }),
            }
        };
        let provider = match string("provider")? {
            None => None,
            Some(value) => Some(ProviderKind::parse(&value).ok_or(
                ConfigError::UnknownProvider {
                    value,
                    origin: "config.json provider",
                },
            )?),
        };
        let max_output_tokens = match positive("max_output_tokens")? {
            None => None,
            Some(n) => Some(u32::try_from(n).map_err(|_| ConfigError::BadValue {
                key: "max_output_tokens",
                expected: "a positive whole number below 4294967296",
                got: n.to_string(),
            })?),
        };
        Ok(Self {
            provider,
            model: string("model")?,
            base_url: string("base_url")?,
            context_window: positive("context_window")?,
            max_output_tokens,
            price: map.get("price").map(parse_price).transpose()?,
        })
    }
}

/// `{"input": 3, "cached_input": 0.3, "cache_write": 3.75, "output": 15}` (dollars per
/// million tokens; `cached_input` and `cache_write` default to `input`).
fn parse_price(value: &Value) -> Result<Price, ConfigError> {
    let bad = || ConfigError::BadValue {
        key: "price",
        expected: "an object of dollars per million tokens such as {\"input\": 3, \
                   \"cached_input\": 0.3, \"cache_write\": 3.75, \"output\": 15}",
        got: abbreviated(value),
    };
    let map = value.as_object().ok_or_else(bad)?;
    let known = ["input", "cached_input", "cache_write", "output"];
    if map.keys().any(|k| !known.contains(&k.as_str())) {
        return Err(bad());
    }
    let field = |name: &str| -> Result<Option<f64>, ConfigError> {
        match map.get(name) {
            None => Ok(None),
            Some(v) => v
                .as_f64()
                .filter(|n| n.is_finite() && *n >= 0.0)
                .map(Some)
                .ok_or_else(bad),
        }
    };
    let input = field("input")?.ok_or_else(bad)?;
    Ok(Price {
        input,
        cached_input: field("cached_input")?.unwrap_or(input),
        cache_write: field("cache_write")?.unwrap_or(input),
        output: field("output")?.ok_or_else(bad)?,
    })
}

fn abbreviated(value: &Value) -> String {
    crate::error::abbreviate(&value.to_string(), 60)
}
