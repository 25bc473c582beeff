//! Small helpers for describing JSON values in error messages.

use serde_json::Value;

/// What kind of JSON value `value` is, with its article, for messages such as "expected an
/// object, got an array".
///
/// ```
/// use serde_json::json;
/// assert_eq!(cp_base::json_kind(&json!([1, 2])), "an array");
/// assert_eq!(cp_base::json_kind(&json!(null)), "null");
/// ```
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
