//! The integration tests of cp-orchestrate, one module per concern, in one test binary.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a step that fails fails the test loudly"
)]

#[path = "../util/mod.rs"]
mod util;

mod merge_queue;
mod parallel;
mod parallel_repeat;
mod smart_restart;
mod workflows;
