//! Names of the project layout that the low-level files need without knowing [`Project`]
//! itself (which builds on them).
//!
//! [`Project`]: crate::Project

/// Name of the state directory under the project root.
pub const STATE_DIR: &str = ".context-pilot";
