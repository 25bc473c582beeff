//! The fuzz targets as deterministic property loops on stable: each target gets a few
//! thousand structure-aware inputs from a seeded PRNG and must not panic. A failure prints
//! the seed, the iteration and the input, so it can be replayed (and added to `corpus/`).
//!
//! `CP_FUZZ_ITERATIONS` scales the loops (default 2000 per target).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::panic::{AssertUnwindSafe, catch_unwind};

use cp_fuzz::{Fixture, Gen};

fn iterations(default: usize) -> usize {
    std::env::var("CP_FUZZ_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Runs `target` on `count` inputs from `make`; on a panic, fails with the input that did it.
fn drive(
    seed: u64,
    count: usize,
    mut make: impl FnMut(&mut Gen) -> Vec<u8>,
    target: impl Fn(&[u8]),
) {
    let mut generator = Gen::new(seed);
    for i in 0..count {
        let input = make(&mut generator);
        assert!(
            catch_unwind(AssertUnwindSafe(|| target(&input))).is_ok(),
            "seed {seed}, iteration {i}: the target panicked on {:?}",
            String::from_utf8_lossy(&input)
        );
    }
}

#[test]
fn validate_args_never_panics() {
    let fixture = Fixture::new();
    assert!(fixture.schemas().len() >= 16, "every real tool's schema");
    drive(1, iterations(4000), Gen::validate_args_bytes, |data| {
        cp_fuzz::validate_args(&fixture, data);
    });
}

#[test]
fn loading_config_never_panics() {
    let fixture = Fixture::new();
    drive(2, iterations(1500), Gen::config_bytes, |data| {
        cp_fuzz::config(&fixture, data);
    });
}

#[test]
fn hook_payloads_never_panic() {
    let fixture = Fixture::new();
    let root = fixture.root().canonicalize().unwrap().display().to_string();
    std::fs::create_dir_all(fixture.root().join("src")).unwrap();
    std::fs::write(fixture.root().join("src/f0.rs"), "fn main() {}\n").unwrap();
    drive(
        3,
        iterations(400),
        |g| g.hook_bytes(&root),
        |data| {
            cp_fuzz::hook_payload(&fixture, data);
        },
    );
}

#[test]
fn loading_workflows_never_panics() {
    let fixture = Fixture::new();
    let valid = std::cell::Cell::new(0);
    let count = iterations(600);
    drive(5, count, Gen::workflow_bytes, |data| {
        let text = String::from_utf8_lossy(data);
        if cp_orchestrate::Workflow::parse(&text, std::path::Path::new("w.yaml")).is_ok() {
            valid.set(valid.get() + 1);
        }
        cp_fuzz::workflow(&fixture, data);
    });
    // The generator must reach past the parser, or the conditions are never evaluated.
    assert!(
        valid.get() * 20 >= count,
        "only {} of {count} workflows were valid",
        valid.get()
    );
}

/// Inputs that once broke a target (found by these loops or by libFuzzer) stay fixed.
#[test]
fn regressions() {
    let fixture = Fixture::new();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions");
    for target in ["validate_args", "config", "hook_payload", "workflow"] {
        let Ok(entries) = std::fs::read_dir(dir.join(target)) else {
            continue;
        };
        for entry in entries.flatten() {
            let data = std::fs::read(entry.path()).unwrap();
            let run = || match target {
                "validate_args" => cp_fuzz::validate_args(&fixture, &data),
                "config" => cp_fuzz::config(&fixture, &data),
                "workflow" => cp_fuzz::workflow(&fixture, &data),
                _ => cp_fuzz::hook_payload(&fixture, &data),
            };
            assert!(
                catch_unwind(AssertUnwindSafe(run)).is_ok(),
                "{} panicked again",
                entry.path().display()
            );
        }
    }
}
