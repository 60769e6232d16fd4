#!/usr/bin/env bash
# How recording grows with the window: the serving loop of
# bench/analyses_prog.c (serve(), about 1,250 instructions per token, built
# with TOKENS=8000, or one token per thousand instructions of the largest
# window when that is more), recorded by `snr record`'s default method
# (--method sim) from `snr device --gdb` over loopback TCP, at each count
# (default 1M and 10M; give 100000000 for the 100M window, the
# bounded-memory proof), then replayed by `snr replay` (the GRM with the
# timing model, verified) -- in one run, per window:
#   record: wall seconds, the recorder's CPU seconds (user + system) and peak
#           RSS, the device's CPU seconds;
#   replay: wall seconds, CPU seconds and peak RSS;
#   ratios: record CPU (recorder and device) over replay CPU, and the walls'.
# Targets (docs/recording.md, "Rates"): 10M recorded in under 1 s idle, the
# recorder's peak RSS under 150 MB at 10M and at 100M, record/replay at most
# 3x. On a shared machine wall time includes waiting for a core, and a
# recording is two processes trading packets, each waiting for the other to
# be scheduled: the CPU columns are the ones that hold under load; the load
# average is printed before each window.
# With OLD=PATH (an older snr) each window is recorded by it too, in the same
# run, for the before figures (its trace must be the same: trace_same, when
# TRACE_SAME=PATH names the test program, build/tests/rec/trace_same; and
# the same bytes but for META's time and target and END's seconds and
# request counts: tests/rec/trace_bytes_same.py).
# usage: record_scale.sh SNR [COUNTS...]
set -u
SNR=$1; shift
COUNTS=("$@"); [ ${#COUNTS[@]} -gt 0 ] || COUNTS=(1000000 10000000)
CACHE=/tmp # bench_lib.sh wants one; nothing is cached
. "$(dirname "$0")/bench_lib.sh"
TOKENS=8000
for n in "${COUNTS[@]}"; do [ $((n / 1000)) -gt $TOKENS ] && TOKENS=$((n / 1000)); done
ELF=$T/serve.elf
"$SNR" cc -O2 -DTOKENS=$TOKENS "$HERE/analyses_prog.c" -o "$ELF" || fail "snr cc"

record() { # snr count trace tag: prints one row
  local snr=$1 n=$2 out=$3 tag=$4
  rm -f "$T/dev.err" "$out" # the last window's trace: snr record replaces no file

  /usr/bin/time -f '%U %S' -o "$T/dev.time" "$snr" device "$ELF" --gdb tcp:127.0.0.1:0 --halt \
    2>"$T/dev.err" >"$T/dev.out" &
  DEV=$!
  PORT=""
  for _ in $(seq 400); do
    PORT=$(grep -o '127.0.0.1:[0-9]*' "$T/dev.err" 2>/dev/null | head -1 | cut -d: -f2)
    [ -n "$PORT" ] && break
    sleep 0.05
  done
  [ -n "$PORT" ] || fail "the device did not start: $(cat "$T/dev.err")"
  /usr/bin/time -f '%e %U %S %M' -o "$T/rec.time" "$snr" record --target tcp:127.0.0.1:$PORT \
    --elf "$ELF" --breakpoint serve --count "$n" -o "$out" --kill 2>"$T/rec.err" ||
    fail "$tag record $n: $(tail -3 "$T/rec.err")"
  wait "$DEV"; DEV=""
  grep -q "registers and written memory matched" "$T/rec.err" || fail "$tag $n: not verified: $(cat "$T/rec.err")"
  read -r RW RU RS RM <"$T/rec.time"
  RC=$(echo "$RU + $RS" | bc); DC=$(tail -1 "$T/dev.time" | awk '{print $1 + $2}')
  REQ=$(sed -n 's/^method sim: \([0-9]*\) debugger requests.*/\1/p' "$T/rec.err")
}

printf '%-10s %-5s | %8s %8s %8s %8s %9s | %8s %8s %8s | %9s %9s\n' window snr "rec wall" "rec CPU" "dev CPU" \
  "rec RSS" requests "rp wall" "rp CPU" "rp RSS" "CPU ratio" "wall ratio"
for n in "${COUNTS[@]}"; do
  echo "load average before the ${n}-instruction window: $(cut -d' ' -f1-3 /proc/loadavg)"
  record "$SNR" "$n" "$T/w.snrt" new
  /usr/bin/time -f '%e %U %S %M' -o "$T/rp.time" "$SNR" replay "$T/w.snrt" >"$T/rp.out" 2>&1 ||
    fail "replay $n: $(tail -3 "$T/rp.out")"
  grep -q "end state matches the recording" "$T/rp.out" || fail "replay $n: not verified: $(cat "$T/rp.out")"
  read -r PW PU PS PM <"$T/rp.time"
  PC=$(echo "$PU + $PS" | bc)
  row() {
    printf '%-10s %-5s | %7.2fs %7.2fs %7.2fs %6dMB %9s | %7.2fs %7.2fs %6dMB | %8.1fx %8.1fx\n' "$n" "$1" "$RW" "$RC" \
      "$DC" $((RM / 1024)) "$REQ" "$PW" "$PC" $((PM / 1024)) "$(echo "($RC + $DC) / $PC" | bc -l)" \
      "$(echo "$RW / $PW" | bc -l)"
  }
  row new
  if [ -n "${OLD:-}" ]; then
    record "$OLD" "$n" "$T/old.snrt" old
    row old
    if [ -n "${TRACE_SAME:-}" ]; then
      "$TRACE_SAME" "$T/old.snrt" "$T/w.snrt" >/dev/null || fail "$n: the old snr's trace differs"
      python3 "$HERE/../tests/rec/trace_bytes_same.py" "$T/old.snrt" "$T/w.snrt" >/dev/null ||
        fail "$n: the old snr's trace has other bytes"
      echo "  the old snr's trace is the same window (trace_same) and the same bytes (trace_bytes_same.py)"
    fi
  fi
done
