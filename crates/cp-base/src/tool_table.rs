//! [`ToolTable`]: a module's tools as one static table of rows ([`Tool`]), each with its name,
//! its description for the model, its JSON Schema and its handler. A module's
//! [`Module::tools`](crate::Module::tools) lists the table and its
//! [`Module::call_tool`](crate::Module::call_tool) looks the name up in it, so the list the
//! model sees and the dispatch cannot disagree.
//!
//! The handler's type is the module's own choice (a plain `fn` pointer): what it needs
//! (the module, the project root, parsed arguments) and what it returns differ from module to
//! module; the table and the lookup do not.
//!
//! ```
//! use cp_base::{Tool, ToolTable};
//! use serde_json::{Value, json};
//!
//! fn shout(text: &str) -> String {
//!     text.to_uppercase()
//! }
//! fn shout_schema() -> Value {
//!     json!({"type": "object", "properties": {"text": {"type": "string"}}})
//! }
//!
//! static TOOLS: ToolTable<fn(&str) -> String> = ToolTable::new(&[Tool {
//!     name: "shout",
//!     description: "Upper-cases `text`. Example: {\"text\": \"hi\"}",
//!     schema: shout_schema,
//!     handler: shout,
//! }]);
//!
//! assert_eq!(TOOLS.defs()[0].name, "shout");
//! let tool = TOOLS.get("shout").expect("listed");
//! assert_eq!((tool.handler)("hi"), "HI");
//! assert!(TOOLS.get("whisper").is_none());
//! ```

use serde_json::Value;

use crate::ToolDef;

/// One row of a [`ToolTable`]: what the model sees, and the function that runs the tool.
#[derive(Debug)]
pub struct Tool<H: 'static> {
    /// Public name, e.g. `File_edit`. Part of the product's contract.
    pub name: &'static str,
    /// Written for the model that reads it: what the tool does, with an example.
    pub description: &'static str,
    /// The JSON Schema of the arguments object (a function: `serde_json` values are not
    /// `const`).
    pub schema: fn() -> Value,
    /// Runs a call; its signature is the module's.
    pub handler: H,
}

impl<H> Tool<H> {
    /// The tool as the registry, MCP and the LLM APIs list it.
    pub fn def(&self) -> ToolDef {
        ToolDef::new(self.name, self.description, (self.schema)())
    }
}

/// A module's tools, in the order they are listed.
#[derive(Debug)]
pub struct ToolTable<H: 'static> {
    tools: &'static [Tool<H>],
}

impl<H> ToolTable<H> {
    pub const fn new(tools: &'static [Tool<H>]) -> Self {
        Self { tools }
    }

    /// Every tool's definition, in table order.
    pub fn defs(&self) -> Vec<ToolDef> {
        self.tools.iter().map(Tool::def).collect()
    }

    /// The tool named `name`, if the table has it.
    pub fn get(&self, name: &str) -> Option<&'static Tool<H>> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// The tools' names, in table order (for a message naming what a module offers).
    pub fn names(&self) -> impl Iterator<Item = &'static str> + use<H> {
        self.tools.iter().map(|t| t.name)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn double(n: u32) -> u32 {
        n * 2
    }
    fn half(n: u32) -> u32 {
        n / 2
    }
    fn schema() -> Value {
        json!({"type": "object"})
    }

    static TABLE: ToolTable<fn(u32) -> u32> = ToolTable::new(&[
        Tool {
            name: "double",
            description: "Doubles.",
            schema,
            handler: double,
        },
        Tool {
            name: "half",
            description: "Halves.",
            schema,
            handler: half,
        },
    ]);

    #[test]
    fn lists_in_order_and_dispatches_by_exact_name() {
        let names: Vec<String> = TABLE.defs().into_iter().map(|d| d.name).collect();
        assert_eq!(names, ["double", "half"]);
        assert_eq!(TABLE.names().collect::<Vec<_>>(), ["double", "half"]);
        assert_eq!(TABLE.defs()[1].description, "Halves.");
        assert_eq!(TABLE.defs()[0].parameters, json!({"type": "object"}));
        assert_eq!(TABLE.get("half").map(|t| (t.handler)(8)), Some(4));
        assert!(TABLE.get("Half").is_none());
        assert!(TABLE.get("").is_none());
    }
}
