//! End-to-end test support lives in `tests/`; this library is intentionally empty.
