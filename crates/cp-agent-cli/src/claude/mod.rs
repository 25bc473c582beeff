//! Claude Code: its stream format and its runner.

mod runner;
mod stream;

pub use runner::ClaudeRunner;
pub use stream::model_window;
pub(crate) use stream::parse_line;
