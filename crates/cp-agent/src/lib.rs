//! Context Pilot's built-in agent loop: the model answers, its tool calls run as one batch
//! through the pipeline (callbacks fire), the results go back, and so on until the model ends
//! its turn. Then the stop gate decides whether the turn really ends.
//!
//! A turn runs on a worker thread ([`spawn_turn`]) and reports [`AgentEvent`]s; the UI thread
//! owns the conversation and applies them. A failed request leaves the message history as it
//! was before the request, so nothing half-received is ever kept. [`BuiltinDriver`] drives turns
//! as a [`cp_orchestrate::SessionDriver`], for smart restarts and workflows; [`UsageMeter`]
//! sums what the provider reported.
//!
//! The example runs one turn on the calling thread, with a scripted model that calls a tool
//! once and then answers:
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use cp_agent::{AgentInbox, StopGateMode, TurnContext, TurnEnd, run_turn};
//! use cp_orchestrate::StopHandle;
//! use cp_base::{Module, Notifier, Project, Registry, ToolDef, ToolEnv, ToolOutcome, ToolResult,
//!               WorkerId};
//! use cp_llm::{CancelToken, ContentBlock, LlmError, Message, Provider, ProviderConfig, Request,
//!              Response, FinishReason, StreamEvent, ToolUse, ToolInput, Usage};
//! use serde_json::{Value, json};
//!
//! /// A model that plays back its replies in order.
//! struct Scripted { config: ProviderConfig, replies: Mutex<Vec<Response>> }
//! impl Provider for Scripted {
//!     fn config(&self) -> &ProviderConfig { &self.config }
//!     fn stream(&self, _: &Request, _: &CancelToken, _: &mut dyn FnMut(StreamEvent))
//!         -> Result<Response, LlmError> {
//!         Ok(self.replies.lock().unwrap().remove(0))
//!     }
//! }
//!
//! struct Greeter;
//! impl Module for Greeter {
//!     fn id(&self) -> &'static str { "greeter" }
//!     fn tools(&self) -> Vec<ToolDef> {
//!         vec![ToolDef::new("greet", "Says hello. Example: {\"name\": \"Ada\"}", json!({
//!             "type": "object", "required": ["name"],
//!             "properties": {"name": {"type": "string"}}
//!         }))]
//!     }
//!     fn call_tool(&mut self, _: &str, args: &Value, _: &ToolEnv) -> ToolOutcome {
//!         ToolResult::ok(format!("hello {}", args["name"].as_str().unwrap_or("?"))).into()
//!     }
//! }
//!
//! let env = |name: &str| (name == "ANTHROPIC_API_KEY").then(|| "unused".to_owned());
//! let config = ProviderConfig::resolve(&env, None).unwrap().unwrap();
//! let reply = |content, finish_reason| Response { content, finish_reason, usage: Usage::default() };
//! let model = Scripted { config, replies: Mutex::new(vec![
//!     reply(vec![ContentBlock::ToolUse(ToolUse {
//!         id: "call_1".into(), name: "greet".into(), input: ToolInput::Valid(json!({"name": "Ada"})),
//!     })], FinishReason::ToolUse),
//!     reply(vec![ContentBlock::Text { text: "I greeted Ada.".into() }], FinishReason::EndTurn),
//! ]) };
//!
//! let mut registry = Registry::new();
//! registry.register(Box::new(Greeter));
//! let ctx = TurnContext {
//!     provider: Arc::new(model),
//!     registry,
//!     env: ToolEnv::new(Project::at("/tmp"), WorkerId::default(), Notifier::new()),
//!     inbox: AgentInbox::default(),
//!     cancel: CancelToken::new(),
//!     stop: StopHandle::default(),
//!     stop_gate: StopGateMode::Off,
//!     base: None,
//! };
//! let (messages, end) = run_turn(&ctx, vec![Message::user_text("Greet Ada.")], &|_event| {});
//! assert_eq!(end, TurnEnd::Done);
//! // The question, the tool call, its result, the answer.
//! assert_eq!(messages.len(), 4);
//! assert!(matches!(&messages[2].content[0],
//!     ContentBlock::ToolResult { text, is_error: false, .. } if text == "hello Ada"));
//! ```

mod driver;
mod inbox;
mod prompt;
mod turn;
mod usage;

pub use driver::{BuiltinDriver, EventSink};
pub use inbox::AgentInbox;
pub use prompt::{panel_context, system_prompt};
pub use turn::{
    AgentEvent, STOP_GATE_RUNNING, StopGateMode, TurnContext, TurnEnd, run_turn, spawn_turn,
};
pub use usage::UsageMeter;
