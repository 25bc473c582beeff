//! Fuzz targets for Context Pilot's input boundaries.
//!
//! Each target is a plain function from bytes to nothing that must never panic or hang,
//! whatever the bytes:
//!
//! | target | what it feeds | entry points exercised |
//! |---|---|---|
//! | [`validate_args`] | a schema and arguments, or arguments for a real tool's schema | `cp_base::validate_args`, `cp_tui::parse_arguments` |
//! | [`config`] | the bytes of `.context-pilot/config.json` | `ConfigFile::section` for `callbacks`, `checkpoint` and `llm`, then what each module builds from its section |
//! | [`hook_payload`] | a hook payload on stdin | `cp_hook::handle` for all four events |
//! | [`workflow`] | a workflow YAML file | `Workflow::parse` (YAML, then validation), placeholders, `evaluate_condition` on each checkpoint's condition |
//!
//! The same functions run two ways:
//! - under libFuzzer: `fuzz/run.sh` (`cargo +nightly fuzz run TARGET --features libfuzzer`),
//!   with the binaries in `fuzz/fuzz_targets/`;
//! - on stable, in `cargo test -p cp-fuzz`: `tests/properties.rs` drives each target with a
//!   few thousand inputs from [`Gen`], a small seeded PRNG that builds structure-aware JSON
//!   (real keys, real tool names, odd values) and then mutates its bytes.
//!
//! ```
//! let fixture = cp_fuzz::Fixture::new();
//! let mut generator = cp_fuzz::Gen::new(7);
//! for _ in 0..20 {
//!     cp_fuzz::config(&fixture, &generator.config_bytes());
//! }
//! ```

mod generate;
mod targets;

pub use generate::Gen;
pub use targets::{Fixture, config, hook_payload, validate_args, workflow};
