//! cp-base
