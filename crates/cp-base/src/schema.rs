//! Validation of tool arguments against the subset of JSON Schema that tool definitions use.
//!
//! Supported keywords: `type` (one name or a list), `properties`, `required`,
//! `additionalProperties: false`, `enum`, `minimum`, `maximum`, `minLength`, `maxLength`,
//! `items`, `minItems`, `maxItems` and `examples` (used in error messages). Unknown keywords are
//! ignored, as JSON Schema says. Validation never panics, whatever the schema or the value.

use std::fmt;

use serde_json::{Map, Value};

/// What is wrong with one argument.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgProblem {
    /// The arguments are not a JSON object at all.
    NotAnObject {
        got: String,
    },
    Missing,
    Unknown {
        allowed: Vec<String>,
    },
    WrongType {
        expected: String,
        got: String,
    },
    NotInEnum {
        allowed: Vec<String>,
        got: String,
    },
    OutOfRange {
        min: Option<f64>,
        max: Option<f64>,
        got: String,
    },
    BadLength {
        min: Option<u64>,
        max: Option<u64>,
        got: u64,
        unit: &'static str,
    },
}

/// A validation error: which parameter, what is wrong, and an example when the schema has one.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgError {
    pub tool: String,
    /// Parameter path, e.g. `timeout` or `pattern[2]`. Empty for the arguments object itself.
    pub param: String,
    pub problem: ArgProblem,
    pub example: Option<String>,
}

