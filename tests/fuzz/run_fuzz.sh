#!/usr/bin/env bash
# run_fuzz.sh FUZZER CORPUS [SECONDS]: a short libFuzzer run for CI. New
# inputs go to a scratch directory (the kept corpus is only read); a crash
# leaves its input as fuzz-rsp-crash-* in the current directory (meson's
# build dir) and fails the test.
set -euo pipefail
fuzzer=$1 corpus=$2 secs=${3:-30}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# -close_fd_mask=2 silences the faults the fixture program reports on
# stderr; libFuzzer and the sanitizers still report on their own copy.
"$fuzzer" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -close_fd_mask=2 -artifact_prefix="$PWD/$(basename "$fuzzer")-" "$work" "$corpus"
