//! Typed access to tool arguments that have already passed schema validation.
//!
//! Validation guarantees types, so these accessors mostly cannot fail; they still return
//! errors instead of panicking, because a handler may be called with a schema that is looser
//! than the handler assumed.

use serde_json::{Map, Value};

use crate::tool::ToolResult;

/// Borrowed view of a tool's arguments object.
#[derive(Debug, Clone, Copy)]
pub struct Args<'a> {
    tool: &'a str,
    map: Option<&'a Map<String, Value>>,
}

impl<'a> Args<'a> {
    pub fn new(tool: &'a str, value: &'a Value) -> Self {
        Self {
            tool,
            map: value.as_object(),
        }
    }

    fn raw(&self, key: &str) -> Option<&'a Value> {
        self.map.and_then(|m| m.get(key)).filter(|v| !v.is_null())
    }

    /// True when the parameter was given (and is not null).
    pub fn has(&self, key: &str) -> bool {
        self.raw(key).is_some()
    }

    fn type_error(&self, key: &str, expected: &str) -> ToolResult {
        ToolResult::error(format!("{}: '{key}' must be {expected}", self.tool))
    }

    fn missing(&self, key: &str) -> ToolResult {
        ToolResult::error(format!("{}: missing required parameter '{key}'", self.tool))
    }

    pub fn opt_str(&self, key: &str) -> Result<Option<&'a str>, ToolResult> {
        match self.raw(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(self.type_error(key, "a string")),
        }
    }

    pub fn str(&self, key: &str) -> Result<&'a str, ToolResult> {
        self.opt_str(key)?.ok_or_else(|| self.missing(key))
    }

    pub fn opt_bool(&self, key: &str) -> Result<Option<bool>, ToolResult> {
        match self.raw(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(self.type_error(key, "a boolean")),
        }
    }

    pub fn bool(&self, key: &str) -> Result<bool, ToolResult> {
        self.opt_bool(key)?.ok_or_else(|| self.missing(key))
    }

    pub fn opt_u64(&self, key: &str) -> Result<Option<u64>, ToolResult> {
        match self.raw(key) {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .or_else(|| {
                    // 3.0 is a valid integer in JSON Schema; read it through its text form.
                    v.as_f64()
                        .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= 9.0e15)
                        .and_then(|f| format!("{f:.0}").parse().ok())
                })
                .map(Some)
                .ok_or_else(|| self.type_error(key, "a non-negative integer")),
        }
    }

    pub fn opt_f64(&self, key: &str) -> Result<Option<f64>, ToolResult> {
        match self.raw(key) {
            None => Ok(None),
            Some(v) => v
                .as_f64()
                .map(Some)
                .ok_or_else(|| self.type_error(key, "a number")),
        }
    }

    /// A string or an array of strings, as a list (for parameters like `pattern`).
    pub fn opt_str_list(&self, key: &str) -> Result<Option<Vec<String>>, ToolResult> {
        match self.raw(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(vec![s.clone()])),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| item.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .map(Some)
                .ok_or_else(|| self.type_error(key, "a string or an array of strings")),
            Some(_) => Err(self.type_error(key, "a string or an array of strings")),
        }
    }

    pub fn opt_value(&self, key: &str) -> Option<&'a Value> {
        self.raw(key)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_typed_values_and_reports_mismatches() {
        let v = json!({"s": "x", "b": true, "n": 3.0, "l": ["a", "b"], "z": null});
        let a = Args::new("T", &v);
        assert_eq!(a.str("s").unwrap(), "x");
        assert!(a.bool("b").unwrap());
        assert_eq!(a.opt_u64("n").unwrap(), Some(3));
        assert_eq!(a.opt_str_list("l").unwrap().unwrap(), vec!["a", "b"]);
        assert_eq!(a.opt_str_list("s").unwrap().unwrap(), vec!["x"]);
        assert!(!a.has("z"));
        assert_eq!(
            a.str("missing").unwrap_err().text,
            "T: missing required parameter 'missing'"
        );
        assert!(a.str("b").unwrap_err().is_error);
        assert!(a.opt_u64("s").is_err());
    }
}
