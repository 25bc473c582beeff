//! Conversions between the registry's tool types and MCP's.

use cp_base::{ToolDef, ToolResult};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};
use serde_json::Value;

/// The MCP form of a tool: same name, description and JSON Schema.
pub fn mcp_tool(def: &ToolDef) -> Tool {
    let schema: JsonObject = match &def.parameters {
        Value::Object(map) => map.clone(),
        // The registry's schemas are objects; anything else would be a module bug, and
        // MCP requires an object schema, so advertise "an object" rather than fail the list.
        _ => serde_json::Map::from_iter([("type".to_owned(), Value::from("object"))]),
    };
    Tool::new(def.name.clone(), def.description.clone(), schema)
}

/// The MCP form of a result: its text, and `isError` when the call failed.
pub fn mcp_result(result: &ToolResult) -> CallToolResult {
    let content = vec![ContentBlock::text(result.text.clone())];
    if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn tools_keep_name_description_and_schema() {
        let schema =
            json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}});
        let tool = mcp_tool(&ToolDef::new("X_y", "Does y.", schema.clone()));
        let wire = serde_json::to_value(&tool).unwrap();
        assert_eq!(wire["name"], "X_y");
        assert_eq!(wire["description"], "Does y.");
        assert_eq!(wire["inputSchema"], schema);
    }

    #[test]
    fn errors_are_tool_errors_with_the_same_text() {
        let wire =
            serde_json::to_value(mcp_result(&ToolResult::error("X_y: missing 'a'"))).unwrap();
        assert_eq!(wire["isError"], true);
        assert_eq!(wire["content"][0]["text"], "X_y: missing 'a'");
        let ok = serde_json::to_value(mcp_result(&ToolResult::ok("done"))).unwrap();
        assert_eq!(ok["isError"], false);
    }
}
