//! The command palette: pick a tool, give its arguments, run it; and what each key does in
//! it. (Drawing it is `palette_view.rs`.)
//!
//! The query is `ToolName args…`, where args are a JSON object or `key=value` pairs. Values
//! parse as JSON when they can (`limit=5`, `replace_all=true`, `pattern=["*.rs"]`), else as
//! strings; quote values with spaces: `content="hello world"`.

pub(crate) mod palette_view;
pub(crate) mod tool_jobs;

use cp_base::ToolDef;

use crate::keymap::Action;
use serde_json::{Map, Value};

/// Why the palette's query cannot run.
#[derive(Debug, thiserror::Error)]
pub enum PaletteError {
    #[error("no tool matches '{0}'")]
    NoTool(String),
    #[error("arguments are not valid JSON: {0}")]
    Json(#[source] serde_json::Error),
    #[error("arguments must be a JSON object")]
    NotAnObject,
    #[error("'{0}' is not key=value; example: file_path=notes.txt content=\"hello world\"")]
    NotKeyValue(String),
    #[error("'{0}' has an empty key")]
    EmptyKey(String),
    #[error("the value of '{0}' has an unclosed bracket")]
    UnclosedBracket(String),
    #[error("the value of '{key}' is not valid JSON: {source}")]
    ValueJson {
        key: String,
        source: serde_json::Error,
    },
    #[error("dangling backslash")]
    DanglingBackslash,
    #[error("unclosed {0} quote")]
    UnclosedQuote(char),
}

/// What the app does after a key in the palette.
#[derive(Debug, Clone, PartialEq)]
pub enum PaletteStep {
    Stay,
    Close,
    /// Close the palette and run this tool with these arguments.
    Run(String, Value),
}

/// Palette state: the query line and the highlighted tool.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Palette {
    pub query: crate::input::InputBox,
    pub selected: usize,
    pub error: Option<String>,
}

impl Palette {
    /// The tool-name part of the query.
    fn name_part(&self) -> &str {
        self.query.text().split_whitespace().next().unwrap_or("")
    }

    /// Tools whose name contains the typed name (case-insensitive), best matches first.
    pub fn matches<'a>(&self, tools: &'a [ToolDef]) -> Vec<&'a ToolDef> {
        let needle = self.name_part().to_lowercase();
        let mut found: Vec<&ToolDef> = tools
            .iter()
            .filter(|t| t.name.to_lowercase().contains(&needle))
            .collect();
        found.sort_by_key(|t| !t.name.to_lowercase().starts_with(&needle));
        found
    }

    /// Replaces the typed name with the highlighted tool's name (Tab).
    pub fn complete(&mut self, tools: &[ToolDef]) {
        let matches = self.matches(tools);
        if let Some(tool) = matches.get(self.selected.min(matches.len().saturating_sub(1))) {
            let rest = self.query.text().trim_start();
            let rest = rest.split_once(char::is_whitespace).map_or("", |(_, r)| r);
            self.query.set(format!("{} {rest}", tool.name));
        }
    }

    /// Applies one key; `tools` are the tools it offers. A query that cannot run shows why.
    pub fn apply(&mut self, action: Action, tools: &[ToolDef]) -> PaletteStep {
        self.error = None;
        match action {
            Action::Back | Action::Quit => return PaletteStep::Close,
            Action::Submit => match self.invocation(tools) {
                Ok((name, args)) => return PaletteStep::Run(name, args),
                Err(e) => self.error = Some(e.to_string()),
            },
            Action::FocusNext => self.complete(tools),
            Action::Up => self.selected = self.selected.saturating_sub(1),
            Action::Down => {
                let count = self.matches(tools).len();
                self.selected = (self.selected + 1).min(count.saturating_sub(1));
            }
            Action::Char(c) => {
                self.query.insert(c);
                self.selected = 0;
            }
            Action::Paste(s) => self.query.insert_str(&s),
            Action::Backspace => {
                self.query.backspace();
                self.selected = 0;
            }
            Action::Delete => self.query.delete(),
            Action::Edit(op) => {
                self.query.edit(op);
                self.selected = 0;
            }
            Action::Left => self.query.left(),
            Action::Right => self.query.right(),
            Action::Home => self.query.home(),
            Action::End => self.query.end(),
            _ => {}
        }
        PaletteStep::Stay
    }

    /// The tool and arguments to run, from the query and the highlighted match.
    pub fn invocation(&self, tools: &[ToolDef]) -> Result<(String, Value), PaletteError> {
        let text = self.query.text().trim();
        let (typed, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
        let name = if let Some(exact) = tools.iter().find(|t| t.name == typed) {
            exact.name.clone()
        } else {
            let matches = self.matches(tools);
            match matches.get(self.selected) {
                Some(tool) => tool.name.clone(),
                None => return Err(PaletteError::NoTool(typed.to_owned())),
            }
        };
        Ok((name, parse_arguments(rest)?))
    }
}