impl fmt::Display for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.tool)?;
        match &self.problem {
            ArgProblem::NotAnObject { got } => {
                write!(f, "arguments must be a JSON object, got {got}")?;
            }
            ArgProblem::Missing => write!(f, "missing required parameter '{}'", self.param)?,
            ArgProblem::Unknown { allowed } => write!(
                f,
                "unknown parameter '{}'; expected one of: {}",
                self.param,
                allowed.join(", ")
            )?,
            ArgProblem::WrongType { expected, got } => {
                write!(f, "'{}' must be {expected}, got {got}", self.param)?;
            }
            ArgProblem::NotInEnum { allowed, got } => write!(
                f,
                "'{}' must be one of {}, got {got}",
                self.param,
                allowed.join(", ")
            )?,
            ArgProblem::OutOfRange { min, max, got } => {
                write!(f, "'{}' is {got}, ", self.param)?;
                match (min, max) {
                    (Some(lo), Some(hi)) => write!(f, "expected {lo} to {hi}")?,
                    (Some(lo), None) => write!(f, "expected at least {lo}")?,
                    (None, Some(hi)) => write!(f, "expected at most {hi}")?,
                    (None, None) => write!(f, "out of range")?,
                }
            }
            ArgProblem::BadLength {
                min,
                max,
                got,
                unit,
            } => {
                write!(f, "'{}' has {got} {unit}, ", self.param)?;
                match (min, max) {
                    (Some(lo), Some(hi)) => write!(f, "expected {lo} to {hi}")?,
                    (Some(lo), None) => write!(f, "expected at least {lo}")?,
                    (None, Some(hi)) => write!(f, "expected at most {hi}")?,
                    (None, None) => write!(f, "bad length")?,
                }
            }
        }
        if let Some(example) = &self.example {
            write!(f, "; example: {example}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ArgError {}

/// Checks `args` against `schema` and returns the first problem found.
pub fn validate_args(tool: &str, schema: &Value, args: &Value) -> Result<(), Box<ArgError>> {
    let Value::Object(obj) = args else {
        return Err(Box::new(ArgError {
            tool: tool.to_owned(),
            param: String::new(),
            problem: ArgProblem::NotAnObject {
                got: describe(args),
            },
            example: None,
        }));
    };
    Validator { tool }.object(schema, obj, "")
}

struct Validator<'a> {
    tool: &'a str,
}

impl Validator<'_> {
    fn err(&self, param: &str, problem: ArgProblem, schema: &Value) -> Box<ArgError> {
        Box::new(ArgError {
            tool: self.tool.to_owned(),
            param: param.to_owned(),
            problem,
            example: example_of(schema),
        })
    }

    fn object(
        &self,
        schema: &Value,
        obj: &Map<String, Value>,
        prefix: &str,
    ) -> Result<(), Box<ArgError>> {
        let props = schema.get("properties").and_then(Value::as_object);
        if let Some(required) = schema.get("required").and_then(Value::as_array) {
            for name in required.iter().filter_map(Value::as_str) {
                if obj.get(name).is_none_or(Value::is_null) {
                    let prop_schema = props.and_then(|p| p.get(name)).unwrap_or(&Value::Null);
                    return Err(self.err(&join(prefix, name), ArgProblem::Missing, prop_schema));
                }
            }
        }
        let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
        for (name, value) in obj {
            match props.and_then(|p| p.get(name)) {
                // An explicit null for an optional parameter means "not given".
                Some(_) if value.is_null() => {}
                Some(prop_schema) => self.value(prop_schema, value, &join(prefix, name))?,
                None if closed => {
                    let allowed = props
                        .map(|p| p.keys().cloned().collect())
                        .unwrap_or_default();
                    return Err(self.err(
                        &join(prefix, name),
                        ArgProblem::Unknown { allowed },
                        &Value::Null,
                    ));
                }
                None => {}
            }
        }
        Ok(())
    }

    fn value(&self, schema: &Value, value: &Value, path: &str) -> Result<(), Box<ArgError>> {
        if let Some(types) = type_names(schema)
            && !types.iter().any(|t| type_matches(t, value))
        {
            let expected = types
                .iter()
                .map(|t| article(t))
                .collect::<Vec<_>>()
                .join(" or ");
            return Err(self.err(
                path,
                ArgProblem::WrongType {
                    expected,
                    got: describe(value),
                },
                schema,
            ));
        }
        if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
            && !allowed.contains(value)
        {
            let allowed = allowed.iter().map(Value::to_string).collect();
            return Err(self.err(
                path,
                ArgProblem::NotInEnum {
                    allowed,
                    got: value.to_string(),
                },
                schema,
            ));
        }
        match value {
            Value::Number(n) => self.range(schema, n.as_f64().unwrap_or(f64::NAN), value, path),
            Value::String(s) => {
                let len = s.chars().count() as u64;
                self.length(schema, "minLength", "maxLength", len, "characters", path)
            }
            Value::Array(items) => {
                self.length(
                    schema,
                    "minItems",
                    "maxItems",
                    items.len() as u64,
                    "items",
                    path,
                )?;
                if let Some(item_schema) = schema.get("items") {
                    for (i, item) in items.iter().enumerate() {
                        self.value(item_schema, item, &format!("{path}[{i}]"))?;
                    }
                }
                Ok(())
            }
            Value::Object(obj) if schema.get("properties").is_some() => {
                self.object(schema, obj, path)
            }
            _ => Ok(()),
        }
    }

    fn range(
        &self,
        schema: &Value,
        n: f64,
        value: &Value,
        path: &str,
    ) -> Result<(), Box<ArgError>> {
        let min = schema.get("minimum").and_then(Value::as_f64);
        let max = schema.get("maximum").and_then(Value::as_f64);
        let below = min.is_some_and(|lo| n < lo);
        let above = max.is_some_and(|hi| n > hi);
        if below || above || n.is_nan() {
            return Err(self.err(
                path,
                ArgProblem::OutOfRange {
                    min,
                    max,
                    got: value.to_string(),
                },
                schema,
            ));
        }
        Ok(())
    }

    fn length(
        &self,
        schema: &Value,
        min_key: &str,
        max_key: &str,
        len: u64,
        unit: &'static str,
        path: &str,
    ) -> Result<(), Box<ArgError>> {
        let min = schema.get(min_key).and_then(Value::as_u64);
        let max = schema.get(max_key).and_then(Value::as_u64);
        if min.is_some_and(|lo| len < lo) || max.is_some_and(|hi| len > hi) {
            return Err(self.err(
                path,
                ArgProblem::BadLength {
                    min,
                    max,
                    got: len,
                    unit,
                },
                schema,
            ));
        }
        Ok(())
    }
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}.{name}")
    }
}

fn type_names(schema: &Value) -> Option<Vec<&str>> {
    match schema.get("type")? {
        Value::String(s) => Some(vec![s.as_str()]),
        Value::Array(list) => Some(list.iter().filter_map(Value::as_str).collect()),
        _ => None,
    }
}

fn type_matches(name: &str, value: &Value) -> bool {
    match name {
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "null" => value.is_null(),
        "number" => value.is_number(),
        // JSON has one number type; 3.0 is an integer, 3.5 is not.
        "integer" => {
            value.is_i64()
                || value.is_u64()
                || value
                    .as_f64()
                    .is_some_and(|f| f.fract() == 0.0 && f.is_finite())
        }
        _ => true,
    }
}

fn article(type_name: &str) -> String {
    match type_name {
        "integer" | "array" | "object" => format!("an {type_name}"),
        "null" => "null".to_owned(),
        other => format!("a {other}"),
    }
}

/// A short description of a value for error messages: its type, and the value when short.
fn describe(value: &Value) -> String {
    let kind = match value {
        Value::Null => return "null".to_owned(),
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => return "an array".to_owned(),
        Value::Object(_) => return "an object".to_owned(),
    };
    let text = value.to_string();
    if text.chars().count() <= 40 {
        format!("{kind} {text}")
    } else {
        kind.to_owned()
    }
}

