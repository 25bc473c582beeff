#!/usr/bin/env bash
# Runs every fuzz target under libFuzzer for a fixed time each (not part of CI).
#
#   fuzz/run.sh            # 60 s per target
#   fuzz/run.sh 300        # 5 min per target
#   fuzz/run.sh 60 config  # one target
#
# Needs a nightly toolchain (`rustup toolchain install nightly`) and cargo-fuzz
# (`cargo install cargo-fuzz`). Crashes land in fuzz/artifacts/<target>/; copy a reproducer
# into fuzz/regressions/<target>/ with the fix, so `cargo test -p cp-fuzz` keeps it fixed.
# The same targets run on stable, as property loops, in `cargo test -p cp-fuzz`.
set -euo pipefail

seconds="${1:-60}"
shift || true
targets=("$@")
if [ "${#targets[@]}" -eq 0 ]; then
    targets=(validate_args config hook_payload workflow)
fi

cd "$(dirname "$0")/.."
status=0
for target in "${targets[@]}"; do
    corpus="fuzz/corpus/$target"
    mkdir -p "$corpus"
    # Seed the corpus with the regressions, so libFuzzer starts from known-hard inputs.
    if [ -d "fuzz/regressions/$target" ]; then
        cp -n fuzz/regressions/"$target"/* "$corpus"/ 2>/dev/null || true
    fi
    echo "== $target: ${seconds}s"
    if ! cargo +nightly fuzz run --debug-assertions --features libfuzzer "$target" "$corpus" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1; then
        echo "!! $target found a crash or a hang: see fuzz/artifacts/$target/"
        status=1
    fi
done
exit "$status"
