#!/usr/bin/env bash
# Every analysis on valid inputs, in the unit suite so that scripts/test runs
# it under AddressSanitizer and UBSan too (build-san): each stored trace in
# traces/ (TA1, x86-64, aarch64) replayed into a metrics file, then analyze
# vmem, dma, util, deps and suggest on it (a host ISA's window has no VMEM
# access: vmem copied and sorted its empty event vector through a null
# pointer), suggest --verify on the TA1 ones, and snr host report and the trace-event export on the kept host
# traces, cut ones included (--allow-truncated). A sanitizer report fails the
# test even where the build does not halt on it.
# usage: valid_inputs.sh SNR TRACES_DIR HOST_CORPUS_DIR
set -u
SNR=$1; TRACES=$2; HOST=$3
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# a sanitizer's report, whatever the exit status
checked() { # NAME CMD...
  local name=$1
  shift
  "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  if grep -q 'runtime error\|ERROR: AddressSanitizer\|ERROR: LeakSanitizer' "$T/err"; then
    fail "$name: $(grep -m3 -A3 'runtime error\|ERROR:' "$T/err")"
  fi
  return $rc
}
n=0
for trace in "$TRACES"/*.snrt; do
  base=$(basename "$trace" .snrt)
  checked "replay $base" "$SNR" replay "$trace" -o "$T/$base.snrm" || fail "replay $base: $(cat "$T/err")"
  for a in vmem dma util deps suggest; do
    checked "analyze $a $base" "$SNR" analyze "$a" "$T/$base.snrm"
    rc=$?
    # a host ISA's window has nothing for vmem/dma to show: a clear refusal is fine, a crash is not
    [ $rc -le 1 ] || fail "analyze $a $base: exit $rc: $(cat "$T/err")"
    n=$((n + 1))
  done
  # the what-if runs (a capture of every instruction's regions: some have none)
  case $base in ta1-*)
    checked "suggest --verify $base" "$SNR" analyze suggest "$T/$base.snrm" --verify ||
      fail "suggest --verify $base: $(cat "$T/err")"
    n=$((n + 1)) ;;
  esac
done
for h in "$HOST"/*.snrh; do
  base=$(basename "$h" .snrh)
  checked "host report $base" "$SNR" host report "$h" --allow-truncated || fail "host report $base: $(cat "$T/err")"
  checked "export $base" "$SNR" export perfetto "$h" --allow-truncated -o "$T/$base.json" ||
    fail "export perfetto $base: $(cat "$T/err")"
  n=$((n + 2))
done
echo "ok: $n analyses of valid inputs, no sanitizer report"
