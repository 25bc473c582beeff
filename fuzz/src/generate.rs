//! Structure-aware inputs for the property loops: a seeded PRNG that builds JSON from the
//! vocabulary the targets understand, then sometimes damages the bytes.
//!
//! Deterministic: the same seed gives the same inputs, so a failure names its seed and
//! iteration and can be replayed.

use serde_json::{Map, Value, json};

/// Keys that mean something to a schema, a config section or a hook payload.
const KEYS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "enum",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "items",
    "minItems",
    "maxItems",
    "examples",
    "name",
    "pattern",
    "id",
    "action",
    "file_path",
    "content",
    "timeout",
    "blocking",
    "command",
    "include",
    "exclude",
    "rules",
    "tests",
    "provider",
    "model",
    "base_url",
    "context_window",
    "max_output_tokens",
    "api_key",
    "definitions",
    "active",
    "paused",
    "next_id",
];

/// Strings chosen to reach edge cases: globs, ids, paths, numbers as text, odd unicode.
const STRINGS: &[&str] = &[
    "",
    "string",
    "integer",
    "number",
    "boolean",
    "array",
    "object",
    "null",
    "*.rs",
    "!target/",
    "src/[",
    "**",
    "{a,b",
    "/",
    "!",
    "\\",
    "CB1",
    "CB0",
    "CB18446744073709551615",
    "CB99999999999999999999",
    "all",
    "create",
    "update",
    "delete",
    "../../etc/passwd",
    "/etc/passwd",
    "a\u{0}b",
    "é\u{301}🦀",
    "\u{202e}rtl",
    "anthropic",
    "openai",
    "http://",
    "1e309",
    "-0",
    "main",
    "Write",
    "Edit",
    "MultiEdit",
    "NotebookEdit",
    "write_file",
    "replace",
    "Read",
];

/// A small splitmix64 generator with JSON builders.
#[derive(Debug, Clone)]
pub struct Gen {
    state: u64,
}

