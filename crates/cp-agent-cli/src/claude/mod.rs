//! Claude Code: its stream format and its runner.

#[cfg(test)]
mod drive_tests;
mod runner;
mod stream;

pub use runner::ClaudeRunner;
pub use stream::model_window;
use stream::parse_line;
