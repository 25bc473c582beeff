//! libFuzzer entry point for [`cp_fuzz::workflow`]; run with `fuzz/run.sh`.

#![no_main]

use std::sync::OnceLock;

static FIXTURE: OnceLock<cp_fuzz::Fixture> = OnceLock::new();

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    cp_fuzz::workflow(FIXTURE.get_or_init(cp_fuzz::Fixture::new), data);
});
