//! A panel's offer to hand some text to the person's own editor (`$EDITOR`), and the tool
//! call that applies the edited text, so an edit made outside goes through the same checks
//! as the tool the model uses.

use serde_json::Value;

use crate::ToolCall;

/// Text a panel lets the person edit in `$EDITOR`, and how to apply the result.
#[derive(Debug, Clone, PartialEq)]
pub struct ExternalEdit {
    /// What is edited, for messages, e.g. `CB1 fmt's script`.
    pub what: String,
    /// A file name for the temporary copy (its extension lets the editor pick a syntax),
    /// e.g. `fmt.sh`.
    pub file_name: String,
    /// The text as the panel shows it now.
    pub text: String,
    /// The tool that applies the edited text, e.g. `Callback_upsert`.
    pub tool: String,
    /// That tool's arguments, without the text.
    pub arguments: Value,
    /// The argument the edited text goes into, e.g. `script_content`.
    pub text_param: String,
}

impl ExternalEdit {
    /// The call that applies `edited`: the arguments with the text added under
    /// [`ExternalEdit::text_param`]. `id` is the call id (any unique string).
    pub fn apply_call(&self, id: &str, edited: &str) -> ToolCall {
        let mut arguments = self.arguments.clone();
        if let Value::Object(map) = &mut arguments {
            map.insert(self.text_param.clone(), Value::String(edited.to_owned()));
        }
        ToolCall::new(id, self.tool.clone(), arguments)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::ExternalEdit;

    #[test]
    fn the_edited_text_goes_into_its_parameter() {
        let edit = ExternalEdit {
            what: "CB1 fmt's script".into(),
            file_name: "fmt.sh".into(),
            text: "old".into(),
            tool: "Callback_upsert".into(),
            arguments: json!({"action": "update", "id": "CB1"}),
            text_param: "script_content".into(),
        };
        let call = edit.apply_call("editor", "new");
        assert_eq!(call.name, "Callback_upsert");
        assert_eq!(
            call.arguments,
            json!({"action": "update", "id": "CB1", "script_content": "new"})
        );
    }
}
