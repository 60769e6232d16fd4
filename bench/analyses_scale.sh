#!/usr/bin/env bash
# How the whole chain grows with the window: 1M, 5M and 10M instructions of
# the same token-serving loop (bench/analyses_prog.c's serve(), about 1,250
# instructions per token, built with TOKENS=8000, or one token per thousand
# instructions of the largest window when that is more, so that serve() runs
# past the largest window; the window starts at serve()'s entry, where the
# loop's steady mix starts at once: every window has the same cycles per
# instruction and unit utilization, so a larger window is more of the same),
# each through
#   snr replay -o, analyze dma, vmem, util, deps, suggest, suggest --verify,
#   report and export perfetto --format proto (each on the metrics file),
# with wall seconds, CPU seconds (user + system) and peak RSS of every step,
# then the ratios 5M/1M and 10M/5M of each step's CPU time and memory beside
# the instruction ratio (5 and 2), and the targets: growth within 1.3x of the
# instruction ratio, every step under 1 GiB at 10M, the chain under 60 s.
# Ratios and the chain's total are taken on CPU time: the machine may be
# shared, and wall time then includes waiting for a core (every step is
# single-threaded, so on an idle machine the two agree). Each step runs REPS
# times (default 3; REPS=1: one run) on every window, the windows in turn
# within each round (1M, 5M, 10M, 1M, 5M, ...: the runs a ratio compares
# see the machine in the same state), and its least CPU time is kept (with
# that run's wall time; the memory is the largest peak), read to the
# millisecond (bash's time; /usr/bin/time gives the peak RSS). On a shared
# 2-CPU machine one run of the same step varied by 30% and more, and the
# 1M steps of 0.07-0.3 s were read to 10 ms, so that one run of each, the
# windows minutes apart, put a step's 5M/1M ratio anywhere from 3 to 8.
#
# The windows are recorded once from `snr device --gdb` over RSP (snr
# record's default method: the GRM runs the window ahead and the device then
# runs it for real and is checked, about 30 s for 5M instructions on a loaded
# machine; by stepping, at about 30k instructions/s, the three windows took
# minutes each) and cached in CACHE_DIR (default
# ${XDG_CACHE_HOME:-~/.cache}/snr-bench, outside the build tree so that a
# fresh build directory keeps them), keyed by the program's source and the
# count (and TOKENS in the file name when it is not 8000).
# usage: analyses_scale.sh SNR [CACHE_DIR] [COUNTS...]   (default 1M 5M 10M;
# e.g. `analyses_scale.sh build/snr "" 1000000 5000000 10000000 20000000`)
set -u
SNR=$1; CACHE=${2:-}; [ -n "$CACHE" ] || CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/snr-bench
shift; [ $# -gt 0 ] && shift
COUNTS=("$@"); [ ${#COUNTS[@]} -gt 0 ] || COUNTS=(1000000 5000000 10000000)
. "$(dirname "$0")/bench_lib.sh"
TOKENS=8000
for n in "${COUNTS[@]}"; do [ $((n / 1000)) -gt $TOKENS ] && TOKENS=$((n / 1000)); done
ELF=$CACHE/scale-$TOKENS.elf
mkdir -p "$CACHE"
"$SNR" cc -O2 -DTOKENS=$TOKENS "$HERE/analyses_prog.c" -o "$ELF" || fail "snr cc"
src_key=$(sha256sum "$HERE/analyses_prog.c" | cut -d' ' -f1)
sfx=""; [ $TOKENS = 8000 ] || sfx=-t$TOKENS

# shellcheck source=../tests/gdb_device.sh
. "$HERE/../tests/gdb_device.sh"
record() { # count trace
  local count=$1 trace=$2 t0 t1
  gdb_device "$SNR" "$T" "$ELF"
  t0=$(date +%s.%N)
  "$SNR" record --target tcp:127.0.0.1:"$PORT" --elf "$ELF" --breakpoint serve --count "$count" \
    -o "$trace" --kill 2>"$T/rec.err" || fail "record: $(cat "$T/rec.err")"
  t1=$(date +%s.%N)
  wait "$DEV"; DEV=""
  printf 'recorded %s instructions of serve() in %.1f s over RSP (cached in %s)\n' "$count" \
    "$(echo "$t1 - $t0" | bc)" "$trace"
}

# name|arguments after the input ("@" stands for a scratch output file)
STEPS=(
  "replay|-o @m"
  "analyze dma|"
  "analyze vmem|"
  "analyze util|"
  "analyze deps|"
  "analyze suggest|"
  "analyze suggest --verify|"
  "report|-o @r.html"
  "export perfetto|--format proto -o @"
)
declare -A WALL CPU MEM
REPS=${REPS:-3}
run() { # count index cmd args input: one run, WALL, CPU and MEM keep the least CPU time's (and the largest peak)
  local n=$1 i=$2 cmd=$3 args=$4 in=$5 s u y k c TIMEFORMAT='%3R %3U %3S'
  args=${args//@/$T/out$n}
  # shellcheck disable=SC2086
  if ! { time /usr/bin/time -f '%M' -o "$T/t" "$SNR" $cmd "$in" $args >"$T/o" 2>"$T/e"; } 2>"$T/bt"; then
    fail "snr $cmd $in $args: $(tail -3 "$T/e")"
  fi
  read -r s u y <"$T/bt"; read -r k <"$T/t"
  c=$(echo "$u + $y" | bc)
  if [ -z "${CPU[$n,$i]:-}" ] || [ "$(echo "$c < ${CPU[$n,$i]}" | bc)" = 1 ]; then
    CPU[$n,$i]=$c; WALL[$n,$i]=$s
  fi
  [ $((k / 1024)) -gt "${MEM[$n,$i]:-0}" ] && MEM[$n,$i]=$((k / 1024))
  return 0
}

# The report's page: its size, and its draw time in headless Chromium (Debian's),
# measured by report_draw.py over the DevTools protocol: from the navigation's
# start to the first frame presented after the page's script drew everything
# (the browser's style, layout and paint included), the best of three loads in
# fresh browsers (wall time: on a shared machine a load may wait for a core),
# with the page's script time, the browser's own accounting (script, style,
# layout, all main-thread tasks) and the script's parts. Targets: under 10 MB,
# drawn in under 3 s.
declare -A PAGE DRAW
page() { # count html
  local n=$1 html=$2 best
  PAGE[$n]=$(stat -c %s "$html")
  if ! command -v chromium >/dev/null; then
    printf '  report page: %d bytes (no chromium to draw it)\n' "${PAGE[$n]}"; return
  fi
  timeout 600 python3 "$HERE/report_draw.py" "$html" 3 >"$T/draw.txt" 2>&1 ||
    fail "the report at $n did not draw: $(tail -3 "$T/draw.txt")"
  best=$(grep '^best: ' "$T/draw.txt")
  DRAW[$n]=$(echo "$best" | sed -n 's/.* painted \([0-9]*\) ms.*/\1/p')
  [ -d "$html.d" ] && printf '  (and %s beside the page: %d bytes)\n' "$html.d" "$(du -sb "$html.d" | cut -f1)"
  printf '  report page: %d bytes (%.1f MB), drawn in %d ms in Chromium (%s); load %s\n' \
    "${PAGE[$n]}" "$(echo "${PAGE[$n]} / 1000000" | bc -l)" "${DRAW[$n]}" "${best#best: }" "$(cut -d' ' -f1 /proc/loadavg)"
}

declare -A TRACE
for n in "${COUNTS[@]}"; do
  trace=$CACHE/scale-$n$sfx.snrt; stamp=$CACHE/scale-$n$sfx.stamp
  if [ -f "$trace" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$src_key $n" ]; then
    echo "using the cached trace $trace"
  else
    record "$n" "$trace"
    echo "$src_key $n" >"$stamp"
  fi
  TRACE[$n]=$trace
done
# Step by step, each run REPS times, every round going through the windows
# in turn: the windows' runs of a step share the machine's state of the
# moment, which is what their ratio compares.
for i in "${!STEPS[@]}"; do
  s=${STEPS[$i]}; cmd=${s%%|*}; args=${s#*|}
  for ((r = 0; r < REPS; r++)); do
    for n in "${COUNTS[@]}"; do
      if [ "$i" = 0 ]; then
        run "$n" "$i" "$cmd" "$args" "${TRACE[$n]}"
        mv "$T/out${n}m" "$T/m$n.snrm"
      else
        run "$n" "$i" "$cmd" "$args" "$T/m$n.snrm"
      fi
    done
  done
done
for n in "${COUNTS[@]}"; do
  echo
  echo "window of $n instructions ($(stat -c %s "${TRACE[$n]}") bytes of trace)"
  printf '  %-26s %8s %8s %8s\n' "step" "wall s" "cpu s" "MiB"
  total=0; ctotal=0
  for i in "${!STEPS[@]}"; do
    s=${STEPS[$i]}
    printf '  %-26s %8.2f %8.2f %8d\n' "${s%%|*}" "${WALL[$n,$i]}" "${CPU[$n,$i]}" "${MEM[$n,$i]}"
    [ "$i" = 0 ] && echo "    (metrics file: $(stat -c %s "$T/m$n.snrm") bytes)"
    total=$(echo "$total + ${WALL[$n,$i]}" | bc); ctotal=$(echo "$ctotal + ${CPU[$n,$i]}" | bc)
  done
  WALL[$n,total]=$total; CPU[$n,total]=$ctotal
  printf '  %-26s %8.2f %8.2f\n' "whole chain" "$total" "$ctotal"
  page "$n" "$T/out${n}r.html"
done

[ ${#COUNTS[@]} -ge 2 ] || exit 0
echo
echo "growth: CPU-time ratio / memory ratio between consecutive windows, beside the instruction ratio"
hdr=$(printf '  %-26s' "step")
for ((c = 1; c < ${#COUNTS[@]}; c++)); do
  hdr+=$(printf ' %17s' "${COUNTS[$c]}/${COUNTS[$((c - 1))]}")
done
echo "$hdr"
over=0
for i in "${!STEPS[@]}" total; do
  if [ "$i" = total ]; then name="whole chain"; else s=${STEPS[$i]}; name=${s%%|*}; fi
  line=$(printf '  %-26s' "$name")
  for ((c = 1; c < ${#COUNTS[@]}; c++)); do
    a=${COUNTS[$((c - 1))]}; b=${COUNTS[$c]}
    r=$(awk -v x="${CPU[$b,$i]}" -v y="${CPU[$a,$i]}" 'BEGIN { printf "%.2f", (y > 0 ? x / y : 0) }')
    if [ "$i" = total ]; then
      line+=$(printf ' %6sx %10s' "$r" "")
    else
      m=$(awk -v x="${MEM[$b,$i]}" -v y="${MEM[$a,$i]}" 'BEGIN { printf "%.2f", (y > 0 ? x / y : 0) }')
      line+=$(printf ' %6sx %6sx mem' "$r" "$m")
    fi
    if awk -v r="$r" -v a="$a" -v b="$b" 'BEGIN { exit !(r > 1.3 * b / a) }'; then
      line+="!"; over=1
    fi
  done
  echo "$line"
done
instr=$(printf '  %-26s' "instructions")
for ((c = 1; c < ${#COUNTS[@]}; c++)); do
  instr+=$(awk -v a="${COUNTS[$((c - 1))]}" -v b="${COUNTS[$c]}" 'BEGIN { printf " %6.2fx %10s", b / a, "" }')
done
echo "$instr"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
last=${COUNTS[$((${#COUNTS[@]} - 1))]}
[ $over = 0 ] && echo "growth: every step within 1.3x of the instruction ratio" ||
  echo "growth: OVER 1.3x the instruction ratio where marked !"
big=""
for i in "${!STEPS[@]}"; do
  [ "${MEM[$last,$i]}" -gt 1024 ] && { s=${STEPS[$i]}; big+=" ${s%%|*} (${MEM[$last,$i]} MiB)"; }
done
[ -z "$big" ] && echo "memory: every step under 1 GiB at $last" || echo "memory: OVER 1 GiB at $last:$big"
for n in "${COUNTS[@]}"; do
  [ -n "${DRAW[$n]:-}" ] || continue
  awk -v b="${PAGE[$n]}" -v d="${DRAW[$n]}" 'BEGIN { exit !(b < 10000000 && d < 3000) }' &&
    echo "report page at $n: ${PAGE[$n]} bytes, drawn in ${DRAW[$n]} ms (targets 10 MB, 3 s)" ||
    echo "report page at $n: ${PAGE[$n]} bytes, drawn in ${DRAW[$n]} ms: OVER a target (10 MB, 3 s)"
done
awk -v t="${CPU[$last,total]}" 'BEGIN { exit !(t < 60) }' &&
  echo "whole chain at $last: ${CPU[$last,total]} CPU s, ${WALL[$last,total]} s wall (target 60 s)" ||
  echo "whole chain at $last: ${CPU[$last,total]} CPU s, ${WALL[$last,total]} s wall: OVER the 60 s target"
exit 0
