//! cp-run's integration tests, one module per concern.

mod headless;