/// One parameter of a tool, read from its JSON Schema, for the palette to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    /// `string`, `integer`, `array of string`, … (`any` when the schema does not say).
    pub kind: String,
    pub required: bool,
    /// The allowed values, when the schema lists them.
    pub choices: Vec<String>,
    /// The first sentence of its description.
    pub summary: String,
}

/// The parameters of a tool's schema: required ones first, each group in the order the
/// schema's properties iterate.
pub fn params(schema: &Value) -> Vec<Param> {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema["properties"].as_object() else {
        return Vec::new();
    };
    let mut out: Vec<Param> = properties
        .iter()
        .map(|(name, spec)| Param {
            name: name.clone(),
            kind: kind_of(spec),
            required: required.contains(&name.as_str()),
            choices: spec["enum"]
                .as_array()
                .map(|e| {
                    e.iter()
                        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                        .collect()
                })
                .unwrap_or_default(),
            summary: spec["description"]
                .as_str()
                .unwrap_or_default()
                .split(". ")
                .next()
                .unwrap_or_default()
                .trim_end_matches('.')
                .to_owned(),
        })
        .collect();
    out.sort_by_key(|p| !p.required);
    out
}

/// `string`, `array of string`, `string or array`, … from a property's schema.
fn kind_of(spec: &Value) -> String {
    match &spec["type"] {
        Value::String(t) if t == "array" => match spec["items"]["type"].as_str() {
            Some(item) => format!("array of {item}"),
            None => "array".to_owned(),
        },
        Value::String(t) => t.clone(),
        Value::Array(types) => types
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        _ => "any".to_owned(),
    }
}

/// Parses the arguments of `context-pilot tool NAME ARGS…` as a shell passed them: one JSON
/// object (maybe split into several words), or one `key=value` pair per word. The shell has
/// already taken the quotes off, so `content="hello world"` arrives as the one word
/// `content=hello world`, and its value is everything after the first `=`. A value is JSON
/// when it parses (`limit=5`, `p=["*.rs"]`), else a string; one still in quotes (typed as
/// `n='"5"'`) is that string.
pub fn parse_argv(args: &[String]) -> Result<Value, PaletteError> {
    if args
        .first()
        .is_some_and(|a| a.trim_start().starts_with('{'))
    {
        return parse_arguments(&args.join(" "));
    }
    let mut map = Map::new();
    for arg in args {
        let Some((key, raw)) = arg.split_once('=') else {
            return Err(PaletteError::NotKeyValue(arg.clone()));
        };
        if key.is_empty() {
            return Err(PaletteError::EmptyKey(arg.clone()));
        }
        let value = match raw.chars().next() {
            Some(q @ ('"' | '\'')) => match quoted(raw, q) {
                Ok((value, used)) if used == raw.len() => value,
                _ => Value::String(raw.to_owned()),
            },
            Some('[' | '{') => {
                serde_json::from_str(raw).map_err(|source| PaletteError::ValueJson {
                    key: key.to_owned(),
                    source,
                })?
            }
            _ => serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned())),
        };
        map.insert(key.to_owned(), value);
    }
    Ok(Value::Object(map))
}

/// Parses arguments given as a JSON object or as `key=value` pairs.
pub fn parse_arguments(text: &str) -> Result<Value, PaletteError> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    if text.starts_with('{') {
        return serde_json::from_str::<Value>(text)
            .map_err(PaletteError::Json)
            .and_then(|v| {
                if v.is_object() {
                    Ok(v)
                } else {
                    Err(PaletteError::NotAnObject)
                }
            });
    }
    let mut map = Map::new();
    let mut rest = text;
    while !rest.is_empty() {
        let (key, value, tail) = next_pair(rest)?;
        map.insert(key, value);
        rest = tail.trim_start();
    }
    Ok(Value::Object(map))
}

/// Reads one `key=value` pair from the start of `text`; returns it and the rest.
///
/// Values: "double" or 'single' quoted strings (double quotes understand `\n`, `\t`, `\"`,
/// `\\`), JSON arrays and objects (balanced, may hold spaces), or bare words, which become
/// JSON when they parse (`5`, `true`) and strings otherwise.
fn next_pair(text: &str) -> Result<(String, Value, &str), PaletteError> {
    let word_end = text.find(char::is_whitespace).unwrap_or(text.len());
    let Some(eq) = text[..word_end].find('=') else {
        return Err(PaletteError::NotKeyValue(text[..word_end].to_owned()));
    };
    let key = &text[..eq];
    if key.is_empty() {
        return Err(PaletteError::EmptyKey(text[..word_end].to_owned()));
    }
    let value_text = &text[eq + 1..];
    let (value, used) = match value_text.chars().next() {
        Some(q @ ('"' | '\'')) => quoted(value_text, q)?,
        Some('[' | '{') => {
            let end = balanced_end(value_text)
                .ok_or_else(|| PaletteError::UnclosedBracket(key.to_owned()))?;
            let raw = &value_text[..end];
            let value = serde_json::from_str(raw).map_err(|source| PaletteError::ValueJson {
                key: key.to_owned(),
                source,
            })?;
            (value, end)
        }
        _ => {
            let end = value_text
                .find(char::is_whitespace)
                .unwrap_or(value_text.len());
            let raw = &value_text[..end];
            let value = serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned()));
            (value, end)
        }
    };
    Ok((key.to_owned(), value, &value_text[used..]))
}

