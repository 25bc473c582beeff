//! The agent loop: the model answers, its tool calls run as one batch through the pipeline
//! (callbacks fire), the results go back, and so on until the model ends its turn. Then the
//! stop checkpoint decides whether the turn really ends.
//!
//! A turn runs on a worker thread ([`spawn_turn`]) and reports [`AgentEvent`]s; the UI thread
//! owns the conversation and applies them. A failed request leaves the message history as it
//! was before the request, so nothing half-received is ever kept.

mod inbox;
mod prompt;
mod runner;
mod turn;
mod usage;

pub use inbox::AgentInbox;
pub use prompt::{panel_context, system_prompt};
pub use runner::{AgentRunner, EventSink};
pub use turn::{
    AgentEvent, CheckpointMode, StopControl, StopReason, TurnContext, TurnEnd, run_turn, spawn_turn,
};
pub use usage::UsageMeter;
