#!/usr/bin/env bash
# snr cc: usage errors, compiler errors, and a missing cross compiler named
# with the Debian package to install.
. "$(dirname "$0")/lib.sh"
run "$SNR" cc
expect_rc 2; expect_err "no source files"
echo 'int main(void) { return 0; }' >"$T/a.c"
run "$SNR" cc "$T/a.c"
expect_rc 2; expect_err "no output file"
echo 'int main(void) { return undefined_thing; }' >"$T/b.c"
run "$SNR" cc "$T/b.c" -o "$T/b.elf"
expect_rc 1; expect_err "undefined_thing"
SNR_CROSS_CC=no-such-riscv-gcc run "$SNR" cc "$T/a.c" -o "$T/a.elf"
expect_rc 1; expect_err "gcc-riscv64-unknown-elf"
run "$SNR" cc "$T/a.c" -o "$T/a.elf" -O0 --verbose
expect_rc 0; expect_err "-march=rv64im"
grep -q -- "-O2" "$T/err" && fail "-O2 added although -O0 was given"
echo ok
