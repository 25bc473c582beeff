//! Gemini CLI: its stream format and its runner.

mod handoff;
mod home;
mod runner;
mod stream;

pub use runner::GeminiRunner;
