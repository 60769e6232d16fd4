# Helpers for the command-line tests: each case is a shell script that
# sources this file, gets $SNR and a scratch directory $T, and calls
# expect_* ; any failed expectation exits 1 with what differed.
set -u
SNR=${1:?usage: case.sh SNR}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# run CMD...: captures stdout in $T/out, stderr in $T/err, status in $rc
run() { "$@" >"$T/out" 2>"$T/err"; rc=$?; }
expect_rc() { [ "$rc" -eq "$1" ] || fail "exit status $rc, want $1 (stderr: $(head -c 600 "$T/err"))"; }
expect_out() { grep -qF -- "$1" "$T/out" || fail "stdout lacks '$1': $(head -c 600 "$T/out")"; }
expect_err() { grep -qF -- "$1" "$T/err" || fail "stderr lacks '$1': $(head -c 600 "$T/err")"; }
cc_ta1() { # name, C source on stdin -> $T/name.elf
  cat >"$T/$1.c"
  "$SNR" cc "$T/$1.c" -o "$T/$1.elf" || fail "snr cc $1 failed"
}
