# Sourced by scripts/release.sh and scripts/test-old-system.sh: building for the oldest glibc
# the binary supports, and checking a binary against it. Expects `root` (the checkout) and the
# functions `say` and `fail`.
#
# glibc_floor_zig: zig from PyPI (the `ziglang` package, pinned) under target/tools/ziglang,
#   and the environment scripts/zig-cc.sh (zig cc aimed at glibc $glibc_floor) needs. The
#   caller makes it cargo's linker (and the cc crate's compiler) for x86_64-unknown-linux-gnu.
# glibc_floor_check BINARY: fails unless every glibc symbol version BINARY needs is at most
#   the floor and every shared library it needs is part of glibc; prints what it found.

glibc_floor=2.17
zig_version=0.15.2

glibc_floor_zig() {
  local tools="$root/target/tools"
  local zig="$tools/ziglang/ziglang/zig"
  if [ ! -x "$zig" ] || [ "$("$zig" version)" != "$zig_version" ]; then
    command -v python3 >/dev/null 2>&1 || fail "python3 (with pip) is needed to install zig"
    say "installing zig $zig_version (PyPI: ziglang) into $tools/ziglang"
    rm -rf "$tools/ziglang"
    python3 -m pip install --quiet --disable-pip-version-check --target "$tools/ziglang" \
      "ziglang==$zig_version"
  fi
  export CP_ZIG="$zig" CP_GLIBC_FLOOR="$glibc_floor"
  export ZIG_GLOBAL_CACHE_DIR="$tools/zig-cache" ZIG_LOCAL_CACHE_DIR="$tools/zig-cache"
}

glibc_floor_check() {
  local binary=$1 highest needed lib newer
  command -v readelf >/dev/null 2>&1 || fail "readelf (binutils) is needed"
  highest=$(readelf --version-info --wide "$binary" |
    sed -n 's/.*Name: GLIBC_\([0-9.]*\).*/\1/p' | sort -uV | tail -n1)
  [ -n "$highest" ] || fail "no GLIBC_ symbol version found in $binary"
  if [ "$(printf '%s\n%s\n' "$highest" "$glibc_floor" | sort -V | tail -n1)" != "$glibc_floor" ]; then
    fail "$binary needs GLIBC_$highest, above the floor $glibc_floor ($(readelf --dyn-syms \
      --wide "$binary" | grep -o "[^ ]*@GLIBC_[0-9.]*" | sort -t_ -k2 -V | tail -n3 | tr '\n' ' '))"
  fi
  needed=$(readelf --dynamic "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  for lib in $needed; do
    case "$lib" in
      libc.so.6 | libm.so.6 | libpthread.so.0 | libdl.so.2 | librt.so.1 | libutil.so.1 | \
        ld-linux-x86-64.so.2) ;;
      *) fail "$binary needs $lib, which is not part of glibc" ;;
    esac
  done
  # std's references to functions newer than the floor: weak and unversioned, so an old glibc
  # leaves them null and std takes its fallback.
  newer=$(readelf --dyn-syms --wide "$binary" | awk '$5 == "WEAK" && $7 == "UND" {print $8}' |
    grep -v '^_' | sort | tr '\n' ' ' || true)
  say "$binary: highest glibc symbol version GLIBC_$highest (floor $glibc_floor); shared" \
    "libraries, all glibc's: $needed; newer functions looked for (weak, unversioned): $newer"
}
