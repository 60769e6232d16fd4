#!/usr/bin/env bash
# On/off-device on real runs of the TA1 serving loop (runtime/ta1_serve over
# libta1rt) recorded with `snr host record`: the report's split of the
# device's window (compute only, transfer only, both, queued, idle), its
# active ratio and its wait links must equal what check_host_device.py
# works out on its own from the raw intervals of the same trace (its
# `snr export perfetto` timeline: ta1rt_launch, ta1rt_device_upload,
# ta1rt_device_run, ta1rt_wait), to the nanosecond; the k-th ta1rt_wait is
# held by launch k's run exactly when that run ends inside the wait; the
# host wait total is what the program measured inside ta1rt_wait (5%); the
# Perfetto export has a flow from each held wait to that run.
# Two runs: the plain loop (the host waits on every launch) and `overlap`
# (the host tokenizes while the device runs, so waits find the work done).
# Needs root and eBPF: exits 77 (skip) with the reason otherwise.
. "$(dirname "$0")/lib.sh"
SERVE=${2:?ta1_serve}
need_host_record

cat >"$T/dev.c" <<'C'
int main(void) { volatile unsigned long x = 0; for (unsigned long i = 0; i < 1000000; i++) x += i; return 0; }
C
"$SNR" cc "$T/dev.c" -o "$T/dev.elf" || fail "snr cc"
CHECK="$(dirname "$0")/check_host_device.py"

for mode in plain overlap; do
  n=6; extra=()
  [ "$mode" = overlap ] && { n=3; extra=(overlap); }
  run "$SNR" host record -o "$T/$mode.snrh" -- "$SERVE" "$T/dev.elf" $n "$T" "${extra[@]}"
  expect_rc 0
  self_wait=$(sed -n 's/.*; \([0-9.]*\) s in ta1rt_wait.*/\1/p' "$T/out")
  [ -n "$self_wait" ] || fail "$mode: ta1_serve printed no ta1rt_wait time: $(cat "$T/out")"
  run "$SNR" host report "$T/$mode.snrh" --json --folded "$T/$mode"
  expect_rc 0
  cp "$T/out" "$T/$mode.report.json"
  [ -s "$T/$mode.offcpu.folded" ] || fail "$mode: --json left out --folded's files"
  run "$SNR" host report "$T/$mode.snrh"
  expect_rc 0
  expect_out "on/off-device"
  expect_out "TA1 device, thread ta1-device"
  # the raw intervals and the flows from the Perfetto export (the same
  # events as host report --trace-events)
  run "$SNR" export perfetto "$T/$mode.snrh" -o "$T/$mode.events.json"
  expect_rc 0
  python3 "$CHECK" "$T/$mode.report.json" "$T/$mode.events.json" "$n" "$self_wait" "$mode" ||
    fail "$mode: on/off-device differs from the raw intervals"
done
echo "host_device: ok"