fn example_of(schema: &Value) -> Option<String> {
    let example = schema.get("examples")?.as_array()?.first()?;
    Some(match example {
        Value::String(s) => format!("`{s}`"),
        other => format!("`{other}`"),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Value {
        json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["name", "mode"],
            "properties": {
                "name": {"type": "string", "minLength": 1, "maxLength": 8, "examples": ["rust-check"]},
                "mode": {"type": "string", "enum": ["exit", "pattern"]},
                "max_wait": {"type": "integer", "minimum": 1, "maximum": 600},
                "pattern": {"type": ["string", "array"], "items": {"type": "string"}},
                "flag": {"type": "boolean"}
            }
        })
    }

    #[expect(
        clippy::needless_pass_by_value,
        reason = "tests read better with json! literals"
    )]
    fn check(args: Value) -> Result<(), Box<ArgError>> {
        validate_args("T", &schema(), &args)
    }

    #[test]
    fn accepts_valid_arguments_and_explicit_nulls() {
        check(json!({"name": "a", "mode": "exit", "max_wait": 5, "pattern": ["x"], "flag": null}))
            .unwrap();
        check(json!({"name": "a", "mode": "exit", "max_wait": 5.0})).unwrap();
    }

    #[test]
    fn arguments_must_be_an_object() {
        let err = check(json!([1])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "T: arguments must be a JSON object, got an array"
        );
        let err = check(json!("x")).unwrap_err();
        assert!(matches!(err.problem, ArgProblem::NotAnObject { .. }));
    }

    #[test]
    fn missing_parameter_is_named_with_an_example() {
        let err = check(json!({"mode": "exit"})).unwrap_err();
        assert_eq!(err.problem, ArgProblem::Missing);
        assert_eq!(
            err.to_string(),
            "T: missing required parameter 'name'; example: `rust-check`"
        );
        let err = check(json!({"name": null, "mode": "exit"})).unwrap_err();
        assert_eq!(err.param, "name");
    }

    #[test]
    fn unknown_parameter_lists_the_allowed_ones() {
        let err = check(json!({"name": "a", "mode": "exit", "nmae": 1})).unwrap_err();
        assert_eq!(err.param, "nmae");
        assert!(
            err.to_string()
                .contains("unknown parameter 'nmae'; expected one of:")
        );
        assert!(err.to_string().contains("max_wait"));
    }

    #[test]
    fn wrong_type_says_expected_and_got() {
        let err = check(json!({"name": "a", "mode": "exit", "max_wait": "5"})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "T: 'max_wait' must be an integer, got string \"5\""
        );
        let err = check(json!({"name": "a", "mode": "exit", "max_wait": 2.5})).unwrap_err();
        assert!(matches!(err.problem, ArgProblem::WrongType { .. }));
        let err = check(json!({"name": "a", "mode": "exit", "pattern": 3})).unwrap_err();
        assert!(
            err.to_string().contains("must be a string or an array"),
            "{err}"
        );
        let err = check(json!({"name": "a", "mode": "exit", "pattern": ["x", 3]})).unwrap_err();
        assert_eq!(err.param, "pattern[1]");
    }

    #[test]
    fn enum_violation_lists_values() {
        let err = check(json!({"name": "a", "mode": "loop"})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "T: 'mode' must be one of \"exit\", \"pattern\", got \"loop\""
        );
    }

    #[test]
    fn range_and_length_violations() {
        let err = check(json!({"name": "a", "mode": "exit", "max_wait": 0})).unwrap_err();
        assert_eq!(err.to_string(), "T: 'max_wait' is 0, expected 1 to 600");
        let err = check(json!({"name": "a", "mode": "exit", "max_wait": 601})).unwrap_err();
        assert!(matches!(err.problem, ArgProblem::OutOfRange { .. }));
        let err = check(json!({"name": "", "mode": "exit"})).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("T: 'name' has 0 characters, expected 1 to 8")
        );
        let err = check(json!({"name": "123456789", "mode": "exit"})).unwrap_err();
        assert!(matches!(err.problem, ArgProblem::BadLength { got: 9, .. }));
    }

    #[test]
    fn never_panics_on_odd_schemas() {
        for schema in [
            json!(null),
            json!(1),
            json!({"type": 5}),
            json!({"properties": []}),
        ] {
            let _ = validate_args("T", &schema, &json!({"a": [1, {"b": null}]}));
        }
        let odd = json!({"properties": {"a": {"type": "integer", "minimum": "x"}}});
        validate_args("T", &odd, &json!({"a": 1e308})).unwrap();
    }
}