/// A quoted string starting at `text[0] == quote`; returns it and the bytes consumed.
fn quoted(text: &str, quote: char) -> Result<(Value, usize), PaletteError> {
    let mut out = String::new();
    let mut chars = text.char_indices().skip(1);
    while let Some((i, c)) = chars.next() {
        match c {
            c if c == quote => return Ok((Value::String(out), i + c.len_utf8())),
            '\\' if quote == '"' => match chars.next() {
                Some((_, 'n')) => out.push('\n'),
                Some((_, 't')) => out.push('\t'),
                Some((_, other)) => out.push(other),
                None => return Err(PaletteError::DanglingBackslash),
            },
            other => out.push(other),
        }
    }
    Err(PaletteError::UnclosedQuote(quote))
}

/// End (exclusive) of the JSON array or object starting at `text[0]`, honouring strings.
fn balanced_end(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '[' | '{' => depth += 1,
            ']' | '}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_command_line_takes_one_pair_a_word_as_the_shell_split_them() {
        // `context-pilot tool File_write file_path=notes.txt content="hello world" n='"5"'`
        let argv = |words: &[&str]| words.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>();
        let v = parse_argv(&argv(&[
            "file_path=notes.txt",
            "content=hello world",
            "n=\"5\"",
            "limit=5",
            "p=[\"*.rs\", \"a b\"]",
            "eq=a=b",
        ]))
        .unwrap();
        assert_eq!(
            v,
            json!({"file_path": "notes.txt", "content": "hello world", "n": "5", "limit": 5,
                   "p": ["*.rs", "a b"], "eq": "a=b"})
        );
        assert_eq!(
            parse_argv(&argv(&["{\"a\":", "1}"])).unwrap(),
            json!({"a": 1})
        );
        assert_eq!(parse_argv(&[]).unwrap(), json!({}));
        let err = parse_argv(&argv(&["oops"])).unwrap_err();
        assert!(err.to_string().contains("'oops' is not key=value"), "{err}");
    }

    #[test]
    fn parses_key_values_with_json_and_quotes() {
        let v = parse_arguments(
            r#"file_path=a.txt content="hello world\n" limit=5 all=true p=["*.rs", "!a b"] s='x y'"#,
        )
        .unwrap();
        assert_eq!(
            v,
            json!({"file_path": "a.txt", "content": "hello world\n", "limit": 5, "all": true,
                   "p": ["*.rs", "!a b"], "s": "x y"})
        );
        assert_eq!(parse_arguments(r#"{"a": 1}"#).unwrap(), json!({"a": 1}));
        assert_eq!(parse_arguments("").unwrap(), json!({}));
        assert_eq!(parse_arguments(r#"n="5""#).unwrap(), json!({"n": "5"}));
    }

    #[test]
    fn reports_bad_argument_text() {
        assert!(
            parse_arguments("novalue")
                .unwrap_err()
                .to_string()
                .contains("not key=value")
        );
        assert!(
            parse_arguments("a=\"open")
                .unwrap_err()
                .to_string()
                .contains("unclosed")
        );
        assert!(
            parse_arguments("{nope")
                .unwrap_err()
                .to_string()
                .contains("not valid JSON")
        );
        assert!(
            parse_arguments("[1]")
                .unwrap_err()
                .to_string()
                .contains("not key=value")
        );
    }

    #[test]
    fn reads_parameters_from_the_schema_required_first() {
        let schema = json!({
            "type": "object",
            "required": ["id"],
            "properties": {
                "mode": {"type": "string", "enum": ["fast", "full"], "description": "How. More."},
                "paths": {"type": "array", "items": {"type": "string"}},
                "id": {"type": "string", "description": "Callback id, e.g. CB1."}
            }
        });
        let got = params(&schema);
        let names: Vec<&str> = got.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["id", "mode", "paths"]);
        assert!(got[0].required && !got[1].required);
        assert_eq!(got[1].choices, ["fast", "full"]);
        assert_eq!(got[1].summary, "How");
        assert_eq!(got[2].kind, "array of string");
        assert!(params(&json!({})).is_empty());
    }

    #[test]
    fn picks_exact_or_highlighted_tool() {
        let tools = vec![
            ToolDef::new("File_read", "", json!({})),
            ToolDef::new("File_write", "", json!({})),
        ];
        let mut p = Palette::default();
        p.query.set("write a=1");
        assert_eq!(
            p.invocation(&tools).unwrap(),
            ("File_write".into(), json!({"a": 1}))
        );
        p.query.set("File_read");
        assert_eq!(p.invocation(&tools).unwrap().0, "File_read");
        p.query.set("zzz");
        assert!(p.invocation(&tools).is_err());
        p.query.set("wri");
        p.complete(&tools);
        assert_eq!(p.query.text(), "File_write ");
    }
}
