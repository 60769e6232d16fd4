#!/usr/bin/env bash
# The fixed start and end of snr host record: SNR_HOST_TIMING=1 prints each
# phase; 16 runtime API probes (32 with their returns) are taken down without
# one RCU grace period each (perf-event uprobes waited ~65 ms apiece, one
# after another: 0.9 s for the 14 libcudart presets at load 7, 1.67 s for 16
# at load 20; uprobe_multi links wait once: 0.01-0.03 s, 0.37 s at load 23),
# and they still record the calls: `sleep 0.3`'s nanosleep is one H:CTRL
# call of >= 300 ms.
# Needs root and eBPF: exits 77 (skip) with the reason otherwise.
. "$(dirname "$0")/lib.sh"

need_host_record
# no phases unless asked (the probe recording's stderr)
grep -q "phase" "$T/err" && fail "phases printed without SNR_HOST_TIMING: $(cat "$T/err")"

U=()
for f in nanosleep getpid malloc free write read close open fopen fclose fflush fputs getenv setlocale exit strtol; do U+=(--uprobe "libc:$f:H:CTRL"); done
export SNR_HOST_TIMING=1
run "$SNR" host record --no-presets "${U[@]}" -o "$T/s.snrh" -- sleep 0.3
expect_rc 0
expect_err "(16 uprobes,"
for p in load "attach uprobes" tracing write "detach uprobes" total; do
  grep -q "^snr host record: phase $p  *[0-9.]* s$" "$T/err" || fail "no phase '$p': $(cat "$T/err")"
done
detach=$(sed -n 's/^snr host record: phase detach uprobes  *\([0-9.]*\) s$/\1/p' "$T/err")
echo "detach uprobes: $detach s for 32 probes (load $(cut -d' ' -f1 /proc/loadavg))"
awk -v d="$detach" 'BEGIN { exit !(d < 0.8) }' ||
  fail "taking 32 uprobes down took $detach s (one grace period each, one after another?)"
unset SNR_HOST_TIMING
run "$SNR" host report "$T/s.snrh"
expect_rc 0
read -r calls ms < <(awk '$1 == "nanosleep" && $2 == "H:CTRL" { print $3, $4; exit }' "$T/out")
[ "${calls:-}" = 1 ] || fail "want 1 nanosleep call in H:CTRL: $(cat "$T/out")"
awk -v m="$ms" 'BEGIN { exit !(m >= 300 && m < 3000) }' || fail "nanosleep took $ms ms, want >= 300"
echo "nanosleep: $calls call, $ms ms"
echo PASS
