#!/usr/bin/env bash
# Two replays of one trace write byte-identical metrics files.
. "$(dirname "$0")/lib.sh"
TRACE=$2
run "$SNR" replay "$TRACE" -o "$T/a.snrm"
expect_rc 0
run "$SNR" replay "$TRACE" -o "$T/b.snrm"
expect_rc 0
cmp "$T/a.snrm" "$T/b.snrm" || fail "two replays wrote different metrics"
[ "$(stat -c %s "$T/a.snrm")" -gt 1000 ] || fail "metrics file suspiciously small"
echo ok
