//! The integration tests of cp-mod-console, one module per concern, in one test binary.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a step that fails fails the test loudly"
)]

#[path = "../util/mod.rs"]
mod util;

mod consoles;
mod containment;
mod panel;
mod tools;
