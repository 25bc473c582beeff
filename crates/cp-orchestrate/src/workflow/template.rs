//! `{{var}}` substitution in prompts and `show_files`.

use serde_json::Value;

/// The names of every `{{name}}` in `text` (spaces inside the braces are ignored).
pub(crate) fn placeholders(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else { break };
        names.push(after[..end].trim().to_owned());
        rest = &after[end + 2..];
    }
    names
}

/// A value as it reads inside text: strings bare, everything else as JSON.
pub(crate) fn display_value(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A `{{name}}` that has no value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{{{{{name}}}}} has no value; define it under vars:")]
pub struct UnknownPlaceholder {
    /// The name between the braces.
    pub name: String,
}

/// Replaces each `{{name}}` with `lookup(name)`; the first unknown name is the error.
pub(crate) fn substitute(
    text: &str,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<String, UnknownPlaceholder> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else { break };
        let name = after[..end].trim();
        let value = lookup(name).ok_or_else(|| UnknownPlaceholder {
            name: name.to_owned(),
        })?;
        out.push_str(&rest[..start]);
        out.push_str(&value);
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Follows a dotted path (`feature.flags.0`) through JSON objects and arrays.
pub(crate) fn lookup_path<'a>(root: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(root, |value, key| match value {
        Value::Object(map) => map.get(key),
        Value::Array(items) => key.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn substitutes_names_and_reports_the_first_unknown() {
        let ctx = json!({"out": "docs", "n": 3, "feature": {"flags": ["a", "b"]}});
        let look = |name: &str| lookup_path(&ctx, name).map(display_value);
        assert_eq!(
            substitute("{{out}}/plan-{{ n }}.md {{feature.flags.1}}", look).unwrap(),
            "docs/plan-3.md b"
        );
        let unknown = substitute("{{out}} {{nope}}", look).unwrap_err();
        assert_eq!(unknown.name, "nope");
        assert_eq!(
            unknown.to_string(),
            "{{nope}} has no value; define it under vars:"
        );
        assert_eq!(
            substitute("no vars, {{ unclosed", look).unwrap(),
            "no vars, {{ unclosed"
        );
        assert_eq!(placeholders("{{a}} x {{ b.c }}"), ["a", "b.c"]);
    }
}
