//! Support for Context Pilot's end-to-end tests.
//!
//! The only stand-in these tests allow is the remote LLM service: [`LlmServer`] is a real
//! local HTTP server that speaks the Anthropic and OpenAI wire formats from a script.
//!
//! ```no_run
//! use cp_e2e::{LlmServer, anthropic};
//! let server = LlmServer::start().unwrap();
//! server.push(anthropic::tool_use_turn(&[("toolu_1", "File_read", r#"{"path":"a.rs"}"#)]));
//! server.push(anthropic::text_turn("Done."));
//! // run the binary with ANTHROPIC_BASE_URL=server.url() and ANTHROPIC_API_KEY=test ...
//! assert_eq!(server.requests().len(), 0);
//! ```

pub mod llm_server;

pub use llm_server::{LlmServer, RecordedRequest, Reply, Turn, anthropic, openai};
