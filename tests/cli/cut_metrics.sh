#!/usr/bin/env bash
# A file cut short exits 3 whichever kind it is: a trace (read in part with
# --allow-truncated) and a metrics file without its summary (not readable in
# part: 3 with --allow-truncated too, saying so), for every reader.
# usage: cut_metrics.sh SNR TRACES
. "$(dirname "$0")/lib.sh"
TRACES=${2:?usage: cut_metrics.sh SNR TRACES}
"$SNR" replay "$TRACES/ta1-matmul-chain.snrt" -o "$T/m.snrm" >/dev/null || fail "replay"
head -c $(($(stat -c %s "$T/m.snrm") / 2)) "$T/m.snrm" >"$T/cut.snrm"
head -c $(($(stat -c %s "$TRACES/ta1-matmul-chain.snrt") / 2)) "$TRACES/ta1-matmul-chain.snrt" >"$T/cut.snrt"
for cmd in "analyze dma" "analyze vmem" "analyze util" "analyze deps" "analyze suggest" "annotate" \
           "report -o $T/r.html" "export perfetto -o $T/p.json"; do
  run $SNR $cmd "$T/cut.snrt"
  expect_rc 3
  run $SNR $cmd "$T/cut.snrm"
  expect_rc 3; expect_err "cut.snrm is cut short: it "
  run $SNR $cmd "$T/cut.snrm" --allow-truncated
  expect_rc 3; expect_err "no part of it can be used, even with --allow-truncated"
done
# cut near its end: the summary is what is missing
head -c $(($(stat -c %s "$T/m.snrm") - 40)) "$T/m.snrm" >"$T/end.snrm"
for cmd in "analyze dma" "report -o $T/r.html"; do
  run $SNR $cmd "$T/end.snrm" --allow-truncated
  expect_rc 3; expect_err "end.snrm is cut short: it has no summary"
done
[ -e "$T/r.html" ] || [ -e "$T/p.json" ] && fail "a refused reader wrote its output"
echo ok
