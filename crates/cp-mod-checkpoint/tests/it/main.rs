//! The integration tests of cp-mod-checkpoint, one module per concern, in one test binary.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a step that fails fails the test loudly"
)]

#[path = "../util/mod.rs"]
mod util;

mod detect_layouts;
mod gate_policy;
mod real_projects;
mod real_runners;
mod repo_config;
mod stop_gate;