impl Gen {
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next_u64() % n.max(1) as u64).unwrap_or(0)
    }

    /// True with probability `1/n`.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    fn key(&mut self) -> String {
        if self.one_in(6) {
            self.string()
        } else {
            (*self.pick(KEYS)).to_owned()
        }
    }

    fn string(&mut self) -> String {
        match self.below(4) {
            0 => {
                let len = self.below(12);
                (0..len)
                    .map(|_| char::from_u32(u32::try_from(self.below(0x3000)).unwrap_or(0x41)))
                    .map(|c| c.unwrap_or('?'))
                    .collect()
            }
            1 => "x".repeat(self.below(300)),
            _ => (*self.pick(STRINGS)).to_owned(),
        }
    }

    fn number(&mut self) -> Value {
        match self.below(6) {
            0 => json!(u64::MAX),
            1 => json!(i64::MIN),
            2 => json!(f64::MAX),
            3 => json!(-0.5),
            4 => json!(0),
            _ => json!(self.next_u64() % 5000),
        }
    }

    /// Any JSON value, nested at most `depth` levels, biased towards known keys and strings.
    pub fn value(&mut self, depth: usize) -> Value {
        let leaf = depth == 0 || self.one_in(3);
        match (leaf, self.below(6)) {
            (true, 0) => Value::Null,
            (true, 1) => Value::Bool(self.one_in(2)),
            (true, 2 | 3) => self.number(),
            (true, _) => Value::String(self.string()),
            (false, 0..=2) => {
                let len = self.below(5);
                Value::Array((0..len).map(|_| self.value(depth - 1)).collect())
            }
            (false, _) => {
                let len = self.below(6);
                let mut map = Map::new();
                for _ in 0..len {
                    let key = self.key();
                    map.insert(key, self.value(depth - 1));
                }
                Value::Object(map)
            }
        }
    }

    /// A schema in the subset tools use, with random twists.
    pub fn schema(&mut self, depth: usize) -> Value {
        if depth == 0 || self.one_in(8) {
            return self.value(2);
        }
        let types = ["string", "integer", "number", "boolean", "array", "object"];
        let mut map = Map::new();
        let ty = if self.one_in(5) {
            json!([self.pick(&types), self.pick(&types)])
        } else {
            json!(self.pick(&types))
        };
        map.insert("type".into(), ty);
        if self.one_in(2) {
            let mut props = Map::new();
            for _ in 0..self.below(5) {
                let key = self.key();
                props.insert(key, self.schema(depth - 1));
            }
            let required: Vec<Value> = props
                .keys()
                .filter(|_| self.one_in(2))
                .map(|k| json!(k))
                .collect();
            map.insert("properties".into(), Value::Object(props));
            map.insert("required".into(), Value::Array(required));
        }
        for key in [
            "enum",
            "minimum",
            "maximum",
            "minLength",
            "maxLength",
            "minItems",
            "maxItems",
            "additionalProperties",
            "examples",
        ] {
            if self.one_in(4) {
                let value = match key {
                    "enum" | "examples" => json!([self.value(1), self.value(1)]),
                    "additionalProperties" => json!(self.one_in(2)),
                    _ => self.number(),
                };
                map.insert(key.into(), value);
            }
        }
        if self.one_in(3) {
            map.insert("items".into(), self.schema(depth - 1));
        }
        Value::Object(map)
    }

    /// Damages `bytes` now and then: flips, truncation, insertion, duplication.
    pub fn mutate(&mut self, mut bytes: Vec<u8>) -> Vec<u8> {
        if self.one_in(2) || bytes.is_empty() {
            return bytes;
        }
        for _ in 0..=self.below(4) {
            let at = self.below(bytes.len().max(1));
            match self.below(5) {
                0 => bytes.truncate(at),
                1 => bytes.insert(at, *self.pick(b"{}[]\",:\\\x00\xff0")),
                2 if at < bytes.len() => {
                    bytes[at] ^= 1 << self.below(8);
                }
                3 if at < bytes.len() => {
                    let tail = bytes[at..].to_vec();
                    bytes.extend_from_slice(&tail);
                }
                _ => {
                    if at < bytes.len() {
                        bytes.remove(at);
                    }
                }
            }
        }
        bytes
    }

    /// An input for [`crate::validate_args`].
    pub fn validate_args_bytes(&mut self) -> Vec<u8> {
        let mode = u8::try_from(self.below(256)).unwrap_or(0);
        let mut out = vec![mode];
        if mode % 2 == 1 {
            let args = if self.one_in(4) {
                // Palette syntax: key=value pairs.
                let mut text = String::new();
                for _ in 0..self.below(4) {
                    let (key, value) = (self.key(), self.string());
                    text.push_str(&key);
                    text.push('=');
                    text.push_str(&value);
                    text.push(' ');
                }
                text
            } else {
                let mut args = self.value(3);
                if let Value::Object(map) = &mut args {
                    map.insert(self.key(), self.value(2));
                }
                args.to_string()
            };
            out.extend_from_slice(args.as_bytes());
        } else {
            out.extend_from_slice(self.schema(4).to_string().as_bytes());
            out.push(b'\n');
            out.extend_from_slice(self.value(4).to_string().as_bytes());
        }
        self.mutate(out)
    }

    /// The bytes of a `config.json`, mostly shaped like the real sections.
    pub fn config_bytes(&mut self) -> Vec<u8> {
        let mut doc = Map::new();
        if !self.one_in(4) {
            let definitions: Vec<Value> = (0..self.below(4))
                .map(|i| {
                    let mut def = json!({
                        "id": if self.one_in(4) { json!(self.string()) } else { json!(format!("CB{}", i + 1)) },
                        "name": if self.one_in(3) { self.string() } else { format!("cb{i}") },
                        "pattern": if self.one_in(2) { json!(self.string()) } else { json!([self.string(), self.string()]) },
                        "blocking": self.one_in(2),
                        "timeout": if self.one_in(4) { self.number() } else { json!(30) },
                    });
                    if self.one_in(3)
                        && let Value::Object(map) = &mut def
                    {
                        map.insert(self.key(), self.value(2));
                    }
                    def
                })
                .collect();
            doc.insert(
                "callbacks".into(),
                json!({
                    "next_id": if self.one_in(2) { self.number() } else { json!(1) },
                    "definitions": definitions,
                    "active": if self.one_in(4) {
                        json!({"main": [self.pick(STRINGS)], (self.string()): ["CB1"]})
                    } else {
                        json!({"main": ["CB1"], "w2": ["CB2", "CB18446744073709551615"]})
                    },
                    "paused": if self.one_in(3) { json!(["main"]) } else { json!([]) },
                }),
            );
        }
        if !self.one_in(4) {
            let rules: Vec<Value> = (0..self.below(3))
                .map(|_| {
                    json!({
                        "name": self.string(),
                        "include": [self.string(), self.string()],
                        "exclude": [self.string()],
                        "instruction": self.string(),
                        "gated": self.one_in(2),
                    })
                })
                .collect();
            doc.insert(
                "checkpoint".into(),
                json!({
                    "rules": rules,
                    "tests": {"command": self.string(), "include": [self.string()], "timeout_secs": self.number()},
                }),
            );
        }
        if !self.one_in(4) {
            let mut llm = Map::new();
            for key in [
                "provider",
                "model",
                "base_url",
                "context_window",
                "max_output_tokens",
                "api_key",
            ] {
                if self.one_in(2) {
                    let value = if self.one_in(2) {
                        json!(self.string())
                    } else {
                        self.value(1)
                    };
                    llm.insert(key.into(), value);
                }
            }
            doc.insert("llm".into(), Value::Object(llm));
        }
        if self.one_in(4) {
            doc.insert(self.key(), self.value(3));
        }
        let doc = if self.one_in(10) {
            self.value(3)
        } else {
            Value::Object(doc)
        };
        self.mutate(doc.to_string().into_bytes())
    }

    /// A hook payload; edits name files in `root` (relative or absolute) or elsewhere.
    pub fn hook_bytes(&mut self, root: &str) -> Vec<u8> {
        let tools = [
            "Write",
            "Edit",
            "MultiEdit",
            "NotebookEdit",
            "write_file",
            "replace",
            "Read",
        ];
        let file = match self.below(5) {
            0 => format!("{root}/src/f{}.rs", self.below(3)),
            1 => format!("src/f{}.rs", self.below(3)),
            2 => "../../outside.txt".to_owned(),
            3 => self.string(),
            _ => "/etc/hosts".to_owned(),
        };
        let mut payload = json!({
            "session_id": self.string(),
            "cwd": if self.one_in(5) { json!(self.string()) } else { json!(root) },
            "hook_event_name": self.pick(&["PostToolUse", "Stop", "AfterTool", "AfterAgent", "?"]),
            "tool_name": self.pick(&tools),
            "tool_input": if self.one_in(6) { self.value(2) } else { json!({"file_path": file, "notebook_path": file, "absolute_path": file}) },
            "tool_response": self.value(2),
            "stop_hook_active": if self.one_in(6) { self.value(0) } else { json!(self.one_in(2)) },
        });
        if self.one_in(4)
            && let Value::Object(map) = &mut payload
        {
            let key = (*self.pick(&["cwd", "tool_name", "tool_input", "session_id"])).to_owned();
            map.remove(&key);
        }
        self.mutate(payload.to_string().into_bytes())
    }

    /// A workflow file: YAML text shaped like the real thing, with odd ids, actions,
    /// targets, JavaScript conditions and, now and then, anchors that expand a lot.
    #[expect(
        clippy::format_push_string,
        reason = "generator code: plain YAML lines read best as format! strings"
    )]
    pub fn workflow_bytes(&mut self) -> Vec<u8> {
        let mut out = String::new();
        out.push_str(&format!(
            "name: {}\n",
            yaml_str(self.pick::<&str>(&["feature", "", "x"]))
        ));
        if self.one_in(3) {
            out.push_str("vars: { output_dir: docs/feature, n: 3 }\n");
        }
        if self.one_in(3) {
            out.push_str("context: { feature: { flags: [backend] } }\n");
        }
        if self.one_in(20) {
            // Nested aliases: a YAML parser must refuse to expand them without bound.
            out.push_str("description: &a [x, x, x, x, x, x, x, x, x]\n");
            for (name, prev) in [
                ("b", "a"),
                ("c", "b"),
                ("d", "c"),
                ("e", "d"),
                ("f", "e"),
                ("g", "f"),
                ("h", "g"),
            ] {
                out.push_str(&format!(
                    "x{name}: &{name} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
                ));
            }
        }
        out.push_str("phases:\n");
        let phases = 1 + self.below(3);
        for i in 0..phases {
            self.workflow_phase(&mut out, i, phases);
        }
        self.mutate(out.into_bytes())
    }

    /// One phase of [`Self::workflow_bytes`]: phase `i` of `phases`.
    #[expect(
        clippy::format_push_string,
        reason = "generator code: plain YAML lines read best as format! strings"
    )]
    fn workflow_phase(&mut self, out: &mut String, i: usize, phases: usize) {
        const IDS: &[&str] = &["plan", "implement", "review", "current", "x y", "", "a.b"];
        const ACTIONS: &[&str] = &["continue", "repeat_phase", "skip_phases", "abort"];
        const CONDITIONS: &[&str] = &[
            "context.phases.iteration_counts[phase.id] > 1",
            "context.feature.flags.includes('backend')",
            "context.nope.deeper",
            "true",
            "1 +",
            "throw new Error('x')",
            "'a'.repeat(1 << 28).length > 0",
            "(function f() { return f(); })()",
            "JSON.stringify(context).length > 0",
            "phase.id === 'plan' && context.vars",
        ];
        let valid_ids = ["plan", "implement", "review"];
        // Mostly valid, unique ids, so most files get past validation.
        let id = if self.one_in(8) {
            *self.pick(IDS)
        } else {
            valid_ids[i]
        };
        out.push_str(&format!("  - id: {}\n", yaml_str(id)));
        let prompt = if self.one_in(10) {
            String::new()
        } else {
            format!("Do {{{{output_dir}}}}/{id} {}", self.string())
        };
        out.push_str(&format!("    prompt: {}\n", yaml_str(&prompt)));
        if self.one_in(3) {
            return;
        }
        out.push_str("    approval:\n");
        // Exactly one of approval_required / options, except now and then.
        let (approval, options) = match self.below(8) {
            0 => (true, true),
            1 => (false, false),
            2..=4 => (true, false),
            _ => (false, true),
        };
        if approval {
            out.push_str("      approval_required: true\n");
        }
        // Infinite loops cost the full condition timeout: keep them rare.
        let condition = if self.one_in(40) {
            "while (true) {}"
        } else {
            self.pick(CONDITIONS)
        };
        if self.one_in(2) {
            out.push_str(&format!("      condition: {}\n", yaml_str(condition)));
        }
        if self.one_in(2) {
            out.push_str("      show_files: [\"{{output_dir}}/plan.md\", \"{{missing}}\"]\n");
        }
        if options {
            out.push_str("      options:\n");
            for _ in 0..=self.below(2) {
                let action = if self.one_in(10) {
                    "jump"
                } else {
                    *self.pick(ACTIONS)
                };
                let target = if self.one_in(6) {
                    *self.pick(IDS)
                } else {
                    valid_ids[self.below(phases)]
                };
                let extra = match action {
                    "repeat_phase" => format!(", target: {}", yaml_str(target)),
                    "skip_phases" => format!(", phases: [{}]", yaml_str(target)),
                    _ if self.one_in(8) => format!(", target: {}", yaml_str(target)),
                    _ => String::new(),
                };
                out.push_str(&format!(
                    "        - {{ label: {}, with_feedback: {}, on_select: {{ action: {action}{extra} }} }}\n",
                    yaml_str(&self.string()),
                    self.one_in(2),
                ));
            }
        }
    }
}

/// `s` as a YAML double-quoted scalar (JSON strings are valid YAML).
fn yaml_str(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}
