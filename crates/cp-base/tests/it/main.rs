//! The integration tests of cp-base that need processes of their own, in one test binary.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a step that fails fails the test loudly"
)]

mod private_umask;
mod store_processes;
