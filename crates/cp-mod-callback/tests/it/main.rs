//! The integration tests of cp-mod-callback, one module per concern, in one test binary.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a step that fails fails the test loudly"
)]

#[path = "../util/mod.rs"]
mod util;

mod crash_safety;
mod firing;
mod panel;
mod reload;
mod repo_config;
mod run_panel;
mod tools;
