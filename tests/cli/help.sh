#!/usr/bin/env bash
# --help tells the truth: every command `snr --help` lists runs and has
# its own --help; an unknown command is an error.
. "$(dirname "$0")/lib.sh"
run "$SNR" --help
expect_rc 0
cmds=$(awk '/^commands:/{f=1;next} f&&/^  [a-z]/{print $1} f&&/^$/{f=0}' "$T/out")
[ -n "$cmds" ] || fail "snr --help lists no commands"
for c in $cmds; do
  run "$SNR" "$c" --help
  expect_rc 0; expect_out "usage: snr $c"
done
run "$SNR" frobnicate
expect_rc 2; expect_err "unknown command 'frobnicate'"
run "$SNR"
expect_rc 2
echo ok
