#!/bin/sh
# The C compiler and linker of the release build (scripts/release.sh sets it as cargo's linker
# and the cc crate's compiler for x86_64-unknown-linux-gnu): zig cc, aimed at glibc
# $CP_GLIBC_FLOOR, so that every symbol the binary takes from the C library exists in that
# version. zig links against stubs of that glibc's own symbol list, so a symbol only a newer
# glibc has (std asks for some, e.g. posix_spawn_file_actions_addchdir_np, gettid, statx) stays
# a weak reference with no version: absent on an old glibc, where std takes its fallback.
#
# Two of rustc's and the cc crate's arguments zig cc does not take: `--target=<rust triple>`
# (the glibc target above is the one that counts) and `-lgcc_s` (zig brings its own unwinder:
# `-lunwind`, linked in, so the binary needs no libgcc_s.so.1).
set -eu
: "${CP_ZIG:?CP_ZIG names the zig binary (scripts/release.sh sets it)}"
: "${CP_GLIBC_FLOOR:?CP_GLIBC_FLOOR names the glibc version (scripts/release.sh sets it)}"
for arg in "$@"; do
  shift
  case "$arg" in
    --target=*) continue ;;
    -lgcc_s) arg=-lunwind ;;
  esac
  set -- "$@" "$arg"
done
exec "$CP_ZIG" cc -target "x86_64-linux-gnu.$CP_GLIBC_FLOOR" "$@"
